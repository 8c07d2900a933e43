/* test_nn_metrics.c — Mean, SparseCategoricalAccuracy and
 * CategoricalAccuracy: update_state / result / reset_state, sample
 * weights, names, and errors that leave the state untouched. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

START_TEST(test_mean) {
    gb_metric *m = gb_metric_mean_new(NULL);
    ck_assert_str_eq(gb_metric_name(m), "mean");
    ck_assert_double_eq(gb_metric_result(m), 0.0); /* nothing seen yet: 0, as Keras */
    ck_assert(gb_metric_update_state(m, gb_from_f32((const float[]){1, 2, 3}, GB_SHAPE(3)), NULL));
    ck_assert_double_eq(gb_metric_result(m), 2.0);
    ck_assert(gb_metric_update_state(m, gb_scalar(GB_F64, 10), NULL));
    ck_assert_double_eq(gb_metric_result(m), 4.0); /* (1+2+3+10)/4 */
    ck_assert(gb_metric_update_value(m, 4.0, 4.0));
    ck_assert_double_eq(gb_metric_result(m), 4.0); /* (16+16)/8 */
    gb_tensor *r = gb_metric_result_tensor(m);
    ck_assert_int_eq(gb_tensor_dtype(r), GB_F32);
    ck_assert_int_eq(gb_rank(r), 0);
    ck_assert_double_eq(gb_item(r), 4.0);
    gb_metric_reset_state(m);
    ck_assert_double_eq(gb_metric_result(m), 0.0);
    /* Weighted: sum(w v) / sum(w). */
    ck_assert(gb_metric_update_state_weighted(m, gb_from_f64((const double[]){1, 3}, GB_SHAPE(2)), NULL,
                                              gb_from_f64((const double[]){3, 1}, GB_SHAPE(2))));
    ck_assert_double_eq(gb_metric_result(m), 1.5);
    gb_metric_free(m);
}
END_TEST

START_TEST(test_sparse_categorical_accuracy) {
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new(NULL);
    ck_assert_str_eq(gb_metric_name(acc), "sparse_categorical_accuracy");
    gb_tensor *pred = gb_from_f32((const float[]){0.1f, 0.8f, 0.1f,   /* 1 */
                                                  0.6f, 0.3f, 0.1f,   /* 0 */
                                                  0.2f, 0.2f, 0.6f,   /* 2 */
                                                  0.5f, 0.5f, 0.0f},  /* tie: first, 0 */
                                  GB_SHAPE(4, 3));
    gb_tensor *labels = gb_tensor_from(GB_I32, (const int32_t[]){1, 2, 2, 0}, GB_SHAPE(4));
    ck_assert(gb_metric_update_state(acc, labels, pred));
    ck_assert_double_eq(gb_metric_result(acc), 0.75);
    /* [B, 1] int64 labels and a second batch accumulate. */
    gb_tensor *l2 = gb_tensor_from(GB_I64, (const int64_t[]){0, 0, 0, 0}, GB_SHAPE(4, 1));
    ck_assert(gb_metric_update_state(acc, l2, pred));
    ck_assert_double_eq(gb_metric_result(acc), 5.0 / 8);
    gb_metric_reset_state(acc);
    ck_assert_double_eq(gb_metric_result(acc), 0.0);
    /* Sample weights per sample. */
    gb_tensor *w = gb_from_f32((const float[]){1, 0, 1, 2}, GB_SHAPE(4));
    ck_assert(gb_metric_update_state_weighted(acc, labels, pred, w));
    ck_assert_double_eq(gb_metric_result(acc), 1.0); /* the one miss has weight 0 */
    gb_metric_free(acc);
}
END_TEST

START_TEST(test_categorical_accuracy) {
    gb_metric *acc = gb_metric_categorical_accuracy_new("acc");
    ck_assert_str_eq(gb_metric_name(acc), "acc");
    gb_tensor *t = gb_from_f64((const double[]){0, 1, 1, 0, 0, 1}, GB_SHAPE(3, 2));
    gb_tensor *p = gb_from_f64((const double[]){0.2, 0.8, 0.3, 0.7, 0.1, 0.9}, GB_SHAPE(3, 2));
    ck_assert(gb_metric_update_state(acc, t, p));
    ck_assert_double_eq_tol(gb_metric_result(acc), 2.0 / 3, 1e-15);
    gb_metric_free(acc);
}
END_TEST

START_TEST(test_errors_leave_state_alone) {
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new(NULL);
    gb_tensor *pred = gb_ones(GB_F32, GB_SHAPE(4, 3));
    ck_assert(gb_metric_update_state(acc, gb_zeros(GB_I32, GB_SHAPE(4)), pred));
    ck_assert_double_eq(gb_metric_result(acc), 1.0);
    ck_assert(!gb_metric_update_state(acc, gb_zeros(GB_I32, GB_SHAPE(3)), pred));
    assert_error(GB_ERR_SHAPE,
                 "SparseCategoricalAccuracy metric 'sparse_categorical_accuracy': labels shape [3] "
                 "does not match predictions shape [4,3]");
    ck_assert(!gb_metric_update_state_weighted(acc, gb_zeros(GB_I32, GB_SHAPE(4)), pred,
                                               gb_ones(GB_F32, GB_SHAPE(2))));
    assert_error(GB_ERR_SHAPE, "sample_weight shape [2] does not give one weight per sample (4)");
    ck_assert(!gb_metric_update_state(acc, gb_zeros(GB_I32, GB_SHAPE(4)), NULL));
    assert_error(GB_ERR_VALUE, "update_state: y_pred is NULL");
    ck_assert_double_eq(gb_metric_result(acc), 1.0);
    ck_assert(!gb_metric_update_value(acc, 1, 1));
    assert_error(GB_ERR_VALUE, "update_value is for Mean metrics");
    gb_metric *cat = gb_metric_categorical_accuracy_new(NULL);
    ck_assert(!gb_metric_update_state(cat, gb_zeros(GB_I32, GB_SHAPE(4)), pred));
    assert_error(GB_ERR_SHAPE, "y_true shape [4] does not match predictions shape [4,3]");
    gb_metric *mean = gb_metric_mean_new("loss");
    ck_assert(!gb_metric_update_state(mean, pred, pred));
    assert_error(GB_ERR_VALUE, "Mean metric 'loss': Mean takes one tensor of values");
    /* After an earlier error, updates do nothing and keep it. */
    gb_tensor *bad = gb_reshape(pred, GB_SHAPE(5));
    ck_assert(!gb_metric_update_state(mean, bad, NULL));
    ck_assert_str_eq(gb_last_error()->op_type, "Reshape");
    ck_assert_double_eq(gb_metric_result(mean), 0.0);
    gb_metric_free(acc);
    gb_metric_free(cat);
    gb_metric_free(mean);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_metrics");
    TCase *tc = tcase_create("metrics");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_mean);
    tcase_add_test(tc, test_sparse_categorical_accuracy);
    tcase_add_test(tc, test_categorical_accuracy);
    tcase_add_test(tc, test_errors_leave_state_alone);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
