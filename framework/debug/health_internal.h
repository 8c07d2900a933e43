/* debug/health_internal.h — what fit hands the training-health checks, and
 * what the checks' three files share.
 *
 * The checks sit beside numerics, below nn and train, so they never see a
 * layer: fit (train/health_fit.c) measures each layer's figures — its
 * variables' gradient, weight and update norms, its output's dead or
 * saturated units — into the plain structs below, in the model's order,
 * and hands them over once per interval; every loss goes to the spike
 * detector as it comes. health.c keeps the options and a monitor per fit,
 * emits the figures as scalars and the findings as GB_EVENT_HEALTH
 * events; health_checks.c holds the rules and the alerts' words;
 * health_loss.c the robust loss-spike detector.
 */
#ifndef GB_DEBUG_HEALTH_INTERNAL_H
#define GB_DEBUG_HEALTH_INTERNAL_H

#include "gb_health.h"

/* What a variable is to the checks, from its name and rank. */
typedef enum gb__health_role {
    GB__HEALTH_WEIGHT = 0,        /* rank >= 2 (a kernel), not a bias: update ratio, growth */
    GB__HEALTH_BIAS,              /* "bias", of any rank: drift */
    GB__HEALTH_MOVING_VARIANCE,   /* BatchNorm's: collapse */
    GB__HEALTH_OTHER              /* anything else: figures only */
} gb__health_role;

typedef struct gb__health_var {
    const char *name;
    gb__health_role role;
    int64_t size;
    bool has_grad;            /* the step gave it a gradient */
    double grad_sumsq;        /* of its gradient */
    bool has_update;          /* a value before the step was kept (trainable ones) */
    double before_sumsq;      /* ||w||^2 before the step */
    double update_sumsq;      /* ||w_after - w_before||^2 */
    double weight_sumsq;      /* ||w||^2 after the step */
    double min_value;         /* its smallest element (moving variances) */
} gb__health_var;

typedef enum gb__health_act {
    GB__HEALTH_ACT_NONE = 0,
    GB__HEALTH_ACT_RELU,
    GB__HEALTH_ACT_SIGMOID,
    GB__HEALTH_ACT_TANH
} gb__health_act;

/* One layer, its variables and (ReLU, sigmoid, tanh layers) its output on
 * the check step's batch. A unit is one feature of the last axis; it is
 * dead when it is zero for every sample (and position) of the batch. */
typedef struct gb__health_layer {
    const char *name;
    const gb__health_var *vars;
    int nvars;
    gb__health_act act;
    bool has_output;          /* the output below was measured */
    int64_t units, dead_units;
    int64_t values, saturated_values;
} gb__health_layer;

typedef struct gb__health gb__health;

/* A monitor: the memory of one model's fits (onsets, the previous
 * global norm, each weight's history, the recent losses). */
gb__health *gb__health_new(void);
void gb__health_free(gb__health *h);
/* Whether `step` (the optimizer's iterations after it) is a check step:
 * every interval-th, and `first`, the first the monitor can check (its
 * model's weights exist before the step: step 1, or 2 for a model that
 * builds them in its first call). */
bool gb__health_due(int64_t step, bool first);
/* One step's loss (every step). */
void gb__health_loss(gb__health *h, int64_t step, double loss);
/* One figure of one rank of a distributed fit, as a scalar of the run
 * "rank_<rank>" beside the writer's own. */
void gb__health_rank_figure(const char *layer, const char *figure, double value, int64_t step,
                            int rank);
/* One check: emits each layer's figures, then the alerts. */
void gb__health_check(gb__health *h, int64_t step, const gb__health_layer *layers, int n);

/* ---- shared by health.c, health_checks.c and health_loss.c ---------------------------- */

/* The options in force (defaults filled in). */
const gb_health_options *gb__health_options(void);
/* Emits a (its message built from fmt) unless the finding
 * (kind, layer, variable) is already active; `firing` false ends it, so
 * the next time it fires is a new onset. */
void gb__health_finding(gb__health *h, bool firing, const gb_health_alert *a, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Emits a (message from fmt) now, whatever came before: each loss spike
 * is an onset of its own. */
void gb__health_emit(const gb_health_alert *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The rules over one check's layers (health_checks.c). */
void gb__health_rules(gb__health *h, int64_t step, const gb__health_layer *layers, int n);
/* The monitor's memory of a variable across checks, found or added by
 * name: NULL when out of memory. */
typedef struct gb__health_history {
    double first_rms;         /* at its first check */
    double streak_start;      /* its norm when the current run of rises began */
    double last_norm;
    int rises;                /* checks in a row its norm rose */
    bool seen;
} gb__health_history;
gb__health_history *gb__health_history_of(gb__health *h, const char *variable);
/* The previous check's global gradient norm (< 0: none), updated. */
double gb__health_swap_global(gb__health *h, double now);

/* ---- the loss-spike detector (health_loss.c) ------------------------------------------- */

typedef struct gb__loss_watch gb__loss_watch;
/* The monitor's detector. */
gb__loss_watch *gb__health_loss_watch(gb__health *h);

struct gb__loss_watch {
    double *ring;             /* the last `cap` losses */
    int cap, n, head;
    bool in_spike;
    double band;              /* the spike's median + k sigma: below it again, recovered */
    double spike_loss;
    int64_t spike_step;
};

typedef enum gb__loss_verdict { GB__LOSS_OK = 0, GB__LOSS_SPIKE, GB__LOSS_RECOVERED } gb__loss_verdict;

typedef struct gb__loss_figures {
    double median, mad, sigma, threshold;
    int window;               /* losses the median was taken over */
} gb__loss_figures;

/* Judges `loss` against the window before it, then adds it. Fewer than
 * half a window of losses: no verdict yet. */
gb__loss_verdict gb__loss_watch_push(gb__loss_watch *w, double loss, double k, int window,
                                     gb__loss_figures *f);
void gb__loss_watch_free(gb__loss_watch *w);
/* Median and MAD of x[n] (reorders a copy in tmp[n]). */
void gb__median_mad(const double *x, int n, double *tmp, double *median, double *mad);

#endif
