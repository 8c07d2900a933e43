/* test_ops_conv.c — Conv2D and its backprop ops: a hand-computed
 * convolution, TF's SAME/VALID output sizes and pad split (pinned against
 * explicit padding), the strides/dilations list forms, strides and
 * dilations against a naive direct convolution written here, the direct
 * (small window), Winograd, im2col (chunked, threaded) and pointwise
 * paths, every error, and finite-difference gradients (first order, and
 * second order through both backprop ops). */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* ---- a naive direct convolution, independent of the library --------------------- */

typedef struct conv_case {
    int64_t n, h, w, c, kh, kw, oc;
    int64_t s[2], d[2];
    gb_padding pad;
} conv_case;

/* TF's rule, written out again: output size and padding before. */
static void ref_axis(int64_t in, int64_t k, int64_t s, int64_t d, gb_padding pad, int64_t *out,
                     int64_t *before) {
    int64_t eff = (k - 1) * d + 1;
    if (pad == GB_PADDING_VALID) {
        *out = (in - eff + s) / s;
        *before = 0;
    } else {
        *out = (in + s - 1) / s;
        int64_t total = (*out - 1) * s + eff - in;
        *before = total > 0 ? total / 2 : 0;
    }
}

/* For every (output pixel, tap, channels) triple calls visit with flat
 * indices into x [N,H,W,C], f [KH,KW,C,OC] and y [N,OH,OW,OC]. */
typedef void (*visit_fn)(int64_t xi, int64_t fi, int64_t yi, void *u);

static void ref_walk(const conv_case *k, visit_fn visit, void *u) {
    int64_t oh, ow, pt, pl;
    ref_axis(k->h, k->kh, k->s[0], k->d[0], k->pad, &oh, &pt);
    ref_axis(k->w, k->kw, k->s[1], k->d[1], k->pad, &ow, &pl);
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t x = 0; x < ow; x++)
                for (int64_t i = 0; i < k->kh; i++)
                    for (int64_t j = 0; j < k->kw; j++) {
                        int64_t ih = y * k->s[0] - pt + i * k->d[0];
                        int64_t iw = x * k->s[1] - pl + j * k->d[1];
                        if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w) continue;
                        for (int64_t c = 0; c < k->c; c++)
                            for (int64_t o = 0; o < k->oc; o++)
                                visit(((n * k->h + ih) * k->w + iw) * k->c + c,
                                      ((i * k->kw + j) * k->c + c) * k->oc + o,
                                      ((n * oh + y) * ow + x) * k->oc + o, u);
                    }
}

typedef struct ref_bufs {
    const double *x, *f, *dy;
    double *y, *dx, *df;
} ref_bufs;

static void visit_all(int64_t xi, int64_t fi, int64_t yi, void *u) {
    ref_bufs *b = u;
    b->y[yi] += b->x[xi] * b->f[fi];
    b->dx[xi] += b->dy[yi] * b->f[fi];
    b->df[fi] += b->x[xi] * b->dy[yi];
}

static void assert_close(const gb_tensor *t, const double *want, int64_t n, double tol,
                         const char *what) {
    ck_assert_msg(t != NULL, "%s is NULL: %s", what, gb_error_string());
    ck_assert_int_eq(gb_size(t), n);
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabs(gb_get(t, i) - want[i]) <= tol * (1 + fabs(want[i])),
                      "%s element %lld: got %.9g want %.9g", what, (long long)i, gb_get(t, i),
                      want[i]);
}

/* Runs the case in dtype dt: forward against the reference, and the
 * backprop ops (through a tape with a given output gradient). */
static void check_case(const conv_case *k, gb_dtype dt, uint64_t seed) {
    gb_scope_begin();
    gb_tensor *x = gb_random_uniform(dt, GB_SHAPE(k->n, k->h, k->w, k->c), -1, 1, seed);
    gb_tensor *f = gb_random_uniform(dt, GB_SHAPE(k->kh, k->kw, k->c, k->oc), -1, 1, seed + 1);
    gb_tape *tape = gb_tape_begin_ex(true, false);
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, f);
    gb_tensor *y = gb_conv2d(x, f, k->s, 2, k->pad, k->d, 2);
    gb_tape_end(tape);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    gb_tensor *dy = gb_random_uniform(dt, gb_rank(y), gb_shape(y), -1, 1, seed + 2);
    int64_t nx = gb_size(x), nf = gb_size(f), ny = gb_size(y);
    double *mem = calloc((size_t)(2 * nx + 2 * nf + 2 * ny), sizeof(double));
    ref_bufs b = {mem,
                  mem + nx,
                  mem + nx + nf,
                  mem + nx + nf + ny,
                  mem + nx + nf + 2 * ny,
                  mem + 2 * nx + nf + 2 * ny};
    gb_to_f64(x, (double *)b.x);
    gb_to_f64(f, (double *)b.f);
    gb_to_f64(dy, (double *)b.dy);
    ref_walk(k, visit_all, &b);
    double tol = dt == GB_F32 ? 1e-4 : 1e-12; /* f32 filter sums run over 12k terms */
    assert_close(y, b.y, ny, tol, "Conv2D");
    gb_source src[2] = {GB_SRC(x), GB_SRC(f)};
    gb_tensor *grads[2];
    ck_assert(gb_tape_gradient_ex(tape, &y, 1, &dy, src, 2, GB_UNCONNECTED_NONE, grads));
    assert_close(grads[0], b.dx, nx, tol, "Conv2DBackpropInput");
    assert_close(grads[1], b.df, nf, tol, "Conv2DBackpropFilter");
    free(mem);
    gb_scope_end();
}

/* ---- forward and backprop values ---------------------------------------------------- */

START_TEST(test_hand_computed) {
    float x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    gb_tensor *y =
        gb_conv2d(gb_from_f32(x, GB_SHAPE(1, 3, 3, 1)), gb_ones(GB_F32, GB_SHAPE(2, 2, 1, 1)), NULL,
                  0, GB_PADDING_VALID, NULL, 0);
    ck_assert_int_eq(gb_dim(y, 1), 2);
    ck_assert_int_eq(gb_dim(y, 2), 2);
    ASSERT_VALUES(y, 0, 12, 16, 24, 28);
    /* SAME, stride 1, 2x2 window: TF pads only after (bottom/right). */
    gb_tensor *s =
        gb_conv2d(gb_from_f32(x, GB_SHAPE(1, 3, 3, 1)), gb_ones(GB_F32, GB_SHAPE(2, 2, 1, 1)), NULL,
                  0, GB_PADDING_SAME, NULL, 0);
    ASSERT_VALUES(s, 0, 12, 16, 9, 24, 28, 15, 15, 17, 9);
    /* two output channels: a sum and a difference filter */
    float f2[] = {1, 1, 1, -1};
    gb_tensor *z =
        gb_conv2d(gb_from_f32((float[]){3, 5}, GB_SHAPE(1, 1, 2, 1)),
                  gb_from_f32(f2, GB_SHAPE(1, 2, 1, 2)), NULL, 0, GB_PADDING_VALID, NULL, 0);
    ASSERT_VALUES(z, 0, 8, -2);
}
END_TEST

START_TEST(test_output_sizes) {
    /* in, k, stride, dilation, padding -> out (TF's numbers) */
    const struct {
        int64_t in, k, s, d;
        gb_padding p;
        int64_t out;
    } t[] = {
        {5, 3, 2, 1, GB_PADDING_SAME, 3},    {6, 3, 2, 1, GB_PADDING_SAME, 3},
        {7, 3, 2, 1, GB_PADDING_VALID, 3},   {6, 3, 2, 1, GB_PADDING_VALID, 2},
        {7, 3, 1, 2, GB_PADDING_VALID, 3},   {7, 3, 1, 2, GB_PADDING_SAME, 7},
        {28, 3, 1, 1, GB_PADDING_VALID, 26}, {1, 3, 3, 1, GB_PADDING_SAME, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gb_tensor *y = gb_conv2d(gb_ones(GB_F32, GB_SHAPE(1, t[i].in, t[i].in, 1)),
                                 gb_ones(GB_F32, GB_SHAPE(t[i].k, t[i].k, 1, 1)), GB_LIST(t[i].s),
                                 t[i].p, GB_LIST(t[i].d));
        ck_assert_msg(y != NULL, "case %zu: %s", i, gb_error_string());
        ck_assert_msg(gb_dim(y, 1) == t[i].out && gb_dim(y, 2) == t[i].out,
                      "case %zu: got %lld, want %lld", i, (long long)gb_dim(y, 1),
                      (long long)t[i].out);
    }
}
END_TEST

/* SAME padding as gb_ops.h documents it (TensorFlow's rule): the total
 * max((out-1)*s + (k-1)*d + 1 - in, 0) is split floor(total/2) before and
 * the rest after, so an odd total puts the extra pixel at the bottom/right. */
static void same_split(int64_t in, int64_t k, int64_t s, int64_t d, int64_t *before,
                       int64_t *after) {
    int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * d + 1 - in;
    if (total < 0) total = 0;
    *before = total / 2;
    *after = total - *before;
}

START_TEST(test_same_padding_split) {
    /* one row of 4 pixels, a 1x4 window of ones, stride 1: total 3 = 1 + 2,
     * so the outputs sum x[-1..2], x[0..3], x[1..4], x[2..5] */
    gb_tensor *row = gb_from_f32((float[]){1, 2, 3, 4}, GB_SHAPE(1, 1, 4, 1));
    ASSERT_VALUES(
        gb_conv2d(row, gb_ones(GB_F32, GB_SHAPE(1, 4, 1, 1)), NULL, 0, GB_PADDING_SAME, NULL, 0), 0,
        6, 10, 9, 7);
    /* SAME equals VALID on the input padded by the documented split */
    const struct {
        int64_t h, w, kh, kw, sh, sw, dh, dw;
    } t[] = {
        {5, 6, 2, 4, 2, 1, 1, 1}, /* totals 1 -> (0,1) and 3 -> (1,2) */
        {6, 7, 3, 3, 2, 2, 2, 1}, /* dilated height: total 3 -> (1,2); width 2 -> (1,1) */
        {4, 5, 4, 1, 1, 3, 1, 1}, /* total 3 -> (1,2); width 0 */
        {2, 3, 5, 5, 1, 1, 1, 1}, /* windows wider than the image: (2,2), (2,2) */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gb_tensor *x = gb_random_uniform(GB_F64, GB_SHAPE(2, t[i].h, t[i].w, 3), -1, 1, i);
        gb_tensor *f = gb_random_uniform(GB_F64, GB_SHAPE(t[i].kh, t[i].kw, 3, 2), -1, 1, 50 + i);
        int64_t pads[8] = {0};
        same_split(t[i].h, t[i].kh, t[i].sh, t[i].dh, &pads[2], &pads[3]);
        same_split(t[i].w, t[i].kw, t[i].sw, t[i].dw, &pads[4], &pads[5]);
        gb_tensor *same =
            gb_conv2d(x, f, GB_LIST(t[i].sh, t[i].sw), GB_PADDING_SAME, GB_LIST(t[i].dh, t[i].dw));
        gb_tensor *valid = gb_conv2d(gb_pad(x, pads, 8, 0), f, GB_LIST(t[i].sh, t[i].sw),
                                     GB_PADDING_VALID, GB_LIST(t[i].dh, t[i].dw));
        ck_assert_msg(same && valid, "case %zu: %s", i, gb_error_string());
        ck_assert_msg(gb_same_shape(same, valid), "case %zu: shapes differ", i);
        for (int64_t e = 0; e < gb_size(same); e++)
            ck_assert_msg(fabs(gb_get(same, e) - gb_get(valid, e)) < 1e-12, "case %zu element %lld",
                          i, (long long)e);
    }
}
END_TEST

/* Strides and dilations as TensorFlow takes them: 1, 2 or 4 (NHWC) values. */
START_TEST(test_list_forms) {
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(1, 9, 10, 2), -1, 1, 3);
    gb_tensor *f = gb_random_uniform(GB_F32, GB_SHAPE(3, 3, 2, 4), -1, 1, 4);
    gb_tensor *two = gb_conv2d(x, f, GB_LIST(2, 2), GB_PADDING_SAME, GB_LIST(1, 1));
    gb_tensor *one = gb_conv2d(x, f, GB_LIST(2), GB_PADDING_SAME, GB_LIST(1));
    gb_tensor *nhwc = gb_conv2d(x, f, GB_LIST(1, 2, 2, 1), GB_PADDING_SAME, GB_LIST(1, 1, 1, 1));
    ck_assert_msg(two && one && nhwc, "%s", gb_error_string());
    for (int64_t e = 0; e < gb_size(two); e++) {
        ck_assert_double_eq(gb_get(one, e), gb_get(two, e));
        ck_assert_double_eq(gb_get(nhwc, e), gb_get(two, e));
    }
    /* h and w differ: {1, 2, 3, 1} is stride 2 down, 3 across */
    gb_tensor *hw = gb_conv2d(x, f, GB_LIST(1, 2, 3, 1), GB_PADDING_VALID, NULL, 0);
    ck_assert_int_eq(gb_dim(hw, 1), 4);
    ck_assert_int_eq(gb_dim(hw, 2), 3);
    expect_error(gb_conv2d(x, f, GB_LIST(1, 2, 2), GB_PADDING_SAME, NULL, 0), GB_ERR_VALUE,
                 "Conv2D: strides must have 1, 2 or 4 values ({h, w} or {1, h, w, 1}), got 3");
    expect_error(gb_conv2d(x, f, GB_LIST(2, 2, 2, 1), GB_PADDING_SAME, NULL, 0), GB_ERR_VALUE,
                 "Conv2D: strides [2,2,2,1] in NHWC form must be 1 on the batch and channel "
                 "axes, {1, h, w, 1}");
    expect_error(gb_conv2d(x, f, NULL, 0, GB_PADDING_SAME, NULL, 2), GB_ERR_VALUE,
                 "Conv2D: dilations has 2 values but its array is NULL");
}
END_TEST

START_TEST(test_stride2_same_against_naive) {
    conv_case k = {2, 6, 7, 3, 3, 3, 4, {2, 2}, {1, 1}, GB_PADDING_SAME};
    check_case(&k, GB_F32, 1);
    check_case(&k, GB_F64, 2);
}
END_TEST

static void check_cases(const conv_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        check_case(&cases[i], GB_F32, 10 * i);
        check_case(&cases[i], GB_F64, 10 * i + 5);
    }
}

START_TEST(test_variants_against_naive) {
    const conv_case cases[] = {
        {1, 7, 7, 2, 3, 3, 3, {1, 1}, {2, 2}, GB_PADDING_VALID}, /* dilation (direct) */
        {1, 7, 7, 2, 3, 3, 3, {1, 1}, {2, 2}, GB_PADDING_SAME},
        {2, 8, 9, 2, 2, 3, 2, {1, 2}, {2, 1}, GB_PADDING_SAME}, /* asymmetric */
        {2, 8, 9, 2, 3, 2, 2, {3, 1}, {1, 3}, GB_PADDING_VALID},
        {2, 6, 7, 5, 3, 3, 4, {2, 2}, {1, 1}, GB_PADDING_SAME}, /* K 45: im2col + GEMM */
        {1, 9, 9, 4, 3, 3, 3, {1, 1}, {2, 2}, GB_PADDING_SAME}, /* dilated im2col */
        {2, 9, 8, 4, 3, 3, 2, {2, 3}, {1, 1}, GB_PADDING_VALID},
        {2, 5, 5, 3, 1, 1, 4, {1, 1}, {1, 1}, GB_PADDING_VALID},  /* pointwise, direct */
        {2, 5, 5, 40, 1, 1, 3, {1, 1}, {1, 1}, GB_PADDING_VALID}, /* pointwise, no im2col */
        {1, 5, 5, 3, 1, 1, 2, {2, 2}, {1, 1}, GB_PADDING_SAME},   /* 1x1 strided */
        {2, 4, 4, 1, 5, 5, 2, {1, 1}, {1, 1}, GB_PADDING_SAME},   /* window wider than image */
    };
    check_cases(cases, sizeof cases / sizeof cases[0]);
}
END_TEST

/* Sizes that take several im2col chunks or split the batch over threads. */
START_TEST(test_big_against_naive) {
    const conv_case cases[] = {
        {3, 64, 64, 3, 3, 3, 4, {1, 1}, {1, 1}, GB_PADDING_SAME},  /* direct, many rows */
        {2, 32, 32, 8, 3, 3, 16, {1, 1}, {1, 1}, GB_PADDING_SAME}, /* im2col, threads */
        {2, 32, 32, 3, 3, 3, 41, {1, 1}, {1, 1}, GB_PADDING_SAME}, /* direct, threads, all blocks */
        {2, 16, 16, 64, 1, 1, 64, {1, 1}, {1, 1}, GB_PADDING_VALID}, /* pointwise, threads */
        {1, 40, 40, 40, 3, 3, 8, {1, 1}, {1, 1}, GB_PADDING_VALID},  /* several chunks */
    };
    check_cases(cases, sizeof cases / sizeof cases[0]);
}
END_TEST

/* 3x3 stride-1 windows with enough channels take Winograd F(2x2, 3x3);
 * odd sizes leave partial tiles at the bottom and right edges. */
START_TEST(test_winograd_against_naive) {
    const conv_case cases[] = {
        {2,
         7,
         9,
         32,
         3,
         3,
         16,
         {1, 1},
         {1, 1},
         GB_PADDING_SAME}, /* forward, input grad by im2col */
        {2, 8, 5, 16, 3, 3, 32, {1, 1}, {1, 1}, GB_PADDING_VALID}, /* input and filter grads */
        {2, 9, 6, 20, 3, 3, 36, {1, 1}, {1, 1}, GB_PADDING_SAME},  /* channel tails */
        {4,
         14,
         14,
         32,
         3,
         3,
         64,
         {1, 1},
         {1, 1},
         GB_PADDING_SAME}, /* the CNN's second layer, threads */
    };
    check_cases(cases, sizeof cases / sizeof cases[0]);
}
END_TEST

START_TEST(test_empty) {
    gb_tensor *y =
        gb_conv2d(gb_ones(GB_F32, GB_SHAPE(0, 4, 4, 2)), gb_ones(GB_F32, GB_SHAPE(3, 3, 2, 5)),
                  NULL, 0, GB_PADDING_SAME, NULL, 0);
    ck_assert_int_eq(gb_size(y), 0);
    ck_assert_int_eq(gb_dim(y, 3), 5);
    gb_tensor *z =
        gb_conv2d(gb_ones(GB_F32, GB_SHAPE(1, 4, 4, 0)), gb_ones(GB_F32, GB_SHAPE(3, 3, 0, 2)),
                  NULL, 0, GB_PADDING_SAME, NULL, 0);
    ck_assert_int_eq(gb_size(z), 32);
    ck_assert_double_eq(gb_get(z, 31), 0.0);
    ck_assert(gb_ok());
}
END_TEST

/* ---- errors ----------------------------------------------------------------------------- */

START_TEST(test_errors) {
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(1, 5, 5, 3)),
              *f = gb_ones(GB_F32, GB_SHAPE(3, 3, 3, 8));
    expect_error(
        gb_conv2d(x, gb_ones(GB_F32, GB_SHAPE(3, 3, 4, 8)), NULL, 0, GB_PADDING_SAME, NULL, 0),
        GB_ERR_SHAPE,
        "Conv2D: input depth 3 does not match the filter's input channels 4: input "
        "[1,5,5,3], filter [3,3,4,8]");
    expect_error(
        gb_conv2d(gb_ones(GB_F32, GB_SHAPE(5, 5, 3)), f, NULL, 0, GB_PADDING_SAME, NULL, 0),
        GB_ERR_SHAPE, "Conv2D: input must have rank 4, got shape [5,5,3]");
    expect_error(
        gb_conv2d(x, gb_ones(GB_F32, GB_SHAPE(3, 3, 3)), NULL, 0, GB_PADDING_SAME, NULL, 0),
        GB_ERR_SHAPE, "Conv2D: filter must have rank 4, got shape [3,3,3]");
    expect_error(
        gb_conv2d(x, gb_ones(GB_F64, GB_SHAPE(3, 3, 3, 8)), NULL, 0, GB_PADDING_SAME, NULL, 0),
        GB_ERR_DTYPE,
        "Conv2D: inputs must both be float32 or both float64, got float32 and float64");
    expect_error(gb_conv2d(x, f, GB_LIST(0, 1), GB_PADDING_SAME, NULL, 0), GB_ERR_VALUE,
                 "Conv2D: strides must be >= 1, got {0,1}");
    expect_error(gb_conv2d(x, f, NULL, 0, GB_PADDING_SAME, GB_LIST(1, -2)), GB_ERR_VALUE,
                 "Conv2D: dilations must be >= 1, got {1,-2}");
    /* Attributes at the edge of int64 (a loaded graph can hold any): no
     * arithmetic on them may wrap. A huge stride is a 1x1 output; a huge
     * dilation is a window past 2^63 elements. */
    gb_tensor *y = gb_conv2d(x, f, GB_LIST(INT64_MAX, INT64_MAX), GB_PADDING_SAME, NULL, 0);
    ck_assert_msg(y && gb_shape(y)[1] == 1 && gb_shape(y)[2] == 1, "%s", gb_error_string());
    /* A 1x1 window spans one element whatever its dilation: the direct
     * kernel's tap ranges take a dilation of 2^63-1 without wrapping. */
    gb_tensor *f1 = gb_ones(GB_F32, GB_SHAPE(1, 1, 3, 8));
    gb_tensor *y1 = gb_conv2d(x, f1, NULL, 0, GB_PADDING_SAME, GB_LIST(INT64_MAX, INT64_MAX));
    gb_tensor *y1_plain = gb_conv2d(x, f1, NULL, 0, GB_PADDING_SAME, NULL, 0);
    ck_assert_msg(y1 && y1_plain && gb_nbytes(y1) == gb_nbytes(y1_plain) &&
                      !memcmp(gb_data(y1), gb_data(y1_plain), gb_nbytes(y1)),
                  "%s", gb_error_string());
    expect_error(gb_conv2d(x, f, NULL, 0, GB_PADDING_SAME, GB_LIST(INT64_MAX, 1)), GB_ERR_VALUE,
                 "Conv2D: the window's height (size 3, dilation 9223372036854775807) spans more "
                 "than 2^63 elements");
    expect_error(gb_conv2d(x, f, NULL, 0, (gb_padding)7, NULL, 0), GB_ERR_VALUE,
                 "Conv2D: padding must be GB_PADDING_VALID (0) or GB_PADDING_SAME (1), got 7");
    expect_error(
        gb_conv2d(x, gb_ones(GB_F32, GB_SHAPE(6, 3, 3, 8)), NULL, 0, GB_PADDING_VALID, NULL, 0),
        GB_ERR_SHAPE,
        "Conv2D: with VALID padding the window (effective height size 6) must fit in the "
        "input height size 5");
    expect_error(gb_conv2d(x, f, NULL, 0, GB_PADDING_VALID, GB_LIST(1, 3)), GB_ERR_SHAPE,
                 "(effective width size 7) must fit in the input width size 5");
    expect_error(gb_conv2d(gb_ones(GB_I32, GB_SHAPE(1, 5, 5, 3)),
                           gb_ones(GB_I32, GB_SHAPE(3, 3, 3, 8)), NULL, 0, GB_PADDING_SAME, NULL,
                           0),
                 GB_ERR_DTYPE, "got int32 and int32");
    expect_error(gb_conv2d(NULL, f, NULL, 0, GB_PADDING_SAME, NULL, 0), GB_ERR_VALUE,
                 "Conv2D: input 0 is NULL");
}
END_TEST

/* ---- gradients ------------------------------------------------------------------------------ */

static gb_tensor *conv_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    const conv_case *k = u;
    return gb_conv2d(x[0], x[1], k->s, 2, k->pad, k->d, 2);
}

static const conv_case grad_cases[] = {
    {2, 5, 5, 2, 3, 3, 2, {2, 2}, {1, 1}, GB_PADDING_SAME},
    {1, 6, 5, 2, 3, 2, 3, {1, 1}, {1, 1}, GB_PADDING_VALID},
    {1, 6, 6, 1, 2, 2, 2, {1, 1}, {2, 2}, GB_PADDING_SAME},
    {1, 7, 6, 2, 2, 3, 1, {2, 1}, {1, 2}, GB_PADDING_VALID},
    {2, 3, 3, 2, 1, 1, 2, {1, 1}, {1, 1}, GB_PADDING_VALID},
};

START_TEST(test_grad_conv2d) {
    for (size_t i = 0; i < sizeof grad_cases / sizeof grad_cases[0]; i++) {
        const conv_case *k = &grad_cases[i];
        gb_tensor *xs[2] = {GC_INPUT(-1, 1, 3 * i, k->n, k->h, k->w, k->c),
                            GC_INPUT(-1, 1, 3 * i + 1, k->kh, k->kw, k->c, k->oc)};
        GC_ASSERT(conv_fn, xs, 2, (void *)k);
    }
}
END_TEST

/* The gradient of the convolution wrt x (which = 0) or the filter (1) for
 * the output gradient dy, computed on an inner tape: differentiating it
 * runs the backprop ops' own gradients. */
typedef struct second_order {
    const conv_case *k;
    int which;
} second_order;

static gb_tensor *conv_grad_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    const second_order *so = u;
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x[0]);
    gb_tape_watch(t, x[1]);
    gb_tensor *y = gb_conv2d(x[0], x[1], so->k->s, 2, so->k->pad, so->k->d, 2);
    gb_tape_end(t);
    gb_source src = GB_SRC(x[so->which]);
    gb_tensor *g = NULL;
    gb_tape_gradient_ex(t, &y, 1, &x[2], &src, 1, GB_UNCONNECTED_ZERO, &g);
    return g;
}

START_TEST(test_grad_of_backprop_ops) {
    for (size_t i = 0; i < sizeof grad_cases / sizeof grad_cases[0]; i++) {
        const conv_case *k = &grad_cases[i];
        gb_tensor *x = GC_INPUT(-1, 1, 5 * i, k->n, k->h, k->w, k->c);
        gb_tensor *f = GC_INPUT(-1, 1, 5 * i + 1, k->kh, k->kw, k->c, k->oc);
        gb_tensor *y = gb_conv2d(x, f, k->s, 2, k->pad, k->d, 2);
        gb_tensor *dy = gb_random_uniform(GB_F64, gb_rank(y), gb_shape(y), -1, 1, 5 * i + 2);
        gb_tensor *xs[3] = {x, f, dy};
        second_order in = {k, 0}, fl = {k, 1};
        GC_ASSERT(conv_grad_fn, xs, 3, &in); /* Conv2DBackpropInput(f, dy) */
        GC_ASSERT(conv_grad_fn, xs, 3, &fl); /* Conv2DBackpropFilter(x, dy) */
    }
}
END_TEST

/* Two layers: the first layer's output needs its input gradient (an
 * intermediate), while the data x's is skipped when x is not watched. */
static gb_tensor *two_layers_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_conv2d(gb_conv2d(x[0], x[1], NULL, 0, GB_PADDING_SAME, NULL, 0), x[2], GB_LIST(2),
                     GB_PADDING_VALID, NULL, 0);
}

START_TEST(test_grad_two_layers) {
    gb_tensor *xs[3] = {GC_INPUT(-1, 1, 40, 1, 5, 5, 2), GC_INPUT(-1, 1, 41, 3, 3, 2, 3),
                        GC_INPUT(-1, 1, 42, 2, 2, 3, 2)};
    GC_ASSERT(two_layers_fn, xs, 3, NULL);
    /* only the filters watched (x's gradient skipped): the same filter
     * gradients as with x watched too */
    gb_tensor *g1[2], *g2[3];
    for (int k = 0; k < 3; k++) /* fresh tensors: no tape bits left from the check */
        xs[k] = gb_tensor_from(GB_F64, gb_data(xs[k]), gb_rank(xs[k]), gb_shape(xs[k]));
    gb_tape *t1 = gb_tape_begin();
    gb_tape_watch(t1, xs[1]);
    gb_tape_watch(t1, xs[2]);
    gb_tensor *y1 = two_layers_fn(xs, 3, NULL);
    gb_tape_end(t1);
    ck_assert(gb_tape_gradients(t1, y1, xs + 1, 2, g1));
    gb_tape *t2 = gb_tape_begin();
    for (int k = 0; k < 3; k++) gb_tape_watch(t2, xs[k]);
    gb_tensor *y2 = two_layers_fn(xs, 3, NULL);
    gb_tape_end(t2);
    ck_assert(gb_tape_gradients(t2, y2, xs, 3, g2));
    for (int k = 0; k < 2; k++)
        for (int64_t i = 0; i < gb_size(g1[k]); i++)
            ck_assert_double_eq_tol(gb_get(g1[k], i), gb_get(g2[k + 1], i), 1e-12);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_conv");
    TCase *tc = tcase_create("conv");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_hand_computed);
    tcase_add_test(tc, test_output_sizes);
    tcase_add_test(tc, test_same_padding_split);
    tcase_add_test(tc, test_list_forms);
    tcase_add_test(tc, test_stride2_same_against_naive);
    tcase_add_test(tc, test_variants_against_naive);
    tcase_add_test(tc, test_big_against_naive);
    tcase_add_test(tc, test_winograd_against_naive);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_grad_conv2d);
    tcase_add_test(tc, test_grad_of_backprop_ops);
    tcase_add_test(tc, test_grad_two_layers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
