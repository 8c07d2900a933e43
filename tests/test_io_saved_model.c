/* test_io_saved_model.c — SavedModel: save, load, run, differentiate and
 * train a loaded graph; and every way a directory can be wrong.
 *
 * The original model and the loaded one run the same kernels in the same
 * order on the same values, so their outputs and gradients are compared
 * bit for bit, not to a tolerance.
 */
#include <unistd.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "cf_test_fns.h"
#include "glassbox.h"
#include "io/internal.h"
#include "stdout_capture.h"
#include "test_util.h"

static gb_module *model;
static gb_function *predict, *probabilities;

static int predict_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_module_call(user, in[0], false);
    return 1;
}

/* Softmax of the logits, scaled by a captured eager constant. */
static gb_tensor *scale;
static int probabilities_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                            int nst, gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_mul(gb_softmax(gb_module_call(user, in[0], false), -1), scale);
    out[1] = gb_argmax(out[0], -1);
    return 2;
}

static const gb_tensor_spec x_spec[] = {GB_SPEC("features", GB_F32, -1, 6)};

static void setup(void) {
    nn_seeded_setup();
    test_dir_create();
    model = gb_sequential_new("mlp");
    gb_sequential_add(model, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 1}));
    gb_sequential_add(model, gb_dense_new(3, &(gb_dense_options){.seed = 2}));
    gb_module_build(model, GB_F32, GB_SHAPE(-1, 6));
    gb_function_options o = {.user = model, .input_signature = x_spec, .ninput_signature = 1};
    predict = gb_function_new("predict", predict_fn, &o);
    probabilities = gb_function_new("probabilities", probabilities_fn, &o);
    scale = gb_keep(gb_tensor_from(GB_F32, (float[]){2, 3, 4}, GB_SHAPE(3)));
}

static void teardown(void) {
    gb_function_free(predict);
    gb_function_free(probabilities);
    gb_module_free(model);
    test_dir_remove();
    scope_teardown();
}

static bool save_both(void) {
    gb_saved_model_signature sigs[] = {
        {.name = "serving_default", .function = predict, .inputs = x_spec, .ninputs = 1,
         .output_names = (const char *[]){"logits"}},
        {.name = "probabilities", .function = probabilities, .inputs = x_spec, .ninputs = 1},
    };
    return gb_saved_model_save(test_dir(), sigs, 2);
}

static gb_tensor *batch(int64_t n, uint64_t seed) {
    return gb_random_uniform(GB_F32, GB_SHAPE(n, 6), -2, 2, seed);
}

static void assert_bitwise(gb_tensor *a, gb_tensor *b) {
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(gb_tensor_dtype(a), gb_tensor_dtype(b));
    ck_assert_int_eq(gb_size(a), gb_size(b));
    ck_assert(memcmp(gb_data(a), gb_data(b), (size_t)gb_size(a) * gb_dtype_size(gb_tensor_dtype(a))) == 0);
}

static gb_tensor *call1(gb_function *f, gb_tensor *x, int k) {
    gb_tensor *out[2] = {0};
    ck_assert_msg(gb_function_call(f, &x, 1, NULL, 0, out) > k, "%s", gb_error_string());
    return out[k];
}

START_TEST(test_round_trip_runs_without_the_code) {
    ck_assert_msg(save_both(), "%s", gb_error_string());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_saved_model_signature_count(m), 2);
    ck_assert_str_eq(gb_saved_model_signature_name(m, 0), "serving_default");
    int n = 0;
    const gb_tensor_spec *in = gb_saved_model_inputs(m, "serving_default", &n);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(in[0].name, "features");
    ck_assert_int_eq(in[0].rank, 2);
    ck_assert_int_eq(in[0].shape[0], -1);
    ck_assert_int_eq(in[0].shape[1], 6);
    const gb_tensor_spec *out = gb_saved_model_outputs(m, "probabilities", &n);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(out[0].name, "output_0");
    ck_assert_int_eq(out[1].dtype, GB_I64);
    /* Both signatures read the same four variables: saved once. */
    gb_saved_model_variables(m, &n);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(strlen(gb_saved_model_fingerprint(m)), 16);
    /* One trace serves every batch size, as the -1 dim says. */
    for (int64_t b = 1; b <= 9; b += 4) {
        gb_tensor *x = batch(b, (uint64_t)b);
        gb_tensor *y;
        ck_assert_int_eq(gb_saved_model_call(m, "serving_default", &x, 1, &y), 1);
        assert_bitwise(y, call1(predict, x, 0));
        gb_tensor *p[2];
        ck_assert_int_eq(gb_saved_model_call(m, "probabilities", &x, 1, p), 2);
        assert_bitwise(p[0], call1(probabilities, x, 0));
        assert_bitwise(p[1], call1(probabilities, x, 1));
    }
    ck_assert_int_eq(gb_function_tracing_count(gb_saved_model_function(m, "serving_default")), 1);
    gb_saved_model_free(m);
}
END_TEST

/* The loaded graph keeps the node names it was saved with. */
START_TEST(test_loaded_graph_keeps_names) {
    ck_assert(save_both());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_ptr_nonnull(m);
    gb_tensor *y = call1(gb_saved_model_function(m, "serving_default"), batch(2, 1), 0);
    ck_assert_ptr_nonnull(y);
    const char *loaded = gb_function_traced_graph_text(gb_saved_model_function(m, "serving_default"));
    call1(predict, batch(2, 1), 0);
    ck_assert_str_eq(loaded, gb_function_traced_graph_text(predict));
    gb_saved_model_free(m);
}
END_TEST

/* A tape sees through a loaded signature: the gradients of the loaded
 * variables are the original's, and an optimizer trains them. */
START_TEST(test_loaded_graph_is_differentiable_and_trainable) {
    ck_assert(save_both());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_ptr_nonnull(m);
    gb_function *f = gb_saved_model_function(m, "serving_default");
    gb_tensor *x = batch(5, 7);
    int nv = 0, nl = 0;
    gb_variable *const *loaded = gb_saved_model_variables(m, &nl);
    gb_variable *const *orig = gb_module_trainable_variables(model, &nv);
    ck_assert_int_eq(nl, nv);
    gb_tensor *g_loaded[4], *g_orig[4];
    gb_tape *t1 = gb_tape_begin();
    gb_tensor *l1 = gb_reduce_sum(gb_square(call1(f, x, 0)), GB_ALL_AXES, false);
    gb_tape_end(t1);
    ck_assert_msg(gb_tape_gradient_vars(t1, l1, loaded, nl, g_loaded), "%s", gb_error_string());
    gb_tape *t2 = gb_tape_begin();
    gb_tensor *l2 = gb_reduce_sum(gb_square(call1(predict, x, 0)), GB_ALL_AXES, false);
    gb_tape_end(t2);
    ck_assert(gb_tape_gradient_vars(t2, l2, orig, nv, g_orig));
    for (int i = 0; i < nv; i++) assert_bitwise(g_loaded[i], g_orig[i]);
    gb_optimizer *sgd = gb_sgd(0.05);
    double before = gb_item(l1), after = before;
    for (int step = 0; step < 20; step++) {
        gb_scope_begin();
        gb_tape *t = gb_tape_begin();
        gb_tensor *l = gb_reduce_sum(gb_square(call1(f, x, 0)), GB_ALL_AXES, false);
        gb_tape_end(t);
        gb_tensor *g[4];
        ck_assert(gb_tape_gradient_vars(t, l, loaded, nl, g));
        ck_assert(gb_optimizer_apply_gradients(sgd, g, nl, loaded, nl));
        after = gb_item(l);
        gb_scope_end();
    }
    ck_assert_msg(after < 0.5 * before, "loss %g -> %g", before, after);
    gb_optimizer_free(sgd);
    gb_saved_model_free(m);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------------------ */

static char *file_text(const char *name, size_t *size) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", test_dir(), name);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc(*size + 1, 1);
    ck_assert_int_eq(fread(s, 1, *size, f), *size);
    fclose(f);
    return s;
}

static void write_text(const char *name, const char *s, size_t n) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", test_dir(), name);
    FILE *f = fopen(path, "wb");
    ck_assert_int_eq(fwrite(s, 1, n, f), n);
    fclose(f);
}

/* Replaces the first `from` in saved_model.json by `to` and (refit)
 * writes a matching fingerprint, so the loader's own checks are reached. */
static void edit_json(const char *from, const char *to, bool refit) {
    size_t n;
    char *s = file_text(GB__SAVED_MODEL_JSON, &n);
    char *at = strstr(s, from);
    ck_assert_msg(at != NULL, "'%s' not in the JSON", from);
    size_t m = n - strlen(from) + strlen(to);
    char *t = calloc(m + 1, 1);
    memcpy(t, s, (size_t)(at - s));
    strcpy(t + (at - s), to);
    strcat(t, at + strlen(from));
    write_text(GB__SAVED_MODEL_JSON, t, m);
    free(s), free(t);
    if (refit) ck_assert(gb__fingerprint_write(test_dir()));
}

static void assert_load_fails(gb_status code, const char *part) {
    ck_assert_ptr_null(gb_saved_model_load(test_dir()));
    assert_error(code, part);
}

START_TEST(test_changed_files_fail_the_fingerprint) {
    ck_assert(save_both());
    edit_json("\"trainable\": true", "\"trainable\": false", false);
    assert_load_fails(GB_ERR_IO, "fingerprint.json: saved_model.json has changed since the model was saved");
    ck_assert(save_both());
    size_t n;
    char *v = file_text(GB__SAVED_MODEL_VARIABLES, &n);
    v[n - 1] ^= 1;
    write_text(GB__SAVED_MODEL_VARIABLES, v, n);
    free(v);
    assert_load_fails(GB_ERR_IO, "variables/variables.ckpt has changed since the model was saved");
}
END_TEST

START_TEST(test_bad_graphs_are_named) {
    static const struct {
        const char *from, *to, *error;
        gb_status code;
    } cases[] = {
        {"\"version\": 2", "\"version\": 3",
         "saved_model.json: format version 3 is not one this glassbox reads (1 to 2); it was written by a newer glassbox",
         GB_ERR_IO},
        {"\"op\": \"MatMul\"", "\"op\": \"Frobnicate\"", "node 2 ('mlp/dense/MatMul'): unknown op type 'Frobnicate'", GB_ERR_VALUE},
        {"\"op\": \"MatMul\"", "\"op\": \"FusedElementwise\"", "op type 'FusedElementwise' cannot be loaded", GB_ERR_VALUE},
        {"\"in\": [[0, 0], [1, 0]]", "\"in\": [[0, 0], [9, 0]]", "an edge reads node 9, which is not a node before it", GB_ERR_VALUE},
        {"\"in\": [[0, 0], [1, 0]]", "\"in\": [[0, 0], [1, 3]]", "an edge reads output 3 of node 1, which has 1", GB_ERR_VALUE},
        {"\"in\": [[0, 0], [1, 0]]", "\"in\": [[0, 0]]", "MatMul takes 2 inputs, not 1", GB_ERR_VALUE},
        {"\"variable\": 0", "\"variable\": 77", "variable 77 is not one of the model's 4", GB_ERR_VALUE},
        /* Attributes by name, checked against the op's schema. */
        {"\"transpose_b\": false", "\"transpose_b\": 0",
         "saved_model.json: signature 'serving_default', node 2 ('mlp/dense/MatMul'): MatMul attribute "
         "'transpose_b': must be true or false", GB_ERR_VALUE},
        {"\"transpose_b\": false", "\"transpose_c\": false",
         "node 2 ('mlp/dense/MatMul'): MatMul has no attribute 'transpose_c'", GB_ERR_VALUE},
        {", \"transpose_b\": false", "",
         "node 2 ('mlp/dense/MatMul'): MatMul attribute 'transpose_b': is missing", GB_ERR_VALUE},
        {"\"attrs\": {\"index\": 0}", "\"attrs\": [0]", "node 0 ('features'): 'attrs' must be a dict", GB_ERR_VALUE},
        {"\"dtype\": \"float32\"", "\"dtype\": \"float128\"", "unknown dtype 'float128'", GB_ERR_VALUE},
        {"\"format\": \"glassbox.saved_model\"", "\"format\": \"other\"", "not a glassbox SavedModel", GB_ERR_IO},
        /* Names become file names (saved-model run --output-dir): never a path. */
        {"\"name\": \"logits\"", "\"name\": \"../../x\"",
         "saved_model.json: signature 'serving_default': the signature name '../../x' is not a "
         "plain name (one path component: no '/', not '.' or '..')", GB_ERR_VALUE},
        {"\"name\": \"logits\"", "\"name\": \"..\"", "the signature name '..' is not a plain name",
         GB_ERR_VALUE},
        {"\"name\": \"logits\"", "\"name\": \"lo\\ngits\"",
         "the signature name 'lo\ngits': the name has a control character at byte 2", GB_ERR_VALUE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert(save_both());
        edit_json(cases[i].from, cases[i].to, true);
        assert_load_fails(cases[i].code, cases[i].error);
    }
}
END_TEST

/* What a load refuses, a save refuses first. */
START_TEST(test_names_that_are_paths_are_refused_at_save) {
    gb_saved_model_signature sig = {.name = "serving_default", .function = predict, .inputs = x_spec,
                                    .ninputs = 1, .output_names = (const char *[]){"../escape"}};
    ck_assert(!gb_saved_model_save(test_dir(), &sig, 1));
    assert_error(GB_ERR_VALUE, "the signature name '../escape' is not a plain name (one path "
                               "component: no '/', not '.' or '..')");
}
END_TEST

START_TEST(test_missing_files) {
    char path[256];
    snprintf(path, sizeof path, "%s/none", test_dir());
    ck_assert_ptr_null(gb_saved_model_load(path));
    assert_error(GB_ERR_IO, "none/saved_model.json");
    ck_assert(save_both());
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_CONSTANTS, test_dir());
    ck_assert_int_eq(unlink(path), 0);
    assert_load_fails(GB_ERR_IO, "constants.ckpt");
}
END_TEST

/* ---- format versions ---------------------------------------------------------------------- */

/* The outputs of tests/fixtures/saved_model_v1 on fixture_input(), as the
 * glassbox that wrote it computed them (its make.c printed them). */
static const uint32_t v1_probabilities[8] = {0x398012a4, 0x3f726365, 0x3d07fad5, 0x3ca19d60,
                                             0x3f62d9d5, 0x3cf9c9ff, 0x3c53e929, 0x3d9041b2};
static const uint64_t v1_probabilities64[8] = {
    0x3f30025480000000, 0x3fee4c6ca0000000, 0x3fa0ff5aa0000000, 0x3f9433ac00000000,
    0x3fec5b3aa0000000, 0x3f9f393fe0000000, 0x3f8a7d2520000000, 0x3fb2083640000000};

static gb_tensor *fixture_input(void) {
    float v[72];
    for (int i = 0; i < 72; i++) v[i] = (float)((i * 37) % 17 - 8) / 8.0f;
    return gb_tensor_from(GB_F32, v, GB_SHAPE(2, 6, 6, 1));
}

static void assert_fixture_outputs(gb_saved_model *m) {
    gb_tensor *out[2];
    ck_assert_int_eq(gb_saved_model_call(m, "serving_default", (gb_tensor *[]){fixture_input()}, 1, out), 2);
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
    ck_assert_int_eq(memcmp(gb_data(out[0]), v1_probabilities, sizeof v1_probabilities), 0);
    ck_assert_int_eq(memcmp(gb_data(out[1]), v1_probabilities64, sizeof v1_probabilities64), 0);
}

/* A file of format version 1 (attributes as slots) still loads and runs
 * bit for bit; saved again it is version 2, its attributes by name, and
 * runs to the same bits. */
START_TEST(test_version_1_file_loads_and_saves_as_version_2) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/saved_model_v1", getenv("GB_SOURCE_DIR"));
    gb_saved_model *m = gb_saved_model_load(dir);
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    assert_fixture_outputs(m);
    int n;
    const gb_tensor_spec *in = gb_saved_model_inputs(m, "serving_default", &n);
    gb_saved_model_signature sig = {.name = "serving_default",
                                    .function = gb_saved_model_function(m, "serving_default"),
                                    .inputs = in, .ninputs = n,
                                    .output_names = (const char *const[]){"probabilities", "probabilities64"}};
    ck_assert_msg(gb_saved_model_save(test_dir(), &sig, 1), "%s", gb_error_string());
    gb_saved_model_free(m);
    size_t size;
    char *json = file_text(GB__SAVED_MODEL_JSON, &size);
    static const char *const lines[] = {
        "\"version\": 2,",
        "{\"op\": \"Placeholder\", \"name\": \"images\", \"in\": [], \"out\": [{\"dtype\": \"float32\", \"shape\": [-1, 6, 6, 1]}], \"attrs\": {\"index\": 0}}",
        "{\"op\": \"ReadVariableOp\", \"name\": \"ReadVariableOp\", \"in\": [], \"out\": [{\"dtype\": \"float32\", \"shape\": [3, 3, 1, 2]}], \"attrs\": {\"variable\": 0}}",
        "\"attrs\": {\"strides\": [1, 1], \"dilations\": [1, 1], \"padding\": \"SAME\"}}",
        "\"attrs\": {\"alpha\": 0.20000000000000001}}",
        "\"attrs\": {\"ksize\": [2, 2], \"strides\": [2, 2], \"padding\": \"VALID\"}}",
        "\"attrs\": {\"paddings\": [[0, 0], [1, 0], [0, 1], [0, 0]], \"constant_value\": 0.5}}",
        "\"attrs\": {\"begin\": [0, 0, 0, 0], \"size\": [-1, 3, 3, 2]}}",
        "\"attrs\": {\"shape\": [-1, 18]}}",
        "\"attrs\": {\"transpose_a\": false, \"transpose_b\": true}}",
        "\"attrs\": {\"axes\": [1], \"keepdims\": true}}",
        "\"attrs\": {\"dtype\": \"float64\"}}",
    };
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++)
        ck_assert_msg(strstr(json, lines[k]), "no '%s' in\n%s", lines[k], json);
    ck_assert_ptr_null(strstr(json, "\"i\":"));
    ck_assert_ptr_null(strstr(json, "\"f_bits\":"));
    free(json);
    m = gb_saved_model_load(test_dir());
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    assert_fixture_outputs(m);
    gb_saved_model_free(m);
}
END_TEST

/* ---- control flow ------------------------------------------------------------------------ */

static gb_tensor *power(gb_tensor *x, gb_tensor *n) { return cf_power(x, n, 100); }

/* in: x float64[-1], n int64, pred bool; out: cond(pred, x^3, sin x) + x^n. */
static int branchy(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *c;
    if (gb_cond(in[2], cf_cube, cf_sine, in, 1, NULL, &c) != 1) return -1;
    out[0] = gb_add(c, power(in[0], in[1]));
    return out[0] ? 1 : -1;
}

/* The same with the derivative by x taken inside (a tape in the graph). */
static int branchy_and_grad(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                            gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    if (gb_cond(in[2], cf_cube, cf_sine, in, 1, NULL, &out[0]) != 1) return -1;
    gb_tensor *sum = gb_reduce_sum(out[0], GB_ALL_AXES, false);
    gb_tape_end(tape);
    out[1] = gb_tape_gradient(tape, sum, in[0]);
    return out[1] ? 2 : -1;
}

static int power_and_grad(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    out[0] = power(in[0], in[1]);
    gb_tensor *sum = gb_reduce_sum(out[0], GB_ALL_AXES, false);
    gb_tape_end(tape);
    out[1] = gb_tape_gradient(tape, sum, in[0]);
    return out[1] ? 2 : -1;
}

static const gb_tensor_spec cf_specs[] = {GB_SPEC("x", GB_F64, -1), GB_SPEC_SCALAR("n", GB_I64),
                                          GB_SPEC_SCALAR("pred", GB_BOOL)};

static gb_tensor *cf_inputs(int64_t n, bool pred, gb_tensor **in) {
    in[0] = gb_tensor_from(GB_F64, (double[]){0.5, -1.25, 2}, GB_SHAPE(3));
    in[1] = gb_scalar(GB_I64, (double)n);
    in[2] = gb_scalar(GB_BOOL, pred);
    return in[0];
}

/* An If and a While in the saved graph: the loaded function runs both
 * branches and every trip count as the original, bit for bit, and a tape
 * outside differentiates through both. */
START_TEST(test_cond_and_while_loop_round_trip) {
    gb_function *f = gb_function_new("branchy", branchy,
                                     &(gb_function_options){.input_signature = cf_specs, .ninput_signature = 3});
    gb_saved_model_signature sig = {.name = "serving_default", .function = f, .inputs = cf_specs, .ninputs = 3};
    ck_assert_msg(gb_saved_model_save(test_dir(), &sig, 1), "%s", gb_error_string());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    gb_function *g = gb_saved_model_function(m, "serving_default");
    for (int64_t n = 0; n <= 4; n += 2)
        for (int pred = 0; pred <= 1; pred++) {
            gb_tensor *in[3], *a, *b, *da, *db;
            cf_inputs(n, pred, in);
            gb_tape *t1 = gb_tape_begin();
            gb_tape_watch(t1, in[0]);
            ck_assert_int_eq(gb_function_call(g, in, 3, NULL, 0, &a), 1);
            gb_tape_end(t1);
            gb_tape *t2 = gb_tape_begin();
            gb_tape_watch(t2, in[0]);
            ck_assert_int_eq(gb_function_call(f, in, 3, NULL, 0, &b), 1);
            gb_tape_end(t2);
            assert_bitwise(a, b);
            da = gb_tape_gradient(t1, a, in[0]);
            db = gb_tape_gradient(t2, b, in[0]);
            ck_assert_msg(da != NULL, "%s", gb_error_string());
            assert_bitwise(da, db);
        }
    ck_assert_int_eq(gb_function_tracing_count(g), 1);
    gb_saved_model_free(m);
    gb_function_free(f);
}
END_TEST

/* gb_print inside a saved function: a node with no output, saved and
 * loaded (it once saved and then failed to load), printing at each call
 * of the loaded model what it printed in the original. */
static int doubles_and_prints(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                              int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_print("halfway:", in[0]);
    out[0] = gb_mul(in[0], gb_scalar(GB_F32, 2));
    return 1;
}

START_TEST(test_print_round_trip) {
    gb_function *f = gb_function_new("doubles", doubles_and_prints,
                                     &(gb_function_options){.input_signature = x_spec, .ninput_signature = 1});
    gb_saved_model_signature sig = {.name = "serving_default", .function = f, .inputs = x_spec, .ninputs = 1};
    ck_assert_msg(gb_saved_model_save(test_dir(), &sig, 1), "%s", gb_error_string());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    gb_tensor *x = batch(2, 5), *loaded, *original;
    char printed_loaded[1024], printed_original[1024];
    capture cp;
    capture_begin(&cp);
    int n = gb_saved_model_call(m, "serving_default", &x, 1, &loaded);
    capture_end(&cp, printed_loaded, sizeof printed_loaded);
    ck_assert_msg(n == 1, "%s", gb_error_string());
    capture_begin(&cp);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &original), 1);
    capture_end(&cp, printed_original, sizeof printed_original);
    assert_bitwise(loaded, original);
    ck_assert_msg(strstr(printed_loaded, "halfway:") != NULL, "printed '%s'", printed_loaded);
    ck_assert_str_eq(printed_loaded, printed_original);
    gb_saved_model_free(m);
    gb_function_free(f);
}
END_TEST

/* A gradient taken inside the function through a cond is saved: the If
 * of the gradient is an If like any other. */
START_TEST(test_gradient_of_a_cond_inside_the_graph) {
    gb_function *f = gb_function_new("branchy_and_grad", branchy_and_grad,
                                     &(gb_function_options){.input_signature = cf_specs, .ninput_signature = 3});
    gb_saved_model_signature sig = {.name = "grad", .function = f, .inputs = cf_specs, .ninputs = 3};
    ck_assert_msg(gb_saved_model_save(test_dir(), &sig, 1), "%s", gb_error_string());
    gb_saved_model *m = gb_saved_model_load(test_dir());
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    for (int pred = 0; pred <= 1; pred++) {
        gb_tensor *in[3], *a[2], *b[2];
        cf_inputs(0, pred, in);
        ck_assert_int_eq(gb_saved_model_call(m, "grad", in, 3, a), 2);
        ck_assert_int_eq(gb_function_call(f, in, 3, NULL, 0, b), 2);
        assert_bitwise(a[0], b[0]);
        assert_bitwise(a[1], b[1]);
    }
    gb_saved_model_free(m);
    gb_function_free(f);
}
END_TEST

START_TEST(test_refusals_when_saving) {
    gb_saved_model_signature s = {.name = "a/b", .function = predict, .inputs = x_spec, .ninputs = 1};
    ck_assert(!gb_saved_model_save(test_dir(), &s, 1));
    assert_error(GB_ERR_VALUE, "a signature's name must be 1 to 63 characters without '/' ('a/b')");
    gb_saved_model_signature two[] = {{.name = "x", .function = predict, .inputs = x_spec, .ninputs = 1},
                                      {.name = "x", .function = predict, .inputs = x_spec, .ninputs = 1}};
    ck_assert(!gb_saved_model_save(test_dir(), two, 2));
    assert_error(GB_ERR_VALUE, "two signatures have the same name ('x')");
    gb_function *f = gb_function_new("power_and_grad", power_and_grad, NULL);
    gb_saved_model_signature c = {.name = "c", .function = f, .inputs = cf_specs, .ninputs = 2};
    ck_assert(!gb_saved_model_save(test_dir(), &c, 1));
    assert_error(GB_ERR_VALUE, "signature 'c': loop 'while' was traced under a GradientTape (it keeps every "
                               "iteration for the gradient), which SavedModel files do not hold");
    gb_function_free(f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("io_saved_model");
    TCase *tc = tcase_create("saved_model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_runs_without_the_code);
    tcase_add_test(tc, test_loaded_graph_keeps_names);
    tcase_add_test(tc, test_loaded_graph_is_differentiable_and_trainable);
    tcase_add_test(tc, test_changed_files_fail_the_fingerprint);
    tcase_add_test(tc, test_names_that_are_paths_are_refused_at_save);
    tcase_add_test(tc, test_bad_graphs_are_named);
    tcase_add_test(tc, test_version_1_file_loads_and_saves_as_version_2);
    tcase_add_test(tc, test_missing_files);
    tcase_add_test(tc, test_refusals_when_saving);
    tcase_add_test(tc, test_cond_and_while_loop_round_trip);
    tcase_add_test(tc, test_print_round_trip);
    tcase_add_test(tc, test_gradient_of_a_cond_inside_the_graph);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
