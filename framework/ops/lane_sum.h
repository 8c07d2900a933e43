/* ops/lane_sum.h — the sum of a contiguous row in 16 running partials,
 * for the kernels that reduce rows (softmax, layer norm).
 *
 * One running sum is a chain of dependent adds the compiler may not
 * reorder (float addition is not associative, and the build keeps IEEE
 * semantics), so it stays scalar; 16 independent ones are one or two
 * vectors. The partials are combined in a fixed order, so a row's sum is
 * the same at every ISA level (each kernel file that includes this is
 * compiled with its own level's flags).
 */
#ifndef GB_OPS_LANE_SUM_H
#define GB_OPS_LANE_SUM_H

#include <stdint.h>

enum { GB__SUM_LANES = 16 };

#define GB__DEFINE_LANE_SUM(T, SUFFIX)                                                      \
    static inline T gb__lane_sum_##SUFFIX(const T *restrict x, int64_t n) {                 \
        T lane[GB__SUM_LANES] = {0}, s = 0;                                                  \
        int64_t j = 0;                                                                       \
        for (; j + GB__SUM_LANES <= n; j += GB__SUM_LANES)                                   \
            for (int l = 0; l < GB__SUM_LANES; l++) lane[l] += x[j + l];                     \
        for (int l = 0; l < GB__SUM_LANES; l++) s += lane[l];                                \
        for (; j < n; j++) s += x[j];                                                        \
        return s;                                                                            \
    }
GB__DEFINE_LANE_SUM(float, f32)
GB__DEFINE_LANE_SUM(double, f64)
#undef GB__DEFINE_LANE_SUM

#endif
