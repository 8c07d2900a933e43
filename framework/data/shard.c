/* data/shard.c — shard(num_shards, index): every num_shards-th element,
 * starting at element `index`, as tf.data.Dataset.shard.
 *
 * Data-parallel training (gb_dist.h) gives each rank its share this way:
 * every rank shuffles with the same seed, so all see one order, and rank r
 * keeps elements r, r + N, r + 2N, ... Batched after the shard (at B per
 * rank), the N ranks' k-th batches together hold exactly the elements of
 * the k-th batch of N*B one process would take.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct shard_ds {
    gb_dataset base;
    int64_t num_shards, index;
} shard_ds;

typedef struct shard_iter {
    gb__iter base;
    gb__iter *up;
    int64_t num_shards, index;
    int64_t seen;             /* elements taken from upstream */
} shard_iter;

/* Passes on the next element whose position is index modulo num_shards;
 * the others go back to the pool. */
static bool shard_next(gb__iter *base, gb__element *out) {
    shard_iter *it = (shard_iter *)base;
    for (;;) {
        if (!gb__iter_next(it->up, out)) return false;
        if (it->seen++ % it->num_shards == it->index) return true;
        gb__element_release(base->pool, out);
    }
}

static void shard_iter_free(gb__iter *base) {
    gb__iter_free(((shard_iter *)base)->up);
    free(base);
}

static const gb__iter_ops shard_iter_ops = {shard_next, shard_iter_free};

static gb__iter *shard_iter_new(gb_dataset *ds, gb__pool *pool) {
    const shard_ds *s = (const shard_ds *)ds;
    shard_iter *it = gb__iter_alloc(sizeof *it, &shard_iter_ops, pool);
    if (!it) return NULL;
    it->num_shards = s->num_shards;
    it->index = s->index;
    it->up = gb__dataset_iter(ds->input, pool);
    if (!it->up) {
        free(it);
        return NULL;
    }
    return &it->base;
}

static int64_t shard_cardinality(const gb_dataset *ds) {
    const shard_ds *s = (const shard_ds *)ds;
    int64_t n = gb_dataset_cardinality(ds->input);
    if (n < 0) return n;
    return n > s->index ? (n - s->index + s->num_shards - 1) / s->num_shards : 0;
}

static const gb__dataset_ops shard_ops = {"ShardDataset", shard_iter_new, shard_cardinality, NULL};

gb_dataset *gb_dataset_shard(gb_dataset *in, int64_t num_shards, int64_t index) {
    static const char WHO[] = "gb_dataset_shard";
    if (!gb__dataset_check_input(WHO, in)) return NULL;
    if (num_shards < 1 || index < 0 || index >= num_shards) {
        gb__error(GB_ERR_VALUE, shard_ops.name,
                  "%s: index must be in [0, num_shards) and num_shards >= 1; got index %lld of "
                  "%lld shards",
                  WHO, (long long)index, (long long)num_shards);
        gb_dataset_free(in);
        return NULL;
    }
    shard_ds *ds = (shard_ds *)gb__dataset_new(sizeof *ds, &shard_ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->num_shards = num_shards;
    ds->index = index;
    return &ds->base;
}
