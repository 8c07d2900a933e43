/* test_graph_control_flow.c — gb_cond, gb_while_loop and tensor arrays,
 * eager and traced.
 *
 * Each body below is written once and run both ways: called directly
 * (eager: a C if / a C loop, tapes recording the ops) and through a
 * gb_function (traced: If and While nodes over traced sub-graphs). What
 * must hold:
 *   - next_collatz looped to 1 takes exactly 8, 16 and 111 steps from 6, 7
 *     and 27 (one trace serves every start; the body nests a cond);
 *   - x^n by repeated multiplication has gradient n x^(n-1), with the tape
 *     inside the function, outside it, and eagerly;
 *   - the gradient of a cond follows the branch taken, for both branches;
 *   - an RNN over time writing a tensor array passes a finite-difference
 *     check of the loss w.r.t. W, U and x, eager, traced and through a call;
 *   - mismatched branch outputs, a loop variable changing shape without a
 *     -1 invariant, max_iterations exceeded, and a tensor of the enclosing
 *     trace used in a branch are sticky errors naming what went wrong;
 *   - nodes inside branches carry the branch's scope, and so do numerics
 *     alerts from them.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "cf_test_fns.h"
#include "gradcheck.h"
#include "graph_test_util.h"
#include "test_util.h"

/* ---- Collatz ------------------------------------------------------------------------------ */

static int halve(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_div(in[0], gb_scalar(GB_I64, 2));
    return 1;
}

static int triple_plus_one(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_add_scalar(gb_mul_scalar(in[0], 3), 1);
    return 1;
}

/* tf.where(x % 2 == 0, x // 2, 3 * x + 1), as a cond (x is positive). */
static gb_tensor *next_collatz(gb_tensor *x) {
    gb_tensor *even = gb_equal(gb_sub(x, gb_mul_scalar(gb_div(x, gb_scalar(GB_I64, 2)), 2)),
                               gb_scalar(GB_I64, 0));
    gb_tensor *y = NULL;
    return gb_cond(even, halve, triple_plus_one, &x, 1, NULL, &y) == 1 ? y : NULL;
}

static int not_one(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_not_equal(v[0], gb_scalar(GB_I64, 1));
    return 1;
}

static int collatz_step(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = next_collatz(v[0]);
    out[1] = gb_add_scalar(v[1], 1);
    return 2;
}

/* in[0]: the start; out[0]: the steps to reach 1. */
static int collatz_steps(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *v[2] = {in[0], gb_scalar(GB_I64, 0)};
    gb_while_options o = {.names = (const char *[]){"x", "steps"}, .nnames = 2};
    if (gb_while_loop(not_one, collatz_step, v, 2, &o, v) != 2) return -1;
    out[0] = v[1];
    return 1;
}

START_TEST(test_collatz_steps_eager_and_traced) {
    gb_tensor_spec sig = GB_SPEC_SCALAR("x", GB_I64);
    gb_function *f = gb_function_new("collatz", collatz_steps,
                                     &(gb_function_options){.input_signature = &sig,
                                                            .ninput_signature = 1});
    const int64_t starts[] = {6, 7, 27, 1}, steps[] = {8, 16, 111, 0};
    for (int i = 0; i < 4; i++) {
        gb_tensor *x = gb_scalar(GB_I64, (double)starts[i]), *eager, *traced;
        ck_assert_int_eq(collatz_steps(NULL, &x, 1, NULL, 0, &eager), 1);
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &traced), 1);
        ck_assert_msg(gb_ok(), "%s", gb_error_string());
        ck_assert_int_eq((int64_t)gb_item(eager), steps[i]);
        ck_assert_int_eq((int64_t)gb_item(traced), steps[i]);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    const char *g = gb_function_graph_text(f);
    ck_assert_msg(strstr(g, "while = While("), "%s", g);
    gb_function_free(f);
}
END_TEST

/* ---- x^n ----------------------------------------------------------------------------------- */

static gb_tensor *power(gb_tensor *x, gb_tensor *n) { return cf_power(x, n, 0); }

/* in: x (float64), n (int64); out: x^n and d(x^n)/dx, the tape inside. */
static int power_and_grad(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    out[0] = power(in[0], in[1]);
    gb_tape_end(tape);
    gb_source src = GB_SRC(in[0]);
    if (!out[0] || !gb_tape_gradient_ex(tape, &out[0], 1, NULL, &src, 1, GB_UNCONNECTED_ZERO,
                                        &out[1]))
        return -1;
    return 2;
}

static int power_only(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = power(in[0], in[1]);
    return out[0] ? 1 : -1;
}

/* Empty loop variables ([0] elements, no data behind them): the traced
 * loop runs its trips and, recorded for the gradient, stacks nothing
 * (UBSan: memcpy from NULL; found by the SavedModel fuzzer). */
START_TEST(test_loop_over_empty_tensors) {
    gb_function *f = gb_function_new("power_and_grad", power_and_grad, NULL);
    gb_tensor *in[2] = {gb_zeros(GB_F64, GB_SHAPE(0)), gb_scalar(GB_I64, 3)}, *out[2];
    ck_assert_msg(gb_function_call(f, in, 2, NULL, 0, out) == 2, "%s", gb_error_string());
    ck_assert_int_eq(gb_size(out[0]), 0);
    ck_assert_int_eq(gb_size(out[1]), 0);
    gb_function_free(f);
}
END_TEST

START_TEST(test_power_gradient_eager_and_traced) {
    gb_function *f = gb_function_new("power_and_grad", power_and_grad, NULL);
    gb_function *g = gb_function_new("power", power_only, NULL);
    const double x0 = 1.5;
    for (int n = 0; n <= 5; n++) {
        gb_tensor *in[2] = {gb_scalar(GB_F64, x0), gb_scalar(GB_I64, n)}, *eager[2], *traced[2];
        double want = pow(x0, n), dwant = n * pow(x0, n - 1);
        ck_assert_int_eq(power_and_grad(NULL, in, 2, NULL, 0, eager), 2);
        ck_assert_int_eq(gb_function_call(f, in, 2, NULL, 0, traced), 2);
        ck_assert_msg(gb_ok(), "%s", gb_error_string());
        ck_assert_double_eq_tol(gb_item(eager[0]), want, 1e-12);
        ck_assert_double_eq_tol(gb_item(traced[0]), want, 1e-12);
        ck_assert_double_eq_tol(gb_item(eager[1]), dwant, 1e-12);
        ck_assert_double_eq_tol(gb_item(traced[1]), dwant, 1e-12);
        /* A tape outside the call: the backward graph re-runs the loop. */
        gb_tape *tape = gb_tape_begin();
        gb_tape_watch(tape, in[0]);
        gb_tensor *y;
        ck_assert_int_eq(gb_function_call(g, in, 2, NULL, 0, &y), 1);
        gb_tape_end(tape);
        gb_tensor *dy;
        gb_source src = GB_SRC(in[0]);
        ck_assert(gb_tape_gradient_ex(tape, &y, 1, NULL, &src, 1, GB_UNCONNECTED_ZERO, &dy));
        ck_assert_double_eq_tol(gb_item(y), want, 1e-12);
        ck_assert_double_eq_tol(gb_item(dy), dwant, 1e-12);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1); /* n is a tensor: one trace */
    gb_function_free(f);
    gb_function_free(g);
}
END_TEST

/* ---- cond's gradient ------------------------------------------------------------------------- */

/* in: x, pred; out: cond(pred, x^3, sin x) and its derivative. */
static int cond_and_grad(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    if (gb_cond(in[1], cf_cube, cf_sine, in, 1, NULL, out) != 1) return -1;
    gb_tape_end(tape);
    out[1] = gb_tape_gradient(tape, out[0], in[0]);
    return out[1] ? 2 : -1;
}

START_TEST(test_cond_gradient_follows_the_branch_taken) {
    gb_function *f = gb_function_new("cond_and_grad", cond_and_grad, NULL);
    const double x0 = 0.7;
    for (int taken = 0; taken < 2; taken++) {
        gb_tensor *in[2] = {gb_scalar(GB_F64, x0), gb_scalar(GB_BOOL, taken)}, *eager[2],
                  *traced[2];
        double y = taken ? x0 * x0 * x0 : sin(x0), dy = taken ? 3 * x0 * x0 : cos(x0);
        ck_assert_int_eq(cond_and_grad(NULL, in, 2, NULL, 0, eager), 2);
        ck_assert_int_eq(gb_function_call(f, in, 2, NULL, 0, traced), 2);
        ck_assert_msg(gb_ok(), "%s", gb_error_string());
        ASSERT_VALUES(eager[0], 1e-12, y);
        ASSERT_VALUES(eager[1], 1e-12, dy);
        assert_bitwise(eager[0], traced[0], "cond value");
        assert_bitwise(eager[1], traced[1], "cond gradient");
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    const char *g = gb_function_graph_text(f);
    ck_assert_msg(strstr(g, "cond = If(") && strstr(g, "gradients/cond_grad/cond = If("), "%s", g);
    gb_function_free(f);
}
END_TEST

/* ---- an RNN over time, writing a tensor array ------------------------------------------------ */

enum { T = 4, B = 2, D = 3, H = 5 };

static int t_less_T(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_less(v[0], gb_scalar(GB_I64, T));
    return 1;
}

/* v: t, h, ta, xs, W, U. h = tanh(x_t W + h U); ta[t] = h. */
static int rnn_step(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    gb_tensor *x_t = gb_tensor_array_read(v[3], v[0]);
    gb_tensor *h = gb_tanh(gb_add(gb_matmul(x_t, v[4]), gb_matmul(v[1], v[5])));
    out[0] = gb_add_scalar(v[0], 1);
    out[1] = h;
    out[2] = gb_tensor_array_write(v[2], v[0], h);
    for (int k = 3; k < 6; k++) out[k] = v[k];
    return 6;
}

/* xs [T,B,D], W [D,H], U [H,H] -> every h, stacked [T,B,H]. */
static gb_tensor *rnn(gb_tensor *const *xs_w_u) {
    gb_tensor *v[6] = {gb_scalar(GB_I64, 0), gb_zeros(GB_F64, GB_SHAPE(B, H)),
                       gb_tensor_array_new(GB_F64, T, GB_SHAPE(B, H)), xs_w_u[0], xs_w_u[1],
                       xs_w_u[2]};
    gb_while_options o = {.names = (const char *[]){"t", "h", "hs", "xs", "W", "U"}, .nnames = 6};
    return gb_while_loop(t_less_T, rnn_step, v, 6, &o, v) == 6 ? gb_tensor_array_stack(v[2]) : NULL;
}

static gb_tensor *rnn_eager(gb_tensor *const *xs, int n, void *user) {
    (void)n, (void)user;
    return rnn(xs);
}

static int rnn_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = rnn(in);
    return out[0] ? 1 : -1;
}

/* in: xs, W, U, w; out: dL/dxs, dL/dW, dL/dU for L = sum(w * rnn). */
static int rnn_grads(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    for (int i = 0; i < 3; i++) gb_tape_watch(tape, in[i]);
    gb_tensor *loss = gb_reduce_sum(gb_mul(rnn(in), in[3]), GB_ALL_AXES, false);
    gb_tape_end(tape);
    return loss && gb_tape_gradients(tape, loss, in, 3, out) ? 3 : -1;
}

static gb_function *rnn_traced;
static gb_tensor *rnn_call(gb_tensor *const *xs, int n, void *user) {
    (void)user;
    gb_tensor *y;
    return gb_function_call(rnn_traced, xs, n, NULL, 0, &y) == 1 ? y : NULL;
}

START_TEST(test_rnn_gradient_finite_differences) {
    gb_tensor *in[4] = {GC_INPUT(-1, 1, 1, T, B, D), GC_INPUT(-0.8, 0.8, 2, D, H),
                        GC_INPUT(-0.8, 0.8, 3, H, H), NULL};
    GC_ASSERT(rnn_eager, in, 3, NULL);                   /* eager: a C loop on a tape */
    rnn_traced = gb_function_new("rnn", rnn_fn, NULL);
    GC_ASSERT(rnn_call, in, 3, NULL);                    /* a tape outside the call */
    in[3] = gc_weights(rnn_eager(in, 3, NULL));
    gb_function *f = gb_function_new("rnn_grads", rnn_grads, NULL);
    gb_tensor *grads[3];
    ck_assert_int_eq(gb_function_call(f, in, 4, NULL, 0, grads), 3); /* the tape inside */
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
    char msg[256];
    ck_assert_msg(gc_compare(rnn_call, in, 3, NULL, in[3], grads, msg, sizeof msg), "%s", msg);
    /* The traced forward is the eager one, bit for bit. */
    assert_bitwise(rnn_eager(in, 3, NULL), rnn_call(in, 3, NULL), "rnn");
    const char *g = gb_function_graph_text(f);
    ck_assert_msg(strstr(g, "while = While(") && strstr(g, "gradients/while_grad/while = While("),
                  "%s", g);
    gb_function_free(f);
    gb_function_free(rnn_traced);
}
END_TEST

/* ---- tensor arrays ---------------------------------------------------------------------------- */

START_TEST(test_tensor_array_index_out_of_range) {
    gb_tensor *ta = gb_tensor_array_new(GB_F64, 3, GB_SHAPE(2));
    ck_assert_int_eq(gb_tensor_array_size(ta), 3);
    gb_tensor *v = gb_from_f64((const double[]){1, 2}, GB_SHAPE(2));
    ta = gb_tensor_array_write(ta, gb_scalar(GB_I64, 2), v);
    ASSERT_VALUES(gb_tensor_array_read(ta, gb_scalar(GB_I32, 2)), 0, 1, 2);
    ASSERT_VALUES(gb_tensor_array_stack(ta), 0, 0, 0, 0, 0, 1, 2);
    expect_error(gb_tensor_array_read(ta, gb_scalar(GB_I64, 3)), GB_ERR_VALUE,
                 "TensorArrayRead: index 3 is out of range for a tensor array of size 3");
    expect_error(gb_tensor_array_write(ta, gb_scalar(GB_I64, -1), v), GB_ERR_VALUE,
                 "index -1 is out of range");
    expect_error(gb_tensor_array_write(ta, gb_scalar(GB_I64, 0), gb_ones(GB_F64, GB_SHAPE(3))),
                 GB_ERR_SHAPE, "the value written is float64 [3] but the array's elements are "
                 "float64 [2]");
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------------ */

static int scalar_f64(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)in, (void)n;
    out[0] = gb_scalar(GB_F64, 1);
    return 1;
}
static int scalar_i64(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)in, (void)n;
    out[0] = gb_scalar(GB_I64, 1);
    return 1;
}
static int vector2(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)in, (void)n;
    out[0] = gb_zeros(GB_F64, GB_SHAPE(2));
    return 1;
}
static int vector3(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)in, (void)n;
    out[0] = gb_zeros(GB_F64, GB_SHAPE(3));
    return 1;
}

typedef struct branches {
    gb_branch_fn t, f;
    const gb_cond_options *o;
} branches;

static int cond_of(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    const branches *b = user;
    return gb_cond(in[0], b->t, b->f, NULL, 0, b->o, out);
}

/* Traces cond(pred, t, f) in a function named "pick"; returns its result. */
static int call_cond(branches *b, bool pred, gb_tensor **out) {
    gb_function *f = gb_function_new("pick", cond_of, &(gb_function_options){.user = b});
    gb_tensor *p = gb_scalar(GB_BOOL, pred);
    int n = gb_function_call(f, &p, 1, NULL, 0, out);
    gb_function_free(f);
    return n;
}

START_TEST(test_mismatched_branch_outputs_are_errors) {
    gb_tensor *out[1];
    branches dtype = {scalar_f64, scalar_i64, NULL};
    ck_assert_int_eq(call_cond(&dtype, true, out), -1);
    assert_error(GB_ERR_DTYPE, "gb_cond 'cond' in function 'pick': output 0 is float64 [] in "
                               "the true branch but "
                               "int64 [] in the false branch; the branches must agree in dtype");
    branches rank = {scalar_f64, vector2, NULL};
    ck_assert_int_eq(call_cond(&rank, true, out), -1);
    assert_error(GB_ERR_SHAPE, "output 0 is float64 [] in the true branch but float64 [2] in the "
                               "false branch; the branches must agree in rank");
    /* Dims that differ become -1; a declared shape holds them. */
    branches dims = {vector2, vector3, NULL};
    ck_assert_int_eq(call_cond(&dims, false, out), 1);
    ck_assert_int_eq(gb_dim(out[0], 0), 3);
    gb_cond_options declared = {.output_shapes = &GB_INVARIANT(2), .noutput_shapes = 1};
    dims.o = &declared;
    ck_assert_int_eq(call_cond(&dims, true, out), -1);
    assert_error(GB_ERR_SHAPE, "gb_cond 'cond' in function 'pick': output 0 of the false branch is float64 [3], "
                               "which does not fit its declared shape [2] (dim 0)");
    gb_tensor *p = gb_scalar(GB_BOOL, false); /* eagerly: the branch taken is checked */
    ck_assert_int_eq(gb_cond(p, vector2, vector3, NULL, 0, &declared, out), -1);
    assert_error(GB_ERR_SHAPE, "output 0 of the false branch is float64 [3], which does not "
                               "fit its declared shape [2] (dim 0)");
    ck_assert_int_eq(gb_cond(gb_scalar(GB_F64, 1), vector2, vector2, NULL, 0, NULL, out), -1);
    assert_error(GB_ERR_DTYPE, "gb_cond 'cond': the predicate must be a bool scalar, got "
                               "float64 []");
}
END_TEST

static int always(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_greater_equal(gb_reduce_sum(v[0], GB_ALL_AXES, false), gb_scalar(GB_F64, 0));
    return 1;
}

static int grow(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_concat((gb_tensor *[]){v[0], gb_ones(GB_F64, GB_SHAPE(1))}, 2, 0);
    return 1;
}

static int loop_of(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    return gb_while_loop(always, grow, in, 1, user, out);
}

START_TEST(test_loop_variable_changing_shape_is_an_error) {
    gb_tensor *x = gb_ones(GB_F64, GB_SHAPE(2)), *out;
    gb_while_options o = {.max_iterations = 3, .names = (const char *[]){"xs"}, .nnames = 1};
    ck_assert_int_eq(gb_while_loop(always, grow, &x, 1, &o, &out), -1);
    assert_error(GB_ERR_SHAPE, "gb_while_loop 'while': loop variable 0 ('xs') is float64 [2] on "
                               "entry but float64 [3] after iteration 1 (dim 0 changed; give it a "
                               "shape invariant with -1 there)");
    gb_function *f = gb_function_new("grower", loop_of, &(gb_function_options){.user = &o});
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &out), -1);
    assert_error(GB_ERR_SHAPE, "gb_while_loop 'while' in function 'grower': loop variable 0 "
                               "('xs') is float64 [2] on entry but float64 [3] after the body (as "
                               "traced)");
    gb_function_free(f);
    /* With an invariant it may grow: then max_iterations stops it. */
    o.shape_invariants = &GB_INVARIANT(-1);
    o.nshape_invariants = 1;
    ck_assert_int_eq(gb_while_loop(always, grow, &x, 1, &o, &out), -1);
    assert_error(GB_ERR_VALUE, "gb_while_loop 'while': its cond still holds after max_iterations "
                               "= 3 iterations");
    f = gb_function_new("grower", loop_of, &(gb_function_options){.user = &o});
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &out), -1);
    const gb_error *e = check_error(GB_ERR_VALUE, "While: the cond of 'while' in function "
                                                  "'grower' still holds after max_iterations = 3 "
                                                  "iterations");
    ck_assert_str_eq(e->op_name, "while");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

static int less_than_5(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_less(gb_reduce_sum(v[0], GB_ALL_AXES, false), gb_scalar(GB_F64, 5));
    return 1;
}

static int grow_until_5(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_while_options o = {.shape_invariants = &GB_INVARIANT(-1), .nshape_invariants = 1};
    return gb_while_loop(less_than_5, grow, in, 1, &o, out);
}

START_TEST(test_loop_variable_with_invariant_grows) {
    gb_function *f = gb_function_new("grow", grow_until_5, NULL);
    for (int n = 0; n <= 6; n += 2) {
        gb_tensor *x = gb_ones(GB_F64, 1, (int64_t[]){n}), *eager, *traced;
        ck_assert_int_eq(grow_until_5(NULL, &x, 1, NULL, 0, &eager), 1);
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &traced), 1);
        ck_assert_msg(gb_ok(), "%s", gb_error_string());
        ck_assert_int_eq(gb_dim(eager, 0), n < 5 ? 5 : n);
        assert_bitwise(eager, traced, "grown");
    }
    ck_assert_msg(strstr(gb_function_graph_text(f), "float64[-1]"), "%s", gb_function_graph_text(f));
    gb_function_free(f);
}
END_TEST

static gb_tensor *outer_tensor;
static int uses_outer(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)in, (void)n;
    out[0] = gb_add(outer_tensor, outer_tensor);
    return 1;
}

static int cond_with_capture(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                             int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    outer_tensor = gb_mul(in[0], in[0]);
    return gb_cond(gb_scalar(GB_BOOL, true), uses_outer, uses_outer, NULL, 0, NULL, out);
}

START_TEST(test_tensor_of_the_enclosing_trace_in_a_branch_is_an_error) {
    gb_function *f = gb_function_new("capture", cond_with_capture, NULL);
    gb_tensor *x = gb_scalar(GB_F64, 2), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    const gb_error *e = check_error(GB_ERR_STATE, "input 0 is a tensor of the enclosing trace, "
                                                  "used inside 'cond/true'; a branch, loop cond "
                                                  "or loop body sees only its inputs");
    ck_assert_str_eq(e->op_name, "cond/true/Add");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

/* ---- names and numerics ------------------------------------------------------------------------ */

static int take_log(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_log(in[0]);
    return 1;
}

static int identity(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = in[0];
    return 1;
}

static int scoped_cond(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("model");
    gb_tensor *p = gb_greater(gb_reduce_sum(in[0], GB_ALL_AXES, false), gb_scalar(GB_F64, -100));
    int n = gb_cond(p, take_log, identity, in, 1, NULL, out);
    gb_name_scope_pop();
    return n;
}

START_TEST(test_branch_nodes_and_alerts_carry_the_branch_scope) {
    gb_function *f = gb_function_new("scoped", scoped_cond, NULL);
    gb_tensor *x = gb_from_f64((const double[]){1, -1}, GB_SHAPE(2)), *y;
    gb_enable_check_numerics();
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    gb_disable_check_numerics();
    const gb_error *e = check_error(GB_ERR_NUMERIC, "in function 'scoped'");
    ck_assert_str_eq(e->op_name, "model/cond/true/Log");
    gb_clear_error();
    ck_assert_msg(strstr(gb_function_graph_text(f), "model/cond = If("), "%s",
                  gb_function_graph_text(f));
    /* Eagerly, the ops run in the branch's name scope too. */
    gb_enable_check_numerics();
    ck_assert_int_eq(scoped_cond(NULL, &x, 1, NULL, 0, &y), -1);
    gb_disable_check_numerics();
    e = check_error(GB_ERR_NUMERIC, "Log");
    ck_assert_str_eq(e->op_name, "model/cond/true/Log");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

static int i_below_3(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_less(v[0], gb_scalar(GB_I64, 3));
    return 1;
}

static int log_step(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_add_scalar(v[0], 1);
    out[1] = gb_log(v[1]); /* 0.5, then log(0.5) < 0: NaN on the second iteration */
    return 2;
}

static int logs(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *v[2] = {gb_scalar(GB_I64, 0), in[0]};
    gb_while_options o = {.name = "repeat"};
    if (gb_while_loop(i_below_3, log_step, v, 2, &o, v) != 2) return -1;
    out[0] = v[1];
    return 1;
}

START_TEST(test_alerts_in_a_loop_body_name_it) {
    gb_function *f = gb_function_new("logs", logs, NULL);
    gb_tensor *x = gb_scalar(GB_F64, 0.5), *y;
    gb_enable_check_numerics();
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    gb_disable_check_numerics();
    const gb_error *e = check_error(GB_ERR_NUMERIC, "in function 'logs'");
    ck_assert_str_eq(e->op_name, "repeat/body/Log");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

static gb_variable *scale;
static int scaled(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_mul(in[0], gb_variable_value(scale));
    return 1;
}

static int cond_reading_a_variable(void *user, gb_tensor *const *in, int nin,
                                   const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    int n = gb_cond(gb_scalar(GB_BOOL, true), scaled, scaled, in, 1, NULL, out);
    gb_tape_end(tape);
    return n;
}

static int cond_reading_a_variable_untaped(void *user, gb_tensor *const *in, int nin,
                                           const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    return gb_cond(gb_scalar(GB_BOOL, true), scaled, scaled, in, 1, NULL, out);
}

/* Its gradient could not reach the variable through the If node: an error
 * saying what to do, not a silently missing gradient. */
START_TEST(test_trainable_variable_in_a_branch_under_a_tape_is_an_error) {
    scale = gb_variable_new("scale", gb_scalar(GB_F64, 2), true);
    gb_function *f = gb_function_new("reads_scale", cond_reading_a_variable, NULL);
    gb_tensor *x = gb_scalar(GB_F64, 3), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    assert_error(GB_ERR_STATE, "'cond/true' reads trainable variable 'scale' while a "
                               "GradientTape records");
    gb_function_free(f);
    /* Without a tape it runs, and the function captures the variable. */
    f = gb_function_new("reads_scale", cond_reading_a_variable_untaped, NULL);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
    ASSERT_VALUES(y, 0, 6);
    ck_assert_msg(strstr(gb_function_concrete_signatures(f), "captures scale"), "%s",
                  gb_function_concrete_signatures(f));
    gb_function_free(f);
    gb_variable_free(scale);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_control_flow");
    TCase *tc = tcase_create("control_flow");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_collatz_steps_eager_and_traced);
    tcase_add_test(tc, test_power_gradient_eager_and_traced);
    tcase_add_test(tc, test_cond_gradient_follows_the_branch_taken);
    tcase_add_test(tc, test_rnn_gradient_finite_differences);
    tcase_add_test(tc, test_tensor_array_index_out_of_range);
    tcase_add_test(tc, test_mismatched_branch_outputs_are_errors);
    tcase_add_test(tc, test_loop_variable_changing_shape_is_an_error);
    tcase_add_test(tc, test_loop_variable_with_invariant_grows);
    tcase_add_test(tc, test_tensor_of_the_enclosing_trace_in_a_branch_is_an_error);
    tcase_add_test(tc, test_branch_nodes_and_alerts_carry_the_branch_scope);
    tcase_add_test(tc, test_alerts_in_a_loop_body_name_it);
    tcase_add_test(tc, test_trainable_variable_in_a_branch_under_a_tape_is_an_error);
    tcase_add_test(tc, test_loop_over_empty_tensors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
