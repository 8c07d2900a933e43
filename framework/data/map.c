/* data/map.c — map(fn), as tf.data.Dataset.map with a C function.
 *
 * The function sees each element as tensors of a scope opened for it and
 * may call any op; its outputs are copied into pool buffers and the scope
 * ends, so nothing it allocates outlives the element. It runs on the
 * thread that pulls from the map: the prefetch thread when a prefetch is
 * downstream, which is how preprocessing overlaps training.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct map_ds {
    gb_dataset base;
    gb_map_fn fn;
    void *ctx;
} map_ds;

typedef struct map_iter {
    gb__iter base;
    gb__iter *up;
    const map_ds *ds;
    int64_t index;   /* of the element, for errors */
} map_iter;

/* Runs the function on element e inside its own scope. */
static bool apply(map_iter *it, const gb__element *e, gb__element *out) {
    const map_ds *ds = it->ds;
    gb_tensor *in[GB_DATA_MAX_COMPONENTS], *res[GB_DATA_MAX_COMPONENTS] = {0};
    out->n = 0;
    gb_scope_begin();
    bool ok = true;
    for (int k = 0; ok && k < e->n; k++) {
        const gb__component *c = &e->c[k];
        in[k] = gb__tensor_new(c->dtype, c->rank, c->shape, true);
        if (in[k]) memcpy(in[k]->data, c->data, gb__component_nbytes(c));
        ok = in[k] != NULL;
    }
    gb_call_site site = gb__call_site();
    double t0 = gb__prof_clock();
    bool mapped = ok && ds->fn(ds->ctx, in, e->n, res);
    gb__prof_range(GB_PROFILE_MAP, "map", t0);
    gb__call_site_restore(site);
    if (ok && !mapped && gb_ok())
        gb__error(GB_ERR_VALUE, "MapDataset",
                  "MapDataset: the map function failed on element %lld", (long long)it->index);
    ok = ok && gb_ok() &&
         gb__element_from_tensors(it->base.pool, "MapDataset: the map", it->index, res,
                                  ds->base.ncomp, out);
    gb_scope_end();
    return ok;
}

static bool map_next(gb__iter *base, gb__element *out) {
    map_iter *it = (map_iter *)base;
    gb__element e;
    if (!gb__iter_next(it->up, &e)) return false;
    bool ok = apply(it, &e, out);
    gb__element_release(base->pool, &e);
    it->index++;
    return ok;
}

static void map_iter_free(gb__iter *base) {
    gb__iter_free(((map_iter *)base)->up);
    free(base);
}

static const gb__iter_ops map_iter_ops = {map_next, map_iter_free};

static gb__iter *map_iter_new(gb_dataset *ds, gb__pool *pool) {
    map_iter *it = gb__iter_alloc(sizeof *it, &map_iter_ops, pool);
    if (!it) return NULL;
    it->ds = (const map_ds *)ds;
    it->up = gb__dataset_iter(ds->input, pool);
    if (!it->up) {
        free(it);
        return NULL;
    }
    return &it->base;
}

static int64_t map_cardinality(const gb_dataset *ds) { return gb_dataset_cardinality(ds->input); }

static const gb__dataset_ops map_ops = {"MapDataset", map_iter_new, map_cardinality, NULL};

gb_dataset *gb_dataset_map(gb_dataset *in, gb_map_fn fn, void *ctx, int nout) {
    if (!gb__dataset_check_input("gb_dataset_map", in)) return NULL;
    if (!fn)
        gb__error(GB_ERR_VALUE, "MapDataset", "gb_dataset_map: the function is NULL");
    else if (nout < 1 || nout > GB_DATA_MAX_COMPONENTS)
        gb__error(GB_ERR_VALUE, "MapDataset", "gb_dataset_map: nout must be 1 to %d, got %d",
                  GB_DATA_MAX_COMPONENTS, nout);
    if (!fn || nout < 1 || nout > GB_DATA_MAX_COMPONENTS) {
        gb_dataset_free(in);
        return NULL;
    }
    map_ds *ds = (map_ds *)gb__dataset_new(sizeof *ds, &map_ops, in, nout);
    if (!ds) return NULL;
    ds->fn = fn;
    ds->ctx = ctx;
    return &ds->base;
}
