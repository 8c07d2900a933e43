/* optim/update_loops.h — the loops of the fused optimizer updates
 * (optim/isa/update_loops.c), one set per ISA level (core/isa.h), and
 * the update they run (internal, shared with optim/update_ops.c).
 */
#ifndef GB_OPTIM_UPDATE_LOOPS_H
#define GB_OPTIM_UPDATE_LOOPS_H

#include "core/isa.h"
#include "optim/internal.h"

enum { GB_UPDATE_MAX_ARRAYS = 1 + GB__OPTIM_MAX_SLOTS }; /* the variable, then its slots */

/* One update: the arrays and this step's scalars. */
typedef struct gb_update {
    int64_t n;
    const void *g;
    const void *src[GB_UPDATE_MAX_ARRAYS];
    void *dst[GB_UPDATE_MAX_ARRAYS];
    double lr;     /* this step's learning rate */
    double decay;  /* lr * weight_decay: decoupled decay factor */
    int64_t t;     /* 1-based step number */
    const double *f;
} gb_update;

/* Runs the update over elements [begin, end). */
typedef void (*gb_update_loop)(const gb_update *u, int64_t begin, int64_t end);

/* A measured update's sums of squares (optim/measure.h) in eight partial
 * sums each, so the adds are not one chain and vectorize; summed in a
 * fixed order, so no ISA level changes a result. */
typedef struct gb_update_squares {
    double grad[8], before[8], after[8], update[8];
} gb_update_squares;

/* Adds n elements' squares of the gradient g, the old values and the new
 * ones (arrays of the update's dtype) into p. */
typedef void (*gb_squares_loop)(gb_update_squares *p, const void *g, const void *old,
                                const void *now, int64_t n);

/* Every loop, indexed first by dtype (0 float32, 1 float64). */
typedef struct gb_update_loops {
    gb_update_loop sgd[2];
    gb_update_loop momentum[2][2];    /* [dtype][nesterov] */
    gb_update_loop adam[2];
    gb_update_loop rmsprop[2][2][2];  /* [dtype][centered][momentum] */
    gb_squares_loop squares[2];
} gb_update_loops;
GB_ISA_DECLARE(const gb_update_loops, gb__update_loops);

#endif
