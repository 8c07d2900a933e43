/* test_ops_lstm.c — BlockLSTM and BlockLSTMGrad (ops/lstm.c): a one-unit
 * sequence against the cell's equations written out with libm, the op
 * against the same steps as ops (matmul, sigmoid, tanh), float32 against
 * float64 where the units are split among threads (a partial block of
 * 16), finite-difference gradients with and without an initial state,
 * a traced call equal to the eager one, and every shape and dtype error
 * word for word. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "ops/internal.h"
#include "test_util.h"

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

/* hs and cs of BlockLSTM, or NULL and the error. */
static gb_tensor *run(gb_tensor *xw, gb_tensor *rec, gb_tensor *h0, gb_tensor *c0, gb_tensor **cs) {
    gb_tensor *hs = NULL;
    return gb__block_lstm(xw, rec, h0, c0, &hs, cs) ? hs : NULL;
}

/* ---- values ----------------------------------------------------------------------- */

START_TEST(test_one_unit_by_hand) {
    /* batch 1, 2 steps, 1 unit: xw [1, 2, 4] (i, f, g, o), R [1, 4] */
    const double x[8] = {0.5, -0.25, 0.75, 1.0, -0.5, 0.3, -0.2, 0.1}, r[4] = {0.4, -0.6, 0.8, 0.2};
    const double h0 = 0.3, c0 = -0.7;
    gb_tensor *cs;
    gb_tensor *hs = run(gb_tensor_from(GB_F64, x, GB_SHAPE(1, 2, 4)), gb_tensor_from(GB_F64, r, GB_SHAPE(1, 4)),
                        gb_tensor_from(GB_F64, &h0, GB_SHAPE(1, 1)), gb_tensor_from(GB_F64, &c0, GB_SHAPE(1, 1)), &cs);
    ck_assert_ptr_nonnull(hs);
    double h = h0, c = c0;
    for (int k = 0; k < 2; k++) {
        const double *z = x + 4 * k;
        double i = sig(z[0] + h * r[0]), f = sig(z[1] + h * r[1]), g = tanh(z[2] + h * r[2]), o = sig(z[3] + h * r[3]);
        c = f * c + i * g;
        h = o * tanh(c);
        ck_assert_msg(fabs(gb_get(hs, k) - h) <= 1e-15, "h at step %d: %.17g, want %.17g", k, gb_get(hs, k), h);
        ck_assert_msg(fabs(gb_get(cs, k) - c) <= 1e-15, "c at step %d: %.17g, want %.17g", k, gb_get(cs, k), c);
    }
}
END_TEST

/* The steps as ops, as the generic recurrent loop runs them: [B, T, u] of h (and c in *cs). */
static gb_tensor *steps_as_ops(gb_tensor *xw, gb_tensor *rec, gb_tensor *h, gb_tensor *c, gb_tensor **cs) {
    int64_t steps = gb_dim(xw, 1), u = gb_dim(rec, 0);
    gb_tensor *hs[8], *css[8];
    for (int64_t k = 0; k < steps; k++) {
        gb_tensor *z = gb_reshape(gb_slice(xw, (int64_t[]){0, k, 0}, 3, (int64_t[]){-1, 1, 4 * u}, 3), 2,
                                  (int64_t[]){-1, 4 * u});
        if (h) z = gb_add(z, gb_matmul(h, rec));
        gb_tensor *q[4];
        for (int g = 0; g < 4; g++) q[g] = gb_slice(z, (int64_t[]){0, g * u}, 2, (int64_t[]){-1, u}, 2);
        gb_tensor *ig = gb_mul(gb_sigmoid(q[0]), gb_tanh(q[2]));
        c = c ? gb_add(gb_mul(gb_sigmoid(q[1]), c), ig) : ig;
        h = gb_mul(gb_sigmoid(q[3]), gb_tanh(c));
        hs[k] = h, css[k] = c;
    }
    *cs = gb_stack(css, (int)steps, 1);
    return gb_stack(hs, (int)steps, 1);
}

static void assert_close(gb_tensor *a, gb_tensor *b, double tol, const char *what) {
    ck_assert_int_eq(gb_size(a), gb_size(b));
    for (int64_t i = 0; i < gb_size(a); i++)
        ck_assert_msg(fabs(gb_get(a, i) - gb_get(b, i)) <= tol, "%s element %lld: %.17g vs %.17g", what, (long long)i,
                      gb_get(a, i), gb_get(b, i));
}

START_TEST(test_equals_the_steps_as_ops) {
    enum { B = 3, T = 5, U = 4 };
    gb_tensor *xw = GC_INPUT(-2, 2, 1, B, T, 4 * U), *rec = GC_INPUT(-1, 1, 2, U, 4 * U);
    gb_tensor *h0 = GC_INPUT(-1, 1, 3, B, U), *c0 = GC_INPUT(-1, 1, 4, B, U);
    gb_tensor *cs, *want_cs;
    assert_close(run(xw, rec, h0, c0, &cs), steps_as_ops(xw, rec, h0, c0, &want_cs), 1e-15, "h from h0, c0");
    assert_close(cs, want_cs, 1e-15, "c from h0, c0");
    assert_close(run(xw, rec, NULL, NULL, &cs), steps_as_ops(xw, rec, NULL, NULL, &want_cs), 1e-15, "h from zero");
    assert_close(cs, want_cs, 1e-15, "c from zero");
}
END_TEST

/* Big enough that each step's units are split among the pool's workers
 * (72 units: four blocks of 16 and a part block of 8): float32, with its
 * fast sigmoid and tanh, against float64, forward and backward. */
static gb_tensor *loss_of(gb_tensor *const *x, gb_tensor **grads) {
    gb_tape *t = gb_tape_begin();
    for (int i = 0; i < 4; i++) gb_tape_watch(t, x[i]);
    gb_tensor *cs, *hs = run(x[0], x[1], x[2], x[3], &cs);
    gb_tensor *loss = gb_reduce_sum(gb_add(gb_mul(hs, hs), gb_mul(cs, gb_scalar(gb_tensor_dtype(cs), 0.5))), NULL, 0,
                                    false);
    gb_tape_end(t);
    gb_tape_gradients(t, loss, x, 4, grads);
    return hs;
}

START_TEST(test_float32_matches_float64_across_threads) {
    enum { B = 8, T = 6, U = 72 };
    gb_tensor *x64[4] = {GC_INPUT(-2, 2, 5, B, T, 4 * U), GC_INPUT(-0.2, 0.2, 6, U, 4 * U), GC_INPUT(-1, 1, 7, B, U),
                         GC_INPUT(-1, 1, 8, B, U)};
    gb_tensor *x32[4], *g64[4], *g32[4];
    for (int i = 0; i < 4; i++) x32[i] = gb_cast(x64[i], GB_F32);
    gb_tensor *h64 = loss_of(x64, g64), *h32 = loss_of(x32, g32);
    ck_assert(gb_ok());
    assert_close(h32, h64, 2e-6, "h");
    const char *names[4] = {"dxw", "dR", "dh0", "dc0"};
    for (int i = 0; i < 4; i++) assert_close(g32[i], g64[i], 2e-4, names[i]);
}
END_TEST

/* ---- gradients -------------------------------------------------------------------- */

/* hs and cs side by side, so both outputs' gradients reach the inputs. */
static gb_tensor *both_fn(gb_tensor *const *x, int n, void *u) {
    (void)u;
    gb_tensor *cs, *hs = run(x[0], x[1], n > 2 ? x[2] : NULL, n > 2 ? x[3] : NULL, &cs);
    return hs ? gb_concat((gb_tensor *[]){hs, cs}, 2, 2) : NULL;
}

START_TEST(test_gradients) {
    enum { B = 2, T = 4, U = 3 };
    gb_tensor *xs[4] = {GC_INPUT(-2, 2, 9, B, T, 4 * U), GC_INPUT(-1, 1, 10, U, 4 * U), GC_INPUT(-1, 1, 11, B, U),
                        GC_INPUT(-1, 1, 12, B, U)};
    GC_ASSERT(both_fn, xs, 4, NULL);
    GC_ASSERT(both_fn, xs, 2, NULL);
}
END_TEST

/* ---- traced ----------------------------------------------------------------------- */

static int traced_step(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *grads[4];
    out[0] = loss_of(in, grads);
    for (int i = 0; i < 4; i++) out[1 + i] = grads[i];
    return 5;
}

START_TEST(test_traced_equals_eager) {
    enum { B = 4, T = 7, U = 20 };
    gb_tensor *x[4] = {gb_random_normal(GB_F32, GB_SHAPE(B, T, 4 * U), 0, 1, 13),
                       gb_random_normal(GB_F32, GB_SHAPE(U, 4 * U), 0, 0.3, 14),
                       gb_random_normal(GB_F32, GB_SHAPE(B, U), 0, 1, 15),
                       gb_random_normal(GB_F32, GB_SHAPE(B, U), 0, 1, 16)};
    gb_tensor *eager[5];
    eager[0] = loss_of(x, eager + 1);
    gb_function *f = gb_function_new("lstm_step", traced_step, NULL);
    gb_tensor *traced[5];
    for (int call = 0; call < 2; call++) {
        ck_assert_int_eq(gb_function_call(f, x, 4, NULL, 0, traced), 5);
        for (int i = 0; i < 5; i++) assert_close(traced[i], eager[i], 0, "traced vs eager");
    }
    gb_function_free(f);
}
END_TEST

/* ---- errors ----------------------------------------------------------------------- */

static gb_tensor *dispatch(gb_op_id op, gb_tensor *const *in, int n) {
    gb_tensor *out[3];
    return gb__dispatch(op, in, n, NULL, out) == 3 ? out[0] : NULL;
}

START_TEST(test_errors) {
    gb_tensor *xw = gb_zeros(GB_F32, GB_SHAPE(2, 3, 8)), *rec = gb_zeros(GB_F32, GB_SHAPE(2, 8));
    gb_tensor *h = gb_zeros(GB_F32, GB_SHAPE(2, 2));
    ck_assert_ptr_null(run(gb_zeros(GB_F32, GB_SHAPE(2, 3, 9)), rec, NULL, NULL, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTM: xw must be [batch, time, 4 * units] and R [units, 4 * units] with "
                                    "time and units positive, got [2,3,9] and [2,8]");
    ck_assert_ptr_null(run(xw, gb_zeros(GB_F32, GB_SHAPE(2, 6)), NULL, NULL, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTM: xw must be [batch, time, 4 * units] and R [units, 4 * units] with "
                                    "time and units positive, got [2,3,8] and [2,6]");
    ck_assert_ptr_null(run(gb_zeros(GB_F32, GB_SHAPE(2, 0, 8)), rec, NULL, NULL, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTM: xw must be [batch, time, 4 * units] and R [units, 4 * units] with "
                                    "time and units positive, got [2,0,8] and [2,8]");
    ck_assert_ptr_null(run(xw, rec, gb_zeros(GB_F32, GB_SHAPE(3, 2)), h, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTM: h0 must be [2,2], got [3,2]");
    ck_assert_ptr_null(run(xw, rec, h, gb_zeros(GB_F32, GB_SHAPE(2, 2, 1)), &(gb_tensor *){0}));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTM: c0 must be [2,2], got [2,2,1]");
    ck_assert_ptr_null(run(xw, gb_zeros(GB_F64, GB_SHAPE(2, 8)), NULL, NULL, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_DTYPE, "BlockLSTM: inputs must all be float32 or all float64, got float64 as input 1");
    ck_assert_ptr_null(run(gb_zeros(GB_I32, GB_SHAPE(2, 3, 8)), rec, NULL, NULL, &(gb_tensor *){0}));
    assert_error_text(GB_ERR_DTYPE, "BlockLSTM: inputs must all be float32 or all float64, got int32 as input 0");
    ck_assert_ptr_null(dispatch(GB_OP_BLOCK_LSTM, (gb_tensor *[]){xw, rec, h}, 3));
    assert_error_text(GB_ERR_VALUE, "BlockLSTM: takes xw and R, then h0 and c0 or neither, got 3 inputs");

    gb_tensor *seq = gb_zeros(GB_F32, GB_SHAPE(2, 3, 2));
    ck_assert_ptr_null(dispatch(GB_OP_BLOCK_LSTM_GRAD, (gb_tensor *[]){rec, seq, xw, seq}, 4));
    assert_error_text(GB_ERR_VALUE, "BlockLSTMGrad: takes R, cs, gates, dhs, dcs and c0 or not, got 4 inputs");
    ck_assert_ptr_null(dispatch(GB_OP_BLOCK_LSTM_GRAD, (gb_tensor *[]){rec, seq, xw, gb_zeros(GB_F32, GB_SHAPE(2, 4, 2)), seq}, 5));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTMGrad: dhs must be [2,3,2], got [2,4,2]");
    ck_assert_ptr_null(dispatch(GB_OP_BLOCK_LSTM_GRAD, (gb_tensor *[]){rec, seq, seq, seq, seq}, 5));
    assert_error_text(GB_ERR_SHAPE, "BlockLSTMGrad: gates must be [batch, time, 4 * units] and R [units, 4 * units] "
                                    "with time and units positive, got [2,3,2] and [2,8]");
}
END_TEST

/* The gradient of the gradient is not defined: asking for it says so. */
START_TEST(test_no_second_derivative) {
    gb_tensor *xw = GC_INPUT(-1, 1, 17, 1, 2, 4), *rec = GC_INPUT(-1, 1, 18, 1, 4);
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, xw);
    gb_tape *inner = gb_tape_begin();
    gb_tape_watch(inner, xw);
    gb_tensor *cs, *hs = run(xw, rec, NULL, NULL, &cs);
    gb_tensor *loss = gb_reduce_sum(gb_mul(hs, hs), NULL, 0, false);
    gb_tape_end(inner);
    gb_tensor *g = gb_tape_gradient(inner, loss, xw);
    gb_tensor *gg = gb_reduce_sum(gb_mul(g, g), NULL, 0, false);
    gb_tape_end(outer);
    ck_assert_ptr_null(gb_tape_gradient(outer, gg, xw));
    assert_error_text(GB_ERR_NO_GRADIENT,
                      "no gradient is registered for op 'gradients/BlockLSTM_grad/BlockLSTMGrad' (op type "
                      "BlockLSTMGrad). Wrap its input in gb_stop_gradient() to treat it as a constant, or give "
                      "it one with gb_register_gradient(\"BlockLSTMGrad\", fn)");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_lstm");
    TCase *tc = tcase_create("lstm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_one_unit_by_hand);
    tcase_add_test(tc, test_equals_the_steps_as_ops);
    tcase_add_test(tc, test_float32_matches_float64_across_threads);
    tcase_add_test(tc, test_gradients);
    tcase_add_test(tc, test_traced_equals_eager);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_no_second_derivative);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
