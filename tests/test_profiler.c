/* test_profiler.c — the profiler's capture: ops eager and traced, their
 * shapes, FLOPs and bytes, step windows, the data pipeline's ranges, and
 * that its op times are exactly the ones op timing emits. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

/* What an observer saw: the last profile (kept) and op timing's sum. */
typedef struct seen {
    const gb_profile *profile;
    int profiles;
    double op_timing_us;
    int op_timings;
} seen;

static void observe(const gb_event *ev, void *user) {
    seen *s = user;
    if (ev->kind == GB_EVENT_PROFILE) {
        if (s->profile) gb_profile_release(s->profile);
        gb_profile_retain(ev->detail);
        s->profile = ev->detail;
        s->profiles++;
    } else if (ev->kind == GB_EVENT_OP) {
        s->op_timing_us += ev->duration_us;
        s->op_timings++;
    }
}

static int watch(seen *s) {
    *s = (seen){0};
    return gb_observer_add(observe, s, GB_EVENT_PROFILE | GB_EVENT_OP);
}

static void unwatch(int id, seen *s) {
    gb_observer_remove(id);
    if (s->profile) gb_profile_release(s->profile);
}

static const gb_profile_record *find(const gb_profile *p, gb_profile_kind kind, const char *name) {
    for (size_t i = 0; i < p->count; i++)
        if (p->records[i].kind == kind && !strcmp(p->records[i].name, name)) return &p->records[i];
    return NULL;
}

static int count_kind(const gb_profile *p, gb_profile_kind kind) {
    int n = 0;
    for (size_t i = 0; i < p->count; i++) n += p->records[i].kind == kind;
    return n;
}

START_TEST(test_eager_ops_with_shapes_flops_bytes) {
    seen s;
    int id = watch(&s);
    gb_scope_begin();
    gb_tensor *a = gb_ones(GB_F32, GB_SHAPE(8, 16)), *b = gb_ones(GB_F32, GB_SHAPE(16, 4));
    ck_assert_int_eq(gb_profiler_start(NULL), GB_OK);
    ck_assert(gb_profiler_active());
    gb_name_scope_push("layer");
    gb_tensor *c = gb_matmul(a, b);
    gb_name_scope_pop();
    gb_relu(c);
    ck_assert_int_eq(gb_profiler_stop(), GB_OK);
    ck_assert(!gb_profiler_active());
    gb_relu(c);   /* after stop: not recorded */
    ck_assert_int_eq(s.profiles, 1);
    const gb_profile *p = s.profile;
    ck_assert_uint_eq(p->count, 2);
    ck_assert_int_eq(p->nthreads, 1);
    ck_assert_str_eq(p->threads[0], "training");
    const gb_profile_record *mm = find(p, GB_PROFILE_OP, "layer/MatMul");
    ck_assert_ptr_nonnull(mm);
    ck_assert_str_eq(mm->op_type, "MatMul");
    ck_assert_str_eq(mm->function, "");
    ck_assert_double_eq(mm->flops, 2.0 * 8 * 4 * 16);
    ck_assert_int_eq(mm->bytes, 8 * 4 * 4);
    ck_assert_int_eq(mm->step, -1);
    ck_assert(!mm->backward);
    char shapes[64];
    ck_assert_str_eq(gb_profile_shapes_text(mm, shapes, sizeof shapes), "[8,16] [16,4]");
    const gb_profile_record *relu = find(p, GB_PROFILE_OP, "Relu");
    ck_assert_ptr_nonnull(relu);
    ck_assert_double_eq(relu->flops, 0);
    ck_assert(relu->start_us >= mm->start_us + mm->dur_us);
    ck_assert(relu->start_us + relu->dur_us <= p->duration_us);
    ck_assert_int_ge(relu->live_bytes, 8 * 4 * 4 * 2);
    gb_scope_end();
    unwatch(id, &s);
}
END_TEST

START_TEST(test_start_stop_errors) {
    ck_assert_int_eq(gb_profiler_stop(), GB_ERR_STATE);
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_profiler_stop: no capture is running (gb_profiler_start begins one)");
    gb_clear_error();
    ck_assert_int_eq(gb_profiler_start(&(gb_profiler_options){.steps = -1}), GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message, "gb_profiler_start: steps must be >= 0, got -1");
    gb_clear_error();
    ck_assert_int_eq(gb_profiler_start(NULL), GB_OK);
    ck_assert_int_eq(gb_profiler_start(NULL), GB_ERR_STATE);
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_profiler_start: a capture is running already (gb_profiler_stop ends it)");
    gb_clear_error();
    ck_assert_int_eq(gb_profiler_stop(), GB_OK);
    ck_assert_str_eq(gb_profile_kind_name(GB_PROFILE_COMM_WAIT), "comm_wait");
    ck_assert_ptr_null(gb_profile_kind_name(GB_PROFILE_KIND_COUNT));
}
END_TEST

static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_tanh(gb_matmul(in[0], in[0]));
    return 1;
}

/* A window of 2 steps ends by itself when the third begins; the traced
 * function's nodes are recorded with its name, and their times are the
 * ones op timing emitted for the same calls, to the last bit. */
START_TEST(test_traced_steps_window_matches_op_timing) {
    seen s;
    int id = watch(&s);
    gb_scope_begin();
    gb_function *f = gb_function_new("step", step_fn, NULL);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(32, 32)), *y;
    gb_function_call(f, &x, 1, NULL, 0, &y);   /* traced outside the window */
    gb_set_op_timing(true);
    ck_assert_int_eq(gb_profiler_start(&(gb_profiler_options){.steps = 2}), GB_OK);
    for (int64_t step = 1; step <= 3; step++) {
        gb_set_step(step);
        if (step <= 2) gb_function_call(f, &x, 1, NULL, 0, &y);
    }
    gb_set_op_timing(false);
    ck_assert(!gb_profiler_active());
    ck_assert_int_eq(s.profiles, 1);
    const gb_profile *p = s.profile;
    ck_assert_int_eq(count_kind(p, GB_PROFILE_STEP), 3);
    ck_assert_int_eq(count_kind(p, GB_PROFILE_OP), 4);
    double total = 0;
    for (size_t i = 0; i < p->count; i++) {
        const gb_profile_record *r = &p->records[i];
        if (r->kind != GB_PROFILE_OP) continue;
        ck_assert_str_eq(r->function, "step");
        ck_assert(r->step == 1 || r->step == 2);
        total += r->dur_us;
    }
    ck_assert_int_eq(s.op_timings, 4);
    ck_assert(total == s.op_timing_us);
    ck_assert_ptr_nonnull(find(p, GB_PROFILE_STEP, "step 3"));
    gb_function_free(f);
    gb_clear_step();
    gb_scope_end();
    unwatch(id, &s);
}
END_TEST

static bool double_it(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = gb_add(in[0], in[0]);
    return true;
}

/* The consumer's waits on the training thread, the map on the prefetch
 * thread, each thread named. */
START_TEST(test_pipeline_ranges_on_their_threads) {
    seen s;
    int id = watch(&s);
    gb_scope_begin();
    gb_tensor *t = gb_ones(GB_F32, GB_SHAPE(6, 2));
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_map(gb_dataset_from_tensor_slices(1, &t), double_it, NULL, 1), 2);
    ck_assert_int_eq(gb_profiler_start(NULL), GB_OK);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e;
    int n = 0;
    while (gb_iterator_next(it, &e)) n++;
    gb_iterator_free(it);
    ck_assert_int_eq(gb_profiler_stop(), GB_OK);
    ck_assert_int_eq(n, 6);
    const gb_profile *p = s.profile;
    ck_assert_int_eq(count_kind(p, GB_PROFILE_INPUT_WAIT), 7);   /* 6 and the end */
    ck_assert_int_eq(count_kind(p, GB_PROFILE_MAP), 6);
    const gb_profile_record *wait = find(p, GB_PROFILE_INPUT_WAIT, "next batch");
    const gb_profile_record *map = find(p, GB_PROFILE_MAP, "map");
    ck_assert_str_eq(p->threads[wait->thread], "training");
    /* The consumer may make an element itself when the producer is idle. */
    const char *map_thread = p->threads[map->thread];
    ck_assert_msg(!strcmp(map_thread, "prefetch") || !strcmp(map_thread, "training"), "%s",
                  map_thread);
    gb_dataset_free(ds);
    gb_scope_end();
    unwatch(id, &s);
}
END_TEST

static Suite *profiler_suite(void) {
    Suite *s = suite_create("profiler");
    TCase *t = tcase_create("capture");
    tcase_add_test(t, test_eager_ops_with_shapes_flops_bytes);
    tcase_add_test(t, test_start_stop_errors);
    tcase_add_test(t, test_traced_steps_window_matches_op_timing);
    tcase_add_test(t, test_pipeline_ranges_on_their_threads);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    SRunner *r = srunner_create(profiler_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
