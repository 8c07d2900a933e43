/* optim/measure.h — what an update measures for the training-health checks
 * (train/health_fit.c), and how a check step asks for it.
 *
 * A check step needs, per variable, the norms of its gradient, of its
 * value before and after the step, and of the update. The fused update
 * kernels (optim/update_ops.c) hold all four in cache at once: while a
 * measure is armed they sum their squares block by block as they update,
 * so a check costs no copy of the weights before the step, no gradient
 * returned from a traced step, and no extra pass over memory. The kernels
 * read the arming when they run, so a traced step measures on the calls
 * it is armed for, like it follows the learning-rate schedule.
 */
#ifndef GB_OPTIM_MEASURE_H
#define GB_OPTIM_MEASURE_H

#include "gb_optim.h"

/* Sums of squares over one update's elements, accumulated in double. */
typedef struct gb__update_sums {
    double grad;     /* the gradient the update used (clipped, when the optimizer clips) */
    double before;   /* the variable's value before the update */
    double after;    /* ... after it */
    double update;   /* after - before */
} gb__update_sums;

/* Arms a measure: every update opt runs until gb__optimizer_measure_end
 * fills its variable's sums. */
void gb__optimizer_measure_begin(gb_optimizer *opt);
void gb__optimizer_measure_end(gb_optimizer *opt);
/* The sums of v's update under the measure armed last; false when v had
 * no update then (no gradient, or updated by other means). */
bool gb__optimizer_measured(const gb_optimizer *opt, const gb_variable *v, gb__update_sums *out);
/* Whether opt clips its gradients: the measured gradient is then not the
 * one backward made. */
bool gb__optimizer_clips(const gb_optimizer *opt);

#endif
