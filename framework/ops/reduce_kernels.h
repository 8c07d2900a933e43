/* ops/reduce_kernels.h — the kernels of the reductions (ops/isa/reduce.c),
 * one set per ISA level (core/isa.h), and the plan they follow, which
 * ops/reduce.c makes (internal).
 */
#ifndef GB_OPS_REDUCE_KERNELS_H
#define GB_OPS_REDUCE_KERNELS_H

#include "core/isa.h"
#include "ops/internal.h"

/* A reduction simplified (ops/reduce.c says how): [outer, red, inner], or
 * the general strided path over merged axes. */
typedef struct gb_rplan {
    bool general;             /* reduced axes not one block: strided path */
    int64_t outer, red, inner;
    int64_t count;            /* elements reduced into each output */
    int64_t nout;
    /* general path: merged axes, row-major, each kept or reduced */
    int rank;
    int64_t dims[GB_MAX_RANK];
    bool reduced[GB_MAX_RANK];
} gb_rplan;

/* Reducer index = op id - GB_OP_SUM; ops.def lists them in this order. */
enum { GB_RED_SUM, GB_RED_MEAN, GB_RED_MAX, GB_RED_MIN, GB_RED_PROD, GB_RED_COUNT };
_Static_assert(GB_OP_MEAN - GB_OP_SUM == GB_RED_MEAN && GB_OP_MAX - GB_OP_SUM == GB_RED_MAX &&
                   GB_OP_MIN - GB_OP_SUM == GB_RED_MIN && GB_OP_PROD - GB_OP_SUM == GB_RED_PROD,
               "ops.def lists Sum, Mean, Max, Min, Prod in this order");

/* y from x by the plan; scratch holds plan->inner accumulators of up to
 * 8 bytes (the columns path). ArgMax/ArgMin write int64 indices. */
typedef void (*gb_reduce_fn)(const void *x, void *y, const gb_rplan *p, void *scratch);
typedef void (*gb_arg_fn)(const void *x, int64_t *y, const gb_rplan *p, void *scratch);

typedef struct gb_reduce_table {
    gb_reduce_fn reduce[GB_RED_COUNT][GB_DTYPE_COUNT];
    gb_arg_fn argmax[GB_DTYPE_COUNT];
    gb_arg_fn argmin[GB_DTYPE_COUNT];
} gb_reduce_table;
GB_ISA_DECLARE(const gb_reduce_table, gb__reduce_kernels);

#endif
