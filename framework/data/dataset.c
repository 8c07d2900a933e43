/* data/dataset.c — what every dataset shares: reference counting, the
 * common checks of transformations, elements, and tensors that view heap
 * buffers.
 *
 * Datasets are immutable once built (only their reference count and a
 * shuffle's epoch counter change), so several iterators, on several
 * threads, may walk one dataset at the same time.
 */
#include <stdlib.h>

#include "data/internal.h"

/* ---- datasets ----------------------------------------------------------------- */

gb_dataset *gb__dataset_new(size_t size, const gb__dataset_ops *ops, gb_dataset *input,
                            int ncomp) {
    gb_dataset *ds = calloc(1, size);
    if (!ds) {
        gb__error(GB_ERR_MEMORY, ops->name, "%s: out of memory", ops->name);
        gb_dataset_free(input);
        return NULL;
    }
    ds->ops = ops;
    atomic_init(&ds->refs, 1);
    ds->input = input;
    ds->ncomp = ncomp;
    return ds;
}

bool gb__dataset_check_input(const char *fn, gb_dataset *input) {
    if (input) return true;
    /* Normally the call that made the input failed and its error stands. */
    if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: the input dataset is NULL", fn);
    return false;
}

gb_dataset *gb_dataset_ref(gb_dataset *ds) {
    if (ds) atomic_fetch_add(&ds->refs, 1);
    return ds;
}

void gb_dataset_free(gb_dataset *ds) {
    /* A chain is freed from its end down to its source, iteratively. */
    while (ds && atomic_fetch_sub(&ds->refs, 1) == 1) {
        gb_dataset *input = ds->input;
        if (ds->ops->destroy) ds->ops->destroy(ds);
        free(ds);
        ds = input;
    }
}

int gb_dataset_num_components(const gb_dataset *ds) { return ds ? ds->ncomp : 0; }

int64_t gb_dataset_cardinality(const gb_dataset *ds) {
    return ds ? ds->ops->cardinality(ds) : GB_DATA_UNKNOWN;
}

/* ---- elements and iterators ----------------------------------------------------- */

size_t gb__component_nbytes(const gb__component *c) {
    return (size_t)gb__shape_size(c->rank, c->shape) * gb_dtype_size(c->dtype);
}

size_t gb__component_total(const gb__component *c) {
    size_t n = gb__component_nbytes(c);
    if (c->dtype == GB_STRING) n += (size_t)gb__strings_total(c->data, gb__shape_size(c->rank, c->shape));
    return n;
}

void gb__component_copy(const gb__component *c, void *dst) {
    size_t n = gb__component_nbytes(c);
    if (c->dtype == GB_STRING)
        gb__strings_pack(dst, c->data, gb__shape_size(c->rank, c->shape), (char *)dst + n);
    else if (n)
        memcpy(dst, c->data, n);
}

void gb__element_move(gb__element *dst, const gb__element *src) {
    /* Only the used components: an element is copied a few times per item. */
    dst->n = src->n;
    memcpy(dst->c, src->c, (size_t)src->n * sizeof src->c[0]);
}

void gb__element_release(gb__pool *p, gb__element *e) {
    for (int k = 0; k < e->n; k++)
        if (e->c[k].owner) gb__pool_put(p, e->c[k].owner);
    e->n = 0;
}

bool gb__element_from_tensors(gb__pool *pool, const char *fn, int64_t index,
                              gb_tensor *const *t, int n, gb__element *out) {
    out->n = 0;
    for (int k = 0; k < n; k++) {
        if (!t[k] || !t[k]->data) {
            if (gb_ok())
                gb__error(GB_ERR_VALUE, NULL, "%s function returned %s output %d for element %lld",
                          fn, t[k] ? "a symbolic (traced)" : "a NULL", k, (long long)index);
            break;
        }
        /* A string tensor's bytes are in the function's scope, which ends
         * now: they travel in the same buffer, after the pairs. */
        gb__component src = {.data = t[k]->data, .dtype = t[k]->dtype, .rank = t[k]->rank};
        memcpy(src.shape, t[k]->shape, (size_t)t[k]->rank * sizeof t[k]->shape[0]);
        gb_buffer *b = gb__pool_get(pool, gb__component_total(&src));
        if (!b) break;
        gb__component_copy(&src, b->data);
        gb__component *c = &out->c[out->n++];
        *c = (gb__component){.data = b->data, .owner = b, .dtype = t[k]->dtype, .rank = t[k]->rank};
        memcpy(c->shape, t[k]->shape, (size_t)t[k]->rank * sizeof t[k]->shape[0]);
    }
    if (out->n == n) return true;
    gb__element_release(pool, out);
    return false;
}

void *gb__iter_alloc(size_t size, const gb__iter_ops *ops, gb__pool *pool) {
    gb__iter *it = calloc(1, size);
    if (!it) {
        gb__error(GB_ERR_MEMORY, NULL, "dataset iterator: out of memory");
        return NULL;
    }
    it->ops = ops;
    it->pool = pool;
    return it;
}

/* ---- tensors over heap buffers ----------------------------------------------------- */

gb_tensor *gb__heap_tensor(gb_buffer *b, bool adopt, gb_dtype dt, int rank,
                           const int64_t *shape) {
    gb_tensor *t = gb__tensor_new(dt, rank, shape, false);
    if (t && gb__scope_defer((gb_defer_fn)gb__buffer_unref, b)) {
        if (!adopt) b->refcount++;
        t->buf = b;
        t->data = b->data;
        return t;
    }
    if (adopt) gb__buffer_unref(b);
    return NULL;
}
