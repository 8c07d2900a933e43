/* ops/conv/run.c — running one convolution kernel call: choosing the method
 * (direct, Winograd, im2col + GEMM), splitting the batch over the worker
 * threads and giving each its scratch.
 *
 * im2col + GEMM, with the output pixels as rows and the filter viewed as
 * a [KH*KW*C, OC] matrix:
 *   forward:         out[R,OC]  = cols[R,K] . W[K,OC]
 *   input gradient:  dx         = col2im(dy[R,OC] . W^T)
 *   filter gradient: dW[K,OC]   = cols[R,K]^T . dy[R,OC]
 * The rows are processed in chunks so the scratch matrix stays around
 * CHUNK_BYTES (cache-sized, and bounded for big batches) instead of
 * growing to batch x image x kernel. A 1x1 stride-1 convolution skips
 * im2col: the input already is the matrix.
 *
 * Parts of a call are ranges of images, so they never write the same
 * memory; filter gradients are summed per worker and added at the end.
 */
#include <cblas.h>

#include "ops/conv/direct.h"
#include "ops/conv/run.h"
#include "ops/conv/winograd.h"
#include "core/parallel.h"

/* Scratch for one chunk of im2col rows. Measured on the CNN's second
 * layer: chunks of 128 to 1820 rows (144 KB to 2 MB) run the GEMMs at the
 * same speed, 3640 rows 5-10% slower; whole-batch products 2x slower. */
#define CHUNK_BYTES (1 << 20)

/* One kernel call, split over images: each part handles images
 * [n0, n1), i.e. output rows [n0*OH*OW, n1*OH*OW), in chunks of `step`
 * rows with its own scratch. Parts never write the same memory: col2im
 * only touches the part's own images, and filter gradients go to one
 * partial sum per worker, added up at the end. */
typedef struct conv_job {
    gb_window g;
    int64_t oc, step;
    const void *a, *b; /* (x, W), (W, dy) or (x, dy) */
    void *out;
    void *scratch; /* per worker: step * K values, then K * OC partial sums */
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

/* Row-major GEMM C = A' B' (+ C when accumulate) on one dtype, C being
 * m x n contiguous. OpenBLAS clears C for beta 0 in a pass slower than
 * memset (20% of a short-K product), so C is cleared here and beta is 1. */
#define DEFINE_CONV_KERNELS(T, SUFFIX, BLAS)                                                       \
    static void gemm_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *A,       \
                              int64_t lda, const T *B, int64_t ldb, bool accumulate, T *C) {       \
        if (!accumulate) memset(C, 0, (size_t)(m * n) * sizeof(T));                                \
        BLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,        \
             (int)m, (int)n, (int)k, 1, A, (int)lda, B, (int)ldb, 1, C, (int)n);                   \
    }                                                                                              \
    /* out[R,OC] = im2col(x) . W */                                                                \
    static void conv_fwd_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {              \
        const T *x = j->a, *wt = j->b;                                                             \
        T *out = j->out;                                                                           \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                            \
        if (gb__window_is_pointwise(&j->g)) {                                                      \
            gemm_##SUFFIX(false, false, r1 - r0, oc, K, x + r0 * K, K, wt, oc, false,              \
                          out + r0 * oc);                                                          \
            return;                                                                                \
        }                                                                                          \
        T *cols = worker_cols(j, w, sizeof(T));                                                    \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                            \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                    \
            gb__im2col_##SUFFIX(&j->g, x, c0, c1, cols);                                           \
            gemm_##SUFFIX(false, false, c1 - c0, oc, K, cols, K, wt, oc, false, out + c0 * oc);    \
        }                                                                                          \
    }                                                                                              \
    /* dx = col2im(dy[R,OC] . W^T) */                                                              \
    static void conv_bwd_input_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {        \
        const T *wt = j->a, *dy = j->b;                                                            \
        T *dx = j->out;                                                                            \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                            \
        if (gb__window_is_pointwise(&j->g)) {                                                      \
            gemm_##SUFFIX(false, true, r1 - r0, K, oc, dy + r0 * oc, oc, wt, oc, false,            \
                          dx + r0 * K);                                                            \
            return;                                                                                \
        }                                                                                          \
        int64_t img = j->g.h * j->g.w * j->g.c, per = j->g.oh * j->g.ow;                           \
        memset(dx + r0 / per * img, 0, (size_t)((r1 - r0) / per * img) * sizeof(T));               \
        T *dcols = worker_cols(j, w, sizeof(T));                                                   \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                            \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                    \
            gemm_##SUFFIX(false, true, c1 - c0, K, oc, dy + c0 * oc, oc, wt, oc, false, dcols);    \
            gb__col2im_##SUFFIX(&j->g, dcols, c0, c1, dx);                                         \
        }                                                                                          \
    }                                                                                              \
    /* worker w's partial dW[K,OC] += im2col(x)^T . dy over rows [r0, r1) */                       \
    static void conv_bwd_filter_##SUFFIX(const conv_job *j, int64_t r0, int64_t r1, int w) {       \
        const T *x = j->a, *dy = j->b;                                                             \
        int64_t K = gb__window_cols(&j->g), oc = j->oc;                                            \
        T *cols = worker_cols(j, w, sizeof(T)), *dw = worker_partial(j, w, sizeof(T));             \
        if (gb__window_is_pointwise(&j->g)) {                                                      \
            gemm_##SUFFIX(true, false, K, oc, r1 - r0, x + r0 * K, K, dy + r0 * oc, oc, true, dw); \
            return;                                                                                \
        }                                                                                          \
        for (int64_t c0 = r0; c0 < r1; c0 += j->step) {                                            \
            int64_t c1 = c0 + j->step < r1 ? c0 + j->step : r1;                                    \
            gb__im2col_##SUFFIX(&j->g, x, c0, c1, cols);                                           \
            gemm_##SUFFIX(true, false, K, oc, c1 - c0, cols, K, dy + c0 * oc, oc, true, dw);       \
        }                                                                                          \
    }                                                                                              \
    /* out = the sum of the partial filter gradients of workers [0, used) */                       \
    static void sum_partials_##SUFFIX(const conv_job *j, int used) {                               \
        int64_t n = gb__window_cols(&j->g) * j->oc;                                                \
        T *dw = j->out;                                                                            \
        memcpy(dw, worker_partial(j, 0, sizeof(T)), (size_t)n * sizeof(T));                        \
        for (int p = 1; p < used; p++) {                                                           \
            const T *part = worker_partial(j, p, sizeof(T));                                       \
            for (int64_t i = 0; i < n; i++) dw[i] += part[i];                                      \
        }                                                                                          \
    }
DEFINE_CONV_KERNELS(float, f32, cblas_sgemm)
DEFINE_CONV_KERNELS(double, f64, cblas_dgemm)

typedef enum conv_method { BY_IM2COL, BY_DIRECT, BY_WINOGRAD } conv_method;

typedef struct conv_task {
    conv_job job;
    gb_conv_kind kind;
    conv_method method;
    bool f64;
    gb_wino wino; /* BY_WINOGRAD: the plan */
    void *shared; /* BY_WINOGRAD: the transformed filter, or per-worker partial sums */
} conv_task;

/* What each kind of call is to the Winograd code. */
static const gb_wino_use wino_use[] = {[GB_CONV_FORWARD] = GB_WINO_FORWARD,
                                       [GB_CONV_INPUT_GRAD] = GB_WINO_INPUT_GRAD,
                                       [GB_CONV_FILTER_GRAD] = GB_WINO_FILTER_GRAD};

/* The fastest method for the call: direct for small windows (not for the
 * input gradient, whose "window" spans the output channels), Winograd for
 * 3x3 stride-1 windows deep enough, else im2col + GEMM. */
static conv_method choose_method(gb_conv_kind kind, const gb_window *g, int64_t oc) {
    if (kind != GB_CONV_INPUT_GRAD && gb__window_cols(g) <= GB_DIRECT_MAX_K) return BY_DIRECT;
    if (gb__wino_use(g, oc, wino_use[kind])) return BY_WINOGRAD;
    return BY_IM2COL;
}

static void range_direct(const conv_task *t, int64_t n0, int64_t n1, int w) {
    const conv_job *j = &t->job;
    if (t->kind == GB_CONV_FORWARD) {
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
    if (t->kind == GB_CONV_FILTER_GRAD) {
        void *s = (char *)t->shared + (size_t)(w * gb__wino_filter_elems(&t->wino)) * elem;
        if (t->f64)
            gb__wino_filter_grad_f64(&t->wino, j->a, j->b, n0, n1, s, scratch);
        else
            gb__wino_filter_grad_f32(&t->wino, j->a, j->b, n0, n1, s, scratch);
        return;
    }
    const void *x = t->kind == GB_CONV_FORWARD ? j->a : j->b; /* forward: x; input grad: dy */
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
    case GB_CONV_FORWARD: (t->f64 ? conv_fwd_f64 : conv_fwd_f32)(&t->job, r0, r1, w); break;
    case GB_CONV_INPUT_GRAD:
        (t->f64 ? conv_bwd_input_f64 : conv_bwd_input_f32)(&t->job, r0, r1, w);
        break;
    case GB_CONV_FILTER_GRAD:
        (t->f64 ? conv_bwd_filter_f64 : conv_bwd_filter_f32)(&t->job, r0, r1, w);
        break;
    }
}

/* Sets up the Winograd plan and shared buffers: the transformed filter
 * (forward, input gradient) or one partial sum per worker (filter grad). */
static bool prepare_winograd(conv_task *t, int workers) {
    const conv_job *j = &t->job;
    size_t elem = t->f64 ? 8 : 4;
    t->wino = gb__wino_plan(&j->g, j->oc, wino_use[t->kind]);
    int64_t filter = gb__wino_filter_elems(&t->wino);
    t->shared = gb__scope_alloc((size_t)(t->kind == GB_CONV_FILTER_GRAD ? workers : 1) *
                                (size_t)filter * elem);
    if (!t->shared) return false;
    if (t->kind == GB_CONV_FILTER_GRAD) return true;
    const void *w = t->kind == GB_CONV_FORWARD ? j->b : j->a;
    bool flip = t->kind == GB_CONV_INPUT_GRAD;
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

bool gb__conv_run(gb_conv_kind kind, const gb_window *g, int64_t oc, const gb_tensor *a,
                  const gb_tensor *b, gb_tensor *out) {
    int64_t R = gb__window_rows(g), K = gb__window_cols(g);
    if (R == 0 || K == 0 || oc == 0) {
        /* empty products never reach BLAS, which rejects leading dimension 0 */
        memset(out->data, 0, (size_t)out->size * gb_dtype_size(out->dtype));
        return true;
    }
    size_t elem = gb_dtype_size(out->dtype);
    conv_task t = {.job = {.g = *g,
                           .oc = oc,
                           .step = chunk_rows(g, elem),
                           .a = a->data,
                           .b = b->data,
                           .out = out->data},
                   .kind = kind,
                   .method = choose_method(kind, g, oc),
                   .f64 = out->dtype == GB_F64};
    int workers = gb__parallel_workers();
    if (t.method == BY_WINOGRAD && !prepare_winograd(&t, workers)) return false;
    size_t each = t.method == BY_WINOGRAD ? (size_t)gb__wino_worker_elems(&t.wino)
                                          : (size_t)(t.job.step * K + K * oc);
    t.job.scratch = gb__scope_alloc((size_t)workers * each * elem);
    if (!t.job.scratch) return false;
    if (kind == GB_CONV_FILTER_GRAD) zero_partials(&t, workers);
    int64_t macs_per_image = g->oh * g->ow * K * oc;
    int64_t grain = (PARALLEL_MIN_MACS + macs_per_image - 1) / macs_per_image;
    int used = gb__parallel_for(g->n, grain, conv_range, &t);
    if (kind == GB_CONV_FILTER_GRAD && t.method == BY_WINOGRAD) {
        finish_winograd_filter(&t, used);
    } else if (kind == GB_CONV_FILTER_GRAD) {
        (t.f64 ? sum_partials_f64 : sum_partials_f32)(&t.job, used);
    }
    return true;
}
