/* ops/conv/winograd.h — Winograd F(2x2, 3x3) convolution (internal).
 *
 * For 3x3 windows with stride 1 and no dilation, each 2x2 block of outputs
 * needs 16 multiplications per (input, output) channel pair instead of 36:
 * the 4x4 input tile d and the filter g are transformed,
 *     V = B^T d B,  U = G g G^T,  Y = A^T (U .* V) A,
 * and the 16 element-wise products summed over input channels become 16
 * GEMMs [tiles, Cin] x [Cin, Cout]. The filter gradient uses the same
 * tiles: dW = G^T (sum over tiles of V .* (A dY A^T)) G, 16 GEMMs
 * [Cin, tiles] x [tiles, Cout]. The input gradient is a Winograd
 * correlation of dy with the flipped, transposed filter.
 *
 * OpenBLAS runs the short-K GEMMs at half the speed of long ones, so the
 * saving pays only when the GEMM depth is large enough (gb__wino_use).
 * Results differ from im2col's by rounding only (float32: ~1e-6 relative).
 */
#ifndef GB_CONV_WINOGRAD_H
#define GB_CONV_WINOGRAD_H

#include "core/isa.h"
#include "ops/conv/im2col.h"

/* A correlation of X [n, ih, iw, ci] with a 3x3 filter (stride 1) into
 * Y [n, oh, ow, co]; the window of output (y, x) starts at input
 * (y - pt, x - pl), taps outside X reading zero. */
typedef struct gb_wino {
    int64_t n, ih, iw, ci, oh, ow, co;
    int64_t pt, pl;
    int64_t th, tw; /* 2x2 output tiles per image: ceil(oh/2), ceil(ow/2) */
    int64_t chunk;  /* tiles per GEMM batch */
} gb_wino;

typedef enum gb_wino_use { GB_WINO_FORWARD, GB_WINO_INPUT_GRAD, GB_WINO_FILTER_GRAD } gb_wino_use;

/* Whether the Winograd path is applicable to g and faster for this use. */
bool gb__wino_use(const gb_window *g, int64_t oc, gb_wino_use use);

/* The plan of a use: forward and filter gradient tile x -> (oh, ow);
 * the input gradient tiles dy -> (h, w) with the flipped filter. */
gb_wino gb__wino_plan(const gb_window *g, int64_t oc, gb_wino_use use);

/* Scratch values one worker needs (per call: plus gb__wino_shared_elems). */
int64_t gb__wino_worker_elems(const gb_wino *p);
/* The transformed filter [16][ci][co] (forward / input grad), or the
 * 16 partial sums of the filter gradient. */
int64_t gb__wino_filter_elems(const gb_wino *p);

/* The kernels (ops/conv/isa/winograd.c) at every ISA level (core/isa.h). */
#define GB_WINO_FILTER(T) (const T *w, int64_t c, int64_t oc, bool flip, T *u)
#define GB_WINO_CONV(T)                                                                            \
    (const gb_wino *p, const T *x, const T *u, int64_t n0, int64_t n1, T *y, T *scratch)
#define GB_WINO_FILTER_GRAD(T)                                                                     \
    (const gb_wino *p, const T *x, const T *dy, int64_t n0, int64_t n1, T *s, T *scratch)
#define GB_WINO_FILTER_FINISH(T) (const gb_wino *p, const T *s, T *dw)
GB_ISA_DECLARE_FN(void, gb__wino_filter_f32, GB_WINO_FILTER(float));
GB_ISA_DECLARE_FN(void, gb__wino_filter_f64, GB_WINO_FILTER(double));
GB_ISA_DECLARE_FN(void, gb__wino_conv_f32, GB_WINO_CONV(float));
GB_ISA_DECLARE_FN(void, gb__wino_conv_f64, GB_WINO_CONV(double));
GB_ISA_DECLARE_FN(void, gb__wino_filter_grad_f32, GB_WINO_FILTER_GRAD(float));
GB_ISA_DECLARE_FN(void, gb__wino_filter_grad_f64, GB_WINO_FILTER_GRAD(double));
GB_ISA_DECLARE_FN(void, gb__wino_filter_finish_f32, GB_WINO_FILTER_FINISH(float));
GB_ISA_DECLARE_FN(void, gb__wino_filter_finish_f64, GB_WINO_FILTER_FINISH(double));

/* U [16][ci][co] from w [3,3,C,OC]; `flip` builds the input-gradient
 * filter: ci = OC, co = C, taps mirrored. */
static inline void gb__wino_filter_f32 GB_WINO_FILTER(float) {
    GB_ISA_CALL(gb__wino_filter_f32, w, c, oc, flip, u);
}
static inline void gb__wino_filter_f64 GB_WINO_FILTER(double) {
    GB_ISA_CALL(gb__wino_filter_f64, w, c, oc, flip, u);
}

/* Y of images [n0, n1) from X and U, with one worker's scratch. */
static inline void gb__wino_conv_f32 GB_WINO_CONV(float) {
    GB_ISA_CALL(gb__wino_conv_f32, p, x, u, n0, n1, y, scratch);
}
static inline void gb__wino_conv_f64 GB_WINO_CONV(double) {
    GB_ISA_CALL(gb__wino_conv_f64, p, x, u, n0, n1, y, scratch);
}

/* s [16][ci][co] += the 16 partial sums of the filter gradient over
 * images [n0, n1) of x and dy, with one worker's scratch. */
static inline void gb__wino_filter_grad_f32 GB_WINO_FILTER_GRAD(float) {
    GB_ISA_CALL(gb__wino_filter_grad_f32, p, x, dy, n0, n1, s, scratch);
}
static inline void gb__wino_filter_grad_f64 GB_WINO_FILTER_GRAD(double) {
    GB_ISA_CALL(gb__wino_filter_grad_f64, p, x, dy, n0, n1, s, scratch);
}

/* dw [3,3,ci,co] = G^T s G from the summed partial sums. */
static inline void gb__wino_filter_finish_f32 GB_WINO_FILTER_FINISH(float) {
    GB_ISA_CALL(gb__wino_filter_finish_f32, p, s, dw);
}
static inline void gb__wino_filter_finish_f64 GB_WINO_FILTER_FINISH(double) {
    GB_ISA_CALL(gb__wino_filter_finish_f64, p, s, dw);
}

#endif
