/* ops_conv.c — Conv2D (NHWC input, [KH,KW,C,OC] filter, as TensorFlow)
 * and its two backprop ops, Conv2DBackpropInput and Conv2DBackpropFilter.
 *
 * All three are im2col + GEMM (conv_im2col.c): with the output pixels as
 * rows and the filter viewed as a [KH*KW*C, OC] matrix,
 *   Conv2D:               out[R,OC]  = cols[R,K] . W[K,OC]
 *   Conv2DBackpropInput:  dx         = col2im(dy[R,OC] . W^T)
 *   Conv2DBackpropFilter: dW[K,OC]   = cols[R,K]^T . dy[R,OC]
 * The rows are processed in chunks so the scratch matrix stays around
 * CHUNK_BYTES (cache-sized, and bounded for big batches) instead of
 * growing to batch x image x kernel. A 1x1 stride-1 convolution skips
 * im2col: the input already is the matrix. A small window (a first layer
 * on 1-3 channels) is convolved directly instead (conv_direct.c). Big
 * calls split the batch over the worker threads (parallel.h), each part
 * with its own chunk buffer.
 *
 * Each backprop op is linear in each of its inputs, so each has a gradient
 * made of the other two ops, and second derivatives through convolutions
 * work (TF's _Conv2DBackpropInputGrad / _Conv2DBackpropFilterGrad).
 *
 * Attributes (all three ops): i[0], i[1] strides h, w; i[2], i[3]
 * dilations h, w; i[4] padding; i[5..8] the shape the backprop op
 * produces (input shape for BackpropInput, filter shape for
 * BackpropFilter; unused by Conv2D).
 */
#include <cblas.h>
#include <stdio.h>

#include "conv_direct.h"
#include "conv_im2col.h"
#include "conv_winograd.h"
#include "parallel.h"

enum { A_SH = 0, A_SW, A_DH, A_DW, A_PAD, A_SHAPE, A_COUNT = A_SHAPE + 4 };

/* Scratch for one chunk of im2col rows. Measured for the Fashion-MNIST
 * conv stack: see the commit that set it. */
#define CHUNK_BYTES (1 << 20)

/* ---- shapes ---------------------------------------------------------------------- */

static const char *fmt4(const int64_t *s, char *buf, size_t n) { return gb__shape_fmt(4, s, buf, n); }

/* Window geometry from the input shape xs [N,H,W,C], filter shape
 * fs [KH,KW,C',OC] and the attrs; checks ranks, depth and attrs. */
static bool conv_window(const gb_op_call *c, const int64_t *xs, const int64_t *fs, gb_window *g) {
    const gb_attrs *a = c->attrs;
    if (xs[3] != fs[2]) {
        char x[96], f[96];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: input depth %lld does not match the filter's input channels %lld: "
                     "input %s, filter %s",
                     c->def->name, (long long)xs[3], (long long)fs[2], fmt4(xs, x, sizeof x),
                     fmt4(fs, f, sizeof f));
        return false;
    }
    *g = (gb_window){.n = xs[0], .h = xs[1], .w = xs[2], .c = xs[3], .kh = fs[0], .kw = fs[1],
                     .sh = a->i[A_SH], .sw = a->i[A_SW], .dh = a->i[A_DH], .dw = a->i[A_DW],
                     .padding = (int)a->i[A_PAD]};
    return gb__window_init(c, g);
}

static bool check_rank4(const gb_op_call *c, const gb_tensor *t, const char *what) {
    if (t->rank == 4) return true;
    char s[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: %s must have rank 4, got shape %s", c->def->name, what,
                 gb__shape_fmt(t->rank, t->shape, s, sizeof s));
    return false;
}

static bool check_dtypes(const gb_op_call *c, const gb_tensor *a, const gb_tensor *b) {
    if (a->dtype == b->dtype && gb_dtype_is_float(a->dtype)) return true;
    gb__op_error(c, GB_ERR_DTYPE, "%s: inputs must both be float32 or both float64, got %s and %s",
                 c->def->name, gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
    return false;
}

/* The shape attribute of the backprop ops, checked. */
static bool attr_shape(const gb_op_call *c, const char *what, int64_t *s) {
    for (int d = 0; d < 4; d++) {
        s[d] = c->attrs->i[A_SHAPE + d];
        if (s[d] < 0) {
            char b[96];
            gb__op_error(c, GB_ERR_SHAPE, "%s: negative dimension in the %s shape %s",
                         c->def->name, what, fmt4(c->attrs->i + A_SHAPE, b, sizeof b));
            return false;
        }
    }
    return true;
}

/* The backprop ops' incoming gradient must have the forward output's shape. */
static bool check_dy(const gb_op_call *c, const gb_tensor *dy, const gb_window *g, int64_t oc) {
    int64_t want[4] = {g->n, g->oh, g->ow, oc};
    if (memcmp(dy->shape, want, sizeof want) == 0) return true;
    char a[96], b[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: out_backprop has shape %s but the convolution output is %s",
                 c->def->name, fmt4(dy->shape, a, sizeof a), fmt4(want, b, sizeof b));
    return false;
}

static void set_out4(gb_out_desc *o, gb_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d) {
    o->dtype = dt;
    o->rank = 4;
    o->shape[0] = a;
    o->shape[1] = b;
    o->shape[2] = c;
    o->shape[3] = d;
}

static int infer_conv2d(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *f = c->in[1];
    gb_window g;
    if (!check_rank4(c, x, "input") || !check_rank4(c, f, "filter") || !check_dtypes(c, x, f) ||
        !conv_window(c, x->shape, f->shape, &g))
        return -1;
    set_out4(&out[0], x->dtype, g.n, g.oh, g.ow, f->shape[3]);
    return 1;
}

/* Conv2DBackpropInput(filter, out_backprop) -> input-shaped gradient. */
static int infer_backprop_input(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *f = c->in[0], *dy = c->in[1];
    int64_t xs[4];
    gb_window g;
    if (!check_rank4(c, f, "filter") || !check_rank4(c, dy, "out_backprop") ||
        !check_dtypes(c, f, dy) || !attr_shape(c, "input", xs) ||
        !conv_window(c, xs, f->shape, &g) || !check_dy(c, dy, &g, f->shape[3]))
        return -1;
    set_out4(&out[0], f->dtype, xs[0], xs[1], xs[2], xs[3]);
    return 1;
}

/* Conv2DBackpropFilter(input, out_backprop) -> filter-shaped gradient. */
static int infer_backprop_filter(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    int64_t fs[4];
    gb_window g;
    if (!check_rank4(c, x, "input") || !check_rank4(c, dy, "out_backprop") ||
        !check_dtypes(c, x, dy) || !attr_shape(c, "filter", fs) ||
        !conv_window(c, x->shape, fs, &g) || !check_dy(c, dy, &g, fs[3]))
        return -1;
    set_out4(&out[0], x->dtype, fs[0], fs[1], fs[2], fs[3]);
    return 1;
}

/* ---- kernels ------------------------------------------------------------------------ */

/* One kernel call, split over images: each part handles images
 * [n0, n1), i.e. output rows [n0*OH*OW, n1*OH*OW), in chunks of `step`
 * rows with its own scratch. Parts never write the same memory: col2im
 * only touches the part's own images, and filter gradients go to one
 * partial sum per part, added up at the end. */
typedef struct conv_job {
    gb_window g;
    int64_t oc, step;
    const void *a, *b;  /* (x, W), (W, dy) or (x, dy) */
    void *out;
    void *scratch;      /* per worker: step * K values, then K * OC partial sums */
} conv_job;

static int64_t chunk_rows(const gb_window *g, size_t elem) {
    int64_t k = gb__window_cols(g), rows = (int64_t)(CHUNK_BYTES / elem) / (k ? k : 1);
    return rows > 0 ? rows : 1;
}

/* Worker w's scratch: a chunk of im2col rows, then its partial filter
 * gradient. */
static void *worker_cols(const conv_job *j, int w, size_t elem) {
    int64_t k = gb__window_cols(&j->g);
    return (char *)j->scratch + (size_t)w * (size_t)(j->step * k + k * j->oc) * elem;
}

static void *worker_partial(const conv_job *j, int w, size_t elem) {
    return (char *)worker_cols(j, w, elem) + (size_t)(j->step * gb__window_cols(&j->g)) * elem;
}

/* Row-major GEMM C = A' B' (+ C when accumulate) on one dtype. */
#define DEFINE_CONV_KERNELS(T, SUFFIX, BLAS)                                                     \
    static void gemm_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *A,     \
                              int64_t lda, const T *B, int64_t ldb, bool accumulate, T *C,       \
                              int64_t ldc) {                                                     \
        BLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,      \
             (int)m, (int)n, (int)k, 1, A, (int)lda, B, (int)ldb, accumulate ? 1 : 0, C,         \
             (int)ldc);                                                                          \
    }                                                                                            \
    /* out[R,OC] = im2col(x) . W */                                                              \
    static void conv_fwd_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {           \
        const T *x = j->a, *wt = j->b;                                                           \
        T *out = j->out;                                                                         \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                          \
        if (gb__window_is_pointwise(&j->g)) {                                                    \
            gemm_##SUFFIX(false, false, r1 - r0, oc, K, x + r0 * K, K, wt, oc, false,            \
                          out + r0 * oc, oc);                                                    \
            return;                                                                              \
        }                                                                                        \
        T *cols = worker_cols(j, w, sizeof(T));                                                  \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                          \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                  \
            gb__im2col_##SUFFIX(&j->g, x, c0, c1, cols);                                         \
            gemm_##SUFFIX(false, false, c1 - c0, oc, K, cols, K, wt, oc, false, out + c0 * oc,   \
                          oc);                                                                   \
        }                                                                                        \
    }                                                                                            \
    /* dx = col2im(dy[R,OC] . W^T) */                                                            \
    static void conv_bwd_input_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {     \
        const T *wt = j->a, *dy = j->b;                                                          \
        T *dx = j->out;                                                                          \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                          \
        if (gb__window_is_pointwise(&j->g)) {                                                    \
            gemm_##SUFFIX(false, true, r1 - r0, K, oc, dy + r0 * oc, oc, wt, oc, false,          \
                          dx + r0 * K, K);                                                       \
            return;                                                                              \
        }                                                                                        \
        int64_t img = j->g.h * j->g.w * j->g.c, per = j->g.oh * j->g.ow;                         \
        memset(dx + r0 / per * img, 0, (size_t)((r1 - r0) / per * img) * sizeof(T));            \
        T *dcols = worker_cols(j, w, sizeof(T));                                                 \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                          \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                  \
            gemm_##SUFFIX(false, true, c1 - c0, K, oc, dy + c0 * oc, oc, wt, oc, false, dcols,   \
                          K);                                                                    \
            gb__col2im_##SUFFIX(&j->g, dcols, c0, c1, dx);                                       \
        }                                                                                        \
    }                                                                                            \
    /* worker w's partial dW[K,OC] += im2col(x)^T . dy over rows [r0, r1) */                          \
    static void conv_bwd_filter_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {    \
        const T *x = j->a, *dy = j->b;                                                           \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                          \
        T *cols = worker_cols(j, w, sizeof(T)), *dw = worker_partial(j, w, sizeof(T));           \
        if (gb__window_is_pointwise(&j->g)) {                                                    \
            gemm_##SUFFIX(true, false, K, oc, r1 - r0, x + r0 * K, K, dy + r0 * oc, oc, true,    \
                          dw, oc);                                                               \
            return;                                                                              \
        }                                                                                        \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                         \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                  \
            gb__im2col_##SUFFIX(&j->g, x, c0, c1, cols);                                         \
            gemm_##SUFFIX(true, false, K, oc, c1 - c0, cols, K, dy + c0 * oc, oc, true, dw, oc); \
        }                                                                                        \
    }                                                                                            \
    /* out = the sum of the partial filter gradients of workers [0, used) */                    \
    static void sum_partials_##SUFFIX(const conv_job *j, int used) {                             \
        int64_t n = gb__window_cols(&j->g) * j->oc;                                              \
        T *dw = j->out;                                                                          \
        memcpy(dw, worker_partial(j, 0, sizeof(T)), (size_t)n * sizeof(T));                      \
        for (int p = 1; p < used; p++) {                                                         \
            const T *part = worker_partial(j, p, sizeof(T));                                     \
            for (int64_t i = 0; i < n; i++) dw[i] += part[i];                                    \
        }                                                                                        \
    }
DEFINE_CONV_KERNELS(float, f32, cblas_sgemm)
DEFINE_CONV_KERNELS(double, f64, cblas_dgemm)

typedef enum conv_kind { CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER } conv_kind;
typedef enum conv_method { BY_IM2COL, BY_DIRECT, BY_WINOGRAD } conv_method;

typedef struct conv_task {
    conv_job job;
    conv_kind kind;
    conv_method method;
    bool f64;
    gb_wino wino;   /* BY_WINOGRAD: the plan */
    void *shared;   /* BY_WINOGRAD: the transformed filter, or per-worker partial sums */
} conv_task;

/* The fastest method for the call: direct for small windows (not for the
 * input gradient, whose "window" spans the output channels), Winograd for
 * 3x3 stride-1 windows deep enough, else im2col + GEMM. */
static conv_method choose_method(conv_kind kind, const gb_window *g, int64_t oc) {
    static const gb_wino_use use[] = {[CONV_FWD] = GB_WINO_FORWARD,
                                      [CONV_BWD_INPUT] = GB_WINO_INPUT_GRAD,
                                      [CONV_BWD_FILTER] = GB_WINO_FILTER_GRAD};
    if (kind != CONV_BWD_INPUT && gb__window_cols(g) <= GB_DIRECT_MAX_K) return BY_DIRECT;
    if (gb__wino_use(g, oc, use[kind])) return BY_WINOGRAD;
    return BY_IM2COL;
}

static void range_direct(const conv_task *t, int64_t n0, int64_t n1, int w) {
    const conv_job *j = &t->job;
    if (t->kind == CONV_FWD) {
        if (t->f64)
            gb__conv_direct_f64(&j->g, j->a, j->b, j->oc, n0, n1, j->out);
        else
            gb__conv_direct_f32(&j->g, j->a, j->b, j->oc, n0, n1, j->out);
        return;
    }
    void *dw = worker_partial(j, w, t->f64 ? 8 : 4);
    if (t->f64)
        gb__conv_direct_filter_f64(&j->g, j->a, j->b, j->oc, n0, n1, dw);
    else
        gb__conv_direct_filter_f32(&j->g, j->a, j->b, j->oc, n0, n1, dw);
}

static void range_winograd(const conv_task *t, int64_t n0, int64_t n1, int w) {
    const conv_job *j = &t->job;
    size_t elem = t->f64 ? 8 : 4;
    void *scratch = (char *)j->scratch + (size_t)(w * gb__wino_worker_elems(&t->wino)) * elem;
    if (t->kind == CONV_BWD_FILTER) {
        void *s = (char *)t->shared + (size_t)(w * gb__wino_filter_elems(&t->wino)) * elem;
        if (t->f64)
            gb__wino_filter_grad_f64(&t->wino, j->a, j->b, n0, n1, s, scratch);
        else
            gb__wino_filter_grad_f32(&t->wino, j->a, j->b, n0, n1, s, scratch);
        return;
    }
    const void *x = t->kind == CONV_FWD ? j->a : j->b; /* forward: x; input grad: dy */
    if (t->f64)
        gb__wino_conv_f64(&t->wino, x, t->shared, n0, n1, j->out, scratch);
    else
        gb__wino_conv_f32(&t->wino, x, t->shared, n0, n1, j->out, scratch);
}

/* A part over images [n0, n1). */
static void conv_range(void *ctx, int64_t n0, int64_t n1, int w) {
    const conv_task *t = ctx;
    int64_t per = t->job.g.oh * t->job.g.ow, r0 = n0 * per, r1 = n1 * per;
    if (t->method == BY_DIRECT) {
        range_direct(t, n0, n1, w);
        return;
    }
    if (t->method == BY_WINOGRAD) {
        range_winograd(t, n0, n1, w);
        return;
    }
    switch (t->kind) {
    case CONV_FWD: (t->f64 ? conv_fwd_f64 : conv_fwd_f32)(&t->job, r0, r1, w); break;
    case CONV_BWD_INPUT: (t->f64 ? conv_bwd_input_f64 : conv_bwd_input_f32)(&t->job, r0, r1, w); break;
    case CONV_BWD_FILTER: (t->f64 ? conv_bwd_filter_f64 : conv_bwd_filter_f32)(&t->job, r0, r1, w); break;
    }
}

/* Sets up the Winograd plan and shared buffers: the transformed filter
 * (forward, input gradient) or one partial sum per worker (filter grad). */
static bool prepare_winograd(conv_task *t, int workers) {
    const conv_job *j = &t->job;
    static const gb_wino_use use[] = {[CONV_FWD] = GB_WINO_FORWARD,
                                      [CONV_BWD_INPUT] = GB_WINO_INPUT_GRAD,
                                      [CONV_BWD_FILTER] = GB_WINO_FILTER_GRAD};
    size_t elem = t->f64 ? 8 : 4;
    t->wino = gb__wino_plan(&j->g, j->oc, use[t->kind]);
    int64_t filter = gb__wino_filter_elems(&t->wino);
    t->shared = gb__scope_alloc((size_t)(t->kind == CONV_BWD_FILTER ? workers : 1) *
                                (size_t)filter * elem);
    if (!t->shared) return false;
    if (t->kind == CONV_BWD_FILTER) return true;
    const void *w = t->kind == CONV_FWD ? j->b : j->a;
    bool flip = t->kind == CONV_BWD_INPUT;
    if (t->f64)
        gb__wino_filter_f64(w, j->g.c, j->oc, flip, t->shared);
    else
        gb__wino_filter_f32(w, j->g.c, j->oc, flip, t->shared);
    return true;
}

/* Adds the other workers' Winograd partial sums to worker 0's and turns
 * the total into the filter gradient. */
static void finish_winograd_filter(const conv_task *t, int used) {
    int64_t n = gb__wino_filter_elems(&t->wino);
    if (t->f64) {
        double *s = t->shared;
        for (int p = 1; p < used; p++)
            for (int64_t i = 0; i < n; i++) s[i] += s[p * n + i];
        gb__wino_filter_finish_f64(&t->wino, s, t->job.out);
    } else {
        float *s = t->shared;
        for (int p = 1; p < used; p++)
            for (int64_t i = 0; i < n; i++) s[i] += s[p * n + i];
        gb__wino_filter_finish_f32(&t->wino, s, t->job.out);
    }
}

/* The filter gradient is summed per worker (a worker may run several
 * parts): all partial sums start at zero. */
static void zero_partials(const conv_task *t, int workers) {
    size_t elem = t->f64 ? 8 : 4;
    if (t->method == BY_WINOGRAD) {
        memset(t->shared, 0, (size_t)(workers * gb__wino_filter_elems(&t->wino)) * elem);
        return;
    }
    size_t n = (size_t)(gb__window_cols(&t->job.g) * t->job.oc);
    for (int w = 0; w < workers; w++) memset(worker_partial(&t->job, w, elem), 0, n * elem);
}

/* Below this many multiply-adds per part a second thread costs more than
 * it saves. */
#define PARALLEL_MIN_MACS (1 << 20)

/* Runs one of the three kernels over all images, in parallel when the
 * work is big enough; scratch per worker comes from the current scope. */
static bool run_conv(conv_kind kind, const gb_window *g, int64_t oc, const gb_tensor *a,
                     const gb_tensor *b, gb_tensor *out) {
    int64_t R = gb__window_rows(g), K = gb__window_cols(g);
    if (R == 0 || K == 0 || oc == 0) {
        /* empty products never reach BLAS, which rejects leading dimension 0 */
        memset(out->data, 0, (size_t)out->size * gb_dtype_size(out->dtype));
        return true;
    }
    size_t elem = gb_dtype_size(out->dtype);
    conv_task t = {.job = {.g = *g, .oc = oc, .step = chunk_rows(g, elem), .a = a->data,
                           .b = b->data, .out = out->data},
                   .kind = kind, .method = choose_method(kind, g, oc),
                   .f64 = out->dtype == GB_F64};
    int workers = gb__parallel_workers();
    if (t.method == BY_WINOGRAD && !prepare_winograd(&t, workers)) return false;
    size_t each = t.method == BY_WINOGRAD ? (size_t)gb__wino_worker_elems(&t.wino)
                                          : (size_t)(t.job.step * K + K * oc);
    t.job.scratch = gb__scope_alloc((size_t)workers * each * elem);
    if (!t.job.scratch) return false;
    if (kind == CONV_BWD_FILTER) zero_partials(&t, workers);
    int64_t macs_per_image = g->oh * g->ow * K * oc;
    int64_t grain = (PARALLEL_MIN_MACS + macs_per_image - 1) / macs_per_image;
    int used = gb__parallel_for(g->n, grain, conv_range, &t);
    if (kind == CONV_BWD_FILTER && t.method == BY_WINOGRAD) {
        finish_winograd_filter(&t, used);
    } else if (kind == CONV_BWD_FILTER) {
        (t.f64 ? sum_partials_f64 : sum_partials_f32)(&t.job, used);
    }
    return true;
}

static bool kernel_conv2d(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *f = c->in[1];
    gb_window g;
    conv_window(c, x->shape, f->shape, &g);
    return run_conv(CONV_FWD, &g, f->shape[3], x, f, out[0]);
}

static bool kernel_backprop_input(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *f = c->in[0], *dy = c->in[1];
    gb_window g;
    conv_window(c, out[0]->shape, f->shape, &g);
    return run_conv(CONV_BWD_INPUT, &g, f->shape[3], f, dy, out[0]);
}

static bool kernel_backprop_filter(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    gb_window g;
    conv_window(c, x->shape, out[0]->shape, &g);
    return run_conv(CONV_BWD_FILTER, &g, out[0]->shape[3], x, dy, out[0]);
}

/* ---- op calls ---------------------------------------------------------------------------- */

/* The attrs of a call: the convolution parameters of `like` with the
 * shape slot set to `shape` (NULL: left as is). */
static gb_attrs with_shape(const gb_attrs *like, const int64_t *shape) {
    gb_attrs a = *like;
    if (shape) memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = A_COUNT;
    return a;
}

static gb_tensor *conv_op(gb_op_id op, gb_tensor *a, gb_tensor *b, const gb_attrs *attrs) {
    gb_tensor *in[2] = {a, b};
    return gb__op1(op, in, 2, attrs);
}

static gb_tensor *backprop_input(const gb_attrs *p, const int64_t *input_shape, gb_tensor *f,
                                 gb_tensor *dy) {
    gb_attrs a = with_shape(p, input_shape);
    return conv_op(GB_OP_CONV2D_BACKPROP_INPUT, f, dy, &a);
}

static gb_tensor *backprop_filter(const gb_attrs *p, const int64_t *filter_shape, gb_tensor *x,
                                  gb_tensor *dy) {
    gb_attrs a = with_shape(p, filter_shape);
    return conv_op(GB_OP_CONV2D_BACKPROP_FILTER, x, dy, &a);
}

/* ---- gradients ---------------------------------------------------------------------------- */

/* Whether any tape could want the gradient of t: a tensor no tape ever
 * watched (input data) needs none, and skipping it saves a whole
 * backprop-input pass for a network's first layer. */
static bool wanted(const gb_tensor *t) { return t->tape_bits != 0; }

static bool grad_conv2d(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0], *f = ctx->inputs[1], *dy = ctx->dys[0];
    dx[0] = wanted(x) ? backprop_input(ctx->attrs, x->shape, f, dy) : NULL;
    dx[1] = wanted(f) ? backprop_filter(ctx->attrs, f->shape, x, dy) : NULL;
    return gb_ok();
}

/* z = BackpropInput(f, dy): dz/df is BackpropFilter(g, dy) and dz/ddy is
 * Conv2D(g, f), for the incoming gradient g of z's (input) shape. */
static bool grad_backprop_input(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *f = ctx->inputs[0], *dy = ctx->inputs[1], *g = ctx->dys[0];
    dx[0] = wanted(f) ? backprop_filter(ctx->attrs, f->shape, g, dy) : NULL;
    dx[1] = wanted(dy) ? conv_op(GB_OP_CONV2D, g, f, ctx->attrs) : NULL;
    return gb_ok();
}

/* z = BackpropFilter(x, dy): dz/dx is BackpropInput(g, dy) and dz/ddy is
 * Conv2D(x, g), for the incoming gradient g of the filter's shape. */
static bool grad_backprop_filter(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0], *dy = ctx->inputs[1], *g = ctx->dys[0];
    dx[0] = wanted(x) ? backprop_input(ctx->attrs, x->shape, g, dy) : NULL;
    dx[1] = wanted(dy) ? conv_op(GB_OP_CONV2D, x, g, ctx->attrs) : NULL;
    return gb_ok();
}

#define CONV_ATTRS_DOC                                                                        \
    "i[0], i[1] strides h, w; i[2], i[3] dilations h, w; i[4] padding (0 VALID, 1 SAME); "   \
    "i[5..8] output shape of the backprop ops"

const gb_op_def gb_opdef_conv2d = {
    .name = "Conv2D",
    .arity = 2,
    .attrs_doc = CONV_ATTRS_DOC,
    .infer = infer_conv2d,
    .kernel = kernel_conv2d,
    .grad = grad_conv2d,
};

const gb_op_def gb_opdef_conv2d_backprop_input = {
    .name = "Conv2DBackpropInput",
    .arity = 2,
    .attrs_doc = CONV_ATTRS_DOC,
    .infer = infer_backprop_input,
    .kernel = kernel_backprop_input,
    .grad = grad_backprop_input,
};

const gb_op_def gb_opdef_conv2d_backprop_filter = {
    .name = "Conv2DBackpropFilter",
    .arity = 2,
    .attrs_doc = CONV_ATTRS_DOC,
    .infer = infer_backprop_filter,
    .kernel = kernel_backprop_filter,
    .grad = grad_backprop_filter,
};

/* ---- public API ------------------------------------------------------------------------------ */

gb_tensor *gb_conv2d(gb_tensor *x, gb_tensor *filter, const int *strides, gb_padding padding,
                     const int *dilations) {
    gb_attrs a = {.ni = A_COUNT};
    a.i[A_SH] = strides ? strides[0] : 1;
    a.i[A_SW] = strides ? strides[1] : 1;
    a.i[A_DH] = dilations ? dilations[0] : 1;
    a.i[A_DW] = dilations ? dilations[1] : 1;
    a.i[A_PAD] = padding;
    return conv_op(GB_OP_CONV2D, x, filter, &a);
}
