/* gb_optim.h — optimizers (SGD, Adam, AdamW, RMSprop) and learning-rate schedules.
 *
 * Semantics follow Keras 3 (keras.optimizers): the same defaults, the same
 * update formulas, slot variables created on the first apply, an iteration
 * counter, learning rates that may be a schedule of the iteration, and
 * decoupled weight decay. Each variable is updated by one fused op per
 * step (TensorFlow's ResourceApply* kernels): a single pass over the
 * variable and its slots, in place when nothing else holds the value.
 *
 *   gb_optimizer *opt = gb_adam(1e-3);                 // keras.optimizers.Adam(1e-3)
 *   gb_variable *vars[2] = {w, b};
 *   for (int step = 0; step < steps; step++) {
 *       gb_scope_begin();
 *       gb_tape *tape = gb_tape_begin();               // with tf.GradientTape() as tape:
 *       gb_tensor *loss = my_loss(x, y, w, b);         //     reads w and b: watched
 *       gb_tape_end(tape);
 *       gb_tensor *grads[2];
 *       gb_tape_gradient_vars(tape, loss, vars, 2, grads);
 *       gb_optimizer_apply_gradients(opt, grads, 2, vars, 2);
 *       if (!gb_ok()) break;                           // errors are sticky
 *       printf("lr %g\n", gb_optimizer_learning_rate(opt));
 *       gb_scope_end();
 *   }
 *   gb_optimizer_free(opt);                            // frees the slot variables
 *
 * Values read before an update keep their contents (a tape's saved reads
 * stay valid): the update then writes a fresh buffer (copy on write).
 * The update ops read the learning rate and the step number when they
 * run, so a traced train step follows the schedule (and Adam's bias
 * correction) every time it is replayed.
 *
 * Slot variables are named "<optimizer>/<variable>/<slot>", e.g.
 * "Adam/dense/kernel/m" (prefixed, like every variable, with the name
 * scope active when they are created). Slots: SGD "momentum" (when
 * momentum > 0); Adam/AdamW "m", "v"; RMSprop "velocity", plus "momentum"
 * (momentum > 0) and "average_gradient" (centered).
 */
#ifndef GB_OPTIM_H
#define GB_OPTIM_H

#include "gb_autodiff.h"
#include "gb_base.h"
#include "gb_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- learning-rate schedules ------------------------------------------------------
 * A schedule is a small value: the learning rate as a function of the
 * optimizer's iteration count (0 for the first step), as keras.optimizers.
 * schedules. The constructors record an error for bad parameters. */

typedef enum gb_lr_kind {
    GB_LR_CONSTANT = 0,
    GB_LR_EXPONENTIAL_DECAY,
    GB_LR_COSINE_DECAY,
    GB_LR_CUSTOM,
} gb_lr_kind;

/* A user schedule: the learning rate at `step` (must be >= 0 and finite). */
typedef double (*gb_lr_fn)(int64_t step, void *user);

typedef struct gb_lr_schedule {
    gb_lr_kind kind;
    double initial_learning_rate;  /* the constant's value, or the start */
    int64_t decay_steps;           /* exponential, cosine: >= 1 */
    double decay_rate;             /* exponential: >= 0 */
    bool staircase;                /* exponential: decay in whole periods */
    double alpha;                  /* cosine: final rate as a fraction, in [0, 1] */
    double warmup_target;          /* cosine: rate reached after warmup */
    int64_t warmup_steps;          /* cosine: 0 = no warmup */
    gb_lr_fn fn;                   /* custom */
    void *user;                    /* custom */
} gb_lr_schedule;

/* lr at every step. */
gb_lr_schedule gb_lr_constant(double learning_rate);
/* initial * decay_rate ^ (step / decay_steps); with staircase the
 * exponent is floored (keras ExponentialDecay). */
gb_lr_schedule gb_lr_exponential_decay(double initial, int64_t decay_steps, double decay_rate,
                                       bool staircase);
/* initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
 * decay_steps)) + alpha) (keras CosineDecay). */
gb_lr_schedule gb_lr_cosine_decay(double initial, int64_t decay_steps, double alpha);
/* CosineDecay with linear warmup from `initial` to `warmup_target` over
 * warmup_steps, then cosine decay from warmup_target over decay_steps. */
gb_lr_schedule gb_lr_cosine_decay_warmup(double initial, int64_t decay_steps, double alpha,
                                         double warmup_target, int64_t warmup_steps);
gb_lr_schedule gb_lr_custom(gb_lr_fn fn, void *user);
/* The schedule's value at step (>= 0); NaN after an error. */
double gb_lr_schedule_value(const gb_lr_schedule *s, int64_t step);

/* ---- optimizers ---------------------------------------------------------------------- */

typedef struct gb_optimizer gb_optimizer;

/* keras.optimizers.SGD: defaults learning_rate 0.01, momentum 0, nesterov
 * false. With momentum m: velocity = m * velocity - lr * g, then
 * var += velocity (nesterov: var += m * velocity - lr * g). */
typedef struct gb_sgd_options {
    gb_lr_schedule learning_rate;
    double momentum;        /* in [0, 1] */
    bool nesterov;
    double weight_decay;    /* >= 0; var -= lr * weight_decay * var first */
    const char *name;       /* slot prefix; NULL: "SGD" */
} gb_sgd_options;

/* keras.optimizers.Adam / AdamW: defaults learning_rate 0.001, beta_1 0.9,
 * beta_2 0.999, epsilon 1e-7; AdamW's weight_decay 0.004. Step t:
 * m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
 * var -= lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon),
 * after the decoupled decay var -= lr * weight_decay * var. */
typedef struct gb_adam_options {
    gb_lr_schedule learning_rate;
    double beta_1;          /* in [0, 1) */
    double beta_2;          /* in [0, 1) */
    double epsilon;         /* >= 0 */
    double weight_decay;    /* >= 0 */
    const char *name;       /* NULL: "Adam"; gb_adamw_defaults: "AdamW" */
} gb_adam_options;

/* keras.optimizers.RMSprop: defaults learning_rate 0.001, rho 0.9,
 * momentum 0, epsilon 1e-7, centered false.
 * velocity = rho velocity + (1 - rho) g^2; (centered: average = rho average
 * + (1 - rho) g, and velocity - average^2 below); increment =
 * lr g / sqrt(velocity + epsilon); with momentum: mom = momentum mom +
 * increment, var -= mom; else var -= increment. */
typedef struct gb_rmsprop_options {
    gb_lr_schedule learning_rate;
    double rho;             /* in [0, 1) */
    double momentum;        /* in [0, 1] */
    double epsilon;         /* >= 0 */
    bool centered;
    double weight_decay;    /* >= 0 */
    const char *name;       /* NULL: "RMSprop" */
} gb_rmsprop_options;

/* The Keras defaults, to adjust before calling the *_ex constructor.
 * AdamW is Adam with decoupled weight decay:
 *   gb_adam_options o = gb_adamw_defaults(); o.weight_decay = 0.01;
 *   gb_optimizer *opt = gb_adam_ex(&o); */
gb_sgd_options gb_sgd_defaults(void);
gb_adam_options gb_adam_defaults(void);
gb_adam_options gb_adamw_defaults(void);
gb_rmsprop_options gb_rmsprop_defaults(void);

/* Constructors: NULL (and an error naming the bad hyperparameter) when an
 * option is out of range. */
gb_optimizer *gb_sgd(double learning_rate);
gb_optimizer *gb_sgd_momentum(double learning_rate, double momentum, bool nesterov);
gb_optimizer *gb_sgd_ex(const gb_sgd_options *options);
gb_optimizer *gb_adam(double learning_rate);
gb_optimizer *gb_adamw(double learning_rate, double weight_decay);
gb_optimizer *gb_adam_ex(const gb_adam_options *options);
gb_optimizer *gb_rmsprop(double learning_rate);
gb_optimizer *gb_rmsprop_ex(const gb_rmsprop_options *options);

/* Frees the optimizer and its slot variables (not the model's variables). */
void gb_optimizer_free(gb_optimizer *opt);

/* Applies grads[i] to vars[i], then counts one iteration (Keras 3
 * optimizer.apply(grads, vars)). The counts must be equal. A NULL gradient
 * skips its variable (with a warning, once per variable); all NULL is an
 * error. A gradient must have its variable's dtype and shape. Everything
 * is checked before anything is updated: on such an error no variable
 * changes. Refuses to run while an earlier error is pending (a gradient
 * that failed is NULL too, and must not pass for "no gradient"). */
bool gb_optimizer_apply_gradients(gb_optimizer *opt, gb_tensor *const *grads, int ngrads,
                                  gb_variable *const *vars, int nvars);
/* Creates the slot variables of vars now (optimizer.build), e.g. so that
 * a checkpoint can be restored into them before the first step. */
bool gb_optimizer_build(gb_optimizer *opt, gb_variable *const *vars, int n);

/* Variables whose name contains `name_part` get no weight decay
 * (exclude_from_weight_decay(var_names=[...])); call before their first
 * apply. */
bool gb_optimizer_exclude_from_weight_decay(gb_optimizer *opt, const char *name_part);
/* Variables of rank 0 or 1 (biases, normalization scales and offsets) get
 * no weight decay, as transformer recipes train with AdamW. */
bool gb_optimizer_exclude_vectors_from_weight_decay(gb_optimizer *opt);

/* Gradient clipping, as Keras' optimizer arguments (at most one is set;
 * 0 is off):
 *   clipnorm         each gradient scaled so its L2 norm is at most this
 *                    (tf.clip_by_norm: g * c / max(||g||, c));
 *   global_clipnorm  all gradients of a step scaled by one factor so their
 *                    joint L2 norm is at most this (tf.clip_by_global_norm:
 *                    a non-finite joint norm makes every gradient NaN, so
 *                    the numerics checks see it);
 *   clipvalue        each element clipped to [-clipvalue, clipvalue].
 * apply_gradients (and so fit) clips before it updates, with ops under
 * "<optimizer>/clip", so a traced train step's graph shows the clipping. */
typedef struct gb_gradient_clipping {
    double clipnorm, global_clipnorm, clipvalue;
} gb_gradient_clipping;
/* False (nothing changed) when more than one is set, or one is negative
 * or not finite. */
bool gb_optimizer_set_clipping(gb_optimizer *opt, gb_gradient_clipping clipping);
gb_gradient_clipping gb_optimizer_clipping(const gb_optimizer *opt);

/* "Adam", "AdamW", ... or the name given in the options. */
const char *gb_optimizer_name(const gb_optimizer *opt);
/* The learning rate the next step will use: the schedule at the current
 * iteration count (optimizer.learning_rate); NaN for NULL. */
double gb_optimizer_learning_rate(const gb_optimizer *opt);
/* Replaces a constant learning rate; an error if a schedule is in use (as
 * Keras). */
bool gb_optimizer_set_learning_rate(gb_optimizer *opt, double learning_rate);
const gb_lr_schedule *gb_optimizer_schedule(const gb_optimizer *opt);
/* Steps applied so far (optimizer.iterations); settable for restores. */
int64_t gb_optimizer_iterations(const gb_optimizer *opt);
bool gb_optimizer_set_iterations(gb_optimizer *opt, int64_t iterations);
/* The slot variable `slot` ("m") of var, or NULL if none (yet). */
gb_variable *gb_optimizer_slot(const gb_optimizer *opt, const gb_variable *var,
                               const char *slot);
/* Writes up to cap slot variables (per variable in first-applied order,
 * slots in order); returns the total number. */
int gb_optimizer_slot_variables(const gb_optimizer *opt, gb_variable **out, int cap);

/* ---- configs ------------------------------------------------------------------------------ */

typedef struct gb_config gb_config;   /* a config dict: gb_nn.h */

/* keras.optimizers.serialize: {"class_name": "SGD" | "Adam" | "RMSprop",
 * "config": {"name", "learning_rate", the kind's hyperparameters,
 * "weight_decay", "exclude_from_weight_decay"}}, the learning rate a
 * number or a schedule {"class_name": "ExponentialDecay" | "CosineDecay",
 * "config": {...}}. What the optimizer does, not its state (slots and
 * iterations go to checkpoints). NULL with an error for a custom schedule
 * (a C function cannot be written down). Free with gb_config_free. */
gb_config *gb_optimizer_get_config(const gb_optimizer *opt);
/* keras.optimizers.deserialize: a new optimizer (no slots, iteration 0)
 * from such a config ("AdamW" too); absent values take Keras' defaults,
 * bad ones are the constructors' errors. */
gb_optimizer *gb_optimizer_from_config(const gb_config *c);

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_lr_constant(...) GB_AT(gb_lr_constant, __VA_ARGS__)
#define gb_lr_exponential_decay(...) GB_AT(gb_lr_exponential_decay, __VA_ARGS__)
#define gb_lr_cosine_decay(...) GB_AT(gb_lr_cosine_decay, __VA_ARGS__)
#define gb_lr_cosine_decay_warmup(...) GB_AT(gb_lr_cosine_decay_warmup, __VA_ARGS__)
#define gb_lr_custom(...) GB_AT(gb_lr_custom, __VA_ARGS__)
#define gb_lr_schedule_value(...) GB_AT(gb_lr_schedule_value, __VA_ARGS__)
#define gb_sgd(...) GB_AT(gb_sgd, __VA_ARGS__)
#define gb_sgd_momentum(...) GB_AT(gb_sgd_momentum, __VA_ARGS__)
#define gb_sgd_ex(...) GB_AT(gb_sgd_ex, __VA_ARGS__)
#define gb_adam(...) GB_AT(gb_adam, __VA_ARGS__)
#define gb_adamw(...) GB_AT(gb_adamw, __VA_ARGS__)
#define gb_adam_ex(...) GB_AT(gb_adam_ex, __VA_ARGS__)
#define gb_rmsprop(...) GB_AT(gb_rmsprop, __VA_ARGS__)
#define gb_rmsprop_ex(...) GB_AT(gb_rmsprop_ex, __VA_ARGS__)
#define gb_optimizer_apply_gradients(...) GB_AT(gb_optimizer_apply_gradients, __VA_ARGS__)
#define gb_optimizer_build(...) GB_AT(gb_optimizer_build, __VA_ARGS__)
#define gb_optimizer_set_clipping(...) GB_AT(gb_optimizer_set_clipping, __VA_ARGS__)
#define gb_optimizer_exclude_vectors_from_weight_decay(...) \
    GB_AT(gb_optimizer_exclude_vectors_from_weight_decay, __VA_ARGS__)
#define gb_optimizer_exclude_from_weight_decay(...) \
    GB_AT(gb_optimizer_exclude_from_weight_decay, __VA_ARGS__)
#define gb_optimizer_set_learning_rate(...) GB_AT(gb_optimizer_set_learning_rate, __VA_ARGS__)
#define gb_optimizer_set_iterations(...) GB_AT(gb_optimizer_set_iterations, __VA_ARGS__)
#define gb_optimizer_get_config(...) GB_AT(gb_optimizer_get_config, __VA_ARGS__)
#define gb_optimizer_from_config(...) GB_AT(gb_optimizer_from_config, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
