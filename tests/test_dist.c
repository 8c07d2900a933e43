/* test_dist.c — data-parallel training in one process: the job of one that
 * every program gets without an MPI launcher (or without MPI), the bucket
 * plan and packing, the tape's hook that reports gradients as backward
 * makes them, metrics combined from their states, and the per-step
 * timing events. Several ranks are tested under mpirun (tests/dist.cmake).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "autodiff/internal.h"
#include "dist/internal.h"
#include "test_util.h"

static void dist_setup(void) {
    /* A launcher's variables would make this a rank of a job. */
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("PMIX_RANK");
    scope_setup();
}

static gb_variable *var(const char *name, gb_dtype dt, int64_t n, double value) {
    return gb_variable_new(name, gb_fill(dt, 1, (int64_t[]){n}, value), true);
}

/* ---- the job of one ------------------------------------------------------------------ */

START_TEST(test_job_of_one) {
    ck_assert_int_eq(gb_dist_rank(), 0);
    ck_assert_int_eq(gb_dist_size(), 1);
    ck_assert(gb_dist_init(NULL, NULL));
    ck_assert(gb_dist_init(NULL, NULL));   /* again: nothing */
    ck_assert_int_eq(gb_dist_rank(), 0);
    ck_assert_int_eq(gb_dist_size(), 1);
#ifdef GB_TEST_HAVE_MPI
    ck_assert(gb_dist_available());
#else
    ck_assert(!gb_dist_available());
#endif
    gb_tensor *x = gb_from_f32((float[]){1, -2, 3}, GB_SHAPE(3));
    gb_tensor *sum = gb_dist_allreduce(x, GB_DIST_SUM), *mean = gb_dist_allreduce(x, GB_DIST_MEAN);
    gb_tensor *b = gb_dist_broadcast(x, 0);
    ck_assert_ptr_nonnull(sum);
    for (int i = 0; i < 3; i++) {
        ck_assert_double_eq(gb_get(sum, i), gb_get(x, i));
        ck_assert_double_eq(gb_get(mean, i), gb_get(x, i));
        ck_assert_double_eq(gb_get(b, i), gb_get(x, i));
    }
    ck_assert_ptr_ne(gb_data(sum), gb_data(x));   /* a new tensor, not the input */
    double v[2] = {4, 5};
    ck_assert(gb_dist_allreduce_doubles(v, 2, GB_DIST_MAX));
    ck_assert_double_eq(v[0], 4);
    ck_assert(gb_dist_barrier());
    gb_dist_finalize();
    ck_assert_int_eq(gb_dist_size(), 1);
}
END_TEST

START_TEST(test_collective_errors) {
    ck_assert(gb_dist_init(NULL, NULL));
    ck_assert_ptr_null(gb_dist_allreduce(gb_fill(GB_U8, 1, (int64_t[]){2}, 1), GB_DIST_SUM));
    assert_error(GB_ERR_DTYPE, "gb_dist_allreduce: cannot reduce uint8 values");
    ck_assert_ptr_null(gb_dist_allreduce(gb_fill(GB_I32, 1, (int64_t[]){2}, 1), GB_DIST_MEAN));
    assert_error(GB_ERR_DTYPE, "gb_dist_allreduce: cannot average int32 values");
    ck_assert_ptr_null(gb_dist_broadcast(gb_scalar(GB_F32, 1), 1));
    assert_error(GB_ERR_VALUE, "gb_dist_broadcast: root 1 is not a rank (size 1)");
    ck_assert_ptr_null(gb_dist_allreduce(NULL, GB_DIST_SUM));
    assert_error(GB_ERR_VALUE, "gb_dist_allreduce: the tensor is NULL");
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(2, NULL));
    ck_assert(!gb_dist_broadcast_model(m, NULL, 0));
    assert_error(GB_ERR_STATE, "gb_dist_broadcast_model: the model is not built; build it first");
    gb_module_free(m);
    gb_dist_options bad = {.timeout_seconds = -1};
    ck_assert(!gb_dist_set_options(&bad));
    assert_error(GB_ERR_VALUE, "must be >= 0");
}
END_TEST

START_TEST(test_options_from_environment) {
    setenv("GB_DIST_TIMEOUT", "7.5", 1);
    setenv("GB_DIST_BUCKET_KB", "64", 1);
    setenv("GB_DIST_OVERLAP", "0", 1);
    ck_assert(gb_dist_init(NULL, NULL));
    gb_dist_options o = gb_dist_get_options();
    ck_assert_double_eq(o.timeout_seconds, 7.5);
    ck_assert_int_eq(o.bucket_bytes, 64 * 1024);
    ck_assert(o.no_overlap);
    ck_assert_int_eq(o.timing_every, 10);
    ck_assert(gb_dist_set_options(&(gb_dist_options){.timing_every = 3}));
    o = gb_dist_get_options();
    ck_assert_int_eq(o.timing_every, 3);
    ck_assert(!o.no_overlap);   /* set_options always takes no_overlap */
    ck_assert_double_eq(o.timeout_seconds, 7.5);
}
END_TEST

START_TEST(test_broadcast_model_and_average_variables) {
    ck_assert(gb_dist_init(NULL, NULL));
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(3, NULL));
    ck_assert(gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 4}));
    gb_optimizer *opt = gb_adam(1e-3);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m, &n);
    ck_assert(gb_optimizer_build(opt, vars, n));
    ck_assert(gb_optimizer_set_iterations(opt, 12));
    double before = gb_get(gb_variable_value(vars[0]), 5);
    ck_assert(gb_dist_broadcast_model(m, opt, 0));
    ck_assert_double_eq(gb_get(gb_variable_value(vars[0]), 5), before);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 12);
    ck_assert(gb_dist_average_variables(vars, n));
    ck_assert_double_eq(gb_get(gb_variable_value(vars[0]), 5), before);
    gb_optimizer_free(opt);
    gb_module_free(m);
}
END_TEST

/* ---- buckets -------------------------------------------------------------------------------- */

/* Variables of 100, 300, 50 and 20 float32s with a 1600-byte cap (400
 * floats): in reverse order, 20+50 fit, 300 would make 370, still fits;
 * 100 would make 470, so it opens a second bucket. */
START_TEST(test_plan_buckets_in_reverse_order) {
    gb_variable *v[4] = {var("a", GB_F32, 100, 0), var("b", GB_F32, 300, 0),
                         var("c", GB_F32, 50, 0), var("d", GB_F32, 20, 0)};
    gb__buckets *p = gb__buckets_new(v, 4, 1600);
    ck_assert_int_eq(p->nbuckets, 2);
    ck_assert_int_eq(p->buckets[0].count, 3);
    ck_assert_int_eq(p->buckets[0].elements, 370);
    ck_assert_int_eq(p->order[0], 3);
    ck_assert_int_eq(p->order[1], 2);
    ck_assert_int_eq(p->order[2], 1);
    ck_assert_int_eq(p->order[3], 0);
    ck_assert_int_eq(p->bucket_of[0], 1);
    ck_assert_int_eq(p->offset[1], 70);
    ck_assert_str_eq(p->what[1], "allreduce of gradient bucket 2 of 2");
    ck_assert(gb__buckets_fits(p, v, 4, 1600));
    ck_assert(!gb__buckets_fits(p, v, 4, 3200));
    ck_assert(!gb__buckets_fits(p, v, 3, 1600));
    gb__buckets_free(p);
    /* A variable bigger than the cap travels alone; a new dtype starts a bucket. */
    gb_variable *w[3] = {var("e", GB_F64, 10, 0), var("f", GB_F32, 1000, 0), var("g", GB_F32, 5, 0)};
    p = gb__buckets_new(w, 3, 1600);
    ck_assert_int_eq(p->nbuckets, 3);
    ck_assert_int_eq(p->buckets[0].elements, 5);
    ck_assert_int_eq(p->buckets[1].elements, 1000);
    ck_assert_int_eq(p->buckets[2].dtype, GB_F64);
    gb__buckets_free(p);
    for (int i = 0; i < 4; i++) gb_variable_free(v[i]);
    for (int i = 0; i < 3; i++) gb_variable_free(w[i]);
}
END_TEST

START_TEST(test_plan_pack_and_view) {
    gb_variable *v[3] = {var("a", GB_F32, 4, 0), var("b", GB_F32, 2, 0), var("c", GB_F32, 3, 0)};
    gb__buckets *p = gb__buckets_new(v, 3, 1 << 20);
    ck_assert_int_eq(p->nbuckets, 1);
    ck_assert(gb__buckets_begin_step(p));
    gb_buffer *first = p->buckets[0].buf;
    ck_assert_int_eq(gb__buckets_pack(p, 2, gb_fill(GB_F32, 1, (int64_t[]){3}, 3)), -1);
    ck_assert_int_eq(gb__buckets_pack(p, 0, gb_fill(GB_F32, 1, (int64_t[]){4}, 1)), -1);
    ck_assert_int_eq(gb__buckets_pack(p, 1, NULL), 0);   /* the last member: bucket 0 is complete */
    gb_scope_begin();
    gb_tensor *a = gb__buckets_view(p, 0), *b = gb__buckets_view(p, 1), *c = gb__buckets_view(p, 2);
    ck_assert_int_eq(gb_dim(a, 0), 4);
    ck_assert_double_eq(gb_get(a, 3), 1);
    ck_assert_double_eq(gb_get(b, 1), 0);   /* no gradient: zeros */
    ck_assert_double_eq(gb_get(c, 0), 3);
    ck_assert_ptr_eq(gb_data(c), first->data);   /* c comes first: reverse order, no copy */
    /* A view alive into the next step: that step packs into a new buffer. */
    ck_assert(gb__buckets_begin_step(p));
    ck_assert_ptr_ne(p->buckets[0].buf, first);
    ck_assert_double_eq(gb_get(a, 3), 1);
    gb_scope_end();
    gb_buffer *second = p->buckets[0].buf;
    ck_assert(gb__buckets_begin_step(p));   /* nobody views it: reused */
    ck_assert_ptr_eq(p->buckets[0].buf, second);
    ck_assert_int_eq(gb__buckets_pack(p, 0, gb_fill(GB_F32, 1, (int64_t[]){5}, 1)), -2);
    assert_error(GB_ERR_VALUE, "the gradient of 'a' is float32 [5]; the variable is float32 "
                               "with 4 elements");
    gb__buckets_free(p);
    for (int i = 0; i < 3; i++) gb_variable_free(v[i]);
}
END_TEST

/* ---- the tape's hook ------------------------------------------------------------------------- */

typedef struct heard {
    int order[8], n, between;
    double value[8];
} heard;

static void heard_ready(void *user, int source, gb_tensor *grad) {
    heard *h = user;
    h->value[h->n] = grad ? gb_get(grad, 0) : NAN;
    h->order[h->n++] = source;
}

static void heard_between(void *user) { ((heard *)user)->between++; }

/* y = w2 * relu(w1 * x) + w0 * 0 ... three layers read in order w1, w2,
 * w3; backward finishes w3 first, then w2, then w1; u is never read. */
START_TEST(test_hook_reports_gradients_as_final) {
    gb_variable *w[4] = {var("w1", GB_F32, 1, 2), var("w2", GB_F32, 1, 3), var("w3", GB_F32, 1, 4),
                         var("u", GB_F32, 1, 5)};
    gb_tensor *x = gb_scalar(GB_F32, 1.5);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *h = gb_relu(gb_mul(gb_variable_value(w[0]), x));
    h = gb_mul(gb_variable_value(w[1]), h);
    gb_tensor *y = gb_mul(gb_variable_value(w[2]), h);
    gb_tape_end(tape);
    gb_source src[4] = {GB_SRC_VAR(w[0]), GB_SRC_VAR(w[1]), GB_SRC_VAR(w[2]), GB_SRC_VAR(w[3])};
    gb_tensor *g[4];
    heard got = {0};
    gb__grad_hook hook = {heard_ready, heard_between, &got};
    ck_assert(gb__tape_gradient_hooked(tape, y, src, 4, GB_UNCONNECTED_NONE, &hook, g));
    ck_assert_int_eq(got.n, 4);
    int want[4] = {2, 1, 0, 3};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(got.order[i], want[i]);
    ck_assert_double_eq_tol(got.value[0], 9, 1e-6);    /* dy/dw3 = w2 * relu(w1 x) = 3*3 */
    ck_assert_double_eq_tol(got.value[1], 12, 1e-6);   /* w3 * 3 */
    ck_assert_double_eq_tol(got.value[2], 18, 1e-6);   /* w3 * w2 * x */
    ck_assert(isnan(got.value[3]) && g[3] == NULL);    /* never read: NULL, at the end */
    ck_assert_int_ge(got.between, 5);
    ck_assert_double_eq_tol(gb_item(g[0]), 18, 1e-6);
    for (int i = 0; i < 4; i++) gb_variable_free(w[i]);
}
END_TEST

/* ---- gradients and metrics over a job of one -------------------------------------------------- */

START_TEST(test_tape_gradient_of_one_rank) {
    ck_assert(gb_dist_init(NULL, NULL));
    gb_variable *w[2] = {var("w", GB_F32, 2, 2), var("unused", GB_F32, 3, 1)};
    gb_tensor *x = gb_from_f32((float[]){1, 2}, GB_SHAPE(2));
    for (int step = 0; step < 3; step++) {
        gb_tape *tape = gb_tape_begin();
        gb_tensor *loss = gb_reduce_sum(gb_square(gb_mul(gb_variable_value(w[0]), x)), GB_ALL_AXES,
                                        false);
        gb_tape_end(tape);
        gb_tensor *g[2];
        ck_assert(gb_dist_tape_gradient(tape, loss, w, 2, g));
        ck_assert_double_eq_tol(gb_get(g[0], 1), 2 * 2 * 2 * 2, 1e-6);   /* 2 w x^2 */
        ck_assert_double_eq(gb_get(g[1], 2), 0);   /* unconnected: zeros, as on every rank */
        ck_assert(gb_dist_average_gradients(g, w, 2));
        ck_assert_double_eq_tol(gb_get(g[0], 1), 16, 1e-6);
    }
    gb_dist_stats s = gb_dist_get_stats();
    ck_assert_int_eq(s.steps, 6);
    ck_assert_int_eq(s.timed_steps, 5);   /* the first has no step before it */
    ck_assert(s.total_step_ms >= 0 && s.total_allreduce_ms >= 0);
    gb_dist_reset_stats();
    ck_assert_int_eq(gb_dist_get_stats().timed_steps, 0);
    ck_assert_int_eq(gb_dist_get_stats().steps, 6);
    gb_tensor *g[2];
    ck_assert(!gb_dist_tape_gradient(gb_tape_begin(), NULL, w, 0, g));
    assert_error(GB_ERR_VALUE, "gb_dist_tape_gradient: a bad variable or gradient list (0)");
    gb_variable_free(w[0]);
    gb_variable_free(w[1]);
}
END_TEST

static bool count_update(gb_metric *m, void *state, gb_tensor *y, gb_tensor *p, gb_tensor *sw) {
    (void)m, (void)p, (void)sw;
    *(double *)state += gb_size(y);
    return true;
}
static double count_result(const gb_metric *m, const void *state) {
    (void)m;
    return *(const double *)state;
}

START_TEST(test_metric_results_of_one_rank) {
    ck_assert(gb_dist_init(NULL, NULL));
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new(NULL);
    gb_metric *auc = gb_metric_auc_new(NULL, NULL);
    gb_metric_update_state(acc, gb_tensor_from(GB_I32, (int32_t[]){1, 0}, GB_SHAPE(2)),
                           gb_from_f32((float[]){0.1f, 0.9f, 0.2f, 0.8f}, GB_SHAPE(2, 2)));
    gb_metric_update_state(auc, gb_from_f32((float[]){1, 0, 1}, GB_SHAPE(3)),
                           gb_from_f32((float[]){0.9f, 0.3f, 0.4f}, GB_SHAPE(3)));
    double r[2];
    ck_assert(gb_dist_metric_results((gb_metric *[]){acc, auc}, 2, r));
    ck_assert_double_eq(r[0], gb_metric_result(acc));
    ck_assert_double_eq(r[1], gb_metric_result(auc));
    ck_assert_double_eq(gb_dist_metric_result(acc), 0.5);
    static const gb_metric_type counting = {.class_name = "Count", .state_size = sizeof(double),
                                            .update_state = count_update, .result = count_result};
    gb_metric *mine = gb_metric_new(&counting, "count", NULL);
    ck_assert(isnan(gb_dist_metric_result(mine)));
    assert_error(GB_ERR_VALUE, "metric 'count' does not declare its state summable");
    gb_metric_free(mine);
    gb_metric_free(acc);
    gb_metric_free(auc);
}
END_TEST

/* ---- timing events ---------------------------------------------------------------------------- */

typedef struct seen {
    int n;
    char tag[3][32], run[16];
    int64_t first_step;
} seen;

static void on_scalar(const gb_event *ev, void *user) {
    seen *s = user;
    const gb_scalar_event *d = ev->detail;
    if (s->n < 3) snprintf(s->tag[s->n], sizeof s->tag[0], "%s", d->tag);
    if (s->n == 0) {
        snprintf(s->run, sizeof s->run, "%s", d->run);
        s->first_step = d->step;
    }
    ck_assert(d->value >= 0);
    s->n++;
}

START_TEST(test_timing_events) {
    /* A job of one times its steps (the stats) but emits no per-rank
     * events: a single process writes no "<run>/rank_0" run. */
    ck_assert(gb_dist_init_ex(NULL, NULL, &(gb_dist_options){.timing_every = 4}));
    seen s = {0};
    int id = gb_observer_add(on_scalar, &s, GB_EVENT_SCALAR);
    gb_variable *w = var("w", GB_F32, 2, 1);
    for (int step = 0; step < 6; step++) {
        gb_tensor *g = NULL;   /* no gradient: zeros */
        ck_assert(gb_dist_average_gradients(&g, &w, 1));
    }
    gb_dist_stats st = gb_dist_get_stats();
    ck_assert_int_eq(st.steps, 6);
    ck_assert_int_eq(st.timed_steps, 5);   /* the first has no start */
    gb_dist_finalize();
    ck_assert_int_eq(s.n, 0);
    gb_observer_remove(id);
    gb_variable_free(w);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("dist");
    TCase *tc = tcase_create("dist");
    tcase_add_checked_fixture(tc, dist_setup, scope_teardown);
    tcase_add_test(tc, test_job_of_one);
    tcase_add_test(tc, test_collective_errors);
    tcase_add_test(tc, test_options_from_environment);
    tcase_add_test(tc, test_broadcast_model_and_average_variables);
    tcase_add_test(tc, test_plan_buckets_in_reverse_order);
    tcase_add_test(tc, test_plan_pack_and_view);
    tcase_add_test(tc, test_hook_reports_gradients_as_final);
    tcase_add_test(tc, test_tape_gradient_of_one_rank);
    tcase_add_test(tc, test_metric_results_of_one_rank);
    tcase_add_test(tc, test_timing_events);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
