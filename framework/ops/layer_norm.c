/* ops/layer_norm.c — LayerNorm and LayerNormGrad: layer normalization
 * over the last axis as one op each way (LayerNormalization's call).
 *
 * Written from primitives, a layer norm is nine ops forward (mean,
 * centre, square, mean, add, rsqrt, scale, gamma, beta) and about twenty
 * backward, each a pass over the whole [rows, C] tensor; in the char LM's
 * train step they were a sixth of the time. Here each row is read once
 * into cache and finished there: forward its mean, its (biased) variance
 * from the centred values (the same two-pass formula as the composed ops,
 * so float64 results agree with them), then y = (x - mean) * rstd * gamma
 * + beta; backward, with xhat = (x - mean) * rstd and g = dy * gamma,
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
 * and gamma's and beta's gradients summed over the rows: each chunk of
 * rows into its own buffer, the chunks added in order at the end (chunks
 * are fixed, not per worker, so the sums do not depend on the threads).
 *
 * LayerNorm: inputs x [.., C], gamma [C], beta [C]; attribute epsilon;
 * outputs y [.., C] and, for the backward pass, each row's mean and rstd
 * (x's shape without its last axis) — no gradient flows through those
 * two, as through BlockLSTM's gates. LayerNormGrad: inputs dy, x, gamma,
 * mean, rstd; outputs dx, dgamma, dbeta; it has no gradient of its own
 * (a second derivative through a layer norm is refused by name).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ops/internal.h"
#include "ops/lane_sum.h"

enum { A_EPSILON = 0 };
enum { LN_X, LN_GAMMA, LN_BETA };
enum { G_DY, G_X, G_GAMMA, G_MEAN, G_RSTD };

/* ---- shapes ------------------------------------------------------------------------ */

/* t is a vector [C] of x's dtype (C: x's last dim; -1 dims match). */
static bool check_vector(const gb_op_call *c, const gb_tensor *x, const gb_tensor *t, const char *what) {
    char a[96], b[96];
    if (t->dtype != x->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: %s is %s but x is %s", c->def->name, what, gb_dtype_name(t->dtype),
                     gb_dtype_name(x->dtype));
        return false;
    }
    if (t->rank != 1 || !gb__dims_match(t->shape[0], x->shape[x->rank - 1])) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s %s must be a vector of x %s's last axis", c->def->name, what,
                     gb__shape_fmt(t->rank, t->shape, a, sizeof a), gb__shape_fmt(x->rank, x->shape, b, sizeof b));
        return false;
    }
    return true;
}

static bool check_x(const gb_op_call *c, const gb_tensor *x) {
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: x must be float32 or float64, got %s", c->def->name,
                     gb_dtype_name(x->dtype));
        return false;
    }
    if (x->rank < 1) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: x must have rank >= 1 (features on the last axis), got a scalar",
                     c->def->name);
        return false;
    }
    return true;
}

/* out: x's shape, or without its last axis (the per-row statistics). */
static void describe(gb_out_desc *out, const gb_tensor *x, bool rows) {
    out->dtype = x->dtype;
    out->rank = x->rank - rows;
    memcpy(out->shape, x->shape, (size_t)out->rank * sizeof(int64_t));
}

static int infer_layer_norm(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[LN_X];
    double eps = c->attrs->f[A_EPSILON];
    if (!check_x(c, x) || !check_vector(c, x, c->in[LN_GAMMA], "gamma") ||
        !check_vector(c, x, c->in[LN_BETA], "beta"))
        return -1;
    if (!(eps >= 0 && isfinite(eps))) {
        gb__op_error(c, GB_ERR_VALUE, "%s: epsilon must be finite and >= 0, got %g", c->def->name, eps);
        return -1;
    }
    describe(&out[0], x, false);
    describe(&out[1], x, true);
    describe(&out[2], x, true);
    return 3;
}

/* t has the shape of x without its last axis. */
static bool check_rows(const gb_op_call *c, const gb_tensor *x, const gb_tensor *t, const char *what) {
    char a[96], b[96];
    if (t->dtype != x->dtype || !gb__shapes_match(t->rank, t->shape, x->rank - 1, x->shape)) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s %s %s must be %s of x %s without its last axis", c->def->name, what,
                     gb_dtype_name(t->dtype), gb__shape_fmt(t->rank, t->shape, a, sizeof a),
                     gb_dtype_name(x->dtype), gb__shape_fmt(x->rank, x->shape, b, sizeof b));
        return false;
    }
    return true;
}

static int infer_layer_norm_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *dy = c->in[G_DY], *x = c->in[G_X];
    if (!check_x(c, x) || !check_vector(c, x, c->in[G_GAMMA], "gamma") ||
        !check_rows(c, x, c->in[G_MEAN], "mean") || !check_rows(c, x, c->in[G_RSTD], "rstd"))
        return -1;
    if (dy->dtype != x->dtype || !gb__shapes_match(dy->rank, dy->shape, x->rank, x->shape)) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: dy %s %s must be x's %s %s", c->def->name, gb_dtype_name(dy->dtype),
                     gb__shape_fmt(dy->rank, dy->shape, a, sizeof a), gb_dtype_name(x->dtype),
                     gb__shape_fmt(x->rank, x->shape, b, sizeof b));
        return -1;
    }
    describe(&out[0], x, false);
    describe(&out[1], c->in[G_GAMMA], false);
    describe(&out[2], c->in[G_GAMMA], false);
    return 3;
}

/* ---- kernels ----------------------------------------------------------------------- */

/* One job over rows of n columns. Backward, chunk k (rows [k * chunk,
 * (k + 1) * chunk)) sums gamma's and beta's gradients into its two rows
 * of `partial`. */
typedef struct ln_job {
    const void *x, *gamma, *beta, *dy;
    void *y, *mean, *rstd, *dx;
    double eps;
    int64_t n;
    int64_t rows, chunk;    /* backward: rows per chunk */
    void *partial;          /* backward: [chunks][2][n] */
    bool f64;
} ln_job;

/* The row's sum (ops/lane_sum.h) and its centred squares, each in LANES
 * running partials, so the loops vectorize. */
enum { LANES = GB__SUM_LANES };
#define DEFINE_LAYER_NORM(T, SUFFIX)                                                                \
    static T centred_squares_##SUFFIX(const T *restrict x, T mean, int64_t n) {                      \
        T lane[LANES] = {0}, s = 0;                                                                  \
        int64_t j = 0;                                                                               \
        for (; j + LANES <= n; j += LANES)                                                           \
            for (int l = 0; l < LANES; l++) lane[l] += (x[j + l] - mean) * (x[j + l] - mean);        \
        for (int l = 0; l < LANES; l++) s += lane[l];                                                \
        for (; j < n; j++) s += (x[j] - mean) * (x[j] - mean);                                       \
        return s;                                                                                    \
    }                                                                                                \
    static void forward_##SUFFIX(const ln_job *jb, int64_t r0, int64_t r1) {                         \
        const int64_t n = jb->n;                                                                     \
        const T *restrict gamma = jb->gamma, *restrict beta = jb->beta;                              \
        for (int64_t r = r0; r < r1; r++) {                                                          \
            const T *restrict x = (const T *)jb->x + r * n;                                          \
            T *restrict y = (T *)jb->y + r * n;                                                      \
            T mean = gb__lane_sum_##SUFFIX(x, n) / (T)n;                                                      \
            T rstd = (T)1 / sqrt(centred_squares_##SUFFIX(x, mean, n) / (T)n + (T)jb->eps);          \
            for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mean) * rstd * gamma[j] + beta[j];        \
            ((T *)jb->mean)[r] = mean;                                                               \
            ((T *)jb->rstd)[r] = rstd;                                                               \
        }                                                                                            \
    }                                                                                                \
    static void backward_##SUFFIX(const ln_job *jb, int64_t k) {                                     \
        const int64_t n = jb->n, r1 = (k + 1) * jb->chunk < jb->rows ? (k + 1) * jb->chunk : jb->rows; \
        const T *restrict gamma = jb->gamma;                                                         \
        T *restrict dgamma = (T *)jb->partial + k * 2 * n, *restrict dbeta = dgamma + n;             \
        for (int64_t r = k * jb->chunk; r < r1; r++) {                                               \
            const T *restrict x = (const T *)jb->x + r * n, *restrict dy = (const T *)jb->dy + r * n; \
            T *restrict dx = (T *)jb->dx + r * n;                                                    \
            const T mean = ((const T *)jb->mean)[r], rstd = ((const T *)jb->rstd)[r];                \
            T lg[LANES] = {0}, lgx[LANES] = {0}, sg = 0, sgx = 0;                                    \
            int64_t j = 0;                                                                           \
            for (; j + LANES <= n; j += LANES)                                                       \
                for (int l = 0; l < LANES; l++) {                                                    \
                    T xhat = (x[j + l] - mean) * rstd, g = dy[j + l] * gamma[j + l];                 \
                    lg[l] += g, lgx[l] += g * xhat;                                                  \
                    dgamma[j + l] += dy[j + l] * xhat, dbeta[j + l] += dy[j + l];                    \
                }                                                                                    \
            for (int l = 0; l < LANES; l++) sg += lg[l], sgx += lgx[l];                              \
            for (; j < n; j++) {                                                                     \
                T xhat = (x[j] - mean) * rstd, g = dy[j] * gamma[j];                                 \
                sg += g, sgx += g * xhat;                                                            \
                dgamma[j] += dy[j] * xhat, dbeta[j] += dy[j];                                        \
            }                                                                                        \
            const T a = sg / (T)n, b = sgx / (T)n;                                                   \
            for (j = 0; j < n; j++)                                                                  \
                dx[j] = rstd * (dy[j] * gamma[j] - a - (x[j] - mean) * rstd * b);                    \
        }                                                                                            \
    }
DEFINE_LAYER_NORM(float, f32)
DEFINE_LAYER_NORM(double, f64)

static void forward_part(void *ctx, int64_t r0, int64_t r1, int worker) {
    (void)worker;
    const ln_job *j = ctx;
    if (j->f64)
        forward_f64(j, r0, r1);
    else
        forward_f32(j, r0, r1);
}

static void backward_part(void *ctx, int64_t k0, int64_t k1, int worker) {
    (void)worker;
    const ln_job *j = ctx;
    for (int64_t k = k0; k < k1; k++)
        if (j->f64)
            backward_f64(j, k);
        else
            backward_f32(j, k);
}

/* The per-row statistics of rows with no features: 0/0, as the mean of
 * an empty axis is. */
static void fill_nan(gb_tensor *t) {
    for (int64_t i = 0; i < t->size; i++)
        if (t->dtype == GB_F64)
            ((double *)t->data)[i] = NAN;
        else
            ((float *)t->data)[i] = NAN;
}

/* Rows per part: enough values that a part pays for waking a worker. */
enum { PARALLEL_MIN_VALUES = 1 << 15 };
static int64_t grain(int64_t n) { return PARALLEL_MIN_VALUES / (n > 0 ? n : 1) + 1; }

static bool kernel_layer_norm(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[LN_X];
    int64_t n = x->shape[x->rank - 1], rows = n ? x->size / n : 0;
    ln_job j = {.x = x->data, .gamma = c->in[LN_GAMMA]->data, .beta = c->in[LN_BETA]->data,
                .y = out[0]->data, .mean = out[1]->data, .rstd = out[2]->data,
                .eps = c->attrs->f[A_EPSILON], .n = n, .f64 = x->dtype == GB_F64};
    if (n == 0) {
        fill_nan(out[1]);
        fill_nan(out[2]);
        return true;
    }
    if (rows > 0) gb__parallel_for(rows, grain(n), forward_part, &j);
    return true;
}

static bool kernel_layer_norm_grad(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[G_X];
    int64_t n = x->shape[x->rank - 1], rows = n ? x->size / n : 0;
    size_t es = gb_dtype_size(x->dtype);
    memset(out[1]->data, 0, (size_t)n * es);
    memset(out[2]->data, 0, (size_t)n * es);
    if (rows == 0) return true;
    int64_t chunk = grain(n), chunks = (rows + chunk - 1) / chunk;
    ln_job j = {.x = x->data, .gamma = c->in[G_GAMMA]->data, .dy = c->in[G_DY]->data,
                .mean = c->in[G_MEAN]->data, .rstd = c->in[G_RSTD]->data, .dx = out[0]->data, .n = n,
                .rows = rows, .chunk = chunk, .f64 = x->dtype == GB_F64,
                .partial = calloc((size_t)(chunks * 2 * n), es)};
    if (!j.partial) {
        gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory for %lld sums of %lld features", c->def->name,
                     (long long)(chunks * 2), (long long)n);
        return false;
    }
    gb__parallel_for(chunks, 1, backward_part, &j);
    for (int64_t k = 0; k < chunks * 2 * n; k++) {
        gb_tensor *to = out[1 + k / n % 2];
        if (j.f64)
            ((double *)to->data)[k % n] += ((const double *)j.partial)[k];
        else
            ((float *)to->data)[k % n] += ((const float *)j.partial)[k];
    }
    free(j.partial);
    return true;
}

/* ---- gradient ---------------------------------------------------------------------- */

/* One LayerNormGrad for x, gamma and beta; mean and rstd are the backward
 * pass's own (their gradients are not read). */
static bool grad_layer_norm(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[5] = {ctx->dys[0], ctx->inputs[LN_X], ctx->inputs[LN_GAMMA], ctx->outputs[1],
                        ctx->outputs[2]};
    gb_tensor *g[3];
    if (gb__dispatch(GB_OP_LAYER_NORM_GRAD, in, 5, NULL, g) != 3) return false;
    for (int i = 0; i < 3; i++) dx[i] = ctx->needs_grad[i] ? g[i] : NULL;
    return true;
}

const gb_op_def gb_opdef_layer_norm = {
    .name = "LayerNorm",
    .arity = 3,
    .inputs_doc = "x [.., C], gamma [C], beta [C]; outputs y, and each row's mean and rstd [..]",
    .infer = infer_layer_norm,
    .kernel = kernel_layer_norm,
    .grad = grad_layer_norm,
};

const gb_op_def gb_opdef_layer_norm_grad = {
    .name = "LayerNormGrad",
    .arity = 5,
    .inputs_doc = "dy [.., C], x [.., C], gamma [C], LayerNorm's mean and rstd [..]; outputs dx, dgamma, "
                  "dbeta",
    .infer = infer_layer_norm_grad,
    .kernel = kernel_layer_norm_grad,
};

/* ---- for the layer ---------------------------------------------------------------------- */

gb_tensor *gb__layer_norm(gb_tensor *x, gb_tensor *gamma, gb_tensor *beta, double epsilon) {
    gb_attrs a = {.f = {epsilon}};
    gb_tensor *in[3] = {x, gamma, beta}, *out[3];
    return gb__dispatch(GB_OP_LAYER_NORM, in, 3, &a, out) == 3 ? out[0] : NULL;
}
