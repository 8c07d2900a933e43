/* ops/conv/isa/direct.c — direct Conv2D for small windows (see
 * ops/conv/direct.h), compiled once per ISA level (core/isa.h).
 *
 * For each output pixel the taps that fall inside the image are found
 * once (no per-element bounds checks); the output channels are computed
 * in blocks of four 32-byte vectors, then one, then single lanes, the
 * block's accumulators living in registers while every tap's input value
 * is broadcast against a row of the filter.
 */
/* Let GCC fuse the multiply-adds into FMA instructions (ISO C mode
 * otherwise forbids contracting a * b + c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "core/isa.h"
#include "ops/conv/direct.h"

/* ceil(a / d) for a >= 0, d >= 1, without forming a + d - 1 (a dilation
 * or stride near 2^63 from a loaded graph would overflow it). */
static inline int64_t ceil_div(int64_t a, int64_t d) { return a / d + (a % d != 0); }

/* The taps [lo, hi) of a window along one axis that land inside [0, in),
 * for the window starting at `base` (= o * stride - pad). */
static inline void tap_range(int64_t base, int64_t d, int64_t k, int64_t in, int64_t *lo,
                             int64_t *hi) {
    if (d == 1) {
        *lo = base >= 0 ? 0 : -base;
        *hi = in - base < k ? in - base : k;
    } else {
        *lo = base >= 0 ? 0 : ceil_div(-base, d);
        *hi = in - base <= 0 ? 0 : ceil_div(in - base, d);
        if (*hi > k) *hi = k;
    }
    if (*hi < *lo) *hi = *lo;
}

/* 32-byte vectors (GCC/Clang vector extensions) that may sit anywhere a
 * float/double may: the output-channel accumulators stay in registers,
 * which arrays indexed in a loop nest do not. */
typedef float vec_f32 __attribute__((vector_size(32), aligned(sizeof(float)), may_alias));
typedef double vec_f64 __attribute__((vector_size(32), aligned(sizeof(double)), may_alias));

/* For every block of NV vectors of output channels that still fits at ob:
 * sum over the in-image taps and channels, then store; advances ob. */
#define DIRECT_BLOCK(T, V, NV)                                                                     \
    for (; ob + (NV)*VL <= oc; ob += (NV)*VL) {                                                    \
        V acc[NV];                                                                                 \
        for (int v = 0; v < (NV); v++) acc[v] = (V){0};                                            \
        for (int64_t kh = kh0; kh < kh1; kh++) {                                                   \
            int64_t ih = bh + kh * g->dh;                                                          \
            for (int64_t kw = kw0; kw < kw1; kw++) {                                               \
                int64_t iw = bw + kw * g->dw;                                                      \
                const T *src = x + ((n * g->h + ih) * g->w + iw) * C;                              \
                const T *wr = w + (kh * g->kw + kw) * C * oc + ob;                                 \
                for (int64_t c = 0; c < C; c++) {                                                  \
                    T a = src[c];                                                                  \
                    const V *wc = (const V *)(wr + c * oc);                                        \
                    for (int v = 0; v < (NV); v++) acc[v] += a * wc[v];                            \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int v = 0; v < (NV); v++) ((V *)(o + ob))[v] = acc[v];                                \
    }

/* The last oc % VL channels, one at a time. */
#define DIRECT_TAIL(T)                                                                             \
    for (; ob < oc; ob++) {                                                                        \
        T acc = 0;                                                                                 \
        for (int64_t kh = kh0; kh < kh1; kh++)                                                     \
            for (int64_t kw = kw0; kw < kw1; kw++) {                                               \
                const T *src = x + ((n * g->h + bh + kh * g->dh) * g->w + bw + kw * g->dw) * C;    \
                const T *wr = w + (kh * g->kw + kw) * C * oc + ob;                                 \
                for (int64_t c = 0; c < C; c++) acc += src[c] * wr[c * oc];                        \
            }                                                                                      \
        o[ob] = acc;                                                                               \
    }

#define DEFINE_DIRECT(T, V, SUFFIX)                                                                \
    void GB_ISA_SYM(gb__conv_direct_##SUFFIX)(const gb_window *g, const T *x, const T *w,          \
                                              int64_t oc, int64_t n0, int64_t n1, T *out) {        \
        const int64_t C = g->c, VL = (int64_t)(sizeof(V) / sizeof(T));                             \
        for (int64_t n = n0; n < n1; n++)                                                          \
            for (int64_t oh = 0; oh < g->oh; oh++) {                                               \
                int64_t bh = oh * g->sh - g->pt, kh0, kh1;                                         \
                tap_range(bh, g->dh, g->kh, g->h, &kh0, &kh1);                                     \
                for (int64_t ow = 0; ow < g->ow; ow++) {                                           \
                    int64_t bw = ow * g->sw - g->pl, kw0, kw1;                                     \
                    tap_range(bw, g->dw, g->kw, g->w, &kw0, &kw1);                                 \
                    T *o = out + ((n * g->oh + oh) * g->ow + ow) * oc;                             \
                    int64_t ob = 0;                                                                \
                    DIRECT_BLOCK(T, V, 4)                                                          \
                    DIRECT_BLOCK(T, V, 1)                                                          \
                    DIRECT_TAIL(T)                                                                 \
                }                                                                                  \
            }                                                                                      \
    }
DEFINE_DIRECT(float, vec_f32, f32)
DEFINE_DIRECT(double, vec_f64, f64)

/* ---- filter gradient -------------------------------------------------------------- */

/* The output positions [lo, hi) along one axis whose tap `k` lands inside
 * [0, in): o * s - pad + k * d in [0, in). */
static inline void out_range(int64_t k, int64_t s, int64_t pad, int64_t d, int64_t in, int64_t out,
                             int64_t *lo, int64_t *hi) {
    int64_t off = k * d - pad; /* o * s + off must be in [0, in) */
    *lo = off >= 0 ? 0 : ceil_div(-off, s);
    *hi = in - off <= 0 ? 0 : ceil_div(in - off, s);
    if (*hi > out) *hi = out;
    if (*hi < *lo) *hi = *lo;
}

/* dW[t, c, ob .. ob + NV*VL) += sum over the image's valid pixels of
 * x_tap * dy[pixel, ob ..], for every block of NV vectors that fits. */
#define FILTER_BLOCK(T, V, NV)                                                                     \
    for (; ob + (NV)*VL <= oc; ob += (NV)*VL) {                                                    \
        V *dst = (V *)(dw + (t * C + c) * oc + ob), acc[NV];                                       \
        for (int v = 0; v < (NV); v++) acc[v] = dst[v];                                            \
        for (int64_t oh = oh0; oh < oh1; oh++) {                                                   \
            const T *xr = x + ((n * g->h + oh * g->sh + offh) * g->w) * C + c;                     \
            const T *dr = dy + (n * g->oh + oh) * g->ow * oc + ob;                                 \
            for (int64_t ow = ow0; ow < ow1; ow++) {                                               \
                T a = xr[(ow * g->sw + offw) * C];                                                 \
                const V *d = (const V *)(dr + ow * oc);                                            \
                for (int v = 0; v < (NV); v++) acc[v] += a * d[v];                                 \
            }                                                                                      \
        }                                                                                          \
        for (int v = 0; v < (NV); v++) dst[v] = acc[v];                                            \
    }

#define FILTER_TAIL(T)                                                                             \
    for (; ob < oc; ob++) {                                                                        \
        T acc = 0;                                                                                 \
        for (int64_t oh = oh0; oh < oh1; oh++)                                                     \
            for (int64_t ow = ow0; ow < ow1; ow++)                                                 \
                acc += x[((n * g->h + oh * g->sh + offh) * g->w + ow * g->sw + offw) * C + c] *    \
                       dy[((n * g->oh + oh) * g->ow + ow) * oc + ob];                              \
        dw[(t * C + c) * oc + ob] += acc;                                                          \
    }

/* Per image, per tap: the tap sees a rectangle of output pixels (the rest
 * falls into padding), so the inner loop is bounds-free; dy of one image
 * stays in cache across the taps. */
#define DEFINE_DIRECT_FILTER(T, V, SUFFIX)                                                         \
    void GB_ISA_SYM(gb__conv_direct_filter_##SUFFIX)(const gb_window *g, const T *x,               \
                                                     const T *dy, int64_t oc, int64_t n0,          \
                                                     int64_t n1, T *dw) {                          \
        const int64_t C = g->c, VL = (int64_t)(sizeof(V) / sizeof(T));                             \
        for (int64_t n = n0; n < n1; n++)                                                          \
            for (int64_t kh = 0; kh < g->kh; kh++) {                                               \
                int64_t oh0, oh1, offh = kh * g->dh - g->pt;                                       \
                out_range(kh, g->sh, g->pt, g->dh, g->h, g->oh, &oh0, &oh1);                       \
                for (int64_t kw = 0; kw < g->kw; kw++) {                                           \
                    int64_t ow0, ow1, offw = kw * g->dw - g->pl, t = kh * g->kw + kw;              \
                    out_range(kw, g->sw, g->pl, g->dw, g->w, g->ow, &ow0, &ow1);                   \
                    for (int64_t c = 0; c < C; c++) {                                              \
                        int64_t ob = 0;                                                            \
                        FILTER_BLOCK(T, V, 4)                                                      \
                        FILTER_BLOCK(T, V, 1)                                                      \
                        FILTER_TAIL(T)                                                             \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
    }
DEFINE_DIRECT_FILTER(float, vec_f32, f32)
DEFINE_DIRECT_FILTER(double, vec_f64, f64)
