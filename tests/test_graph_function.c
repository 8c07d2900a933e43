/* test_graph_function.c — gb_function, the rules of tf.function in C.
 *
 * The seeds' examples as tests (double traced once per dtype, next_collatz
 * serving every length through an input signature, pow with a static b
 * giving a concrete square, print vs gb_print, the variable singleton,
 * train(num_steps) retracing per static value but not per tensor value),
 * then each rule: input signatures, reduce_retracing, the most specific
 * match, captures, variables on later traces, eager mode, pruning,
 * program order of stateful ops, calls inside traces, and gradients
 * inside and through functions — each with exact values or messages.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

/* ---- capturing stdout -------------------------------------------------------------- */

typedef struct captured {
    int saved_fd;
    FILE *file;
    char text[4096];
} captured;

static void capture_begin(captured *c) {
    fflush(stdout);
    c->file = tmpfile();
    ck_assert_ptr_nonnull(c->file);
    c->saved_fd = dup(STDOUT_FILENO);
    dup2(fileno(c->file), STDOUT_FILENO);
}

static const char *capture_end(captured *c) {
    fflush(stdout);
    dup2(c->saved_fd, STDOUT_FILENO);
    close(c->saved_fd);
    rewind(c->file);
    size_t n = fread(c->text, 1, sizeof c->text - 1, c->file);
    c->text[n] = '\0';
    fclose(c->file);
    return c->text;
}

/* ---- the seeds' double(): one trace per dtype ---------------------------------------- */

static int double_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    printf("Tracing with %s\n", gb_dtype_name(gb_tensor_dtype(in[0])));
    out[0] = gb_add(in[0], in[0]);
    return 1;
}

START_TEST(test_double_traced_once_per_dtype) {
    gb_function *f = gb_function_new("double", double_fn, NULL);
    gb_tensor *y;
    captured cap;
    capture_begin(&cap);
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_I32, 1)}, 1, NULL, 0, &y), 1);
    ck_assert_double_eq(gb_item(y), 2);
    gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F32, 1.1)}, 1, NULL, 0, &y);
    ck_assert_float_eq_tol(gb_item(y), 2.2, 1e-6);
    gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_I32, 5)}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 10);
    gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F32, 3)}, 1, NULL, 0, &y);
    ck_assert_str_eq(capture_end(&cap), "Tracing with int32\nTracing with float32\n");
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    ck_assert_str_eq(gb_function_concrete_signatures(f),
                     "double(x0: int32[]) -> (int32[])\n"
                     "double(x0: float32[]) -> (float32[])\n");
    gb_function_stats s = gb_function_get_stats(f);
    ck_assert_int_eq(s.calls, 4);
    ck_assert_int_eq(s.cache_hits, 2);
    ck_assert(gb_ok());
    gb_function_free(f);
}
END_TEST

/* ---- next_collatz with an input signature [-1] ---------------------------------------- */

static int collatz_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *x = in[0];
    gb_tensor *half = gb_div_scalar(x, 2);
    gb_tensor *even = gb_equal(gb_sub(x, gb_mul_scalar(half, 2)), gb_zeros_like(x));
    out[0] = gb_where(even, half, gb_add_scalar(gb_mul_scalar(x, 3), 1));
    return 1;
}

START_TEST(test_next_collatz_serves_every_length) {
    gb_function_options o = {.input_signature = (gb_tensor_spec[]){GB_SPEC("x", GB_I32, -1)},
                             .ninput_signature = 1};
    gb_function *f = gb_function_new("next_collatz", collatz_fn, &o);
    gb_tensor *y;
    int32_t a[] = {1, 2, 3}, b[] = {6, 7, 8, 9, 10}, c[] = {27};
    gb_function_call(f, (gb_tensor *[]){gb_tensor_from(GB_I32, a, GB_SHAPE(3))}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_get(y, 0), 4);
    ck_assert_double_eq(gb_get(y, 1), 1);
    ck_assert_double_eq(gb_get(y, 2), 10);
    gb_function_call(f, (gb_tensor *[]){gb_tensor_from(GB_I32, b, GB_SHAPE(5))}, 1, NULL, 0, &y);
    ck_assert_int_eq(gb_dim(y, 0), 5);
    double want[] = {3, 22, 4, 28, 5};
    for (int i = 0; i < 5; i++) ck_assert_double_eq(gb_get(y, i), want[i]);
    gb_function_call(f, (gb_tensor *[]){gb_tensor_from(GB_I32, c, GB_SHAPE(1))}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_get(y, 0), 82);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert_str_eq(gb_function_concrete_signatures(f),
                     "next_collatz(x: int32[-1]) -> (int32[-1])\n");
    /* Another dtype or rank is an error naming the argument, not a retrace. */
    float fl[] = {1};
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_tensor_from(GB_F32, fl, GB_SHAPE(1))},
                                      1, NULL, 0, &y), -1);
    assert_error(GB_ERR_VALUE, "function 'next_collatz': input 0 ('x') is float32[1], which does "
                               "not fit its input signature int32[-1]");
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_I32, 3)}, 1, NULL, 0, &y), -1);
    assert_error(GB_ERR_VALUE, "input 0 ('x') is int32[], which does not fit its input signature "
                               "int32[-1]");
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* ---- pow with b=2 static: a concrete square -------------------------------------------- */

static int pow_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    out[0] = gb_pow_scalar(in[0], (double)st[0].as.i);
    return 1;
}

START_TEST(test_pow_concrete_square) {
    gb_function_options o = {.input_names = (const char *[]){"a"}, .ninput_names = 1};
    gb_function *pow = gb_function_new("pow", pow_fn, &o);
    gb_concrete_function *square = gb_function_get_concrete(
        pow, (gb_tensor_spec[]){GB_SPEC("a", GB_F32, -1)}, 1, (gb_value[]){GB_INT("b", 2)}, 1);
    ck_assert_ptr_nonnull(square);
    ck_assert_str_eq(gb_concrete_signature_text(square), "pow(a: float32[-1], b=2) -> (float32[-1])");
    ck_assert_int_eq(gb_function_tracing_count(pow), 1);
    gb_tensor *y;
    float a[] = {1, 2, 3};
    ck_assert_int_eq(gb_concrete_call(square, (gb_tensor *[]){gb_from_f32(a, GB_SHAPE(3))}, 1, &y), 1);
    ck_assert_double_eq(gb_get(y, 0), 1);
    ck_assert_double_eq(gb_get(y, 1), 4);
    ck_assert_double_eq(gb_get(y, 2), 9);
    /* The function serves the same call from that concrete function. */
    gb_function_call(pow, (gb_tensor *[]){gb_from_f32(a, GB_SHAPE(3))}, 1,
                     (gb_value[]){GB_INT("b", 2)}, 1, &y);
    ck_assert_int_eq(gb_function_tracing_count(pow), 1);
    ck_assert_double_eq(gb_get(y, 2), 9);
    gb_function_free(pow);
}
END_TEST

/* ---- print vs gb_print ---------------------------------------------------------------- */

static int print_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)in, (void)nin, (void)nst, (void)out;
    printf("Traced with %lld\n", (long long)st[0].as.i);
    gb_print("Executed with", gb_scalar(GB_I32, (double)st[0].as.i));
    return 0;
}

START_TEST(test_print_vs_gb_print) {
    gb_function *f = gb_function_new("f", print_fn, NULL);
    captured cap;
    capture_begin(&cap);
    gb_function_call(f, NULL, 0, (gb_value[]){GB_INT("x", 1)}, 1, NULL);
    gb_function_call(f, NULL, 0, (gb_value[]){GB_INT("x", 1)}, 1, NULL);
    gb_function_call(f, NULL, 0, (gb_value[]){GB_INT("x", 2)}, 1, NULL);
    ck_assert_str_eq(capture_end(&cap), "Traced with 1\nExecuted with 1\nExecuted with 1\n"
                                        "Traced with 2\nExecuted with 2\n");
    ck_assert(gb_ok());
    gb_function_free(f);
}
END_TEST

/* ---- the variable singleton ------------------------------------------------------------ */

static gb_variable *singleton;

static int add_to_singleton(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                            int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    if (!singleton) singleton = gb_variable_new("v", gb_scalar(GB_F32, 1), true);
    gb_variable_assign_add(singleton, in[0]);
    out[0] = gb_variable_value(singleton);
    return 1;
}

START_TEST(test_variable_singleton) {
    singleton = NULL;
    gb_function *f = gb_function_new("f", add_to_singleton, NULL);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F32, 1)}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 2);
    gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F32, 2)}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 4);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert_str_eq(gb_function_concrete_signatures(f), "f(x0: float32[]) captures v -> (float32[])\n");
    gb_function_free(f);
    gb_variable_free(singleton);
}
END_TEST

/* A function that makes a new variable on every trace: fine on the first,
 * an error on the next (as tf.function raises ValueError). */
static gb_variable *made[4];
static int nmade;

static int make_each_time(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_variable *v = gb_variable_new("w", gb_zeros_like(in[0]), true);
    if (!v) return -1;
    made[nmade++] = v;
    out[0] = gb_add(gb_variable_value(v), in[0]);
    return 1;
}

START_TEST(test_variable_on_later_trace_is_an_error) {
    nmade = 0;
    gb_function *f = gb_function_new("make_w", make_each_time, NULL);
    gb_tensor *y;
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F32, 1)}, 1, NULL, 0, &y), 1);
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_scalar(GB_F64, 1)}, 1, NULL, 0, &y), -1);
    assert_error(GB_ERR_STATE, "function 'make_w' created variable 'w' on a trace that was not its "
                               "first; variables may be created only on a function's first trace");
    ck_assert_int_eq(nmade, 1);
    gb_function_free(f);
    gb_variable_free(made[0]);
}
END_TEST

/* ---- train(num_steps): static vs tensor ------------------------------------------------- */

static int train_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nst;
    out[0] = nin ? gb_mul_scalar(in[0], 1.0) : gb_scalar(GB_I64, (double)st[0].as.i);
    return 1;
}

START_TEST(test_train_num_steps_static_vs_tensor) {
    gb_function *f = gb_function_new("train", train_fn, NULL);
    gb_tensor *y;
    gb_function_call(f, NULL, 0, (gb_value[]){GB_INT("num_steps", 10)}, 1, &y);
    gb_function_call(f, NULL, 0, (gb_value[]){GB_INT("num_steps", 20)}, 1, &y);
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    assert_reason(f, "static argument 'num_steps' changed value: 10 -> 20, against the closest "
                     "cached signature train(num_steps=10) -> (int64[]); called at "
                     "test_graph_function.c:253" COST ". Fix: pass a tensor instead of a static value "
                     "when it does not change the graph's structure; each static value needs its "
                     "own graph");
    gb_function *g = gb_function_new("train_t", train_fn, NULL);
    gb_function_call(g, (gb_tensor *[]){gb_scalar(GB_I64, 10)}, 1, NULL, 0, &y);
    gb_function_call(g, (gb_tensor *[]){gb_scalar(GB_I64, 20)}, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 20);
    ck_assert_int_eq(gb_function_tracing_count(g), 1);
    gb_function_free(f);
    gb_function_free(g);
}
END_TEST

/* ---- suite ------------------------------------------------------------------------------ */

/* A function's name is what the dashboard selects it by: kept whole
 * (at most 63 bytes), UTF-8, no control characters — else refused when
 * the function is made, never cut or unselectable later. */
START_TEST(test_function_names_are_kept_whole_or_refused) {
    char long_name[80];
    memset(long_name, 'f', 64);
    long_name[64] = '\0';
    ck_assert_ptr_null(gb_function_new(long_name, double_fn, NULL));
    assert_error_text(GB_ERR_VALUE, "gb_function_new: the name is 64 bytes; at most 63 are kept");
    ck_assert_ptr_null(gb_function_new("train\nstep", double_fn, NULL));
    assert_error_text(GB_ERR_VALUE, "gb_function_new: the name has a control character at byte "
                                    "5; names are UTF-8 text without control characters");
    ck_assert_ptr_null(gb_function_new("caf\xe9", double_fn, NULL));
    assert_error_text(GB_ERR_VALUE, "gb_function_new: the name has a byte that is not UTF-8 at "
                                    "byte 3; names are UTF-8 text without control characters");
    ck_assert_ptr_null(gb_function_new("x\xc2\x85", double_fn, NULL)); /* C1 NEL */
    gb_clear_error();
    gb_function *f = gb_function_new("caf\xc3\xa9_\xe2\x86\x92", double_fn, NULL);
    ck_assert_msg(f != NULL, "%s", gb_error_string());
    gb_function_free(f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_function");
    TCase *tc = tcase_create("seeds");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_double_traced_once_per_dtype);
    tcase_add_test(tc, test_next_collatz_serves_every_length);
    tcase_add_test(tc, test_pow_concrete_square);
    tcase_add_test(tc, test_print_vs_gb_print);
    tcase_add_test(tc, test_variable_singleton);
    tcase_add_test(tc, test_variable_on_later_trace_is_an_error);
    tcase_add_test(tc, test_train_num_steps_static_vs_tensor);
    tcase_add_test(tc, test_function_names_are_kept_whole_or_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
