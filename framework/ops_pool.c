/* ops_pool.c — MaxPool and AvgPool over NHWC windows, with MaxPoolGrad
 * and AvgPoolGrad as ops (what their gradients call), as in TensorFlow.
 *
 * Window geometry and the SAME/VALID rules are shared with convolution
 * (conv_im2col.h). Every window is clipped to the image once per output
 * pixel, so the inner loops run over the C contiguous channels of one
 * input pixel with no bounds checks; AvgPool with SAME padding divides by
 * the number of in-bounds elements, as TF does. MaxPool propagates NaN
 * (a NaN in a window is that window's maximum) so numerics checks see it.
 * MaxPoolGrad routes each output gradient to the first maximum of its
 * window (in row-major window order); it has no gradient itself.
 *
 * Attributes: i[0], i[1] window h, w; i[2], i[3] strides h, w; i[4]
 * padding; i[5..8] the input shape (AvgPoolGrad only).
 */
#include <math.h>
#include <stdio.h>

#include "conv_im2col.h"

enum { A_KH = 0, A_KW, A_SH, A_SW, A_PAD, A_SHAPE, A_COUNT = A_SHAPE + 4 };

/* ---- shapes ----------------------------------------------------------------------- */

static bool pool_window(const gb_op_call *c, const int64_t *xs, gb_window *g) {
    const gb_attrs *a = c->attrs;
    *g = (gb_window){.n = xs[0], .h = xs[1], .w = xs[2], .c = xs[3], .kh = a->i[A_KH],
                     .kw = a->i[A_KW], .sh = a->i[A_SH], .sw = a->i[A_SW], .dh = 1, .dw = 1,
                     .padding = (int)a->i[A_PAD]};
    return gb__window_init(c, g);
}

static bool check_input(const gb_op_call *c, const gb_tensor *x, const char *what) {
    char s[96];
    if (x->rank != 4) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s must have rank 4 (NHWC), got shape %s",
                     c->def->name, what, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return false;
    }
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", c->def->name,
                     what, gb_dtype_name(x->dtype));
        return false;
    }
    return true;
}

/* The gradient input of the grad ops must match the pooling output. */
static bool check_dy(const gb_op_call *c, const gb_tensor *dy, const gb_window *g, gb_dtype dt) {
    int64_t want[4] = {g->n, g->oh, g->ow, g->c};
    if (dy->dtype != dt) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the gradient is %s but the input is %s", c->def->name,
                     gb_dtype_name(dy->dtype), gb_dtype_name(dt));
        return false;
    }
    if (memcmp(dy->shape, want, sizeof want) == 0) return true;
    char a[96], b[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: the gradient has shape %s but the pooling output is %s",
                 c->def->name, gb__shape_fmt(4, dy->shape, a, sizeof a),
                 gb__shape_fmt(4, want, b, sizeof b));
    return false;
}

static void set_out(gb_out_desc *o, gb_dtype dt, const int64_t *s) {
    o->dtype = dt;
    o->rank = 4;
    memcpy(o->shape, s, 4 * sizeof *s);
}

static int infer_pool(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    gb_window g;
    if (!check_input(c, x, "input") || !pool_window(c, x->shape, &g)) return -1;
    set_out(&out[0], x->dtype, (const int64_t[]){g.n, g.oh, g.ow, g.c});
    return 1;
}

/* MaxPoolGrad(x, dy) -> dx */
static int infer_max_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    gb_window g;
    if (!check_input(c, x, "input") || !check_input(c, dy, "gradient") ||
        !pool_window(c, x->shape, &g) || !check_dy(c, dy, &g, x->dtype))
        return -1;
    set_out(&out[0], x->dtype, x->shape);
    return 1;
}

/* AvgPoolGrad(dy) -> dx of the input shape in the attrs */
static int infer_avg_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *dy = c->in[0];
    const int64_t *xs = c->attrs->i + A_SHAPE;
    gb_window g;
    for (int d = 0; d < 4; d++)
        if (xs[d] < 0) {
            char b[96];
            gb__op_error(c, GB_ERR_SHAPE, "%s: negative dimension in the input shape %s",
                         c->def->name, gb__shape_fmt(4, xs, b, sizeof b));
            return -1;
        }
    if (!check_input(c, dy, "gradient") || !pool_window(c, xs, &g) ||
        !check_dy(c, dy, &g, dy->dtype))
        return -1;
    set_out(&out[0], dy->dtype, xs);
    return 1;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* The in-bounds part [lo, hi) of the window of output index o along an axis. */
static inline void clip(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in,
                        int64_t *lo, int64_t *hi) {
    int64_t s = o * stride - pad;
    *lo = s > 0 ? s : 0;
    *hi = s + k < in ? s + k : in;
}

/* Visits every output pixel with its clipped window: BODY sees n, oh, ow,
 * h0, h1, w0, w1, the output offset `o` (of channel 0) and count. */
#define FOR_EACH_WINDOW(g, BODY)                                                              \
    for (int64_t n = 0; n < (g)->n; n++)                                                      \
        for (int64_t oh = 0; oh < (g)->oh; oh++) {                                            \
            int64_t h0, h1;                                                                   \
            clip(oh, (g)->sh, (g)->pt, (g)->kh, (g)->h, &h0, &h1);                            \
            for (int64_t ow = 0; ow < (g)->ow; ow++) {                                        \
                int64_t w0, w1;                                                               \
                clip(ow, (g)->sw, (g)->pl, (g)->kw, (g)->w, &w0, &w1);                        \
                int64_t o = ((n * (g)->oh + oh) * (g)->ow + ow) * (g)->c;                     \
                int64_t count = (h1 - h0) * (w1 - w0);                                        \
                (void)count;                                                                  \
                BODY                                                                          \
            }                                                                                 \
        }

/* Offset of input pixel (n, ih, iw), channel 0. */
#define PIX(g, n, ih, iw) ((((n) * (g)->h + (ih)) * (g)->w + (iw)) * (g)->c)

#define DEFINE_POOL_KERNELS(T, SUFFIX)                                                        \
    static void max_pool_##SUFFIX(const gb_window *g, const T *x, T *y) {                     \
        const int64_t C = g->c;                                                               \
        FOR_EACH_WINDOW(g, {                                                                  \
            T *restrict m = y + o;                                                            \
            for (int64_t c = 0; c < C; c++) m[c] = -INFINITY;                                 \
            for (int64_t ih = h0; ih < h1; ih++)                                              \
                for (int64_t iw = w0; iw < w1; iw++) {                                        \
                    const T *restrict v = x + PIX(g, n, ih, iw);                              \
                    for (int64_t c = 0; c < C; c++)                                           \
                        m[c] = v[c] > m[c] || v[c] != v[c] ? v[c] : m[c];                     \
                }                                                                             \
        })                                                                                    \
    }                                                                                         \
    static void avg_pool_##SUFFIX(const gb_window *g, const T *x, T *y) {                     \
        const int64_t C = g->c;                                                               \
        FOR_EACH_WINDOW(g, {                                                                  \
            T *restrict s = y + o;                                                            \
            for (int64_t c = 0; c < C; c++) s[c] = 0;                                         \
            for (int64_t ih = h0; ih < h1; ih++)                                              \
                for (int64_t iw = w0; iw < w1; iw++) {                                        \
                    const T *restrict v = x + PIX(g, n, ih, iw);                              \
                    for (int64_t c = 0; c < C; c++) s[c] += v[c];                             \
                }                                                                             \
            T inv = (T)1 / (T)count;                                                          \
            for (int64_t c = 0; c < C; c++) s[c] *= inv;                                      \
        })                                                                                    \
    }                                                                                         \
    /* dx[window] += dy / count */                                                            \
    static void avg_pool_grad_##SUFFIX(const gb_window *g, const T *dy, T *dx) {              \
        const int64_t C = g->c;                                                               \
        memset(dx, 0, (size_t)(g->n * g->h * g->w * C) * sizeof(T));                          \
        FOR_EACH_WINDOW(g, {                                                                  \
            const T *restrict d = dy + o;                                                     \
            T inv = (T)1 / (T)count;                                                          \
            for (int64_t ih = h0; ih < h1; ih++)                                              \
                for (int64_t iw = w0; iw < w1; iw++) {                                        \
                    T *restrict v = dx + PIX(g, n, ih, iw);                                   \
                    for (int64_t c = 0; c < C; c++) v[c] += d[c] * inv;                       \
                }                                                                             \
        })                                                                                    \
    }                                                                                         \
    /* dx[first argmax of each window and channel] += dy. best/arg: C-long scratch. */        \
    static void max_pool_grad_##SUFFIX(const gb_window *g, const T *x, const T *dy, T *dx,    \
                                       T *restrict best, int64_t *restrict arg) {             \
        const int64_t C = g->c;                                                               \
        memset(dx, 0, (size_t)(g->n * g->h * g->w * C) * sizeof(T));                          \
        FOR_EACH_WINDOW(g, {                                                                  \
            for (int64_t c = 0; c < C; c++) {                                                 \
                best[c] = -INFINITY;                                                          \
                arg[c] = PIX(g, n, h0, w0) + c;                                               \
            }                                                                                 \
            for (int64_t ih = h0; ih < h1; ih++)                                              \
                for (int64_t iw = w0; iw < w1; iw++) {                                        \
                    int64_t p = PIX(g, n, ih, iw);                                            \
                    const T *restrict v = x + p;                                              \
                    for (int64_t c = 0; c < C; c++) {                                         \
                        /* NaN wins once, like the forward pass; later NaNs do not move it */ \
                        bool take = v[c] > best[c] || (v[c] != v[c] && best[c] == best[c]);   \
                        best[c] = take ? v[c] : best[c];                                      \
                        arg[c] = take ? p + c : arg[c];                                       \
                    }                                                                         \
                }                                                                             \
            for (int64_t c = 0; c < C; c++) dx[arg[c]] += dy[o + c];                          \
        })                                                                                    \
    }
DEFINE_POOL_KERNELS(float, f32)
DEFINE_POOL_KERNELS(double, f64)

static bool kernel_max_pool(const gb_op_call *c, gb_tensor **out) {
    gb_window g;
    pool_window(c, c->in[0]->shape, &g);
    if (c->in[0]->dtype == GB_F32)
        max_pool_f32(&g, c->in[0]->data, out[0]->data);
    else
        max_pool_f64(&g, c->in[0]->data, out[0]->data);
    return true;
}

static bool kernel_avg_pool(const gb_op_call *c, gb_tensor **out) {
    gb_window g;
    pool_window(c, c->in[0]->shape, &g);
    if (c->in[0]->dtype == GB_F32)
        avg_pool_f32(&g, c->in[0]->data, out[0]->data);
    else
        avg_pool_f64(&g, c->in[0]->data, out[0]->data);
    return true;
}

static bool kernel_max_pool_grad(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    gb_window g;
    pool_window(c, x->shape, &g);
    size_t n = (size_t)(g.c > 0 ? g.c : 1);
    void *best = gb__scope_alloc(n * sizeof(double));
    int64_t *arg = gb__scope_alloc(n * sizeof(int64_t));
    if (!best || !arg) return false;
    if (x->dtype == GB_F32)
        max_pool_grad_f32(&g, x->data, dy->data, out[0]->data, best, arg);
    else
        max_pool_grad_f64(&g, x->data, dy->data, out[0]->data, best, arg);
    return true;
}

static bool kernel_avg_pool_grad(const gb_op_call *c, gb_tensor **out) {
    gb_window g;
    pool_window(c, out[0]->shape, &g);
    if (out[0]->dtype == GB_F32)
        avg_pool_grad_f32(&g, c->in[0]->data, out[0]->data);
    else
        avg_pool_grad_f64(&g, c->in[0]->data, out[0]->data);
    return true;
}

/* ---- gradients ------------------------------------------------------------------------- */

static gb_attrs with_shape(const gb_attrs *like, const int64_t *shape) {
    gb_attrs a = *like;
    memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = A_COUNT;
    return a;
}

static bool grad_max_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[2] = {ctx->inputs[0], ctx->dys[0]};
    dx[0] = gb__op1(GB_OP_MAX_POOL_GRAD, in, 2, ctx->attrs);
    return dx[0] != NULL;
}

static bool grad_avg_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_attrs a = with_shape(ctx->attrs, ctx->inputs[0]->shape);
    dx[0] = gb__op1(GB_OP_AVG_POOL_GRAD, &ctx->dys[0], 1, &a);
    return dx[0] != NULL;
}

/* AvgPoolGrad is linear in dy and AvgPool is its adjoint. */
static bool grad_avg_pool_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = gb__op1(GB_OP_AVG_POOL, &ctx->dys[0], 1, ctx->attrs);
    return dx[0] != NULL;
}

#define POOL_ATTRS_DOC                                                                        \
    "i[0], i[1] window h, w; i[2], i[3] strides h, w; i[4] padding (0 VALID, 1 SAME); "       \
    "i[5..8] input shape (AvgPoolGrad)"

const gb_op_def gb_opdef_max_pool = {
    .name = "MaxPool",
    .arity = 1,
    .attrs_doc = POOL_ATTRS_DOC,
    .infer = infer_pool,
    .kernel = kernel_max_pool,
    .grad = grad_max_pool,
};

const gb_op_def gb_opdef_max_pool_grad = {
    .name = "MaxPoolGrad",
    .arity = 2,
    .attrs_doc = POOL_ATTRS_DOC,
    .infer = infer_max_pool_grad,
    .kernel = kernel_max_pool_grad,
    .grad = NULL, /* second derivatives of max pooling are not supported */
};

const gb_op_def gb_opdef_avg_pool = {
    .name = "AvgPool",
    .arity = 1,
    .attrs_doc = POOL_ATTRS_DOC,
    .infer = infer_pool,
    .kernel = kernel_avg_pool,
    .grad = grad_avg_pool,
};

const gb_op_def gb_opdef_avg_pool_grad = {
    .name = "AvgPoolGrad",
    .arity = 1,
    .attrs_doc = POOL_ATTRS_DOC,
    .infer = infer_avg_pool_grad,
    .kernel = kernel_avg_pool_grad,
    .grad = grad_avg_pool_grad,
};

/* ---- public API ---------------------------------------------------------------------------- */

static gb_tensor *pool(gb_op_id op, gb_tensor *x, const int *ksize, const int *strides,
                       gb_padding padding) {
    if (!ksize) {
        gb__error(GB_ERR_VALUE, gb_op_type_name(op), "%s: ksize is NULL (give {h, w})",
                  gb_op_type_name(op));
        return NULL;
    }
    const int *s = strides ? strides : ksize;
    gb_attrs a = {.ni = A_COUNT};
    a.i[A_KH] = ksize[0];
    a.i[A_KW] = ksize[1];
    a.i[A_SH] = s[0];
    a.i[A_SW] = s[1];
    a.i[A_PAD] = padding;
    return gb__op1(op, &x, 1, &a);
}

gb_tensor *gb_max_pool2d(gb_tensor *x, const int *ksize, const int *strides, gb_padding padding) {
    return pool(GB_OP_MAX_POOL, x, ksize, strides, padding);
}

gb_tensor *gb_avg_pool2d(gb_tensor *x, const int *ksize, const int *strides, gb_padding padding) {
    return pool(GB_OP_AVG_POOL, x, ksize, strides, padding);
}
