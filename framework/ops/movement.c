/* ops/movement.c — shape and data-movement primitives.
 *
 * Reshape (a view: the output shares the input's buffer), Transpose,
 * BroadcastTo, Slice, ConcatV2 and Pad. The copying kernels are dtype-agnostic: they move elements by size (1, 4 or
 * 8 bytes) through one strided-copy routine that first merges axes that
 * stay contiguous, so a slice of whole rows or a concat along the last
 * axis becomes a handful of memcpy calls.
 *
 * Gradients use the public ops: Reshape -> reshape back, Transpose ->
 * inverse permutation, BroadcastTo -> sum back to the input shape, Slice
 * <-> Pad, ConcatV2 -> slices.
 *
 * Index-driven ops (GatherV2, ScatterAdd, OneHot) live in ops/shape_index.c,
 * the composites gb_squeeze, gb_expand_dims, gb_stack and gb_split in
 * ops/shape_composite.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops/shape_util.h"

/* ---- shared helpers ---------------------------------------------------------- */

/* One row of n elements of esize bytes, strided on both sides. */
static void copy_row(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t esize) {
#define COPY_ROW_AS(T)                                                                        \
    do {                                                                                      \
        T *d_ = (T *)(void *)dst;                                                             \
        const T *s_ = (const T *)(const void *)src;                                           \
        for (int64_t k = 0; k < n; k++) d_[k * ds] = s_[k * ss];                              \
    } while (0)
    switch (esize) {
    case 1: COPY_ROW_AS(uint8_t); break;
    case 4: COPY_ROW_AS(uint32_t); break;
    case 8: COPY_ROW_AS(uint64_t); break;
    default:
        for (int64_t k = 0; k < n; k++)
            memcpy(dst + (size_t)(k * ds) * esize, src + (size_t)(k * ss) * esize, esize);
    }
#undef COPY_ROW_AS
}

/* A 2-D transpose-like block: dst[i*dstride + j] = src[i + j*sstride] for
 * i < ni, j < nj. Each tile is read along src's contiguous rows into a
 * small local buffer, then written along dst's contiguous rows: with
 * power-of-two strides a direct strided loop would keep evicting its own
 * cache lines (they all map to the same cache set). */
static void copy_tiled(char *dst, int64_t dstride, const char *src, int64_t sstride, int64_t ni,
                       int64_t nj, size_t esize) {
    enum { TILE = 32 };
#define COPY_TILED_AS(T)                                                                      \
    do {                                                                                      \
        T *d_ = (T *)(void *)dst, buf_[TILE][TILE];                                           \
        const T *s_ = (const T *)(const void *)src;                                           \
        for (int64_t i0 = 0; i0 < ni; i0 += TILE)                                             \
            for (int64_t j0 = 0; j0 < nj; j0 += TILE) {                                       \
                int64_t ti = ni - i0 < TILE ? ni - i0 : TILE;                                 \
                int64_t tj = nj - j0 < TILE ? nj - j0 : TILE;                                 \
                for (int64_t j = 0; j < tj; j++)                                              \
                    for (int64_t i = 0; i < ti; i++) buf_[i][j] = s_[i0 + i + (j0 + j) * sstride]; \
                for (int64_t i = 0; i < ti; i++)                                              \
                    memcpy(d_ + (i0 + i) * dstride + j0, buf_[i], (size_t)tj * sizeof(T));    \
            }                                                                                 \
    } while (0)
    switch (esize) {
    case 1: COPY_TILED_AS(uint8_t); break;
    case 4: COPY_TILED_AS(uint32_t); break;
    case sizeof(gb_string): COPY_TILED_AS(gb_string); break; /* strings: pairs, bytes shared */
    default: COPY_TILED_AS(uint64_t); break;
    }
#undef COPY_TILED_AS
}

/* Copies a block of `shape` elements from src (element strides sstr) to
 * dst (strides dstr). Size-1 axes are dropped and axes that are contiguous
 * on both sides merged first. Then the innermost axis is copied as a row
 * (one memcpy when contiguous on both sides) for each position of the
 * outer axes; when the source is contiguous along some other axis instead
 * (a transpose), that axis and the innermost one are copied together in
 * cache-sized tiles. */
static void strided_copy(void *dst, const int64_t *dstr, const void *src, const int64_t *sstr,
                         int rank, const int64_t *shape, size_t esize) {
    int64_t n[GB_MAX_RANK], ds[GB_MAX_RANK], ss[GB_MAX_RANK];
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] == 0) return;
        if (shape[i] == 1) continue;
        if (r > 0 && ds[r - 1] == dstr[i] * shape[i] && ss[r - 1] == sstr[i] * shape[i]) {
            n[r - 1] *= shape[i];
            ds[r - 1] = dstr[i];
            ss[r - 1] = sstr[i];
        } else {
            n[r] = shape[i];
            ds[r] = dstr[i];
            ss[r] = sstr[i];
            r++;
        }
    }
    if (r == 0) {
        memcpy(dst, src, esize);
        return;
    }
    int tiled = -1; /* the axis copied in tiles with the innermost one */
    if (ds[r - 1] == 1 && ss[r - 1] != 1 && esize != 2)
        for (int k = 0; k < r - 1; k++)
            if (ss[k] == 1 && n[k] >= 8 && n[r - 1] >= 8) tiled = k;
    int64_t rows = 1;
    for (int i = 0; i < r - 1; i++)
        if (i != tiled) rows *= n[i];
    bool contiguous = ds[r - 1] == 1 && ss[r - 1] == 1;
    int64_t idx[GB_MAX_RANK] = {0}, doff = 0, soff = 0;
    for (int64_t row = 0; row < rows; row++) {
        char *d = (char *)dst + (size_t)doff * esize;
        const char *s = (const char *)src + (size_t)soff * esize;
        if (tiled >= 0)
            copy_tiled(d, ds[tiled], s, ss[r - 1], n[tiled], n[r - 1], esize);
        else if (contiguous)
            memcpy(d, s, (size_t)n[r - 1] * esize);
        else
            copy_row(d, ds[r - 1], s, ss[r - 1], n[r - 1], esize);
        /* Odometer over the outer axes (the tiled one excepted). */
        for (int k = r - 2; k >= 0; k--) {
            if (k == tiled) continue;
            doff += ds[k];
            soff += ss[k];
            if (++idx[k] < n[k]) break;
            doff -= ds[k] * n[k];
            soff -= ss[k] * n[k];
            idx[k] = 0;
        }
    }
}

/* Offset of a multi-index in a row-major layout. */
static int64_t offset_of(int rank, const int64_t *strides, const int64_t *index) {
    int64_t off = 0;
    for (int i = 0; i < rank; i++) off += strides[i] * index[i];
    return off;
}

/* ---- Reshape ------------------------------------------------------------------- */

/* A target shape for an input with an unknown dim (size -1): a -1 in the
 * target stays -1, resolved per call; a target without one must hold a
 * multiple of the input's known dims. */
static bool resolve_against_unknown(const gb_op_call *c, const gb_tensor *x, int rank,
                                    const int64_t *dims, int unknown, int64_t known,
                                    int64_t *out) {
    if (unknown >= 0) {
        out[unknown] = -1;
        return true;
    }
    int64_t part = 1;
    for (int i = 0; i < x->rank; i++)
        if (x->shape[i] >= 0) part *= x->shape[i];
    if (part == 0 ? known == 0 : known % part == 0) return true;
    char a[128], b[128];
    gb__op_error(c, GB_ERR_SHAPE,
                 "%s: cannot reshape a tensor of shape %s into shape %s (%lld elements, not a "
                 "multiple of the %lld the known dimensions hold)",
                 c->def->name, gb__shape_fmt(x->rank, x->shape, a, sizeof a),
                 gb__shape_fmt(rank, dims, b, sizeof b), (long long)known, (long long)part);
    return false;
}

/* Resolves a target shape with at most one -1 against n elements. */
static bool resolve_shape(const gb_op_call *c, const gb_tensor *x, int rank, const int64_t *dims,
                          int64_t *out) {
    int unknown = -1;
    int64_t known = 1;
    char a[128], b[128];
    for (int i = 0; i < rank; i++) {
        if (dims[i] == -1 && unknown < 0) {
            unknown = i;
            continue;
        }
        if (dims[i] < 0) {
            gb__op_error(c, GB_ERR_SHAPE,
                         "%s: target shape %s has %s; only one dimension may be -1 and the "
                         "others must be >= 0",
                         c->def->name, gb__shape_fmt(rank, dims, a, sizeof a),
                         dims[i] == -1 ? "two -1 dimensions" : "a negative dimension");
            return false;
        }
        if (__builtin_mul_overflow(known, dims[i], &known)) {
            gb__op_error(c, GB_ERR_SHAPE, "%s: target shape %s has more than 2^63 elements",
                         c->def->name, gb__shape_fmt(rank, dims, a, sizeof a));
            return false;
        }
        out[i] = dims[i];
    }
    if (x->size < 0) return resolve_against_unknown(c, x, rank, dims, unknown, known, out);
    if (unknown >= 0) {
        if (known == 0 || x->size % known != 0) {
            gb__op_error(c, GB_ERR_SHAPE,
                         "%s: cannot reshape a tensor of shape %s (%lld elements) into shape %s",
                         c->def->name, gb__shape_fmt(x->rank, x->shape, a, sizeof a),
                         (long long)x->size, gb__shape_fmt(rank, dims, b, sizeof b));
            return false;
        }
        out[unknown] = x->size / known;
        known *= out[unknown];
    }
    if (known != x->size) {
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: cannot reshape a tensor of shape %s (%lld elements) into shape %s "
                     "(%lld elements)",
                     c->def->name, gb__shape_fmt(x->rank, x->shape, a, sizeof a),
                     (long long)x->size, gb__shape_fmt(rank, dims, b, sizeof b),
                     (long long)known);
        return false;
    }
    return true;
}

static int infer_reshape(const gb_op_call *c, gb_out_desc *out) {
    int rank = c->attrs->ni;
    if (rank < 0 || rank > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: target rank %d is outside 0..%d", c->def->name, rank,
                     GB_MAX_RANK);
        return -1;
    }
    if (!resolve_shape(c, c->in[0], rank, c->attrs->i, out[0].shape)) return -1;
    out[0].dtype = c->in[0]->dtype;
    out[0].rank = rank;
    return 1;
}

/* The output is a view of the input's buffer. */
static bool kernel_reshape(const gb_op_call *c, gb_tensor **out) {
    return gb__view_into(out[0], c->in[0]);
}

static bool grad_reshape(const gb_grad_ctx *ctx, gb_tensor **dx) {
    const gb_tensor *x = ctx->inputs[0];
    dx[0] = gb_reshape(ctx->dys[0], x->rank, x->shape);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_reshape = {
    .name = "Reshape",
    .arity = 1,
    .flags = GB_OPF_VIEW,
    .infer = infer_reshape,
    .kernel = kernel_reshape,
    .grad = grad_reshape,
};

gb_tensor *gb_reshape(gb_tensor *x, int rank, const int64_t *dims) {
    if (rank < 0 || rank > GB_MAX_RANK || (rank > 0 && !dims)) {
        gb_op_call c = call_of(GB_OP_RESHAPE);
        gb__op_error(&c, GB_ERR_SHAPE, "Reshape: target rank %d is outside 0..%d%s", rank,
                     GB_MAX_RANK, rank > 0 && rank <= GB_MAX_RANK ? " (dims is NULL)" : "");
        return NULL;
    }
    gb_attrs a = {.ni = rank};
    for (int i = 0; i < rank; i++) a.i[i] = dims[i];
    return gb__op1(GB_OP_RESHAPE, &x, 1, &a);
}

/* ---- Transpose ----------------------------------------------------------------- */

static int infer_transpose(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    char buf[128], s[128];
    if (c->attrs->ni != x->rank) {
        int n = c->attrs->ni < 0 ? 0 : c->attrs->ni > GB_MAX_RANK ? GB_MAX_RANK : c->attrs->ni;
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: perm %s has %d entries but the input of shape %s has rank %d; give "
                     "one entry per axis",
                     c->def->name, gb__shape_fmt(n, c->attrs->i, buf, sizeof buf), c->attrs->ni,
                     gb__shape_fmt(x->rank, x->shape, s, sizeof s), x->rank);
        return -1;
    }
    bool seen[GB_MAX_RANK] = {false};
    bool ok = true;
    for (int i = 0; ok && i < x->rank; i++) {
        int64_t p = c->attrs->i[i];
        ok = p >= 0 && p < x->rank && !seen[p];
        if (ok) seen[p] = true;
    }
    if (!ok) {
        gb__op_error(c, GB_ERR_VALUE,
                     "%s: perm %s is not a permutation of 0..%d for a tensor of shape %s",
                     c->def->name, gb__shape_fmt(x->rank, c->attrs->i, buf, sizeof buf),
                     x->rank - 1, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return -1;
    }
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    for (int i = 0; i < x->rank; i++) out[0].shape[i] = x->shape[c->attrs->i[i]];
    return 1;
}

static bool kernel_transpose(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    int64_t xs[GB_MAX_RANK], ss[GB_MAX_RANK], ds[GB_MAX_RANK];
    strides_of(x->rank, x->shape, xs);
    strides_of(out[0]->rank, out[0]->shape, ds);
    for (int i = 0; i < x->rank; i++) ss[i] = xs[c->attrs->i[i]];
    strided_copy(out[0]->data, ds, x->data, ss, x->rank, out[0]->shape,
                 gb_dtype_size(x->dtype));
    return true;
}

static bool grad_transpose(const gb_grad_ctx *ctx, gb_tensor **dx) {
    int64_t inv[GB_MAX_RANK];
    int rank = ctx->inputs[0]->rank;
    for (int i = 0; i < rank; i++) inv[ctx->attrs->i[i]] = i;
    dx[0] = gb_transpose(ctx->dys[0], inv, rank);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_transpose = {
    .name = "Transpose",
    .arity = 1,
    .infer = infer_transpose,
    .kernel = kernel_transpose,
    .grad = grad_transpose,
};

/* The length check against the rank is infer's, so traced calls get it too;
 * here only what the attrs cannot carry. */
gb_tensor *gb_transpose(gb_tensor *x, const int64_t *perm, int nperm) {
    if (nperm < 0 || nperm > GB_MAX_RANK || (nperm > 0 && !perm)) {
        gb_op_call c = call_of(GB_OP_TRANSPOSE);
        gb__op_error(&c, GB_ERR_VALUE,
                     "Transpose: bad perm list (%d entries%s); the rank limit is %d", nperm,
                     nperm > 0 && !perm ? ", NULL array" : "", GB_MAX_RANK);
        return NULL;
    }
    gb_attrs a = {.ni = nperm};
    for (int i = 0; i < nperm; i++) a.i[i] = perm[i];
    if (x && !perm) {
        a.ni = x->rank;
        for (int i = 0; i < x->rank; i++) a.i[i] = x->rank - 1 - i;
    }
    return gb__op1(GB_OP_TRANSPOSE, &x, 1, &a);
}

/* ---- BroadcastTo --------------------------------------------------------------- */

/* The target shape: the attribute, where a second input (a shape donor)
 * gives the dims the attribute leaves -1. */
static bool broadcast_target(const gb_op_call *c, int64_t *dims) {
    int rank = c->attrs->ni;
    const gb_tensor *like = c->nin == 2 ? c->in[1] : NULL;
    if (c->nin < 1 || c->nin > 2) {
        gb__op_error(c, GB_ERR_VALUE, "%s: takes x and an optional shape donor, got %d inputs",
                     c->def->name, c->nin);
        return false;
    }
    if (like && like->rank != rank) {
        char s[128];
        gb__op_error(c, GB_ERR_SHAPE, "%s: the shape donor %s does not have the target's rank %d",
                     c->def->name, gb__shape_fmt(like->rank, like->shape, s, sizeof s), rank);
        return false;
    }
    for (int i = 0; i < rank && i < GB_MAX_RANK; i++)
        dims[i] = like && c->attrs->i[i] == -1 ? like->shape[i] : c->attrs->i[i];
    return true;
}

static int infer_broadcast_to(const gb_op_call *c, gb_out_desc *out) {
    int rank = c->attrs->ni;
    int64_t dims[GB_MAX_RANK];
    char a[128], b[128];
    if (!broadcast_target(c, dims)) return -1;
    const gb_tensor *x = c->in[0];
    if (rank < x->rank || rank > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: cannot broadcast shape %s to a rank-%d shape%s",
                     c->def->name, gb__shape_fmt(x->rank, x->shape, a, sizeof a), rank,
                     rank > GB_MAX_RANK ? " (the rank limit is 8)" : " of lower rank");
        return -1;
    }
    int lead = rank - x->rank;
    for (int i = 0; i < rank; i++) {
        int64_t from = i < lead ? 1 : x->shape[i - lead];
        /* an unknown target dim (from the donor, while tracing) accepts any */
        bool ok = (dims[i] >= 0 || (c->nin == 2 && dims[i] == -1)) &&
                  (gb__dims_match(from, dims[i]) || from == 1);
        if (!ok) {
            gb__op_error(c, GB_ERR_SHAPE, "%s: cannot broadcast shape %s to shape %s (dimension %d)",
                         c->def->name, gb__shape_fmt(x->rank, x->shape, a, sizeof a),
                         gb__shape_fmt(rank, dims, b, sizeof b), i);
            return -1;
        }
    }
    set_desc(&out[0], x->dtype, rank, dims);
    return 1;
}

static bool kernel_broadcast_to(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    gb_tensor *y = out[0];
    int64_t xs[GB_MAX_RANK], ss[GB_MAX_RANK], ds[GB_MAX_RANK];
    strides_of(x->rank, x->shape, xs);
    strides_of(y->rank, y->shape, ds);
    int lead = y->rank - x->rank;
    /* Broadcast axes read the same element again: stride 0. */
    for (int i = 0; i < y->rank; i++)
        ss[i] = i < lead || x->shape[i - lead] == 1 ? 0 : xs[i - lead];
    strided_copy(y->data, ds, x->data, ss, y->rank, y->shape, gb_dtype_size(x->dtype));
    return true;
}

/* The shape donor gets no gradient: only its shape is read. */
static bool grad_broadcast_to(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = gb__sum_to(ctx->dys[0], ctx->inputs[0]);
    if (ctx->nin == 2) dx[1] = NULL;
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_broadcast_to = {
    .name = "BroadcastTo",
    .arity = -1,
    .inputs_doc = "x; input 1 (optional): a shape donor of the target's rank whose dims "
                  "replace the target's -1 dims (TF's BroadcastTo(x, Shape(like)), for shapes "
                  "unknown until a graph runs)",
    .infer = infer_broadcast_to,
    .kernel = kernel_broadcast_to,
    .grad = grad_broadcast_to,
};

gb_tensor *gb_broadcast_to(gb_tensor *x, int rank, const int64_t *dims) {
    if (rank < 0 || rank > GB_MAX_RANK || (rank > 0 && !dims)) {
        gb_op_call c = call_of(GB_OP_BROADCAST_TO);
        gb__op_error(&c, GB_ERR_SHAPE, "BroadcastTo: target rank %d is outside 0..%d%s", rank,
                     GB_MAX_RANK, rank > 0 && rank <= GB_MAX_RANK ? " (dims is NULL)" : "");
        return NULL;
    }
    gb_attrs a = {.ni = rank};
    for (int i = 0; i < rank; i++) a.i[i] = dims[i];
    return gb__op1(GB_OP_BROADCAST_TO, &x, 1, &a);
}

gb_tensor *gb__broadcast_like(gb_tensor *x, gb_tensor *like) {
    gb_tensor *in[2] = {x, like};
    if (!like) return gb__op1(GB_OP_BROADCAST_TO, in, 2, NULL); /* keeps the earlier error */
    gb_attrs a = {.ni = like->rank};
    bool unknown = false;
    for (int i = 0; i < like->rank; i++) unknown |= (a.i[i] = like->shape[i]) < 0;
    return gb__op1(GB_OP_BROADCAST_TO, in, unknown ? 2 : 1, &a);
}

gb_tensor *gb__fill_like(gb_tensor *t, double value) {
    if (!t) return NULL;
    if (gb__shape_size(t->rank, t->shape) >= 0) return gb_fill(t->dtype, t->rank, t->shape, value);
    return gb__broadcast_like(gb_scalar(t->dtype, value), t);
}

/* The public forms (gb_tensor.h) live here, not with the other creators in
 * core/: a traced tensor with an unknown dim needs the op above. */
gb_tensor *gb_zeros_like(gb_tensor *t) { return gb__fill_like(t, 0.0); }

gb_tensor *gb_ones_like(gb_tensor *t) { return gb__fill_like(t, 1.0); }

/* ---- Slice ---------------------------------------------------------------------- */

/* The size of one sliced axis (size -1: to the end) into *s; false when
 * begin and size do not fit an axis of d elements. Along an unknown axis
 * only their signs can be checked before the graph runs. */
static bool slice_axis(int64_t d, int64_t begin, int64_t size, int64_t *s) {
    if (d < 0) {
        *s = size;
        return begin >= 0 && size >= -1;
    }
    *s = size == -1 ? d - begin : size;
    /* *s <= d - begin, not begin + *s <= d: a size near 2^63 would wrap. */
    return begin >= 0 && begin <= d && *s >= 0 && *s <= d - begin;
}

static int infer_slice(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    const int64_t *begin = c->attrs->i, *size = c->attrs->i + x->rank;
    if (c->attrs->ni != 2 * x->rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: expected %d begin/size values for a rank-%d tensor, got %d",
                     c->def->name, 2 * x->rank, x->rank, c->attrs->ni);
        return -1;
    }
    for (int i = 0; i < x->rank; i++) {
        if (!slice_axis(x->shape[i], begin[i], size[i], &out[0].shape[i])) {
            char sh[128];
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: begin %lld and size %lld are out of range for axis %d of size %lld "
                         "(input shape %s)",
                         c->def->name, (long long)begin[i], (long long)size[i], i,
                         (long long)x->shape[i], gb__shape_fmt(x->rank, x->shape, sh, sizeof sh));
            return -1;
        }
    }
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    return 1;
}

static bool kernel_slice(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    int64_t xs[GB_MAX_RANK], ds[GB_MAX_RANK];
    strides_of(x->rank, x->shape, xs);
    strides_of(out[0]->rank, out[0]->shape, ds);
    const char *src = elem_ptr(x, offset_of(x->rank, xs, c->attrs->i));
    strided_copy(out[0]->data, ds, src, xs, x->rank, out[0]->shape, gb_dtype_size(x->dtype));
    return true;
}

/* The input's gradient is dy in the sliced window, zeros elsewhere. */
static bool grad_slice(const gb_grad_ctx *ctx, gb_tensor **dx) {
    const gb_tensor *x = ctx->inputs[0], *y = ctx->outputs[0];
    int64_t pads[2 * GB_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        pads[2 * i] = ctx->attrs->i[i];
        pads[2 * i + 1] = x->shape[i] - ctx->attrs->i[i] - y->shape[i];
    }
    dx[0] = gb_pad(ctx->dys[0], pads, 2 * x->rank, 0.0);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_slice = {
    .name = "Slice",
    .arity = 1,
    .infer = infer_slice,
    .kernel = kernel_slice,
    .grad = grad_slice,
};

gb_tensor *gb_slice(gb_tensor *x, const int64_t *begin, int nbegin, const int64_t *size,
                    int nsize) {
    gb_attrs a = {0};
    if (x) {
        gb_op_call c = call_of(GB_OP_SLICE);
        char s[128];
        if (nbegin != x->rank || nsize != x->rank) {
            gb__op_error(&c, GB_ERR_SHAPE,
                         "Slice: begin has %d entries and size %d, but the input of shape %s has "
                         "rank %d; give one of each per axis",
                         nbegin, nsize, gb__shape_fmt(x->rank, x->shape, s, sizeof s), x->rank);
            return NULL;
        }
        if (x->rank > 0 && (!begin || !size)) {
            gb__op_error(&c, GB_ERR_VALUE, "Slice: begin and size must not be NULL");
            return NULL;
        }
        a.ni = 2 * x->rank;
        for (int i = 0; i < x->rank; i++) {
            a.i[i] = begin[i];
            a.i[x->rank + i] = size[i];
        }
    }
    return gb__op1(GB_OP_SLICE, &x, 1, &a);
}

/* ---- ConcatV2 ---------------------------------------------------------------- */

static int infer_concat(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: needs at least one input", c->def->name);
        return -1;
    }
    const gb_tensor *x0 = c->in[0];
    int axis = gb__norm_axis(c, c->attrs->i[0], x0->rank);
    if (axis < 0) return -1;
    /* The output: every dim merged over the inputs (known where any input
     * knows it), the axis their sum (unknown when any part is). */
    set_desc(&out[0], x0->dtype, x0->rank, x0->shape);
    int64_t total = 0;
    for (int k = 0; k < c->nin; k++) {
        const gb_tensor *x = c->in[k];
        char a[128], b[128];
        if (x->dtype != x0->dtype) {
            gb__op_error(c, GB_ERR_DTYPE, "%s: input %d is %s but input 0 is %s", c->def->name, k,
                         gb_dtype_name(x->dtype), gb_dtype_name(x0->dtype));
            return -1;
        }
        bool ok = x->rank == x0->rank;
        for (int i = 0; ok && i < x->rank; i++)
            ok = i == axis || gb__dims_match(x->shape[i], out[0].shape[i]);
        if (!ok) {
            gb__op_error(c, GB_ERR_SHAPE,
                         "%s: input %d has shape %s but input 0 has shape %s; all dimensions "
                         "except axis %d must match",
                         c->def->name, k, gb__shape_fmt(x->rank, x->shape, a, sizeof a),
                         gb__shape_fmt(x0->rank, x0->shape, b, sizeof b), axis);
            return -1;
        }
        for (int i = 0; i < x->rank; i++)
            out[0].shape[i] = gb__dims_merge(out[0].shape[i], x->shape[i]);
        total = total < 0 || x->shape[axis] < 0 ? -1 : total + x->shape[axis];
    }
    out[0].shape[axis] = total;
    return 1;
}

static bool kernel_concat(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *y = out[0];
    int axis = (int)(c->attrs->i[0] < 0 ? c->attrs->i[0] + y->rank : c->attrs->i[0]);
    int64_t ys[GB_MAX_RANK], xs[GB_MAX_RANK];
    strides_of(y->rank, y->shape, ys);
    size_t es = gb_dtype_size(y->dtype);
    int64_t at = 0;
    for (int k = 0; k < c->nin; k++) {
        const gb_tensor *x = c->in[k];
        strides_of(x->rank, x->shape, xs);
        strided_copy(elem_ptr(y, at * ys[axis]), ys, x->data, xs, x->rank, x->shape, es);
        at += x->shape[axis];
    }
    return true;
}

/* Each input gets its window of dy back. */
static bool grad_concat(const gb_grad_ctx *ctx, gb_tensor **dx) {
    const gb_tensor *y = ctx->outputs[0];
    int axis = (int)(ctx->attrs->i[0] < 0 ? ctx->attrs->i[0] + y->rank : ctx->attrs->i[0]);
    int64_t begin[GB_MAX_RANK] = {0}, size[GB_MAX_RANK];
    for (int k = 0; k < ctx->nin; k++) {
        const gb_tensor *x = ctx->inputs[k];
        memcpy(size, x->shape, sizeof size);
        dx[k] = gb_slice(ctx->dys[0], begin, x->rank, size, x->rank);
        if (!dx[k]) return false;
        begin[axis] += x->shape[axis];
    }
    return true;
}

const gb_op_def gb_opdef_concat = {
    .name = "ConcatV2",
    .arity = -1,
    .infer = infer_concat,
    .kernel = kernel_concat,
    .grad = grad_concat,
};

gb_tensor *gb_concat(gb_tensor *const *xs, int n, int64_t axis) {
    if (n < 1 || !xs) {
        gb_op_call c = call_of(GB_OP_CONCAT);
        gb__op_error(&c, GB_ERR_VALUE, "ConcatV2: needs at least one input (got %d)", n);
        return NULL;
    }
    gb_attrs a = {.ni = 1, .i = {axis}};
    return gb__op1(GB_OP_CONCAT, xs, n, &a);
}

/* ---- Pad ------------------------------------------------------------------------- */

static int infer_pad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (c->attrs->ni != 2 * x->rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: expected %d paddings for a rank-%d tensor, got %d",
                     c->def->name, 2 * x->rank, x->rank, c->attrs->ni);
        return -1;
    }
    for (int i = 0; i < x->rank; i++) {
        int64_t before = c->attrs->i[2 * i], after = c->attrs->i[2 * i + 1];
        if (before < 0 || after < 0) {
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: paddings of axis %d are (%lld, %lld); they must be >= 0",
                         c->def->name, i, (long long)before, (long long)after);
            return -1;
        }
        int64_t padded;
        if (__builtin_add_overflow(before, after, &padded) ||
            (x->shape[i] >= 0 && __builtin_add_overflow(padded, x->shape[i], &padded))) {
            gb__op_error(c, GB_ERR_SHAPE,
                         "%s: axis %d padded by (%lld, %lld) has more than 2^63 elements",
                         c->def->name, i, (long long)before, (long long)after);
            return -1;
        }
        out[0].shape[i] = x->shape[i] < 0 ? -1 : padded;
    }
    if (x->dtype == GB_STRING && c->attrs->f[0] != 0.0) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: a string tensor is padded with empty strings; "
                     "constant_value must be 0, got %g", c->def->name, c->attrs->f[0]);
        return -1;
    }
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    return 1;
}

static bool kernel_pad(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    gb_tensor *y = out[0];
    fill_value(y, c->attrs->f[0]);
    int64_t xs[GB_MAX_RANK], ys[GB_MAX_RANK], before[GB_MAX_RANK];
    strides_of(x->rank, x->shape, xs);
    strides_of(y->rank, y->shape, ys);
    for (int i = 0; i < x->rank; i++) before[i] = c->attrs->i[2 * i];
    strided_copy(elem_ptr(y, offset_of(y->rank, ys, before)), ys, x->data, xs, x->rank,
                 x->shape, gb_dtype_size(x->dtype));
    return true;
}

static bool grad_pad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    const gb_tensor *x = ctx->inputs[0];
    int64_t begin[GB_MAX_RANK];
    for (int i = 0; i < x->rank; i++) begin[i] = ctx->attrs->i[2 * i];
    dx[0] = gb_slice(ctx->dys[0], begin, x->rank, x->shape, x->rank);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_pad = {
    .name = "Pad",
    .arity = 1,
    .infer = infer_pad,
    .kernel = kernel_pad,
    .grad = grad_pad,
};

gb_tensor *gb_pad(gb_tensor *x, const int64_t *paddings, int npaddings, double value) {
    gb_attrs a = {.f = {value}};
    if (x) {
        gb_op_call c = call_of(GB_OP_PAD);
        char s[128];
        if (npaddings != 2 * x->rank) {
            gb__op_error(&c, GB_ERR_SHAPE,
                         "Pad: %d paddings for an input of shape %s; give a (before, after) "
                         "pair per axis: %d values",
                         npaddings, gb__shape_fmt(x->rank, x->shape, s, sizeof s), 2 * x->rank);
            return NULL;
        }
        if (x->rank > 0 && !paddings) {
            gb__op_error(&c, GB_ERR_VALUE, "Pad: paddings must not be NULL");
            return NULL;
        }
        a.ni = 2 * x->rank;
        for (int i = 0; i < a.ni; i++) a.i[i] = paddings[i];
    }
    return gb__op1(GB_OP_PAD, &x, 1, &a);
}
