/* data/generator.c — datasets whose elements a C function makes, as
 * tf.data.Dataset.from_generator.
 *
 * Each iteration calls the function with index 0, 1, 2, ... until it
 * returns false; like a map function it runs in a scope of its own (on
 * the prefetch thread when a prefetch is downstream), and its tensors are
 * copied into pool buffers before the scope ends.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct generator_ds {
    gb_dataset base;
    gb_generator_fn fn;
    void *ctx;
} generator_ds;

typedef struct generator_iter {
    gb__iter base;
    const generator_ds *ds;
    int64_t index;
    bool ended;
} generator_iter;

static bool generator_next(gb__iter *base, gb__element *out) {
    generator_iter *it = (generator_iter *)base;
    const generator_ds *ds = it->ds;
    if (it->ended) return false;
    gb_tensor *res[GB_DATA_MAX_COMPONENTS] = {0};
    gb_scope_begin();
    gb_call_site site = gb__call_site();
    bool more = ds->fn(ds->ctx, it->index, res);
    gb__call_site_restore(site);
    bool ok = more && gb_ok() &&
              gb__element_from_tensors(base->pool, "GeneratorDataset: the generator", it->index,
                                       res, ds->base.ncomp, out);
    gb_scope_end();
    it->ended = !ok;   /* the end, or an error (then gb_ok() is false) */
    it->index++;
    return ok;
}

static void generator_iter_free(gb__iter *it) { free(it); }

static const gb__iter_ops generator_iter_ops = {generator_next, generator_iter_free};

static gb__iter *generator_iter_new(gb_dataset *ds, gb__pool *pool) {
    generator_iter *it = gb__iter_alloc(sizeof *it, &generator_iter_ops, pool);
    if (!it) return NULL;
    it->ds = (const generator_ds *)ds;
    return &it->base;
}

static int64_t generator_cardinality(const gb_dataset *ds) {
    (void)ds;
    return GB_DATA_UNKNOWN;
}

static const gb__dataset_ops generator_ops = {"GeneratorDataset", generator_iter_new,
                                              generator_cardinality, NULL};

gb_dataset *gb_dataset_from_generator(gb_generator_fn fn, void *ctx, int nout) {
    if (!fn) {
        gb__error(GB_ERR_VALUE, NULL, "gb_dataset_from_generator: the function is NULL");
        return NULL;
    }
    if (nout < 1 || nout > GB_DATA_MAX_COMPONENTS) {
        gb__error(GB_ERR_VALUE, NULL, "gb_dataset_from_generator: nout must be 1 to %d, got %d",
                  GB_DATA_MAX_COMPONENTS, nout);
        return NULL;
    }
    generator_ds *ds = (generator_ds *)gb__dataset_new(sizeof *ds, &generator_ops, NULL, nout);
    if (!ds) return NULL;
    ds->fn = fn;
    ds->ctx = ctx;
    return &ds->base;
}
