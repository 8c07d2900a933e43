/* test_nn_recurrent.c — SimpleRNN, LSTM and GRU (nn/recurrent.c).
 *
 *   - Against PyTorch: weights and inputs filled by one formula (formula_values.h
 *     below and in scripts/rnn_reference.py), PyTorch's RNN, LSTM and GRU
 *     in float64 on the same weights (mapped from Keras' layout) wrote
 *     tests/fixtures/rnn_reference.txt; every output of every step agrees
 *     to 1e-12.
 *   - Gradients through time: the tape's gradient of sum(w * y) with
 *     respect to the input and to each weight against central differences.
 *   - return_sequences, go_backwards (the sequence reversed, processed in
 *     that order), traced calls bit for bit as eager, configs round trip,
 *     Keras' initial weights (orthogonal recurrent kernel, the LSTM's
 *     forget-gate bias of ones) and shape errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "formula_values.h"
#include "gradcheck.h"
#include "test_util.h"

enum { B = 2, T = 3, F = 4, U = 3 };

typedef enum kind { SIMPLE, LSTM, GRU } kind;
static const int GATES[3] = {1, 4, 3};
static const char *const NAMES[3] = {"simple", "lstm", "gru"};

static gb_tensor *inputs(void) {
    return gb_reshape(formula_matrix(7, B * T, F), 3, (int64_t[]){B, T, F});
}

static gb_module *layer(kind k, const gb_rnn_options *o) {
    return k == SIMPLE ? gb_simple_rnn_new(U, o) : k == LSTM ? gb_lstm_new(U, o) : gb_gru_new(U, o);
}

/* A float64 layer with the formula's weights (bias row 0; a GRU resetting after, both rows). */
static gb_module *reference_layer(kind k, gb_rnn_options o) {
    o.no_unit_forget_bias = true;
    gb_module *m = layer(k, &o);
    ck_assert_msg(m && gb_module_build(m, GB_F64, 3, (int64_t[]){-1, T, F}), "%s", gb_error_string());
    int64_t g = GATES[k] * U;
    gb_tensor *bias = formula_matrix(3, 2, g);
    ck_assert(gb_variable_assign(gb_module_variable(m, "kernel"), formula_matrix(1, F, g)));
    ck_assert(gb_variable_assign(gb_module_variable(m, "recurrent_kernel"), formula_matrix(2, U, g)));
    ck_assert(gb_variable_assign(gb_module_variable(m, "bias"),
                                 k == GRU && !o.reset_before ? bias : gb_reshape(gb_slice(bias, GB_LIST(0, 0), GB_LIST(1, g)), 1, &g)));
    return m;
}

/* The fixture's numbers for kind k: B * T * U of them. */
static void reference(kind k, double *out) {
    char path[512], name[16];
    snprintf(path, sizeof path, "%s/tests/fixtures/rnn_reference.txt", getenv("GB_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    bool found = false;
    while (!found && fscanf(f, "%15s", name) == 1) {
        found = strcmp(name, NAMES[k]) == 0;
        for (int i = 0; i < B * T * U; i++) ck_assert(fscanf(f, "%lf", found ? &out[i] : &(double){0}) == 1);
    }
    fclose(f);
    ck_assert_msg(found, "no '%s' line in %s", NAMES[k], path);
}

START_TEST(test_matches_pytorch) {
    kind k = (kind)_i;
    gb_module *m = reference_layer(k, (gb_rnn_options){.return_sequences = true});
    gb_tensor *y = gb_module_call(m, inputs(), false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_rank(y), 3);
    ck_assert_int_eq(gb_dim(y, 2), U);
    double want[B * T * U];
    reference(k, want);
    for (int i = 0; i < B * T * U; i++)
        ck_assert_msg(fabs(gb_get(y, i) - want[i]) <= 1e-12, "%s element %d: %.17g, PyTorch %.17g",
                      NAMES[k], i, gb_get(y, i), want[i]);
    /* Without return_sequences: the last step's state. */
    gb_module *last = reference_layer(k, (gb_rnn_options){0});
    gb_tensor *h = gb_module_call(last, inputs(), false);
    ck_assert_int_eq(gb_rank(h), 2);
    for (int b = 0; b < B; b++)
        for (int u = 0; u < U; u++)
            ck_assert(gb_get(h, b * U + u) == gb_get(y, (b * T + T - 1) * U + u));
    gb_module_free(m);
    gb_module_free(last);
}
END_TEST

/* go_backwards on x equals the forward layer on x reversed in time. */
START_TEST(test_go_backwards_is_the_reversed_sequence) {
    kind k = (kind)_i;
    gb_module *back = reference_layer(k, (gb_rnn_options){.return_sequences = true, .go_backwards = true});
    gb_module *fwd = reference_layer(k, (gb_rnn_options){.return_sequences = true});
    gb_tensor *x = inputs();
    gb_tensor *steps[T];
    for (int t = 0; t < T; t++) steps[t] = gb_slice(x, GB_LIST(0, T - 1 - t, 0), GB_LIST(-1, 1, -1));
    gb_tensor *a = gb_module_call(back, x, false), *b = gb_module_call(fwd, gb_concat(steps, T, 1), false);
    ck_assert_msg(a && b, "%s", gb_error_string());
    for (int64_t i = 0; i < gb_size(a); i++) ck_assert(gb_get(a, i) == gb_get(b, i));
    gb_module_free(back);
    gb_module_free(fwd);
}
END_TEST

/* ---- gradients through time ------------------------------------------------------------- */

static gb_tensor *call_layer(gb_tensor *const *xs, int n, void *user) {
    (void)n;
    return gb_module_call(user, xs[0], false);
}

/* d sum(w * y) / d v by central differences, against the tape's. */
static void assert_weight_gradient(gb_module *m, const char *name, gb_tensor *x) {
    gb_variable *v = gb_module_variable(m, name);
    gb_tensor *w0 = gb_variable_value(v); /* the scope keeps it past the assigns */
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch_variable(tape, v);
    gb_tensor *y = gb_module_call(m, x, false);
    gb_tensor *wts = gb_random_uniform(GB_F64, gb_rank(y), gb_shape(y), -1, 1, 17);
    gb_tensor *loss = gb_reduce_sum(gb_mul(y, wts), NULL, 0, false);
    gb_tape_end(tape);
    gb_tensor *grad;
    ck_assert(gb_tape_gradient_vars(tape, loss, &v, 1, &grad));
    for (int64_t j = 0; j < gb_size(w0); j++) {
        double f[2];
        for (int s = 0; s < 2; s++) {
            gb_tensor *nudged = gb_tensor_from(GB_F64, gb_data(w0), gb_rank(w0), gb_shape(w0));
            ((double *)gb_data(nudged))[j] += s ? GC_EPS : -GC_EPS;
            ck_assert(gb_variable_assign(v, nudged));
            f[s] = gc_weighted_sum(gb_module_call(m, x, false), wts);
        }
        double numeric = (f[1] - f[0]) / (2 * GC_EPS), got = gb_get(grad, j);
        ck_assert_msg(fabs(got - numeric) <= GC_ATOL + GC_RTOL * fabs(numeric),
                      "%s %s[%lld]: tape %.10g, numeric %.10g", gb_module_class_name(m), name,
                      (long long)j, got, numeric);
    }
    ck_assert(gb_variable_assign(v, w0));
}

START_TEST(test_gradients_through_time) {
    kind k = (kind)_i;
    for (int variant = 0; variant < 2; variant++) {
        /* variant 1: every step's output, processed backwards (a GRU resetting before). */
        gb_rnn_options o = {.return_sequences = variant, .go_backwards = variant, .reset_before = variant};
        gb_module *m = reference_layer(k, o);
        gb_tensor *x = inputs();
        gb_tensor *xs[1] = {x};
        GC_ASSERT(call_layer, xs, 1, m);
        assert_weight_gradient(m, "kernel", x);
        assert_weight_gradient(m, "recurrent_kernel", x);
        assert_weight_gradient(m, "bias", x);
        gb_module_free(m);
    }
}
END_TEST

/* ---- traced, configs, initial weights, errors ------------------------------------------- */

static int forward(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_module_call(user, in[0], false);
    return out[0] ? 1 : -1;
}

START_TEST(test_traced_matches_eager) {
    kind k = (kind)_i;
    gb_module *m = layer(k, &(gb_rnn_options){.return_sequences = true, .seed = 5});
    gb_tensor *x = gb_cast(inputs(), GB_F32);
    gb_tensor *eager = gb_module_call(m, x, false), *traced;
    gb_function *f = gb_function_new("rnn", forward, &(gb_function_options){.user = m});
    ck_assert_msg(gb_function_call(f, &x, 1, NULL, 0, &traced) == 1, "%s", gb_error_string());
    ck_assert(gb_same_shape(eager, traced));
    ck_assert(memcmp(gb_data(eager), gb_data(traced), gb_nbytes(eager)) == 0);
    gb_function_free(f);
    gb_module_free(m);
}
END_TEST

START_TEST(test_config_round_trip_and_initial_weights) {
    kind k = (kind)_i;
    gb_module *m = layer(k, &(gb_rnn_options){.return_sequences = true, .go_backwards = true,
                                              .recurrent_activation = GB_ACT_TANH, .seed = 3});
    ck_assert(gb_module_build(m, GB_F32, 3, (int64_t[]){-1, T, F}));
    gb_config *c = gb_module_get_config(m);
    ck_assert_ptr_nonnull(c);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_config *again = gb_module_get_config(back);
    char *a = gb_config_to_json(c, 0), *b = gb_config_to_json(again, 0);
    ck_assert_str_eq(a, b);
    free(a), free(b);
    gb_config_free(c), gb_config_free(again);
    /* The recurrent kernel [U, g U] starts orthogonal: its rows orthonormal. */
    gb_tensor *r = gb_variable_value(gb_module_variable(m, "recurrent_kernel"));
    gb_tensor *rrt = gb_matmul_t(r, r, false, true);
    for (int i = 0; i < U; i++)
        for (int j = 0; j < U; j++) ck_assert_msg(fabs(gb_get(rrt, i * U + j) - (i == j)) < 1e-6, "%s R R^T[%d,%d] = %g", NAMES[k], i, j, gb_get(rrt, i * U + j));
    if (k == LSTM) { /* unit_forget_bias: the forget gate's quarter is ones */
        gb_tensor *bias = gb_variable_value(gb_module_variable(m, "bias"));
        for (int i = 0; i < 4 * U; i++) ck_assert(gb_get(bias, i) == (i >= U && i < 2 * U));
    }
    gb_module_free(m);
    gb_module_free(back);
}
END_TEST

START_TEST(test_errors_are_clear) {
    gb_module *m = gb_lstm_new(U, NULL);
    ck_assert_ptr_null(gb_module_call(m, gb_ones(GB_F32, GB_SHAPE(B, F)), false));
    check_error(GB_ERR_SHAPE, "expected [batch, time, features] with known features, got shape [2,4]");
    gb_clear_error();
    ck_assert_ptr_null(gb_lstm_new(0, NULL));
    check_error(GB_ERR_VALUE, "LSTM: units must be positive, got 0");
    gb_clear_error();
    gb_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_recurrent");
    TCase *tc = tcase_create("recurrent");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_matches_pytorch, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_go_backwards_is_the_reversed_sequence, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_gradients_through_time, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_traced_matches_eager, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_config_round_trip_and_initial_weights, SIMPLE, GRU + 1);
    tcase_add_test(tc, test_errors_are_clear);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
