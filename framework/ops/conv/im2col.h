/* ops/conv/im2col.h — window geometry and im2col/col2im for NHWC convolution
 * and pooling (internal to the framework).
 *
 * A sliding window over [N,H,W,C] with kernel KHxKW, strides, dilations and
 * TensorFlow's SAME/VALID padding. Output size and padding split follow
 * TF exactly:
 *   VALID: out = (in - eff) / stride + 1, eff = (k - 1) * dilation + 1
 *   SAME:  out = ceil(in / stride),
 *          pad_total = max((out - 1) * stride + eff - in, 0),
 *          pad_before = pad_total / 2 (the extra row/column goes after).
 *
 * im2col lays out, for output pixels (flat over n, oh, ow) in [r0, r1),
 * one row of KH*KW*C values per pixel ([kh][kw][c], zeros where the window
 * hangs over the padding), so that convolution is one GEMM of those rows
 * with the filter viewed as [KH*KW*C, OC]. col2im is its adjoint: it adds
 * such rows back into an NHWC image.
 */
#ifndef GB_CONV_IM2COL_H
#define GB_CONV_IM2COL_H

#include "ops/internal.h"

typedef struct gb_window {
    int64_t n, h, w, c; /* input */
    int64_t kh, kw;     /* window */
    int64_t sh, sw;     /* strides */
    int64_t dh, dw;     /* dilations (1 for pooling) */
    int padding;        /* GB_PADDING_VALID / GB_PADDING_SAME */
    int64_t oh, ow;     /* output, computed */
    int64_t pt, pl;     /* padding before (top, left), computed */
} gb_window;

/* Validates kernel, strides, dilations and padding, and computes the
 * output size and padding; false after an error naming the op. */
bool gb__window_init(const gb_op_call *c, gb_window *g);

/* Number of output pixels (rows of the im2col matrix). */
static inline int64_t gb__window_rows(const gb_window *g) { return g->n * g->oh * g->ow; }
/* Length of one im2col row. */
static inline int64_t gb__window_cols(const gb_window *g) { return g->kh * g->kw * g->c; }

/* Reads a public {h, w} list argument (strides, dilations, window size)
 * the way TensorFlow takes it: 1 value for both axes, 2 for {h, w}, or 4
 * in NHWC form {1, h, w, 1}. An empty list (n 0) gives dflt, or is an
 * error when dflt is NULL (a required list). false after an error naming
 * the op and `what`; the values themselves are checked by gb__window_init. */
bool gb__window_pair(gb_op_id op, const char *what, const int64_t *v, int n, const int64_t *dflt,
                     int64_t out[2]);

/* The 4-d shape attribute `attr` of a backprop op (the shape it produces:
 * the input's, or the filter's), checked into s. With batch_from, its batch may be -1: the
 * gradient of a batch of unknown size (in a traced function) has
 * batch_from's batch. false after an error naming the op and `what`. */
bool gb__window_shape_attr(const gb_op_call *c, const int64_t *attr, const char *what,
                           const gb_tensor *batch_from, int64_t s[4]);

/* Whether im2col would be the identity (1x1 window, stride 1, no padding):
 * then the input itself is the matrix. */
bool gb__window_is_pointwise(const gb_window *g);

void gb__im2col_f32(const gb_window *g, const float *x, int64_t r0, int64_t r1, float *cols);
void gb__im2col_f64(const gb_window *g, const double *x, int64_t r0, int64_t r1, double *cols);
/* dx (NHWC, already initialized) += the adjoint of im2col of rows [r0, r1). */
void gb__col2im_f32(const gb_window *g, const float *cols, int64_t r0, int64_t r1, float *dx);
void gb__col2im_f64(const gb_window *g, const double *cols, int64_t r0, int64_t r1, double *dx);

#endif
