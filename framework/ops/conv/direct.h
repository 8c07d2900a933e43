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

#include "ops/conv/im2col.h"

#define GB_DIRECT_MAX_K 32

/* out[n, oh, ow, :] for images [n0, n1); x NHWC, w [KH,KW,C,OC]. */
void gb__conv_direct_f32(const gb_window *g, const float *x, const float *w, int64_t oc, int64_t n0,
                         int64_t n1, float *out);
void gb__conv_direct_f64(const gb_window *g, const double *x, const double *w, int64_t oc,
                         int64_t n0, int64_t n1, double *out);

/* dW [KH,KW,C,OC] += the filter gradient of images [n0, n1): the sum over
 * pixels of input tap x output gradient dy [N,OH,OW,OC]. */
void gb__conv_direct_filter_f32(const gb_window *g, const float *x, const float *dy, int64_t oc,
                                int64_t n0, int64_t n1, float *dw);
void gb__conv_direct_filter_f64(const gb_window *g, const double *x, const double *dy, int64_t oc,
                                int64_t n0, int64_t n1, double *dw);

#endif
