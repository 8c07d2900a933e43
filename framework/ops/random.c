/* ops/random.c — seeded random tensors (RandomUniform, RandomStandardNormal,
 * TruncatedNormal) and dropout built on them.
 *
 * The generators are counter-based: element i is a pure function of
 * (seed, i) through gb__uniform01, so the same seed gives the same tensor
 * bit for bit, in any order, eagerly or traced, and no hidden generator
 * state exists to be shared between threads. Normals use Box-Muller on
 * pairs of uniforms; truncated normals re-draw (with fresh counters)
 * values beyond two standard deviations, as TensorFlow does.
 *
 * Everything is in the attributes:
 *   i[0] dtype, i[1] seed (the uint64 bit pattern), i[2] rank,
 *   i[3 .. 3+rank) the shape; f[0], f[1] minval/maxval (uniform) or
 *   mean/stddev (normals).
 * An optional input, a shape donor, gives the dims the shape leaves -1:
 * noise shaped like a tensor known only when a graph runs (dropout in a
 * function traced for a -1 batch). Tapes never see through them.
 */
#include <math.h>
#include <stdio.h>

#include "ops/internal.h"

enum { A_DTYPE = 0, A_SEED = 1, A_RANK = 2, A_SHAPE = 3 };

/* Counter layout of truncated normals: attempt k of element i uses
 * counters 2*(i + k*n) and 2*(i + k*n) + 1, distinct for every (i, k).
 * The acceptance rate is 95.4%, so 64 attempts never all fail in practice;
 * the last one is clamped rather than looping forever. */
enum { TRUNC_MAX_ATTEMPTS = 64 };

/* ---- inference ------------------------------------------------------------------ */

static bool dtype_allowed(const gb_op_call *c, gb_dtype dt) {
    if (dt == GB_F32 || dt == GB_F64) return true;
    return c->op == GB_OP_RANDOM_UNIFORM && (dt == GB_I32 || dt == GB_I64);
}

/* An integer draw is ceil(minval) + floor(u * (ceil(maxval) - ceil(minval))):
 * both ends must be values of the type, and their difference an int64. */
static bool int_bounds_fit(gb_dtype dt, double lo, double hi) {
    const double top = dt == GB_I32 ? 0x1p31 : 0x1p63;
    return lo >= -top && hi < top && ceil(hi) - ceil(lo) < 0x1p63;
}

static bool check_params(const gb_op_call *c, gb_dtype dt) {
    double p0 = c->attrs->f[0], p1 = c->attrs->f[1];
    if (!isfinite(p0) || !isfinite(p1)) {
        gb__op_error(c, GB_ERR_VALUE, "%s: parameters must be finite, got %g and %g", c->def->name,
                     p0, p1);
        return false;
    }
    if (c->op == GB_OP_RANDOM_UNIFORM) {
        /* Floats may have an empty range (all minval); integers may not. */
        bool integer = gb_dtype_is_integer(dt);
        if (integer ? !(p1 > p0) : !(p1 >= p0)) {
            gb__op_error(c, GB_ERR_VALUE, "%s: need minval %s maxval, got minval %g, maxval %g",
                         c->def->name, integer ? "<" : "<=", p0, p1);
            return false;
        }
        if (integer && !int_bounds_fit(dt, p0, p1)) {
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: %s bounds must lie within the type and span less than 2^63, "
                         "got minval %g, maxval %g",
                         c->def->name, gb_dtype_name(dt), p0, p1);
            return false;
        }
    } else if (p1 < 0) {
        gb__op_error(c, GB_ERR_VALUE, "%s: stddev must be >= 0, got %g", c->def->name, p1);
        return false;
    }
    return true;
}

static int infer_random(const gb_op_call *c, gb_out_desc *out) {
    const gb_attrs *a = c->attrs;
    gb_dtype dt = (gb_dtype)a->i[A_DTYPE];
    int64_t rank = a->i[A_RANK];
    if ((unsigned)dt >= GB_DTYPE_COUNT || !dtype_allowed(c, dt)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: dtype %s is not supported (use float32 or float64%s)",
                     c->def->name, gb_dtype_name(dt),
                     c->op == GB_OP_RANDOM_UNIFORM ? ", int32 or int64" : "");
        return -1;
    }
    if (rank < 0 || rank > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: rank %lld is outside 0..%d", c->def->name,
                     (long long)rank, GB_MAX_RANK);
        return -1;
    }
    const gb_tensor *like = c->nin == 1 ? c->in[0] : NULL;
    if (c->nin > 1 || (like && like->rank != rank)) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: takes no input or a shape donor of rank %lld",
                     c->def->name, (long long)rank);
        return -1;
    }
    for (int d = 0; d < rank; d++) {
        int64_t dim = a->i[A_SHAPE + d];
        if (like && dim == -1) {
            dim = like->shape[d];
        } else if (dim < 0) {
            char buf[128];
            gb__op_error(c, GB_ERR_SHAPE, "%s: negative dimension in shape %s", c->def->name,
                         gb__shape_fmt((int)rank, a->i + A_SHAPE, buf, sizeof buf));
            return -1;
        }
        out[0].shape[d] = dim;
    }
    if (!check_params(c, dt)) return -1;
    out[0].dtype = dt;
    out[0].rank = (int)rank;
    return 1;
}

/* ---- kernels ---------------------------------------------------------------------- */

/* Stores v as element i of a float32 or float64 tensor. */
static inline void store_f(gb_tensor *t, int64_t i, double v) {
    if (t->dtype == GB_F32)
        ((float *)t->data)[i] = (float)v;
    else
        ((double *)t->data)[i] = v;
}

static bool kernel_uniform(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *t = out[0];
    uint64_t seed = (uint64_t)c->attrs->i[A_SEED];
    double lo = c->attrs->f[0], hi = c->attrs->f[1], span = hi - lo;
    if (t->dtype == GB_F32) {
        float *p = t->data, top = nextafterf((float)hi, -INFINITY);
        for (int64_t i = 0; i < t->size; i++) {
            float v = (float)(lo + span * gb__uniform01(seed, (uint64_t)i));
            p[i] = hi > lo && v >= (float)hi ? top : v;
        }
    } else if (t->dtype == GB_F64) {
        double *p = t->data;
        for (int64_t i = 0; i < t->size; i++) p[i] = lo + span * gb__uniform01(seed, (uint64_t)i);
    } else {
        /* Integers: uniform in [ceil(minval), maxval) as TF's int variant. */
        int64_t ilo = (int64_t)ceil(lo), n = (int64_t)ceil(hi) - ilo;
        if (n < 1) n = 1;
        for (int64_t i = 0; i < t->size; i++) {
            int64_t v = ilo + (int64_t)(gb__uniform01(seed, (uint64_t)i) * (double)n);
            gb__store(t->dtype, t->data, i, (double)v);
        }
    }
    return true;
}

/* The standard normal pair (cos, sin) from uniforms at counters 2p, 2p+1. */
static inline void box_muller(uint64_t seed, uint64_t p, double *z0, double *z1) {
    double u1 = 1.0 - gb__uniform01(seed, 2 * p); /* (0, 1]: log stays finite */
    double u2 = gb__uniform01(seed, 2 * p + 1);
    double r = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
    *z0 = r * cos(th);
    *z1 = r * sin(th);
}

static bool kernel_normal(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *t = out[0];
    uint64_t seed = (uint64_t)c->attrs->i[A_SEED];
    double mean = c->attrs->f[0], sd = c->attrs->f[1];
    for (int64_t i = 0; i < t->size; i += 2) {
        double z0, z1;
        box_muller(seed, (uint64_t)i / 2, &z0, &z1);
        store_f(t, i, mean + sd * z0);
        if (i + 1 < t->size) store_f(t, i + 1, mean + sd * z1);
    }
    return true;
}

static bool kernel_truncated(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *t = out[0];
    uint64_t seed = (uint64_t)c->attrs->i[A_SEED], n = (uint64_t)t->size;
    double mean = c->attrs->f[0], sd = c->attrs->f[1];
    for (uint64_t i = 0; i < n; i++) {
        double z = 0, unused;
        for (uint64_t k = 0; k < TRUNC_MAX_ATTEMPTS; k++) {
            box_muller(seed, i + k * n, &z, &unused);
            if (fabs(z) <= 2.0) break;
        }
        if (fabs(z) > 2.0) z = copysign(2.0, z);
        store_f(t, (int64_t)i, mean + sd * z);
    }
    return true;
}

#define RANDOM_OP(sym, type_name, kernel_fn, params)                                               \
    const gb_op_def gb_opdef_##sym = {                                                             \
        .name = type_name,                                                                         \
        .arity = -1,                                                                               \
        .flags = GB_OPF_RANDOM | GB_OPF_STATEFUL | GB_OPF_NO_RECORD,                               \
        .inputs_doc = "input 0 (optional): a shape donor for the shape's -1 dims",                 \
        .infer = infer_random,                                                                     \
        .kernel = kernel_fn,                                                                       \
        .grad = NULL,                                                                              \
    };
RANDOM_OP(random_uniform, "RandomUniform", kernel_uniform, "minval, maxval")
RANDOM_OP(random_normal, "RandomStandardNormal", kernel_normal, "mean, stddev")
RANDOM_OP(truncated_normal, "TruncatedNormal", kernel_truncated, "mean, stddev")

/* ---- public API ---------------------------------------------------------------------- */

/* The call of a random op; with a shape donor (like: NULL for none), the
 * dims of dims that are -1 come from it. */
static gb_tensor *random_call(gb_op_id op, gb_dtype dt, int rank, const int64_t *dims, double p0,
                              double p1, uint64_t seed, gb_tensor *like) {
    gb_attrs a = {.f = {p0, p1}};
    a.i[A_DTYPE] = dt;
    a.i[A_SEED] = (int64_t)seed;
    a.i[A_RANK] = rank;
    if (rank > 0 && !dims) {
        gb__error(GB_ERR_SHAPE, gb_op_type_name(op), "%s: rank %d but no dims given",
                  gb_op_type_name(op), rank);
        return NULL;
    }
    for (int d = 0; d < rank && d < GB_MAX_RANK; d++) a.i[A_SHAPE + d] = dims[d];
    a.ni = A_SHAPE + (rank > 0 && rank <= GB_MAX_RANK ? rank : 0);
    return gb__op1(op, &like, like ? 1 : 0, &a);
}

static gb_tensor *random_op(gb_op_id op, gb_dtype dt, int rank, const int64_t *dims, double p0,
                            double p1, uint64_t seed) {
    return random_call(op, dt, rank, dims, p0, p1, seed, NULL);
}

gb_tensor *gb_random_uniform(gb_dtype dt, int rank, const int64_t *dims, double minval,
                             double maxval, uint64_t seed) {
    return random_op(GB_OP_RANDOM_UNIFORM, dt, rank, dims, minval, maxval, seed);
}

gb_tensor *gb_random_normal(gb_dtype dt, int rank, const int64_t *dims, double mean, double stddev,
                            uint64_t seed) {
    return random_op(GB_OP_RANDOM_NORMAL, dt, rank, dims, mean, stddev, seed);
}

gb_tensor *gb_truncated_normal(gb_dtype dt, int rank, const int64_t *dims, double mean,
                               double stddev, uint64_t seed) {
    return random_op(GB_OP_TRUNCATED_NORMAL, dt, rank, dims, mean, stddev, seed);
}

/* ---- dropout --------------------------------------------------------------------------- */

/* x * mask / (1 - rate) where mask keeps an element when its uniform draw
 * is >= rate. Built from ops so the gradient (through Mul) comes free and
 * the graph shows what happened. */
gb_tensor *gb_dropout(gb_tensor *x, double rate, uint64_t seed) {
    if (!x) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "Dropout", "dropout: input is NULL");
        return NULL;
    }
    if (!(rate >= 0.0 && rate < 1.0)) {
        gb__error(GB_ERR_VALUE, "Dropout", "dropout: rate must be in [0, 1), got %g", rate);
        return NULL;
    }
    if (!gb_dtype_is_float(x->dtype)) {
        gb__error(GB_ERR_DTYPE, "Dropout", "dropout: x must be float32 or float64, got %s",
                  gb_dtype_name(x->dtype));
        return NULL;
    }
    if (rate == 0.0) return x;
    /* x lends its shape when a traced graph knows it only when it runs. */
    bool known = gb__shape_size(x->rank, x->shape) >= 0;
    gb_tensor *u = random_call(GB_OP_RANDOM_UNIFORM, x->dtype, x->rank, x->shape, 0.0, 1.0, seed,
                               known ? NULL : x);
    gb_tensor *keep = gb_greater_equal(u, gb_scalar(x->dtype, rate));
    gb_tensor *scale = gb_mul_scalar(gb_cast(keep, x->dtype), 1.0 / (1.0 - rate));
    return gb_mul(x, scale);
}
