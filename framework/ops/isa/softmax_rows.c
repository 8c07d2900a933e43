/* ops/isa/softmax_rows.c — the softmax of one contiguous row (all of it,
 * or the entries a mask allows) and its backward (ops/softmax_rows.h),
 * compiled once per ISA level (core/isa.h): an attention layer's scores
 * are the step's largest tensors, and at x86-64-v2 the exp of a row ran
 * four floats at a time.
 *
 * Each level computes the same expressions in the same order, and gives
 * the same bits (test_ops_isa): the sums are in the same 16 lanes at every
 * level, and float32's exp (ops/fast_math.h) rounds its multiply-adds
 * twice even where the CPU has FMA. A softmax ends in the loss, and with
 * FMA at v3 and v4 alone a training's course depended on the machine:
 * nan_hunt's first -Inf came with 11 entries on x86-64-v2 and 7 on v3
 * and v4, and the README shows one run. The FMA saved one instruction of
 * about twenty per exp.
 */
#include <math.h>

#define GB_FAST_MATH_SAME_AT_EVERY_LEVEL
#include "ops/fast_math.h"
#include "ops/lane_sum.h"
#include "ops/softmax_rows.h"

/* The maximum of a contiguous row, in LANES running partials combined at
 * the end, as its sum (ops/lane_sum.h): one running max is a chain of
 * dependent operations that would stay scalar. A NaN is skipped by the
 * max as by the one-accumulator loop (x > m is false). */
enum { LANES = 16 };
#define DEFINE_ROW_REDUCTIONS(T, SUFFIX)                                                           \
    static T row_max_##SUFFIX(const T *x, int64_t n) {                                             \
        T lane[LANES], m = -INFINITY;                                                              \
        for (int l = 0; l < LANES; l++) lane[l] = -INFINITY;                                       \
        int64_t j = 0;                                                                             \
        for (; j + LANES <= n; j += LANES)                                                         \
            for (int l = 0; l < LANES; l++) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];     \
        for (int l = 0; l < LANES; l++) m = lane[l] > m ? lane[l] : m;                             \
        for (; j < n; j++) m = x[j] > m ? x[j] : m;                                                \
        return m;                                                                                  \
    }
DEFINE_ROW_REDUCTIONS(float, f32)
DEFINE_ROW_REDUCTIONS(double, f64)

#define DEFINE_SOFTMAX_ROWS(T, SUFFIX, EXP_CONTIGUOUS)                                             \
    /* A contiguous row over the entries allowed (ops/softmax_rows.h). A                           \
     * masked row is first copied with -inf for the masked entries (whose                          \
     * exp is then exactly 0): every loop is a plain select or the unmasked                        \
     * row's, so each vectorizes (bools tested inside the max and exp loops                        \
     * kept them scalar, at twice the unmasked row's time). */                                     \
    void GB_ISA_SYM(gb__softmax_row_##SUFFIX)(const T *x, const bool *allow, T *y, int64_t n) {    \
        if (allow) {                                                                               \
            unsigned char any = 0;                                                                 \
            for (int64_t j = 0; j < n; j++) any |= (unsigned char)allow[j];                        \
            for (int64_t j = 0; j < n; j++) y[j] = allow[j] ? x[j] : -(T)INFINITY;                 \
            if (!any) {                                                                            \
                for (int64_t j = 0; j < n; j++) y[j] = 0;                                          \
                return;                                                                            \
            }                                                                                      \
            x = y;                                                                                 \
        }                                                                                          \
        T m = row_max_##SUFFIX(x, n);                                                              \
        for (int64_t j = 0; j < n; j++) y[j] = EXP_CONTIGUOUS(x[j] - m);                           \
        T inv = 1 / gb__lane_sum_##SUFFIX(y, n);                                                        \
        for (int64_t j = 0; j < n; j++) y[j] *= inv;                                               \
    }                                                                                              \
    void GB_ISA_SYM(gb__softmax_grad_row_##SUFFIX)(const T *y, const T *dy, T *dx, int64_t n) {    \
        T lane[LANES] = {0}, dot = 0;                                                              \
        int64_t j = 0;                                                                             \
        for (; j + LANES <= n; j += LANES)                                                         \
            for (int l = 0; l < LANES; l++) lane[l] += dy[j + l] * y[j + l];                       \
        for (int l = 0; l < LANES; l++) dot += lane[l];                                            \
        for (; j < n; j++) dot += dy[j] * y[j];                                                    \
        for (j = 0; j < n; j++) dx[j] = y[j] * (dy[j] - dot);                                      \
    }
DEFINE_SOFTMAX_ROWS(float, f32, gb__expf_fast)
DEFINE_SOFTMAX_ROWS(double, f64, exp)
