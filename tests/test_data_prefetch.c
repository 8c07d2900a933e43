/* test_data_prefetch.c — prefetch on its background thread: the same
 * sequence as without it (wherever it sits in the pipeline), bounded
 * look-ahead on another thread, errors raised on the consumer's thread
 * with the same message, freeing mid-epoch in every state (ASan checks
 * nothing leaks), map functions calling ops on the background thread,
 * several iterators at once, and buffer recycling through the ring. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "glassbox.h"
#include "test_util.h"

enum { MAXN = 8192 };

static gb_dataset *range_ds(int64_t n) {
    gb_tensor *t[2] = {gb_arange(GB_I32, 0, (double)n, 1), gb_arange(GB_F32, 0, (double)n, 1)};
    return gb_dataset_from_tensor_slices(2, t);
}

/* Every value of every component, in order, plus the batch sizes. */
typedef struct trace {
    int64_t n, steps;
    double v[MAXN];
    int64_t sizes[MAXN];
} trace;

static void run_epoch(gb_iterator *it, int ncomp, trace *tr) {
    gb_tensor *b[GB_DATA_MAX_COMPONENTS];
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin()) {
        ck_assert_int_lt(tr->steps, MAXN);
        tr->sizes[tr->steps++] = gb_dim(b[0], 0);
        for (int k = 0; k < ncomp; k++)
            for (int64_t i = 0; i < gb_size(b[k]); i++) {
                ck_assert_int_lt(tr->n, MAXN);
                tr->v[tr->n++] = gb_get(b[k], i);
            }
    }
    gb_scope_end();
}

/* `epochs` epochs of ds, each with a fresh iterator. */
static trace *record(gb_dataset *ds, int epochs) {
    trace *tr = calloc(1, sizeof *tr);
    for (int e = 0; e < epochs; e++) {
        gb_iterator *it = gb_iterator_new(ds);
        ck_assert_ptr_nonnull(it);
        run_epoch(it, gb_dataset_num_components(ds), tr);
        gb_iterator_free(it);
    }
    ck_assert(gb_ok());
    return tr;
}

static void assert_same_trace(const trace *a, const trace *b) {
    ck_assert_int_eq(a->steps, b->steps);
    ck_assert_int_eq(a->n, b->n);
    for (int64_t i = 0; i < a->steps; i++) ck_assert_int_eq(a->sizes[i], b->sizes[i]);
    for (int64_t i = 0; i < a->n; i++) ck_assert_double_eq(a->v[i], b->v[i]);
}

/* shuffle -> batch -> repeat, with a prefetch at `where` (0: none, 1:
 * after shuffle, 2: after batch, 3: at the end). */
static gb_dataset *pipeline(int where, int depth) {
    gb_dataset *ds = gb_dataset_shuffle(range_ds(300), 64, 11);
    if (where == 1) ds = gb_dataset_prefetch(ds, depth);
    ds = gb_dataset_batch(ds, 7, false);
    if (where == 2) ds = gb_dataset_prefetch(ds, depth);
    ds = gb_dataset_repeat(ds, 2);
    if (where == 3) ds = gb_dataset_prefetch(ds, depth);
    return ds;
}

START_TEST(test_same_sequence_as_without_prefetch) {
    gb_dataset *plain = pipeline(0, 0);
    trace *want = record(plain, 3);
    ck_assert_int_eq(want->steps, 3 * 2 * 43);   /* 300 = 42 * 7 + 6 */
    ck_assert_int_eq(want->sizes[42], 6);
    ck_assert_int_eq(want->sizes[43], 7);
    const int depths[] = {1, 2, GB_DATA_AUTOTUNE, 5};
    for (int where = 1; where <= 3; where++)
        for (int d = 0; d < 4; d++) {
            gb_dataset *ds = pipeline(where, depths[d]);
            trace *got = record(ds, 3);
            assert_same_trace(want, got);
            free(got);
            gb_dataset_free(ds);
        }
    free(want);
    gb_dataset_free(plain);
}
END_TEST

/* prefetch(prefetch(...)) and two iterators of one dataset at once. */
START_TEST(test_nested_and_concurrent_iterators) {
    gb_dataset *plain = gb_dataset_batch(gb_dataset_shuffle(range_ds(300), 300, 4), 10, true);
    trace *want = record(plain, 1);
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_prefetch(gb_dataset_shuffle(range_ds(300), 300, 4), 3), 10,
                         true),
        2);
    /* Iterator k of a shuffle gets epoch k's order: interleave two. */
    gb_iterator *a = gb_iterator_new(ds), *b = gb_iterator_new(ds);
    trace *ta = calloc(1, sizeof *ta), *tb = calloc(1, sizeof *tb);
    gb_tensor *x[2];
    for (int step = 0; step < 30; step++) {
        gb_scope_begin();
        ck_assert(gb_iterator_next(a, x));
        for (int i = 0; i < 10; i++) ta->v[ta->n++] = gb_get(x[0], i);
        ck_assert(gb_iterator_next(b, x));
        for (int i = 0; i < 10; i++) tb->v[tb->n++] = gb_get(x[0], i);
        gb_scope_end();
    }
    gb_scope_begin();
    ck_assert(!gb_iterator_next(a, x));
    ck_assert(!gb_iterator_next(b, x));
    gb_scope_end();
    ck_assert(gb_ok());
    for (int i = 0; i < 300; i++) ck_assert_double_eq(ta->v[i], want->v[2 * (i / 10) * 10 + i % 10]);
    int same = 0;
    for (int i = 0; i < 300; i++) same += ta->v[i] == tb->v[i];
    ck_assert_int_lt(same, 30);   /* b is the second epoch: another order */
    gb_iterator_free(a);
    gb_iterator_free(b);
    free(ta);
    free(tb);
    free(want);
    gb_dataset_free(plain);
    gb_dataset_free(ds);
}
END_TEST

/* ---- a real background thread, n ahead ------------------------------------------ */

static atomic_int calls;
static atomic_bool off_main_thread;
static pthread_t main_thread;

static bool count_calls(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    atomic_fetch_add(&calls, 1);
    if (!pthread_equal(pthread_self(), main_thread)) atomic_store(&off_main_thread, true);
    out[0] = in[0];
    out[1] = in[1];
    return true;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to 10 s for `calls` to reach n. */
static bool wait_calls(int n) {
    for (int i = 0; i < 10000 && atomic_load(&calls) < n; i++) sleep_ms(1);
    return atomic_load(&calls) >= n;
}

START_TEST(test_runs_ahead_on_another_thread) {
    main_thread = pthread_self();
    atomic_store(&calls, 0);
    atomic_store(&off_main_thread, false);
    gb_dataset *ds = gb_dataset_prefetch(gb_dataset_map(range_ds(100), count_calls, NULL, 2), 3);
    gb_iterator *it = gb_iterator_new(ds);
    /* Before any next(): the thread fills the ring of 3 and stops. */
    ck_assert(wait_calls(3));
    sleep_ms(30);
    ck_assert_int_eq(atomic_load(&calls), 3);
    ck_assert(atomic_load(&off_main_thread));
    gb_tensor *b[2];
    gb_scope_begin();
    ck_assert(gb_iterator_next(it, b));
    ck_assert_double_eq(gb_item(b[0]), 0);
    gb_scope_end();
    /* Taking one makes room for exactly one more. */
    ck_assert(wait_calls(4));
    sleep_ms(30);
    ck_assert_int_eq(atomic_load(&calls), 4);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* ---- errors from the background thread --------------------------------------------- */

static bool fail_at_5(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = in[0];
    if (gb_item(in[0]) == 5) return gb_reshape(in[0], GB_SHAPE(2, 2)) != NULL;
    return true;
}

START_TEST(test_error_reaches_consumer_unchanged) {
    char want[768];
    gb_status want_code;
    for (int prefetch = 0; prefetch <= 1; prefetch++) {
        gb_dataset *ds = gb_dataset_map(range_ds(20), fail_at_5, NULL, 1);
        if (prefetch) ds = gb_dataset_prefetch(ds, 2);
        gb_iterator *it = gb_iterator_new(ds);
        gb_tensor *b;
        int n = 0;
        for (gb_scope_begin(); gb_iterator_next(it, &b); gb_scope_end(), gb_scope_begin()) n++;
        gb_scope_end();
        ck_assert_int_eq(n, 5);
        ck_assert(!gb_ok());
        if (!prefetch) {
            snprintf(want, sizeof want, "%s", gb_last_error()->message);
            want_code = gb_last_error()->code;
            ck_assert_ptr_nonnull(strstr(want, "Reshape"));
        } else {
            ck_assert_str_eq(gb_last_error()->message, want);
            ck_assert_int_eq(gb_last_error()->code, want_code);
            ck_assert_str_eq(gb_last_error()->op_type, "Reshape");
        }
        gb_clear_error();
        /* Raised once: the iterator then just ends. */
        gb_scope_begin();
        ck_assert(!gb_iterator_next(it, &b));
        gb_scope_end();
        ck_assert(gb_ok());
        gb_iterator_free(it);
        gb_dataset_free(ds);
    }
}
END_TEST

START_TEST(test_prefetch_argument_errors) {
    gb_dataset *src = range_ds(3);
    ck_assert_ptr_eq(gb_dataset_prefetch(src, 0), src);   /* 0: no prefetching */
    ck_assert_ptr_null(gb_dataset_prefetch(src, -3));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_dataset_prefetch: n must be >= 0 or GB_DATA_AUTOTUNE (-1), got -3");
}
END_TEST

/* ---- shutdown ---------------------------------------------------------------------- */

/* Free right after creation, after one batch, with the ring full, at the
 * end, and with tensors still alive: nothing leaks, nothing hangs. */
START_TEST(test_free_mid_epoch) {
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_shuffle(range_ds(2000), 1000, 1), 32, false), 2);
    for (int round = 0; round < 40; round++) {
        gb_iterator *it = gb_iterator_new(ds);
        ck_assert_ptr_nonnull(it);
        gb_tensor *b[2];
        int take = round % 4 == 0 ? 0 : round % 4 == 1 ? 1 : round % 4 == 2 ? 5 : 1000;
        gb_scope_begin();
        for (int i = 0; i < take && gb_iterator_next(it, b); i++) {
            ck_assert_int_le(gb_dim(b[0], 0), 32);
        }
        if (round % 4 == 2) sleep_ms(2);   /* let the ring fill */
        gb_iterator_free(it);             /* b still alive: freed at scope end */
        if (take == 5) ck_assert_int_eq(gb_dim(b[0], 0), 32);
        gb_scope_end();
    }
    ck_assert(gb_ok());
    gb_dataset_free(ds);
}
END_TEST

/* The producer is mid-map (slow) when the iterator is freed. */
static bool slow(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    sleep_ms(5);
    out[0] = in[0];
    return true;
}

START_TEST(test_free_while_producing) {
    gb_dataset *ds = gb_dataset_prefetch(gb_dataset_map(range_ds(1000), slow, NULL, 1), 4);
    for (int round = 0; round < 5; round++) {
        gb_iterator *it = gb_iterator_new(ds);
        sleep_ms(7);
        gb_iterator_free(it);
    }
    ck_assert(gb_ok());
    gb_dataset_free(ds);
}
END_TEST

/* Map functions call ops on the worker thread, epoch after epoch: the
 * worker's scope memory is reused, not leaked (ASan). */
static bool scale(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = gb_mul_scalar(in[1], 0.5);
    return out[0] != NULL;
}

START_TEST(test_map_with_ops_many_epochs) {
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_map(range_ds(64), scale, NULL, 1), 16, false), 2);
    for (int epoch = 0; epoch < 20; epoch++) {
        trace *tr = record(ds, 1);
        ck_assert_int_eq(tr->n, 64);
        for (int i = 0; i < 64; i++) ck_assert_double_eq(tr->v[i], 0.5 * i);
        free(tr);
    }
    gb_dataset_free(ds);
}
END_TEST

/* Hooks switched on and off by the training thread while a prefetch
 * worker runs ops: the switches and the dispatcher's reads of them are
 * atomics, so ThreadSanitizer (make test-tsan) finds no race, and the
 * values are unchanged. */
static void count_op_events(const gb_event *ev, void *user) {
    (void)ev;
    atomic_fetch_add((_Atomic int *)user, 1);
}

START_TEST(test_hooks_toggled_while_worker_runs_ops) {
    _Atomic int events = 0;
    int id = gb_observer_add(count_op_events, &events, GB_EVENT_OP);
    gb_dataset *ds = gb_dataset_prefetch(gb_dataset_map(range_ds(2000), scale, NULL, 1), 4);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[1];
    for (int step = 0; step < 2000; step++) {
        gb_set_op_timing(step % 2 == 0);
        if (step % 7 == 0) gb_enable_check_numerics();
        if (step % 7 == 3) gb_disable_check_numerics();
        gb_scope_begin();
        ck_assert(gb_iterator_next(it, b));
        ck_assert_double_eq(gb_get(b[0], 0), 0.5 * step);
        gb_scope_end();
    }
    gb_set_op_timing(false);
    gb_disable_check_numerics();
    gb_iterator_free(it);
    gb_dataset_free(ds);
    gb_observer_remove(id);
    ck_assert_int_gt(atomic_load(&events), 0);
}
END_TEST

/* Buffers come back through the ring: a long prefetched run stays flat. */
START_TEST(test_prefetch_steady_state) {
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_repeat(range_ds(100), -1), 10, false), 2);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    gb_iterator_stats st;
    for (int step = 0; step < 500; step++) {
        gb_scope_begin();
        ck_assert(gb_iterator_next(it, b));
        ck_assert_double_eq(gb_get(b[0], 0), (step * 10) % 100);
        gb_scope_end();
    }
    gb_iterator_get_stats(it, &st);
    /* At most ring 2 + one being made + one with the consumer, for each
     * of the 2 components (how many of those were needed depends on the
     * threads' timing). */
    ck_assert_int_le(st.buffers_allocated, 2 * 4);
    ck_assert_int_eq(st.buffers_in_use, 0);
    ck_assert_int_eq(st.elements, 500);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_prefetch");
    TCase *tc = tcase_create("prefetch");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_same_sequence_as_without_prefetch);
    tcase_add_test(tc, test_nested_and_concurrent_iterators);
    tcase_add_test(tc, test_runs_ahead_on_another_thread);
    tcase_add_test(tc, test_error_reaches_consumer_unchanged);
    tcase_add_test(tc, test_prefetch_argument_errors);
    tcase_add_test(tc, test_free_mid_epoch);
    tcase_add_test(tc, test_free_while_producing);
    tcase_add_test(tc, test_map_with_ops_many_epochs);
    tcase_add_test(tc, test_prefetch_steady_state);
    tcase_add_test(tc, test_hooks_toggled_while_worker_runs_ops);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
