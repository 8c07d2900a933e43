/* optim/update_ops.c — fused optimizer updates, as TensorFlow's ResourceApply* kernels.
 *
 * One op call updates one variable and its slot variables in a single
 * pass: for Adam, each element of the gradient, m, v and the variable is
 * read once and written once. The op's only input is the gradient; its
 * attributes (ops.def) name the variable, its slot variables and the
 * optimizer by id, and hold the constant hyperparameters. The step's learning rate and number are read from the
 * optimizer when the kernel runs, not frozen into the attributes, so a
 * traced train step replayed many times follows the schedule and Adam's
 * bias correction; the step's last update counts the iteration.
 *
 * Copy on write, as AssignVariableOp: a variable or slot whose buffer is
 * still held by a read gets a fresh buffer (the old value stays intact for
 * its readers); otherwise it is updated in place. Either way the loop
 * reads the old array and writes the new one at the same index, which is
 * why it may run in place.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optim/update_loops.h"

enum { MAX_ARRAYS = GB_UPDATE_MAX_ARRAYS };

/* ---- choosing the loop: optim/isa/update_loops.c, per ISA level ------------------------- */

/* Index 0 float32, 1 float64 (infer admits nothing else). */
static int dtype_index(gb_dtype dt) { return dt == GB_F64; }

static gb_update_loop pick_sgd(const gb_attrs *a, gb_dtype dt) {
    (void)a;
    return GB_ISA_TABLE(gb__update_loops)->sgd[dtype_index(dt)];
}

static gb_update_loop pick_momentum(const gb_attrs *a, gb_dtype dt) {
    return GB_ISA_TABLE(gb__update_loops)->momentum[dtype_index(dt)][a->i[GB__OPTIM_I_FLAG] != 0];
}

static gb_update_loop pick_adam(const gb_attrs *a, gb_dtype dt) {
    (void)a;
    return GB_ISA_TABLE(gb__update_loops)->adam[dtype_index(dt)];
}

static gb_update_loop pick_rmsprop(const gb_attrs *a, gb_dtype dt) {
    const gb_update_loops *l = GB_ISA_TABLE(gb__update_loops);
    return l->rmsprop[dtype_index(dt)][a->i[GB__OPTIM_I_FLAG] != 0][a->f[1] > 0];
}

/* ---- copy on write ------------------------------------------------------------------------ */

/* The variables one update writes and the fresh buffers some of them get. */
typedef struct targets {
    gb_variable *var[MAX_ARRAYS];
    gb_buffer *fresh[MAX_ARRAYS]; /* NULL: written in place */
} targets;

static void release_fresh(targets *tg) {
    for (int k = 0; k < MAX_ARRAYS; k++) gb__buffer_unref(tg->fresh[k]);
}

/* A buffer of nbytes no reader can see: the spare when its readers are
 * gone, else a new one. */
static gb_buffer *fresh_buffer(gb__optim_var *s, int k, size_t nbytes) {
    gb_buffer *spare = s->spare[k];
    if (spare && spare->refcount == 1 && spare->nbytes == nbytes) {
        s->spare[k] = NULL;
        return spare;
    }
    return gb__buffer_new_heap(nbytes);
}

/* Points u->src/dst at each array: in place when the variable holds the
 * only reference to its buffer, else at a fresh buffer. */
static bool open_targets(gb__optim_var *s, gb_update *u, targets *tg) {
    *tg = (targets){.var = {s->var}};
    for (int k = 1; k < MAX_ARRAYS; k++) tg->var[k] = s->slot[k - 1];
    for (int k = 0; k < MAX_ARRAYS; k++) {
        if (!tg->var[k]) continue;
        gb_buffer *b = gb__variable_buffer(tg->var[k]);
        if (!b) {
            release_fresh(tg);
            return false;
        }
        u->src[k] = b->data;
        u->dst[k] = b->data;
        if (b->refcount > 1) {
            tg->fresh[k] = fresh_buffer(s, k, b->nbytes);
            if (!tg->fresh[k]) {
                release_fresh(tg);
                return false;
            }
            u->dst[k] = tg->fresh[k]->data;
        }
    }
    return true;
}

/* Installs every new value: a fresh buffer, whose replaced one becomes
 * the spare (the optimizer's reference keeps it, its readers still see
 * the old value), or the buffer written in place (which counts the
 * write). */
static void commit_targets(gb__optim_var *s, const targets *tg) {
    for (int k = 0; k < MAX_ARRAYS; k++) {
        if (!tg->var[k]) continue;
        gb_buffer *old = gb__variable_buffer(tg->var[k]);
        if (tg->fresh[k]) {
            old->refcount++;
            gb__buffer_unref(s->spare[k]);
            s->spare[k] = old;
        }
        gb__variable_install(tg->var[k], tg->fresh[k] ? tg->fresh[k] : old);
    }
}

/* ---- checking and measuring as the update runs ------------------------------------------------ */

/* With numerics checks on, the new values are scanned block by block
 * while still in cache: the variable and its slots, which the check must
 * see (an Adam v that overflows to Inf leaves the variable finite and
 * stalls it). Scanning them afterwards, one more pass over memory per
 * array, made the checked MLP step's overhead about twice as large.
 * A health measure (optim/measure.h) sums the squares of the gradient and
 * of the variable before and after in the same blocks: a block's old
 * values are copied aside before the loop overwrites them in place. */
enum { SCAN_BLOCK = 2048 };

static double total(const double *x) {
    return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

/* The loop over every element, block by block: the numerics scan into
 * nonfinite (NULL: none), the measure into sums (NULL: none). */
static void run_blocks(gb_update_loop loop, const gb_update *u, gb_dtype dt,
                       signed char *nonfinite, gb__update_sums *sums) {
    size_t esize = gb_dtype_size(dt);
    double aside[SCAN_BLOCK]; /* a block's old values, float or double */
    gb_update_squares p = {0};
    gb_squares_loop squares = GB_ISA_TABLE(gb__update_loops)->squares[dtype_index(dt)];
    for (int k = 0; nonfinite && k < MAX_ARRAYS; k++) nonfinite[k] = u->dst[k] ? 0 : -1;
    for (int64_t b = 0; b < u->n; b += SCAN_BLOCK) {
        int64_t e = b + SCAN_BLOCK < u->n ? b + SCAN_BLOCK : u->n;
        const char *old = (const char *)u->src[0] + (size_t)b * esize;
        if (sums && u->src[0] == u->dst[0]) old = memcpy(aside, old, (size_t)(e - b) * esize);
        loop(u, b, e);
        for (int k = 0; nonfinite && k < MAX_ARRAYS; k++)
            if (nonfinite[k] == 0 && gb__nonfinite_in(dt, u->dst[k], b, e)) nonfinite[k] = 1;
        if (sums)
            squares(&p, (const char *)u->g + (size_t)b * esize, old,
                    (const char *)u->dst[0] + (size_t)b * esize, e - b);
    }
    if (sums)
        *sums = (gb__update_sums){.grad = total(p.grad), .before = total(p.before),
                                  .after = total(p.after), .update = total(p.update)};
}

static bool numerics_on(void) {
    return atomic_load_explicit(&gb__hook_flags, memory_order_relaxed) & GB_HOOK_NUMERICS;
}

/* The variable, then its slots, with what the kernel found in them. */
static int written_update(const gb_op_call *c, gb_variable **vars, signed char *nonfinite) {
    static_assert(MAX_ARRAYS <= GB_MAX_WRITTEN, "more arrays than the numerics check takes");
    const gb__optim_var *s = gb__optim_state_of(c);
    int n = 0;
    if (!s) return 0;
    for (int k = 0; k < MAX_ARRAYS; k++) {
        gb_variable *v = k ? s->slot[k - 1] : s->var;
        if (!v) continue;
        vars[n] = v;
        nonfinite[n++] = s->nonfinite[k];
    }
    return n;
}

/* ---- the ops ------------------------------------------------------------------------------- */

/* No outputs: the gradient must fit the variable. */
static int infer_update(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    const gb__optim_var *s = gb__optim_state_of(c);
    if (!s) return -1;
    char why[512];
    gb_status st = gb__optim_gradient_fits(s->var, c->in[0], why, sizeof why);
    if (st != GB_OK) {
        gb__op_error(c, st, "%s: %s", c->def->name, why);
        return -1;
    }
    return 0;
}

typedef gb_update_loop (*pick_fn)(const gb_attrs *a, gb_dtype dt);

static bool run_update(const gb_op_call *c, pick_fn pick) {
    gb__optim_var *s = gb__optim_state_of(c);
    if (!s) return false;
    const gb_tensor *grad = c->in[0];
    gb_update u = {.n = grad->size, .g = grad->data, .f = c->attrs->f};
    u.lr = gb__optimizer_step_lr(s->opt);
    if (!(u.lr >= 0 && isfinite(u.lr))) {
        gb__op_error(c, GB_ERR_VALUE,
                     "%s: the learning rate of optimizer '%s' at iteration %lld is %g; it must "
                     "be >= 0 and finite",
                     c->def->name, gb_optimizer_name(s->opt),
                     (long long)gb__optimizer_step_number(s->opt) - 1, u.lr);
        return false;
    }
    u.t = gb__optimizer_step_number(s->opt);
    u.decay = u.lr * c->attrs->f[GB__OPTIM_F_WEIGHT_DECAY];
    targets tg;
    if (!open_targets(s, &u, &tg)) return false;
    /* One thread: splitting even the 784x256 Adam update across the pool
     * measured slower (waking a worker costs what the second core saves,
     * and far more when the machine is busy). The ranged loops make a
     * split a one-line change should bigger variables want it. */
    gb_update_loop loop = pick(c->attrs, grad->dtype);
    int64_t measure = gb__optimizer_measuring(s->opt);
    bool numerics = numerics_on();
    if (numerics || measure) {
        run_blocks(loop, &u, grad->dtype, numerics ? s->nonfinite : NULL, measure ? &s->sums : NULL);
    } else {
        loop(&u, 0, u.n);
    }
    if (!numerics) memset(s->nonfinite, -1, sizeof s->nonfinite);
    if (measure) s->measured = measure;
    commit_targets(s, &tg);
    if (c->attrs->i[GB__OPTIM_I_ADVANCE]) gb__optimizer_advance(s->opt);
    return true;
}

static bool kernel_sgd(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return run_update(c, pick_sgd);
}
static bool kernel_momentum(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return run_update(c, pick_momentum);
}
static bool kernel_adam(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return run_update(c, pick_adam);
}
static bool kernel_rmsprop(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return run_update(c, pick_rmsprop);
}

/* Slots: Momentum's velocity; Adam's m, v; RMSprop's velocity, momentum
 * (when momentum > 0), average_gradient (when centered). Their
 * hyperparameters are named in ops.def. */
#define UPDATE_OP(sym, type_name, kernel_fn)                                             \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = 1,                                                                           \
        .flags = GB_OPF_STATEFUL,                                                             \
        .inputs_doc = "the gradient (the variable's dtype and shape)",                        \
        .infer = infer_update,                                                                \
        .kernel = kernel_fn,                                                                  \
        .written = written_update,                                                            \
    };

UPDATE_OP(apply_gradient_descent, "ResourceApplyGradientDescent", kernel_sgd)
UPDATE_OP(apply_momentum, "ResourceApplyKerasMomentum", kernel_momentum)
UPDATE_OP(apply_adam, "ResourceApplyAdam", kernel_adam)
UPDATE_OP(apply_rmsprop, "ResourceApplyRMSProp", kernel_rmsprop)
