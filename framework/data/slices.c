/* data/slices.c — datasets made from tensors: from_tensor_slices (element
 * i is row i of every tensor) and from_tensors (one element).
 *
 * The source keeps the tensors' bytes in heap buffers: it shares the
 * buffer of a tensor that already has one (IDX data, variable values: a
 * reference keeps it alive and a later variable assign copies on write)
 * and copies scope-owned data, because a scope may end before the
 * dataset does. Elements point into these buffers, so iterating the
 * source copies nothing. A string tensor's buffer holds its bytes after
 * its elements, so the strings of every element live as long as the
 * dataset.
 */
#include <stdio.h>
#include <stdlib.h>

#include "data/internal.h"

typedef struct slices_ds {
    gb_dataset base;
    int64_t count;   /* elements */
    gb_buffer *buf[GB_DATA_MAX_COMPONENTS];
    gb_dtype dtype[GB_DATA_MAX_COMPONENTS];
    int rank[GB_DATA_MAX_COMPONENTS];          /* of an element */
    int64_t shape[GB_DATA_MAX_COMPONENTS][GB_MAX_RANK];
    size_t stride[GB_DATA_MAX_COMPONENTS];     /* bytes per element */
} slices_ds;

typedef struct slices_iter {
    gb__iter base;
    const slices_ds *ds;
    int64_t next_index;
} slices_iter;

static bool slices_next(gb__iter *base, gb__element *out) {
    slices_iter *it = (slices_iter *)base;
    const slices_ds *ds = it->ds;
    if (it->next_index >= ds->count) return false;
    int64_t i = it->next_index++;
    out->n = ds->base.ncomp;
    for (int k = 0; k < out->n; k++) {
        gb__component *c = &out->c[k];
        c->data = (const char *)ds->buf[k]->data + (size_t)i * ds->stride[k];
        c->owner = NULL;
        c->dtype = ds->dtype[k];
        c->rank = ds->rank[k];
        memcpy(c->shape, ds->shape[k], sizeof c->shape);
    }
    return true;
}

static void slices_iter_free(gb__iter *it) { free(it); }

static const gb__iter_ops slices_iter_ops = {slices_next, slices_iter_free};

static gb__iter *slices_iter_new(gb_dataset *ds, gb__pool *pool) {
    slices_iter *it = gb__iter_alloc(sizeof *it, &slices_iter_ops, pool);
    if (!it) return NULL;
    it->ds = (const slices_ds *)ds;
    return &it->base;
}

static int64_t slices_cardinality(const gb_dataset *ds) { return ((const slices_ds *)ds)->count; }

static void slices_destroy(gb_dataset *base) {
    slices_ds *ds = (slices_ds *)base;
    for (int k = 0; k < base->ncomp; k++) gb__buffer_unref(ds->buf[k]);
}

static const gb__dataset_ops slices_ops = {"TensorSliceDataset", slices_iter_new,
                                           slices_cardinality, slices_destroy};
static const gb__dataset_ops tensors_ops = {"TensorDataset", slices_iter_new,
                                            slices_cardinality, slices_destroy};

/* ---- construction ------------------------------------------------------------------- */

/* Checks the arguments of fn; slicing needs a first dim common to all. */
static bool check_tensors(const char *fn, int n, gb_tensor *const *t, bool slice) {
    if (n < 1 || n > GB_DATA_MAX_COMPONENTS || !t) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL, "%s: need 1 to %d tensors, got %d%s", fn,
                      GB_DATA_MAX_COMPONENTS, n, t ? "" : " (NULL array)");
        return false;
    }
    for (int k = 0; k < n; k++) {
        if (!t[k]) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: tensor %d is NULL", fn, k);
            return false;
        }
        if (!t[k]->data && t[k]->size > 0) {
            gb__error(GB_ERR_STATE, NULL,
                      "%s: tensor %d is symbolic (traced); build datasets from concrete "
                      "tensors, outside traced functions", fn, k);
            return false;
        }
        if (!slice) continue;
        char s0[128], sk[128];
        if (t[k]->rank == 0) {
            gb__error(GB_ERR_SHAPE, NULL, "%s: tensor %d is a scalar; slicing needs rank >= 1",
                      fn, k);
            return false;
        }
        if (t[k]->shape[0] != t[0]->shape[0]) {
            gb__error(GB_ERR_SHAPE, NULL,
                      "%s: tensors must have the same first dimension: tensor 0 has shape %s, "
                      "tensor %d has shape %s", fn,
                      gb__shape_fmt(t[0]->rank, t[0]->shape, s0, sizeof s0), k,
                      gb__shape_fmt(t[k]->rank, t[k]->shape, sk, sizeof sk));
            return false;
        }
    }
    return true;
}

/* A heap buffer holding t's bytes: t's own (shared) or a copy. */
static gb_buffer *source_buffer(gb_tensor *t) {
    if (t->dtype == GB_STRING) {
        /* The pairs, then their bytes: the dataset owns both. */
        int64_t total = gb__strings_total(t->data, t->size);
        gb_buffer *b = gb__buffer_new_heap(gb_nbytes(t) + (size_t)total);
        if (b) gb__strings_pack(b->data, t->data, t->size, (char *)b->data + gb_nbytes(t));
        return b;
    }
    if (t->buf && t->buf->heap && t->data == t->buf->data) {
        t->buf->refcount++;
        return t->buf;
    }
    gb_buffer *b = gb__buffer_new_heap(gb_nbytes(t));
    if (b && gb_nbytes(t)) memcpy(b->data, t->data, gb_nbytes(t));
    return b;
}

static gb_dataset *make_source(const char *fn, int n, gb_tensor *const *t, bool slice) {
    if (!check_tensors(fn, n, t, slice)) return NULL;
    slices_ds *ds = (slices_ds *)gb__dataset_new(sizeof *ds, slice ? &slices_ops : &tensors_ops,
                                                  NULL, 0);
    if (!ds) return NULL;
    ds->count = slice ? t[0]->shape[0] : 1;
    for (int k = 0; k < n; k++) {
        ds->buf[k] = source_buffer(t[k]);
        if (!ds->buf[k]) break;
        ds->base.ncomp = k + 1;   /* what destroy releases */
        ds->dtype[k] = t[k]->dtype;
        ds->rank[k] = t[k]->rank - (slice ? 1 : 0);
        memcpy(ds->shape[k], t[k]->shape + (slice ? 1 : 0), (size_t)ds->rank[k] * sizeof(int64_t));
        ds->stride[k] = (size_t)gb__shape_size(ds->rank[k], ds->shape[k]) *
                        gb_dtype_size(ds->dtype[k]);
    }
    if (ds->base.ncomp != n) {
        gb_dataset_free(&ds->base);
        return NULL;
    }
    return &ds->base;
}

gb_dataset *gb_dataset_from_tensor_slices(int n, gb_tensor *const *t) {
    return make_source("gb_dataset_from_tensor_slices", n, t, true);
}

gb_dataset *gb_dataset_from_tensors(int n, gb_tensor *const *t) {
    return make_source("gb_dataset_from_tensors", n, t, false);
}
