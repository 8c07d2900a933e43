/* ops/shape_composite.c — shape functions built from the movement primitives.
 *
 * gb_squeeze and gb_expand_dims are reshapes (views, no copy); gb_stack is
 * expand_dims of each input followed by one ConcatV2; gb_split and
 * gb_split_sizes are one Slice per part, the equal split being the sized
 * one with every size the same. Being compositions, they need no
 * gradients of their own and trace as the primitives they are made of.
 * Their argument errors name the function's TensorFlow op (Squeeze,
 * ExpandDims, Pack, Split, SplitV).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops/internal.h"

/* A NULL input: an earlier error stands, else this one is reported. */
static void note_null_input(const char *op) {
    if (gb_ok()) gb__error(GB_ERR_VALUE, op, "%s: the input is NULL", op);
}

gb_tensor *gb_squeeze(gb_tensor *x, const int64_t *axes, int naxes) {
    if (!x) {
        note_null_input("Squeeze");
        return NULL;
    }
    if (naxes < 0 || (naxes > 0 && !axes)) {
        gb__error(GB_ERR_VALUE, "Squeeze", "Squeeze: bad axes list (%d axes)", naxes);
        return NULL;
    }
    bool drop[GB_MAX_RANK] = {false};
    for (int k = 0; k < naxes; k++) {
        int64_t a = axes[k] < 0 ? axes[k] + x->rank : axes[k];
        if (a < 0 || a >= x->rank) {
            gb__error(GB_ERR_VALUE, "Squeeze",
                      "Squeeze: axis %lld is out of range for a rank-%d tensor", (long long)axes[k],
                      x->rank);
            return NULL;
        }
        if (drop[a]) {
            gb__error(GB_ERR_VALUE, "Squeeze", "Squeeze: axis %lld is given twice", (long long)a);
            return NULL;
        }
        if (x->shape[a] != 1 && x->shape[a] >= 0) { /* an unknown size is checked per call */
            char s[128];
            gb__error(GB_ERR_SHAPE, "Squeeze",
                      "Squeeze: cannot squeeze axis %lld of shape %s: its size is %lld, not 1",
                      (long long)axes[k], gb__shape_fmt(x->rank, x->shape, s, sizeof s),
                      (long long)x->shape[a]);
            return NULL;
        }
        drop[a] = true;
    }
    int64_t dims[GB_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        bool squeezed = naxes ? drop[i] : x->shape[i] == 1;
        if (!squeezed) dims[r++] = x->shape[i];
    }
    return gb_reshape(x, r, dims);
}

gb_tensor *gb_expand_dims(gb_tensor *x, int64_t axis) {
    if (!x) {
        note_null_input("ExpandDims");
        return NULL;
    }
    int64_t a = axis < 0 ? axis + x->rank + 1 : axis;
    if (a < 0 || a > x->rank) {
        gb__error(GB_ERR_VALUE, "ExpandDims",
                  "ExpandDims: axis %lld is out of range [%d, %d] for a rank-%d tensor",
                  (long long)axis, -x->rank - 1, x->rank, x->rank);
        return NULL;
    }
    if (x->rank + 1 > GB_MAX_RANK) {
        gb__error(GB_ERR_SHAPE, "ExpandDims",
                  "ExpandDims: the result would have rank %d; the limit is %d", x->rank + 1,
                  GB_MAX_RANK);
        return NULL;
    }
    int64_t dims[GB_MAX_RANK];
    for (int i = 0, k = 0; i <= x->rank; i++) dims[i] = i == a ? 1 : x->shape[k++];
    return gb_reshape(x, x->rank + 1, dims);
}

gb_tensor *gb_stack(gb_tensor *const *xs, int n, int64_t axis) {
    if (n < 1 || !xs) {
        gb__error(GB_ERR_VALUE, "Pack", "Pack: stack needs at least one input (got %d)", n);
        return NULL;
    }
    gb_tensor *small[16], **parts = n <= 16 ? small : malloc((size_t)n * sizeof *parts);
    if (!parts) {
        gb__error(GB_ERR_MEMORY, "Pack", "Pack: out of memory for %d inputs", n);
        return NULL;
    }
    gb_tensor *result = NULL;
    bool ok = true;
    for (int i = 0; ok && i < n; i++) ok = (parts[i] = gb_expand_dims(xs[i], axis)) != NULL;
    if (ok) result = gb_concat(parts, n, axis);
    if (parts != small) free(parts);
    return result;
}

/* ---- Split and SplitV --------------------------------------------------------------- */

/* Sets out[0..n) to NULL and checks what every split needs: an out array,
 * an input, an axis in range. Returns the normalized axis or -1. */
static int split_start(const char *op, gb_tensor *x, int n, int64_t axis, gb_tensor **out) {
    if (!out) {
        gb__error(GB_ERR_VALUE, op, "%s: out is NULL", op);
        return -1;
    }
    for (int i = 0; i < n; i++) out[i] = NULL;
    if (!x) {
        note_null_input(op);
        return -1;
    }
    int64_t a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a >= x->rank) {
        char s[128];
        gb__error(GB_ERR_VALUE, op, "%s: axis %lld is out of range for a tensor of shape %s", op,
                  (long long)axis, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return -1;
    }
    return (int)a;
}

/* The one mechanism behind both splits: out[i] is the slice of x holding
 * part i along axis a, the part's size being sizes[i], or `each` when
 * sizes is NULL (the equal split, which needs no array). Sizes are already
 * checked to add up to the axis. On failure every out[i] is NULL. */
static bool slice_parts(gb_tensor *x, int a, const int64_t *sizes, int64_t each, int n,
                        gb_tensor **out) {
    int64_t begin[GB_MAX_RANK] = {0}, size[GB_MAX_RANK];
    memcpy(size, x->shape, sizeof size);
    for (int i = 0; i < n; i++) {
        size[a] = sizes ? sizes[i] : each;
        out[i] = gb_slice(x, begin, x->rank, size, x->rank);
        if (!out[i]) {
            for (int k = 0; k < i; k++) out[k] = NULL;
            return false;
        }
        begin[a] += size[a];
    }
    return true;
}

/* A split needs the axis' length to place its slices (their begins are
 * attributes): an unknown one (-1, in a traced function) is an error. */
static bool split_axis_known(const char *op, const gb_tensor *x, int a) {
    if (x->shape[a] >= 0) return true;
    char s[128];
    gb__error(GB_ERR_SHAPE, op,
              "%s: cannot split axis %d of shape %s: its size is unknown until the graph runs; "
              "split a known axis, or declare its size in the input signature",
              op, a, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
    return false;
}

bool gb_split(gb_tensor *x, int num, int64_t axis, gb_tensor **out) {
    int a = split_start("Split", x, num, axis, out);
    if (a < 0 || !split_axis_known("Split", x, a)) return false;
    if (num < 1 || x->shape[a] % num != 0) {
        char s[128];
        gb__error(GB_ERR_VALUE, "Split",
                  "Split: cannot split axis %d of size %lld (shape %s) into %d equal parts", a,
                  (long long)x->shape[a], gb__shape_fmt(x->rank, x->shape, s, sizeof s), num);
        return false;
    }
    return slice_parts(x, a, NULL, x->shape[a] / num, num, out);
}

/* Checks sizes[n] against the length of x's axis a and writes them to
 * resolved[] with a -1 replaced by the rest; false after an error that
 * names the shape and the sizes. */
static bool resolve_sizes(const gb_tensor *x, int a, const int64_t *sizes, int n,
                          int64_t *resolved) {
    char s[128], list[256];
    int64_t dim = x->shape[a], known = 0;
    int rest = -1;
    const char *bad = NULL;
    for (int i = 0; i < n && !bad; i++) {
        if (sizes[i] == -1 && rest >= 0)
            bad = "more than one size is -1 (only one may be)";
        else if (sizes[i] == -1)
            rest = i;
        else if (sizes[i] < 0)
            bad = "a size is negative (only -1, for the rest, may be)";
        else
            known += sizes[i];
        resolved[i] = sizes[i];
    }
    if (!bad && rest < 0 && known != dim) bad = "the sizes do not add up to the axis' length";
    if (!bad && rest >= 0 && known > dim) bad = "the sizes add up to more than the axis' length";
    if (bad) {
        gb__error(GB_ERR_SHAPE, "SplitV",
                  "SplitV: cannot split axis %d of size %lld (shape %s) into sizes %s: %s", a,
                  (long long)dim, gb__shape_fmt(x->rank, x->shape, s, sizeof s),
                  gb__shape_fmt(n, sizes, list, sizeof list), bad);
        return false;
    }
    if (rest >= 0) resolved[rest] = dim - known;
    return true;
}

bool gb_split_sizes(gb_tensor *x, const int64_t *sizes, int nsizes, int64_t axis, gb_tensor **out) {
    if (nsizes < 1 || !sizes) {
        gb__error(GB_ERR_VALUE, "SplitV", "SplitV: needs at least one size (got %d%s)", nsizes,
                  nsizes > 0 ? ", NULL array" : "");
        return false;
    }
    int a = split_start("SplitV", x, nsizes, axis, out);
    if (a < 0 || !split_axis_known("SplitV", x, a)) return false;
    int64_t small[16], *resolved = nsizes <= 16 ? small : malloc((size_t)nsizes * sizeof *resolved);
    if (!resolved) {
        gb__error(GB_ERR_MEMORY, "SplitV", "SplitV: out of memory for %d sizes", nsizes);
        return false;
    }
    bool ok =
        resolve_sizes(x, a, sizes, nsizes, resolved) && slice_parts(x, a, resolved, 0, nsizes, out);
    if (resolved != small) free(resolved);
    return ok;
}
