/* ops/softmax.c — Softmax, LogSoftmax and the two fused softmax cross-entropy
 * losses (sparse integer labels, dense label distributions).
 *
 * All four subtract the row maximum before exponentiating, so large
 * logits never overflow: log-sum-exp = m + log(sum(exp(x - m))). The
 * losses are fused (one pass per row computes the loss without
 * materializing the softmax) and have one output, the per-example loss.
 * Their gradients are written with public ops (softmax - one_hot, scaled
 * by the incoming gradient), so they are themselves differentiable and
 * second derivatives work.
 *
 * Softmax's gradient over the last axis is one SoftmaxGrad op (a pass
 * per row, ops/softmax_rows.h), MaskedSoftmax's too (ops/masked_softmax.c).
 *
 * Attributes: Softmax/LogSoftmax i[0] axis; the losses take none.
 * Inputs of the losses: (labels, logits), as the public functions.
 */
#include <math.h>
#include <stdio.h>

#include "core/parallel.h"
#include "ops/internal.h"
#include "ops/softmax_rows.h"

enum { A_AXIS = 0 };

/* ---- Softmax / LogSoftmax ------------------------------------------------------- */

static int infer_softmax(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: logits must be float32 or float64, got %s", c->def->name,
                     gb_dtype_name(x->dtype));
        return -1;
    }
    if (x->rank < 1) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: logits must have rank >= 1, got a scalar", c->def->name);
        return -1;
    }
    if (gb__norm_axis(c, c->attrs->i[A_AXIS], x->rank) < 0) return -1;
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    memcpy(out[0].shape, x->shape, (size_t)x->rank * sizeof(int64_t));
    return 1;
}

/* x viewed as [outer, n, inner] around the softmax axis. */
typedef struct axis_view {
    int64_t outer, n, inner;
} axis_view;

static axis_view view_around(const gb_tensor *x, int axis) {
    axis_view v = {1, x->shape[axis], 1};
    for (int d = 0; d < axis; d++) v.outer *= x->shape[d];
    for (int d = axis + 1; d < x->rank; d++) v.inner *= x->shape[d];
    return v;
}


/* One row (n values, stride `st`): y = softmax(x) or log_softmax(x). A
 * contiguous softmax row is the vector kernel's (ops/isa/softmax_rows.c,
 * compiled per ISA level); strided rows and log-softmax rows stay here. */
#define DEFINE_SOFTMAX_ROW(T, SUFFIX, EXP, LOG)                                                    \
    static void softmax_row_##SUFFIX(const T *x, T *y, int64_t n, int64_t st, bool log_out) {      \
        if (st == 1 && !log_out) {                                                                 \
            gb__softmax_row_##SUFFIX(x, NULL, y, n);                                               \
            return;                                                                                \
        }                                                                                          \
        T m = -INFINITY;                                                                           \
        for (int64_t j = 0; j < n; j++) m = x[j * st] > m ? x[j * st] : m;                         \
        T s = 0;                                                                                   \
        if (log_out) {                                                                             \
            for (int64_t j = 0; j < n; j++) s += EXP(x[j * st] - m);                               \
            T lse = m + LOG(s);                                                                    \
            for (int64_t j = 0; j < n; j++) y[j * st] = x[j * st] - lse;                           \
            return;                                                                                \
        }                                                                                          \
        for (int64_t j = 0; j < n; j++) s += (y[j * st] = EXP(x[j * st] - m));                     \
        T inv = 1 / s;                                                                             \
        for (int64_t j = 0; j < n; j++) y[j * st] *= inv;                                          \
    }                                                                                              \
    /* Rows [r0, r1) of the [outer, inner] rows. */                                                \
    static void softmax_rows_##SUFFIX(const T *x, T *y, axis_view v, bool log_out, int64_t r0,     \
                                      int64_t r1) {                                                \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            int64_t base = r / v.inner * v.n * v.inner + r % v.inner;                              \
            softmax_row_##SUFFIX(x + base, y + base, v.n, v.inner, log_out);                       \
        }                                                                                          \
    }
DEFINE_SOFTMAX_ROW(float, f32, expf, logf)
DEFINE_SOFTMAX_ROW(double, f64, exp, log)

/* Rows split across the pool when there are enough values to pay. */
typedef struct softmax_job {
    const void *x;
    void *y;
    axis_view v;
    bool log_out, f32;
} softmax_job;

static void softmax_part(void *ctx, int64_t r0, int64_t r1, int worker) {
    (void)worker;
    const softmax_job *j = ctx;
    if (j->f32)
        softmax_rows_f32(j->x, j->y, j->v, j->log_out, r0, r1);
    else
        softmax_rows_f64(j->x, j->y, j->v, j->log_out, r0, r1);
}

enum { PARALLEL_MIN_VALUES = 1 << 15 };

static bool kernel_softmax_any(const gb_op_call *c, gb_tensor **out, bool log_out) {
    const gb_tensor *x = c->in[0];
    axis_view v = view_around(x, gb__norm_axis(c, c->attrs->i[A_AXIS], x->rank));
    softmax_job job = {x->data, out[0]->data, v, log_out, x->dtype == GB_F32};
    int64_t rows = v.outer * v.inner;
    if (x->size >= PARALLEL_MIN_VALUES && rows > 1)
        gb__parallel_for(rows, PARALLEL_MIN_VALUES / 2 / (v.n ? v.n : 1) + 1, softmax_part, &job);
    else
        softmax_part(&job, 0, rows, 0);
    return true;
}

static bool kernel_softmax(const gb_op_call *c, gb_tensor **out) {
    return kernel_softmax_any(c, out, false);
}

static bool kernel_log_softmax(const gb_op_call *c, gb_tensor **out) {
    return kernel_softmax_any(c, out, true);
}

static int64_t grad_axis(const gb_grad_ctx *ctx) {
    int64_t axis = ctx->attrs->i[A_AXIS];
    return axis < 0 ? axis + ctx->inputs[0]->rank : axis;
}

/* y = softmax(x): dx = y * (dy - sum(dy * y, axis)); over the last axis
 * one SoftmaxGrad (a pass per row), over another the same from ops. */
static bool grad_softmax(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *y = ctx->outputs[0], *dy = ctx->dys[0];
    int64_t axis = grad_axis(ctx);
    if (axis == y->rank - 1) {
        dx[0] = gb__softmax_grad(y, dy);
        return dx[0] != NULL;
    }
    gb_tensor *dot = gb_reduce_sum(gb_mul(dy, y), &axis, 1, true);
    dx[0] = gb_mul(y, gb_sub(dy, dot));
    return dx[0] != NULL;
}

/* y = log_softmax(x): dx = dy - exp(y) * sum(dy, axis) */
static bool grad_log_softmax(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *y = ctx->outputs[0], *dy = ctx->dys[0];
    int64_t axis = grad_axis(ctx);
    dx[0] = gb_sub(dy, gb_mul(gb_exp(y), gb_reduce_sum(dy, &axis, 1, true)));
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_softmax = {
    .name = "Softmax",
    .arity = 1,
    .infer = infer_softmax,
    .kernel = kernel_softmax,
    .grad = grad_softmax,
};

const gb_op_def gb_opdef_log_softmax = {
    .name = "LogSoftmax",
    .arity = 1,
    .infer = infer_softmax,
    .kernel = kernel_log_softmax,
    .grad = grad_log_softmax,
};

/* ---- SoftmaxGrad: the backward of a softmax over the last axis ------------------------- */

/* (y, dy): a softmax's output and its gradient, the same shape. */
static int infer_softmax_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *y = c->in[0], *dy = c->in[1];
    char a[96], b[96];
    if (!gb_dtype_is_float(y->dtype) || dy->dtype != y->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: y and dy must both be float32 or both float64, got %s and %s",
                     c->def->name, gb_dtype_name(y->dtype), gb_dtype_name(dy->dtype));
        return -1;
    }
    if (y->rank < 1 || !gb__shapes_match(y->rank, y->shape, dy->rank, dy->shape)) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: y %s and dy %s must have the same shape, of rank >= 1",
                     c->def->name, gb__shape_fmt(y->rank, y->shape, a, sizeof a),
                     gb__shape_fmt(dy->rank, dy->shape, b, sizeof b));
        return -1;
    }
    out[0].dtype = y->dtype;
    out[0].rank = y->rank;
    for (int d = 0; d < y->rank; d++) out[0].shape[d] = gb__dims_merge(y->shape[d], dy->shape[d]);
    return 1;
}

typedef struct softmax_grad_job {
    const void *y, *dy;
    void *dx;
    int64_t n;
    bool f32;
} softmax_grad_job;

static void softmax_grad_part(void *ctx, int64_t r0, int64_t r1, int worker) {
    (void)worker;
    const softmax_grad_job *j = ctx;
    for (int64_t r = r0; r < r1; r++)
        if (j->f32)
            gb__softmax_grad_row_f32((const float *)j->y + r * j->n, (const float *)j->dy + r * j->n,
                                     (float *)j->dx + r * j->n, j->n);
        else
            gb__softmax_grad_row_f64((const double *)j->y + r * j->n, (const double *)j->dy + r * j->n,
                                     (double *)j->dx + r * j->n, j->n);
}

static bool kernel_softmax_grad(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *y = c->in[0];
    int64_t n = y->shape[y->rank - 1], rows = n ? y->size / n : 0;
    softmax_grad_job j = {y->data, c->in[1]->data, out[0]->data, n, y->dtype == GB_F32};
    if (rows > 0) gb__parallel_for(rows, PARALLEL_MIN_VALUES / 2 / (n ? n : 1) + 1, softmax_grad_part, &j);
    return true;
}

/* z = y * (g - s), s = sum(g * y) over the last axis; with u = dz:
 *   dg = y * (u - sum(u * y)) = SoftmaxGrad(y, u)
 *   dy = u * (g - s) - g * sum(u * y) */
static bool grad_softmax_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *y = ctx->inputs[0], *g = ctx->inputs[1], *u = ctx->dys[0];
    if (ctx->needs_grad[0]) {
        gb_tensor *s = gb_reduce_sum(gb_mul(g, y), GB_AXES(-1), true);
        gb_tensor *uy = gb_reduce_sum(gb_mul(u, y), GB_AXES(-1), true);
        dx[0] = gb_sub(gb_mul(u, gb_sub(g, s)), gb_mul(g, uy));
    }
    if (ctx->needs_grad[1]) dx[1] = gb__softmax_grad(y, u);
    return gb_ok();
}

const gb_op_def gb_opdef_softmax_grad = {
    .name = "SoftmaxGrad",
    .arity = 2,
    .inputs_doc = "y (a softmax over the last axis), dy",
    .infer = infer_softmax_grad,
    .kernel = kernel_softmax_grad,
    .grad = grad_softmax_grad,
};

gb_tensor *gb__softmax_grad(gb_tensor *y, gb_tensor *dy) {
    gb_tensor *in[2] = {y, dy};
    return gb__op1(GB_OP_SOFTMAX_GRAD, in, 2, NULL);
}

gb_tensor *gb_softmax(gb_tensor *logits, int64_t axis) {
    gb_attrs a = {.ni = 1};
    a.i[A_AXIS] = axis;
    return gb__op1(GB_OP_SOFTMAX, &logits, 1, &a);
}

gb_tensor *gb_log_softmax(gb_tensor *logits, int64_t axis) {
    gb_attrs a = {.ni = 1};
    a.i[A_AXIS] = axis;
    return gb__op1(GB_OP_LOG_SOFTMAX, &logits, 1, &a);
}

/* ---- cross-entropy losses --------------------------------------------------------- */

static bool check_logits(const gb_op_call *c, const gb_tensor *logits) {
    char s[96];
    if (!gb_dtype_is_float(logits->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: logits must be float32 or float64, got %s", c->def->name,
                     gb_dtype_name(logits->dtype));
        return false;
    }
    if (logits->rank < 1 || logits->shape[logits->rank - 1] == 0) { /* -1: known per call */
        gb__op_error(c, GB_ERR_SHAPE, "%s: logits %s need a last (class) axis of size >= 1",
                     c->def->name, gb__shape_fmt(logits->rank, logits->shape, s, sizeof s));
        return false;
    }
    return true;
}

/* The loss has the logits' shape without the class axis, each dim known
 * when either input knows it. */
static int loss_shape(const gb_tensor *labels, const gb_tensor *logits, gb_out_desc *out) {
    out[0].dtype = logits->dtype;
    out[0].rank = logits->rank - 1;
    for (int i = 0; i < out[0].rank; i++)
        out[0].shape[i] = gb__dims_merge(logits->shape[i], labels->shape[i]);
    return 1;
}

/* labels [d0..dk] int32/int64, logits [d0..dk, C] */
static int infer_sparse_xent(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *labels = c->in[0], *logits = c->in[1];
    if (!check_logits(c, logits)) return -1;
    if (labels->dtype != GB_I32 && labels->dtype != GB_I64) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: labels must be int32 or int64, got %s", c->def->name,
                     gb_dtype_name(labels->dtype));
        return -1;
    }
    bool fits = gb__shapes_match(labels->rank, labels->shape, logits->rank - 1, logits->shape);
    if (!fits) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: labels %s must have the shape of logits %s without its last axis",
                     c->def->name, gb__shape_fmt(labels->rank, labels->shape, a, sizeof a),
                     gb__shape_fmt(logits->rank, logits->shape, b, sizeof b));
        return -1;
    }
    return loss_shape(labels, logits, out);
}

/* labels and logits [d0..dk, C], same dtype */
static int infer_dense_xent(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *labels = c->in[0], *logits = c->in[1];
    if (!check_logits(c, logits)) return -1;
    if (labels->dtype != logits->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: labels are %s but logits are %s", c->def->name,
                     gb_dtype_name(labels->dtype), gb_dtype_name(logits->dtype));
        return -1;
    }
    if (!gb__shapes_match(labels->rank, labels->shape, logits->rank, logits->shape)) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: labels %s and logits %s must have the same shape",
                     c->def->name, gb__shape_fmt(labels->rank, labels->shape, a, sizeof a),
                     gb__shape_fmt(logits->rank, logits->shape, b, sizeof b));
        return -1;
    }
    return loss_shape(labels, logits, out);
}

/* Row kernels: lse(x) once, then the loss. A label out of [0, C) stops
 * the kernel with an error naming it and its row. */
#define DEFINE_XENT(T, SUFFIX, EXP, LOG)                                                           \
    static T lse_##SUFFIX(const T *x, int64_t n) {                                                 \
        T m = -INFINITY, s = 0;                                                                    \
        for (int64_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;                                   \
        for (int64_t j = 0; j < n; j++) s += EXP(x[j] - m);                                        \
        return m + LOG(s);                                                                         \
    }                                                                                              \
    static bool sparse_xent_##SUFFIX(const gb_op_call *c, const gb_tensor *labels, const T *x,     \
                                     int64_t rows, int64_t n, T *loss) {                           \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            int64_t l = labels->dtype == GB_I32 ? ((const int32_t *)labels->data)[r]               \
                                                : ((const int64_t *)labels->data)[r];              \
            if (l < 0 || l >= n) {                                                                 \
                gb__op_error(c, GB_ERR_VALUE,                                                      \
                             "%s: label %lld at row %lld is out of range [0, %lld)", c->def->name, \
                             (long long)l, (long long)r, (long long)n);                            \
                return false;                                                                      \
            }                                                                                      \
            loss[r] = lse_##SUFFIX(x + r * n, n) - x[r * n + l];                                   \
        }                                                                                          \
        return true;                                                                               \
    }                                                                                              \
    static void dense_xent_##SUFFIX(const T *p, const T *x, int64_t rows, int64_t n, T *loss) {    \
        for (int64_t r = 0; r < rows; r++) {                                                       \
            const T *xr = x + r * n, *pr = p + r * n;                                              \
            T lse = lse_##SUFFIX(xr, n), s = 0;                                                    \
            for (int64_t j = 0; j < n; j++) s += pr[j] * (lse - xr[j]);                            \
            loss[r] = s;                                                                           \
        }                                                                                          \
    }
DEFINE_XENT(float, f32, expf, logf)
DEFINE_XENT(double, f64, exp, log)

static bool kernel_sparse_xent(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *labels = c->in[0], *logits = c->in[1];
    int64_t n = logits->shape[logits->rank - 1], rows = labels->size;
    if (logits->dtype == GB_F32)
        return sparse_xent_f32(c, labels, logits->data, rows, n, out[0]->data);
    return sparse_xent_f64(c, labels, logits->data, rows, n, out[0]->data);
}

static bool kernel_dense_xent(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *labels = c->in[0], *logits = c->in[1];
    int64_t n = logits->shape[logits->rank - 1], rows = out[0]->size;
    if (logits->dtype == GB_F32)
        dense_xent_f32(labels->data, logits->data, rows, n, out[0]->data);
    else
        dense_xent_f64(labels->data, logits->data, rows, n, out[0]->data);
    return true;
}

/* d loss / d logits = softmax(logits) - onehot(labels), times dy per row. */
static bool grad_sparse_xent(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *labels = ctx->inputs[0], *logits = ctx->inputs[1];
    int64_t classes = logits->shape[logits->rank - 1];
    gb_tensor *onehot = gb_one_hot(labels, classes, 1.0, 0.0, logits->dtype);
    gb_tensor *diff = gb_sub(gb_softmax(logits, -1), onehot);
    dx[0] = NULL;
    dx[1] = gb_mul(diff, gb_expand_dims(ctx->dys[0], -1));
    return dx[1] != NULL;
}

/* loss = sum_j p_j (lse - x_j):
 *   d/dx = softmax(x) * sum_j p_j - p   (sum_j p_j is 1 for distributions)
 *   d/dp = -log_softmax(x)
 * each times dy per row. */
static bool grad_dense_xent(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *p = ctx->inputs[0], *x = ctx->inputs[1];
    gb_tensor *dy = gb_expand_dims(ctx->dys[0], -1);
    gb_tensor *mass = gb_reduce_sum(p, GB_AXES(-1), true);
    dx[0] = gb_mul(gb_neg(gb_log_softmax(x, -1)), dy);
    dx[1] = gb_mul(gb_sub(gb_mul(gb_softmax(x, -1), mass), p), dy);
    return dx[0] && dx[1];
}

const gb_op_def gb_opdef_sparse_softmax_xent = {
    .name = "SparseSoftmaxCrossEntropyWithLogits",
    .arity = 2,
    .inputs_doc = "labels int32/int64 [..], logits [.., C]",
    .infer = infer_sparse_xent,
    .kernel = kernel_sparse_xent,
    .grad = grad_sparse_xent,
};

const gb_op_def gb_opdef_softmax_xent = {
    .name = "SoftmaxCrossEntropyWithLogits",
    .arity = 2,
    .inputs_doc = "labels [.., C], logits [.., C]",
    .infer = infer_dense_xent,
    .kernel = kernel_dense_xent,
    .grad = grad_dense_xent,
};

gb_tensor *gb_sparse_softmax_cross_entropy_with_logits(gb_tensor *labels, gb_tensor *logits) {
    gb_tensor *in[2] = {labels, logits};
    return gb__op1(GB_OP_SPARSE_SOFTMAX_XENT, in, 2, NULL);
}

gb_tensor *gb_softmax_cross_entropy_with_logits(gb_tensor *labels, gb_tensor *logits) {
    gb_tensor *in[2] = {labels, logits};
    return gb__op1(GB_OP_SOFTMAX_XENT, in, 2, NULL);
}
