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

#ifdef __cplusplus
}
#endif
#endif
