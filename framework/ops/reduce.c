/* ops/reduce.c — reductions: Sum, Mean, Max, Min, Prod, ArgMax, ArgMin.
 *
 * Attributes: Sum/Mean/Max/Min/Prod take i[0] = a bitmask of the reduced
 * axes, already normalized (bit k set: axis k is reduced) and i[1] =
 * keepdims; ArgMax/ArgMin take i[0] = the one normalized axis. The public
 * functions normalize negative axes and reject duplicate or out-of-range
 * ones before dispatching, so every recorded call carries a canonical mask.
 *
 * A plan first simplifies the problem (the kernels, in ops/isa/reduce.c
 * once per ISA level, follow it): size-1 axes are dropped and adjacent
 * axes with the same status (reduced or kept) merged. When the reduced
 * axes then form one block, the input is a [outer, red, inner] array:
 *   inner == 1  rows: each output is a contiguous run (reducing all axes is
 *               the case outer == 1); eight accumulator lanes break the
 *               dependency chain so the loop vectorizes;
 *   inner > 1   columns: each row of `inner` elements is folded into an
 *               accumulator row, vectorized across the row;
 * anything else (reduced axes separated by kept ones) takes the general
 * strided path: odometers over the kept and the outer reduced axes, and
 * the lanes along the innermost reduced run. Float Max/Min lanes fold
 * without the NaN rule and note NaNs in a separate flag, which keeps them
 * vectorized.
 *
 * Accumulation: float32 Sum, Mean and Prod accumulate in double (it costs
 * nothing measurable next to the memory traffic and removes most rounding
 * drift on long rows); float64 in double. Integer Sum and Prod wrap modulo
 * 2^bits as TensorFlow's do (accumulated in uint64_t, so never undefined);
 * integer Mean divides the exact sum with truncation. Max and Min propagate
 * NaN (a NaN anywhere in the group gives NaN), ArgMax/ArgMin return the
 * first NaN, else the first extreme (the smallest index among ties).
 * Reducing zero elements gives 0 (Sum), 1 (Prod), -inf / the lowest
 * integer (Max), +inf / the highest (Min) and NaN (float Mean).
 *
 * Gradients are written with public ops: Sum broadcasts dy back, Mean the
 * same divided by the count, Max/Min share dy equally among the tied
 * extremes (TensorFlow's rule), Prod multiplies dy by the product of the
 * other elements, computed exactly (no division, so zeros are fine) by
 * exclusive prefix and suffix products.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/reduce_kernels.h"

/* ---- the reduction plan --------------------------------------------------------- */


static gb_rplan plan_reduction(const gb_tensor *x, int64_t mask) {
    gb_rplan p = {.count = 1, .nout = 1};
    for (int i = 0; i < x->rank; i++) {
        bool r = (mask >> i) & 1;
        if (r) p.count *= x->shape[i];
        else p.nout *= x->shape[i];
        if (x->shape[i] == 1) continue;
        if (p.rank > 0 && p.reduced[p.rank - 1] == r) {
            p.dims[p.rank - 1] *= x->shape[i];
        } else {
            p.dims[p.rank] = x->shape[i];
            p.reduced[p.rank] = r;
            p.rank++;
        }
    }
    int blocks = 0;
    for (int i = 0; i < p.rank; i++) blocks += p.reduced[i];
    if (x->size == 0 || blocks <= 1) {
        /* Empty input: every output is the empty reduction (red = 0). */
        p.outer = x->size == 0 ? p.nout : 1;
        p.red = x->size == 0 ? 0 : 1;
        p.inner = 1;
        for (int i = 0, seen = 0; x->size && i < p.rank; i++) {
            if (p.reduced[i]) {
                p.red = p.dims[i];
                seen = 1;
            } else if (seen) {
                p.inner *= p.dims[i];
            } else {
                p.outer *= p.dims[i];
            }
        }
    } else {
        p.general = true;
    }
    return p;
}

/* ---- the kernels: ops/isa/reduce.c, one set per ISA level ---------------------------- */

/* ---- Sum, Mean, Max, Min, Prod: infer and kernel ------------------------------------ */

static bool check_dtype(const gb_op_call *c, gb_dtype dt) {
    if (dt == GB_STRING) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: string tensors are not supported", c->def->name);
        return false;
    }
    if (dt != GB_BOOL) return true;
    gb__op_error(c, GB_ERR_DTYPE, "%s: bool tensors are not supported; cast to a number type first",
                 c->def->name);
    return false;
}

/* x's shape with the reduced axes removed, or set to 1 with keepdims. */
static int reduced_shape(const gb_tensor *x, int64_t mask, bool keepdims, int64_t *out) {
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!((mask >> i) & 1)) out[r++] = x->shape[i];
        else if (keepdims) out[r++] = 1;
    }
    return r;
}

static int infer_reduce(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    int64_t mask = c->attrs->i[0];
    if (mask < 0 || (x->rank < 63 && (mask >> x->rank) != 0)) {
        gb__op_error(c, GB_ERR_VALUE, "%s: axes mask 0x%llx names axes beyond rank %d",
                     c->def->name, (unsigned long long)mask, x->rank);
        return -1;
    }
    if (!check_dtype(c, x->dtype)) return -1;
    out[0].dtype = x->dtype;
    out[0].rank = reduced_shape(x, mask, c->attrs->i[1] != 0, out[0].shape);
    return 1;
}

/* Scratch for `n` accumulators of up to 8 bytes; freed by the caller. */
static void *scratch_for(const gb_op_call *c, int64_t n) {
    void *s = malloc((size_t)(n > 0 ? n : 1) * 8);
    if (!s)
        gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory for %lld accumulators", c->def->name,
                     (long long)n);
    return s;
}

static bool kernel_reduce(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    gb_rplan p = plan_reduction(x, c->attrs->i[0]);
    void *scratch = NULL;
    if (!p.general && p.inner > 1 && !(scratch = scratch_for(c, p.inner))) return false;
    GB_ISA_TABLE(gb__reduce_kernels)->reduce[c->op - GB_OP_SUM][x->dtype](x->data, out[0]->data,
                                                                          &p, scratch);
    free(scratch);
    return true;
}

/* ---- gradients ------------------------------------------------------------------ */

/* x's shape with 1 on the reduced axes (the keepdims shape). */
static void keep_shape(const gb_tensor *x, int64_t mask, int64_t *out) {
    reduced_shape(x, mask, true, out);
}

/* dy reshaped to keepdims form, so it broadcasts against x. */
static gb_tensor *dy_keepdims(const gb_grad_ctx *ctx) {
    const gb_tensor *x = ctx->inputs[0];
    int64_t ks[GB_MAX_RANK];
    keep_shape(x, ctx->attrs->i[0], ks);
    return gb_reshape(ctx->dys[0], x->rank, ks);
}

/* Elements per reduction group; -1 when a reduced dim is unknown (a traced
 * shape with -1). */
static int64_t reduced_count(const gb_tensor *x, int64_t mask) {
    int64_t n = 1;
    for (int i = 0; i < x->rank; i++) {
        if (!((mask >> i) & 1)) continue;
        if (x->shape[i] < 0) return -1;
        n *= x->shape[i];
    }
    return n;
}

static gb_tensor *reduce_by_mask(gb_op_id op, gb_tensor *x, int64_t mask, bool keepdims);

/* dy spread back over x's shape (which a traced graph may know only when
 * it runs: gb__broadcast_like). */
static bool grad_sum(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = gb__broadcast_like(dy_keepdims(ctx), ctx->inputs[0]);
    return dx[0] != NULL;
}

/* The sum's gradient over the count. A count unknown while tracing (a
 * reduced dim of -1, the batch of a mean loss) is computed when the graph
 * runs: the sum of ones spread like x. */
static bool grad_mean(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0];
    int64_t mask = ctx->attrs->i[0], n = reduced_count(x, mask);
    if (n >= 0) {
        gb_tensor *scaled = gb_mul_scalar(dy_keepdims(ctx), n ? 1.0 / (double)n : 0.0);
        dx[0] = gb__broadcast_like(scaled, x);
    } else {
        gb_tensor *ones = gb__broadcast_like(gb_scalar(x->dtype, 1.0), x);
        dx[0] = gb_div(gb__broadcast_like(dy_keepdims(ctx), x),
                       reduce_by_mask(GB_OP_SUM, ones, mask, true));
    }
    return dx[0] != NULL;
}

/* TensorFlow's rule: dy is shared equally by the elements equal to the
 * extreme, dx = dy * mask / count(mask). */
static bool grad_extreme(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0];
    int64_t mask = ctx->attrs->i[0], ks[GB_MAX_RANK];
    keep_shape(x, mask, ks);
    gb_tensor *y = gb_reshape(ctx->outputs[0], x->rank, ks);
    gb_tensor *hit = gb_cast(gb_equal(x, y), x->dtype);
    gb_tensor *count = reduce_by_mask(GB_OP_SUM, hit, mask, true);
    dx[0] = gb_div(gb_mul(hit, dy_keepdims(ctx)), count);
    return dx[0] != NULL;
}

/* s shifted by d along axis 1 of [M, K] towards higher indices (or lower
 * when `reverse`), the vacated places filled with 1. */
static gb_tensor *shift_in_ones(gb_tensor *s, int64_t d, bool reverse) {
    int64_t m = s->shape[0], k = s->shape[1];
    int64_t begin[2] = {0, reverse ? d : 0}, size[2] = {m, k - d};
    int64_t pads[4] = {0, 0, reverse ? 0 : d, reverse ? d : 0};
    return gb_pad(gb_slice(s, begin, 2, size, 2), pads, 4, 1.0);
}

/* Exclusive cumulative product along axis 1 of x [M, K]: element k is the
 * product of x[:, j] for j < k (j > k when reverse). Hillis-Steele
 * doubling: log2(K) multiplications, no division, made of differentiable
 * ops so higher derivatives stay exact. */
static gb_tensor *exclusive_cumprod(gb_tensor *x, bool reverse) {
    int64_t k = x->shape[1];
    gb_tensor *s = shift_in_ones(x, 1, reverse);
    for (int64_t d = 1; s && d < k; d *= 2) s = gb_mul(s, shift_in_ones(s, d, reverse));
    return s;
}

/* For each element of x, the product of the other elements of its
 * reduction group (the reduced axes given by mask). */
static gb_tensor *product_of_others(gb_tensor *x, int64_t mask) {
    /* Kept axes first, reduced axes last: x becomes [M, K], one group a row. */
    int64_t perm[GB_MAX_RANK], inv[GB_MAX_RANK], tshape[GB_MAX_RANK];
    int n = 0;
    for (int reduced = 0; reduced < 2; reduced++)
        for (int i = 0; i < x->rank; i++)
            if ((int)((mask >> i) & 1) == reduced) {
                tshape[n] = x->shape[i];
                perm[n++] = i;
            }
    for (int i = 0; i < x->rank; i++) inv[perm[i]] = i;
    int64_t k = reduced_count(x, mask);
    int64_t mk[2] = {x->size / k, k};
    gb_tensor *flat = gb_reshape(gb_transpose(x, perm, x->rank), 2, mk);
    gb_tensor *others = gb_mul(exclusive_cumprod(flat, false), exclusive_cumprod(flat, true));
    return gb_transpose(gb_reshape(others, x->rank, tshape), inv, x->rank);
}

static bool grad_prod(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0];
    if (x->size == 0) {
        dx[0] = gb__fill_like(x, 0.0);
    } else {
        dx[0] = gb_mul(product_of_others(x, ctx->attrs->i[0]), dy_keepdims(ctx));
    }
    return dx[0] != NULL;
}

/* ---- descriptors -------------------------------------------------------------------- */

#define REDUCE_OP(sym, type_name, grad_fn)                                                    \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = 1,                                                                           \
        .infer = infer_reduce,                                                                \
        .kernel = kernel_reduce,                                                              \
        .grad = grad_fn,                                                                      \
    };
REDUCE_OP(sum, "Sum", grad_sum)
REDUCE_OP(mean, "Mean", grad_mean)
REDUCE_OP(max, "Max", grad_extreme)
REDUCE_OP(min, "Min", grad_extreme)
REDUCE_OP(prod, "Prod", grad_prod)

/* ---- ArgMax, ArgMin ------------------------------------------------------------------ */

static int infer_arg(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    int axis = (int)c->attrs->i[0];
    if (axis < 0 || axis >= x->rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: axis %d is out of range for a rank-%d tensor",
                     c->def->name, axis, x->rank);
        return -1;
    }
    if (!check_dtype(c, x->dtype)) return -1;
    if (x->shape[axis] == 0) {
        char s[128];
        gb__op_error(c, GB_ERR_VALUE, "%s: axis %d of shape %s is empty; there is no extreme",
                     c->def->name, axis, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return -1;
    }
    out[0].dtype = GB_I64;
    out[0].rank = reduced_shape(x, (int64_t)1 << axis, false, out[0].shape);
    return 1;
}

static bool kernel_arg(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    int axis = (int)c->attrs->i[0];
    gb_rplan p = {.outer = 1, .red = x->shape[axis], .inner = 1};
    for (int i = 0; i < axis; i++) p.outer *= x->shape[i];
    for (int i = axis + 1; i < x->rank; i++) p.inner *= x->shape[i];
    if (x->size == 0) return true;
    void *scratch = NULL;
    if (p.inner > 1 && !(scratch = scratch_for(c, p.inner))) return false;
    const gb_reduce_table *k = GB_ISA_TABLE(gb__reduce_kernels);
    (c->op == GB_OP_ARGMAX ? k->argmax : k->argmin)[x->dtype](x->data, out[0]->data, &p, scratch);
    free(scratch);
    return true;
}

#define ARG_OP(sym, type_name)                                                                \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = 1,                                                                           \
        .infer = infer_arg,                                                                   \
        .kernel = kernel_arg,                                                                 \
        .grad = NULL, /* integer output: nothing flows back */                                \
    };
ARG_OP(argmax, "ArgMax")
ARG_OP(argmin, "ArgMin")

/* ---- public functions --------------------------------------------------------------- */

static gb_tensor *reduce_by_mask(gb_op_id op, gb_tensor *x, int64_t mask, bool keepdims) {
    gb_attrs a = {.ni = 2, .i = {mask, keepdims}};
    return gb__op1(op, &x, 1, &a);
}

/* The bitmask of axes[naxes] for a rank-`rank` tensor (naxes 0: every
 * axis), or -1 after an error naming the bad axis. */
static int64_t axes_mask(gb_op_id op, const int64_t *axes, int naxes, int rank) {
    gb_op_call c = {.op = op, .def = gb_op_table[op]};
    if (naxes < 0 || (naxes > 0 && !axes)) {
        gb__op_error(&c, GB_ERR_VALUE, "%s: bad axes list (%d axes%s)", c.def->name, naxes,
                     axes ? "" : ", NULL array");
        return -1;
    }
    if (naxes == 0) return rank ? (int64_t)((1ull << rank) - 1) : 0;
    int64_t mask = 0;
    for (int k = 0; k < naxes; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
        if (a < 0 || a >= rank) {
            gb__op_error(&c, GB_ERR_VALUE,
                         "%s: axis %lld is out of range for a rank-%d tensor (valid: %d..%d)",
                         c.def->name, (long long)axes[k], rank, -rank, rank - 1);
            return -1;
        }
        if ((mask >> a) & 1) {
            gb__op_error(&c, GB_ERR_VALUE, "%s: axis %lld is given more than once (as %lld)",
                         c.def->name, (long long)a, (long long)axes[k]);
            return -1;
        }
        mask |= (int64_t)1 << a;
    }
    return mask;
}

static gb_tensor *reduce(gb_op_id op, gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    if (!x) return reduce_by_mask(op, x, 0, keepdims); /* keeps the earlier error */
    int64_t mask = axes_mask(op, axes, naxes, x->rank);
    return mask < 0 ? NULL : reduce_by_mask(op, x, mask, keepdims);
}

gb_tensor *gb_reduce_sum(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    return reduce(GB_OP_SUM, x, axes, naxes, keepdims);
}
gb_tensor *gb_reduce_mean(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    return reduce(GB_OP_MEAN, x, axes, naxes, keepdims);
}
gb_tensor *gb_reduce_max(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    return reduce(GB_OP_MAX, x, axes, naxes, keepdims);
}
gb_tensor *gb_reduce_min(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    return reduce(GB_OP_MIN, x, axes, naxes, keepdims);
}
gb_tensor *gb_reduce_prod(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    return reduce(GB_OP_PROD, x, axes, naxes, keepdims);
}

static gb_tensor *arg_extreme(gb_op_id op, gb_tensor *x, int64_t axis) {
    gb_attrs a = {.ni = 1};
    if (x) {
        gb_op_call c = {.op = op, .def = gb_op_table[op]};
        int n = gb__norm_axis(&c, axis, x->rank);
        if (n < 0) return NULL;
        a.i[0] = n;
    }
    return gb__op1(op, &x, 1, &a);
}

gb_tensor *gb_argmax(gb_tensor *x, int64_t axis) { return arg_extreme(GB_OP_ARGMAX, x, axis); }
gb_tensor *gb_argmin(gb_tensor *x, int64_t axis) { return arg_extreme(GB_OP_ARGMIN, x, axis); }

/* ---- composites ---------------------------------------------------------------------- */

/* log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max,
 * held constant (stop_gradient) so the gradient is exactly softmax(x).
 * An infinite max is replaced by 0 as in TensorFlow, so an all -inf group
 * gives -inf and a +inf element gives +inf instead of NaN. */
gb_tensor *gb_reduce_logsumexp(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    gb_tensor *raw = gb_reduce_max(x, axes, naxes, true);
    if (!raw) return NULL;
    gb_tensor *zero = gb_scalar(raw->dtype, 0.0);
    gb_tensor *finite = gb_equal(gb_sub(raw, raw), zero); /* inf-inf is NaN */
    gb_tensor *m = gb_stop_gradient(gb_where(finite, raw, zero));
    gb_tensor *sum = gb_reduce_sum(gb_exp(gb_sub(x, m)), axes, naxes, true);
    gb_tensor *lse = gb_add(gb_log(sum), m);
    if (!lse || keepdims) return lse;
    int64_t shape[GB_MAX_RANK];
    int64_t mask = axes_mask(GB_OP_MAX, axes, naxes, x->rank);
    return gb_reshape(lse, reduced_shape(x, mask, false, shape), shape);
}

/* Population variance, mean((x - mean(x))^2): divides by N, as
 * tf.math.reduce_variance (there is no ddof / Bessel correction). */
gb_tensor *gb_reduce_variance(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims) {
    if (x && !gb_dtype_is_float(x->dtype)) {
        gb__error(GB_ERR_DTYPE, "ReduceVariance",
                  "reduce_variance: the input must be float32 or float64, got %s",
                  gb_dtype_name(x->dtype));
        return NULL;
    }
    gb_tensor *mean = gb_reduce_mean(x, axes, naxes, true);
    return gb_reduce_mean(gb_square(gb_sub(x, mean)), axes, naxes, keepdims);
}
