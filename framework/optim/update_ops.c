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

#include "optim/internal.h"

/* The loops below read element i of every array before writing element i,
 * so running them in place (source == destination) is safe; this tells
 * the compiler to vectorize without proving the arrays disjoint. */
#if defined(__clang__)
#define GB_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define GB_IVDEP _Pragma("GCC ivdep")
#else
#define GB_IVDEP
#endif

enum { MAX_ARRAYS = 1 + GB__OPTIM_MAX_SLOTS }; /* the variable, then its slots */

/* One update: the arrays and this step's scalars. */
typedef struct update {
    int64_t n;
    const void *g;
    const void *src[MAX_ARRAYS];
    void *dst[MAX_ARRAYS];
    double lr;     /* this step's learning rate */
    double decay;  /* lr * weight_decay: decoupled decay factor */
    int64_t t;     /* 1-based step number */
    const double *f;
} update;

/* Runs the update over elements [begin, end). */
typedef void (*loop_fn)(const update *u, int64_t begin, int64_t end);

/* ---- the loops, per dtype and variant ----------------------------------------------- */

/* Locals every loop starts with: gradient, old and new variable, and the
 * variable after weight decay (Keras decays before the update). */
#define LOOP_PROLOGUE(T)                                                                      \
    const T *g = (const T *)u->g;                                                             \
    const T *w0 = (const T *)u->src[0];                                                       \
    T *w1 = (T *)u->dst[0];                                                                   \
    const T lr = (T)u->lr, dec = (T)u->decay
#define DECAYED(i) (w0[i] - w0[i] * dec)

#define DEFINE_SGD(T, SUF)                                                                    \
    static void sgd_##SUF(const update *u, int64_t begin, int64_t end) {                      \
        LOOP_PROLOGUE(T);                                                                     \
        GB_IVDEP for (int64_t i = begin; i < end; i++) w1[i] = DECAYED(i) - g[i] * lr;        \
    }

/* velocity = momentum * velocity - lr * g; var += velocity, or with
 * Nesterov var += momentum * velocity - lr * g. */
#define DEFINE_MOMENTUM(T, SUF, NAME, NESTEROV)                                               \
    static void NAME##_##SUF(const update *u, int64_t begin, int64_t end) {                   \
        LOOP_PROLOGUE(T);                                                                     \
        const T *m0 = (const T *)u->src[1];                                                   \
        T *m1 = (T *)u->dst[1];                                                               \
        const T mom = (T)u->f[0];                                                             \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T m = m0[i] * mom - g[i] * lr;                                                    \
            m1[i] = m;                                                                        \
            w1[i] = DECAYED(i) + (NESTEROV ? m * mom - g[i] * lr : m);                        \
        }                                                                                     \
    }

/* m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
 * var -= alpha m / (sqrt(v) + epsilon), alpha carrying the bias correction. */
#define DEFINE_ADAM(T, SUF, SQRT)                                                             \
    static void adam_##SUF(const update *u, int64_t begin, int64_t end) {                     \
        LOOP_PROLOGUE(T);                                                                     \
        const T *m0 = (const T *)u->src[1], *v0 = (const T *)u->src[2];                       \
        T *m1 = (T *)u->dst[1], *v1 = (T *)u->dst[2];                                         \
        const double b1 = u->f[0], b2 = u->f[1];                                              \
        const T alpha = (T)(u->lr * sqrt(1.0 - pow(b2, (double)u->t)) /                       \
                            (1.0 - pow(b1, (double)u->t)));                                   \
        const T c1 = (T)(1.0 - b1), c2 = (T)(1.0 - b2), eps = (T)u->f[2];                     \
        (void)lr;                                                                             \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T m = m0[i] + (g[i] - m0[i]) * c1;                                                \
            T v = v0[i] + (g[i] * g[i] - v0[i]) * c2;                                         \
            m1[i] = m;                                                                        \
            v1[i] = v;                                                                        \
            w1[i] = DECAYED(i) - m * alpha / (SQRT(v) + eps);                                 \
        }                                                                                     \
    }

/* velocity = rho velocity + (1 - rho) g^2; centered: average = rho average
 * + (1 - rho) g, denominator velocity - average^2 + epsilon (else velocity
 * + epsilon); increment = lr g / sqrt(denominator); with momentum
 * mom = momentum mom + increment, var -= mom; else var -= increment. */
#define DEFINE_RMSPROP(T, SUF, SQRT, NAME, CENTERED, MOMENTUM)                                \
    static void NAME##_##SUF(const update *u, int64_t begin, int64_t end) {                   \
        LOOP_PROLOGUE(T);                                                                     \
        const T *v0 = (const T *)u->src[1], *p0 = (const T *)u->src[2],                       \
                *a0 = (const T *)u->src[3];                                                   \
        T *v1 = (T *)u->dst[1], *p1 = (T *)u->dst[2], *a1 = (T *)u->dst[3];                   \
        const T rho = (T)u->f[0], c = (T)(1.0 - u->f[0]), mom = (T)u->f[1];                   \
        const T eps = (T)u->f[2];                                                             \
        (void)p0, (void)p1, (void)a0, (void)a1, (void)mom;                                    \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T v = rho * v0[i] + c * (g[i] * g[i]);                                            \
            v1[i] = v;                                                                        \
            T den = v + eps;                                                                  \
            if (CENTERED) {                                                                   \
                T a = rho * a0[i] + c * g[i];                                                 \
                a1[i] = a;                                                                    \
                den = v - a * a + eps;                                                        \
            }                                                                                 \
            T inc = lr * g[i] / SQRT(den);                                                    \
            if (MOMENTUM) {                                                                   \
                inc = mom * p0[i] + inc;                                                      \
                p1[i] = inc;                                                                  \
            }                                                                                 \
            w1[i] = DECAYED(i) - inc;                                                         \
        }                                                                                     \
    }

#define DEFINE_LOOPS(T, SUF, SQRT)                                                            \
    DEFINE_SGD(T, SUF)                                                                        \
    DEFINE_MOMENTUM(T, SUF, momentum, 0)                                                      \
    DEFINE_MOMENTUM(T, SUF, nesterov, 1)                                                      \
    DEFINE_ADAM(T, SUF, SQRT)                                                                 \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop, 0, 0)                                               \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_mom, 0, 1)                                           \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_ctr, 1, 0)                                           \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_ctr_mom, 1, 1)

DEFINE_LOOPS(float, f32, sqrtf)
DEFINE_LOOPS(double, f64, sqrt)

/* ---- choosing the loop ---------------------------------------------------------------- */

/* Index 0 float32, 1 float64 (infer admits nothing else). */
static int dtype_index(gb_dtype dt) { return dt == GB_F64; }

static loop_fn pick_sgd(const gb_attrs *a, gb_dtype dt) {
    (void)a;
    static const loop_fn loops[2] = {sgd_f32, sgd_f64};
    return loops[dtype_index(dt)];
}

static loop_fn pick_momentum(const gb_attrs *a, gb_dtype dt) {
    static const loop_fn loops[2][2] = {{momentum_f32, nesterov_f32},
                                        {momentum_f64, nesterov_f64}};
    return loops[dtype_index(dt)][a->i[GB__OPTIM_I_FLAG] != 0];
}

static loop_fn pick_adam(const gb_attrs *a, gb_dtype dt) {
    (void)a;
    static const loop_fn loops[2] = {adam_f32, adam_f64};
    return loops[dtype_index(dt)];
}

/* [dtype][centered][momentum] */
static loop_fn pick_rmsprop(const gb_attrs *a, gb_dtype dt) {
    static const loop_fn loops[2][2][2] = {
        {{rmsprop_f32, rmsprop_mom_f32}, {rmsprop_ctr_f32, rmsprop_ctr_mom_f32}},
        {{rmsprop_f64, rmsprop_mom_f64}, {rmsprop_ctr_f64, rmsprop_ctr_mom_f64}},
    };
    return loops[dtype_index(dt)][a->i[GB__OPTIM_I_FLAG] != 0][a->f[1] > 0];
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
static bool open_targets(gb__optim_var *s, update *u, targets *tg) {
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

/* ---- numerics checks ------------------------------------------------------------------------ */

/* With numerics checks on, the new values are scanned block by block
 * while still in cache: the variable and its slots, which the check must
 * see (an Adam v that overflows to Inf leaves the variable finite and
 * stalls it). Scanning them afterwards, one more pass over memory per
 * array, made the checked MLP step's overhead about twice as large. */
enum { SCAN_BLOCK = 2048 };

static void run_scanned(loop_fn loop, const update *u, gb_dtype dt, signed char *nonfinite) {
    for (int k = 0; k < MAX_ARRAYS; k++) nonfinite[k] = u->dst[k] ? 0 : -1;
    for (int64_t b = 0; b < u->n; b += SCAN_BLOCK) {
        int64_t e = b + SCAN_BLOCK < u->n ? b + SCAN_BLOCK : u->n;
        loop(u, b, e);
        for (int k = 0; k < MAX_ARRAYS; k++)
            if (nonfinite[k] == 0 && gb__nonfinite_in(dt, u->dst[k], b, e)) nonfinite[k] = 1;
    }
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

typedef loop_fn (*pick_fn)(const gb_attrs *a, gb_dtype dt);

static bool run_update(const gb_op_call *c, pick_fn pick) {
    gb__optim_var *s = gb__optim_state_of(c);
    if (!s) return false;
    const gb_tensor *grad = c->in[0];
    update u = {.n = grad->size, .g = grad->data, .f = c->attrs->f};
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
    loop_fn loop = pick(c->attrs, grad->dtype);
    if (numerics_on()) {
        run_scanned(loop, &u, grad->dtype, s->nonfinite);
    } else {
        loop(&u, 0, u.n);
        memset(s->nonfinite, -1, sizeof s->nonfinite);
    }
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
