/* ops/pool_kernels.h — the kernels of MaxPool, AvgPool and their
 * gradients (ops/isa/pool.c), one set per ISA level (core/isa.h), and the
 * job they share with ops/pool.c (internal).
 */
#ifndef GB_OPS_POOL_KERNELS_H
#define GB_OPS_POOL_KERNELS_H

#include "core/isa.h"
#include "ops/conv/im2col.h"

/* One kernel call: parts handle disjoint ranges of images [n0, n1), so
 * they never write the same memory. */
typedef struct gb_pool_job {
    gb_window g;
    const void *x, *y, *dy; /* as the op has them (y: MaxPoolGrad's forward output) */
    void *out;
    void *scratch; /* MaxPoolGrad: C values per worker */
} gb_pool_job;

/* Images [n0, n1) of the job, as worker w. */
typedef void (*gb_pool_kernel)(const gb_pool_job *j, int64_t n0, int64_t n1, int w);

typedef enum gb_pool_kind {
    GB_POOL_MAX,
    GB_POOL_AVG,
    GB_POOL_MAX_GRAD,
    GB_POOL_AVG_GRAD,
    GB_POOL_KINDS
} gb_pool_kind;

/* fn[kind][0] for float32, fn[kind][1] for float64. */
typedef struct gb_pool_table { gb_pool_kernel fn[GB_POOL_KINDS][2]; } gb_pool_table;
GB_ISA_DECLARE(const gb_pool_table, gb__pool_kernels);

#endif
