/* test_nn_losses.c — Keras losses against hand-computed values (every
 * reduction), the label/prediction shape rules, errors, and gradient
 * checks through each loss. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* logits [[1,2,3],[1,1,1]], labels [2,0]: per sample
 * logsumexp - logit[label] = 0.40760596..., log 3 = 1.09861228... */
#define SPARSE_0 0.4076059644443806
#define SPARSE_1 1.09861228866811

static gb_tensor *logits_2x3(gb_dtype dt) {
    gb_tensor *l = gb_from_f64((const double[]){1, 2, 3, 1, 1, 1}, GB_SHAPE(2, 3));
    return dt == GB_F64 ? l : gb_cast(l, dt);
}

START_TEST(test_sparse_ce_from_logits) {
    gb_tensor *labels = gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(2));
    for (int dt = GB_F32; dt <= GB_F64; dt++) {
        double tol = dt == GB_F32 ? 1e-6 : 1e-12;
        gb_tensor *l = logits_2x3(dt);
        gb_tensor *mean = gb_loss_sparse_categorical_crossentropy(labels, l, true, GB_REDUCTION_MEAN);
        ck_assert_int_eq(gb_rank(mean), 0);
        ck_assert_int_eq(gb_tensor_dtype(mean), dt);
        ASSERT_VALUES(mean, tol, (SPARSE_0 + SPARSE_1) / 2);
        ASSERT_VALUES(gb_loss_sparse_categorical_crossentropy(labels, l, true, GB_REDUCTION_SUM), tol,
                      SPARSE_0 + SPARSE_1);
        gb_tensor *none = gb_loss_sparse_categorical_crossentropy(labels, l, true, GB_REDUCTION_NONE);
        ck_assert_int_eq(gb_rank(none), 1);
        ASSERT_VALUES(none, tol, SPARSE_0, SPARSE_1);
    }
    /* int64, uint8 (cast as Keras does) and [B, 1] labels give the same. */
    gb_tensor *l = logits_2x3(GB_F64);
    gb_tensor *as[] = {
        gb_tensor_from(GB_I64, (const int64_t[]){2, 0}, GB_SHAPE(2)),
        gb_tensor_from(GB_U8, (const uint8_t[]){2, 0}, GB_SHAPE(2)),
        gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(2, 1)),
        gb_from_f64((const double[]){2, 0}, GB_SHAPE(2)),
    };
    for (int i = 0; i < 4; i++)
        ASSERT_VALUES(gb_loss_sparse_categorical_crossentropy(as[i], l, true, GB_REDUCTION_NONE),
                      1e-12, SPARSE_0, SPARSE_1);
    /* Rank 3 (sequence) predictions: per-sample shape [1, 2]. */
    gb_tensor *seq = gb_loss_sparse_categorical_crossentropy(
        gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(1, 2)),
        gb_reshape(l, GB_SHAPE(1, 2, 3)), true, GB_REDUCTION_NONE);
    ck_assert_int_eq(gb_rank(seq), 2);
    ASSERT_VALUES(seq, 1e-12, SPARSE_0, SPARSE_1);
}
END_TEST

START_TEST(test_sparse_ce_from_probabilities) {
    gb_tensor *labels = gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(2));
    gb_tensor *p = gb_from_f64((const double[]){0.1, 0.2, 0.7, 0.5, 0.25, 0.25}, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_loss_sparse_categorical_crossentropy(labels, p, false, GB_REDUCTION_NONE), 1e-9,
                  -log(0.7), -log(0.5));
    /* Softmax then from_logits=false equals from_logits=true. */
    gb_tensor *l = logits_2x3(GB_F64);
    ASSERT_VALUES(gb_loss_sparse_categorical_crossentropy(labels, gb_softmax(l, -1), false,
                                                          GB_REDUCTION_MEAN),
                  1e-9, (SPARSE_0 + SPARSE_1) / 2);
    /* A zero probability is clipped to 1e-7, not log(0). */
    gb_tensor *hard = gb_from_f64((const double[]){1, 0, 0}, GB_SHAPE(1, 3));
    gb_tensor *lbl = gb_tensor_from(GB_I32, (const int32_t[]){1}, GB_SHAPE(1));
    gb_tensor *v = gb_loss_sparse_categorical_crossentropy(lbl, hard, false, GB_REDUCTION_MEAN);
    ck_assert(isfinite(gb_item(v)));
    ck_assert_double_eq_tol(gb_item(v), -log(1e-7 / (1 - 1e-7 + 2e-7)), 1e-6);
}
END_TEST

START_TEST(test_categorical_ce) {
    gb_tensor *t = gb_from_f64((const double[]){0, 0.5, 0.5, 1, 0, 0}, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_loss_categorical_crossentropy(t, logits_2x3(GB_F64), true, GB_REDUCTION_NONE),
                  1e-12, 0.9076059644443806, 1.09861228866811);
    ASSERT_VALUES(gb_loss_categorical_crossentropy(t, logits_2x3(GB_F64), true, GB_REDUCTION_MEAN),
                  1e-12, 1.0031091265562453);
    /* Probabilities are renormalized per row first, as Keras. */
    gb_tensor *q = gb_from_f64((const double[]){0.2, 0.4, 1.4, 1, 0.5, 0.5}, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_loss_categorical_crossentropy(t, q, false, GB_REDUCTION_NONE), 1e-9,
                  0.9830564281864164, 0.6931471805599453);
    ASSERT_VALUES(gb_loss_categorical_crossentropy(t, q, false, GB_REDUCTION_SUM), 1e-9,
                  0.9830564281864164 + 0.6931471805599453);
}
END_TEST

START_TEST(test_regression_losses) {
    gb_tensor *yt = gb_from_f32((const float[]){1, 2, 3, 4}, GB_SHAPE(2, 2));
    gb_tensor *yp = gb_from_f32((const float[]){1.5f, 1, 3, 6}, GB_SHAPE(2, 2));
    ASSERT_VALUES(gb_loss_mean_squared_error(yt, yp, GB_REDUCTION_MEAN), 1e-6, 1.3125);
    ASSERT_VALUES(gb_loss_mean_squared_error(yt, yp, GB_REDUCTION_NONE), 1e-6, 0.625, 2.0);
    ASSERT_VALUES(gb_loss_mean_squared_error(yt, yp, GB_REDUCTION_SUM), 1e-6, 2.625);
    ASSERT_VALUES(gb_loss_mean_absolute_error(yt, yp, GB_REDUCTION_MEAN), 1e-6, 0.875);
    ASSERT_VALUES(gb_loss_mean_absolute_error(yt, yp, GB_REDUCTION_NONE), 1e-6, 0.75, 1.0);
    ASSERT_VALUES(gb_loss_huber(yt, yp, 1.0, GB_REDUCTION_NONE), 1e-6, 0.3125, 0.75);
    ASSERT_VALUES(gb_loss_huber(yt, yp, 1.0, GB_REDUCTION_MEAN), 1e-6, 0.53125);
    ASSERT_VALUES(gb_loss_huber(yt, yp, 2.0, GB_REDUCTION_MEAN), 1e-6, 0.65625);
    /* y_true [B] against y_pred [B, 1] (and the reverse): per-sample values, no broadcast. */
    gb_tensor *t1 = gb_from_f32((const float[]){1, 2, 3}, GB_SHAPE(3));
    gb_tensor *p1 = gb_from_f32((const float[]){2, 2, 5}, GB_SHAPE(3, 1));
    ASSERT_VALUES(gb_loss_mean_squared_error(t1, p1, GB_REDUCTION_NONE), 1e-6, 1, 0, 4);
    ASSERT_VALUES(gb_loss_mean_squared_error(t1, p1, GB_REDUCTION_MEAN), 1e-6, 5.0 / 3);
    ASSERT_VALUES(gb_loss_mean_squared_error(gb_reshape(p1, GB_SHAPE(3)), gb_reshape(t1, GB_SHAPE(3, 1)),
                                             GB_REDUCTION_SUM),
                  1e-6, 5);
    /* Rank-1 inputs: one value per sample. */
    ASSERT_VALUES(gb_loss_mean_absolute_error(t1, gb_reshape(p1, GB_SHAPE(3)), GB_REDUCTION_NONE),
                  1e-6, 1, 0, 2);
    /* Integer targets are cast to the predictions' dtype. */
    gb_tensor *ti = gb_tensor_from(GB_I32, (const int32_t[]){1, 2, 3}, GB_SHAPE(3));
    ASSERT_VALUES(gb_loss_mean_squared_error(ti, p1, GB_REDUCTION_MEAN), 1e-6, 5.0 / 3);
}
END_TEST

START_TEST(test_binary_ce) {
    gb_tensor *z = gb_from_f64((const double[]){1, 0, 1, 0}, GB_SHAPE(4, 1));
    gb_tensor *x = gb_from_f64((const double[]){2.0, -1.0, -0.5, 0.3}, GB_SHAPE(4, 1));
    ASSERT_VALUES(gb_loss_binary_crossentropy(z, x, true, GB_REDUCTION_NONE), 1e-12,
                  0.1269280110429725, 0.31326168751822286, 0.9740769841801067, 0.8543552444685272);
    ASSERT_VALUES(gb_loss_binary_crossentropy(z, x, true, GB_REDUCTION_MEAN), 1e-12,
                  0.5671554818024573);
    gb_tensor *p = gb_from_f64((const double[]){0.9, 0.2, 0.6, 0.4}, GB_SHAPE(4));
    ASSERT_VALUES(gb_loss_binary_crossentropy(z, p, false, GB_REDUCTION_MEAN), 1e-9,
                  0.3375388286260044);
    /* Large logits stay finite (the stable form). */
    gb_tensor *big = gb_from_f64((const double[]){800, -800}, GB_SHAPE(2));
    gb_tensor *zb = gb_from_f64((const double[]){0, 1}, GB_SHAPE(2));
    ASSERT_VALUES(gb_loss_binary_crossentropy(zb, big, true, GB_REDUCTION_NONE), 1e-9, 800, 800);
}
END_TEST

START_TEST(test_empty_batch_mean_is_zero) {
    gb_tensor *t = gb_zeros(GB_F32, GB_SHAPE(0, 3));
    gb_tensor *m = gb_loss_mean_squared_error(t, t, GB_REDUCTION_MEAN);
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    ck_assert_double_eq(gb_item(m), 0.0);
}
END_TEST

START_TEST(test_shape_errors) {
    gb_tensor *l = logits_2x3(GB_F32);
    /* One-hot labels passed to the sparse loss. */
    ck_assert_ptr_null(gb_loss_sparse_categorical_crossentropy(gb_zeros(GB_F32, GB_SHAPE(2, 3)), l, true,
                                                               GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE,
                 "sparse_categorical_crossentropy: labels shape [2,3] does not match predictions "
                 "shape [2,3]; expected class indices of shape [2]");
    ck_assert_ptr_null(gb_loss_sparse_categorical_crossentropy(
        gb_tensor_from(GB_I32, (const int32_t[]){0, 1, 2}, GB_SHAPE(3)), l, true, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE, "labels shape [3] does not match predictions shape [2,3]");
    ck_assert_ptr_null(gb_loss_sparse_categorical_crossentropy(
        gb_tensor_from(GB_I32, (const int32_t[]){0}, GB_SHAPE(1)), gb_ones(GB_F32, GB_SHAPE(3)), true,
        GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE, "predictions must be [batch, classes], got shape [3]");
    /* Sparse labels passed to the categorical loss. */
    ck_assert_ptr_null(gb_loss_categorical_crossentropy(
        gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(2)), l, true, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE, "categorical_crossentropy: y_true shape [2] does not match predictions shape [2,3]");
    /* [B] against [B, B] would broadcast silently into a wrong loss: refused. */
    ck_assert_ptr_null(gb_loss_mean_squared_error(gb_ones(GB_F32, GB_SHAPE(3)), gb_ones(GB_F32, GB_SHAPE(3, 3)),
                                                  GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE,
                 "mean_squared_error: y_true shape [3] does not match predictions shape [3,3] (they "
                 "must be equal)");
    ck_assert_ptr_null(gb_loss_binary_crossentropy(gb_ones(GB_F32, GB_SHAPE(4)), gb_ones(GB_F32, GB_SHAPE(2, 2)),
                                                   true, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_SHAPE, "binary_crossentropy: y_true shape [4]");
}
END_TEST

START_TEST(test_value_errors) {
    gb_tensor *l = logits_2x3(GB_F32);
    gb_tensor *lab = gb_tensor_from(GB_I32, (const int32_t[]){2, 0}, GB_SHAPE(2));
    ck_assert_ptr_null(gb_loss_sparse_categorical_crossentropy(lab, gb_cast(l, GB_I32), true, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_DTYPE, "predictions must be float32 or float64, got int32");
    ck_assert_ptr_null(gb_loss_huber(l, l, 0, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_VALUE, "huber: delta must be positive, got 0");
    ck_assert_ptr_null(gb_loss_mean_squared_error(l, l, (gb_reduction)7));
    assert_error(GB_ERR_VALUE, "reduction 7 is out of range");
    /* A NULL input (from an earlier failure) keeps that first error. */
    gb_tensor *bad = gb_reshape(l, GB_SHAPE(4));
    ck_assert_ptr_null(gb_loss_mean_squared_error(bad, l, GB_REDUCTION_MEAN));
    ck_assert_str_eq(gb_last_error()->op_type, "Reshape");
    gb_clear_error();
    ck_assert_ptr_null(gb_loss_mean_absolute_error(l, NULL, GB_REDUCTION_MEAN));
    assert_error(GB_ERR_VALUE, "mean_absolute_error: y_pred is NULL");
    /* The error names the user's line. */
    ck_assert_ptr_null(gb_loss_huber(l, l, -1, GB_REDUCTION_MEAN));
    ck_assert_ptr_nonnull(strstr(gb_error_string(), "test_nn_losses.c"));
    gb_clear_error();
}
END_TEST

/* ---- gradient checks wrt the predictions (float64); targets come in `user` ------------ */

static gb_tensor *f_sparse_logits(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_sparse_categorical_crossentropy((gb_tensor *)u, x[0], true, GB_REDUCTION_MEAN);
}
static gb_tensor *f_sparse_probs(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_sparse_categorical_crossentropy((gb_tensor *)u, x[0], false, GB_REDUCTION_NONE);
}
static gb_tensor *f_cat_logits(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_categorical_crossentropy((gb_tensor *)u, x[0], true, GB_REDUCTION_NONE);
}
static gb_tensor *f_cat_probs(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_categorical_crossentropy((gb_tensor *)u, x[0], false, GB_REDUCTION_SUM);
}
static gb_tensor *f_mse(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_mean_squared_error((gb_tensor *)u, x[0], GB_REDUCTION_NONE);
}
static gb_tensor *f_mae(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_mean_absolute_error((gb_tensor *)u, x[0], GB_REDUCTION_MEAN);
}
static gb_tensor *f_huber(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_huber((gb_tensor *)u, x[0], 0.5, GB_REDUCTION_MEAN);
}
static gb_tensor *f_bce_logits(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_binary_crossentropy((gb_tensor *)u, x[0], true, GB_REDUCTION_NONE);
}
static gb_tensor *f_bce_probs(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_loss_binary_crossentropy((gb_tensor *)u, x[0], false, GB_REDUCTION_MEAN);
}

START_TEST(test_gradients) {
    gb_tensor *labels = gb_tensor_from(GB_I32, (const int32_t[]){2, 0, 1}, GB_SHAPE(3));
    gb_tensor *logits = GC_INPUT(-2, 2, 1, 3, 4);
    gb_tensor *probs = GC_INPUT(0.1, 0.9, 2, 3, 4);
    gb_tensor *onehot = gb_from_f64((const double[]){0, 0, 1, 0, 1, 0, 0, 0, 0, 0.5, 0.5, 0}, GB_SHAPE(3, 4));
    GC_ASSERT(f_sparse_logits, ((gb_tensor *[]){logits}), 1, labels);
    GC_ASSERT(f_sparse_probs, ((gb_tensor *[]){probs}), 1, labels);
    GC_ASSERT(f_cat_logits, ((gb_tensor *[]){logits}), 1, onehot);
    GC_ASSERT(f_cat_probs, ((gb_tensor *[]){probs}), 1, onehot);
    /* Regression inputs avoid the kinks (|e| = 0, |e| = delta). */
    gb_tensor *yp = gb_from_f64((const double[]){0.3, -1.2, 2.0, 0.7, -0.1, 1.6}, GB_SHAPE(3, 2));
    gb_tensor *yt = gb_from_f64((const double[]){0.0, -1.0, 1.1, 1.5, 0.2, 1.4}, GB_SHAPE(3, 2));
    GC_ASSERT(f_mse, ((gb_tensor *[]){yp}), 1, yt);
    GC_ASSERT(f_mae, ((gb_tensor *[]){yp}), 1, yt);
    GC_ASSERT(f_huber, ((gb_tensor *[]){yp}), 1, yt);
    gb_tensor *z = gb_from_f64((const double[]){1, 0, 1, 0, 0.3, 1}, GB_SHAPE(3, 2));
    GC_ASSERT(f_bce_logits, ((gb_tensor *[]){yp}), 1, z);
    GC_ASSERT(f_bce_probs, ((gb_tensor *[]){GC_INPUT(0.1, 0.9, 3, 3, 2)}), 1, z);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_losses");
    TCase *tc = tcase_create("losses");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_sparse_ce_from_logits);
    tcase_add_test(tc, test_sparse_ce_from_probabilities);
    tcase_add_test(tc, test_categorical_ce);
    tcase_add_test(tc, test_regression_losses);
    tcase_add_test(tc, test_binary_ce);
    tcase_add_test(tc, test_empty_batch_mean_is_zero);
    tcase_add_test(tc, test_shape_errors);
    tcase_add_test(tc, test_value_errors);
    tcase_add_test(tc, test_gradients);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
