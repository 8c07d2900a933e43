/* ops/shape_index.c — ops driven by integer indices: GatherV2, ScatterAdd, OneHot.
 *
 * GatherV2 picks slices of params along an axis (TensorFlow's gather with
 * batch_dims 0); an index outside [0, n) is an error the kernel reports
 * with the index, its position and the valid range (as TF on CPU). Its
 * gradient is ScatterAdd, which adds slices into zeros at the indices
 * (repeated indices accumulate) and whose gradient with respect to the
 * updates is GatherV2 again, so gather nests for higher derivatives.
 * ScatterAdd has no public function. OneHot expands integer indices into a
 * new last axis; out-of-range indices give all-`off` rows, as in TF.
 */
#include <stdio.h>

#include "ops/shape_util.h"

/* ---- GatherV2 and ScatterAdd ------------------------------------------------------ */

/* params viewed as [outer, n, inner] around `axis`, and the index count. */
typedef struct gather_geom {
    int64_t outer, n, inner, nidx;
} gather_geom;

static gather_geom geom_of(int rank, const int64_t *shape, int axis, const gb_tensor *indices) {
    gather_geom g = {1, shape[axis], 1, indices->size};
    for (int i = 0; i < axis; i++) g.outer *= shape[i];
    for (int i = axis + 1; i < rank; i++) g.inner *= shape[i];
    return g;
}

static bool is_index_dtype(gb_dtype dt) { return dt == GB_I32 || dt == GB_I64; }

static bool check_indices_dtype(const gb_op_call *c, const gb_tensor *indices) {
    if (is_index_dtype(indices->dtype)) return true;
    gb__op_error(c, GB_ERR_DTYPE, "%s: indices must be int32 or int64, got %s", c->def->name,
                 gb_dtype_name(indices->dtype));
    return false;
}

/* Writes shape[:axis] + indices.shape + shape[axis+1:] into out. */
static bool gathered_shape(const gb_op_call *c, int rank, const int64_t *shape, int axis,
                           const gb_tensor *indices, gb_out_desc *out) {
    int r = rank - 1 + indices->rank;
    if (r > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: the result would have rank %d; the limit is %d",
                     c->def->name, r, GB_MAX_RANK);
        return false;
    }
    int k = 0;
    for (int i = 0; i < axis; i++) out->shape[k++] = shape[i];
    for (int i = 0; i < indices->rank; i++) out->shape[k++] = indices->shape[i];
    for (int i = axis + 1; i < rank; i++) out->shape[k++] = shape[i];
    out->rank = r;
    return true;
}

static inline int64_t raw_index(const gb_tensor *indices, int64_t j) {
    return indices->dtype == GB_I32 ? ((const int32_t *)indices->data)[j]
                                    : ((const int64_t *)indices->data)[j];
}

/* Checks every index against [0, n); the error names the first bad one
 * and the valid range. Kernels check before writing anything. */
static bool check_indices(const gb_op_call *c, const gb_tensor *indices, int64_t n, int axis) {
    for (int64_t j = 0; j < indices->size; j++) {
        int64_t v = raw_index(indices, j);
        if (v < 0 || v >= n) {
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: indices[%lld] = %lld is out of range: valid indices along axis %d "
                         "are [0, %lld)",
                         c->def->name, (long long)j, (long long)v, axis, (long long)n);
            return false;
        }
    }
    return true;
}

static int infer_gather(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *params = c->in[0], *indices = c->in[1];
    if (!check_indices_dtype(c, indices)) return -1;
    int axis = gb__norm_axis(c, c->attrs->i[0], params->rank);
    if (axis < 0 || !gathered_shape(c, params->rank, params->shape, axis, indices, &out[0]))
        return -1;
    out[0].dtype = params->dtype;
    return 1;
}

static bool kernel_gather(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *params = c->in[0], *indices = c->in[1];
    int axis = (int)(c->attrs->i[0] < 0 ? c->attrs->i[0] + params->rank : c->attrs->i[0]);
    gather_geom g = geom_of(params->rank, params->shape, axis, indices);
    size_t chunk = (size_t)g.inner * gb_dtype_size(params->dtype);
    char *dst = out[0]->data;
    if (!check_indices(c, indices, g.n, axis)) return false;
    for (int64_t o = 0; o < g.outer; o++) {
        const char *src = (const char *)params->data + (size_t)(o * g.n) * chunk;
        for (int64_t j = 0; j < g.nidx; j++, dst += chunk)
            memcpy(dst, src + (size_t)raw_index(indices, j) * chunk, chunk);
    }
    return true;
}

static gb_tensor *scatter_add(gb_tensor *indices, gb_tensor *updates, int axis, int rank,
                              const int64_t *shape);

static bool grad_gather(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *params = ctx->inputs[0];
    int axis = (int)(ctx->attrs->i[0] < 0 ? ctx->attrs->i[0] + params->rank : ctx->attrs->i[0]);
    dx[0] = scatter_add(ctx->inputs[1], ctx->dys[0], axis, params->rank, params->shape);
    dx[1] = NULL;
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_gather = {
    .name = "GatherV2",
    .arity = 2,
    .inputs_doc = "params, indices (int32/int64)",
    .infer = infer_gather,
    .kernel = kernel_gather,
    .grad = grad_gather,
};

gb_tensor *gb_gather(gb_tensor *params, gb_tensor *indices, int64_t axis) {
    gb_attrs a = {.ni = 1, .i = {axis}};
    gb_tensor *in[2] = {params, indices};
    return gb__op1(GB_OP_GATHER, in, 2, &a);
}

/* ScatterAdd: out (zeros of the given shape) gets updates added at the
 * indices along axis; repeated indices accumulate. */
static int infer_scatter_add(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *indices = c->in[0], *updates = c->in[1];
    int axis = (int)c->attrs->i[0], rank = (int)c->attrs->i[1];
    if (!check_indices_dtype(c, indices)) return -1;
    if (rank < 1 || rank > GB_MAX_RANK || axis < 0 || axis >= rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: bad output rank %d or axis %d", c->def->name, rank,
                     axis);
        return -1;
    }
    if (!gb_dtype_is_float(updates->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: updates must be float32 or float64, got %s",
                     c->def->name, gb_dtype_name(updates->dtype));
        return -1;
    }
    const int64_t *shape = c->attrs->i + 2;
    if (shape[axis] < 0) {
        char a[128];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: the output shape %s must have a known size along axis %d (the axis "
                     "the indices address)",
                     c->def->name, gb__shape_fmt(rank, shape, a, sizeof a), axis);
        return -1;
    }
    gb_out_desc want;
    if (!gathered_shape(c, rank, shape, axis, indices, &want)) return -1;
    if (!gb__shapes_match(want.rank, want.shape, updates->rank, updates->shape)) {
        char a[128], b[128];
        gb__op_error(c, GB_ERR_SHAPE, "%s: updates have shape %s but the indices need %s",
                     c->def->name, gb__shape_fmt(updates->rank, updates->shape, a, sizeof a),
                     gb__shape_fmt(want.rank, want.shape, b, sizeof b));
        return -1;
    }
    /* Another unknown output dim (the gradient of a gather from params
     * with one) is the updates' dim there, known when the graph runs. */
    set_desc(&out[0], updates->dtype, rank, shape);
    for (int d = 0; d < rank; d++)
        if (d != axis && shape[d] < 0)
            out[0].shape[d] = updates->shape[d < axis ? d : d - 1 + indices->rank];
    return 1;
}

#define SCATTER_ROWS(T)                                                                       \
    do {                                                                                      \
        T *y_ = out[0]->data;                                                                 \
        const T *u_ = updates->data;                                                          \
        for (int64_t o = 0; o < g.outer; o++)                                                 \
            for (int64_t j = 0; j < g.nidx; j++) {                                            \
                T *d_ = y_ + (o * g.n + raw_index(indices, j)) * g.inner;                     \
                const T *s_ = u_ + (o * g.nidx + j) * g.inner;                                \
                for (int64_t k = 0; k < g.inner; k++) d_[k] += s_[k];                          \
            }                                                                                 \
    } while (0)

static bool kernel_scatter_add(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *indices = c->in[0], *updates = c->in[1];
    int axis = (int)c->attrs->i[0];
    gather_geom g = geom_of(out[0]->rank, out[0]->shape, axis, indices);
    if (!check_indices(c, indices, g.n, axis)) return false;
    memset(out[0]->data, 0, gb_nbytes(out[0]));
    switch (updates->dtype) {
    case GB_F32: SCATTER_ROWS(float); break;
    case GB_F64: SCATTER_ROWS(double); break;
    default: assert(!"ScatterAdd: infer admits float updates only");
    }
    return true;
}

static bool grad_scatter_add(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = NULL;
    dx[1] = gb_gather(ctx->dys[0], ctx->inputs[0], (int)ctx->attrs->i[0]);
    return dx[1] != NULL;
}

const gb_op_def gb_opdef_scatter_add = {
    .name = "ScatterAdd",
    .arity = 2,
    .inputs_doc = "indices (int32/int64), updates",
    .infer = infer_scatter_add,
    .kernel = kernel_scatter_add,
    .grad = grad_scatter_add,
};

static gb_tensor *scatter_add(gb_tensor *indices, gb_tensor *updates, int axis, int rank,
                              const int64_t *shape) {
    gb_attrs a = {.ni = 2 + rank, .i = {axis, rank}};
    for (int i = 0; i < rank; i++) a.i[2 + i] = shape[i];
    gb_tensor *in[2] = {indices, updates};
    return gb__op1(GB_OP_SCATTER_ADD, in, 2, &a);
}

/* ---- OneHot ------------------------------------------------------------------------ */

static int infer_one_hot(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *indices = c->in[0];
    int64_t depth = c->attrs->i[0], dt = c->attrs->i[1];
    if (!gb_dtype_is_integer(indices->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: indices must be an integer dtype, got %s",
                     c->def->name, gb_dtype_name(indices->dtype));
        return -1;
    }
    if (!gb_dtype_is_numeric((gb_dtype)dt)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: invalid output dtype %lld (%s)", c->def->name,
                     (long long)dt, gb_dtype_name((gb_dtype)dt));
        return -1;
    }
    if (depth < 0) {
        gb__op_error(c, GB_ERR_VALUE, "%s: depth %lld must be >= 0", c->def->name,
                     (long long)depth);
        return -1;
    }
    if (indices->rank + 1 > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: the result would have rank %d; the limit is %d",
                     c->def->name, indices->rank + 1, GB_MAX_RANK);
        return -1;
    }
    set_desc(&out[0], (gb_dtype)dt, indices->rank, indices->shape);
    out[0].shape[indices->rank] = depth;
    out[0].rank = indices->rank + 1;
    return 1;
}

/* An index outside [0, depth) gives a row of `off` values, as in TF. */
static bool kernel_one_hot(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *indices = c->in[0];
    gb_tensor *y = out[0];
    int64_t depth = c->attrs->i[0];
    fill_value(y, c->attrs->f[1]);
    for (int64_t j = 0; j < indices->size; j++) {
        double v = gb__load(indices->dtype, indices->data, j);
        if (v >= 0 && v < (double)depth) gb__store(y->dtype, y->data, j * depth + (int64_t)v, c->attrs->f[0]);
    }
    return true;
}

const gb_op_def gb_opdef_one_hot = {
    .name = "OneHot",
    .arity = 1,
    .inputs_doc = "integer indices",
    .infer = infer_one_hot,
    .kernel = kernel_one_hot,
    .grad = NULL, /* integer input: nothing to differentiate */
};

gb_tensor *gb_one_hot(gb_tensor *indices, int64_t depth, double on, double off, gb_dtype dt) {
    gb_attrs a = {.ni = 2, .i = {depth, (int64_t)dt}, .f = {on, off}};
    return gb__op1(GB_OP_ONE_HOT, &indices, 1, &a);
}
