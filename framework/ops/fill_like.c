/* ops/fill_like.c — ZerosLike and OnesLike: a tensor of x's dtype and
 * shape, filled.
 *
 * gb_zeros_like and gb_ones_like (defined here, as they may need the op)
 * fill a new tensor directly when x's shape
 * is known (eagerly, or traced with a static shape, where the value
 * becomes a constant of the graph). A traced tensor with an unknown dim
 * (-1, from an input signature) has no size yet: then they are these ops,
 * which take the shape from x when the graph runs. The result does not
 * depend on x's values, so no gradient flows to x.
 */
#include "ops/internal.h"

static int infer_like(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    memcpy(out[0].shape, x->shape, (size_t)x->rank * sizeof *x->shape);
    return 1;
}

static bool fill(gb_tensor *t, double v) {
    if (v == 0.0) {
        memset(t->data, 0, (size_t)t->size * gb_dtype_size(t->dtype));
        return true;
    }
    for (int64_t i = 0; i < t->size; i++) gb__store(t->dtype, t->data, i, v);
    return true;
}

static bool kernel_zeros(const gb_op_call *c, gb_tensor **out) {
    (void)c;
    return fill(out[0], 0.0);
}

static bool kernel_ones(const gb_op_call *c, gb_tensor **out) {
    (void)c;
    return fill(out[0], 1.0);
}

/* A constant of x: nothing flows back to it. */
static bool grad_none(const gb_grad_ctx *g, gb_tensor **dx) {
    (void)g;
    dx[0] = NULL;
    return true;
}

const gb_op_def gb_opdef_zeros_like = {
    .name = "ZerosLike",
    .arity = 1,
    .attrs_doc = "none",
    .infer = infer_like,
    .kernel = kernel_zeros,
    .grad = grad_none,
};

const gb_op_def gb_opdef_ones_like = {
    .name = "OnesLike",
    .arity = 1,
    .attrs_doc = "none",
    .infer = infer_like,
    .kernel = kernel_ones,
    .grad = grad_none,
};

/* ---- the public functions ---------------------------------------------------------------- */

static gb_tensor *like(gb_tensor *t, gb_op_id op, double v) {
    if (!t) return NULL;
    if (t->size < 0) return gb__op_unary(op, t); /* traced, an unknown dim */
    return gb_fill(t->dtype, t->rank, t->shape, v);
}

gb_tensor *gb_zeros_like(gb_tensor *t) { return like(t, GB_OP_ZEROS_LIKE, 0.0); }

gb_tensor *gb_ones_like(gb_tensor *t) { return like(t, GB_OP_ONES_LIKE, 1.0); }
