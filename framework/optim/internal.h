/* optim/internal.h — what the optimizer sources share, and nothing else sees.
 *
 * An optimizer is one generic core (optim/optimizer.c) plus a constructor per
 * kind (optim/sgd.c, optim/adam.c, optim/rmsprop.c) that validates its
 * hyperparameters and picks one fused update op with an attribute
 * template. The fused kernels (optim/update_ops.c) find the optimizer by
 * its id (attribute i[GB__OPTIM_I_OPTIMIZER]) and the variable by its id
 * (attrs.vars[0]), then the variable's state (gb__optim_var, slots
 * included) through the optimizer: plain data, so graphs can hold the
 * update, and a freed optimizer is an error, not a dangling pointer.
 */
#ifndef GB_OPTIM_INTERNAL_H
#define GB_OPTIM_INTERNAL_H

#include "ops/internal.h"
#include "optim/measure.h"

/* Slots per variable: enough for RMSprop (velocity, momentum, average). */
#define GB__OPTIM_MAX_SLOTS 3

/* The attribute layout shared by the four ResourceApply* ops. Keeping the
 * weight decay and the flags at the same places in every op lets the core
 * fill them without knowing which op it runs. */
enum {
    GB__OPTIM_F_WEIGHT_DECAY = 3, /* f[3]: decoupled weight decay rate */
    GB__OPTIM_I_ADVANCE = 0,      /* i[0]: 1 on the step's last update */
    GB__OPTIM_I_FLAG = 1,         /* i[1]: nesterov (momentum), centered (RMSprop) */
    GB__OPTIM_I_OPTIMIZER = 2,    /* i[2]: the optimizer's id */
    GB__OPTIM_NI = 3,
};

/* One variable's optimizer state, owned by the optimizer. */
typedef struct gb__optim_var {
    struct gb_optimizer *opt;
    gb_variable *var;
    gb_variable *slot[GB__OPTIM_MAX_SLOTS];  /* NULL where the op uses none */
    /* The buffer each array (variable, then slots) had before its last
     * copy on write, kept for the next one: once its readers are gone it
     * is rewritten instead of allocating (and page-faulting) a fresh one
     * every step of a loop whose reads are alive at update time. */
    gb_buffer *spare[1 + GB__OPTIM_MAX_SLOTS];
    /* What the last update found in each array's new values while
     * numerics checks were on: 1 a NaN/Inf, 0 none, -1 not scanned. */
    signed char nonfinite[1 + GB__OPTIM_MAX_SLOTS];
    /* What the last update measured (optim/measure.h) and under which
     * measure: its number, 0 for none. */
    gb__update_sums sums;
    int64_t measured;
    bool decay;          /* weight decay applies (not excluded by name) */
    bool warned_no_grad; /* the NULL-gradient warning was given */
} gb__optim_var;

/* What a constructor decides: the name, the schedule, the update op, its
 * hyperparameters, and the names of the slots the op reads (by position). */
typedef struct gb__optim_spec {
    const char *name;
    gb_lr_schedule learning_rate;
    gb_op_id op;
    gb_attrs attrs;
    const char *slot_names[GB__OPTIM_MAX_SLOTS];
} gb__optim_spec;

/* Creates an optimizer from a validated spec (NULL after an error). */
gb_optimizer *gb__optimizer_new(const gb__optim_spec *spec);

/* What the optimizer's config reads beyond the public accessors: its
 * update op (the kind) with the hyperparameter attributes into *attrs,
 * and the name parts excluded from weight decay (their count; *parts
 * the optimizer's array). */
gb_op_id gb__optimizer_op(const struct gb_optimizer *opt, gb_attrs *attrs);
int gb__optimizer_no_decay(const struct gb_optimizer *opt, const char *const **parts);
bool gb__optimizer_no_decay_vectors(const struct gb_optimizer *opt);

/* The learning rate for the step being applied: the schedule at the
 * current iteration count (Keras evaluates it before incrementing). */
double gb__optimizer_step_lr(const struct gb_optimizer *opt);
/* 1-based number of the step being applied (Adam's bias correction t). */
int64_t gb__optimizer_step_number(const struct gb_optimizer *opt);
/* The number of the measure armed now (optim/measure.h); 0: none. */
int64_t gb__optimizer_measuring(const struct gb_optimizer *opt);
/* Counts one applied step; the fused kernel of the step's last update
 * calls it, so a traced train step counts every time it runs. */
void gb__optimizer_advance(struct gb_optimizer *opt);

/* Clips grads[0..n) in place (NULL entries stay NULL) as the clipping
 * says (gb_gradient_clipping; all zero: nothing); false after an op
 * failed. optim/clipping.c. */
bool gb__optim_clip(const gb_gradient_clipping *clipping, gb_tensor **grads, int n);
bool gb__optim_clipping_valid(const gb_gradient_clipping *clipping, const char *who);

/* Whether g can update v: GB_OK, or the error code with the reason (naming
 * the variable and both dtypes and shapes) written to why. */
gb_status gb__optim_gradient_fits(const gb_variable *v, const gb_tensor *g, char *why,
                                  size_t n);

/* Records "who: what must be in [lo, hi) (or [lo, hi]), got v" and
 * returns false when v is outside, NaN included. */
bool gb__optim_check_range(const char *who, const char *what, double v, double lo, double hi,
                           bool hi_inclusive);
/* Validates a schedule given to `who`; records an error and returns false. */
bool gb__lr_schedule_check(const gb_lr_schedule *s, const char *who);
/* The schedule's value without validation (the optimizer checked it). */
double gb__lr_schedule_eval(const gb_lr_schedule *s, int64_t step);

/* The fused kernels update a variable's heap buffer directly
 * (gb__variable_buffer / gb__variable_install in core/internal.h), with the
 * copy-on-write rule of AssignVariableOp: in place when the variable holds
 * the only reference, into a fresh buffer when a read is still alive. */

/* The state of the variable an update op call writes, found by the ids in
 * its attributes; NULL after an error naming what was freed. */
gb__optim_var *gb__optim_state_of(const gb_op_call *c);

#endif
