/* test_graph_retrace_exact.c — retrace diagnostics that leave nothing out.
 *
 * One test per point where a reason, an error or a warning was once
 * inexact, each on a function of its own and asserting the whole message:
 * static strings compared whole (two long strings that share their first
 * 63 bytes are two graphs, not one with a wrong result); the call site of
 * a call whose argument is built by a wrapped call; doubles that differ
 * printed differently, and a static value's change of kind; every
 * difference against the closest signature; a freed captured variable by
 * name; what reduce_retracing relaxed; a refused call or a failed trace
 * leaving the last reason alone; an error while tracing naming the
 * function and the call that traced it; the function-in-a-loop history
 * keyed on where the function was wrapped; the warning naming every
 * argument that varies; the cost in the reason; and GB_LOG_TRACES.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

#define FILE_NAME "test_graph_retrace_exact.c"

/* ---- static strings, whole ---------------------------------------------------------------- */

/* The graph adds the key's last byte as a constant: a second key whose
 * first 63 bytes are the first key's must still get its own graph. */
static int last_byte_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    const char *key = st[0].as.s;
    out[0] = gb_add_scalar(in[0], key[strlen(key) - 1] - 'a');
    return 1;
}

START_TEST(test_long_static_strings_are_compared_whole) {
    char a[80], b[80];
    memset(a, 'k', 70);
    memcpy(b, a, 70);
    a[70] = 'b', b[70] = 'c';
    a[71] = b[71] = '\0';
    gb_function *f = gb_function_new("keyed", last_byte_fn, NULL);
    gb_tensor *x = gb_scalar(GB_F32, 0), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, (gb_value[]){GB_STRING("key", a)}, 1, &y), 1);
    ck_assert_double_eq(gb_item(y), 1);
    ck_assert_int_eq(gb_function_call(f, &x, 1, (gb_value[]){GB_STRING("key", b)}, 1, &y), 1);
    ck_assert_double_eq(gb_item(y), 2); /* its own graph: eager gives 2 too */
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    assert_reason(f, "static argument 'key' changed value at byte 70: \"...kkkkkkkkkkkkkkkb\" -> "
                     "\"...kkkkkkkkkkkkkkkc\" (71 -> 71 bytes), against the closest cached "
                     "signature keyed(x0: float32[], key=\"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkb\") -> (float32[]); called at " FILE_NAME ":49"
                     COST ". Fix: pass a tensor instead of a static value when it does not change "
                     "the graph's structure; each static value needs its own graph");
    /* The first key again: a hit on its own graph. */
    gb_function_call(f, &x, 1, (gb_value[]){GB_STRING("key", a)}, 1, &y);
    ck_assert_double_eq(gb_item(y), 1);
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    gb_function_free(f);
}
END_TEST

/* ---- call sites ------------------------------------------------------------------------------ */

static int halve_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_mul_scalar(in[0], 0.5);
    return 1;
}

/* A helper that builds an input with wrapped calls of its own lines. */
static gb_tensor *column(int64_t n) {
    gb_tensor *t = gb_ones(GB_F32, GB_SHAPE(n, 1));
    return gb_mul_scalar(t, 2);
}

START_TEST(test_call_site_is_the_call_not_its_argument) {
    gb_function *f = gb_function_new("halve", halve_fn, NULL);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){column(2)}, 1, NULL, 0, &y);
    int line = __LINE__ + 1;
    gb_function_call(f, (gb_tensor *[]){column(3)}, 1, NULL, 0, &y);
    char want[512];
    snprintf(want, sizeof want,
             "input 0 'x0' changed dim 0: 2 -> 3 (float32[2,1] -> float32[3,1]), against the "
             "closest cached signature halve(x0: float32[2,1]) -> (float32[2,1]); called at "
             FILE_NAME ":%d" COST ". Fix: declare the dim -1 in an input signature (GB_SPEC), "
             "or set reduce_retracing",
             line, gb_function_get_stats(f).last_trace_ms);
    ck_assert_str_eq(gb_function_last_trace_reason(f), want);
    /* An op whose argument comes from the helper names the op's line, by
     * the file's base name as the reasons do. */
    line = __LINE__ + 1;
    ck_assert_ptr_null(gb_matmul(column(2), column(3)));
    snprintf(want, sizeof want,
             "ShapeError: MatMul: inner dimensions differ: [2,1] x [3,1] (1 vs 3) (at " FILE_NAME ":%d)", line);
    ck_assert_str_eq(gb_error_string(), want);
    ck_assert_int_eq(gb_last_error()->line, line);
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

/* ---- values that differ print differently ------------------------------------------------------ */

static int rate_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    out[0] = gb_mul_scalar(in[0], st[0].kind == GB_VALUE_INT ? (double)st[0].as.i : st[0].as.d);
    return 1;
}

static void call_rate(gb_function *f, gb_value v) {
    gb_tensor *x = gb_scalar(GB_F32, 1), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, &v, 1, &y), 1);
}

START_TEST(test_doubles_and_kinds_print_apart) {
    gb_function *f = gb_function_new("rated", rate_fn, NULL);
    call_rate(f, GB_DOUBLE("rate", 0.1));
    call_rate(f, GB_DOUBLE("rate", 0.10000000000000002));
    assert_reason(f, "static argument 'rate' changed value: 0.1 -> 0.10000000000000002, against "
                     "the closest cached signature rated(x0: float32[], rate=0.1) -> (float32[]); "
                     "called at " FILE_NAME ":119" COST ". Fix: pass a tensor instead of a static "
                     "value when it does not change the graph's structure; each static value needs "
                     "its own graph");
    gb_function *g = gb_function_new("scaled_by", rate_fn, NULL);
    call_rate(g, GB_INT("scale", 2));
    call_rate(g, GB_DOUBLE("scale", 2.0));
    assert_reason(g, "static argument 'scale' changed kind: int 2 -> double 2.0, against the "
                     "closest cached signature scaled_by(x0: float32[], scale=2) -> (float32[]); "
                     "called at " FILE_NAME ":119" COST ". Fix: pass a tensor instead of a static "
                     "value when it does not change the graph's structure; each static value needs "
                     "its own graph");
    gb_function_free(f);
    gb_function_free(g);
}
END_TEST

/* ---- every difference ------------------------------------------------------------------------ */

static int scale_by_mode_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                            int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    out[0] = strcmp(st[0].as.s, "twice") == 0 ? gb_add(in[0], in[0]) : gb_neg(in[0]);
    return 1;
}

START_TEST(test_every_difference_is_listed) {
    gb_function_options o = {.input_names = (const char *[]){"v"}, .ninput_names = 1};
    gb_function *f = gb_function_new("moded", scale_by_mode_fn, &o);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_zeros(GB_F32, GB_SHAPE(3))}, 1,
                     (gb_value[]){GB_STRING("mode", "twice")}, 1, &y);
    gb_function_call(f, (gb_tensor *[]){gb_zeros(GB_F64, GB_SHAPE(4))}, 1,
                     (gb_value[]){GB_STRING("mode", "negate")}, 1, &y);
    assert_reason(f, "input 0 'v' changed dtype: float32 -> float64 and dim 0: 3 -> 4 (float32[3] "
                     "-> float64[4]); static argument 'mode' changed value: \"twice\" -> "
                     "\"negate\", against the closest cached signature moded(v: float32[3], "
                     "mode=\"twice\") -> (float32[3]); called at " FILE_NAME ":159" COST ". Fix: "
                     "cast the input (gb_cast) if its dtype should not change; each dtype needs its "
                     "own graph; declare the dim -1 in an input signature (GB_SPEC), or set "
                     "reduce_retracing; pass a tensor instead of a static value when it does not "
                     "change the graph's structure; each static value needs its own graph");
    gb_function_free(f);
}
END_TEST

/* ---- a freed capture, by name --------------------------------------------------------------- */

static int add_bias_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_add(in[0], gb_variable_value(*(gb_variable **)user));
    return 1;
}

START_TEST(test_freed_capture_is_named) {
    gb_name_scope_push("dense");
    gb_variable *bias = gb_variable_new("bias", gb_zeros(GB_F32, GB_SHAPE(2)), true);
    gb_name_scope_pop();
    ck_assert_str_eq(gb_variable_name(bias), "dense/bias");
    gb_function_options o = {.user = &bias};
    gb_function *f = gb_function_new("biased", add_bias_fn, &o);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(2)), *y;
    gb_function_call(f, &x, 1, NULL, 0, &y);
    /* A reason shows the closest signature without its captures (a model's
     * step has dozens); the signature itself lists them. */
    gb_tensor *rows = gb_ones(GB_F32, GB_SHAPE(3, 2));
    int rows_line = __LINE__ + 1;
    gb_function_call(f, &rows, 1, NULL, 0, &y);
    char want[512];
    snprintf(want, sizeof want,
             "input 0 'x0' changed rank: 1 -> 2 (float32[2] -> float32[3,2]), against the closest "
             "cached signature biased(x0: float32[2]) -> (float32[2]); called at " FILE_NAME ":%d"
             COST ". Fix: declare an input signature if the rank should not change; each rank "
             "needs its own graph",
             rows_line, gb_function_get_stats(f).last_trace_ms);
    ck_assert_str_eq(gb_function_last_trace_reason(f), want);
    ck_assert_str_eq(gb_function_concrete_signatures(f),
                     "biased(x0: float32[2]) captures dense/bias -> (float32[2])\n"
                     "biased(x0: float32[3,2]) captures dense/bias -> (float32[3,2])\n");
    gb_variable_free(bias);
    bias = gb_variable_new("other_bias", gb_ones(GB_F32, GB_SHAPE(2)), true);
    int line = __LINE__ + 1;
    gb_function_call(f, &x, 1, NULL, 0, &y);
    snprintf(want, sizeof want,
             "variable 'dense/bias', which its graph captured, was freed; called at " FILE_NAME
             ":%d" COST ". Fix: keep the variables a function uses alive as long as the function",
             line, gb_function_get_stats(f).last_trace_ms);
    ck_assert_str_eq(gb_function_last_trace_reason(f), want);
    ck_assert_double_eq(gb_get(y, 1), 2);
    gb_function_free(f);
    gb_variable_free(bias);
}
END_TEST

/* ---- reduce_retracing says what it relaxed ----------------------------------------------------- */

static int row_sums_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_reduce_sum(in[0], (int64_t[]){1}, 1, false);
    return 1;
}

START_TEST(test_relaxed_trace_says_what_it_relaxed) {
    gb_function_options o = {.input_names = (const char *[]){"batch"}, .ninput_names = 1,
                             .reduce_retracing = true};
    gb_function *f = gb_function_new("row_sums", row_sums_fn, &o);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(8, 2))}, 1, NULL, 0, &y);
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(16, 2))}, 1, NULL, 0, &y);
    assert_reason(f, "input 0 'batch' changed dim 0: 8 -> 16 (float32[8,2] -> float32[16,2]), "
                     "against the closest cached signature row_sums(batch: float32[8,2]) -> "
                     "(float32[8]); called at " FILE_NAME ":237" COST ". reduce_retracing relaxed "
                     "input 0 'batch' dim 0 to -1 (float32[-1,2]): this one trace serves every size "
                     "there, and replaces the traces it covers");
    ck_assert_str_eq(gb_function_concrete_signatures(f),
                     "row_sums(batch: float32[-1,2]) -> (float32[-1])\n");
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(5, 2))}, 1, NULL, 0, &y);
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    ck_assert_double_eq(gb_get(y, 4), 2);
    gb_function_free(f);
}
END_TEST

/* ---- a refused call or a failed trace leaves the reason --------------------------------------- */

static int pairs_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_transpose(in[0], (int64_t[]){1, 0}, 2);
    return 1;
}

START_TEST(test_refused_call_keeps_the_last_reason) {
    gb_function_options o = {.input_signature = (gb_tensor_spec[]){GB_SPEC("p", GB_F32, -1, 2)},
                             .ninput_signature = 1};
    gb_function *f = gb_function_new("pairs", pairs_fn, &o);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(4, 2))}, 1, NULL, 0, &y);
    assert_reason(f, "first call at " FILE_NAME ":266" COST);
    char before[1400];
    snprintf(before, sizeof before, "%s", gb_function_last_trace_reason(f));
    ck_assert_ptr_null(
        gb_function_get_concrete(f, (gb_tensor_spec[]){GB_SPEC("p", GB_F32, 3)}, 1, NULL, 0));
    assert_error_text(GB_ERR_VALUE,
                      "function 'pairs': input 0 ('p') is float32[3], which does not fit its input "
                      "signature float32[-1,2]");
    ck_assert_str_eq(gb_function_last_trace_reason(f), before);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

static int mismatched_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_matmul(in[0], in[0]);
    return 1;
}

/* The error names the function, the call that traced it and the op's
 * own line; the failed trace leaves no reason and no count. */
START_TEST(test_error_while_tracing_names_function_and_call) {
    gb_function *f = gb_function_new("squares", mismatched_fn, NULL);
    gb_tensor *y;
    ck_assert_int_eq(
        gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(2, 3))}, 1, NULL, 0, &y), -1);
    ck_assert_str_eq(gb_error_string(),
                     "ShapeError: while tracing function 'squares' (called at " FILE_NAME ":294): "
                     "MatMul: inner dimensions differ: [2,3] x [2,3] (3 vs 2) (at " FILE_NAME ":284)");
    gb_clear_error();
    ck_assert_str_eq(gb_function_last_trace_reason(f), "");
    ck_assert_int_eq(gb_function_tracing_count(f), 0);
    gb_function_free(f);
}
END_TEST

/* ---- the function in a loop, and two wrappers made once --------------------------------------- */

static int offset_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_add_scalar(in[0], *(const double *)user);
    return 1;
}

START_TEST(test_loop_with_new_user_data_is_recognised) {
    int before = gb_warning_count();
    for (int i = 0; i < 5; i++) {
        double *offset = malloc(sizeof *offset); /* a new heap user each time */
        *offset = i;
        gb_function_options o = {.user = offset};
        gb_function *f = gb_function_new("offset", offset_fn, &o);
        gb_tensor *x = gb_scalar(GB_F32, 1), *y;
        gb_function_call(f, &x, 1, NULL, 0, &y);
        ck_assert_double_eq(gb_item(y), 1 + i);
        if (i == 1)
            assert_reason(f, "its C function was wrapped in a new gb_function at the line that "
                             "wrapped it before (" FILE_NAME ":320), so the earlier wrapper's "
                             "traces are lost; called at " FILE_NAME ":322" COST ". Fix: create "
                             "the gb_function once, outside the loop, and call it many times");
        gb_function_free(f);
        free(offset);
    }
    ck_assert_int_eq(gb_warning_count(), before + 1);
    ck_assert_str_eq(gb_last_warning(),
                     "function 'offset' traced 5 times in its last 5 calls, each time wrapped in a "
                     "new gb_function around the same C function at the same line. Tracing is "
                     "expensive: create the gb_function once, outside the loop, and call it many "
                     "times");
}
END_TEST

static int sum_sq_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_reduce_sum(gb_mul(in[0], in[0]), NULL, 0, false);
    return 1;
}

static void call_on(gb_function *f, int64_t n) {
    gb_tensor *y;
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(n))}, 1, NULL, 0, &y), 1);
}

/* A train and an eval loss around one C function, each wrapped once: two
 * histories, so 3 + 2 traces raise no warning and the eval loss's first
 * trace is a first call. */
START_TEST(test_two_wrappers_keep_two_histories) {
    int before = gb_warning_count();
    gb_function *train = gb_function_new("train_loss", sum_sq_fn, NULL);
    gb_function *eval = gb_function_new("eval_loss", sum_sq_fn, NULL);
    call_on(train, 1);
    call_on(eval, 1);
    assert_reason(eval, "first call at " FILE_NAME ":350" COST);
    call_on(train, 2);
    call_on(eval, 2);
    call_on(train, 3);
    ck_assert_int_eq(gb_function_tracing_count(train), 3);
    ck_assert_int_eq(gb_function_tracing_count(eval), 2);
    ck_assert_int_eq(gb_warning_count(), before);
    gb_function_free(train);
    gb_function_free(eval);
}
END_TEST

/* ---- the warning names every argument that varies ------------------------------------------- */

static int mode_rows_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    out[0] = st[0].as.s[0] == 'a' ? gb_neg(in[0]) : gb_abs(in[0]);
    return 1;
}

static void call_mode(gb_function *f, int64_t n, const char *mode) {
    gb_tensor *y;
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(n))}, 1,
                                      (gb_value[]){GB_STRING("mode", mode)}, 1, &y),
                     1);
}

START_TEST(test_warning_names_every_varying_argument) {
    gb_function_options o = {.input_names = (const char *[]){"rows"}, .ninput_names = 1};
    gb_function *f = gb_function_new("mixed", mode_rows_fn, &o);
    int before = gb_warning_count();
    call_mode(f, 1, "a");
    call_mode(f, 2, "a");
    call_mode(f, 3, "a");
    call_mode(f, 3, "b");
    call_mode(f, 3, "c");
    ck_assert_int_eq(gb_warning_count(), before + 1);
    ck_assert_str_eq(gb_last_warning(),
                     "function 'mixed' traced 5 times in its last 5 calls; the arguments that vary "
                     "are input 0 'rows' dim 0 (values seen: 1, 2, 3) and static argument 'mode' "
                     "(values seen: \"a\", \"b\", \"c\"). Tracing is expensive: declare the dim -1 "
                     "in an input signature (GB_SPEC), or set reduce_retracing; pass a tensor "
                     "instead of a static value when it does not change the graph's structure; "
                     "each static value needs its own graph");
    /* The dim varies again: its list goes on where it stopped. */
    call_mode(f, 4, "c");
    ck_assert_int_eq(gb_warning_count(), before + 2);
    ck_assert_str_eq(gb_last_warning(),
                     "function 'mixed' traced 6 times in its last 6 calls; the arguments that vary "
                     "are input 0 'rows' dim 0 (values seen: 1, 2, 3, 4) and static argument 'mode' "
                     "(values seen: \"a\", \"b\", \"c\"). Tracing is expensive: declare the dim -1 "
                     "in an input signature (GB_SPEC), or set reduce_retracing; pass a tensor "
                     "instead of a static value when it does not change the graph's structure; "
                     "each static value needs its own graph");
    gb_function_free(f);
}
END_TEST

/* ---- every trace logged ------------------------------------------------------------------------ */

/* Runs two traces of a new function with stderr in a file and asserts
 * what was written there: one line per trace. */
static const char *traces_on_stderr(const char *name) {
    static char text[4096];
    const char *path = "retrace_exact_stderr.txt";
    fflush(stderr);
    int saved = dup(2);
    ck_assert(freopen(path, "w", stderr) != NULL);
    gb_function *f = gb_function_new(name, halve_fn, NULL);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(2))}, 1, NULL, 0, &y);
    double first_ms = gb_function_get_stats(f).last_trace_ms;
    gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(3))}, 1, NULL, 0, &y);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *in = fopen(path, "r");
    ck_assert_ptr_nonnull(in);
    size_t n = fread(text, 1, sizeof text - 1, in);
    text[n] = '\0';
    fclose(in);
    remove(path);
    /* The expected lines, with this function's costs. */
    static char want[4096];
    gb_function_stats st = gb_function_get_stats(f);
    snprintf(want, sizeof want,
             "glassbox: traced '%s' (trace 1): first call at " FILE_NAME ":433; traced in %.2f ms\n"
             "glassbox: traced '%s' (trace 2): input 0 'x0' changed dim 0: 2 -> 3 (float32[2] -> "
             "float32[3]), against the closest cached signature %s(x0: float32[2]) -> "
             "(float32[2]); called at " FILE_NAME ":435; traced in %.2f ms. Fix: declare the dim "
             "-1 in an input signature (GB_SPEC), or set reduce_retracing\n",
             name, first_ms, name, name, st.last_trace_ms);
    gb_function_free(f);
    ck_assert_str_eq(text, want);
    return text;
}

START_TEST(test_log_traces_from_the_environment) {
    setenv("GB_LOG_TRACES", "1", 1);
    traces_on_stderr("logged");
    ck_assert(gb_traces_logged());
    gb_log_traces(false); /* the call wins over the variable */
    ck_assert(!gb_traces_logged());
    unsetenv("GB_LOG_TRACES");
}
END_TEST

START_TEST(test_log_traces_by_a_call) {
    unsetenv("GB_LOG_TRACES");
    ck_assert(!gb_traces_logged());
    gb_log_traces(true);
    traces_on_stderr("logged_by_call");
    gb_log_traces(false);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_retrace_exact");
    TCase *tc = tcase_create("exact");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_long_static_strings_are_compared_whole);
    tcase_add_test(tc, test_call_site_is_the_call_not_its_argument);
    tcase_add_test(tc, test_doubles_and_kinds_print_apart);
    tcase_add_test(tc, test_every_difference_is_listed);
    tcase_add_test(tc, test_freed_capture_is_named);
    tcase_add_test(tc, test_relaxed_trace_says_what_it_relaxed);
    tcase_add_test(tc, test_refused_call_keeps_the_last_reason);
    tcase_add_test(tc, test_error_while_tracing_names_function_and_call);
    tcase_add_test(tc, test_loop_with_new_user_data_is_recognised);
    tcase_add_test(tc, test_two_wrappers_keep_two_histories);
    tcase_add_test(tc, test_warning_names_every_varying_argument);
    tcase_add_test(tc, test_log_traces_from_the_environment);
    tcase_add_test(tc, test_log_traces_by_a_call);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
