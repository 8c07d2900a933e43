/* ops/shape_composite.c — shape functions built from the movement primitives.
 *
 * gb_squeeze and gb_expand_dims are reshapes (views, no copy); gb_stack is
 * expand_dims of each input followed by one ConcatV2; gb_split is one
 * Slice per part. Being compositions, they need no gradients of their own
 * and trace as the primitives they are made of. Their argument errors name
 * the function's TensorFlow op (Squeeze, ExpandDims, Pack, Split).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops/internal.h"

/* A NULL input: an earlier error stands, else this one is reported. */
static void note_null_input(const char *op) {
    if (gb_ok()) gb__error(GB_ERR_VALUE, op, "%s: the input is NULL", op);
}

gb_tensor *gb_squeeze(gb_tensor *x, const int *axes, int naxes) {
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
        int a = axes[k] < 0 ? axes[k] + x->rank : axes[k];
        if (a < 0 || a >= x->rank) {
            gb__error(GB_ERR_VALUE, "Squeeze",
                      "Squeeze: axis %d is out of range for a rank-%d tensor", axes[k], x->rank);
            return NULL;
        }
        if (drop[a]) {
            gb__error(GB_ERR_VALUE, "Squeeze", "Squeeze: axis %d is given twice", a);
            return NULL;
        }
        if (x->shape[a] != 1) {
            char s[128];
            gb__error(GB_ERR_SHAPE, "Squeeze",
                      "Squeeze: cannot squeeze axis %d of shape %s: its size is %lld, not 1",
                      axes[k], gb__shape_fmt(x->rank, x->shape, s, sizeof s),
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

gb_tensor *gb_expand_dims(gb_tensor *x, int axis) {
    if (!x) {
        note_null_input("ExpandDims");
        return NULL;
    }
    int a = axis < 0 ? axis + x->rank + 1 : axis;
    if (a < 0 || a > x->rank) {
        gb__error(GB_ERR_VALUE, "ExpandDims",
                  "ExpandDims: axis %d is out of range [%d, %d] for a rank-%d tensor", axis,
                  -x->rank - 1, x->rank, x->rank);
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

gb_tensor *gb_stack(gb_tensor *const *xs, int n, int axis) {
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

bool gb_split(gb_tensor *x, int num, int axis, gb_tensor **out) {
    if (!out) {
        gb__error(GB_ERR_VALUE, "Split", "Split: out is NULL");
        return false;
    }
    for (int i = 0; i < num; i++) out[i] = NULL;
    if (!x) {
        note_null_input("Split");
        return false;
    }
    int a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a >= x->rank) {
        gb__error(GB_ERR_VALUE, "Split", "Split: axis %d is out of range for a rank-%d tensor",
                  axis, x->rank);
        return false;
    }
    if (num < 1 || x->shape[a] % num != 0) {
        char s[128];
        gb__error(GB_ERR_VALUE, "Split",
                  "Split: cannot split axis %d of size %lld (shape %s) into %d equal parts", a,
                  (long long)x->shape[a], gb__shape_fmt(x->rank, x->shape, s, sizeof s), num);
        return false;
    }
    int64_t begin[GB_MAX_RANK] = {0}, size[GB_MAX_RANK];
    memcpy(size, x->shape, sizeof size);
    size[a] = x->shape[a] / num;
    for (int i = 0; i < num; i++, begin[a] += size[a]) {
        out[i] = gb_slice(x, begin, size);
        if (!out[i]) {
            for (int k = 0; k < i; k++) out[k] = NULL;
            return false;
        }
    }
    return true;
}
