/* test_graph_retrace.c — why a function traced, in exact words.
 *
 * One test per cause of a trace — first call, a dtype, a rank, a dim, a
 * static value, a freed captured variable, the same C function wrapped
 * again, the number of inputs — each against the closest cached
 * signature with the call site and the fix; the excessive-retracing
 * warning (5 traces in the last 10 calls, at most twice, keyed on the C
 * function so re-wrapping counts) naming the varying argument and its
 * values; reduce_retracing's relaxed trace; the most specific match; and
 * the GB_EVENT_TRACE event.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

static int square_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)st, (void)nst;
    for (int i = 0; i < nin; i++) out[i] = gb_mul(in[i], in[i]);
    return nin;
}

static gb_function *square(const char *name, bool reduce) {
    gb_function_options o = {.input_names = (const char *[]){"x", "y"}, .ninput_names = 2,
                             .reduce_retracing = reduce};
    return gb_function_new(name, square_fn, &o);
}

static gb_tensor *vec(int64_t n) { return gb_zeros(GB_F32, 1, (int64_t[]){n}); }

/* Calls f on one tensor; the call site is this line. */
static void call1(gb_function *f, gb_tensor *x) {
    gb_tensor *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
}

#define SITE "test_graph_retrace.c:37"

START_TEST(test_reason_first_call) {
    gb_function *f = square("sq", false);
    call1(f, vec(3));
    assert_reason(f, "first call at " SITE COST);
    gb_function_free(f);
}
END_TEST

START_TEST(test_reason_dim) {
    gb_function *f = square("sq", false);
    call1(f, vec(3));
    call1(f, vec(4));
    assert_reason(f, "input 0 'x' changed dim 0: 3 -> 4 (float32[3] -> float32[4]), against the "
                     "closest cached signature sq(x: float32[3]) -> (float32[3]); called at " SITE
                     COST ". Fix: declare the dim -1 in an input signature (GB_SPEC), or set "
                     "reduce_retracing");
    gb_function_free(f);
}
END_TEST

START_TEST(test_reason_rank_and_dtype) {
    gb_function *f = square("sq", false);
    call1(f, vec(3));
    call1(f, gb_zeros(GB_F32, 2, (int64_t[]){3, 2}));
    assert_reason(f, "input 0 'x' changed rank: 1 -> 2 (float32[3] -> float32[3,2]), against the "
                     "closest cached signature sq(x: float32[3]) -> (float32[3]); called at " SITE
                     COST ". Fix: declare an input signature if the rank should not change; each rank "
                     "needs its own graph");
    call1(f, gb_zeros(GB_F64, 1, (int64_t[]){3}));
    assert_reason(f, "input 0 'x' changed dtype: float32 -> float64, against the closest cached "
                     "signature sq(x: float32[3]) -> (float32[3]); called at " SITE
                     COST ". Fix: cast the input (gb_cast) if its dtype should not change; each dtype "
                     "needs its own graph");
    gb_function_free(f);
}
END_TEST

/* The closest signature is the one with the fewest differences: a call
 * [5] against cached [3] and [5,5]... picks [3] (one dim), not the rank. */
START_TEST(test_reason_against_closest) {
    gb_function *f = square("sq", false);
    gb_tensor *y[2];
    gb_function_call(f, (gb_tensor *[]){vec(2), vec(7)}, 2, NULL, 0, y);
    gb_function_call(f, (gb_tensor *[]){vec(3), vec(3)}, 2, NULL, 0, y);
    gb_function_call(f, (gb_tensor *[]){vec(3), vec(4)}, 2, NULL, 0, y);
    ck_assert_ptr_nonnull(strstr(gb_function_last_trace_reason(f),
                                 "input 1 'y' changed dim 0: 3 -> 4 (float32[3] -> float32[4]), "
                                 "against the closest cached signature sq(x: float32[3], y: "
                                 "float32[3])"));
    gb_function_free(f);
}
END_TEST

static int with_var(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_mul(in[0], gb_variable_value(*(gb_variable **)user));
    return 1;
}

START_TEST(test_reason_freed_capture) {
    gb_variable *v = gb_variable_new("scale", gb_scalar(GB_F32, 2), true);
    gb_function_options o = {.user = &v};
    gb_function *f = gb_function_new("scaled", with_var, &o);
    gb_tensor *y, *x = gb_scalar(GB_F32, 3);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 6);
    gb_variable_free(v);
    v = gb_variable_new("scale", gb_scalar(GB_F32, 5), true);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 15);
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    assert_reason(f, "variable 'scale', which its graph captured, was freed; called at "
                     "test_graph_retrace.c:111" COST ". Fix: keep the variables a function uses "
                     "alive as long as the function");
    /* The stale concrete function was dropped: one remains. */
    ck_assert_int_eq(gb_function_get_stats(f).concrete, 1);
    gb_function_free(f);
    gb_variable_free(v);
}
END_TEST

static int rewrap_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_neg(in[0]);
    return 1;
}

/* The "function in a loop" mistake: a new gb_function around the same C
 * function each iteration; the warning counts across them. */
START_TEST(test_reason_rewrapped_and_warning) {
    int before = gb_warning_count();
    for (int i = 0; i < 5; i++) {
        gb_function *f = gb_function_new("neg", rewrap_fn, NULL);
        call1(f, gb_scalar(GB_F32, i));
        if (i == 1)
            assert_reason(f, "its C function was wrapped in a new gb_function at the line that "
                             "wrapped it before (test_graph_retrace.c:136), so the earlier "
                             "wrapper's traces are lost; called at " SITE COST ". Fix: create the gb_function once, outside the loop, and call it "
                             "many times");
        gb_function_free(f);
    }
    ck_assert_int_eq(gb_warning_count(), before + 1);
    ck_assert_str_eq(gb_last_warning(),
                     "function 'neg' traced 5 times in its last 5 calls, each time wrapped in a "
                     "new gb_function around the same C function at the same line. Tracing is expensive: create "
                     "the gb_function once, outside the loop, and call it many times");
}
END_TEST

/* 5 traces within the last 10 calls warn, naming the dim and its values;
 * at most twice per function. */
START_TEST(test_warning_names_varying_dim) {
    gb_function *f = square("retracer", false);
    int before = gb_warning_count();
    for (int n = 1; n <= 5; n++) call1(f, vec(n));
    ck_assert_int_eq(gb_warning_count(), before + 1);
    ck_assert_str_eq(gb_last_warning(),
                     "function 'retracer' traced 5 times in its last 5 calls; the argument that "
                     "varies is input 0 'x' dim 0 (values seen: 1, 2, 3, 4, 5). Tracing is "
                     "expensive: declare the dim -1 in an input signature (GB_SPEC), or set "
                     "reduce_retracing");
    for (int n = 6; n <= 20; n++) call1(f, vec(n));
    ck_assert_int_eq(gb_warning_count(), before + 2);
    gb_function_free(f);
}
END_TEST

/* Cache hits dilute the window: 4 traces among 10 calls do not warn. */
START_TEST(test_no_warning_below_rule) {
    gb_function *f = square("calm", false);
    int before = gb_warning_count();
    for (int n = 1; n <= 4; n++) {
        call1(f, vec(n));
        call1(f, vec(n));
        call1(f, vec(n));
    }
    ck_assert_int_eq(gb_warning_count(), before);
    gb_function_free(f);
}
END_TEST

START_TEST(test_reduce_retracing_relaxes_once) {
    gb_function *f = square("sq", true);
    call1(f, vec(3));
    call1(f, vec(4));
    call1(f, vec(5));
    call1(f, vec(3));
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    ck_assert_str_eq(gb_function_concrete_signatures(f), "sq(x: float32[-1]) -> (float32[-1])\n");
    gb_function_free(f);
}
END_TEST

/* Each trace multiplies by its own number (C code runs at trace time, so
 * the number is a constant of that graph): the output tells which
 * concrete function ran. */
static int traces_seen;
static int numbered_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_mul_scalar(in[0], ++traces_seen);
    return 1;
}

/* A cached signature that accepts the call is reused (as TensorFlow reuses
 * a trace for a supertype); where several accept it, the most specific
 * (fewest -1 dims) runs. */
START_TEST(test_most_specific_wins) {
    traces_seen = 0;
    gb_function *f = gb_function_new("numbered", numbered_fn, NULL);
    gb_tensor *y, *x = gb_ones(GB_F32, 1, (int64_t[]){3});
    gb_function_call(f, &x, 1, NULL, 0, &y); /* trace 1: float32[3] */
    gb_concrete_function *general =
        gb_function_get_concrete(f, (gb_tensor_spec[]){GB_SPEC("x", GB_F32, -1)}, 1, NULL, 0);
    ck_assert_int_eq(gb_function_tracing_count(f), 2); /* [3] does not accept [-1] */
    gb_function_call(f, &x, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_get(y, 0), 1); /* [3] and [-1] accept it: [3] runs */
    gb_tensor *x4 = gb_ones(GB_F32, 1, (int64_t[]){4});
    gb_function_call(f, &x4, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_get(y, 0), 2); /* only [-1] accepts it */
    ck_assert_int_eq(gb_function_tracing_count(f), 2);
    gb_concrete_function *again =
        gb_function_get_concrete(f, (gb_tensor_spec[]){GB_SPEC("x", GB_F32, 7)}, 1, NULL, 0);
    ck_assert_ptr_eq(again, general);
    gb_function_free(f);
}
END_TEST

/* ---- the trace event ------------------------------------------------------------------------ */

typedef struct seen_trace {
    int count;
    char function[64], reason[512], signature[256];
    int trace_number, nodes;
    bool graph_has_mul, retrace, first_retrace;
} seen_trace;

static void on_trace(const gb_event *ev, void *user) {
    seen_trace *s = user;
    const gb_trace_event *t = ev->detail;
    if (!s->count) s->first_retrace = t->retrace;
    s->count++;
    s->retrace = t->retrace;
    snprintf(s->function, sizeof s->function, "%s", t->function);
    snprintf(s->reason, sizeof s->reason, "%s", t->reason);
    snprintf(s->signature, sizeof s->signature, "%s", t->signature);
    s->trace_number = t->trace_number;
    s->nodes = t->nodes;
    s->graph_has_mul = strstr(t->graph, "= Mul(x, x)") != NULL;
}

START_TEST(test_trace_event) {
    seen_trace s = {0};
    int id = gb_observer_add(on_trace, &s, GB_EVENT_TRACE);
    gb_function *f = square("sq", false);
    call1(f, vec(3));
    call1(f, vec(3));
    call1(f, vec(2));
    gb_observer_remove(id);
    ck_assert_int_eq(s.count, 2);
    ck_assert_str_eq(s.function, "sq");
    ck_assert_int_eq(s.trace_number, 2);
    ck_assert(!s.first_retrace && s.retrace); /* a first call, then a retrace */
    ck_assert_str_eq(s.signature, "sq(x: float32[2]) -> (float32[2])");
    ck_assert_str_eq(s.reason, gb_function_last_trace_reason(f));
    ck_assert_int_eq(s.nodes, 2);
    ck_assert(s.graph_has_mul);
    gb_function_free(f);
}
END_TEST

typedef struct seen_counts {
    int events;
    gb_function_stats last;
} seen_counts;

static void on_counts(const gb_event *ev, void *user) {
    seen_counts *s = user;
    const gb_function_event *e = ev->detail;
    s->events++;
    s->last = e->stats;
}

/* Counters leave as events after the first call, then at most once a
 * second (no test can count on a second passing), when flushed (only
 * those that changed) and when the function is freed: exact at the end. */
START_TEST(test_counter_events) {
    seen_counts s = {0};
    int id = gb_observer_add(on_counts, &s, GB_EVENT_FUNCTION);
    gb_function *f = square("sq", false);
    for (int i = 0; i < 5; i++) call1(f, vec(3));
    ck_assert_int_ge(s.events, 1); /* the first call's, and maybe a later one */
    gb_function_flush_counters();
    ck_assert_int_eq(s.last.calls, 5);
    ck_assert_int_eq(s.last.cache_hits, 4);
    ck_assert_int_eq(s.last.traces, 1);
    int events = s.events;
    gb_function_flush_counters(); /* nothing changed: nothing sent */
    ck_assert_int_eq(s.events, events);
    call1(f, vec(3));
    gb_function_free(f);
    ck_assert_int_eq(s.last.calls, 6);
    ck_assert_int_eq(s.last.cache_hits, 5);
    gb_observer_remove(id);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_retrace");
    TCase *tc = tcase_create("reasons");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_reason_first_call);
    tcase_add_test(tc, test_reason_dim);
    tcase_add_test(tc, test_reason_rank_and_dtype);
    tcase_add_test(tc, test_reason_against_closest);
    tcase_add_test(tc, test_reason_freed_capture);
    tcase_add_test(tc, test_reason_rewrapped_and_warning);
    tcase_add_test(tc, test_warning_names_varying_dim);
    tcase_add_test(tc, test_no_warning_below_rule);
    tcase_add_test(tc, test_reduce_retracing_relaxes_once);
    tcase_add_test(tc, test_most_specific_wins);
    tcase_add_test(tc, test_trace_event);
    tcase_add_test(tc, test_counter_events);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
