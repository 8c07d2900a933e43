/* test_ops_reduce.c — reductions: values, axis patterns, dtypes, errors, gradients.
 *
 * Forward values are checked against numbers worked out by hand on
 * x[i,j,k] = 12i + 4j + k (shape [2,3,4]) for every axis pattern (all,
 * first, middle, last, two axes, negative axes, keepdims), and against a
 * naive reference loop on random data for every subset of axes of rank-3
 * and rank-4 tensors, which exercises the rows, columns and general
 * strided kernels. Every differentiable reduction has finite-difference
 * gradient checks in float64, including Max/Min with ties and Prod with
 * zeros (and an exact second derivative of Prod through a zero).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* x[i,j,k] = 12i + 4j + k, shape [2,3,4], in dtype dt. */
static gb_tensor *iota234(gb_dtype dt) {
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = i;
    return gb_cast(gb_from_f64(v, GB_SHAPE(2, 3, 4)), dt);
}

static void assert_shape(const gb_tensor *t, int rank, const int64_t *dims) {
    ck_assert_msg(t != NULL, "tensor is NULL: %s", gb_error_string());
    ck_assert_int_eq(gb_rank(t), rank);
    for (int i = 0; i < rank; i++) ck_assert_int_eq(gb_dim(t, i), dims[i]);
}
#define ASSERT_SHAPE(t, ...) assert_shape((t), GB_SHAPE(__VA_ARGS__))

/* Asserts the sticky error has this code and message fragment, then clears it. */
/* ---- forward values: each axis pattern ------------------------------------------------ */

START_TEST(test_sum_axis_patterns) {
    gb_scope_begin();
    for (int d = 0; d < 2; d++) {
        gb_tensor *x = iota234(d ? GB_F64 : GB_F32);
        gb_tensor *all = gb_reduce_sum(x, GB_ALL_AXES, false);
        ck_assert_int_eq(gb_rank(all), 0);
        ASSERT_VALUES(all, 0, 276);
        ck_assert_int_eq(gb_tensor_dtype(all), d ? GB_F64 : GB_F32);
        gb_tensor *first = gb_reduce_sum(x, GB_AXES(0), false);
        ASSERT_SHAPE(first, 3, 4);
        ASSERT_VALUES(first, 0, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34);
        gb_tensor *middle = gb_reduce_sum(x, GB_AXES(1), false);
        ASSERT_SHAPE(middle, 2, 4);
        ASSERT_VALUES(middle, 0, 12, 15, 18, 21, 48, 51, 54, 57);
        gb_tensor *last = gb_reduce_sum(x, GB_AXES(2), false);
        ASSERT_SHAPE(last, 2, 3);
        ASSERT_VALUES(last, 0, 6, 22, 38, 54, 70, 86);
        ASSERT_VALUES(gb_reduce_sum(x, GB_AXES(-1), false), 0, 6, 22, 38, 54, 70, 86);
        gb_tensor *outer2 = gb_reduce_sum(x, GB_AXES(0, 2), false);
        ASSERT_SHAPE(outer2, 3);
        ASSERT_VALUES(outer2, 0, 60, 92, 124);
        ASSERT_VALUES(gb_reduce_sum(x, GB_AXES(-1, 0), false), 0, 60, 92, 124);
        ASSERT_VALUES(gb_reduce_sum(x, GB_AXES(1, 2), false), 0, 66, 210);
        ASSERT_VALUES(gb_reduce_sum(x, GB_AXES(0, 1), false), 0, 60, 66, 72, 78);
        gb_tensor *kd = gb_reduce_sum(x, GB_AXES(1), true);
        ASSERT_SHAPE(kd, 2, 1, 4);
        ASSERT_VALUES(kd, 0, 12, 15, 18, 21, 48, 51, 54, 57);
        gb_tensor *kd_all = gb_reduce_sum(x, GB_ALL_AXES, true);
        ASSERT_SHAPE(kd_all, 1, 1, 1);
        ASSERT_VALUES(kd_all, 0, 276);
        ASSERT_SHAPE(gb_reduce_sum(x, GB_AXES(0, -1), true), 1, 3, 1);
    }
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_mean_max_min_prod_values) {
    gb_scope_begin();
    gb_tensor *x = iota234(GB_F32);
    ASSERT_VALUES(gb_reduce_mean(x, GB_ALL_AXES, false), 1e-6, 11.5);
    ASSERT_VALUES(gb_reduce_mean(x, GB_AXES(2), false), 1e-6, 1.5, 5.5, 9.5, 13.5, 17.5, 21.5);
    ASSERT_VALUES(gb_reduce_mean(x, GB_AXES(0), false), 1e-6, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                  15, 16, 17);
    ASSERT_VALUES(gb_reduce_mean(x, GB_AXES(0, 2), false), 1e-6, 7.5, 11.5, 15.5);
    ASSERT_VALUES(gb_reduce_max(x, GB_AXES(1), false), 0, 8, 9, 10, 11, 20, 21, 22, 23);
    ASSERT_VALUES(gb_reduce_min(x, GB_AXES(1), false), 0, 0, 1, 2, 3, 12, 13, 14, 15);
    ASSERT_VALUES(gb_reduce_max(x, GB_AXES(-1), true), 0, 3, 7, 11, 15, 19, 23);
    ASSERT_VALUES(gb_reduce_min(x, GB_AXES(0, 2), false), 0, 0, 4, 8);
    ASSERT_VALUES(gb_reduce_max(x, GB_ALL_AXES, false), 0, 23);

    const double p[] = {1, 2, 3, -1, 0.5, 4};
    gb_tensor *y = gb_from_f64(p, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_reduce_prod(y, GB_ALL_AXES, false), 1e-12, -12);
    ASSERT_VALUES(gb_reduce_prod(y, GB_AXES(1), false), 1e-12, 6, -2);
    ASSERT_VALUES(gb_reduce_prod(y, GB_AXES(0), true), 1e-12, -1, 1, 12);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* Reference: reduces x (float64 values, shape dims) over mask, naive loops. */
static void reference_reduce(int op, const double *x, int rank, const int64_t *dims, int mask,
                             double *out, int64_t nout) {
    for (int64_t o = 0; o < nout; o++)
        out[o] = op == 0 ? 0 : op == 1 ? 1 : op == 2 ? -INFINITY : INFINITY;
    int64_t size = 1;
    for (int i = 0; i < rank; i++) size *= dims[i];
    for (int64_t e = 0; e < size; e++) {
        int64_t rem = e, o = 0, mul = 1;
        for (int i = rank - 1; i >= 0; i--) {
            int64_t idx = rem % dims[i];
            rem /= dims[i];
            if (!((mask >> i) & 1)) {
                o += idx * mul;
                mul *= dims[i];
            }
        }
        double v = x[e];
        if (op == 0) out[o] += v;
        else if (op == 1) out[o] *= v;
        else if (op == 2) out[o] = fmax(out[o], v);
        else out[o] = fmin(out[o], v);
    }
}

typedef gb_tensor *(*reduce_call)(gb_tensor *, const int64_t *, int, bool);

/* Every non-empty subset of axes, every reducer, both float dtypes, against
 * the reference: covers the rows, columns and general paths. */
static void check_all_masks(int rank, const int64_t *dims, uint64_t seed) {
    const reduce_call calls[4] = {gb_reduce_sum, gb_reduce_prod, gb_reduce_max, gb_reduce_min};
    gb_tensor *x = gb_random_uniform(GB_F64, rank, dims, 0.5, 1.5, seed);
    const double *xv = gb_data(x);
    for (int mask = 1; mask < (1 << rank); mask++) {
        int64_t axes[8];
        int n = 0;
        int64_t nout = 1;
        for (int i = 0; i < rank; i++) {
            if ((mask >> i) & 1) axes[n++] = (i % 2) ? i - rank : i; /* mix negative axes */
            else nout *= dims[i];
        }
        double ref[512];
        for (int op = 0; op < 4; op++) {
            reference_reduce(op, xv, rank, dims, mask, ref, nout);
            for (int d = 0; d < 2; d++) {
                gb_scope_begin();
                gb_tensor *xi = d ? x : gb_cast(x, GB_F32);
                gb_tensor *y = calls[op](xi, axes, n, false);
                ck_assert_msg(y != NULL, "%s", gb_error_string());
                ck_assert_int_eq(gb_size(y), nout);
                double tol = d ? 1e-12 : 1e-5;
                for (int64_t o = 0; o < nout; o++)
                    ck_assert_msg(fabs(gb_get(y, o) - ref[o]) <= tol * fmax(1, fabs(ref[o])),
                                  "op %d mask %d dtype %d element %lld: %.9g vs %.9g", op, mask,
                                  d, (long long)o, gb_get(y, o), ref[o]);
                gb_scope_end();
            }
        }
    }
}

/* Integer Sum/Max/Min on every axis subset: exact, through the uint64 lanes. */
static void check_all_masks_int(int rank, const int64_t *dims, uint64_t seed) {
    const reduce_call calls[4] = {gb_reduce_sum, NULL, gb_reduce_max, gb_reduce_min};
    gb_tensor *x = gb_cast(gb_random_uniform(GB_F64, rank, dims, -50, 50, seed), GB_I32);
    gb_tensor *xd = gb_cast(x, GB_F64);
    for (int mask = 1; mask < (1 << rank); mask++) {
        int64_t axes[8];
        int n = 0;
        int64_t nout = 1;
        for (int i = 0; i < rank; i++) {
            if ((mask >> i) & 1) axes[n++] = i;
            else nout *= dims[i];
        }
        double ref[512];
        for (int op = 0; op < 4; op++) {
            if (!calls[op]) continue;
            reference_reduce(op, gb_data(xd), rank, dims, mask, ref, nout);
            gb_tensor *y = calls[op](x, axes, n, false);
            ck_assert_int_eq(gb_tensor_dtype(y), GB_I32);
            for (int64_t o = 0; o < nout; o++)
                ck_assert_msg(gb_get(y, o) == ref[o], "int op %d mask %d element %lld: %g vs %g",
                              op, mask, (long long)o, gb_get(y, o), ref[o]);
        }
    }
}

START_TEST(test_every_axis_subset_matches_reference) {
    gb_scope_begin();
    check_all_masks(3, (const int64_t[]){7, 13, 5}, 1);
    check_all_masks(4, (const int64_t[]){3, 4, 5, 6}, 2);
    check_all_masks(4, (const int64_t[]){2, 1, 9, 1}, 3); /* size-1 axes are dropped */
    check_all_masks(3, (const int64_t[]){3, 20, 11}, 4);   /* runs longer than the 8 lanes */
    check_all_masks_int(3, (const int64_t[]){5, 17, 3}, 5);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_float32_sum_accumulates_in_double) {
    gb_scope_begin();
    /* 10^6 copies of 0.1f: a float accumulator drifts by about 1%. */
    gb_tensor *x = gb_fill(GB_F32, GB_SHAPE(1000000), 0.1);
    double want = 1e6 * (double)0.1f;
    ck_assert_msg(fabs(gb_item(gb_reduce_sum(x, GB_ALL_AXES, false)) - want) < 0.02,
                  "sum %.6f", gb_item(gb_reduce_sum(x, GB_ALL_AXES, false)));
    ck_assert_msg(fabs(gb_item(gb_reduce_mean(x, GB_ALL_AXES, false)) - 0.1) < 1e-7, "mean");
    /* Columns path too: [1000000, 1] reduced over axis 0 is a row; [250000, 4] a column sum. */
    gb_tensor *cols = gb_reduce_sum(gb_reshape(x, GB_SHAPE(250000, 4)), GB_AXES(0), false);
    for (int i = 0; i < 4; i++) ck_assert(fabs(gb_get(cols, i) - want / 4) < 0.01);
    gb_scope_end();
}
END_TEST

START_TEST(test_integer_dtypes) {
    gb_scope_begin();
    const int32_t a[] = {3, -7, 5, 2, 9, -1};
    gb_tensor *x = gb_tensor_from(GB_I32, a, GB_SHAPE(2, 3));
    gb_tensor *s = gb_reduce_sum(x, GB_AXES(1), false);
    ck_assert_int_eq(gb_tensor_dtype(s), GB_I32);
    ASSERT_VALUES(s, 0, 1, 10);
    ASSERT_VALUES(gb_reduce_max(x, GB_AXES(0), false), 0, 3, 9, 5);
    ASSERT_VALUES(gb_reduce_min(x, GB_ALL_AXES, false), 0, -7);
    ASSERT_VALUES(gb_reduce_prod(x, GB_AXES(1), false), 0, -105, -18);
    ASSERT_VALUES(gb_reduce_mean(x, GB_AXES(1), false), 0, 0, 3); /* 1/3 -> 0, 10/3 -> 3 */
    /* int32 sums wrap as in TensorFlow. */
    const int32_t big[] = {INT32_MAX, 1};
    ASSERT_VALUES(gb_reduce_sum(gb_tensor_from(GB_I32, big, GB_SHAPE(2)), GB_ALL_AXES, false), 0,
                  (double)INT32_MIN);
    const int64_t l[] = {-5, 1LL << 40, 7, -(1LL << 41)};
    gb_tensor *y = gb_tensor_from(GB_I64, l, GB_SHAPE(4));
    ASSERT_VALUES(gb_reduce_max(y, GB_ALL_AXES, false), 0, (double)(1LL << 40));
    ASSERT_VALUES(gb_reduce_min(y, GB_ALL_AXES, false), 0, (double)-(1LL << 41));
    ASSERT_VALUES(gb_reduce_sum(y, GB_ALL_AXES, false), 0, (double)(2 - (1LL << 40)));
    const uint8_t u[] = {200, 100, 7, 255};
    gb_tensor *z = gb_tensor_from(GB_U8, u, GB_SHAPE(2, 2));
    ASSERT_VALUES(gb_reduce_max(z, GB_AXES(1), false), 0, 200, 255);
    ASSERT_VALUES(gb_reduce_min(z, GB_AXES(0), false), 0, 7, 100);
    ASSERT_VALUES(gb_reduce_sum(z, GB_AXES(1), false), 0, 44, 6); /* uint8 wraps: 300, 262 */
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_nan_and_empty) {
    gb_scope_begin();
    const double v[] = {1, NAN, 3, 4, 2, 0};
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(2, 3));
    gb_tensor *mx = gb_reduce_max(x, GB_AXES(1), false);
    ck_assert(isnan(gb_get(mx, 0)));
    ck_assert(gb_get(mx, 1) == 4);
    ck_assert(isnan(gb_get(gb_reduce_min(x, GB_AXES(0), false), 1)));
    ASSERT_VALUES(gb_argmax(x, 1), 0, 1, 0); /* the NaN wins */

    gb_tensor *e = gb_zeros(GB_F32, GB_SHAPE(0, 3));
    ASSERT_VALUES(gb_reduce_sum(e, GB_AXES(0), false), 0, 0, 0, 0);
    ASSERT_VALUES(gb_reduce_prod(e, GB_AXES(0), false), 0, 1, 1, 1);
    gb_tensor *emax = gb_reduce_max(e, GB_AXES(0), false);
    ck_assert(isinf(gb_get(emax, 0)) && gb_get(emax, 0) < 0);
    ck_assert(isnan(gb_get(gb_reduce_mean(e, GB_AXES(0), false), 2)));
    ASSERT_SHAPE(gb_reduce_sum(e, GB_AXES(1), false), 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_argmax_argmin) {
    gb_scope_begin();
    const float v[] = {1, 5, 5, 2, 7, 0, 7, 3, -1, -1, 4, 0};
    gb_tensor *x = gb_from_f32(v, GB_SHAPE(3, 4));
    gb_tensor *am = gb_argmax(x, 1);
    ck_assert_int_eq(gb_tensor_dtype(am), GB_I64);
    ASSERT_SHAPE(am, 3);
    ASSERT_VALUES(am, 0, 1, 0, 2); /* ties: the first index */
    ASSERT_VALUES(gb_argmin(x, -1), 0, 0, 1, 0);
    ASSERT_VALUES(gb_argmax(x, 0), 0, 1, 0, 1, 1);
    ASSERT_VALUES(gb_argmin(x, 0), 0, 2, 2, 2, 2);
    const int32_t iv[] = {4, 9, 9, -3, 2, 8};
    gb_tensor *xi = gb_tensor_from(GB_I32, iv, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_argmax(xi, 1), 0, 1, 2);
    ASSERT_VALUES(gb_argmin(xi, 0), 0, 1, 1, 1);
    /* A middle axis of a rank-3 tensor. */
    ASSERT_VALUES(gb_argmax(iota234(GB_F64), 1), 0, 2, 2, 2, 2, 2, 2, 2, 2);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* Long rows: the extreme is found by vectorized lanes, then located. */
START_TEST(test_argmax_long_rows) {
    gb_scope_begin();
    double v[2 * 100];
    for (int i = 0; i < 200; i++) v[i] = sin(i * 0.37);
    v[77] = 5, v[90] = 5, v[33] = -5, v[99] = -5;   /* row 0: ties, first wins */
    v[100 + 50] = NAN, v[100 + 60] = 9, v[100 + 99] = NAN; /* row 1: first NaN */
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(2, 100));
    ASSERT_VALUES(gb_argmax(x, 1), 0, 77, 50);
    ASSERT_VALUES(gb_argmin(x, 1), 0, 33, 50);
    gb_tensor *xf = gb_cast(x, GB_F32);
    ASSERT_VALUES(gb_argmax(xf, -1), 0, 77, 50);
    int64_t l[100];
    for (int i = 0; i < 100; i++) l[i] = (i * 37) % 101 - 50;
    l[98] = 1000, l[99] = 1000, l[12] = -1000;
    gb_tensor *xl = gb_tensor_from(GB_I64, l, GB_SHAPE(100));
    ASSERT_VALUES(gb_argmax(xl, 0), 0, 98);
    ASSERT_VALUES(gb_argmin(xl, 0), 0, 12);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_logsumexp_and_variance) {
    gb_scope_begin();
    const double v[] = {1, 2, 3, 1000, 1000, -INFINITY};
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(2, 3));
    gb_tensor *l = gb_reduce_logsumexp(x, GB_AXES(1), false);
    ASSERT_SHAPE(l, 2);
    ASSERT_VALUES(l, 1e-12, log(exp(1) + exp(2) + exp(3)), 1000 + log(2.0));
    ASSERT_SHAPE(gb_reduce_logsumexp(x, GB_AXES(1), true), 2, 1);
    const double ninf[] = {-INFINITY, -INFINITY};
    gb_tensor *li = gb_reduce_logsumexp(gb_from_f64(ninf, GB_SHAPE(2)), GB_ALL_AXES, false);
    ck_assert(isinf(gb_item(li)) && gb_item(li) < 0);

    /* The population variance: sum of squared deviations / N. The sample
     * variance (/ (N - 1)) of the rows would be 1.6667 and 6.6667. */
    const double w[] = {1, 2, 3, 4, 2, 4, 6, 8};
    gb_tensor *y = gb_from_f64(w, GB_SHAPE(2, 4));
    ASSERT_VALUES(gb_reduce_variance(y, GB_AXES(1), false), 1e-12, 1.25, 5);
    ASSERT_VALUES(
        gb_reduce_variance(gb_from_f64((double[]){0, 2}, GB_SHAPE(2)), GB_ALL_AXES, false), 0,
        1); /* not 2 */
    ASSERT_VALUES(gb_reduce_variance(y, GB_AXES(0), false), 1e-12, 0.25, 1, 2.25, 4);
    ASSERT_VALUES(gb_reduce_variance(y, GB_ALL_AXES, false), 1e-12, 4.6875);
    ASSERT_SHAPE(gb_reduce_variance(y, GB_AXES(-1), true), 2, 1);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* ---- errors --------------------------------------------------------------------------- */

START_TEST(test_errors) {
    gb_scope_begin();
    gb_tensor *x = iota234(GB_F32);
    ck_assert_ptr_null(gb_reduce_sum(x, GB_AXES(1, -2), false));
    assert_error(GB_ERR_VALUE, "axis 1 is given more than once");
    ck_assert_ptr_null(gb_reduce_mean(x, GB_AXES(3), false));
    assert_error(GB_ERR_VALUE, "axis 3 is out of range for a rank-3 tensor");
    ck_assert_ptr_null(gb_reduce_max(x, GB_AXES(-4), false));
    assert_error(GB_ERR_VALUE, "axis -4 is out of range");
    ck_assert_ptr_null(gb_reduce_prod(x, (const int64_t *)0, 2, false));
    assert_error(GB_ERR_VALUE, "bad axes list");
    ck_assert_ptr_null(gb_reduce_sum(gb_scalar(GB_F32, 1), GB_AXES(0), false));
    assert_error(GB_ERR_VALUE, "rank-0");

    const uint8_t b[] = {1, 0};
    ck_assert_ptr_null(gb_reduce_sum(gb_tensor_from(GB_BOOL, b, GB_SHAPE(2)), GB_ALL_AXES, false));
    assert_error(GB_ERR_DTYPE, "bool tensors are not supported");

    ck_assert_ptr_null(gb_argmax(x, 3));
    assert_error(GB_ERR_VALUE, "axis 3 is out of range for a rank-3 tensor");
    ck_assert_ptr_null(gb_argmin(gb_zeros(GB_F32, GB_SHAPE(2, 0)), 1));
    assert_error(GB_ERR_VALUE, "is empty");
    const int32_t i[] = {1, 2};
    ck_assert_ptr_null(gb_reduce_variance(gb_tensor_from(GB_I32, i, GB_SHAPE(2)), GB_ALL_AXES, false));
    assert_error(GB_ERR_DTYPE, "must be float32 or float64");

    /* The error names the op type. */
    gb_reduce_min(x, GB_AXES(0, 0), false);
    ck_assert_str_eq(gb_last_error()->op_type, "Min");
    gb_clear_error();
    /* A NULL input keeps the first error. */
    ck_assert_ptr_null(gb_reduce_sum(gb_reduce_sum(x, GB_AXES(5), false), GB_ALL_AXES, false));
    assert_error(GB_ERR_VALUE, "axis 5");
    gb_scope_end();
}
END_TEST

/* ---- gradients ------------------------------------------------------------------------ */

typedef struct reduce_args {
    reduce_call fn;
    int64_t axes[4];
    int naxes;
    bool keepdims;
} reduce_args;

static gb_tensor *apply_reduce(gb_tensor *const *x, int n, void *u) {
    (void)n;
    const reduce_args *r = u;
    return r->fn(x[0], r->naxes ? r->axes : NULL, r->naxes, r->keepdims);
}

/* All, first, last (negative), middle, two axes, keepdims. */
static const reduce_args patterns[] = {
    {NULL, {0}, 0, false},  {NULL, {0}, 1, false},     {NULL, {-1}, 1, false},
    {NULL, {1}, 1, false},  {NULL, {0, 2}, 2, false},  {NULL, {1, -1}, 2, true},
    {NULL, {0}, 1, true},   {NULL, {0, 1, 2}, 3, true},
};

static void check_patterns(reduce_call fn, double lo, double hi) {
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        gb_scope_begin();
        reduce_args r = patterns[p];
        r.fn = fn;
        gb_tensor *x = GC_INPUT(lo, hi, 10 + p, 2, 3, 4);
        GC_ASSERT(apply_reduce, &x, 1, &r);
        gb_scope_end();
    }
}

START_TEST(test_grad_sum_mean_patterns) {
    gb_scope_begin();
    check_patterns(gb_reduce_sum, -1, 1);
    check_patterns(gb_reduce_mean, -1, 1);
    gb_scope_end();
}
END_TEST

START_TEST(test_grad_max_min_patterns) {
    gb_scope_begin();
    /* Distinct random values: one winner per group. */
    check_patterns(gb_reduce_max, -1, 1);
    check_patterns(gb_reduce_min, -1, 1);
    gb_scope_end();
}
END_TEST

START_TEST(test_grad_max_min_ties) {
    gb_scope_begin();
    /* Two-way ties: a central difference sees half of the slope, which is
     * exactly TensorFlow's equal sharing. */
    const double v[] = {1, 3, 3, 0.5, 2, 2, 0, 1, -1, -1, 4, 2};
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(3, 4));
    reduce_args rows = {gb_reduce_max, {1}, 1, false};
    GC_ASSERT(apply_reduce, &x, 1, &rows);
    reduce_args mins = {gb_reduce_min, {-1}, 1, true};
    GC_ASSERT(apply_reduce, &x, 1, &mins);
    /* The exact shares: max of {3, 3} gives each 1/2. */
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *m = gb_reduce_max(x, GB_AXES(1), false);
    gb_tape_end(t);
    gb_tensor *g = gb_tape_gradient(t, m, x);
    ASSERT_VALUES(g, 1e-15, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 0, 0, 0, 1, 0);
    gb_scope_end();
}
END_TEST

START_TEST(test_grad_prod_with_zeros) {
    gb_scope_begin();
    check_patterns(gb_reduce_prod, 0.5, 1.5);
    const double one_zero[] = {2, 0, 3, -1, 1.5, 0.5, 4, 2};
    gb_tensor *x = gb_from_f64(one_zero, GB_SHAPE(2, 4));
    reduce_args rows = {gb_reduce_prod, {1}, 1, false};
    GC_ASSERT(apply_reduce, &x, 1, &rows);
    reduce_args all = {gb_reduce_prod, {0}, 0, false};
    GC_ASSERT(apply_reduce, &x, 1, &all);
    const double two_zeros[] = {0, 2, 0, 3, 1, 1, 2, 0};
    gb_tensor *z = gb_from_f64(two_zeros, GB_SHAPE(2, 4));
    GC_ASSERT(apply_reduce, &z, 1, &rows);
    reduce_args cols = {gb_reduce_prod, {0}, 1, true};
    GC_ASSERT(apply_reduce, &z, 1, &cols);
    /* Exact values: d prod / d x = product of the others. */
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *p = gb_reduce_prod(x, GB_AXES(1), false);
    gb_tape_end(t);
    gb_tensor *dx = gb_tape_gradient(t, p, x);
    ASSERT_VALUES(dx, 1e-15, 0, -6, 0, 0, 4, 12, 1.5, 3);
    gb_scope_end();
}
END_TEST

/* d/dx of sum_i (product of the others)_i, through a zero: exact. */
START_TEST(test_prod_second_derivative_through_zero) {
    gb_scope_begin();
    const double v[] = {0, 2, 3};
    gb_tensor *x = gb_from_f64(v, GB_SHAPE(3));
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, x);
    gb_tape *inner = gb_tape_begin();
    gb_tape_watch(inner, x);
    gb_tensor *p = gb_reduce_prod(x, GB_ALL_AXES, false);
    gb_tape_end(inner);
    gb_tensor *g = gb_tape_gradient(inner, p, x);
    ASSERT_VALUES(g, 0, 6, 0, 0);
    gb_tape_end(outer);
    gb_tensor *h = gb_tape_gradient(outer, g, x);
    ASSERT_VALUES(h, 1e-12, 5, 3, 2);
    gb_scope_end();
}
END_TEST

static gb_tensor *lse_rows(gb_tensor *const *x, int n, void *u) {
    (void)n, (void)u;
    return gb_reduce_logsumexp(x[0], GB_AXES(-1), false);
}
static gb_tensor *lse_two_axes(gb_tensor *const *x, int n, void *u) {
    (void)n, (void)u;
    return gb_reduce_logsumexp(x[0], GB_AXES(0, 2), true);
}
static gb_tensor *variance_middle(gb_tensor *const *x, int n, void *u) {
    (void)n, (void)u;
    return gb_reduce_variance(x[0], GB_AXES(1), false);
}
static gb_tensor *variance_all(gb_tensor *const *x, int n, void *u) {
    (void)n, (void)u;
    return gb_reduce_variance(x[0], GB_ALL_AXES, true);
}

START_TEST(test_grad_logsumexp_variance) {
    gb_scope_begin();
    gb_tensor *x = GC_INPUT(-3, 3, 41, 2, 3, 4);
    GC_ASSERT(lse_rows, &x, 1, NULL);
    GC_ASSERT(lse_two_axes, &x, 1, NULL);
    GC_ASSERT(variance_middle, &x, 1, NULL);
    GC_ASSERT(variance_all, &x, 1, NULL);
    /* The gradient of logsumexp is softmax, even for huge logits. */
    const double v[] = {1000, 1000, 1000 + log(2.0)};
    gb_tensor *big = gb_from_f64(v, GB_SHAPE(3));
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, big);
    gb_tensor *l = gb_reduce_logsumexp(big, GB_ALL_AXES, false);
    gb_tape_end(t);
    gb_tensor *dx = gb_tape_gradient(t, l, big);
    ASSERT_VALUES(dx, 1e-12, 0.25, 0.25, 0.5);
    gb_scope_end();
}
END_TEST

START_TEST(test_argmax_records_no_gradient) {
    gb_scope_begin();
    gb_tensor *x = GC_INPUT(-1, 1, 5, 3, 4);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *am = gb_argmax(x, 1);
    gb_tensor *y = gb_reduce_sum(x, GB_ALL_AXES, false);
    gb_tape_end(t);
    ck_assert_int_eq(gb_tensor_dtype(am), GB_I64);
    gb_tensor *dx = gb_tape_gradient(t, y, x);
    ASSERT_VALUES(dx, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

static Suite *reduce_suite(void) {
    Suite *s = suite_create("ops_reduce");
    TCase *fwd = tcase_create("forward");
    tcase_add_test(fwd, test_sum_axis_patterns);
    tcase_add_test(fwd, test_mean_max_min_prod_values);
    tcase_add_test(fwd, test_every_axis_subset_matches_reference);
    tcase_add_test(fwd, test_float32_sum_accumulates_in_double);
    tcase_add_test(fwd, test_integer_dtypes);
    tcase_add_test(fwd, test_nan_and_empty);
    tcase_add_test(fwd, test_argmax_argmin);
    tcase_add_test(fwd, test_argmax_long_rows);
    tcase_add_test(fwd, test_logsumexp_and_variance);
    tcase_add_test(fwd, test_errors);
    suite_add_tcase(s, fwd);
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_grad_sum_mean_patterns);
    tcase_add_test(grad, test_grad_max_min_patterns);
    tcase_add_test(grad, test_grad_max_min_ties);
    tcase_add_test(grad, test_grad_prod_with_zeros);
    tcase_add_test(grad, test_prod_second_derivative_through_zero);
    tcase_add_test(grad, test_grad_logsumexp_variance);
    tcase_add_test(grad, test_argmax_records_no_gradient);
    suite_add_tcase(s, grad);
    return s;
}

int main(void) { return run_suite(reduce_suite()); }
