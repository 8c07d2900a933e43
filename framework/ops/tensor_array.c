/* ops/tensor_array.c — tensor arrays: TensorArrayWrite and TensorArrayRead.
 *
 * A tensor array is an ordinary tensor of shape [size, ...element], so it
 * can be a loop variable of gb_while_loop and the sub-graphs need no
 * resource: a write returns a new array with one element replaced (the
 * functional form of tf.TensorArray; TensorFlow's TensorList ops work the
 * same way inside loops), a read returns one element. The index is an
 * int32/int64 scalar tensor — symbolic inside a traced loop body — so it
 * is checked against the size when the op runs, with an error naming the
 * index and the size. The gradient of a write is the write of zeros into
 * the array's gradient (the element written over received nothing) and a
 * read of it for the value; the gradient of a read is a write into zeros.
 */
#include <stdio.h>

#include "ops/shape_util.h"

static bool check_index_input(const gb_op_call *c, const gb_tensor *index) {
    if ((index->dtype != GB_I32 && index->dtype != GB_I64) || index->rank != 0) {
        char s[96];
        gb__op_error(c, GB_ERR_DTYPE, "%s: the index must be an int32 or int64 scalar, got %s %s",
                     c->def->name, gb_dtype_name(index->dtype),
                     gb__shape_fmt(index->rank, index->shape, s, sizeof s));
        return false;
    }
    return true;
}

static bool check_array_input(const gb_op_call *c, const gb_tensor *ta) {
    if (ta->rank >= 1) return true;
    gb__op_error(c, GB_ERR_SHAPE,
                 "%s: a tensor array has rank 1 or more ([size, ...element]); got a scalar",
                 c->def->name);
    return false;
}

/* The index's value, checked against the array's size when the op runs. */
static bool index_value(const gb_op_call *c, const gb_tensor *ta, const gb_tensor *index,
                        int64_t *i) {
    *i = index->dtype == GB_I32 ? *(const int32_t *)index->data : *(const int64_t *)index->data;
    if (*i >= 0 && *i < ta->shape[0]) return true;
    gb__op_error(c, GB_ERR_VALUE,
                 "%s: index %lld is out of range for a tensor array of size %lld (valid: 0 to "
                 "%lld)",
                 c->def->name, (long long)*i, (long long)ta->shape[0],
                 (long long)ta->shape[0] - 1);
    return false;
}

static size_t element_bytes(const gb_tensor *ta) {
    int64_t n = 1;
    for (int d = 1; d < ta->rank; d++) n *= ta->shape[d];
    return (size_t)n * gb_dtype_size(ta->dtype);
}

/* ---- TensorArrayWrite ------------------------------------------------------------- */

static int infer_write(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *ta = c->in[0], *index = c->in[1], *value = c->in[2];
    if (!check_array_input(c, ta) || !check_index_input(c, index)) return -1;
    if (value->dtype != ta->dtype ||
        !gb__shapes_match(value->rank, value->shape, ta->rank - 1, ta->shape + 1)) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: the value written is %s %s but the array's elements are %s %s",
                     c->def->name, gb_dtype_name(value->dtype),
                     gb__shape_fmt(value->rank, value->shape, a, sizeof a),
                     gb_dtype_name(ta->dtype), gb__shape_fmt(ta->rank - 1, ta->shape + 1, b, sizeof b));
        return -1;
    }
    set_desc(&out[0], ta->dtype, ta->rank, ta->shape);
    for (int d = 1; d < ta->rank; d++) /* a dim only the value knows */
        out[0].shape[d] = gb__dims_merge(ta->shape[d], value->shape[d - 1]);
    return 1;
}

static bool kernel_write(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *ta = c->in[0], *value = c->in[2];
    int64_t i;
    if (!index_value(c, ta, c->in[1], &i)) return false;
    size_t row = element_bytes(ta);
    memcpy(out[0]->data, ta->data, gb_nbytes(ta));
    memcpy((char *)out[0]->data + (size_t)i * row, value->data, row);
    return true;
}

static bool grad_write(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *index = ctx->inputs[1], *dy = ctx->dys[0];
    dx[0] = dx[1] = dx[2] = NULL;
    if (ctx->needs_grad[0])
        dx[0] = gb_tensor_array_write(dy, index, gb__fill_like(ctx->inputs[2], 0.0));
    if (ctx->needs_grad[2]) dx[2] = gb_tensor_array_read(dy, index);
    return gb_ok();
}

const gb_op_def gb_opdef_tensor_array_write = {
    .name = "TensorArrayWrite",
    .arity = 3,
    .inputs_doc = "the array [size, ...element], the index (int scalar), the value [...element]",
    .infer = infer_write,
    .kernel = kernel_write,
    .grad = grad_write,
};

/* ---- TensorArrayRead -------------------------------------------------------------- */

static int infer_read(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *ta = c->in[0], *index = c->in[1];
    if (!check_array_input(c, ta) || !check_index_input(c, index)) return -1;
    set_desc(&out[0], ta->dtype, ta->rank - 1, ta->shape + 1);
    return 1;
}

static bool kernel_read(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *ta = c->in[0];
    int64_t i;
    if (!index_value(c, ta, c->in[1], &i)) return false;
    size_t row = element_bytes(ta);
    memcpy(out[0]->data, (const char *)ta->data + (size_t)i * row, row);
    return true;
}

static bool grad_read(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[1] = NULL;
    dx[0] = gb_tensor_array_write(gb__fill_like(ctx->inputs[0], 0.0), ctx->inputs[1],
                                  ctx->dys[0]);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_tensor_array_read = {
    .name = "TensorArrayRead",
    .arity = 2,
    .inputs_doc = "the array [size, ...element], the index (int scalar)",
    .infer = infer_read,
    .kernel = kernel_read,
    .grad = grad_read,
};

/* ---- the public functions ---------------------------------------------------------- */

gb_tensor *gb_tensor_array_new(gb_dtype dt, int64_t size, int rank, const int64_t *element_shape) {
    if (size < 0 || rank < 0 || rank + 1 > GB_MAX_RANK || (rank > 0 && !element_shape)) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_tensor_array_new: need a size >= 0 (got %lld) and an element shape of "
                  "rank 0 to %d (got %d)",
                  (long long)size, GB_MAX_RANK - 1, rank);
        return NULL;
    }
    int64_t shape[GB_MAX_RANK] = {size};
    for (int d = 0; d < rank; d++) shape[d + 1] = element_shape[d];
    return gb_zeros(dt, rank + 1, shape);
}

gb_tensor *gb_tensor_array_write(gb_tensor *ta, gb_tensor *index, gb_tensor *value) {
    gb_tensor *in[3] = {ta, index, value};
    return gb__op1(GB_OP_TENSOR_ARRAY_WRITE, in, 3, NULL);
}

gb_tensor *gb_tensor_array_read(gb_tensor *ta, gb_tensor *index) {
    gb_tensor *in[2] = {ta, index};
    return gb__op1(GB_OP_TENSOR_ARRAY_READ, in, 2, NULL);
}

gb_tensor *gb_tensor_array_stack(gb_tensor *ta) {
    if (!ta) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "TensorArrayStack", "gb_tensor_array_stack: NULL array");
        return NULL;
    }
    if (ta->rank < 1) {
        gb__error(GB_ERR_SHAPE, "TensorArrayStack",
                  "gb_tensor_array_stack: a tensor array has rank 1 or more; got a scalar");
        return NULL;
    }
    return ta; /* already stacked: [size, ...element] */
}

int64_t gb_tensor_array_size(const gb_tensor *ta) { return ta && ta->rank >= 1 ? ta->shape[0] : -1; }
