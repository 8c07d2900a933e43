/* test_nn_norm.c — BatchNormalization against a hand computation in
 * training (batch statistics, the moving statistics after one and two
 * updates) and inference, eager and traced alike; LayerNormalization by
 * hand; finite-difference gradients of both (inputs, gamma, beta);
 * Embedding lookups, their gradient (repeated indices accumulate) and
 * the out-of-range error; GlobalAveragePooling2D; GlobalAveragePooling1D
 * with and without the mask of Embedding(mask_zero) in a Sequential
 * model, eager and traced. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

enum { B = 4, C = 2 };

/* Per feature: batch mean, biased variance. */
static void moments(const double *x, int n, int c, int k, double *mean, double *var) {
    *mean = *var = 0;
    for (int i = 0; i < n; i++) *mean += x[i * c + k] / n;
    for (int i = 0; i < n; i++) *var += (x[i * c + k] - *mean) * (x[i * c + k] - *mean) / n;
}

static gb_tensor *f64(const double *v, int rank, const int64_t *dims) {
    return gb_tensor_from(GB_F64, v, rank, dims);
}

static double var_at(gb_module *m, const char *name, int i) {
    return gb_get(gb_variable_value(gb_module_variable(m, name)), i);
}

static const double X1[B * C] = {1, -2, 3, 0.5, -1, 4, 2, 1};
static const double X2[B * C] = {0.5, 1, 1.5, -1, 2.5, 3, -0.5, 2};

/* Runs x through bn (training) and checks y and the moving stats against
 * the hand computation, given the moving stats before. */
static void check_training_call(gb_module *bn, const double *x, double *mm, double *mv) {
    gb_tensor *y = gb_module_call(bn, f64(x, GB_SHAPE(B, C)), true);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    for (int k = 0; k < C; k++) {
        double mean, var;
        moments(x, B, C, k, &mean, &var);
        for (int i = 0; i < B; i++)
            ck_assert_double_eq_tol(gb_get(y, i * C + k), (x[i * C + k] - mean) / sqrt(var + 1e-3), 1e-12);
        mm[k] = mm[k] * 0.9 + mean * 0.1;
        mv[k] = mv[k] * 0.9 + var * 0.1;
        ck_assert_double_eq_tol(var_at(bn, "moving_mean", k), mm[k], 1e-12);
        ck_assert_double_eq_tol(var_at(bn, "moving_variance", k), mv[k], 1e-12);
    }
}

START_TEST(test_batch_norm_training_and_inference_by_hand) {
    gb_module *bn = gb_batch_norm_new(&(gb_batch_norm_options){.momentum = 0.9});
    double mm[C] = {0, 0}, mv[C] = {1, 1};
    check_training_call(bn, X1, mm, mv);
    check_training_call(bn, X2, mm, mv);
    /* Inference: the moving statistics, and nothing moves. */
    gb_tensor *y = gb_module_call(bn, f64(X1, GB_SHAPE(B, C)), false);
    for (int i = 0; i < B * C; i++)
        ck_assert_double_eq_tol(gb_get(y, i), (X1[i] - mm[i % C]) / sqrt(mv[i % C] + 1e-3), 1e-12);
    ck_assert_double_eq_tol(var_at(bn, "moving_mean", 0), mm[0], 1e-15);
    /* gamma and beta train; the moving statistics do not. */
    int nt = 0, nn = 0;
    gb_module_trainable_variables(bn, &nt);
    gb_module_non_trainable_variables(bn, &nn);
    ck_assert_int_eq(nt, 2);
    ck_assert_int_eq(nn, 2);
    gb_module_free(bn);
}
END_TEST

/* NHWC: statistics over batch, height and width, per channel. */
START_TEST(test_batch_norm_on_images) {
    gb_module *bn = gb_batch_norm_new(&(gb_batch_norm_options){.momentum = 0.5,
                                                               .gamma_initializer = {.kind = GB_INIT_CONSTANT, .a = 2},
                                                               .beta_initializer = {.kind = GB_INIT_CONSTANT, .a = 0.5}});
    double x[2 * 2 * 2 * 3];
    for (int i = 0; i < 24; i++) x[i] = sin(i * 1.7) * 3;
    gb_tensor *y = gb_module_call(bn, f64(x, GB_SHAPE(2, 2, 2, 3)), true);
    for (int k = 0; k < 3; k++) {
        double mean, var;
        moments(x, 8, 3, k, &mean, &var);
        for (int i = 0; i < 8; i++)
            ck_assert_double_eq_tol(gb_get(y, i * 3 + k), 2 * (x[i * 3 + k] - mean) / sqrt(var + 1e-3) + 0.5, 1e-12);
        ck_assert_double_eq_tol(var_at(bn, "moving_mean", k), 0.5 * mean, 1e-12);
    }
    gb_module_free(bn);
}
END_TEST

static int bn_traced(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)nin, (void)nst;
    out[0] = gb_module_call(user, in[0], st[0].as.b);
    return out[0] ? 1 : -1;
}

/* The same two training calls and an inference call inside a traced
 * function: the same outputs and the same moving statistics. */
START_TEST(test_batch_norm_traced_equals_eager) {
    gb_module *eager = gb_batch_norm_new(&(gb_batch_norm_options){.momentum = 0.9, .name = "e"});
    gb_module *traced = gb_batch_norm_new(&(gb_batch_norm_options){.momentum = 0.9, .name = "t"});
    gb_function *fn = gb_function_new("bn", bn_traced, &(gb_function_options){.user = traced});
    const double *xs[3] = {X1, X2, X1};
    for (int call = 0; call < 3; call++) {
        bool training = call < 2;
        gb_tensor *x = f64(xs[call], GB_SHAPE(B, C)), *yt = NULL;
        gb_value st = GB_BOOL("training", training);
        ck_assert_int_eq(gb_function_call(fn, &x, 1, &st, 1, &yt), 1);
        gb_tensor *ye = gb_module_call(eager, x, training);
        for (int i = 0; i < B * C; i++) ck_assert_double_eq_tol(gb_get(yt, i), gb_get(ye, i), 1e-12);
        for (int k = 0; k < C; k++) {
            ck_assert_double_eq_tol(var_at(traced, "moving_mean", k), var_at(eager, "moving_mean", k), 1e-12);
            ck_assert_double_eq_tol(var_at(traced, "moving_variance", k), var_at(eager, "moving_variance", k), 1e-12);
        }
    }
    gb_function_free(fn);
    gb_module_free(eager);
    gb_module_free(traced);
}
END_TEST

/* ---- gradients --------------------------------------------------------------------------- */

static gb_module *under_test;
static gb_tensor *through_layer(gb_tensor *const *x, int n, void *user) {
    (void)n, (void)user;
    return gb_module_call(under_test, x[0], true);
}

/* Central differences of L = sum(w * layer(x)) in each element of the
 * layer's trainable weights, against the tape. */
static void check_weight_gradients(gb_module *layer, gb_tensor *x) {
    gb_tensor *w = gc_weights(gb_module_call(layer, x, true));
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(layer, &n);
    gb_variable *list[4];
    memcpy(list, vars, (size_t)n * sizeof *list);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_reduce_sum(gb_mul(gb_module_call(layer, x, true), w), GB_ALL_AXES, false);
    gb_tape_end(tape);
    gb_tensor *grads[4] = {0};
    ck_assert(gb_tape_gradient_vars(tape, loss, list, n, grads));
    for (int v = 0; v < n; v++)
        for (int64_t j = 0; j < gb_variable_size(list[v]); j++) {
            gb_tensor *orig = gb_variable_value(list[v]);
            double f[2];
            for (int side = 0; side < 2; side++) {
                gb_tensor *moved = gb_tensor_from(GB_F64, gb_data(orig), 1, gb_variable_shape(list[v]));
                ((double *)gb_data(moved))[j] += side ? -GC_EPS : GC_EPS;
                gb_variable_assign(list[v], moved);
                f[side] = gb_item(gb_reduce_sum(gb_mul(gb_module_call(layer, x, true), w), GB_ALL_AXES, false));
            }
            gb_variable_assign(list[v], orig);
            double numeric = (f[0] - f[1]) / (2 * GC_EPS);
            ck_assert_msg(fabs(numeric - gb_get(grads[v], j)) <= GC_ATOL + GC_RTOL * fabs(numeric),
                          "%s[%lld]: tape %.10g, numeric %.10g", gb_variable_name(list[v]),
                          (long long)j, gb_get(grads[v], j), numeric);
        }
}

START_TEST(test_batch_norm_gradients) {
    under_test = gb_batch_norm_new(&(gb_batch_norm_options){
        .gamma_initializer = {.kind = GB_INIT_RANDOM_UNIFORM, .a = 0.5, .b = 1.5, .seed = 3},
        .beta_initializer = {.kind = GB_INIT_RANDOM_UNIFORM, .a = -1, .b = 1, .seed = 4}});
    gb_tensor *x = GC_INPUT(-2, 2, 5, 5, 3);
    GC_ASSERT(through_layer, &x, 1, NULL);
    check_weight_gradients(under_test, x);
    gb_tensor *img = GC_INPUT(-2, 2, 6, 2, 3, 2, 3);
    gb_module_free(under_test);
    under_test = gb_batch_norm_new(NULL);
    GC_ASSERT(through_layer, &img, 1, NULL);
    gb_module_free(under_test);
}
END_TEST

START_TEST(test_layer_norm_by_hand_and_gradients) {
    under_test = gb_layer_norm_new(&(gb_layer_norm_options){
        .gamma_initializer = {.kind = GB_INIT_RANDOM_UNIFORM, .a = 0.5, .b = 1.5, .seed = 3},
        .beta_initializer = {.kind = GB_INIT_RANDOM_UNIFORM, .a = -1, .b = 1, .seed = 4}});
    gb_tensor *y = gb_module_call(under_test, f64(X1, GB_SHAPE(B, C)), false);
    for (int i = 0; i < B; i++) {
        double mean = (X1[i * C] + X1[i * C + 1]) / 2;
        double var = ((X1[i * C] - mean) * (X1[i * C] - mean) + (X1[i * C + 1] - mean) * (X1[i * C + 1] - mean)) / 2;
        for (int k = 0; k < C; k++)
            ck_assert_double_eq_tol(gb_get(y, i * C + k),
                                    (X1[i * C + k] - mean) / sqrt(var + 1e-3) * var_at(under_test, "gamma", k) +
                                        var_at(under_test, "beta", k),
                                    1e-12);
    }
    gb_module_free(under_test);
    under_test = gb_layer_norm_new(&(gb_layer_norm_options){
        .gamma_initializer = {.kind = GB_INIT_RANDOM_UNIFORM, .a = 0.5, .b = 1.5, .seed = 5}});
    gb_tensor *x = GC_INPUT(-2, 2, 7, 3, 5);
    GC_ASSERT(through_layer, &x, 1, NULL);
    check_weight_gradients(under_test, x);
    gb_module_free(under_test);
}
END_TEST

/* ---- embedding, global pooling ------------------------------------------------------------- */

START_TEST(test_embedding_lookup_and_gradient) {
    gb_module *e = gb_embedding_new(5, 3, &(gb_embedding_options){.seed = 9});
    gb_tensor *idx = gb_tensor_from(GB_I32, (int32_t[]){2, 0, 2, 4}, GB_SHAPE(2, 2));
    gb_tensor *y = gb_module_call(e, idx, false);
    ck_assert_int_eq(gb_rank(y), 3);
    ck_assert_int_eq(gb_dim(y, 2), 3);
    gb_tensor *table = gb_variable_value(gb_module_variable(e, "embeddings"));
    const int rows[4] = {2, 0, 2, 4};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            ck_assert(gb_get(y, i * 3 + k) == gb_get(table, rows[i] * 3 + k));
            ck_assert(fabs(gb_get(table, rows[i] * 3 + k)) <= 0.05);
        }
    /* d sum(w * y) / d table: row 2 gets both of its lookups' w. */
    gb_tensor *w = gb_random_uniform(GB_F32, GB_SHAPE(2, 2, 3), 0.5, 1.5, 4);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_reduce_sum(gb_mul(gb_module_call(e, idx, true), w), GB_ALL_AXES, false);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(e, &n);
    gb_tensor *g = NULL;
    ck_assert(gb_tape_gradient_vars(tape, loss, vars, 1, &g));
    for (int k = 0; k < 3; k++) {
        ck_assert_double_eq_tol(gb_get(g, 2 * 3 + k), gb_get(w, 0 * 3 + k) + gb_get(w, 2 * 3 + k), 1e-6);
        ck_assert_double_eq_tol(gb_get(g, 0 * 3 + k), gb_get(w, 1 * 3 + k), 1e-6);
        ck_assert_double_eq(gb_get(g, 1 * 3 + k), 0);
        ck_assert_double_eq(gb_get(g, 3 * 3 + k), 0);
    }
    ck_assert_ptr_null(gb_module_call(e, gb_tensor_from(GB_I32, (int32_t[]){1, 5}, GB_SHAPE(2)), false));
    assert_error(GB_ERR_VALUE, "= 5 is out of range");
    ck_assert_ptr_null(gb_module_call(e, gb_zeros(GB_F32, GB_SHAPE(2)), false));
    assert_error(GB_ERR_DTYPE, "");
    gb_module_free(e);
    gb_module *fresh = gb_embedding_new(5, 3, NULL);
    ck_assert_ptr_null(gb_module_call(fresh, gb_zeros(GB_F32, GB_SHAPE(2)), false));
    assert_error(GB_ERR_DTYPE, "Embedding layer 'embedding_1': expected int32 or int64 indices, got float32");
    gb_module_free(fresh);
}
END_TEST

START_TEST(test_global_average_pooling) {
    gb_module *gap = gb_global_avg_pool2d_new(NULL);
    double x[2 * 2 * 3 * 2];
    for (int i = 0; i < 24; i++) x[i] = i;
    gb_tensor *y = gb_module_call(gap, f64(x, GB_SHAPE(2, 2, 3, 2)), false);
    ck_assert_int_eq(gb_rank(y), 2);
    for (int b = 0; b < 2; b++)
        for (int c = 0; c < 2; c++) {
            double s = 0;
            for (int p = 0; p < 6; p++) s += x[b * 12 + p * 2 + c];
            ck_assert_double_eq_tol(gb_get(y, b * 2 + c), s / 6, 1e-12);
        }
    ck_assert_ptr_null(gb_module_call(gap, f64(x, GB_SHAPE(24)), false));
    assert_error(GB_ERR_SHAPE, "expected a rank-4 NHWC input");
    gb_module_free(gap);
}
END_TEST

/* Embedding(mask_zero) -> GlobalAveragePooling1D: the mean over the
 * tokens that are not padding (0), so a row's padding does not dilute it;
 * a row of padding only averages to zeros. */
static int pooled(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_module_call(user, in[0], false);
    return out[0] ? 1 : -1;
}

START_TEST(test_global_average_pooling_1d_masked) {
    gb_module *gap = gb_global_avg_pool1d_new(NULL);
    double x[2 * 3 * 2];
    for (int i = 0; i < 12; i++) x[i] = i;
    gb_tensor *y = gb_module_call(gap, f64(x, GB_SHAPE(2, 3, 2)), false);
    const double plain[] = {2, 3, 8, 9};
    for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(gb_get(y, i), plain[i], 1e-12);
    gb_tensor *mask = gb_tensor_from(GB_BOOL, (bool[]){true, false, true, false, false, false},
                                     GB_SHAPE(2, 3));
    y = gb_module_call_masked(gap, f64(x, GB_SHAPE(2, 3, 2)), mask, false, NULL);
    const double masked[] = {2, 3, 0, 0}; /* (0 + 4) / 2, (1 + 5) / 2; none kept */
    for (int i = 0; i < 4; i++) ck_assert_double_eq_tol(gb_get(y, i), masked[i], 1e-12);
    ck_assert_ptr_null(gb_module_call_masked(gap, f64(x, GB_SHAPE(2, 3, 2)),
                                             gb_zeros(GB_BOOL, GB_SHAPE(2, 2)), false, NULL));
    assert_error(GB_ERR_SHAPE, "GlobalAveragePooling1D layer 'global_average_pooling1d': the mask "
                               "[2,2] does not fit the input [2,3,2] (it must be [batch, steps])");
    ck_assert_ptr_null(gb_module_call(gap, f64(x, GB_SHAPE(12)), false));
    assert_error(GB_ERR_SHAPE, "expected a rank-3 input [batch, steps, features], got shape [12]");

    gb_module *m = gb_sequential_new("bag");
    gb_module *emb = gb_embedding_new(4, 2, &(gb_embedding_options){.seed = 2, .mask_zero = true});
    gb_sequential_add(m, emb);
    gb_sequential_add(m, gb_global_avg_pool1d_new(NULL));
    gb_tensor *ids = gb_tensor_from(GB_I64, (int64_t[]){3, 1, 0, 0, 2, 0, 0, 0, 0}, GB_SHAPE(3, 3));
    gb_tensor *out = gb_module_call(m, ids, false);
    gb_tensor *t = gb_variable_value(gb_module_variable(emb, "embeddings"));
    for (int k = 0; k < 2; k++) {
        ck_assert_double_eq_tol(gb_get(out, k), (gb_get(t, 3 * 2 + k) + gb_get(t, 1 * 2 + k)) / 2, 1e-7);
        ck_assert_double_eq_tol(gb_get(out, 2 + k), gb_get(t, 2 * 2 + k), 1e-7);
        ck_assert_double_eq(gb_get(out, 4 + k), 0);
    }
    gb_tensor *mask_out;
    gb_module_call_masked(emb, ids, NULL, false, &mask_out);
    ck_assert_int_eq(gb_tensor_dtype(mask_out), GB_BOOL);
    for (int i = 0; i < 9; i++) ck_assert_int_eq(gb_get(mask_out, i) != 0, i == 0 || i == 1 || i == 4);
    gb_function *f = gb_function_new(
        "pooled", pooled,
        &(gb_function_options){.user = m,
                               .input_signature = (gb_tensor_spec[]){GB_SPEC("ids", GB_I64, -1, 3)},
                               .ninput_signature = 1});
    gb_tensor *back;
    ck_assert_msg(gb_function_call(f, &ids, 1, NULL, 0, &back) == 1, "%s", gb_error_string());
    for (int i = 0; i < 6; i++) ck_assert(gb_get(back, i) == gb_get(out, i));
    gb_function_free(f);
    gb_module_free(m);
    gb_module_free(gap);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_norm");
    TCase *tc = tcase_create("norm");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_batch_norm_training_and_inference_by_hand);
    tcase_add_test(tc, test_batch_norm_on_images);
    tcase_add_test(tc, test_batch_norm_traced_equals_eager);
    tcase_add_test(tc, test_batch_norm_gradients);
    tcase_add_test(tc, test_layer_norm_by_hand_and_gradients);
    tcase_add_test(tc, test_embedding_lookup_and_gradient);
    tcase_add_test(tc, test_global_average_pooling);
    tcase_add_test(tc, test_global_average_pooling_1d_masked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
