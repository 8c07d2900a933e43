/* ops/isa/pool.c — the kernels of MaxPool, AvgPool, MaxPoolGrad and
 * AvgPoolGrad over NHWC windows (ops/pool.c has the ops), compiled once
 * per ISA level (core/isa.h).
 *
 * Every window is clipped to the image once per output pixel, so the
 * inner loops run over the C contiguous channels of one input pixel with
 * no bounds checks, and use `|`/`&` and selects rather than branches, so
 * they compile to vector blends (the build assumes no floating-point
 * traps, which lets the compiler compute both sides of a select).
 */
#include <math.h>

#include "ops/pool_kernels.h"

/* The in-bounds part [lo, hi) of the window of output index o along an axis. */
static inline void clip(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in, int64_t *lo,
                        int64_t *hi) {
    int64_t s = o * stride - pad;
    *lo = s > 0 ? s : 0;
    *hi = s + k < in ? s + k : in;
}


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
    static void max_pool_##SUFFIX(const gb_pool_job *j, int64_t n0, int64_t n1, int w) {              \
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
    static void avg_pool_##SUFFIX(const gb_pool_job *j, int64_t n0, int64_t n1, int w) {              \
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
    static void avg_pool_grad_##SUFFIX(const gb_pool_job *j, int64_t n0, int64_t n1, int w) {         \
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
    static void max_pool_grad_##SUFFIX(const gb_pool_job *j, int64_t n0, int64_t n1, int w) {         \
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

const gb_pool_table GB_ISA_SYM(gb__pool_kernels) = {{
    [GB_POOL_MAX] = {max_pool_f32, max_pool_f64},
    [GB_POOL_AVG] = {avg_pool_f32, avg_pool_f64},
    [GB_POOL_MAX_GRAD] = {max_pool_grad_f32, max_pool_grad_f64},
    [GB_POOL_AVG_GRAD] = {avg_pool_grad_f32, avg_pool_grad_f64},
}};
