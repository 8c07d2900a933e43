/* test_core.c — tensors, scopes, sticky errors, variables, placement logs.
 *
 * The engine's foundations, each rule asserted with exact values or the
 * exact error: creation for every dtype, scopes that free what they own
 * (and keep memory flat over a long loop), errors that stick and name the
 * user's line, and variables whose values do not change under a reader.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* ---- creation and access -------------------------------------------------------- */

START_TEST(test_from_data_all_dtypes) {
    gb_scope_begin();
    const float f[] = {1.5f, -2, 3, 4, 5, 6};
    gb_tensor *t = gb_from_f32(f, GB_SHAPE(2, 3));
    ck_assert_int_eq(gb_rank(t), 2);
    ck_assert_int_eq(gb_dim(t, 0), 2);
    ck_assert_int_eq(gb_dim(t, -1), 3);
    ck_assert_int_eq(gb_size(t), 6);
    ck_assert_int_eq(gb_tensor_dtype(t), GB_F32);
    ASSERT_VALUES(t, 0, 1.5, -2, 3, 4, 5, 6);
    const int64_t i64[] = {-7, 1LL << 40};
    ASSERT_VALUES(gb_tensor_from(GB_I64, i64, GB_SHAPE(2)), 0, -7, (double)(1LL << 40));
    const uint8_t u8[] = {0, 255};
    ASSERT_VALUES(gb_tensor_from(GB_U8, u8, GB_SHAPE(2)), 0, 0, 255);
    const int32_t i32[] = {-3};
    ASSERT_VALUES(gb_tensor_from(GB_I32, i32, GB_SHAPE(1)), 0, -3);
    const uint8_t b[] = {1, 0};
    ASSERT_VALUES(gb_tensor_from(GB_BOOL, b, GB_SHAPE(2)), 0, 1, 0);
    ck_assert_str_eq(gb_dtype_name(GB_F64), "float64");
    ck_assert_int_eq(gb_dtype_size(GB_I64), 8);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_fill_arange_linspace) {
    gb_scope_begin();
    ASSERT_VALUES(gb_zeros(GB_F64, GB_SHAPE(3)), 0, 0, 0, 0);
    ASSERT_VALUES(gb_ones(GB_I32, GB_SHAPE(2)), 0, 1, 1);
    ASSERT_VALUES(gb_fill(GB_F32, GB_SHAPE(2, 1), 2.5), 0, 2.5, 2.5);
    ASSERT_VALUES(gb_scalar(GB_F64, -4), 0, -4);
    ck_assert_int_eq(gb_rank(gb_scalar(GB_F64, 1)), 0);
    ASSERT_VALUES(gb_arange(GB_F64, 0, 5, 1.5), 1e-12, 0, 1.5, 3, 4.5);
    ASSERT_VALUES(gb_arange(GB_I64, 5, 0, -2), 0, 5, 3, 1);
    ASSERT_VALUES(gb_linspace(GB_F64, 0, 1, 5), 1e-12, 0, 0.25, 0.5, 0.75, 1);
    ck_assert_int_eq(gb_size(gb_arange(GB_F32, 3, 3, 1)), 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_creation_errors) {
    gb_scope_begin();
    int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    ck_assert_ptr_null(gb_zeros(GB_F32, 9, dims));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "rank 9"));
    gb_clear_error();
    ck_assert_ptr_null(gb_zeros(GB_F32, GB_SHAPE(2, -1)));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "negative dimension in shape [2,-1]"));
    gb_clear_error();
    ck_assert_ptr_null(gb_arange(GB_F32, 0, 1, 0));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    gb_clear_error();
    gb_scope_end();
}
END_TEST

/* ---- scopes ---------------------------------------------------------------------- */

START_TEST(test_scope_frees_and_keep_moves) {
    size_t base = gb_scope_bytes_in_use();
    gb_scope_begin();
    gb_tensor *kept;
    gb_scope_begin();
    ck_assert_int_eq(gb_scope_depth(), 2);
    gb_tensor *big = gb_fill(GB_F32, GB_SHAPE(1000, 100), 3.0);
    gb_tensor *small = gb_fill(GB_F64, GB_SHAPE(4), 7.0);
    ck_assert(gb_scope_bytes_in_use() > base + 400000);
    kept = gb_keep(small);
    ck_assert_ptr_nonnull(kept);
    (void)big;
    gb_scope_end();
    ck_assert_int_eq(gb_scope_depth(), 1);
    ASSERT_VALUES(kept, 0, 7, 7, 7, 7);
    ck_assert(gb_scope_bytes_in_use() < base + 200000);
    gb_scope_end();
    ck_assert_uint_eq(gb_scope_bytes_in_use(), base);
}
END_TEST

START_TEST(test_scope_misuse_errors) {
    int depth = gb_scope_depth();
    gb_scope_end(); /* at the root */
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "without a matching gb_scope_begin"));
    ck_assert_int_eq(gb_scope_depth(), depth);
    gb_clear_error();
    gb_scope_begin();
    gb_tensor *outer = gb_scalar(GB_F32, 1);
    gb_scope_begin();
    ck_assert_ptr_null(gb_keep(outer)); /* not this scope's tensor */
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    gb_clear_error();
    gb_scope_end();
    gb_scope_end();
}
END_TEST

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* No ck_assert in here: Check records every passing assertion, and that
 * bookkeeping would be measured too. */
static bool small_step(gb_tensor *w) {
    gb_scope_begin();
    gb_tensor *x = gb_fill(GB_F32, GB_SHAPE(8, 8), 0.5);
    gb_tensor *y = gb_tanh(gb_add(gb_mul(x, w), x));
    bool ok = gb_reduce_sum(y, GB_ALL_AXES, false) != NULL;
    gb_scope_end();
    return ok;
}

START_TEST(test_rss_flat_over_10000_steps) {
    gb_scope_begin();
    gb_tensor *w = gb_fill(GB_F32, GB_SHAPE(8, 8), 0.25);
    int ok = 0;
    for (int i = 0; i < 1000; i++) ok += small_step(w); /* warm the caches */
    long before = rss_kib();
    size_t bytes_before = gb_scope_bytes_in_use();
    for (int i = 0; i < 10000; i++) ok += small_step(w);
    long after = rss_kib();
    ck_assert_int_eq(ok, 11000);
    ck_assert_uint_eq(gb_scope_bytes_in_use(), bytes_before);
    ck_assert_msg(after - before < 512, "RSS grew by %ld KiB over 10000 steps", after - before);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* ---- sticky errors ------------------------------------------------------------------ */

START_TEST(test_first_error_sticks_and_null_propagates) {
    gb_scope_begin();
    gb_tensor *a = gb_zeros(GB_F32, GB_SHAPE(2, 3));
    gb_tensor *b = gb_zeros(GB_F32, GB_SHAPE(4));
    int line = __LINE__ + 1;
    gb_tensor *bad = gb_add(a, b);
    ck_assert_ptr_null(bad);
    gb_tensor *chain = gb_mul(gb_exp(bad), a); /* NULL flows through */
    ck_assert_ptr_null(chain);
    ck_assert_ptr_null(gb_matmul(a, gb_zeros(GB_F64, GB_SHAPE(9, 9)))); /* a second error */
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GB_ERR_SHAPE);
    ck_assert_str_eq(e->op_type, "Add");
    ck_assert_ptr_nonnull(strstr(e->message, "[2,3]"));
    ck_assert_ptr_nonnull(strstr(e->message, "[4]"));
    ck_assert_ptr_nonnull(strstr(e->file, "test_core.c"));
    ck_assert_int_eq(e->line, line);
    char expect[64];
    snprintf(expect, sizeof expect, "test_core.c:%d", line);
    ck_assert_ptr_nonnull(strstr(gb_error_string(), expect));
    ck_assert(!gb_ok());
    gb_clear_error();
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_last_error());
    ck_assert_str_eq(gb_error_string(), "");
    gb_scope_end();
}
END_TEST

START_TEST(test_error_names_scope_path) {
    gb_scope_begin();
    gb_name_scope_push("model");
    gb_name_scope_push("dense_1");
    ck_assert_str_eq(gb_name_scope_path(), "model/dense_1");
    gb_tensor *bad = gb_add(gb_zeros(GB_F32, GB_SHAPE(2)), gb_zeros(GB_F64, GB_SHAPE(2)));
    ck_assert_ptr_null(bad);
    ck_assert_str_eq(gb_last_error()->scope_path, "model/dense_1");
    ck_assert_str_eq(gb_last_error()->op_name, "model/dense_1/Add");
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_DTYPE);
    gb_name_scope_pop();
    gb_name_scope_pop();
    ck_assert_str_eq(gb_name_scope_path(), "");
    gb_clear_error();
    gb_scope_end();
}
END_TEST

START_TEST(test_null_input_without_prior_error) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_exp(NULL));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "Exp: input 0 is NULL"));
    gb_clear_error();
    gb_scope_end();
}
END_TEST

START_TEST(test_abort_mode_exits_with_message) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    gb_scope_begin();
    gb_add(gb_zeros(GB_F32, GB_SHAPE(2)), gb_zeros(GB_F32, GB_SHAPE(3)));
    /* not reached: the error exits with status 1 */
    gb_scope_end();
    exit(0);
}
END_TEST

/* ---- variables -------------------------------------------------------------------------- */

START_TEST(test_variable_read_is_a_value_of_that_moment) {
    gb_scope_begin();
    gb_variable *v = gb_variable_new("w", gb_from_f64((double[]){1, 2}, GB_SHAPE(2)), true);
    gb_tensor *before = gb_variable_value(v);
    ck_assert(gb_variable_assign(v, gb_from_f64((double[]){5, 6}, GB_SHAPE(2))));
    gb_tensor *after = gb_variable_value(v);
    ASSERT_VALUES(before, 0, 1, 2); /* unchanged: copy on write */
    ASSERT_VALUES(after, 0, 5, 6);
    ck_assert(gb_variable_assign_add(v, gb_from_f64((double[]){1, 1}, GB_SHAPE(2))));
    ck_assert(gb_variable_assign_sub(v, gb_from_f64((double[]){0.5, 4}, GB_SHAPE(2))));
    ASSERT_VALUES(gb_variable_value(v), 0, 5.5, 3);
    ASSERT_VALUES(after, 0, 5, 6);
    gb_variable_free(v); /* readers keep their buffers */
    ASSERT_VALUES(before, 0, 1, 2);
    gb_scope_end();
}
END_TEST

START_TEST(test_variable_metadata_and_errors) {
    gb_scope_begin();
    gb_name_scope_push("dense_1");
    gb_variable *v = gb_variable_new("kernel", gb_zeros(GB_F32, GB_SHAPE(3, 2)), false);
    gb_name_scope_pop();
    ck_assert_str_eq(gb_variable_name(v), "dense_1/kernel");
    ck_assert(!gb_variable_trainable(v));
    gb_variable_set_trainable(v, true);
    ck_assert(gb_variable_trainable(v));
    ck_assert_int_eq(gb_variable_rank(v), 2);
    ck_assert_int_eq(gb_variable_shape(v)[0], 3);
    ck_assert_int_eq(gb_variable_size(v), 6);
    ck_assert(!gb_variable_assign(v, gb_zeros(GB_F32, GB_SHAPE(2, 3))));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "dense_1/kernel"));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "[3,2]"));
    gb_clear_error();
    ck_assert_ptr_null(gb_variable_new("x", NULL, true));
    gb_clear_error();
    gb_variable_free(v);
    gb_scope_end();
}
END_TEST

/* ---- placement log and observers ------------------------------------------------------ */

typedef struct seen {
    int placements, ops;
    char last[256];
} seen;

static void count_events(const gb_event *ev, void *user) {
    seen *s = user;
    if (ev->kind == GB_EVENT_PLACEMENT) {
        s->placements++;
        snprintf(s->last, sizeof s->last, "%s", ev->message);
    }
    if (ev->kind == GB_EVENT_OP) s->ops++;
}

START_TEST(test_log_device_placement_and_timing) {
    gb_scope_begin();
    seen s = {0};
    int id = gb_observer_add(count_events, &s, GB_EVENT_PLACEMENT | GB_EVENT_OP);
    ck_assert_int_gt(id, 0);
    gb_tensor *a = gb_scalar(GB_F32, 1);
    gb_set_log_device_placement(true);
    gb_add(a, a);
    gb_set_log_device_placement(false);
    gb_add(a, a);
    ck_assert_int_eq(s.placements, 1);
    char want[160];
    snprintf(want, sizeof want,
             "Executing op Add in device /job:localhost/replica:0/task:0/device:CPU:0 (kernels: %s)",
             gb_cpu_isa());
    ck_assert_str_eq(s.last, want);
    ck_assert(strncmp(gb_cpu_isa(), "x86-64-v", 8) == 0 || strncmp(gb_cpu_isa(), "-march=", 7) == 0);
    gb_set_op_timing(true);
    gb_mul(a, a);
    gb_set_op_timing(false);
    ck_assert_int_eq(s.ops, 1);
    gb_observer_remove(id);
    gb_set_log_device_placement(true);
    gb_add(a, a);
    gb_set_log_device_placement(false);
    ck_assert_int_eq(s.placements, 1);
    gb_scope_end();
}
END_TEST

static Suite *core_suite(void) {
    Suite *s = suite_create("core");
    TCase *t = tcase_create("tensors");
    tcase_add_test(t, test_from_data_all_dtypes);
    tcase_add_test(t, test_fill_arange_linspace);
    tcase_add_test(t, test_creation_errors);
    suite_add_tcase(s, t);
    t = tcase_create("scopes");
    tcase_add_test(t, test_scope_frees_and_keep_moves);
    tcase_add_test(t, test_scope_misuse_errors);
    tcase_add_test(t, test_rss_flat_over_10000_steps);
    suite_add_tcase(s, t);
    t = tcase_create("errors");
    tcase_add_test(t, test_first_error_sticks_and_null_propagates);
    tcase_add_test(t, test_error_names_scope_path);
    tcase_add_test(t, test_null_input_without_prior_error);
    tcase_add_exit_test(t, test_abort_mode_exits_with_message, 1);
    suite_add_tcase(s, t);
    t = tcase_create("variables");
    tcase_add_test(t, test_variable_read_is_a_value_of_that_moment);
    tcase_add_test(t, test_variable_metadata_and_errors);
    tcase_add_test(t, test_log_device_placement_and_timing);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return run_suite(core_suite()); }
