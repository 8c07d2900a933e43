/* test_summary_profile.c — a profiler capture through the writer into the
 * store and back: the ops table's totals against the executor's own op
 * timings of the same steps, and the steps' breakdown and its sentence on
 * a capture of known numbers. */
#include <check.h>
#include <string.h>

#include "gb_reader.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"

static char dir[256], db[320];

static void setup(void) { SUMMARY_TEMP_STORE(dir, db, "gb_profile"); }
static void teardown(void) { summary_remove_dir(dir); }

static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *h = gb_relu(gb_matmul(in[0], in[1]));
    out[0] = gb_reduce_sum(gb_mul(h, h), NULL, 0, false);
    return 1;
}

static gb_store *open_store(void) {
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    return s;
}

/* trace_on(profile) .. trace_export over 3 steps of a traced function:
 * for every op name, the ops table's calls and total time are the ones
 * the executor's op timings (the Graphs page's compute share) stored. */
START_TEST(test_ops_table_totals_match_op_timings) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    gb_summary_set_default(w);
    gb_scope_begin();
    gb_function *f = gb_function_new("train_step", step_fn, NULL);
    gb_tensor *in[2] = {gb_ones(GB_F32, GB_SHAPE(16, 32)), gb_ones(GB_F32, GB_SHAPE(32, 8))}, *y;
    ck_assert_int_eq(gb_summary_trace_on(w, true), GB_OK);   /* step 1 traces, then runs */
    for (int64_t step = 1; step <= 3; step++) {
        gb_set_step(step);
        gb_function_call(f, in, 2, NULL, 0, &y);
    }
    ck_assert_int_eq(gb_summary_trace_export(w, "train_step", 3), GB_OK);
    ck_assert(!gb_profiler_active());
    gb_function_free(f);
    gb_clear_step();
    gb_scope_end();
    gb_summary_set_default(NULL);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_profile_list *list;
    ck_assert_int_eq(gb_store_profiles(s, "run", &list), GB_STORE_OK);
    ck_assert_uint_eq(list->count, 1);
    ck_assert_str_eq(list->rows[0].threads_json, "[\"training\"]");
    gb_profile_events *ev;
    ck_assert_int_eq(gb_store_profile_events(s, "run", list->rows[0].id, 0, 0, &ev), GB_STORE_OK);
    ck_assert_int_eq((int64_t)ev->count, list->rows[0].record_count);
    gb_profile_ops *ops;
    ck_assert_int_eq(gb_profile_ops_of(ev, false, &ops), GB_STORE_OK);
    gb_op_timings *t;
    ck_assert_int_eq(gb_store_function_op_timings(s, "run", "train_step", &t), GB_STORE_OK);
    ck_assert_uint_eq(ops->count, t->count);
    ck_assert_uint_eq(ops->count, 3);   /* MatMul, Relu and Mul fused, Sum */
    for (size_t i = 0; i < t->count; i++) {
        const gb_profile_op_row *match = NULL;
        for (size_t j = 0; j < ops->count; j++)
            if (!strcmp(ops->rows[j].key, t->rows[i].op_name)) match = &ops->rows[j];
        ck_assert_msg(match != NULL, "%s is not in the ops table", t->rows[i].op_name);
        ck_assert_int_eq(match->calls, 3);
        ck_assert_int_eq(match->calls, t->rows[i].calls);
        ck_assert_str_eq(match->op_type, t->rows[i].op_type);
        ck_assert_str_eq(match->function, "train_step");
        /* the same kernel times, summed in another order */
        ck_assert_double_eq_tol(match->total_us, t->rows[i].total_us, 1e-6);
        ck_assert_double_eq(match->self_us, match->total_us);   /* nothing nests */
    }
    gb_profile_steps *steps;
    ck_assert_int_eq(gb_profile_steps_of(ev, &steps), GB_STORE_OK);
    ck_assert_uint_eq(steps->count, 3);
    ck_assert_int_eq(steps->rows[0].step, 1);
    gb_store_free(steps);
    gb_store_free(t);
    gb_store_free(ops);
    gb_store_free(ev);
    gb_store_free(list);
    gb_store_close(s);
}
END_TEST

/* A capture of known times, written as the writer would: two steps of
 * 100 us on the training thread, each with 40 us of input wait, a 30 us
 * MatMul holding a 10 us nested op, a backward op and an update; a map
 * on the prefetch thread that is no part of any step. */
static void write_known_capture(void) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    summary_sql(db,
        "INSERT INTO profiles(id, run_id, wall_time, duration_us, threads, record_count) "
        "VALUES (7, 1, 1, 200, '[\"training\",\"prefetch\"]', 13);"
        "INSERT INTO profile_events(profile_id, kind, thread, step, start_us, dur_us, name, "
        "op_type, backward) VALUES "
        "(7, 'step', 0, 1, 0, 0, 'step 1', '', 0),"
        "(7, 'input_wait', 0, 1, 0, 40, 'next batch', '', 0),"
        "(7, 'op', 0, 1, 40, 30, 'dense/MatMul', 'MatMul', 0),"
        "(7, 'op', 0, 1, 45, 10, 'dense/Inner', 'Add', 0),"
        "(7, 'op', 0, 1, 70, 15, 'gradients/dense/MatMul_grad', 'MatMul', 1),"
        "(7, 'op', 0, 1, 85, 5, 'Adam/ResourceApplyAdam', 'ResourceApplyAdam', 0),"
        "(7, 'step', 0, 2, 100, 0, 'step 2', '', 0),"
        "(7, 'input_wait', 0, 2, 100, 40, 'next batch', '', 0),"
        "(7, 'op', 0, 2, 140, 30, 'dense/MatMul', 'MatMul', 0),"
        "(7, 'optimizer', 0, 2, 170, 20, 'SGD', '', 0),"
        "(7, 'op', 0, 2, 175, 10, 'SGD/ResourceApplyGradientDescent', "
        "'ResourceApplyGradientDescent', 0),"
        "(7, 'step', 0, 3, 200, 0, 'step 3', '', 0),"
        "(7, 'map', 1, NULL, 10, 80, 'map', '', 0);");
}

START_TEST(test_steps_and_ops_of_a_known_capture) {
    write_known_capture();
    gb_store *s = open_store();
    gb_profile_events *ev;
    ck_assert_int_eq(gb_store_profile_events(s, "run", 7, 0, 0, &ev), GB_STORE_OK);
    ck_assert_uint_eq(ev->count, 13);
    ck_assert_str_eq(ev->rows[12].kind, "map");
    ck_assert_int_eq(ev->rows[12].step, GB_STEP_NONE);
    gb_profile_steps *st;
    ck_assert_int_eq(gb_profile_steps_of(ev, &st), GB_STORE_OK);
    ck_assert_uint_eq(st->count, 2);   /* the mark that ended the window begins none */
    const gb_profile_step_row *a = &st->rows[0], *b = &st->rows[1];
    ck_assert_double_eq(a->step_us, 100);
    ck_assert_double_eq(a->input_us, 40);
    ck_assert_double_eq(a->forward_us, 30);   /* 20 self + 10 nested */
    ck_assert_double_eq(a->backward_us, 15);
    ck_assert_double_eq(a->optimizer_us, 5);
    ck_assert_double_eq(a->other_us, 10);
    ck_assert_double_eq(b->forward_us, 30);
    ck_assert_double_eq(b->optimizer_us, 20);   /* the range, not its op again */
    ck_assert_double_eq(b->other_us, 10);
    ck_assert_str_eq(st->bound, "input");
    ck_assert_str_eq(st->sentence, "input-bound: 40 % of the step waiting for data");
    gb_store_free(st);

    gb_profile_ops *ops;
    ck_assert_int_eq(gb_profile_ops_of(ev, true, &ops), GB_STORE_OK);
    ck_assert_uint_eq(ops->count, 4);
    ck_assert_str_eq(ops->rows[0].key, "MatMul");
    ck_assert_int_eq(ops->rows[0].calls, 3);
    ck_assert_double_eq(ops->rows[0].total_us, 75);
    ck_assert_double_eq(ops->rows[0].self_us, 65);
    ck_assert_double_eq(ops->self_us, 90);
    ck_assert_double_eq_tol(ops->rows[0].share, 65.0 / 90, 1e-12);
    gb_store_free(ops);
    ck_assert_int_eq(gb_profile_ops_of(ev, false, &ops), GB_STORE_OK);
    ck_assert_str_eq(ops->rows[0].key, "dense/MatMul");
    ck_assert_str_eq(ops->rows[0].op_type, "MatMul");
    ck_assert_double_eq(ops->rows[0].self_us, 50);
    gb_store_free(ops);
    gb_store_free(ev);
    gb_store_close(s);
}
END_TEST

/* A capture the program started goes on through trace_on(profile) ..
 * trace_export, and is the program's to stop: one capture is stored. */
START_TEST(test_trace_on_leaves_a_running_capture_alone) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    gb_summary_set_default(w);
    gb_scope_begin();
    ck_assert_int_eq(gb_profiler_start(NULL), GB_OK);
    ck_assert_int_eq(gb_summary_trace_on(w, true), GB_OK);
    gb_function *f = gb_function_new("train_step", step_fn, NULL);
    gb_tensor *in[2] = {gb_ones(GB_F32, GB_SHAPE(4, 4)), gb_ones(GB_F32, GB_SHAPE(4, 4))}, *y;
    gb_function_call(f, in, 2, NULL, 0, &y);
    ck_assert_int_eq(gb_summary_trace_export(w, "train_step", 1), GB_OK);
    ck_assert(gb_profiler_active());
    ck_assert_int_eq(gb_profiler_stop(), GB_OK);
    gb_function_free(f);
    gb_scope_end();
    gb_summary_set_default(NULL);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_profile_list *list;
    ck_assert_int_eq(gb_store_profiles(s, "run", &list), GB_STORE_OK);
    ck_assert_uint_eq(list->count, 1);
    gb_store_free(list);
    gb_store_close(s);
}
END_TEST

static Suite *profile_suite(void) {
    Suite *s = suite_create("summary_profile");
    TCase *t = tcase_create("profile");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_ops_table_totals_match_op_timings);
    tcase_add_test(t, test_steps_and_ops_of_a_known_capture);
    tcase_add_test(t, test_trace_on_leaves_a_running_capture_alone);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    SRunner *r = srunner_create(profile_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
