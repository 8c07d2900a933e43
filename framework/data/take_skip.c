/* data/take_skip.c — take(count) and skip(count): the first count elements
 * of the input, or all but them, as tf.data.Dataset.take / skip. count -1
 * means all. One iterator serves both: it discards `skip` elements, then
 * passes on at most `take`.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct take_skip_ds {
    gb_dataset base;
    int64_t count;
} take_skip_ds;

typedef struct take_skip_iter {
    gb__iter base;
    gb__iter *up;
    int64_t to_skip;   /* -1: everything */
    int64_t to_take;   /* -1: everything */
} take_skip_iter;

static bool take_skip_next(gb__iter *base, gb__element *out) {
    take_skip_iter *it = (take_skip_iter *)base;
    while (it->to_skip != 0) {
        if (!gb__iter_next(it->up, out)) return false;
        gb__element_release(base->pool, out);
        if (it->to_skip > 0) it->to_skip--;
    }
    if (it->to_take == 0 || !gb__iter_next(it->up, out)) return false;
    if (it->to_take > 0) it->to_take--;
    return true;
}

static void take_skip_iter_free(gb__iter *base) {
    gb__iter_free(((take_skip_iter *)base)->up);
    free(base);
}

static const gb__iter_ops take_skip_iter_ops = {take_skip_next, take_skip_iter_free};

static gb__iter *new_iter(gb_dataset *ds, gb__pool *pool, int64_t skip, int64_t take) {
    take_skip_iter *it = gb__iter_alloc(sizeof *it, &take_skip_iter_ops, pool);
    if (!it) return NULL;
    it->to_skip = skip;
    it->to_take = take;
    it->up = gb__dataset_iter(ds->input, pool);
    if (!it->up) {
        free(it);
        return NULL;
    }
    return &it->base;
}

static int64_t count_of(const gb_dataset *ds) { return ((const take_skip_ds *)ds)->count; }

static gb__iter *take_iter_new(gb_dataset *ds, gb__pool *pool) {
    return new_iter(ds, pool, 0, count_of(ds));
}

static gb__iter *skip_iter_new(gb_dataset *ds, gb__pool *pool) {
    return new_iter(ds, pool, count_of(ds), -1);
}

static int64_t take_cardinality(const gb_dataset *ds) {
    int64_t n = gb_dataset_cardinality(ds->input), count = count_of(ds);
    if (n == GB_DATA_UNKNOWN || count < 0) return n;
    if (n == GB_DATA_INFINITE) return count;
    return n < count ? n : count;
}

static int64_t skip_cardinality(const gb_dataset *ds) {
    int64_t n = gb_dataset_cardinality(ds->input), count = count_of(ds);
    if (n < 0) return n;
    if (count < 0) return 0;
    return n > count ? n - count : 0;
}

static const gb__dataset_ops take_ops = {"TakeDataset", take_iter_new, take_cardinality, NULL};
static const gb__dataset_ops skip_ops = {"SkipDataset", skip_iter_new, skip_cardinality, NULL};

static gb_dataset *make(const char *fn, const gb__dataset_ops *ops, gb_dataset *in,
                        int64_t count) {
    if (!gb__dataset_check_input(fn, in)) return NULL;
    if (count < -1) {
        gb__error(GB_ERR_VALUE, ops->name, "%s: count must be >= 0, or -1 for all; got %lld", fn,
                  (long long)count);
        gb_dataset_free(in);
        return NULL;
    }
    take_skip_ds *ds = (take_skip_ds *)gb__dataset_new(sizeof *ds, ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->count = count;
    return &ds->base;
}

gb_dataset *gb_dataset_take(gb_dataset *in, int64_t count) {
    return make("gb_dataset_take", &take_ops, in, count);
}

gb_dataset *gb_dataset_skip(gb_dataset *in, int64_t count) {
    return make("gb_dataset_skip", &skip_ops, in, count);
}
