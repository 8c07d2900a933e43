/* ops/pool.c — MaxPool and AvgPool over NHWC windows, with MaxPoolGrad
 * and AvgPoolGrad as ops (what their gradients call), as in TensorFlow.
 *
 * Window geometry and the SAME/VALID rules are shared with convolution
 * (ops/conv/im2col.h). Every window is clipped to the image once per output
 * pixel, so the inner loops run over the C contiguous channels of one
 * input pixel with no bounds checks; AvgPool with SAME padding divides by
 * the number of in-bounds elements, as TF does. MaxPool propagates NaN
 * (a NaN in a window is that window's maximum) so numerics checks see it.
 * MaxPoolGrad(x, y, dy), given the forward output y as TF's, routes each
 * output gradient to the first maximum of its window (in row-major window
 * order); it has no gradient itself.
 *
 * Attributes: i[0], i[1] window h, w; i[2], i[3] strides h, w; i[4]
 * padding; i[5..8] the input shape (AvgPoolGrad only).
 */
/* Floating-point exceptions are never unmasked in glassbox; telling GCC
 * so lets it turn the per-channel selects below (max, first-max routing)
 * into vector blends instead of branches (5x faster pooling backward). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <math.h>
#include <stdio.h>

#include "ops/conv/im2col.h"
#include "core/parallel.h"

enum { A_KH = 0, A_KW, A_SH, A_SW, A_PAD, A_SHAPE, A_COUNT = A_SHAPE + 4 };

/* ---- shapes ----------------------------------------------------------------------- */

static bool pool_window(const gb_op_call *c, const int64_t *xs, gb_window *g) {
    const gb_attrs *a = c->attrs;
    *g = (gb_window){.n = xs[0],
                     .h = xs[1],
                     .w = xs[2],
                     .c = xs[3],
                     .kh = a->i[A_KH],
                     .kw = a->i[A_KW],
                     .sh = a->i[A_SH],
                     .sw = a->i[A_SW],
                     .dh = 1,
                     .dw = 1,
                     .padding = (int)a->i[A_PAD]};
    return gb__window_init(c, g);
}

static bool check_input(const gb_op_call *c, const gb_tensor *x, const char *what) {
    char s[96];
    if (x->rank != 4) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s must have rank 4 (NHWC), got shape %s", c->def->name,
                     what, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return false;
    }
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", c->def->name,
                     what, gb_dtype_name(x->dtype));
        return false;
    }
    return true;
}

/* The grad ops' inputs shaped like the pooling output (`what`: the
 * gradient, or MaxPoolGrad's forward output) must match it. */
static bool check_dy(const gb_op_call *c, const gb_tensor *dy, const char *what, const gb_window *g,
                     gb_dtype dt) {
    int64_t want[4] = {g->n, g->oh, g->ow, g->c};
    if (dy->dtype != dt) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the %s is %s but the input is %s", c->def->name, what,
                     gb_dtype_name(dy->dtype), gb_dtype_name(dt));
        return false;
    }
    if (gb__shapes_match(4, dy->shape, 4, want)) return true;
    char a[96], b[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: the %s has shape %s but the pooling output is %s",
                 c->def->name, what, gb__shape_fmt(4, dy->shape, a, sizeof a),
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

/* MaxPoolGrad(x, y, dy) -> dx, y = MaxPool(x) */
static int infer_max_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *y = c->in[1], *dy = c->in[2];
    gb_window g;
    if (!check_input(c, x, "input") || !check_input(c, y, "output") ||
        !check_input(c, dy, "gradient") || !pool_window(c, x->shape, &g) ||
        !check_dy(c, y, "output", &g, x->dtype) || !check_dy(c, dy, "gradient", &g, x->dtype))
        return -1;
    set_out(&out[0], x->dtype, x->shape);
    return 1;
}

/* AvgPoolGrad(dy) -> dx of the input shape in the attrs */
static int infer_avg_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *dy = c->in[0];
    int64_t xs[4];
    gb_window g;
    if (!check_input(c, dy, "gradient") ||
        !gb__window_shape_attr(c, c->attrs->i + A_SHAPE, "input", dy, xs) ||
        !pool_window(c, xs, &g) || !check_dy(c, dy, "gradient", &g, dy->dtype))
        return -1;
    set_out(&out[0], dy->dtype, xs);
    return 1;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* The in-bounds part [lo, hi) of the window of output index o along an axis. */
static inline void clip(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in, int64_t *lo,
                        int64_t *hi) {
    int64_t s = o * stride - pad;
    *lo = s > 0 ? s : 0;
    *hi = s + k < in ? s + k : in;
}

/* One kernel call: parts handle disjoint ranges of images [n0, n1), so
 * they never write the same memory. */
typedef struct pool_job {
    gb_window g;
    const void *x, *y, *dy; /* as the op has them (y: MaxPoolGrad's forward output) */
    void *out;
    void *scratch; /* MaxPoolGrad: C values per worker */
} pool_job;

/* Visits every output pixel of images [n0, n1) with its clipped window:
 * BODY sees n, h0, h1, w0, w1, the output offset `o` (of channel 0) and
 * `count`. The channel loops inside use `|`/`&` rather than `||`/`&&` and
 * selects rather than branches, so they compile to vector blends. */
#define FOR_EACH_WINDOW(g, n0, n1, BODY)                                                           \
    for (int64_t n = (n0); n < (n1); n++)                                                          \
        for (int64_t oh = 0; oh < (g)->oh; oh++) {                                                 \
            int64_t h0, h1;                                                                        \
            clip(oh, (g)->sh, (g)->pt, (g)->kh, (g)->h, &h0, &h1);                                 \
            for (int64_t ow = 0; ow < (g)->ow; ow++) {                                             \
                int64_t w0, w1;                                                                    \
                clip(ow, (g)->sw, (g)->pl, (g)->kw, (g)->w, &w0, &w1);                             \
                int64_t o = ((n * (g)->oh + oh) * (g)->ow + ow) * (g)->c;                          \
                int64_t count = (h1 - h0) * (w1 - w0);                                             \
                (void)count;                                                                       \
                BODY                                                                               \
            }                                                                                      \
        }

/* Offset of input pixel (n, ih, iw), channel 0. */
#define PIX(g, n, ih, iw) ((((n) * (g)->h + (ih)) * (g)->w + (iw)) * (g)->c)

/* Zeroes the input-shaped gradient of images [n0, n1). */
#define ZERO_IMAGES(T, g, dx, n0, n1)                                                              \
    memset((T *)(dx) + PIX(g, n0, 0, 0), 0, (size_t)(((n1) - (n0)) * PIX(g, 1, 0, 0)) * sizeof(T))

/* Whether every input element lies in exactly one window: windows side by
 * side (stride = size) covering the image (SAME always does; VALID only
 * when the size divides the image). */
static bool tiles_exactly(const gb_window *g) {
    if (g->sh != g->kh || g->sw != g->kw) return false;
    return g->padding == GB_PADDING_SAME || (g->oh * g->kh == g->h && g->ow * g->kw == g->w);
}

/* MaxPoolGrad's step for channel c: the unrouted gradient goes to the
 * first element equal to the window's maximum (a NaN maximum matches the
 * first NaN). STORE is `d[c] =` or `d[c] +=`. */
#define ROUTE(T, STORE)                                                                            \
    do {                                                                                           \
        bool hit = (v[c] == m[c]) | ((v[c] != v[c]) & (m[c] != m[c]));                             \
        T l = left[c];                                                                             \
        STORE(hit ? l : 0);                                                                        \
        left[c] = hit ? 0 : l;                                                                     \
    } while (0)

#define DEFINE_POOL_KERNELS(T, SUFFIX)                                                             \
    static void max_pool_##SUFFIX(const pool_job *j, int64_t n0, int64_t n1, int w) {              \
        const gb_window *g = &j->g;                                                                \
        const T *x = j->x;                                                                         \
        const int64_t C = g->c;                                                                    \
        (void)w;                                                                                   \
        FOR_EACH_WINDOW(g, n0, n1, {                                                               \
            T *restrict m = (T *)j->out + o;                                                       \
            for (int64_t c = 0; c < C; c++) m[c] = -INFINITY;                                      \
            for (int64_t ih = h0; ih < h1; ih++)                                                   \
                for (int64_t iw = w0; iw < w1; iw++) {                                             \
                    const T *restrict v = x + PIX(g, n, ih, iw);                                   \
                    for (int64_t c = 0; c < C; c++)                                                \
                        m[c] = ((v[c] > m[c]) | (v[c] != v[c])) ? v[c] : m[c];                     \
                }                                                                                  \
        })                                                                                         \
    }                                                                                              \
    static void avg_pool_##SUFFIX(const pool_job *j, int64_t n0, int64_t n1, int w) {              \
        const gb_window *g = &j->g;                                                                \
        const T *x = j->x;                                                                         \
        const int64_t C = g->c;                                                                    \
        (void)w;                                                                                   \
        FOR_EACH_WINDOW(g, n0, n1, {                                                               \
            T *restrict s = (T *)j->out + o;                                                       \
            for (int64_t c = 0; c < C; c++) s[c] = 0;                                              \
            for (int64_t ih = h0; ih < h1; ih++)                                                   \
                for (int64_t iw = w0; iw < w1; iw++) {                                             \
                    const T *restrict v = x + PIX(g, n, ih, iw);                                   \
                    for (int64_t c = 0; c < C; c++) s[c] += v[c];                                  \
                }                                                                                  \
            T inv = (T)1 / (T)count;                                                               \
            for (int64_t c = 0; c < C; c++) s[c] *= inv;                                           \
        })                                                                                         \
    }                                                                                              \
    /* dx[window] += dy / count */                                                                 \
    static void avg_pool_grad_##SUFFIX(const pool_job *j, int64_t n0, int64_t n1, int w) {         \
        const gb_window *g = &j->g;                                                                \
        const T *dy = j->dy;                                                                       \
        T *dx = j->out;                                                                            \
        const int64_t C = g->c;                                                                    \
        (void)w;                                                                                   \
        ZERO_IMAGES(T, g, dx, n0, n1);                                                             \
        FOR_EACH_WINDOW(g, n0, n1, {                                                               \
            const T *restrict d = dy + o;                                                          \
            T inv = (T)1 / (T)count;                                                               \
            for (int64_t ih = h0; ih < h1; ih++)                                                   \
                for (int64_t iw = w0; iw < w1; iw++) {                                             \
                    T *restrict v = dx + PIX(g, n, ih, iw);                                        \
                    for (int64_t c = 0; c < C; c++) v[c] += d[c] * inv;                            \
                }                                                                                  \
        })                                                                                         \
    }                                                                                              \
    /* dx[first maximum of each window and channel] += dy. The forward output  \
     * y says what the maximum is, so the scan is compare-and-blend over float \
     * lanes; `left` holds the gradient not yet routed. */                   \
    static void max_pool_grad_##SUFFIX(const pool_job *j, int64_t n0, int64_t n1, int w) {         \
        const gb_window *g = &j->g;                                                                \
        const T *x = j->x, *y = j->y, *dy = j->dy;                                                 \
        T *dx = j->out, *restrict left = (T *)j->scratch + w * g->c;                               \
        const int64_t C = g->c;                                                                    \
        /* Windows tiling the image write each element once (no zeroing */                         \
        /* pass); otherwise gradients add up over a zeroed dx. */                                  \
        bool tiled = tiles_exactly(g);                                                             \
        if (!tiled) ZERO_IMAGES(T, g, dx, n0, n1);                                                 \
        FOR_EACH_WINDOW(g, n0, n1, {                                                               \
            const T *restrict m = y + o;                                                           \
            for (int64_t c = 0; c < C; c++) left[c] = dy[o + c];                                   \
            for (int64_t ih = h0; ih < h1; ih++)                                                   \
                for (int64_t iw = w0; iw < w1; iw++) {                                             \
                    const T *restrict v = x + PIX(g, n, ih, iw);                                   \
                    T *restrict d = dx + PIX(g, n, ih, iw);                                        \
                    if (tiled)                                                                     \
                        for (int64_t c = 0; c < C; c++) ROUTE(T, d[c] =);                          \
                    else                                                                           \
                        for (int64_t c = 0; c < C; c++) ROUTE(T, d[c] +=);                         \
                }                                                                                  \
        })                                                                                         \
    }
DEFINE_POOL_KERNELS(float, f32)
DEFINE_POOL_KERNELS(double, f64)

typedef void (*pool_kernel)(const pool_job *j, int64_t n0, int64_t n1, int w);

typedef struct pool_task {
    pool_job job;
    pool_kernel fn;
} pool_task;

static void pool_range(void *ctx, int64_t n0, int64_t n1, int w) {
    const pool_task *t = ctx;
    t->fn(&t->job, n0, n1, w);
}

/* Parts smaller than this many input elements are not worth a thread. */
#define PARALLEL_MIN_ELEMS (1 << 16)

/* Runs f32 or f64 over all images of the job's window, in parallel when big. */
static bool run_pool(pool_kernel f32, pool_kernel f64, gb_dtype dt, pool_job job) {
    pool_task t = {job, dt == GB_F32 ? f32 : f64};
    const gb_window *g = &job.g;
    if (f32 == max_pool_grad_f32) {
        int64_t c = g->c > 0 ? g->c : 1;
        t.job.scratch = gb__scope_alloc((size_t)(gb__parallel_workers() * c) * gb_dtype_size(dt));
        if (!t.job.scratch) return false;
    }
    int64_t per_image = g->h * g->w * g->c + g->oh * g->ow * g->c;
    int64_t grain = per_image > 0 ? (PARALLEL_MIN_ELEMS + per_image - 1) / per_image : g->n;
    gb__parallel_for(g->n, grain, pool_range, &t);
    return true;
}

static bool kernel_max_pool(const gb_op_call *c, gb_tensor **out) {
    pool_job j = {.x = c->in[0]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(max_pool_f32, max_pool_f64, out[0]->dtype, j);
}

static bool kernel_avg_pool(const gb_op_call *c, gb_tensor **out) {
    pool_job j = {.x = c->in[0]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(avg_pool_f32, avg_pool_f64, out[0]->dtype, j);
}

static bool kernel_max_pool_grad(const gb_op_call *c, gb_tensor **out) {
    pool_job j = {
        .x = c->in[0]->data, .y = c->in[1]->data, .dy = c->in[2]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(max_pool_grad_f32, max_pool_grad_f64, out[0]->dtype, j);
}

static bool kernel_avg_pool_grad(const gb_op_call *c, gb_tensor **out) {
    pool_job j = {.dy = c->in[0]->data, .out = out[0]->data};
    pool_window(c, out[0]->shape, &j.g);
    return run_pool(avg_pool_grad_f32, avg_pool_grad_f64, out[0]->dtype, j);
}

/* ---- gradients ------------------------------------------------------------------------- */

/* The window of `like` with the shape slots set to `shape` (AvgPoolGrad),
 * or without them (NULL: the pools, whose schema has no shape). */
static gb_attrs with_shape(const gb_attrs *like, const int64_t *shape) {
    gb_attrs a = *like;
    memset(a.i + A_SHAPE, 0, 4 * sizeof(int64_t));
    if (shape) memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = shape ? A_COUNT : A_SHAPE;
    return a;
}

static bool grad_max_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[3] = {ctx->inputs[0], ctx->outputs[0], ctx->dys[0]};
    dx[0] = gb__op1(GB_OP_MAX_POOL_GRAD, in, 3, ctx->attrs);
    return dx[0] != NULL;
}

static bool grad_avg_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_attrs a = with_shape(ctx->attrs, ctx->inputs[0]->shape);
    dx[0] = gb__op1(GB_OP_AVG_POOL_GRAD, &ctx->dys[0], 1, &a);
    return dx[0] != NULL;
}

/* AvgPoolGrad is linear in dy and AvgPool is its adjoint. */
static bool grad_avg_pool_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_attrs a = with_shape(ctx->attrs, NULL);
    dx[0] = gb__op1(GB_OP_AVG_POOL, &ctx->dys[0], 1, &a);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_max_pool = {
    .name = "MaxPool",
    .arity = 1,
    .infer = infer_pool,
    .kernel = kernel_max_pool,
    .grad = grad_max_pool,
};

const gb_op_def gb_opdef_max_pool_grad = {
    .name = "MaxPoolGrad",
    .arity = 3,
    .infer = infer_max_pool_grad,
    .kernel = kernel_max_pool_grad,
    .grad = NULL, /* second derivatives of max pooling are not supported */
};

const gb_op_def gb_opdef_avg_pool = {
    .name = "AvgPool",
    .arity = 1,
    .infer = infer_pool,
    .kernel = kernel_avg_pool,
    .grad = grad_avg_pool,
};

const gb_op_def gb_opdef_avg_pool_grad = {
    .name = "AvgPoolGrad",
    .arity = 1,
    .infer = infer_avg_pool_grad,
    .kernel = kernel_avg_pool_grad,
    .grad = grad_avg_pool_grad,
};

/* ---- public API ---------------------------------------------------------------------------- */

static gb_tensor *pool(gb_op_id op, gb_tensor *x, const int64_t *ksize, int nksize,
                       const int64_t *strides, int nstrides, gb_padding padding) {
    gb_attrs a = {.ni = A_SHAPE};
    if (!gb__window_pair(op, "ksize", ksize, nksize, NULL, a.i + A_KH) ||
        !gb__window_pair(op, "strides", strides, nstrides, a.i + A_KH, a.i + A_SH))
        return NULL;
    a.i[A_PAD] = padding;
    return gb__op1(op, &x, 1, &a);
}

gb_tensor *gb_max_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding) {
    return pool(GB_OP_MAX_POOL, x, ksize, nksize, strides, nstrides, padding);
}

gb_tensor *gb_avg_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding) {
    return pool(GB_OP_AVG_POOL, x, ksize, nksize, strides, nstrides, padding);
}
