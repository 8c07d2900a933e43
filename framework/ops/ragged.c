/* ops/ragged.c — ragged rows (values plus int64 row_splits, as
 * StringSplitV2 makes them) turned dense: RaggedToTensor pads or cuts each
 * row to a length, RaggedBincount counts each row's values into bins.
 *
 * Row b is values[row_splits[b] .. row_splits[b+1]). Both check the
 * splits (from 0, non-decreasing, ending at the number of values) before
 * they read a value, so a bad split is an error naming it, never a read
 * out of bounds.
 */
#include <stdio.h>

#include "ops/strings_internal.h"

/* Inputs (values, row_splits): rank 1 each, splits int64, values int. */
static bool check_ragged(const gb_op_call *c) {
    const gb_tensor *v = c->in[0], *s = c->in[1];
    if (v->rank != 1 || s->rank != 1 || s->dtype != GB_I64 ||
        (v->dtype != GB_I64 && v->dtype != GB_I32)) {
        char a[64], b[64];
        gb__op_error(c, GB_ERR_VALUE, "%s: expected int32/int64 values [n] and int64 row_splits "
                     "[rows + 1], got %s %s and %s %s", c->def->name, gb_dtype_name(v->dtype),
                     gb__shape_fmt(v->rank, v->shape, a, sizeof a), gb_dtype_name(s->dtype),
                     gb__shape_fmt(s->rank, s->shape, b, sizeof b));
        return false;
    }
    if (s->shape[0] == 0) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: row_splits is empty; it holds rows + 1 entries",
                     c->def->name);
        return false;
    }
    return true;
}

bool gb__check_row_splits(const gb_op_call *c) {
    const int64_t *s = c->in[1]->data;
    int64_t n = c->in[1]->size, nv = c->in[0]->size;
    for (int64_t b = 0; b < n; b++) {
        bool ok = b == 0 ? s[0] == 0 : s[b] >= s[b - 1];
        if (b == n - 1) ok = ok && s[b] == nv;
        if (!ok) {
            gb__op_error(c, GB_ERR_VALUE, "%s: row_splits[%lld] = %lld is not a split of %lld "
                         "values (from 0, non-decreasing, ending at the count)", c->def->name,
                         (long long)b, (long long)s[b], (long long)nv);
            return false;
        }
    }
    return true;
}

static int64_t value_at(const gb_tensor *v, int64_t i) {
    return v->dtype == GB_I64 ? ((const int64_t *)v->data)[i] : ((const int32_t *)v->data)[i];
}

/* ---- RaggedToTensor ---------------------------------------------------------------------- */

static int infer_to_tensor(const gb_op_call *c, gb_out_desc *out) {
    if (!check_ragged(c)) return -1;
    int64_t len = c->attrs->i[0], rows = c->in[1]->shape[0];
    if (len < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: length must be >= 1, got %lld", c->def->name,
                     (long long)len);
        return -1;
    }
    *out = (gb_out_desc){.dtype = c->in[0]->dtype, .rank = 2, .shape = {rows < 0 ? -1 : rows - 1, len}};
    return 1;
}

static bool kernel_to_tensor(const gb_op_call *c, gb_tensor **out) {
    if (!gb__check_row_splits(c)) return false;
    const gb_tensor *v = c->in[0];
    const int64_t *s = c->in[1]->data;
    int64_t rows = out[0]->shape[0], len = out[0]->shape[1];
    for (int64_t b = 0; b < rows; b++) {
        for (int64_t j = 0; j < len; j++) {
            int64_t x = s[b] + j < s[b + 1] ? value_at(v, s[b] + j) : 0;
            if (v->dtype == GB_I64)
                ((int64_t *)out[0]->data)[b * len + j] = x;
            else
                ((int32_t *)out[0]->data)[b * len + j] = (int32_t)x;
        }
    }
    return true;
}

/* ---- RaggedBincount -------------------------------------------------------------------------- */

static int infer_bincount(const gb_op_call *c, gb_out_desc *out) {
    if (!check_ragged(c)) return -1;
    int64_t size = c->attrs->i[0], rows = c->in[1]->shape[0];
    if (size < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: size must be >= 1, got %lld", c->def->name,
                     (long long)size);
        return -1;
    }
    *out = (gb_out_desc){.dtype = GB_F32, .rank = 2, .shape = {rows < 0 ? -1 : rows - 1, size}};
    return 1;
}

static bool kernel_bincount(const gb_op_call *c, gb_tensor **out) {
    if (!gb__check_row_splits(c)) return false;
    const gb_tensor *v = c->in[0];
    const int64_t *s = c->in[1]->data;
    int64_t rows = out[0]->shape[0], size = out[0]->shape[1];
    bool binary = c->attrs->i[1];
    float *r = out[0]->data;
    memset(r, 0, (size_t)(rows * size) * sizeof *r);
    for (int64_t b = 0; b < rows; b++) {
        for (int64_t i = s[b]; i < s[b + 1]; i++) {
            int64_t x = value_at(v, i);
            if (x < 0 || x >= size) {
                gb__op_error(c, GB_ERR_VALUE, "%s: value %lld at %lld is outside [0, %lld)",
                             c->def->name, (long long)x, (long long)i, (long long)size);
                return false;
            }
            r[b * size + x] = binary ? 1.0f : r[b * size + x] + 1.0f;
        }
    }
    return true;
}

const gb_op_def gb_opdef_ragged_to_tensor = {
    .name = "RaggedToTensor",
    .arity = 2,
    .inputs_doc = "values [n], row_splits [rows + 1] (int64)",
    .infer = infer_to_tensor,
    .kernel = kernel_to_tensor,
};

const gb_op_def gb_opdef_ragged_bincount = {
    .name = "RaggedBincount",
    .arity = 2,
    .inputs_doc = "values [n], row_splits [rows + 1] (int64)",
    .infer = infer_bincount,
    .kernel = kernel_bincount,
};

gb_tensor *gb_ragged_to_tensor(gb_tensor *values, gb_tensor *row_splits, int64_t length) {
    gb_tensor *in[2] = {values, row_splits};
    gb_attrs a = {.i = {length}, .ni = 1};
    return gb__op1(GB_OP_RAGGED_TO_TENSOR, in, 2, &a);
}

gb_tensor *gb_ragged_bincount(gb_tensor *values, gb_tensor *row_splits, int64_t size,
                              bool binary_output) {
    gb_tensor *in[2] = {values, row_splits};
    gb_attrs a = {.i = {size, binary_output}, .ni = 2};
    return gb__op1(GB_OP_RAGGED_BINCOUNT, in, 2, &a);
}
