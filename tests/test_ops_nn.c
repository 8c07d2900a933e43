/* test_ops_nn.c — Softmax, LogSoftmax and the fused cross-entropy losses:
 * hand-computed values (also for huge logits), other axes, every error
 * (label out of range names label and row), and finite-difference
 * gradients, including a second derivative of the sparse loss. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* softmax([1,2,3]) and log_softmax([1,2,3]) */
#define SM123 0.0900305731703805, 0.2447284710547976, 0.6652409557748219
#define LSM123 -2.4076059644443806, -1.4076059644443806, -0.4076059644443806
#define LOG3 1.0986122886681098

/* ---- softmax / log_softmax ---------------------------------------------------------- */

START_TEST(test_softmax_values) {
    float v[] = {1, 2, 3, 1000, 1000, 1000, -1000, 0, 1000};
    gb_tensor *x = gb_from_f32(v, GB_SHAPE(3, 3));
    ASSERT_VALUES(gb_softmax(x, -1), 1e-6, SM123, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 0, 1);
    double d[] = {1, 2, 3};
    ASSERT_VALUES(gb_softmax(gb_from_f64(d, GB_SHAPE(3)), 0), 1e-15, SM123);
}
END_TEST

START_TEST(test_softmax_other_axes) {
    /* axis 0 of [[1,5],[2,5],[3,5]]: columns are [1,2,3] and [5,5,5] */
    double v[] = {1, 5, 2, 5, 3, 5};
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(3, 2));
    const double a = 0.0900305731703805, b = 0.2447284710547976, c = 0.6652409557748219;
    ASSERT_VALUES(gb_softmax(x, 0), 1e-15, a, 1.0 / 3, b, 1.0 / 3, c, 1.0 / 3);
    ASSERT_VALUES(gb_log_softmax(x, -2), 1e-14, log(a), -LOG3, log(b), -LOG3, log(c), -LOG3);
    /* the middle axis of a rank-3 tensor */
    gb_tensor *y = gb_softmax(gb_reshape(x, 3, (const int64_t[]){1, 3, 2}), 1);
    ASSERT_VALUES(y, 1e-15, a, 1.0 / 3, b, 1.0 / 3, c, 1.0 / 3);
}
END_TEST

/* An empty axis or batch: empty results, and no kernel touching data that
 * is not there (UBSan caught pointer arithmetic on NULL). */
START_TEST(test_softmax_of_empty_tensors) {
    int64_t shapes[][2] = {{2, 0}, {0, 3}};
    for (int k = 0; k < 2; k++) {
        gb_tensor *x = gb_zeros(GB_F32, 2, shapes[k]);
        gb_tensor *y = gb_softmax(x, -1), *z = gb_log_softmax(x, 0);
        ck_assert_msg(y && z, "%s", gb_error_string());
        ck_assert_int_eq(gb_size(y), 0);
        ck_assert_int_eq(gb_dim(y, 0), shapes[k][0]);
        ck_assert_int_eq(gb_dim(z, 1), shapes[k][1]);
    }
}
END_TEST

START_TEST(test_log_softmax_values) {
    float v[] = {1, 2, 3, 1000, 0, -1000};
    gb_tensor *y = gb_log_softmax(gb_from_f32(v, GB_SHAPE(2, 3)), -1);
    ASSERT_VALUES(y, 1e-5, LSM123, 0, -1000, -2000);
}
END_TEST

/* ---- cross-entropy values -------------------------------------------------------------- */

START_TEST(test_sparse_xent_values) {
    float v[] = {1, 2, 3, 1, 1, 1};
    gb_tensor *logits = gb_from_f32(v, GB_SHAPE(2, 3));
    gb_tensor *l32 = gb_tensor_from(GB_I32, (int32_t[]){2, 0}, GB_SHAPE(2));
    gb_tensor *l64 = gb_tensor_from(GB_I64, (int64_t[]){0, 1}, GB_SHAPE(2));
    /* -log(softmax(row)[label]) */
    gb_tensor *loss = gb_sparse_softmax_cross_entropy_with_logits(l32, logits);
    ck_assert_int_eq(gb_rank(loss), 1);
    ASSERT_VALUES(loss, 1e-6, 0.4076059644443806, LOG3);
    ASSERT_VALUES(gb_sparse_softmax_cross_entropy_with_logits(l64, logits), 1e-6,
                  2.4076059644443806, LOG3);
    /* huge logits stay finite */
    gb_tensor *big = gb_from_f32((float[]){1000, -1000}, GB_SHAPE(1, 2));
    ASSERT_VALUES(gb_sparse_softmax_cross_entropy_with_logits(
                      gb_tensor_from(GB_I32, (int32_t[]){1}, GB_SHAPE(1)), big),
                  1e-3, 2000);
    /* leading dims beyond one batch axis: labels [2,1], logits [2,1,3] */
    gb_tensor *l3 = gb_sparse_softmax_cross_entropy_with_logits(
        gb_tensor_from(GB_I64, (int64_t[]){1, 2}, GB_SHAPE(2, 1)),
        gb_reshape(logits, 3, (const int64_t[]){2, 1, 3}));
    ck_assert_int_eq(gb_rank(l3), 2);
    ASSERT_VALUES(l3, 1e-6, 1.4076059644443806, LOG3);
}
END_TEST

START_TEST(test_dense_xent_values) {
    double v[] = {1, 2, 3, 1, 1, 1}, p[] = {0, 0, 1, 0.5, 0.5, 0};
    gb_tensor *loss = gb_softmax_cross_entropy_with_logits(gb_from_f64(p, GB_SHAPE(2, 3)),
                                                           gb_from_f64(v, GB_SHAPE(2, 3)));
    ASSERT_VALUES(loss, 1e-14, 0.4076059644443806, LOG3);
    /* a soft target: 0.2 * 2.4076 + 0.3 * 1.4076 + 0.5 * 0.4076 */
    double q[] = {0.2, 0.3, 0.5};
    ASSERT_VALUES(gb_softmax_cross_entropy_with_logits(gb_from_f64(q, GB_SHAPE(1, 3)),
                                                       gb_from_f64(v, GB_SHAPE(1, 3))),
                  1e-14,
                  0.2 * 2.4076059644443806 + 0.3 * 1.4076059644443806 + 0.5 * 0.4076059644443806);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------- */

START_TEST(test_errors) {
    gb_tensor *logits = gb_zeros(GB_F32, GB_SHAPE(2, 3));
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(
                     gb_tensor_from(GB_I32, (int32_t[]){0, 3}, GB_SHAPE(2)), logits),
                 GB_ERR_VALUE,
                 "SparseSoftmaxCrossEntropyWithLogits: label 3 at row 1 is out of range [0, 3)");
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(
                     gb_tensor_from(GB_I64, (int64_t[]){-1, 0}, GB_SHAPE(2)), logits),
                 GB_ERR_VALUE, "label -1 at row 0 is out of range [0, 3)");
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(gb_zeros(GB_F32, GB_SHAPE(2)), logits),
                 GB_ERR_DTYPE, "labels must be int32 or int64, got float32");
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(gb_zeros(GB_I32, GB_SHAPE(3)), logits),
                 GB_ERR_SHAPE,
                 "labels [3] must have the shape of logits [2,3] without its last axis");
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(gb_zeros(GB_I32, GB_SHAPE(2)),
                                                             gb_zeros(GB_I32, GB_SHAPE(2, 3))),
                 GB_ERR_DTYPE, "logits must be float32 or float64, got int32");
    expect_error(gb_sparse_softmax_cross_entropy_with_logits(gb_zeros(GB_I32, GB_SHAPE(2)),
                                                             gb_zeros(GB_F32, GB_SHAPE(2, 0))),
                 GB_ERR_SHAPE, "logits [2,0] need a last (class) axis of size >= 1");
    expect_error(
        gb_softmax_cross_entropy_with_logits(gb_zeros(GB_F32, GB_SHAPE(2, 4)), logits),
        GB_ERR_SHAPE,
        "SoftmaxCrossEntropyWithLogits: labels [2,4] and logits [2,3] must have the same shape");
    expect_error(gb_softmax_cross_entropy_with_logits(gb_zeros(GB_F64, GB_SHAPE(2, 3)), logits),
                 GB_ERR_DTYPE, "labels are float64 but logits are float32");
    expect_error(gb_softmax(logits, 2), GB_ERR_VALUE,
                 "Softmax: axis 2 is out of range for a rank-2 tensor");
    expect_error(gb_log_softmax(gb_scalar(GB_F32, 1), -1), GB_ERR_SHAPE,
                 "LogSoftmax: logits must have rank >= 1, got a scalar");
    expect_error(gb_softmax(gb_zeros(GB_I64, GB_SHAPE(3)), 0), GB_ERR_DTYPE,
                 "Softmax: logits must be float32 or float64, got int64");
}
END_TEST

/* ---- gradients ---------------------------------------------------------------------------- */

static gb_tensor *softmax_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_softmax(x[0], *(int *)u);
}

static gb_tensor *log_softmax_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    return gb_log_softmax(x[0], *(int *)u);
}

START_TEST(test_grad_softmax) {
    for (int axis = -1; axis < 3; axis++) {
        gb_tensor *x = GC_INPUT(-2, 2, 1 + axis, 2, 3, 4);
        GC_ASSERT(softmax_fn, &x, 1, &axis);
        GC_ASSERT(log_softmax_fn, &x, 1, &axis);
    }
}
END_TEST

static gb_tensor *sparse_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_sparse_softmax_cross_entropy_with_logits(x[0], x[1]);
}

static gb_tensor *dense_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_softmax_cross_entropy_with_logits(x[0], x[1]);
}

START_TEST(test_grad_sparse_xent) {
    gb_tensor *xs[2] = {gb_tensor_from(GB_I32, (int32_t[]){0, 3, 1, 3}, GB_SHAPE(4)),
                        GC_INPUT(-3, 3, 7, 4, 5)};
    GC_ASSERT(sparse_fn, xs, 2, NULL);
    xs[0] = gb_tensor_from(GB_I64, (int64_t[]){4, 2, 0, 1}, GB_SHAPE(4));
    GC_ASSERT(sparse_fn, xs, 2, NULL);
}
END_TEST

START_TEST(test_grad_dense_xent) {
    /* a proper distribution, and unnormalized weights (the exact gradient
     * keeps the sum of the labels) */
    gb_tensor *logits = GC_INPUT(-3, 3, 9, 3, 4);
    gb_tensor *xs[2] = {gb_softmax(GC_INPUT(-1, 1, 10, 3, 4), -1), logits};
    GC_ASSERT(dense_fn, xs, 2, NULL);
    xs[0] = GC_INPUT(0, 1, 11, 3, 4);
    GC_ASSERT(dense_fn, xs, 2, NULL);
}
END_TEST

/* d loss / d logits on an inner tape; its derivative is the loss's Hessian
 * applied to the outer weights. */
static gb_tensor *sparse_grad_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x[1]);
    gb_tensor *loss = gb_sparse_softmax_cross_entropy_with_logits(x[0], x[1]);
    gb_tape_end(t);
    return gb_tape_gradient(t, loss, x[1]);
}

START_TEST(test_second_order_sparse_xent) {
    gb_tensor *xs[2] = {gb_tensor_from(GB_I32, (int32_t[]){2, 0, 1}, GB_SHAPE(3)),
                        GC_INPUT(-2, 2, 12, 3, 4)};
    GC_ASSERT(sparse_grad_fn, xs, 2, NULL);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_nn");
    TCase *tc = tcase_create("nn");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_softmax_values);
    tcase_add_test(tc, test_softmax_other_axes);
    tcase_add_test(tc, test_softmax_of_empty_tensors);
    tcase_add_test(tc, test_log_softmax_values);
    tcase_add_test(tc, test_sparse_xent_values);
    tcase_add_test(tc, test_dense_xent_values);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_grad_softmax);
    tcase_add_test(tc, test_grad_sparse_xent);
    tcase_add_test(tc, test_grad_dense_xent);
    tcase_add_test(tc, test_second_order_sparse_xent);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
