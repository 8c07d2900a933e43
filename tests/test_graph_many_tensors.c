/* test_graph_many_tensors.c — traced functions as wide as real models:
 * hundreds of outputs, of captured variables, of inputs, and the
 * gradients through calls of them, each equal to what the same C code
 * gives eagerly; and, beyond the limits that remain, the errors word for
 * word. (The limits were 64 tensors in and out; a call under a tape, 16
 * outputs: wider functions were cut short or refused.)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "glassbox.h"
#include "test_util.h"

enum { WIDE = 200, NVARS = 100, NIN = 300 };

/* ---- outputs ------------------------------------------------------------------------ */

/* out[k] = (k + 1) * x for k < WIDE. */
static int wide_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    for (int k = 0; k < WIDE; k++) out[k] = gb_mul_scalar(in[0], k + 1);
    return WIDE;
}

START_TEST(test_function_returns_200_outputs) {
    gb_function *f = gb_function_new("wide", wide_fn, NULL);
    gb_tensor *x = gb_from_f32(((float[]){1.5f, -2.0f}), GB_SHAPE(2));
    gb_tensor *out[WIDE];
    for (int call = 0; call < 2; call++) {
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, out), WIDE);
        for (int k = 0; k < WIDE; k++) {
            ck_assert_float_eq(gb_get(out[k], 0), 1.5 * (k + 1));
            ck_assert_float_eq(gb_get(out[k], 1), -2.0 * (k + 1));
        }
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* Under a tape the call is one record of 200 outputs; the gradient of
 * their sum is sum(k + 1) = 20100 per element, as eagerly. */
START_TEST(test_gradient_through_200_outputs) {
    gb_function *f = gb_function_new("wide", wide_fn, NULL);
    gb_tensor *x = gb_from_f32(((float[]){1.5f, -2.0f}), GB_SHAPE(2));
    gb_tensor *grads[2];
    for (int traced = 0; traced < 2; traced++) {
        gb_tensor *out[WIDE];
        gb_tape *tape = gb_tape_begin();
        gb_tape_watch(tape, x);
        int n = traced ? gb_function_call(f, &x, 1, NULL, 0, out) : wide_fn(NULL, &x, 1, NULL, 0, out);
        ck_assert_msg(n == WIDE, "%d outputs: %s", n, gb_error_string());
        gb_tensor *sum = out[0];
        for (int k = 1; k < WIDE; k++) sum = gb_add(sum, out[k]);
        gb_tensor *loss = gb_reduce_sum(sum, GB_ALL_AXES, false);
        gb_tape_end(tape);
        grads[traced] = gb_tape_gradient(tape, loss, x);
        ck_assert_msg(grads[traced] != NULL, "%s", gb_error_string());
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_float_eq(gb_get(grads[1], i), 20100.0);
        ck_assert_float_eq(gb_get(grads[1], i), gb_get(grads[0], i));
    }
    gb_function_free(f);
}
END_TEST

/* ---- captured variables -------------------------------------------------------------- */

/* sum_i sum((i + 1) * v_i * x) over the NVARS variables in user. */
static int captures_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_variable **vars = user;
    gb_tensor *acc = NULL;
    for (int i = 0; i < NVARS; i++) {
        gb_tensor *t = gb_reduce_sum(gb_mul_scalar(gb_mul(gb_variable_value(vars[i]), in[0]), i + 1),
                                     GB_ALL_AXES, false);
        acc = acc ? gb_add(acc, t) : t;
    }
    out[0] = acc;
    return 1;
}

/* A tape around a call of a function that reads 100 variables: every
 * variable's gradient, and the input's, equal the eager ones. */
START_TEST(test_gradient_through_100_captured_variables) {
    gb_variable *vars[NVARS];
    for (int i = 0; i < NVARS; i++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", i);
        float init[3] = {0.01f * (float)i, -0.5f + 0.02f * (float)i, 1.0f};
        vars[i] = gb_variable_new(name, gb_from_f32(init, GB_SHAPE(3)), true);
    }
    gb_function *f = gb_function_new("captures", captures_fn, &(gb_function_options){.user = vars});
    gb_tensor *x = gb_from_f32(((float[]){0.25f, 2.0f, -1.0f}), GB_SHAPE(3));
    gb_source src[NVARS + 1];
    src[0] = GB_SRC(x);
    for (int i = 0; i < NVARS; i++) src[1 + i] = GB_SRC_VAR(vars[i]);
    gb_tensor *g[2][NVARS + 1];
    for (int traced = 0; traced < 2; traced++) {
        gb_tensor *y;
        gb_tape *tape = gb_tape_begin();
        gb_tape_watch(tape, x);
        int n = traced ? gb_function_call(f, &x, 1, NULL, 0, &y) : captures_fn(vars, &x, 1, NULL, 0, &y);
        ck_assert_msg(n == 1, "%s", gb_error_string());
        gb_tape_end(tape);
        ck_assert_msg(gb_tape_gradient_ex(tape, &y, 1, NULL, src, NVARS + 1, GB_UNCONNECTED_NONE, g[traced]),
                      "%s", gb_error_string());
    }
    /* d/dv_i = (i + 1) * x: exact; d/dx = sum_i (i + 1) v_i, summed in
     * the same order both ways. */
    for (int i = 0; i < NVARS; i++) {
        ck_assert_msg(g[1][1 + i] != NULL, "no gradient for variable %d", i);
        for (int e = 0; e < 3; e++) {
            ck_assert_float_eq(gb_get(g[1][1 + i], e), (i + 1) * gb_get(x, e));
            ck_assert_float_eq(gb_get(g[1][1 + i], e), gb_get(g[0][1 + i], e));
        }
    }
    for (int e = 0; e < 3; e++) ck_assert_float_eq_tol(gb_get(g[1][0], e), gb_get(g[0][0], e), 1e-3);
    gb_function_free(f);
    for (int i = 0; i < NVARS; i++) gb_variable_free(vars[i]);
}
END_TEST

/* ---- inputs ----------------------------------------------------------------------------- */

/* The sum of its inputs, as one AddN-free chain. */
static int sum_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)user, (void)st, (void)nst;
    gb_tensor *acc = in[0];
    for (int i = 1; i < nin; i++) acc = gb_add(acc, in[i]);
    out[0] = acc;
    return 1;
}

/* 300 inputs, and a Concat node of 300 inputs inside a trace. */
static int concat_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)st, (void)nst;
    out[0] = gb_concat(in, nin, 0);
    return 1;
}

START_TEST(test_function_takes_300_inputs) {
    gb_tensor *in[NIN];
    for (int i = 0; i < NIN; i++) in[i] = gb_from_f32(((float[]){(float)i}), GB_SHAPE(1));
    gb_function *f = gb_function_new("sum", sum_fn, NULL);
    gb_tensor *y;
    ck_assert_msg(gb_function_call(f, in, NIN, NULL, 0, &y) == 1, "%s", gb_error_string());
    ck_assert_float_eq(gb_get(y, 0), NIN * (NIN - 1) / 2);
    gb_function *c = gb_function_new("concat", concat_fn, NULL);
    ck_assert_msg(gb_function_call(c, in, NIN, NULL, 0, &y) == 1, "%s", gb_error_string());
    ck_assert_int_eq(gb_size(y), NIN);
    for (int i = 0; i < NIN; i++) ck_assert_float_eq(gb_get(y, i), i);
    gb_function_free(f);
    gb_function_free(c);
}
END_TEST

/* ---- the limits that remain ------------------------------------------------------------- */

/* Claims one output more than a function may return (writing none past
 * the array). */
static int too_wide_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    for (int k = 0; k < GB_FUNCTION_MAX_OUTPUTS; k++) out[k] = in[0];
    return GB_FUNCTION_MAX_OUTPUTS + 1;
}

START_TEST(test_beyond_the_limits_errors_name_the_function) {
    ck_assert_int_eq(GB_FUNCTION_MAX_INPUTS, 4096);
    ck_assert_int_eq(GB_FUNCTION_MAX_OUTPUTS, 4096);
    gb_tensor *x = gb_scalar(GB_F32, 1);
    gb_function *f = gb_function_new("too_wide", too_wide_fn, NULL);
    gb_tensor *y;
    int line = __LINE__ + 1;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    assert_error_text(GB_ERR_VALUE,
                      "while tracing function 'too_wide' (called at test_graph_many_tensors.c:%d): "
                      "function 'too_wide' returned 4097 outputs (at most 4096)",
                      line);

    int n = GB_FUNCTION_MAX_INPUTS + 1;
    gb_tensor **in = malloc((size_t)n * sizeof *in);
    for (int i = 0; i < n; i++) in[i] = x;
    gb_function *s = gb_function_new("sum", sum_fn, NULL);
    ck_assert_int_eq(gb_function_call(s, in, n, NULL, 0, &y), -1);
    assert_error_text(GB_ERR_VALUE, "function 'sum' was called with 4097 tensor inputs (at most 4096)");

    gb_tensor_spec *specs = calloc((size_t)n, sizeof *specs);
    for (int i = 0; i < n; i++) specs[i] = GB_SPEC_SCALAR(NULL, GB_F32);
    ck_assert_ptr_null(gb_function_new("signed", sum_fn,
                                       &(gb_function_options){.input_signature = specs, .ninput_signature = n}));
    assert_error_text(GB_ERR_VALUE,
                      "gb_function_new: the input signature of function 'signed' has 4097 specs (at most 4096)");
    free(specs);
    free(in);
    gb_function_free(f);
    gb_function_free(s);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_many_tensors");
    TCase *tc = tcase_create("wide");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_function_returns_200_outputs);
    tcase_add_test(tc, test_gradient_through_200_outputs);
    tcase_add_test(tc, test_gradient_through_100_captured_variables);
    tcase_add_test(tc, test_function_takes_300_inputs);
    tcase_add_test(tc, test_beyond_the_limits_errors_name_the_function);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
