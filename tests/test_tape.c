/* test_tape.c — every GradientTape rule, with exact values or exact errors.
 *
 * Mirrors tf.GradientTape's documented behaviour: watching, automatic
 * watching of trainable variables, persistence, several and non-scalar
 * targets, output gradients, unconnected sources, integer sources,
 * Jacobians, nested tapes, stop_recording / stop_gradient, custom and
 * registered gradients, ops without a gradient, and tapes outliving the
 * scopes of what they recorded.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

#define F64(...) gb_from_f64((double[]){__VA_ARGS__}, GB_SHAPE((int64_t)(sizeof((double[]){__VA_ARGS__}) / sizeof(double))))

static void begin(void) { gb_scope_begin(); }

static void end(void) {
    ck_assert_msg(gb_ok(), "unexpected error: %s", gb_error_string());
    gb_scope_end();
}

/* ---- basics ----------------------------------------------------------------------- */

START_TEST(test_square_gradient) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 0, 6);
    end();
}
END_TEST

START_TEST(test_x_pow_x_at_3) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_pow(x, x);
    gb_tape_end(tape);
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 1e-9, 27 * (log(3.0) + 1)); /* 56.6625 */
    end();
}
END_TEST

START_TEST(test_unwatched_tensor_is_unconnected) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    ck_assert_ptr_null(gb_tape_gradient(tape, y, x));
    ck_assert(gb_ok()); /* NONE is not an error */
    gb_source s = GB_SRC(x);
    gb_tensor *g;
    ck_assert(gb_tape_gradient_ex(tape, &y, 1, NULL, &s, 1, GB_UNCONNECTED_ZERO, &g));
    ASSERT_VALUES(g, 0, 0);
    ck_assert_int_eq(gb_rank(g), 0);
    end();
}
END_TEST

START_TEST(test_unconnected_zero_has_source_shape) {
    begin();
    gb_tensor *x = F64(1, 2, 3);
    gb_tensor *z = F64(4, 5);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, z);
    gb_tensor *y = gb_reduce_sum(gb_mul(x, x), GB_ALL_AXES, false);
    gb_tape_end(tape);
    gb_source src[2] = {GB_SRC(x), GB_SRC(z)};
    gb_tensor *g[2];
    ck_assert(gb_tape_gradient_ex(tape, &y, 1, NULL, src, 2, GB_UNCONNECTED_ZERO, g));
    ASSERT_VALUES(g[0], 0, 2, 4, 6);
    ASSERT_VALUES(g[1], 0, 0, 0);
    end();
}
END_TEST

START_TEST(test_non_persistent_refuses_second_call) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 2);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    ck_assert_ptr_nonnull(gb_tape_gradient(tape, y, x));
    ck_assert_ptr_null(gb_tape_gradient(tape, y, x));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message,
                                 "a non-persistent GradientTape can compute gradients only once"));
    gb_clear_error();
    gb_scope_end();
}
END_TEST

START_TEST(test_persistent_allows_many_calls) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tensor *z = gb_mul(y, y);
    gb_tape_end(tape);
    ASSERT_VALUES(gb_tape_gradient(tape, z, x), 1e-9, 108); /* 4x^3 */
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 1e-9, 6);
    ASSERT_VALUES(gb_tape_gradient(tape, z, y), 1e-9, 18);  /* intermediate source */
    end();
}
END_TEST

START_TEST(test_several_and_non_scalar_targets_sum) {
    begin();
    gb_tensor *x = F64(1, 2);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y1 = gb_mul(x, x);             /* non-scalar: gradient of its sum */
    gb_tensor *y2 = gb_mul(x, F64(10, 20));
    gb_tape_end(tape);
    ASSERT_VALUES(gb_tape_gradient(tape, y1, x), 1e-12, 2, 4);
    gb_tensor *targets[2] = {y1, y2};
    gb_source s = GB_SRC(x);
    gb_tensor *g;
    ck_assert(gb_tape_gradient_ex(tape, targets, 2, NULL, &s, 1, GB_UNCONNECTED_NONE, &g));
    ASSERT_VALUES(g, 1e-12, 12, 24);
    gb_tensor *dys[2] = {F64(1, 0), F64(0, 1)}; /* output gradients */
    ck_assert(gb_tape_gradient_ex(tape, targets, 2, dys, &s, 1, GB_UNCONNECTED_NONE, &g));
    ASSERT_VALUES(g, 1e-12, 2, 20);
    gb_tensor *bad[2] = {F64(1), F64(0, 1)};
    ck_assert(!gb_tape_gradient_ex(tape, targets, 2, bad, &s, 1, GB_UNCONNECTED_NONE, &g));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "output gradient 0"));
    gb_clear_error();
    end();
}
END_TEST

START_TEST(test_integer_source_warns_and_gives_null) {
    begin();
    gb_tensor *i = gb_tensor_from(GB_I32, (int32_t[]){3}, GB_SHAPE(1));
    gb_tensor *x = F64(2);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, i);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, gb_cast(i, GB_F64));
    gb_tape_end(tape);
    int warnings = gb_warning_count();
    gb_tensor *srcs[2] = {i, x}, *g[2];
    ck_assert(gb_tape_gradients(tape, y, srcs, 2, g));
    ck_assert_ptr_null(g[0]);
    ASSERT_VALUES(g[1], 0, 3);
    ck_assert_int_eq(gb_warning_count(), warnings + 1);
    ck_assert_ptr_nonnull(strstr(gb_last_warning(), "must be floating"));
    ck_assert_ptr_nonnull(strstr(gb_last_warning(), "int32"));
    end();
}
END_TEST

/* ---- variables ---------------------------------------------------------------------- */

START_TEST(test_trainable_variables_are_watched_automatically) {
    begin();
    gb_variable *w = gb_variable_new("w", F64(2), true);
    gb_variable *frozen = gb_variable_new("frozen", F64(5), false);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tensor *y = gb_mul(gb_mul(gb_variable_value(w), gb_variable_value(w)),
                          gb_variable_value(frozen));
    gb_tape_end(tape);
    gb_variable *vars[4];
    ck_assert_int_eq(gb_tape_watched_variables(tape, vars, 4), 1);
    ck_assert_ptr_eq(vars[0], w);
    gb_variable *both[2] = {w, frozen};
    gb_tensor *g[2];
    ck_assert(gb_tape_gradient_vars(tape, y, both, 2, g));
    ASSERT_VALUES(g[0], 1e-12, 20); /* two reads of w: gradients summed */
    ck_assert_ptr_null(g[1]);
    gb_variable_free(w);
    gb_variable_free(frozen);
    end();
}
END_TEST

START_TEST(test_watch_accessed_variables_false) {
    begin();
    gb_variable *a = gb_variable_new("a", F64(3), true);
    gb_variable *b = gb_variable_new("b", F64(4), true);
    gb_tape *tape = gb_tape_begin_ex(true, false);
    gb_tape_watch_variable(tape, b);
    gb_tensor *y = gb_mul(gb_variable_value(a), gb_variable_value(b));
    gb_tape_end(tape);
    gb_variable *vars[4];
    ck_assert_int_eq(gb_tape_watched_variables(tape, vars, 4), 1);
    ck_assert_ptr_eq(vars[0], b);
    gb_variable *ab[2] = {a, b};
    gb_tensor *g[2];
    ck_assert(gb_tape_gradient_vars(tape, y, ab, 2, g));
    ck_assert_ptr_null(g[0]);
    ASSERT_VALUES(g[1], 0, 3);
    gb_variable_free(a);
    gb_variable_free(b);
    end();
}
END_TEST

START_TEST(test_assign_after_read_keeps_recorded_value) {
    begin();
    gb_variable *w = gb_variable_new("w", F64(3), true);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *y = gb_mul(gb_variable_value(w), gb_variable_value(w));
    gb_tape_end(tape);
    gb_variable_assign(w, F64(100)); /* must not change what the tape saw */
    gb_tensor *g;
    ck_assert(gb_tape_gradient_vars(tape, y, &w, 1, &g));
    ASSERT_VALUES(g, 0, 6);
    gb_variable_free(w);
    end();
}
END_TEST

/* ---- Jacobians ------------------------------------------------------------------------ */

START_TEST(test_jacobian_of_square) {
    begin();
    gb_tensor *x = F64(1, 2);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    gb_tensor *j = gb_tape_jacobian(tape, y, x, GB_UNCONNECTED_NONE);
    ck_assert_int_eq(gb_rank(j), 2);
    ck_assert_int_eq(gb_dim(j, 0), 2);
    ck_assert_int_eq(gb_dim(j, 1), 2);
    ASSERT_VALUES(j, 0, 2, 0, 0, 4);
    end();
}
END_TEST

START_TEST(test_jacobian_shapes_and_unconnected) {
    begin();
    gb_tensor *x = gb_from_f64((double[]){1, 2, 3, 4, 5, 6}, GB_SHAPE(2, 3));
    gb_tensor *w = gb_from_f64((double[]){1, 0, 2, 1, 0, 3}, GB_SHAPE(3, 2));
    gb_tensor *other = F64(1);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, other);
    gb_tensor *y = gb_matmul(x, w); /* [2,2] */
    gb_tape_end(tape);
    gb_tensor *j = gb_tape_jacobian(tape, y, x, GB_UNCONNECTED_NONE);
    ck_assert_int_eq(gb_rank(j), 4);
    /* dy[0,1]/dx[0,k] = w[k,1] = 0, 1, 3; dy[0,1]/dx[1,k] = 0 */
    const double w_col1[3] = {0, 1, 3};
    for (int k = 0; k < 3; k++) {
        ck_assert_double_eq(gb_get(j, 1 * 6 + 0 * 3 + k), w_col1[k]);
        ck_assert_double_eq(gb_get(j, 1 * 6 + 1 * 3 + k), 0);
    }
    ck_assert_ptr_null(gb_tape_jacobian(tape, y, other, GB_UNCONNECTED_NONE));
    gb_tensor *z = gb_tape_jacobian(tape, y, other, GB_UNCONNECTED_ZERO);
    ck_assert_int_eq(gb_rank(z), 3);
    ck_assert_int_eq(gb_size(z), 4);
    ASSERT_VALUES(z, 0, 0, 0, 0, 0);
    end();
}
END_TEST

START_TEST(test_batch_jacobian) {
    begin();
    gb_tensor *x = gb_from_f64((double[]){1, 2, 3, 4, 5, 6}, GB_SHAPE(2, 3));
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    gb_tensor *j = gb_tape_batch_jacobian(tape, y, x, GB_UNCONNECTED_NONE);
    ck_assert_int_eq(gb_rank(j), 3);
    ck_assert_int_eq(gb_dim(j, 0), 2);
    ck_assert_int_eq(gb_dim(j, 1), 3);
    ck_assert_int_eq(gb_dim(j, 2), 3);
    ASSERT_VALUES(j, 0, 2, 0, 0, 0, 4, 0, 0, 0, 6, 8, 0, 0, 0, 10, 0, 0, 0, 12);
    gb_tensor *x3 = gb_zeros(GB_F64, GB_SHAPE(3, 4));
    gb_tape_watch(tape, x3);
    ck_assert_ptr_null(gb_tape_batch_jacobian(tape, y, x3, GB_UNCONNECTED_NONE));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_str_eq(gb_last_error()->message,
                     "batch_jacobian: need first dimension of target shape [2,3] and source "
                     "shape [3,4] to match");
    gb_clear_error();
    end();
}
END_TEST

/* ---- nesting, stopping, custom gradients -------------------------------------------------- */

START_TEST(test_second_derivative_with_nested_tapes) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 2);
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, x);
    gb_tape *inner = gb_tape_begin();
    gb_tape_watch(inner, x);
    gb_tensor *y = gb_mul(gb_mul(x, x), x); /* x^3 */
    gb_tape_end(inner);
    gb_tensor *dy = gb_tape_gradient(inner, y, x); /* 3x^2 = 12, recorded by outer */
    gb_tape_end(outer);
    ASSERT_VALUES(dy, 1e-12, 12);
    ASSERT_VALUES(gb_tape_gradient(outer, dy, x), 1e-12, 12); /* 6x */
    end();
}
END_TEST

START_TEST(test_stop_recording) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_stop_recording(tape);
    gb_tensor *hidden = gb_mul(y, x);
    gb_tape_resume_recording(tape);
    gb_tensor *z = gb_mul(y, x);
    gb_tape_end(tape);
    ck_assert_ptr_null(gb_tape_gradient(tape, hidden, x));
    ASSERT_VALUES(gb_tape_gradient(tape, z, x), 1e-12, 27);
    end();
}
END_TEST

START_TEST(test_stop_gradient) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 3);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, gb_stop_gradient(x)); /* d/dx = stop(x) = 3 */
    gb_tape_end(tape);
    ASSERT_VALUES(y, 0, 9);
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 0, 3);
    end();
}
END_TEST

/* tf.custom_gradient's log1pexp: a stable gradient where autodiff gives NaN. */
static bool log1pexp_forward(gb_tensor *const *in, int nin, gb_tensor **out, int nout, void *u) {
    (void)nin, (void)nout, (void)u;
    out[0] = gb_log(gb_add_scalar(gb_exp(in[0]), 1.0));
    return out[0] != NULL;
}

static bool log1pexp_backward(gb_tensor *const *in, int nin, gb_tensor *const *out,
                              gb_tensor *const *dy, int nout, gb_tensor **dx, void *u) {
    (void)nin, (void)out, (void)nout, (void)u;
    /* dy * (1 - 1 / (1 + e^x)) */
    gb_tensor *s = gb_sub(gb_ones_like(in[0]), gb_reciprocal(gb_add_scalar(gb_exp(in[0]), 1.0)));
    dx[0] = gb_mul(dy[0], s);
    return dx[0] != NULL;
}

START_TEST(test_custom_gradient) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 100);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y;
    ck_assert(gb_custom_gradient("log1pexp", log1pexp_forward, log1pexp_backward, NULL, &x, 1,
                                 &y, 1));
    gb_tape_end(tape);
    ASSERT_VALUES(y, 1e-9, 100);
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 0, 1.0); /* plain autodiff: inf/inf = NaN */
    end();
}
END_TEST

static bool doubled_sin_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = gb_mul_scalar(ctx->dys[0], 2.0);
    return dx[0] != NULL;
}

START_TEST(test_register_gradient) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 0.5);
    ck_assert(gb_register_gradient("Sin", doubled_sin_grad));
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_sin(x);
    gb_tape_end(tape);
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 0, 2);
    ck_assert(gb_register_gradient("Sin", NULL)); /* back to the built-in cos */
    ASSERT_VALUES(gb_tape_gradient(tape, y, x), 1e-12, cos(0.5));
    ck_assert(!gb_register_gradient("NoSuchOp", doubled_sin_grad));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "no op type named 'NoSuchOp'"));
    gb_clear_error();
    end();
}
END_TEST

START_TEST(test_op_without_gradient_names_op_and_fix) {
    begin();
    /* MaxPoolGrad has no gradient: a second derivative through max pooling. */
    gb_tensor *x = gb_random_uniform(GB_F64, GB_SHAPE(1, 4, 4, 1), -1, 1, 7);
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, x);
    gb_tape *inner = gb_tape_begin();
    gb_tape_watch(inner, x);
    gb_name_scope_push("pool");
    gb_tensor *y = gb_max_pool2d(x, GB_LIST(2, 2), NULL, 0, GB_PADDING_VALID);
    gb_tape_end(inner);
    gb_tensor *dx = gb_tape_gradient(inner, y, x);
    gb_name_scope_pop();
    gb_tensor *z = gb_mul(dx, x);
    gb_tape_end(outer);
    ck_assert_ptr_nonnull(dx);
    ck_assert_ptr_null(gb_tape_gradient(outer, z, x));
    const gb_error *e = gb_last_error();
    ck_assert_int_eq(e->code, GB_ERR_NO_GRADIENT);
    ck_assert_str_eq(e->op_type, "MaxPoolGrad");
    ck_assert_msg(strstr(e->message, "op 'gradients/pool/MaxPool_grad/MaxPoolGrad'"), "%s", e->message);
    ck_assert_ptr_nonnull(strstr(e->message, "gb_stop_gradient()"));
    ck_assert_ptr_nonnull(strstr(e->message, "gb_register_gradient(\"MaxPoolGrad\""));
    gb_clear_error();
    gb_scope_end();
}
END_TEST

START_TEST(test_tape_expires_with_recorded_scope) {
    begin();
    gb_tensor *x = gb_scalar(GB_F64, 2);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y;
    gb_scope_begin();
    y = gb_keep(gb_mul(x, x));
    gb_scope_end(); /* the recorded product's inputs lived here */
    gb_tape_end(tape);
    ck_assert_ptr_null(gb_tape_gradient(tape, y, x));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "scope"));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "has ended"));
    gb_clear_error();
    gb_scope_end();
}
END_TEST

START_TEST(test_null_arguments) {
    begin();
    ck_assert_ptr_null(gb_tape_gradient(NULL, NULL, NULL));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    gb_clear_error();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *x = gb_scalar(GB_F64, 1);
    gb_tape_watch(tape, x);
    gb_tape_end(tape);
    ck_assert_ptr_null(gb_tape_gradient(tape, NULL, x));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "target 0 is NULL"));
    gb_clear_error();
    end();
}
END_TEST

/* A whole tiny model checked by finite differences through the tape. */
static gb_tensor *mlp(gb_tensor *const *xs, int n, void *u) {
    (void)n, (void)u;
    gb_tensor *h = gb_tanh(gb_add(gb_matmul(xs[0], xs[1]), xs[2]));
    return gb_reduce_logsumexp(h, GB_AXES(1), false);
}

START_TEST(test_gradcheck_small_model) {
    begin();
    gb_tensor *xs[3] = {GC_INPUT(-1, 1, 1, 3, 4), GC_INPUT(-1, 1, 2, 4, 5), GC_INPUT(-1, 1, 3, 5)};
    GC_ASSERT(mlp, xs, 3, NULL);
    end();
}
END_TEST

static Suite *tape_suite(void) {
    Suite *s = suite_create("tape");
    TCase *t = tcase_create("basics");
    tcase_add_test(t, test_square_gradient);
    tcase_add_test(t, test_x_pow_x_at_3);
    tcase_add_test(t, test_unwatched_tensor_is_unconnected);
    tcase_add_test(t, test_unconnected_zero_has_source_shape);
    tcase_add_test(t, test_non_persistent_refuses_second_call);
    tcase_add_test(t, test_persistent_allows_many_calls);
    tcase_add_test(t, test_several_and_non_scalar_targets_sum);
    tcase_add_test(t, test_integer_source_warns_and_gives_null);
    tcase_add_test(t, test_null_arguments);
    suite_add_tcase(s, t);
    t = tcase_create("variables");
    tcase_add_test(t, test_trainable_variables_are_watched_automatically);
    tcase_add_test(t, test_watch_accessed_variables_false);
    tcase_add_test(t, test_assign_after_read_keeps_recorded_value);
    suite_add_tcase(s, t);
    t = tcase_create("jacobians");
    tcase_add_test(t, test_jacobian_of_square);
    tcase_add_test(t, test_jacobian_shapes_and_unconnected);
    tcase_add_test(t, test_batch_jacobian);
    suite_add_tcase(s, t);
    t = tcase_create("control");
    tcase_add_test(t, test_second_derivative_with_nested_tapes);
    tcase_add_test(t, test_stop_recording);
    tcase_add_test(t, test_stop_gradient);
    tcase_add_test(t, test_custom_gradient);
    tcase_add_test(t, test_register_gradient);
    tcase_add_test(t, test_op_without_gradient_names_op_and_fix);
    tcase_add_test(t, test_tape_expires_with_recorded_scope);
    tcase_add_test(t, test_gradcheck_small_model);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return run_suite(tape_suite()); }
