/* ops/softmax_rows.h — the softmax of one contiguous row and its
 * backward, shared by Softmax, MaskedSoftmax and SoftmaxGrad (ops/softmax.c,
 * ops/masked_softmax.c) (internal).
 *
 * allow (NULL: every entry) says which entries take part: the others come
 * out exactly 0, and a row with none allowed is all 0 (not uniform, not
 * NaN). The backward is dx = y * (dy - sum(dy * y)) in one pass over the
 * row after its dot product; an entry whose y is 0 (masked) gets 0.
 */
#ifndef GB_OPS_SOFTMAX_ROWS_H
#define GB_OPS_SOFTMAX_ROWS_H

#include <stdbool.h>
#include <stdint.h>

void gb__softmax_row_f32(const float *x, const bool *allow, float *y, int64_t n);
void gb__softmax_row_f64(const double *x, const bool *allow, double *y, int64_t n);
void gb__softmax_grad_row_f32(const float *y, const float *dy, float *dx, int64_t n);
void gb__softmax_grad_row_f64(const double *y, const double *dy, double *dx, int64_t n);

#endif
