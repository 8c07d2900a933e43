/* data/repeat.c — repeat(count), as tf.data.Dataset.repeat.
 *
 * Each round makes a fresh iterator of the input, so a shuffle below a
 * repeat reshuffles every round. A round that yields nothing ends the
 * sequence, as in TensorFlow: repeat(-1) of an empty dataset is empty,
 * not an endless loop.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct repeat_ds {
    gb_dataset base;
    int64_t count;   /* -1: forever */
} repeat_ds;

typedef struct repeat_iter {
    gb__iter base;
    gb_dataset *input;
    gb__iter *round;         /* the current round's iterator */
    int64_t count, rounds_done, yielded;   /* yielded: in this round */
} repeat_iter;

static bool repeat_next(gb__iter *base, gb__element *out) {
    repeat_iter *it = (repeat_iter *)base;
    for (;;) {
        if (it->count >= 0 && it->rounds_done >= it->count) return false;
        if (!it->round) {
            it->round = gb__dataset_iter(it->input, base->pool);
            if (!it->round) return false;
            it->yielded = 0;
        }
        if (gb__iter_next(it->round, out)) {
            it->yielded++;
            return true;
        }
        if (!gb_ok()) return false;
        gb__iter_free(it->round);
        it->round = NULL;
        it->rounds_done++;
        if (it->yielded == 0) return false;
    }
}

static void repeat_iter_free(gb__iter *base) {
    gb__iter_free(((repeat_iter *)base)->round);
    free(base);
}

static const gb__iter_ops repeat_iter_ops = {repeat_next, repeat_iter_free};

static gb__iter *repeat_iter_new(gb_dataset *ds, gb__pool *pool) {
    repeat_iter *it = gb__iter_alloc(sizeof *it, &repeat_iter_ops, pool);
    if (!it) return NULL;
    it->input = ds->input;
    it->count = ((const repeat_ds *)ds)->count;
    return &it->base;
}

/* TensorFlow's rule: forever over a non-empty input is infinite even
 * when the input's size is unknown. */
static int64_t repeat_cardinality(const gb_dataset *ds) {
    int64_t count = ((const repeat_ds *)ds)->count;
    int64_t n = gb_dataset_cardinality(ds->input);
    if (count < 0) return n == 0 ? 0 : GB_DATA_INFINITE;
    if (count == 0) return 0;
    if (n < 0) return n;
    return n > INT64_MAX / count ? GB_DATA_INFINITE : n * count;
}

static const gb__dataset_ops repeat_ops = {"RepeatDataset", repeat_iter_new, repeat_cardinality,
                                           NULL};

gb_dataset *gb_dataset_repeat(gb_dataset *in, int64_t count) {
    if (!gb__dataset_check_input("gb_dataset_repeat", in)) return NULL;
    if (count < -1) {
        gb__error(GB_ERR_VALUE, "RepeatDataset",
                  "gb_dataset_repeat: count must be >= 0, or -1 for forever; got %lld",
                  (long long)count);
        gb_dataset_free(in);
        return NULL;
    }
    repeat_ds *ds = (repeat_ds *)gb__dataset_new(sizeof *ds, &repeat_ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->count = count;
    return &ds->base;
}
