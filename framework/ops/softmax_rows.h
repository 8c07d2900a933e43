/* ops/softmax_rows.h — the softmax of one contiguous row and its
 * backward, shared by Softmax, MaskedSoftmax and SoftmaxGrad (ops/softmax.c,
 * ops/masked_softmax.c); compiled once per ISA level
 * (ops/isa/softmax_rows.c, core/isa.h) (internal).
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

#include "core/isa.h"

GB_ISA_DECLARE_FN(void, gb__softmax_row_f32, (const float *x, const bool *allow, float *y, int64_t n));
GB_ISA_DECLARE_FN(void, gb__softmax_row_f64, (const double *x, const bool *allow, double *y, int64_t n));
GB_ISA_DECLARE_FN(void, gb__softmax_grad_row_f32, (const float *y, const float *dy, float *dx, int64_t n));
GB_ISA_DECLARE_FN(void, gb__softmax_grad_row_f64, (const double *y, const double *dy, double *dx, int64_t n));

static inline void gb__softmax_row_f32(const float *x, const bool *allow, float *y, int64_t n) {
    GB_ISA_CALL(gb__softmax_row_f32, x, allow, y, n);
}
static inline void gb__softmax_row_f64(const double *x, const bool *allow, double *y, int64_t n) {
    GB_ISA_CALL(gb__softmax_row_f64, x, allow, y, n);
}
static inline void gb__softmax_grad_row_f32(const float *y, const float *dy, float *dx, int64_t n) {
    GB_ISA_CALL(gb__softmax_grad_row_f32, y, dy, dx, n);
}
static inline void gb__softmax_grad_row_f64(const double *y, const double *dy, double *dx, int64_t n) {
    GB_ISA_CALL(gb__softmax_grad_row_f64, y, dy, dx, n);
}

#endif
