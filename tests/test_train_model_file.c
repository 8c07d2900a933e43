/* test_train_model_file.c — model files (gb_model_save / gb_model_load,
 * Keras' model.save and load_model).
 *
 * - An MLP trained 2 epochs (Adam, shuffled), saved, loaded by a new
 *   process that trains the third epoch (initial_epoch 2): its weights,
 *   Adam's slots and iteration count, and the epoch's logs equal a run of
 *   3 epochs straight, bit for bit.
 * - A functional model of two inputs and two outputs (loss weights, a
 *   registered custom loss, metric names and a registered metric object)
 *   loads with the same predictions, evaluation, compile config and next
 *   training step.
 * - A custom layer type: loading without it registered is an error naming
 *   the class and the file; registered, the model loads.
 * - Damaged files (truncated, a flipped byte in the config or a weight, a
 *   newer format version, bad JSON, a plain checkpoint, weights of another
 *   shape) are errors naming the file and what is wrong, and the file is
 *   left as it was.
 * - What a file cannot hold (a custom train_step, an unnamed custom loss,
 *   a custom schedule, a layer without from_config) is refused at save;
 *   unregistered custom losses and metric classes at load.
 * - ModelCheckpoint writes model files by default and weight checkpoints
 *   with save_weights_only; uncompiled and unbuilt models round-trip; a
 *   loaded model compiled again with its own optimizer keeps it alive.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/internal.h"
#include "resume_test_util.h"
#include "scale_layer.h"
#include "test_util.h"

/* The bytes of a file (malloc'd), *n its size. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(*n + 1);
    ck_assert_int_eq(fread(d, 1, *n, f), *n);
    fclose(f);
    d[*n] = 0;
    return d;
}

/* The config.json text of a model file (malloc'd, NUL-ended). */
static char *config_text(const char *path) {
    gb__ckpt_file f;
    ck_assert_msg(gb__ckpt_read(path, &f), "%s", gb_error_string());
    char *text = NULL;
    for (int i = 0; i < f.count; i++)
        if (strcmp(f.entries[i].path, "config.json") == 0) {
            text = calloc(1, f.entries[i].nbytes + 1);
            memcpy(text, f.bytes + f.entries[i].offset, f.entries[i].nbytes);
        }
    gb__ckpt_close(&f);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* ---- 4a: resume in a new process ------------------------------------------------------ */

/* The child: load the model file, train the third epoch, save it again. */
static int child_resume(const char *in, const char *out) {
    rt_fresh_session();
    gb_scope_begin();
    gb_module *m = gb_model_load(in);
    gb_history *h = m ? rt_fit(m, 2, 3, NULL, 0) : NULL;
    bool ok = h && gb_model_save(m, out);
    if (ok) rt_print_history(h);
    else fprintf(stderr, "child resume: %s\n", gb_error_string());
    gb_history_free(h);
    gb_module_free(m);
    gb_scope_end();
    return ok ? 0 : 1;
}

START_TEST(test_resume_in_a_new_process_bit_for_bit) {
    gb_module *a = rt_mlp();
    gb_optimizer *oa = gb_adam(1e-3);
    ck_assert_msg(rt_compile(a, oa), "%s", gb_error_string());
    gb_history *h2 = rt_fit(a, 0, 2, NULL, 0);
    ck_assert_msg(h2 != NULL, "%s", gb_error_string());
    const char *saved = in_test_dir("after2.gbm"), *resumed = in_test_dir("resumed.gbm"), *out = in_test_dir("out.txt");
    ck_assert_msg(gb_model_save(a, saved), "%s", gb_error_string());
    rt_run_child((const char *[]){"resume", saved, resumed, NULL}, out);

    rt_fresh_session();
    gb_module *straight = rt_mlp();
    gb_optimizer *os = gb_adam(1e-3);
    ck_assert_msg(rt_compile(straight, os), "%s", gb_error_string());
    gb_history *h3 = rt_fit(straight, 0, 3, NULL, 0);
    ck_assert_msg(h3 != NULL, "%s", gb_error_string());
    gb_module *back = gb_model_load(resumed);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    int n = rt_assert_same_training_state(straight, back);
    ck_assert_int_eq(n, 4 + 8);                                   /* 2 kernels, 2 biases; m and v of each */
    ck_assert_int_eq(gb_optimizer_iterations(gb_model_optimizer(back)), 3 * 63);
    double loss = rt_read_value(out, "loss_2"), acc = rt_read_value(out, "accuracy_2");
    ck_assert_msg(rt_same_double(loss, rt_history_at(h3, "loss", 2)), "loss %a vs %a", loss,
                  rt_history_at(h3, "loss", 2));
    ck_assert(rt_same_double(acc, rt_history_at(h3, "accuracy", 2)));
    /* The third epoch did train: the weights moved from the saved ones. */
    gb_variable *ka = gb_module_variable(gb_module_find(a, "hidden"), "kernel");
    gb_variable *kb = gb_module_variable(gb_module_find(back, "hidden"), "kernel");
    ck_assert(memcmp(gb_data(gb_variable_value(ka)), gb_data(gb_variable_value(kb)),
                     gb_nbytes(gb_variable_value(ka))) != 0);
    fprintf(stderr,
            "resume in a new process: %d tensors bit-identical after epoch 3; loss %.9g "
            "accuracy %.9g (epoch 2: loss %.9g)\n",
            n, loss, acc, gb_history_value(h2, "loss", 1));
    gb_history_free(h2), gb_history_free(h3);
    gb_module_free(a), gb_module_free(straight), gb_module_free(back);
    gb_optimizer_free(oa), gb_optimizer_free(os);
}
END_TEST

/* ---- a functional model with custom compile parts ------------------------------------------ */

/* A custom loss with a parameter: factor * mean squared error per sample. */
static gb_tensor *scaled_mse(gb_tensor *y_true, gb_tensor *y_pred, void *user) {
    return gb_mul_scalar(gb_loss_mean_squared_error(y_true, y_pred, GB_REDUCTION_NONE),
                         *(const double *)user);
}
static double mse_factor = 0.25;

/* A custom metric: the weighted number of samples seen. */
static bool count_update(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
                         gb_tensor *w) {
    (void)m, (void)y_true, (void)w;
    *(double *)state += (double)gb_dim(y_pred, 0);
    return true;
}
static double count_result(const gb_metric *m, const void *state) {
    (void)m;
    return *(const double *)state;
}
static const gb_metric_type SAMPLE_COUNT = {.class_name = "SampleCount",
                                            .default_name = "sample_count",
                                            .state_size = sizeof(double),
                                            .update_state = count_update,
                                            .result = count_result};
static gb_metric *make_count(const char *name, void *user) {
    (void)user;
    return gb_metric_new(&SAMPLE_COUNT, name, NULL);
}

static gb_module *two_heads(void) {
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(6), "a");
    gb_sym *b = gb_input(GB_F32, GB_SHAPE(3), "b");
    gb_sym *ab = gb_apply_n(gb_concatenate_new(-1, "joined"), 2, (gb_sym *[]){a, b});
    gb_sym *h = gb_apply(gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_TANH, .name = "trunk",
                                                             .seed = 3}), ab);
    gb_sym *kind = gb_apply(gb_dense_new(3, &(gb_dense_options){.name = "kind", .seed = 4}), h);
    gb_sym *score = gb_apply(gb_dense_new(1, &(gb_dense_options){.name = "score", .seed = 5}), h);
    return gb_functional_new(2, (gb_sym *[]){a, b}, 2, (gb_sym *[]){kind, score}, "heads");
}

typedef struct heads_data {
    gb_tensor *x[2], *y[2];
} heads_data;

static heads_data heads_data_make(void) {
    heads_data d = {{gb_random_uniform(GB_F32, GB_SHAPE(96, 6), -1, 1, 11),
                     gb_random_uniform(GB_F32, GB_SHAPE(96, 3), -1, 1, 12)},
                    {gb_random_uniform(GB_I32, GB_SHAPE(96), 0, 3, 13),
                     gb_random_uniform(GB_F32, GB_SHAPE(96, 1), -1, 1, 14)}};
    return d;
}

static gb_history *heads_fit(gb_module *m, const heads_data *d, int epochs) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.batch_size = 16;
    o.seed = 5;
    o.verbose = 0;
    return gb_model_fit_arrays(m, (gb_data_arrays){.nx = 2, .ny = 2, .x = d->x, .y = d->y}, &o);
}

START_TEST(test_functional_with_custom_parts_round_trips) {
    ck_assert(gb_register_loss("scaled_mse", scaled_mse, &mse_factor));
    ck_assert(gb_register_metric("SampleCount", make_count, NULL));
    gb_module *m = two_heads();
    gb_optimizer *opt = gb_rmsprop_ex(&(gb_rmsprop_options){
        .learning_rate = gb_lr_exponential_decay(0.01, 3, 0.5, false), .rho = 0.8, .momentum = 0.3,
        .centered = true, .epsilon = 1e-6});
    gb_metric *count = gb_metric_new(&SAMPLE_COUNT, "seen", NULL);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
        .optimizer = opt,
        .losses = (gb_loss_spec[]){{GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                   {GB_LOSS_CUSTOM, .fn = scaled_mse, .user = &mse_factor,
                                    .name = "scaled_mse"}},
        .nlosses = 2, .loss_weights = (double[]){1.0, 0.5},
        .metrics = (const char *[]){"accuracy", "mae"}, .nmetrics = 2,
        .metric_objects = &count, .nmetric_objects = 1}));
    heads_data d = heads_data_make();
    gb_history *h = heads_fit(m, &d, 1);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    const char *path = in_test_dir("heads.gbm"), *again = in_test_dir("again.gbm");
    ck_assert_msg(gb_model_save(m, path), "%s", gb_error_string());
    gb_module *back = gb_model_load(path);
    ck_assert_msg(back != NULL, "%s", gb_error_string());

    /* The same config, compile arguments and all. */
    ck_assert(gb_model_save(back, again));
    char *ta = config_text(path), *tb = config_text(again);
    ck_assert_str_eq(ta, tb);
    ck_assert_msg(strstr(ta, "{\"loss\": \"custom\", \"name\": \"scaled_mse\"}") &&
                      strstr(ta, "\"metric_objects\": [{\"class_name\": \"SampleCount\", \"name\": \"seen\"}]") &&
                      strstr(ta, "\"loss_weights\": [1.0, 0.5]"),
                  "%s", ta);
    free(ta), free(tb);
    /* The same predictions, bit for bit. */
    gb_tensor *pa[GB_NN_MAX_IO], *pb[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_model_predict_arrays(m, 2, d.x, 32, pa), 2);
    ck_assert_int_eq(gb_model_predict_arrays(back, 2, d.x, 32, pb), 2);
    for (int k = 0; k < 2; k++)
        ck_assert(memcmp(gb_data(pa[k]), gb_data(pb[k]), gb_nbytes(pa[k])) == 0);
    /* The same evaluation: every key, every value. */
    gb_logs la, lb;
    gb_data_arrays data = {.nx = 2, .ny = 2, .x = d.x, .y = d.y};
    ck_assert(gb_model_evaluate_arrays(m, data, NULL, 32, &la));
    ck_assert(gb_model_evaluate_arrays(back, data, NULL, 32, &lb));
    ck_assert_int_eq(la.n, lb.n);
    ck_assert_int_eq(la.n, 6);   /* loss, kind_loss, score_loss, kind_accuracy, score_mae, seen */
    for (int i = 0; i < la.n; i++) {
        ck_assert_str_eq(la.key[i], lb.key[i]);
        ck_assert_msg(rt_same_double(la.value[i], lb.value[i]), "%s", la.key[i]);
    }
    ck_assert_double_eq(gb_logs_get(&lb, "seen"), 96);
    /* And the next epoch trains both the same way. */
    gb_history *h1 = heads_fit(m, &d, 1), *h2 = heads_fit(back, &d, 1);
    ck_assert(h1 && h2);
    rt_assert_same_training_state(m, back);
    gb_history_free(h), gb_history_free(h1), gb_history_free(h2);
    gb_module_free(m), gb_module_free(back);
    gb_optimizer_free(opt);
    gb_metric_free(count);
}
END_TEST

/* ---- custom layer types ------------------------------------------------------------------ */

START_TEST(test_custom_layer_needs_registering) {
    gb_module *m = gb_sequential_new("scaled");
    gb_sequential_add(m, gb_dense_new(4, &(gb_dense_options){.seed = 9}));
    gb_sequential_add(m, scale_new(-1.5, "times"));
    ck_assert(gb_module_build(m, GB_F32, GB_SHAPE(-1, 3)));
    const char *path = in_test_dir("scaled.gbm");
    ck_assert_msg(gb_model_save(m, path), "%s", gb_error_string());
    ck_assert_ptr_null(gb_model_load(path));
    char want[320];
    snprintf(want, sizeof want, "%s: unknown layer class 'Scale'; register custom types with "
                                "gb_register_module_type", path);
    assert_error(GB_ERR_VALUE, want);
    ck_assert(gb_register_module_type(&scale_type));
    gb_module *back = gb_model_load(path);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    ck_assert_ptr_null(gb_model_optimizer(back));   /* saved uncompiled */
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(5, 3), -1, 1, 3);
    gb_tensor *ya = gb_module_call(m, x, false), *yb = gb_module_call(back, x, false);
    ck_assert(memcmp(gb_data(ya), gb_data(yb), gb_nbytes(ya)) == 0);
    double dense0 = gb_get(gb_module_call(gb_module_submodule(back, 0), x, false), 0);
    ck_assert_double_eq(gb_get(yb, 0), (float)(-1.5 * dense0));   /* the factor came back */
    gb_module_free(m), gb_module_free(back);
}
END_TEST

/* ---- damaged files ------------------------------------------------------------------------- */

/* Rewrites the model file at path with its config.json replaced by what
 * edit makes of it (the container stays valid: CRCs are recomputed). */
static void rewrite_config(const char *path, void (*edit)(char *text, size_t *n)) {
    gb__ckpt_file f;
    ck_assert_msg(gb__ckpt_read(path, &f), "%s", gb_error_string());
    gb__ckpt_entry *e = calloc((size_t)f.count, sizeof *e);
    static char text[1 << 16];
    for (int i = 0; i < f.count; i++) {
        e[i] = f.entries[i];
        e[i].data = f.bytes + e[i].offset;
        if (strcmp(e[i].path, "config.json") != 0) continue;
        size_t n = (size_t)e[i].nbytes;
        ck_assert_uint_lt(n, sizeof text - 64);
        memcpy(text, e[i].data, n);
        edit(text, &n);
        e[i].data = text;
        e[i].nbytes = n;
        e[i].dims[0] = (int64_t)n;
    }
    ck_assert(gb__ckpt_write(path, e, f.count));
    free(e);
    gb__ckpt_close(&f);
}

static void newer_format(char *t, size_t *n) {
    (void)n;
    char *v = strstr(t, "\"format_version\": 1");
    ck_assert_ptr_nonnull(v);
    v[strlen("\"format_version\": ")] = '2';
}
static void cut_json(char *t, size_t *n) {
    (void)t;
    *n = 40;   /* inside the model's config */
}
static void narrower_hidden(char *t, size_t *n) {
    (void)n;
    char *u = strstr(t, "\"units\": 64");
    ck_assert_ptr_nonnull(u);
    memcpy(u, "\"units\": 32", 11);
}

/* The byte offset of entry `name` in the file at path. */
static long entry_offset(const char *path, const char *name) {
    gb__ckpt_file f;
    ck_assert(gb__ckpt_read(path, &f));
    long at = -1;
    for (int i = 0; i < f.count; i++)
        if (strcmp(f.entries[i].path, name) == 0) at = (long)f.entries[i].offset;
    gb__ckpt_close(&f);
    ck_assert_int_ge(at, 0);
    return at;
}

static void write_bytes(const char *path, const unsigned char *d, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(d, 1, n, f), n);
    fclose(f);
}

/* The seed the next layer with a default seed gets. */
static uint64_t next_layer_seed(void) {
    gb_module *d = gb_dense_new(1, &(gb_dense_options){.name = "probe"});
    uint64_t seed = gb_module_seed(d);
    gb_module_free(d);
    return seed;
}

/* Loading path fails with code and a message holding `part`; the file
 * is not touched, nor the program's sequence of layer seeds. */
static void assert_refused(const char *path, gb_status code, const char *part) {
    size_t n0, n1;
    unsigned char *before = slurp(path, &n0);
    gb_nn_set_seed(5);
    uint64_t seed = next_layer_seed();
    gb_nn_set_seed(5);
    ck_assert_ptr_null(gb_model_load(path));
    ck_assert_uint_eq(next_layer_seed(), seed);
    const gb_error *e = check_error(code, part);
    ck_assert_msg(strstr(e->message, path), "the error does not name the file: %s", e->message);
    fprintf(stderr, "damaged model file: %s\n", e->message);
    gb_clear_error();
    unsigned char *after = slurp(path, &n1);
    ck_assert(n0 == n1 && memcmp(before, after, n0) == 0);
    free(before), free(after);
}

START_TEST(test_damaged_files_are_clear_errors) {
    gb_module *m = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(m, opt), "%s", gb_error_string());
    gb_history *h = rt_fit(m, 0, 1, NULL, 0);
    ck_assert(h != NULL);
    const char *good = in_test_dir("good.gbm"), *bad = in_test_dir("bad.gbm");
    ck_assert(gb_model_save(m, good));
    size_t n;
    unsigned char *bytes = slurp(good, &n);

    write_bytes(bad, bytes, n / 2);
    assert_refused(bad, GB_ERR_IO, "truncated");

    long cfg = entry_offset(good, "config.json"), kernel = entry_offset(good, "model/fmnist_mlp/hidden/kernel");
    bytes[cfg + 3] ^= 0x20;
    write_bytes(bad, bytes, n);
    assert_refused(bad, GB_ERR_IO, "tensor 'config.json' is corrupt (CRC mismatch)");
    bytes[cfg + 3] ^= 0x20;
    bytes[kernel + 100] ^= 0x01;
    write_bytes(bad, bytes, n);
    assert_refused(bad, GB_ERR_IO, "tensor 'model/fmnist_mlp/hidden/kernel' is corrupt (CRC mismatch)");
    bytes[kernel + 100] ^= 0x01;

    write_bytes(bad, bytes, n);
    rewrite_config(bad, newer_format);
    assert_refused(bad, GB_ERR_IO, "written by a newer glassbox (model format version 2; this "
                                   "build reads up to 1)");
    write_bytes(bad, bytes, n);
    rewrite_config(bad, cut_json);
    assert_refused(bad, GB_ERR_VALUE, "config.json: line 1, column 41: ");
    write_bytes(bad, bytes, n);
    rewrite_config(bad, narrower_hidden);
    assert_refused(bad, GB_ERR_SHAPE, "tensor 'model/fmnist_mlp/hidden/kernel' is float32[784,64] in "
                                      "the file but float32[784,32] in the program");

    gb_callback *weights_only = gb_model_checkpoint(&(gb_model_checkpoint_options){
        .filepath = bad, .monitor = "loss", .save_weights_only = true});
    gb_history_free(h);
    gb_callback *cbs[] = {weights_only};
    ck_assert((h = rt_fit(m, 0, 1, cbs, 1)) != NULL);
    assert_refused(bad, GB_ERR_IO, "not a model file: it has no config.json (a checkpoint of weights?");
    bytes[8] = 9;   /* the container's version, its header CRC now wrong */
    write_bytes(bad, bytes, n);
    assert_refused(bad, GB_ERR_IO, "corrupt header (CRC mismatch)");
    ck_assert_ptr_null(gb_model_load(in_test_dir("missing.gbm")));
    assert_error(GB_ERR_IO, "missing.gbm: cannot open: No such file or directory");
    ck_assert_ptr_null(gb_model_load(test_dir()));
    assert_error(GB_ERR_IO, "is a directory, not a model file");
    free(bytes);
    gb_callback_free(weights_only);
    gb_history_free(h);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- what cannot be saved or loaded ---------------------------------------------------------- */

static gb_tensor *my_step(gb_train_state *s, gb_tensor *x, gb_tensor *y, gb_tensor *sw,
                          gb_tensor **y_pred, void *user) {
    (void)s, (void)x, (void)y, (void)sw, (void)y_pred, (void)user;
    return NULL;
}
static double halving(int64_t step, void *user) {
    (void)user;
    return 1.0 / (double)(1 + step);
}

/* m compiled with opt and loss, then saving must fail with `part`. */
static void assert_save_refused(gb_compile_options o, const char *part) {
    gb_module *m = rt_mlp();
    ck_assert_msg(gb_model_compile(m, &o), "%s", gb_error_string());
    const char *path = in_test_dir("refused.gbm");
    ck_assert(!gb_model_save(m, path));
    assert_error(GB_ERR_VALUE, part);
    ck_assert_int_ne(access(path, F_OK), 0);
    gb_module_free(m);
    gb_optimizer_free(o.optimizer);
}

START_TEST(test_what_a_file_cannot_hold) {
    const gb_loss_spec ce = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true};
    assert_save_refused((gb_compile_options){.optimizer = gb_adam(1e-3), .loss = ce, .train_step = my_step},
                        "model 'fmnist_mlp' was compiled with a custom train_step (C code), which a "
                        "model file cannot hold");
    assert_save_refused((gb_compile_options){.optimizer = gb_adam(1e-3),
                                             .loss = {GB_LOSS_CUSTOM, .fn = scaled_mse, .user = &mse_factor}},
                        "the custom loss of output 0 has no name, so a model file cannot name it");
    assert_save_refused((gb_compile_options){.optimizer = gb_sgd_ex(&(gb_sgd_options){
                                                 .learning_rate = gb_lr_custom(halving, NULL)}),
                                             .loss = ce},
                        "SGD: its learning rate is a custom schedule (a C function)");
    /* A layer type without from_config. */
    static const gb_module_type opaque = {.class_name = "Opaque", .default_name = "opaque", .call = scale_call,
                                          .state_size = sizeof(scale_state)};
    gb_module *m = gb_sequential_new(NULL);
    gb_sequential_add(m, gb_module_new(&opaque, "blob", 0));
    ck_assert(!gb_model_save(m, in_test_dir("opaque.gbm")));
    assert_error(GB_ERR_VALUE, "layer 'blob' (class Opaque) has no from_config");
    gb_module_free(m);
}
END_TEST

START_TEST(test_unregistered_custom_losses_and_metrics) {
    gb_module *m = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    gb_metric *count = gb_metric_new(&SAMPLE_COUNT, NULL, NULL);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
        .optimizer = opt, .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
        .metric_objects = &count, .nmetric_objects = 1}));
    const char *path = in_test_dir("metric.gbm");
    ck_assert(gb_model_save(m, path));
    ck_assert_ptr_null(gb_model_load(path));
    check_error(GB_ERR_VALUE, "metric 'sample_count' is of class 'SampleCount', which is not "
                              "registered; call gb_register_metric(\"SampleCount\", factory, user)");
    ck_assert(strstr(gb_last_error()->message, path) == gb_last_error()->message);
    gb_clear_error();
    gb_module_free(m);
    gb_metric_free(count);

    m = rt_mlp();
    ck_assert(gb_model_compile(m, &(gb_compile_options){
        .optimizer = opt, .loss = {GB_LOSS_CUSTOM, .fn = scaled_mse, .user = &mse_factor, .name = "sq"}}));
    ck_assert(gb_model_save(m, path));
    ck_assert_ptr_null(gb_model_load(path));
    assert_error(GB_ERR_VALUE, "the custom loss 'sq' is not registered; call "
                               "gb_register_loss(\"sq\", fn, user) before loading");
    ck_assert(gb_register_loss("sq", scaled_mse, &mse_factor));
    ck_assert(!gb_register_loss("sq", scaled_mse, NULL));
    assert_error(GB_ERR_VALUE, "another loss is already registered as 'sq'");
    gb_module *back = gb_model_load(path);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_module_free(back);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- ModelCheckpoint, uncompiled models, recompiling ----------------------------------------- */

START_TEST(test_model_checkpoint_writes_model_files) {
    gb_module *m = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(m, opt), "%s", gb_error_string());
    char pattern[200];
    snprintf(pattern, sizeof pattern, "%s/epoch-{epoch}.gbm", test_dir());
    gb_callback *mc = gb_model_checkpoint(&(gb_model_checkpoint_options){.filepath = pattern});
    gb_history *h = rt_fit(m, 0, 2, &mc, 1);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert_str_eq(gb_model_checkpoint_last_path(mc), in_test_dir("epoch-2.gbm"));
    gb_module *back = gb_model_load(in_test_dir("epoch-2.gbm"));
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    ck_assert_int_eq(rt_assert_same_training_state(m, back), 12);
    gb_module *first = gb_model_load(in_test_dir("epoch-1.gbm"));
    ck_assert_int_eq(gb_optimizer_iterations(gb_model_optimizer(first)), 63);
    gb_history_free(h);
    gb_callback_free(mc);
    gb_module_free(m), gb_module_free(back), gb_module_free(first);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_unbuilt_and_recompiled_models) {
    gb_module *m = gb_sequential_new("lazy");
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 4}));
    ck_assert(gb_model_save(m, in_test_dir("lazy.gbm")));
    gb_module *back = gb_model_load(in_test_dir("lazy.gbm"));
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    ck_assert(!gb_module_built(back));
    gb_module_free(back);
    gb_module_free(m);

    /* Compiled again with its own optimizer: the model keeps it. */
    m = rt_mlp();
    gb_optimizer *opt = gb_sgd_momentum(0.01, 0.9, false);
    ck_assert_msg(rt_compile(m, opt), "%s", gb_error_string());
    gb_history *h = rt_fit(m, 0, 1, NULL, 0);
    ck_assert(h != NULL);
    gb_history_free(h);
    ck_assert(gb_model_save(m, in_test_dir("sgd.gbm")));
    back = gb_model_load(in_test_dir("sgd.gbm"));
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_optimizer *own = gb_model_optimizer(back);
    ck_assert_str_eq(gb_optimizer_name(own), "SGD");
    ck_assert_msg(rt_compile(back, own), "%s", gb_error_string());
    ck_assert_ptr_eq(gb_model_optimizer(back), own);
    h = rt_fit(back, 1, 2, NULL, 0);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_optimizer_iterations(own), 2 * 63);
    gb_history_free(h);
    gb_module_free(back);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_model_file");
    TCase *tc = tcase_create("model_file");
    tcase_add_checked_fixture(tc, nn_dir_setup, nn_dir_teardown);
    tcase_add_test(tc, test_resume_in_a_new_process_bit_for_bit);
    tcase_add_test(tc, test_functional_with_custom_parts_round_trips);
    tcase_add_test(tc, test_custom_layer_needs_registering);
    tcase_add_test(tc, test_damaged_files_are_clear_errors);
    tcase_add_test(tc, test_what_a_file_cannot_hold);
    tcase_add_test(tc, test_unregistered_custom_losses_and_metrics);
    tcase_add_test(tc, test_model_checkpoint_writes_model_files);
    tcase_add_test(tc, test_unbuilt_and_recompiled_models);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "resume") == 0)
        return child_resume(argv[3], argv[4]);
    return run_suite(suite());
}
