/* ops/conv/direct.h — direct Conv2D for small windows (internal).
 *
 * When a window holds few values (KH*KW*C <= GB_DIRECT_MAX_K, as in a
 * network's first layer on 1- or 3-channel images), im2col + GEMM is
 * dominated by copying 3-value runs and by BLAS's own passes over the
 * output; a direct loop with the output channels in vector registers is
 * several times faster. The same holds for the filter gradient.
 */
#ifndef GB_CONV_DIRECT_H
#define GB_CONV_DIRECT_H

#include "core/isa.h"
#include "ops/conv/im2col.h"

#define GB_DIRECT_MAX_K 32

/* The kernels (ops/conv/isa/direct.c) at every ISA level (core/isa.h). */
#define GB_DIRECT_FORWARD(T)                                                                       \
    (const gb_window *g, const T *x, const T *w, int64_t oc, int64_t n0, int64_t n1, T *out)
#define GB_DIRECT_FILTER(T)                                                                        \
    (const gb_window *g, const T *x, const T *dy, int64_t oc, int64_t n0, int64_t n1, T *dw)
GB_ISA_DECLARE_FN(void, gb__conv_direct_f32, GB_DIRECT_FORWARD(float));
GB_ISA_DECLARE_FN(void, gb__conv_direct_f64, GB_DIRECT_FORWARD(double));
GB_ISA_DECLARE_FN(void, gb__conv_direct_filter_f32, GB_DIRECT_FILTER(float));
GB_ISA_DECLARE_FN(void, gb__conv_direct_filter_f64, GB_DIRECT_FILTER(double));

/* out[n, oh, ow, :] for images [n0, n1); x NHWC, w [KH,KW,C,OC]. */
static inline void gb__conv_direct_f32 GB_DIRECT_FORWARD(float) {
    GB_ISA_CALL(gb__conv_direct_f32, g, x, w, oc, n0, n1, out);
}
static inline void gb__conv_direct_f64 GB_DIRECT_FORWARD(double) {
    GB_ISA_CALL(gb__conv_direct_f64, g, x, w, oc, n0, n1, out);
}

/* dW [KH,KW,C,OC] += the filter gradient of images [n0, n1): the sum over
 * pixels of input tap x output gradient dy [N,OH,OW,OC]. */
static inline void gb__conv_direct_filter_f32 GB_DIRECT_FILTER(float) {
    GB_ISA_CALL(gb__conv_direct_filter_f32, g, x, dy, oc, n0, n1, dw);
}
static inline void gb__conv_direct_filter_f64 GB_DIRECT_FILTER(double) {
    GB_ISA_CALL(gb__conv_direct_filter_f64, g, x, dy, oc, n0, n1, dw);
}

#endif
