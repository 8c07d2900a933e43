/* test_ops_pool.c — MaxPool/AvgPool: hand-computed windows, SAME padding
 * split and AvgPool's valid-element divisor, a naive reference over
 * stride/padding variants, gradient routing of MaxPoolGrad/AvgPoolGrad,
 * every error, and finite-difference gradients (also second order
 * through AvgPoolGrad, and the missing one of MaxPoolGrad). */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

static gb_tensor *arange_image(gb_dtype dt, int64_t n, int64_t h, int64_t w, int64_t c) {
    return gb_reshape(gb_arange(dt, 1, (double)(n * h * w * c) + 1, 1), 4,
                      (const int64_t[]){n, h, w, c});
}

/* The gradient of y = pool(x) for output gradient dy, through a tape. */
typedef gb_tensor *(*pool_fn)(gb_tensor *, const int64_t *, int, const int64_t *, int, gb_padding);

static gb_tensor *pool_backward(pool_fn pool, gb_tensor *x, const int64_t *k, int nk,
                                const int64_t *s, int ns, gb_padding p, gb_tensor *dy) {
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *y = pool(x, k, nk, s, ns, p);
    gb_tape_end(t);
    gb_source src = GB_SRC(x);
    gb_tensor *g = NULL;
    gb_tape_gradient_ex(t, &y, 1, &dy, &src, 1, GB_UNCONNECTED_NONE, &g);
    return g;
}

/* ---- hand-computed --------------------------------------------------------------------- */

START_TEST(test_max_pool_valid) {
    gb_tensor *x = arange_image(GB_F32, 1, 4, 4, 1);
    gb_tensor *y = gb_max_pool2d(x, GB_LIST(2, 2), NULL, 0, GB_PADDING_VALID);
    ck_assert_int_eq(gb_dim(y, 1), 2);
    ASSERT_VALUES(y, 0, 6, 8, 14, 16);
    /* overlapping windows, stride 1 */
    ASSERT_VALUES(gb_max_pool2d(x, GB_LIST(3, 3), GB_LIST(1, 1), GB_PADDING_VALID), 0, 11, 12, 15,
                  16);
    /* channels pool independently: channel 1 is the negation of channel 0 */
    float v[] = {1, -1, 5, -5, 3, -3, 2, -2};
    ASSERT_VALUES(gb_max_pool2d(gb_from_f32(v, GB_SHAPE(1, 2, 2, 2)), GB_LIST(2, 2), NULL, 0,
                                GB_PADDING_VALID),
                  0, 5, -1);
}
END_TEST

START_TEST(test_same_padding) {
    gb_tensor *x = arange_image(GB_F64, 1, 3, 3, 1);
    const int64_t k[] = {2, 2};
    /* out 2x2; pad total 1 goes after: windows {0,1}x{0,1}, {0,1}x{2}, ... */
    ASSERT_VALUES(gb_max_pool2d(x, k, 2, NULL, 0, GB_PADDING_SAME), 0, 5, 6, 8, 9);
    ASSERT_VALUES(gb_avg_pool2d(x, k, 2, NULL, 0, GB_PADDING_SAME), 1e-12, 3, 4.5, 7.5, 9);
    /* 3x3 window stride 1 on 4x4: one row/column of padding on each side;
     * the corner averages 4 valid values, the edge 6, the inside 9. */
    gb_tensor *y = gb_avg_pool2d(arange_image(GB_F64, 1, 4, 4, 1), GB_LIST(3, 3), GB_LIST(1, 1),
                                 GB_PADDING_SAME);
    ck_assert_double_eq_tol(gb_get(y, 0), (1 + 2 + 5 + 6) / 4.0, 1e-12);
    ck_assert_double_eq_tol(gb_get(y, 1), (1 + 2 + 3 + 5 + 6 + 7) / 6.0, 1e-12);
    ck_assert_double_eq_tol(gb_get(y, 5), (1 + 2 + 3 + 5 + 6 + 7 + 9 + 10 + 11) / 9.0, 1e-12);
}
END_TEST

/* TensorFlow's split of an odd SAME total (gb_ops.h): floor(total / 2)
 * before, the extra pixel after. */
START_TEST(test_same_padding_split) {
    gb_tensor *row5 = gb_from_f64((double[]){1, 2, 3, 4, 5}, GB_SHAPE(1, 1, 5, 1));
    /* in 5, window 2, stride 2: total 1 = 0 + 1, windows {0,1} {2,3} {4} */
    ASSERT_VALUES(gb_avg_pool2d(row5, GB_LIST(1, 2), NULL, 0, GB_PADDING_SAME), 1e-12, 1.5, 3.5, 5);
    ASSERT_VALUES(gb_max_pool2d(row5, GB_LIST(1, 2), NULL, 0, GB_PADDING_SAME), 0, 2, 4, 5);
    /* in 4, window 4, stride 1: total 3 = 1 + 2, windows {0..2} {0..3} {1..3} {2,3} */
    gb_tensor *row4 = gb_from_f64((double[]){1, 2, 3, 4}, GB_SHAPE(1, 1, 4, 1));
    ASSERT_VALUES(gb_avg_pool2d(row4, GB_LIST(1, 4), GB_LIST(1), GB_PADDING_SAME), 1e-12, 2, 2.5, 3,
                  3.5);
    /* the same along the height, and in NHWC list form */
    gb_tensor *col4 = gb_reshape(row4, GB_SHAPE(1, 4, 1, 1));
    ASSERT_VALUES(gb_avg_pool2d(col4, GB_LIST(1, 4, 1, 1), GB_LIST(1, 1, 1, 1), GB_PADDING_SAME),
                  1e-12, 2, 2.5, 3, 3.5);
}
END_TEST

START_TEST(test_avg_pool_valid) {
    gb_tensor *x = arange_image(GB_F32, 1, 4, 4, 1);
    ASSERT_VALUES(gb_avg_pool2d(x, GB_LIST(2, 2), NULL, 0, GB_PADDING_VALID), 1e-6, 3.5, 5.5, 11.5,
                  13.5);
    ASSERT_VALUES(gb_avg_pool2d(x, GB_LIST(1, 4), GB_LIST(2, 1), GB_PADDING_VALID), 1e-6, 2.5,
                  10.5);
}
END_TEST

START_TEST(test_nan_propagates) {
    float v[] = {1, NAN, 3, 2};
    gb_tensor *y = gb_max_pool2d(gb_from_f32(v, GB_SHAPE(1, 2, 2, 1)), GB_LIST(2, 2), NULL, 0,
                                 GB_PADDING_VALID);
    ck_assert(isnan(gb_item(y)));
}
END_TEST

/* ---- against a naive reference ----------------------------------------------------------- */

static void ref_pool(const double *x, const int64_t *s, const int64_t *k, const int64_t *st,
                     gb_padding p, bool max, int64_t oh, int64_t ow, double *y) {
    int64_t pt = 0, pl = 0;
    if (p == GB_PADDING_SAME) {
        int64_t th = (oh - 1) * st[0] + k[0] - s[1], tw = (ow - 1) * st[1] + k[1] - s[2];
        pt = th > 0 ? th / 2 : 0;
        pl = tw > 0 ? tw / 2 : 0;
    }
    for (int64_t n = 0; n < s[0]; n++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t c = 0; c < s[3]; c++) {
                    double acc = max ? -INFINITY : 0;
                    int cnt = 0;
                    for (int a = 0; a < k[0]; a++)
                        for (int b = 0; b < k[1]; b++) {
                            int64_t ih = i * st[0] - pt + a, iw = j * st[1] - pl + b;
                            if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                            double v = x[((n * s[1] + ih) * s[2] + iw) * s[3] + c];
                            acc = max ? fmax(acc, v) : acc + v;
                            cnt++;
                        }
                    y[((n * oh + i) * ow + j) * s[3] + c] = max ? acc : acc / cnt;
                }
}

START_TEST(test_against_reference) {
    const struct {
        int64_t s[4], k[2], st[2];
        gb_padding p;
    } cases[] = {
        {{2, 7, 6, 3}, {3, 2}, {2, 2}, GB_PADDING_SAME},
        {{2, 7, 6, 3}, {3, 2}, {2, 2}, GB_PADDING_VALID},
        {{1, 5, 8, 4}, {2, 3}, {1, 3}, GB_PADDING_SAME},
        {{1, 5, 8, 4}, {5, 1}, {3, 1}, GB_PADDING_VALID},
        {{3, 4, 4, 2}, {4, 4}, {4, 4}, GB_PADDING_SAME},
        {{2, 26, 26, 32}, {2, 2}, {2, 2}, GB_PADDING_VALID},
        {{4, 64, 64, 16}, {3, 3}, {2, 2}, GB_PADDING_SAME}, /* images split over threads */
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++)
        for (int dt = GB_F32; dt <= GB_F64; dt++)
            for (int max = 0; max < 2; max++) {
                gb_scope_begin();
                gb_tensor *x = gb_random_normal(dt, 4, cases[t].s, 0, 1, t);
                gb_tensor *y = (max ? gb_max_pool2d : gb_avg_pool2d)(x, cases[t].k, 2, cases[t].st,
                                                                     2, cases[t].p);
                ck_assert_msg(y != NULL, "%s", gb_error_string());
                double *xv = malloc(sizeof(double) * (size_t)gb_size(x));
                double *want = malloc(sizeof(double) * (size_t)gb_size(y));
                gb_to_f64(x, xv);
                ref_pool(xv, cases[t].s, cases[t].k, cases[t].st, cases[t].p, max, gb_dim(y, 1),
                         gb_dim(y, 2), want);
                for (int64_t i = 0; i < gb_size(y); i++)
                    ck_assert_msg(fabs(gb_get(y, i) - want[i]) < 1e-5, "case %zu %s element %lld",
                                  t, max ? "max" : "avg", (long long)i);
                free(xv);
                free(want);
                gb_scope_end();
            }
}
END_TEST

/* ---- gradient routing ----------------------------------------------------------------------- */

START_TEST(test_max_pool_grad_routing) {
    float v[] = {1, 3, 2, 0, 7, 7, 4, 7};
    gb_tensor *x = gb_from_f32(v, GB_SHAPE(2, 2, 2, 1));
    gb_tensor *dy = gb_from_f32((float[]){5, 6}, GB_SHAPE(2, 1, 1, 1));
    /* to the maximum; with ties, to the first one in window order */
    ASSERT_VALUES(pool_backward(gb_max_pool2d, x, GB_LIST(2, 2), NULL, 0, GB_PADDING_VALID, dy), 0,
                  0, 5, 0, 0, 6, 0, 0, 0);
    /* overlapping windows accumulate on a shared maximum */
    gb_tensor *x2 = gb_from_f32((float[]){1, 9, 2}, GB_SHAPE(1, 1, 3, 1));
    gb_tensor *dy2 = gb_from_f32((float[]){1, 10}, GB_SHAPE(1, 1, 2, 1));
    ASSERT_VALUES(
        pool_backward(gb_max_pool2d, x2, GB_LIST(1, 2), GB_LIST(1, 1), GB_PADDING_VALID, dy2), 0, 0,
        11, 0);
}
END_TEST

START_TEST(test_avg_pool_grad_routing) {
    gb_tensor *x = arange_image(GB_F64, 1, 3, 3, 1);
    gb_tensor *dy = gb_ones(GB_F64, GB_SHAPE(1, 2, 2, 1));
    /* window counts 4, 2, 2, 1 (SAME, padding after) */
    ASSERT_VALUES(pool_backward(gb_avg_pool2d, x, GB_LIST(2, 2), NULL, 0, GB_PADDING_SAME, dy),
                  1e-12, 0.25, 0.25, 0.5, 0.25, 0.25, 0.5, 0.5, 0.5, 1);
}
END_TEST

/* Routing of both pool gradients on a batch big enough to be split over
 * threads, against a reference that walks every window. */
START_TEST(test_grad_routing_reference) {
    const int64_t s[4] = {4, 48, 48, 16};
    gb_tensor *x = gb_random_normal(GB_F32, 4, s, 0, 1, 3);
    /* overlapping windows, and windows tiling the image (written once) */
    const struct {
        int64_t k[2], st[2];
        gb_padding p;
    } cfg[] = {{{3, 3}, {2, 2}, GB_PADDING_SAME}, {{2, 2}, {2, 2}, GB_PADDING_VALID}};
    for (int q = 0; q < 4; q++) {
        const int64_t *k = cfg[q / 2].k, *st = cfg[q / 2].st;
        int max = q % 2;
        gb_padding pad = cfg[q / 2].p;
        gb_tensor *y = (max ? gb_max_pool2d : gb_avg_pool2d)(x, k, 2, st, 2, pad);
        gb_tensor *dy = gb_random_uniform(GB_F32, 4, gb_shape(y), -1, 1, 4);
        gb_tensor *dx = pool_backward(max ? gb_max_pool2d : gb_avg_pool2d, x, k, 2, st, 2, pad, dy);
        ck_assert_msg(dx != NULL, "%s", gb_error_string());
        int64_t oh = gb_dim(y, 1), ow = gb_dim(y, 2);
        int64_t pt = pad ? ((oh - 1) * st[0] + k[0] - s[1]) / 2 : 0;
        int64_t pl = pad ? ((ow - 1) * st[1] + k[1] - s[2]) / 2 : 0;
        double *want = calloc((size_t)gb_size(x), sizeof(double));
        double *xv = malloc(sizeof(double) * (size_t)gb_size(x));
        double *dv = malloc(sizeof(double) * (size_t)gb_size(dy));
        gb_to_f64(x, xv);
        gb_to_f64(dy, dv);
        for (int64_t n = 0; n < s[0]; n++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++)
                    for (int64_t c = 0; c < s[3]; c++) {
                        int64_t o = ((n * oh + i) * ow + j) * s[3] + c, best = -1, cnt = 0;
                        for (int a = 0; a < k[0]; a++)
                            for (int b = 0; b < k[1]; b++) {
                                int64_t ih = i * st[0] - pt + a, iw = j * st[1] - pl + b;
                                if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                                int64_t p = ((n * s[1] + ih) * s[2] + iw) * s[3] + c;
                                if (best < 0 || xv[p] > xv[best]) best = p;
                                cnt++;
                            }
                        for (int a = 0; !max && a < k[0]; a++)
                            for (int b = 0; b < k[1]; b++) {
                                int64_t ih = i * st[0] - pt + a, iw = j * st[1] - pl + b;
                                if (ih < 0 || ih >= s[1] || iw < 0 || iw >= s[2]) continue;
                                want[((n * s[1] + ih) * s[2] + iw) * s[3] + c] += dv[o] / cnt;
                            }
                        if (max) want[best] += dv[o];
                    }
        for (int64_t i = 0; i < gb_size(x); i++)
            ck_assert_msg(fabs(gb_get(dx, i) - want[i]) < 1e-5, "%s element %lld: %g vs %g",
                          max ? "max" : "avg", (long long)i, gb_get(dx, i), want[i]);
        free(want);
        free(xv);
        free(dv);
    }
}
END_TEST

/* ---- errors -------------------------------------------------------------------------------- */

START_TEST(test_errors) {
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(1, 4, 4, 2));
    const int64_t k2[] = {2, 2};
    expect_error(
        gb_max_pool2d(gb_ones(GB_F32, GB_SHAPE(4, 4, 2)), k2, 2, NULL, 0, GB_PADDING_VALID),
        GB_ERR_SHAPE, "MaxPool: input must have rank 4 (NHWC), got shape [4,4,2]");
    expect_error(
        gb_avg_pool2d(gb_ones(GB_I32, GB_SHAPE(1, 4, 4, 2)), k2, 2, NULL, 0, GB_PADDING_VALID),
        GB_ERR_DTYPE, "AvgPool: input must be float32 or float64, got int32");
    expect_error(gb_max_pool2d(x, GB_LIST(0, 2), NULL, 0, GB_PADDING_VALID), GB_ERR_VALUE,
                 "MaxPool: window size must be >= 1, got 0x2");
    expect_error(gb_avg_pool2d(x, k2, 2, GB_LIST(2, 0), GB_PADDING_SAME), GB_ERR_VALUE,
                 "AvgPool: strides must be >= 1, got {2,0}");
    expect_error(gb_max_pool2d(x, k2, 2, NULL, 0, (gb_padding)-1), GB_ERR_VALUE,
                 "MaxPool: padding must be GB_PADDING_VALID (0) or GB_PADDING_SAME (1), got -1");
    expect_error(gb_max_pool2d(x, GB_LIST(5, 1), NULL, 0, GB_PADDING_VALID), GB_ERR_SHAPE,
                 "MaxPool: with VALID padding the window (effective height size 5) must fit in "
                 "the input height size 4");
    expect_error(gb_max_pool2d(x, GB_LIST(2, 2, 2), NULL, 0, GB_PADDING_VALID), GB_ERR_VALUE,
                 "MaxPool: ksize must have 1, 2 or 4 values ({h, w} or {1, h, w, 1}), got 3");
    expect_error(gb_max_pool2d(x, GB_LIST(1, 2, 2, 2), NULL, 0, GB_PADDING_VALID), GB_ERR_VALUE,
                 "MaxPool: ksize [1,2,2,2] in NHWC form must be 1 on the batch and channel axes");
    expect_error(gb_avg_pool2d(x, NULL, 0, NULL, 0, GB_PADDING_VALID), GB_ERR_VALUE,
                 "AvgPool: ksize must have 1, 2 or 4 values ({h, w} or {1, h, w, 1}), got 0 (it "
                 "is required)");
}
END_TEST

/* ---- finite-difference gradients ------------------------------------------------------------- */

typedef struct pool_case {
    int64_t k[2], s[2];
    gb_padding p;
    bool max;
} pool_case;

static gb_tensor *pool_gc(gb_tensor *const *x, int n, void *u) {
    (void)n;
    const pool_case *c = u;
    return (c->max ? gb_max_pool2d : gb_avg_pool2d)(x[0], c->k, 2, c->s, 2, c->p);
}

/* Distinct values 0.1 apart in scrambled order: no ties for max pooling,
 * and no finite-difference step can change a window's maximum. */
static gb_tensor *distinct_input(int64_t n, int64_t h, int64_t w, int64_t c) {
    int64_t size = n * h * w * c;
    double *v = malloc(sizeof(double) * (size_t)size);
    for (int64_t i = 0; i < size; i++) v[i] = (double)((i * 37) % size) * 0.1 - 1.0;
    gb_tensor *t = gb_from_f64(v, GB_SHAPE(n, h, w, c));
    free(v);
    return t;
}

START_TEST(test_grad_pools) {
    const pool_case cases[] = {
        {{2, 2}, {2, 2}, GB_PADDING_VALID, true}, {{3, 2}, {2, 1}, GB_PADDING_SAME, true},
        {{3, 3}, {1, 1}, GB_PADDING_SAME, true},  {{2, 2}, {2, 2}, GB_PADDING_VALID, false},
        {{3, 2}, {2, 1}, GB_PADDING_SAME, false}, {{3, 3}, {1, 1}, GB_PADDING_SAME, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_tensor *x = distinct_input(2, 5, 4, 2); /* 160 elements, 37 coprime */
        GC_ASSERT(pool_gc, &x, 1, (void *)&cases[i]);
    }
}
END_TEST

/* The gradient of avg pooling wrt x for output gradient x[1], computed on
 * an inner tape; differentiating it wrt x[1] runs AvgPoolGrad's gradient. */
static gb_tensor *avg_grad_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    const pool_case *c = u;
    return pool_backward(gb_avg_pool2d, x[0], c->k, 2, c->s, 2, c->p, x[1]);
}

START_TEST(test_second_order_avg_pool) {
    pool_case c = {{3, 2}, {2, 1}, GB_PADDING_SAME, false};
    gb_tensor *x = GC_INPUT(-1, 1, 1, 1, 5, 4, 2);
    gb_tensor *y = gb_avg_pool2d(x, c.k, 2, c.s, 2, c.p);
    gb_tensor *xs[2] = {x, gb_random_uniform(GB_F64, gb_rank(y), gb_shape(y), -1, 1, 2)};
    GC_ASSERT(avg_grad_fn, xs, 2, &c);
}
END_TEST

START_TEST(test_max_pool_grad_has_no_gradient) {
    gb_tensor *x = distinct_input(1, 4, 4, 1), *dy = gb_ones(GB_F64, GB_SHAPE(1, 2, 2, 1));
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, dy);
    gb_tensor *g = pool_backward(gb_max_pool2d, x, GB_LIST(2, 2), NULL, 0, GB_PADDING_VALID, dy);
    gb_tape_end(outer);
    ck_assert_ptr_nonnull(g);
    gb_tensor *gg = gb_tape_gradient(outer, g, dy);
    ck_assert_ptr_null(gg);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_NO_GRADIENT);
    ck_assert(strstr(gb_last_error()->message, "MaxPoolGrad"));
    gb_clear_error();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_pool");
    TCase *tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_max_pool_valid);
    tcase_add_test(tc, test_same_padding_split);
    tcase_add_test(tc, test_same_padding);
    tcase_add_test(tc, test_avg_pool_valid);
    tcase_add_test(tc, test_nan_propagates);
    tcase_add_test(tc, test_against_reference);
    tcase_add_test(tc, test_max_pool_grad_routing);
    tcase_add_test(tc, test_avg_pool_grad_routing);
    tcase_add_test(tc, test_grad_routing_reference);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_grad_pools);
    tcase_add_test(tc, test_second_order_avg_pool);
    tcase_add_test(tc, test_max_pool_grad_has_no_gradient);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
