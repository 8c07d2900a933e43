/* test_ops_random.c — seeded random ops and dropout: reproducibility,
 * distribution moments over 100k samples, truncation, and every error. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

enum { BIG = 100000 };

/* Mean and (population) standard deviation of t's elements. */
static void moments(const gb_tensor *t, double *mean, double *sd) {
    double s = 0, s2 = 0;
    int64_t n = gb_size(t);
    for (int64_t i = 0; i < n; i++) s += gb_get(t, i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += pow(gb_get(t, i) - *mean, 2);
    *sd = sqrt(s2 / (double)n);
}

static bool same_values(const gb_tensor *a, const gb_tensor *b) {
    if (gb_size(a) != gb_size(b)) return false;
    return memcmp(gb_data(a), gb_data(b), gb_nbytes(a)) == 0;
}

/* ---- reproducibility ------------------------------------------------------------ */

START_TEST(test_same_seed_same_tensor) {
    for (int dt = GB_F32; dt <= GB_F64; dt++) {
        gb_tensor *a = gb_random_uniform(dt, GB_SHAPE(3, 5), -1, 1, 42);
        gb_tensor *b = gb_random_uniform(dt, GB_SHAPE(3, 5), -1, 1, 42);
        gb_tensor *c = gb_random_uniform(dt, GB_SHAPE(3, 5), -1, 1, 43);
        ck_assert(same_values(a, b));
        ck_assert(!same_values(a, c));
        gb_tensor *n1 = gb_random_normal(dt, GB_SHAPE(7), 0, 1, 9);
        gb_tensor *n2 = gb_random_normal(dt, GB_SHAPE(7), 0, 1, 9);
        gb_tensor *n3 = gb_random_normal(dt, GB_SHAPE(7), 0, 1, 10);
        ck_assert(same_values(n1, n2));
        ck_assert(!same_values(n1, n3));
        gb_tensor *t1 = gb_truncated_normal(dt, GB_SHAPE(2, 2), 0, 1, 5);
        gb_tensor *t2 = gb_truncated_normal(dt, GB_SHAPE(2, 2), 0, 1, 5);
        gb_tensor *t3 = gb_truncated_normal(dt, GB_SHAPE(2, 2), 0, 1, 6);
        ck_assert(same_values(t1, t2));
        ck_assert(!same_values(t1, t3));
    }
    ck_assert(gb_ok());
}
END_TEST

/* Counter-based: the first k elements of a bigger tensor are the tensor of
 * k elements, so reshaping a layer never reshuffles its first weights. */
START_TEST(test_prefix_stable) {
    gb_tensor *small = gb_random_normal(GB_F64, GB_SHAPE(4), 0, 1, 77);
    gb_tensor *big = gb_random_normal(GB_F64, GB_SHAPE(10), 0, 1, 77);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(small, i), gb_get(big, i));
}
END_TEST

START_TEST(test_shapes_and_dtypes) {
    gb_tensor *a = gb_random_uniform(GB_F32, GB_SHAPE(2, 3, 4), 0, 1, 1);
    ck_assert_int_eq(gb_tensor_dtype(a), GB_F32);
    ck_assert_int_eq(gb_rank(a), 3);
    ck_assert_int_eq(gb_dim(a, 2), 4);
    gb_tensor *s = gb_random_normal(GB_F64, GB_SCALAR_SHAPE, 3, 0, 1);
    ck_assert_int_eq(gb_rank(s), 0);
    ck_assert_double_eq(gb_item(s), 3.0); /* stddev 0: exactly the mean */
    gb_tensor *e = gb_truncated_normal(GB_F32, GB_SHAPE(0, 5), 0, 1, 1);
    ck_assert_int_eq(gb_size(e), 0);
    ck_assert(gb_ok());
}
END_TEST

/* ---- distributions ----------------------------------------------------------------- */

START_TEST(test_uniform_moments_and_range) {
    gb_tensor *u = gb_random_uniform(GB_F32, GB_SHAPE(BIG), -2, 4, 2024);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < BIG; i++) {
        lo = fmin(lo, gb_get(u, i));
        hi = fmax(hi, gb_get(u, i));
    }
    ck_assert(lo >= -2.0 && hi < 4.0);
    ck_assert(lo < -1.99 && hi > 3.99); /* covers the whole interval */
    double m, sd;
    moments(u, &m, &sd);
    ck_assert_msg(fabs(m - 1.0) < 0.03, "mean %g", m);
    ck_assert_msg(fabs(sd - 6.0 / sqrt(12.0)) < 0.02, "sd %g", sd);
}
END_TEST

START_TEST(test_uniform_int) {
    gb_tensor *u = gb_random_uniform(GB_I32, GB_SHAPE(1000), 3, 7, 8);
    ck_assert_int_eq(gb_tensor_dtype(u), GB_I32);
    int seen[4] = {0};
    for (int64_t i = 0; i < 1000; i++) {
        double v = gb_get(u, i);
        ck_assert(v >= 3 && v <= 6 && v == floor(v));
        seen[(int)v - 3]++;
    }
    for (int k = 0; k < 4; k++) ck_assert_int_gt(seen[k], 180);
}
END_TEST

START_TEST(test_normal_moments) {
    for (int dt = GB_F32; dt <= GB_F64; dt++) {
        gb_tensor *n = gb_random_normal(dt, GB_SHAPE(BIG), 1.5, 2.0, 31337);
        double m, sd;
        moments(n, &m, &sd);
        ck_assert_msg(fabs(m - 1.5) < 0.03, "mean %g", m);
        ck_assert_msg(fabs(sd - 2.0) < 0.03, "sd %g", sd);
        /* About 4.55% of a normal lies beyond 2 sd. */
        int64_t out = 0;
        for (int64_t i = 0; i < BIG; i++) out += fabs(gb_get(n, i) - 1.5) > 4.0;
        ck_assert_msg(out > 4000 && out < 5100, "beyond 2 sd: %lld", (long long)out);
    }
}
END_TEST

START_TEST(test_truncated_normal) {
    gb_tensor *t = gb_truncated_normal(GB_F64, GB_SHAPE(BIG), -1.0, 0.5, 99);
    double m, sd;
    moments(t, &m, &sd);
    for (int64_t i = 0; i < BIG; i++) ck_assert(fabs(gb_get(t, i) + 1.0) <= 1.0);
    /* A standard normal truncated to [-2, 2] has sd 0.8796. */
    ck_assert_msg(fabs(m + 1.0) < 0.01, "mean %g", m);
    ck_assert_msg(fabs(sd - 0.5 * 0.8796) < 0.01, "sd %g", sd);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------- */

START_TEST(test_errors) {
    expect_error(gb_random_uniform(GB_F32, GB_SHAPE(2, -3), 0, 1, 1), GB_ERR_SHAPE,
                 "RandomUniform: negative dimension in shape [2,-3]");
    expect_error(gb_random_uniform(GB_F32, GB_SHAPE(2), 1, 0, 1), GB_ERR_VALUE,
                 "RandomUniform: need minval <= maxval, got minval 1, maxval 0");
    expect_error(gb_random_uniform(GB_I64, GB_SHAPE(2), 3, 3, 1), GB_ERR_VALUE,
                 "need minval < maxval");
    /* Integer bounds past the type (the fuzzer's 1e300) or a span past
     * int64 would wrap: refused by name. The widest allowed still draw. */
    expect_error(gb_random_uniform(GB_I64, GB_SHAPE(2), 0, 1e300, 1), GB_ERR_VALUE,
                 "RandomUniform: int64 bounds must lie within the type and span less than 2^63, "
                 "got minval 0, maxval 1e+300");
    expect_error(gb_random_uniform(GB_I64, GB_SHAPE(2), -0x1p62, 0x1p62, 1), GB_ERR_VALUE,
                 "span less than 2^63");
    expect_error(gb_random_uniform(GB_I32, GB_SHAPE(2), 0, 0x1p31, 1), GB_ERR_VALUE,
                 "RandomUniform: int32 bounds must lie within the type");
    gb_tensor *wide = gb_random_uniform(GB_I32, GB_SHAPE(64), -0x1p31, 0x1p31 - 1, 7);
    ck_assert_ptr_nonnull(wide);
    for (int64_t i = 0; i < 64; i++) ck_assert(gb_get(wide, i) >= -0x1p31 && gb_get(wide, i) < 0x1p31);
    expect_error(gb_random_uniform(GB_BOOL, GB_SHAPE(2), 0, 1, 1), GB_ERR_DTYPE,
                 "RandomUniform: dtype bool is not supported");
    expect_error(gb_random_normal(GB_I32, GB_SHAPE(2), 0, 1, 1), GB_ERR_DTYPE,
                 "RandomStandardNormal: dtype int32 is not supported (use float32 or float64)");
    expect_error(gb_random_normal(GB_F32, GB_SHAPE(2), 0, -1, 1), GB_ERR_VALUE,
                 "stddev must be >= 0, got -1");
    expect_error(gb_truncated_normal(GB_F32, GB_SHAPE(2), NAN, 1, 1), GB_ERR_VALUE,
                 "TruncatedNormal: parameters must be finite");
    expect_error(
        gb_truncated_normal(GB_F32, 9, (const int64_t[9]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 1, 1),
        GB_ERR_SHAPE, "rank 9 is outside 0..8");
    expect_error(gb_random_uniform(GB_F32, 2, NULL, 0, 1, 1), GB_ERR_SHAPE,
                 "rank 2 but no dims given");
}
END_TEST

/* ---- dropout ------------------------------------------------------------------------ */

START_TEST(test_dropout_values) {
    gb_tensor *x = gb_fill(GB_F64, GB_SHAPE(BIG), 2.0);
    ck_assert_ptr_nonnull(x);
    gb_tensor *y = gb_dropout(x, 0.25, 7);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    int64_t zeros = 0;
    for (int64_t i = 0; i < BIG; i++) {
        double v = gb_get(y, i);
        ck_assert_msg(v == 0.0 || fabs(v - 2.0 / 0.75) < 1e-12, "element %lld is %g", (long long)i,
                      v);
        zeros += v == 0.0;
    }
    ck_assert_msg(labs((long)zeros - BIG / 4) < 600, "zeros %lld", (long long)zeros);
    /* Same seed, same mask; another seed, another mask. */
    ck_assert(same_values(y, gb_dropout(x, 0.25, 7)));
    ck_assert(!same_values(y, gb_dropout(x, 0.25, 8)));
    /* rate 0 keeps everything. */
    ASSERT_VALUES(gb_dropout(gb_fill(GB_F32, GB_SHAPE(3), 1.5), 0.0, 1), 0, 1.5, 1.5, 1.5);
}
END_TEST

static gb_tensor *dropout_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_dropout(x[0], 0.5, 3);
}

START_TEST(test_dropout_gradient) {
    gb_tensor *x = GC_INPUT(-1, 1, 5, 4, 6);
    GC_ASSERT(dropout_fn, &x, 1, NULL);
}
END_TEST

START_TEST(test_dropout_errors) {
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(4));
    expect_error(gb_dropout(x, 1.0, 1), GB_ERR_VALUE, "rate must be in [0, 1), got 1");
    expect_error(gb_dropout(x, -0.1, 1), GB_ERR_VALUE, "rate must be in [0, 1), got -0.1");
    expect_error(gb_dropout(x, NAN, 1), GB_ERR_VALUE, "rate must be in [0, 1)");
    expect_error(gb_dropout(gb_ones(GB_I32, GB_SHAPE(4)), 0.5, 1), GB_ERR_DTYPE,
                 "x must be float32 or float64, got int32");
    expect_error(gb_dropout(NULL, 0.5, 1), GB_ERR_VALUE, "input is NULL");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_random");
    TCase *tc = tcase_create("random");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_same_seed_same_tensor);
    tcase_add_test(tc, test_prefix_stable);
    tcase_add_test(tc, test_shapes_and_dtypes);
    tcase_add_test(tc, test_uniform_moments_and_range);
    tcase_add_test(tc, test_uniform_int);
    tcase_add_test(tc, test_normal_moments);
    tcase_add_test(tc, test_truncated_normal);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_dropout_values);
    tcase_add_test(tc, test_dropout_gradient);
    tcase_add_test(tc, test_dropout_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
