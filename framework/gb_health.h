/* gb_health.h — training health: the problems before the NaN, named.
 *
 * Most failed trainings never produce a NaN: gradients vanish in the first
 * layers, ReLUs die, a learning rate 100x too big makes the loss spike,
 * one layer's weights stop moving. The health checks (framework/debug/)
 * measure, every few steps, each trainable variable's gradient norm and
 * update-to-weight ratio, each activation layer's dead and saturated
 * units and the loss against its recent median, and turn what looks
 * wrong into alerts.
 *
 * What leaves the engine (gb_observer.h), the contract the summary writer
 * and the Health dashboard read:
 *   - each finding is a GB_EVENT_HEALTH event whose detail is a
 *     const gb_health_alert * (valid during the call only) and whose
 *     message is the alert's one-line report;
 *   - the per-layer figures are GB_EVENT_SCALAR events (run NULL) tagged
 *     "health/<layer>/<figure>" — <layer> is the layer's name and may
 *     hold '/', <figure> never does: grad_norm, update_ratio,
 *     weight_norm, dead_fraction, saturated_fraction — emitted each
 *     interval in the model's order, input side first, so the order in
 *     which a store first saw the tags is the order of the layers.
 */
#ifndef GB_HEALTH_H
#define GB_HEALTH_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gb_health_severity {
    GB_HEALTH_INFO = 1,      /* worth knowing: a spike the loss recovered from */
    GB_HEALTH_WARNING = 2,   /* training is likely worse than it could be */
    GB_HEALTH_CRITICAL = 3   /* training is likely failing */
} gb_health_severity;

/* One finding. kind is one of the snake_case names below (a store keeps
 * them as text, so a later kind needs no schema change):
 *   vanishing_gradient, exploding_gradient, gradient_jump, not_learning,
 *   large_update, dead_units, saturated_units, loss_spike,
 *   loss_recovered, weight_growth, bias_drift, variance_collapse. */
typedef struct gb_health_alert {
    const char *kind;
    gb_health_severity severity;
    const char *layer;       /* the layer's name; NULL for the model (loss, global norm) */
    const char *variable;    /* the variable's name; NULL when about a layer's output */
    int64_t step;            /* the step the interval ended at */
    double value;            /* the figure that tripped the check */
    double threshold;        /* the bound it crossed */
    const char *figures;     /* every figure the check used, as a JSON object */
    const char *advice;      /* what it usually means and what to try */
} gb_health_alert;


/* ---- switching the checks ---------------------------------------------------------
 *
 * The checks run inside fit (train/health_fit.c) while they are on and an
 * observer listens for GB_EVENT_HEALTH: the summary writer does from the
 * moment it becomes the default writer, so a program that writes a store
 * gets them with no code, and one that writes nothing pays nothing. One
 * call turns them off; gb_health_enable() turns them back on with other
 * options. Every option left 0 takes its default. */
typedef struct gb_health_options {
    int interval;               /* steps between checks (default 20) */
    double vanishing_ratio;     /* a layer's gradient norm below this times a layer
                                   above it: vanishing (1e-3) */
    double exploding_ratio;     /* ... above this times a layer above it: exploding (1e3) */
    double jump_factor;         /* the global gradient norm grows this much from one
                                   check to the next: gradient_jump (10) */
    double min_update_ratio;    /* a weight's ||dw||/||w|| below this: not_learning (1e-5) */
    double max_update_ratio;    /* ... above this: large_update (1e-1) */
    double max_dead_fraction;   /* a ReLU layer's units that are zero on a whole batch,
                                   as a fraction above this: dead_units (0.5) */
    double saturation_eps;      /* a sigmoid output within eps of 0 or 1, a tanh output
                                   within eps of -1 or 1, is saturated (0.01) */
    double max_saturated_fraction; /* a layer's saturated outputs above this fraction:
                                      saturated_units (0.5) */
    double spike_k;             /* a loss above median + k robust standard deviations
                                   (1.4826 MAD) of the recent window: loss_spike (6) */
    int loss_window;            /* losses the median and MAD are taken over (50) */
    double growth_factor;       /* a weight's norm grows this much over growth_checks
                                   checks in a row: weight_growth (3) */
    int growth_checks;          /* (5) */
    double bias_drift;          /* a bias's RMS moves this far from its first check's: bias_drift (2) */
    double min_variance;        /* a BatchNorm moving variance below this: variance_collapse (1e-6) */
} gb_health_options;

/* Turns the checks on with these options (NULL: the defaults). False,
 * with an error naming the option, when one is out of range; the checks
 * then keep their previous state. */
bool gb_health_enable(const gb_health_options *opts);
/* Turns them off: fit measures nothing and emits no health event. */
void gb_health_disable(void);
/* Whether fit checks health now: on, and someone listens. */
bool gb_health_active(void);
/* The options in force, every default filled in. */
gb_health_options gb_health_get_options(void);

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_health_enable(...) GB_AT(gb_health_enable, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
