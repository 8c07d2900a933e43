/* test_nn_functional.c — functional models: symbolic inputs and layer
 * calls, several inputs and outputs, a shared layer, a model used as a
 * layer, feature extraction, the summary with its connections, traced
 * calls, finite-difference gradients through the whole graph, and the
 * construction errors (disconnected graphs, duplicate names, mismatched
 * merges, wrong inputs at call time). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* The test model (float64 for the gradient checks):
 *   a [.,4] ─┐                       ┌─ concatenate ─ dense "main" (2)   -> output 0
 *            ├─ shared dense(3,tanh) ┤
 *   b [.,4] ─┘   (called twice)      └─ add ───────── dense "aux" (1)    -> output 1 */
typedef struct two_tower {
    gb_module *model;
    gb_module *shared, *main_head, *aux_head;   /* borrowed from the model */
} two_tower;

static two_tower two_tower_new(gb_dtype dt) {
    gb_sym *a = gb_input(dt, GB_SHAPE(4), "a");
    gb_sym *b = gb_input(dt, GB_SHAPE(4), "b");
    gb_module *shared = gb_dense_new(3, &(gb_dense_options){.activation = GB_ACT_TANH,
                                                            .name = "shared", .seed = 11});
    gb_sym *sa = gb_apply(shared, a);
    gb_sym *sb = gb_apply(shared, b);
    gb_sym *cat = gb_apply_n(gb_concatenate_new(-1, NULL), 2, (gb_sym *[]){sa, sb});
    gb_sym *sum = gb_apply_n(gb_add_layer_new(NULL), 2, (gb_sym *[]){sa, sb});
    gb_sym *main_out = gb_apply(gb_dense_new(2, &(gb_dense_options){.name = "main", .seed = 12}), cat);
    gb_sym *aux_out = gb_apply(gb_dense_new(1, &(gb_dense_options){.name = "aux", .seed = 13}), sum);
    two_tower t = {0};
    t.model = gb_functional_new(2, (gb_sym *[]){a, b}, 2, (gb_sym *[]){main_out, aux_out}, "towers");
    ck_assert_msg(t.model != NULL, "%s", gb_error_string());
    t.shared = gb_module_find(t.model, "shared");
    t.main_head = gb_module_find(t.model, "main");
    t.aux_head = gb_module_find(t.model, "aux");
    return t;
}

/* The same computation written by hand with the model's layers. */
static void by_hand(two_tower *t, gb_tensor *a, gb_tensor *b, gb_tensor **main_out,
                    gb_tensor **aux_out) {
    gb_tensor *sa = gb_module_call(t->shared, a, false);
    gb_tensor *sb = gb_module_call(t->shared, b, false);
    *main_out = gb_module_call(t->main_head, gb_concat((gb_tensor *[]){sa, sb}, 2, 1), false);
    *aux_out = gb_module_call(t->aux_head, gb_add(sa, sb), false);
}

static void assert_same(gb_tensor *x, gb_tensor *y) {
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(gb_rank(x), gb_rank(y));
    ck_assert_int_eq(gb_size(x), gb_size(y));
    for (int i = 0; i < gb_rank(x); i++) ck_assert_int_eq(gb_shape(x)[i], gb_shape(y)[i]);
    for (int64_t i = 0; i < gb_size(x); i++)
        ck_assert_msg(gb_get(x, i) == gb_get(y, i), "element %lld: %.17g != %.17g",
                      (long long)i, gb_get(x, i), gb_get(y, i));
}

START_TEST(test_symbols_carry_dtype_and_shape) {
    gb_sym *x = gb_input(GB_F32, GB_SHAPE(28, 28, 1), NULL);
    ck_assert_str_eq(gb_sym_name(x), "input_layer");
    gb_tensor_spec s = gb_sym_spec(x);
    ck_assert_int_eq(s.rank, 4);
    ck_assert_int_eq(s.shape[0], -1);
    ck_assert_int_eq(s.shape[1], 28);
    gb_sym *c = gb_apply(gb_conv2d_new(8, 3, 3, NULL), x);
    gb_sym *f = gb_apply(gb_flatten_new(NULL), gb_apply(gb_max_pool2d_new(NULL), c));
    s = gb_sym_spec(f);
    ck_assert_str_eq(gb_sym_name(f), "flatten");
    ck_assert_int_eq(s.rank, 2);
    ck_assert_int_eq(s.shape[0], -1);
    ck_assert_int_eq(s.shape[1], 13 * 13 * 8);
    ck_assert_int_eq(s.dtype, GB_F32);
    /* Unknown dims stay unknown through layers with a shape function. */
    gb_sym *v = gb_input(GB_F32, GB_SHAPE(-1, 6), "sequence");
    s = gb_sym_spec(gb_apply(gb_dense_new(5, NULL), v));
    ck_assert_int_eq(s.rank, 3);
    ck_assert_int_eq(s.shape[1], -1);
    ck_assert_int_eq(s.shape[2], 5);
    ck_assert(gb_ok());
}
END_TEST

START_TEST(test_multi_io_equals_the_layers_by_hand) {
    two_tower t = two_tower_new(GB_F32);
    ck_assert_int_eq(gb_model_num_inputs(t.model), 2);
    ck_assert_int_eq(gb_model_num_outputs(t.model), 2);
    ck_assert_str_eq(gb_model_output_name(t.model, 0), "main");
    ck_assert_str_eq(gb_model_output_name(t.model, 1), "aux");
    gb_tensor *a = gb_random_uniform(GB_F32, GB_SHAPE(5, 4), -1, 1, 1);
    gb_tensor *b = gb_random_uniform(GB_F32, GB_SHAPE(5, 4), -1, 1, 2);
    gb_tensor *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(t.model, 2, (gb_tensor *[]){a, b}, out, false), 2);
    gb_tensor *main_out, *aux_out;
    by_hand(&t, a, b, &main_out, &aux_out);
    assert_same(out[0], main_out);
    assert_same(out[1], aux_out);
    /* The shared layer's weights are the model's once: 4*3+3 + 6*2+2 + 3*1+1. */
    int n = 0;
    gb_module_trainable_variables(t.model, &n);
    ck_assert_int_eq(n, 6);
    ck_assert_int_eq(gb_module_count_params(t.model), 15 + 14 + 4);
    /* A call with one input or a single-output call is a clear error. */
    ck_assert_ptr_null(gb_module_call(t.model, a, false));
    assert_error(GB_ERR_VALUE, "the model has 2 inputs, called with 1");
    gb_module_free(t.model);
}
END_TEST

START_TEST(test_single_io_model_is_a_plain_module) {
    gb_sym *x = gb_input(GB_F32, GB_SHAPE(3), "x");
    gb_module *d1 = gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 3});
    gb_module *d2 = gb_dense_new(2, &(gb_dense_options){.seed = 4});
    gb_sym *y = gb_apply(d2, gb_apply(d1, x));
    gb_module *model = gb_functional_new(1, &x, 1, &y, NULL);
    ck_assert_str_eq(gb_module_name(model), "functional");
    gb_tensor *in = gb_random_uniform(GB_F32, GB_SHAPE(6, 3), -1, 1, 5);
    gb_tensor *got = gb_module_call(model, in, false);
    assert_same(got, gb_module_call(d2, gb_module_call(d1, in, false), false));
    ck_assert_ptr_eq(gb_module_find(model, "dense_1"), d2);   /* get_layer */
    ck_assert_ptr_eq(gb_module_submodule(model, 0), d1);
    /* Wrong features at call time name the model's input. */
    ck_assert_ptr_null(gb_module_call(model, gb_zeros(GB_F32, GB_SHAPE(6, 5)), false));
    assert_error(GB_ERR_SHAPE, "input 'x' expects float32 (None, 3), got float32 [6,5]");
    ck_assert_ptr_null(gb_module_call(model, gb_zeros(GB_F64, GB_SHAPE(6, 3)), false));
    assert_error(GB_ERR_SHAPE, "input 'x' expects float32 (None, 3), got float64 [6,3]");
    gb_module_free(model);
}
END_TEST

/* Feature extraction: a new model from the same inputs to intermediate
 * outputs returns exactly the full model's intermediates, on the same
 * weights. */
START_TEST(test_feature_extraction) {
    two_tower t = two_tower_new(GB_F32);
    gb_sym *features[3] = {gb_model_layer_output(t.model, "shared", 0),
                           gb_model_layer_output(t.model, "shared", 1),
                           gb_model_layer_output(t.model, "concatenate", 0)};
    gb_module *extractor = gb_functional_new(
        2, (gb_sym *[]){gb_model_input(t.model, 0), gb_model_input(t.model, 1)}, 3, features,
        "extractor");
    ck_assert_msg(extractor != NULL, "%s", gb_error_string());
    gb_tensor *a = gb_random_uniform(GB_F32, GB_SHAPE(3, 4), -1, 1, 7);
    gb_tensor *b = gb_random_uniform(GB_F32, GB_SHAPE(3, 4), -1, 1, 8);
    gb_tensor *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(extractor, 2, (gb_tensor *[]){a, b}, out, false), 3);
    gb_tensor *sa = gb_module_call(t.shared, a, false), *sb = gb_module_call(t.shared, b, false);
    assert_same(out[0], sa);
    assert_same(out[1], sb);
    assert_same(out[2], gb_concat((gb_tensor *[]){sa, sb}, 2, 1));
    /* Same weights: training the full model moves the extractor's features. */
    gb_variable_assign_add(gb_module_variable(t.shared, "bias"), gb_fill(GB_F32, GB_SHAPE(3), 0.25));
    gb_tensor *moved[GB_NN_MAX_IO];
    gb_module_call_n(extractor, 2, (gb_tensor *[]){a, b}, moved, false);
    assert_same(moved[0], gb_module_call(t.shared, a, false));
    /* From an intermediate symbol: the aux head alone. */
    gb_sym *sum = gb_model_layer_output(t.model, "add", 0);
    gb_sym *aux = gb_model_output(t.model, 1);
    gb_module *head = gb_functional_new(1, &sum, 1, &aux, "aux_head_model");
    ck_assert_msg(head != NULL, "%s", gb_error_string());
    gb_tensor *s = gb_random_uniform(GB_F32, GB_SHAPE(2, 3), -1, 1, 9);
    assert_same(gb_module_call(head, s, false), gb_module_call(t.aux_head, s, false));
    ck_assert_ptr_null(gb_model_layer_output(t.model, "shared", 2));
    assert_error(GB_ERR_VALUE, "layer 'shared' is not called that many times in the model");
    ck_assert_ptr_null(gb_model_layer_output(t.model, "nope", 0));
    assert_error(GB_ERR_VALUE, "layer 'nope' is not in the model");
    gb_module_free(head);
    gb_module_free(extractor);
    gb_module_free(t.model);
}
END_TEST

/* A model used as a layer: an encoder applied to two inputs inside a
 * bigger model (a siamese pair), its weights shared by both calls. */
START_TEST(test_nested_model_as_a_layer) {
    gb_sym *x = gb_input(GB_F32, GB_SHAPE(5), "x");
    gb_sym *code = gb_apply(gb_dense_new(3, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 21}), x);
    gb_module *encoder = gb_functional_new(1, &x, 1, &code, "encoder");
    gb_sym *l = gb_input(GB_F32, GB_SHAPE(5), "left");
    gb_sym *r = gb_input(GB_F32, GB_SHAPE(5), "right");
    gb_module_retain(encoder);   /* kept for the check below */
    gb_sym *both = gb_apply_n(gb_concatenate_new(-1, NULL), 2,
                              (gb_sym *[]){gb_apply(encoder, l), gb_apply(encoder, r)});
    gb_sym *score = gb_apply(gb_dense_new(1, &(gb_dense_options){.seed = 22}), both);
    gb_module *siamese = gb_functional_new(2, (gb_sym *[]){l, r}, 1, &score, "siamese");
    ck_assert_msg(siamese != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_module_count_params(siamese), 5 * 3 + 3 + 6 + 1);
    gb_tensor *lt = gb_random_uniform(GB_F32, GB_SHAPE(4, 5), -1, 1, 1);
    gb_tensor *rt = gb_random_uniform(GB_F32, GB_SHAPE(4, 5), -1, 1, 2);
    gb_tensor *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(siamese, 2, (gb_tensor *[]){lt, rt}, out, false), 1);
    gb_tensor *cat = gb_concat((gb_tensor *[]){gb_module_call(encoder, lt, false),
                                               gb_module_call(encoder, rt, false)}, 2, 1);
    assert_same(out[0], gb_module_call(gb_module_find(siamese, "dense_1"), cat, false));
    gb_module_free(siamese);
    ck_assert_int_eq(gb_module_count_params(encoder), 18);   /* still alive: retained */
    gb_module_free(encoder);
}
END_TEST

START_TEST(test_summary_shows_connections) {
    two_tower t = two_tower_new(GB_F32);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert(gb_module_summary(t.model, f));
    fclose(f);
    const char *expected =
        "Model: \"towers\"\n"
        "_____________________________________________________________________________________"
        "_____\n"
        " Layer (type)                Output Shape              Param #     Connected to\n"
        "====================================================================================="
        "=====\n"
        " a (InputLayer)              (None, 4)                 0           -\n"
        " b (InputLayer)              (None, 4)                 0           -\n"
        " shared (Dense)              (None, 3)                 15          a[0][0]\n"
        "                                                                   b[0][0]\n"
        " concatenate (Concatenate)   (None, 6)                 0           shared[0][0]\n"
        "                                                                   shared[1][0]\n"
        " main (Dense)                (None, 2)                 14          concatenate[0][0]\n"
        " add (Add)                   (None, 3)                 0           shared[0][0]\n"
        "                                                                   shared[1][0]\n"
        " aux (Dense)                 (None, 1)                 4           add[0][0]\n"
        "====================================================================================="
        "=====\n"
        "Total params: 33\n"
        "Trainable params: 33\n"
        "Non-trainable params: 0\n"
        "_____________________________________________________________________________________"
        "_____\n";
    ck_assert_str_eq(text, expected);
    free(text);
    gb_module_free(t.model);
}
END_TEST

/* ---- gradients --------------------------------------------------------------------------- */

static two_tower *gc_model;

/* Both outputs as one tensor [B, 3] for the gradient check on the inputs. */
static gb_tensor *towers_fn(gb_tensor *const *x, int n, void *user) {
    (void)n;
    (void)user;
    gb_tensor *out[GB_NN_MAX_IO];
    if (gb_module_call_n(gc_model->model, 2, x, out, true) != 2) return NULL;
    return gb_concat(out, 2, 1);
}

/* L = sum(w0 * main) + sum(w1 * aux) for fixed weights, as a double. */
static gb_tensor *weighted_loss(two_tower *t, gb_tensor *a, gb_tensor *b, gb_tensor *w) {
    gb_tensor *y = towers_fn((gb_tensor *[]){a, b}, 2, t);
    return gb_reduce_sum(gb_mul(y, w), GB_ALL_AXES, false);
}

START_TEST(test_gradients_through_multi_io_shared_layer) {
    two_tower t = two_tower_new(GB_F64);
    gc_model = &t;
    gb_tensor *a = GC_INPUT(-1, 1, 31, 3, 4), *b = GC_INPUT(-1, 1, 32, 3, 4);
    GC_ASSERT(towers_fn, ((gb_tensor *[]){a, b}), 2, NULL);
    /* Every weight, the shared kernel's (which sums both towers' paths)
     * included, against central differences of the same loss. */
    gb_tensor *w = gb_random_uniform(GB_F64, GB_SHAPE(3, 3), 0.5, 1.5, 33);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(t.model, &n);
    gb_variable *list[8];
    memcpy(list, vars, (size_t)n * sizeof *list);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = weighted_loss(&t, a, b, w);
    gb_tape_end(tape);
    gb_tensor *grads[8] = {0};
    ck_assert(gb_tape_gradient_vars(tape, loss, list, n, grads));
    for (int v = 0; v < n; v++) {
        for (int64_t j = 0; j < gb_variable_size(list[v]); j++) {
            gb_tensor *orig = gb_variable_value(list[v]);
            double x0 = gb_get(orig, j), f[2];
            for (int side = 0; side < 2; side++) {
                gb_tensor *moved = gb_tensor_from(GB_F64, gb_data(orig), gb_variable_rank(list[v]),
                                                  gb_variable_shape(list[v]));
                ((double *)gb_data(moved))[j] = x0 + (side ? -GC_EPS : GC_EPS);
                gb_variable_assign(list[v], moved);
                f[side] = gb_item(weighted_loss(&t, a, b, w));
            }
            gb_variable_assign(list[v], orig);
            double numeric = (f[0] - f[1]) / (2 * GC_EPS), analytic = gb_get(grads[v], j);
            ck_assert_msg(fabs(numeric - analytic) <= GC_ATOL + GC_RTOL * fabs(numeric),
                          "%s[%lld]: tape %.10g, finite differences %.10g",
                          gb_variable_name(list[v]), (long long)j, analytic, numeric);
        }
    }
    ck_assert(gb_ok());
    gb_module_free(t.model);
}
END_TEST

/* ---- traced ------------------------------------------------------------------------------------ */

static int towers_traced(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)nin;
    (void)st;
    (void)nst;
    return gb_module_call_n(user, 2, in, out, false);
}

START_TEST(test_traced_call_equals_eager) {
    two_tower t = two_tower_new(GB_F32);
    gb_function *fn = gb_function_new("towers", towers_traced, &(gb_function_options){.user = t.model});
    gb_tensor *a = gb_random_uniform(GB_F32, GB_SHAPE(4, 4), -1, 1, 41);
    gb_tensor *b = gb_random_uniform(GB_F32, GB_SHAPE(4, 4), -1, 1, 42);
    gb_tensor *traced[GB_NN_MAX_IO], *eager[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_function_call(fn, (gb_tensor *[]){a, b}, 2, NULL, 0, traced), 2);
    ck_assert_int_eq(gb_module_call_n(t.model, 2, (gb_tensor *[]){a, b}, eager, false), 2);
    for (int i = 0; i < 2; i++)
        for (int64_t j = 0; j < gb_size(eager[i]); j++)
            ck_assert_msg(fabs(gb_get(traced[i], j) - gb_get(eager[i], j)) < 1e-6, "output %d", i);
    gb_function_free(fn);
    gb_module_free(t.model);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------------- */

START_TEST(test_disconnected_graph) {
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(2), "a");
    gb_sym *b = gb_input(GB_F32, GB_SHAPE(2), "b");
    gb_sym *s = gb_apply_n(gb_add_layer_new(NULL), 2, (gb_sym *[]){a, b});
    ck_assert_ptr_null(gb_functional_new(1, &a, 1, &s, "m"));
    assert_error(GB_ERR_VALUE,
                 "graph disconnected: layer 'add' needs input 'b', which is not one of the "
                 "model's inputs");
    ck_assert_ptr_null(gb_functional_new(2, (gb_sym *[]){a, a}, 1, &s, "m"));
    assert_error(GB_ERR_VALUE, "the same symbol is given twice as an input");
}
END_TEST

START_TEST(test_duplicate_layer_names) {
    gb_sym *x = gb_input(GB_F32, GB_SHAPE(2), NULL);
    gb_sym *h = gb_apply(gb_dense_new(2, &(gb_dense_options){.name = "same"}), x);
    gb_sym *y = gb_apply(gb_dense_new(2, &(gb_dense_options){.name = "same"}), h);
    ck_assert_ptr_null(gb_functional_new(1, &x, 1, &y, NULL));
    assert_error(GB_ERR_VALUE, "two different layers are named 'same'");
}
END_TEST

START_TEST(test_merge_shape_errors) {
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(2), "a");
    gb_sym *b = gb_input(GB_F32, GB_SHAPE(3), "b");
    ck_assert_ptr_null(gb_apply_n(gb_add_layer_new(NULL), 2, (gb_sym *[]){a, b}));
    assert_error(GB_ERR_SHAPE, "Add layer 'add': input 1 is float32 [-1,3] but input 0 is "
                               "float32 [-1,2]; inputs must have the same dtype and shape");
    gb_sym *c = gb_apply_n(gb_concatenate_new(1, NULL), 2, (gb_sym *[]){a, b});
    ck_assert_int_eq(gb_sym_spec(c).shape[1], 5);
    ck_assert_ptr_null(gb_apply_n(gb_concatenate_new(0, NULL), 2, (gb_sym *[]){a, b}));
    assert_error(GB_ERR_VALUE, "cannot concatenate along axis 0, the batch");
    ck_assert_ptr_null(gb_apply_n(gb_add_layer_new(NULL), 1, &a));
    assert_error(GB_ERR_VALUE, "needs at least 2 inputs, got 1");
    /* A layer's own check runs on symbols too. */
    gb_module *d = gb_dense_new(4, NULL);
    gb_module_retain(d);
    gb_apply(d, a);
    ck_assert_ptr_null(gb_apply(d, b));
    assert_error(GB_ERR_SHAPE, "but the layer was built for 2");
    gb_module_free(d);
    ck_assert_ptr_null(gb_input(GB_F32, GB_SHAPE(0), "x"));
    assert_error(GB_ERR_VALUE, "dims are positive or -1");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_functional");
    TCase *tc = tcase_create("functional");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_symbols_carry_dtype_and_shape);
    tcase_add_test(tc, test_multi_io_equals_the_layers_by_hand);
    tcase_add_test(tc, test_single_io_model_is_a_plain_module);
    tcase_add_test(tc, test_feature_extraction);
    tcase_add_test(tc, test_nested_model_as_a_layer);
    tcase_add_test(tc, test_summary_shows_connections);
    tcase_add_test(tc, test_gradients_through_multi_io_shared_layer);
    tcase_add_test(tc, test_traced_call_equals_eager);
    tcase_add_test(tc, test_disconnected_graph);
    tcase_add_test(tc, test_duplicate_layer_names);
    tcase_add_test(tc, test_merge_shape_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
