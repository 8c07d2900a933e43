/* data/batch.c — batch(n, drop_remainder), as tf.data.Dataset.batch.
 *
 * Stacks n consecutive elements along a new first dimension. This is the
 * one stage that copies element bytes: each component of each element is
 * copied once into a pool buffer, which then travels to the consumer
 * unchanged. All elements of a batch must agree in dtype and shape, as in
 * TensorFlow (padded_batch does not exist here).
 *
 * A string component's bytes may live in its element's buffer (a map's
 * output), which goes back to the pool once its row is copied: the batch
 * gathers them in a growing buffer of its own, in row order, and at the
 * end moves them behind the batch's pairs (one buffer, as a map's output).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/internal.h"

typedef struct batch_ds {
    gb_dataset base;
    int64_t batch_size;
    bool drop_remainder;
} batch_ds;

typedef struct batch_iter {
    gb__iter base;
    gb__iter *up;
    int64_t batch_size;
    int64_t rows;   /* buffer rows: batch_size, or fewer if the input is shorter */
    bool drop_remainder;
    struct { char *p; size_t used, cap; } text[GB_DATA_MAX_COMPONENTS]; /* string bytes */
} batch_iter;

/* The first element sets the batch's layout: one pool buffer per
 * component, big enough for a full batch. */
static bool start_batch(batch_iter *it, const gb__element *first, gb__element *out) {
    out->n = 0;
    for (int k = 0; k < first->n; k++) {
        const gb__component *c = &first->c[k];
        if (c->rank + 1 > GB_MAX_RANK) {
            gb__error(GB_ERR_SHAPE, "BatchDataset",
                      "BatchDataset: component %d has rank %d; a batch of it would exceed "
                      "rank %d", k, c->rank, GB_MAX_RANK);
            return false;
        }
        size_t row = gb__component_nbytes(c);
        if (row && (uint64_t)it->rows > SIZE_MAX / row) {
            gb__error(GB_ERR_MEMORY, "BatchDataset",
                      "BatchDataset: a batch of %lld elements of %zu bytes is too large",
                      (long long)it->rows, row);
            return false;
        }
        gb_buffer *b = gb__pool_get(it->base.pool, row * (size_t)it->rows);
        if (!b) return false;
        gb__component *o = &out->c[out->n++];
        *o = (gb__component){.data = b->data, .owner = b, .dtype = c->dtype, .rank = c->rank + 1};
        memcpy(o->shape + 1, c->shape, (size_t)c->rank * sizeof c->shape[0]);
    }
    return true;
}

/* Element i of the batch must look like the first one (out's layout). */
static bool same_layout(const gb__element *out, const gb__element *e, int64_t i) {
    for (int k = 0; k < e->n; k++) {
        const gb__component *o = &out->c[k], *c = &e->c[k];
        bool same = c->dtype == o->dtype && c->rank == o->rank - 1 &&
                    memcmp(c->shape, o->shape + 1, (size_t)c->rank * sizeof c->shape[0]) == 0;
        if (same) continue;
        char s0[128], si[128];
        gb__error(GB_ERR_SHAPE, "BatchDataset",
                  "BatchDataset: cannot batch elements of different shapes in component %d: "
                  "the first element of the batch is %s %s, element %lld is %s %s", k,
                  gb_dtype_name(o->dtype), gb__shape_fmt(o->rank - 1, o->shape + 1, s0, sizeof s0),
                  (long long)i, gb_dtype_name(c->dtype),
                  gb__shape_fmt(c->rank, c->shape, si, sizeof si));
        return false;
    }
    return true;
}

/* Appends the bytes of string component c (of column k) to the batch's
 * own buffer for that column (emptied at a batch's first row). */
static bool add_text(batch_iter *it, int k, const gb__component *c, bool first) {
    if (first) it->text[k].used = 0;
    const gb_string *s = c->data;
    int64_t n = gb__shape_size(c->rank, c->shape);
    size_t need = it->text[k].used + (size_t)gb__strings_total(s, n);
    if (need > it->text[k].cap) {
        size_t cap = need > 2 * it->text[k].cap ? need : 2 * it->text[k].cap;
        char *p = realloc(it->text[k].p, cap ? cap : 1);
        if (!p) {
            gb__error(GB_ERR_MEMORY, "BatchDataset", "BatchDataset: out of memory for %zu bytes "
                      "of strings", need);
            return false;
        }
        it->text[k].p = p;
        it->text[k].cap = cap;
    }
    for (int64_t j = 0; j < n; it->text[k].used += (size_t)s[j++].len)
        if (s[j].len) memcpy(it->text[k].p + it->text[k].used, s[j].data, (size_t)s[j].len);
    return true;
}

/* Copies element e into row i of the batch out (starting it at row 0). */
static bool add_row(batch_iter *it, gb__element *out, const gb__element *e, int64_t i) {
    if (i == 0 && !start_batch(it, e, out)) return false;
    if (!same_layout(out, e, i)) return false;
    if (i >= it->rows) {   /* the input's cardinality was wrong */
        gb__error(GB_ERR_INTERNAL, "BatchDataset",
                  "BatchDataset: the input gave more elements than its cardinality %lld",
                  (long long)it->rows);
        return false;
    }
    for (int k = 0; k < e->n; k++) {
        size_t n = gb__component_nbytes(&e->c[k]);
        memcpy((char *)out->c[k].owner->data + (size_t)i * n, e->c[k].data, n);
        if (e->c[k].dtype == GB_STRING && !add_text(it, k, &e->c[k], i == 0)) return false;
    }
    return true;
}

/* Moves each string component's gathered bytes behind its pairs (rows of
 * them) and points the pairs there, in the order add_text wrote them. */
static bool finish_text(batch_iter *it, gb__element *out, int64_t rows) {
    for (int k = 0; k < out->n; k++) {
        gb__component *o = &out->c[k];
        if (o->dtype != GB_STRING) continue;
        int64_t n = rows * gb__shape_size(o->rank - 1, o->shape + 1);
        size_t pairs = (size_t)n * sizeof(gb_string);
        gb_buffer *b = gb__pool_get(it->base.pool, pairs + it->text[k].used);
        if (!b) return false;
        gb_string *dst = b->data;
        memcpy(dst, o->data, pairs);
        char *at = (char *)b->data + pairs;
        if (it->text[k].used) memcpy(at, it->text[k].p, it->text[k].used);
        for (int64_t j = 0; j < n; at += dst[j++].len) dst[j].data = dst[j].len ? at : gb__empty_bytes;
        gb__pool_put(it->base.pool, o->owner);
        o->owner = b;
        o->data = b->data;
    }
    return true;
}

/* Asks for the cache lines of e's data (the first 4 KB of each component):
 * after a shuffle, rows come from random places of a large array, and
 * fetching the next one while copying this one hides most of the wait. */
static void prefetch_data(const gb__element *e) {
    for (int k = 0; k < e->n; k++) {
        size_t n = gb__component_nbytes(&e->c[k]);
        for (size_t off = 0; off < n && off < 4096; off += 64)
            __builtin_prefetch((const char *)e->c[k].data + off);
    }
}

static bool batch_next(gb__iter *base, gb__element *out) {
    batch_iter *it = (batch_iter *)base;
    gb__pool *pool = base->pool;
    out->n = 0;
    int64_t i = 0;
    gb__element e, ahead;
    bool have = gb__iter_next(it->up, &e);
    for (; have; i++) {
        /* Look one element ahead, never past this batch: an error of the
         * next batch's first element must stay that batch's. */
        bool more = i + 1 < it->batch_size && gb__iter_next(it->up, &ahead);
        if (more) prefetch_data(&ahead);
        bool ok = add_row(it, out, &e, i);
        gb__element_release(pool, &e);
        if (!ok) {
            if (more) gb__element_release(pool, &ahead);
            break;
        }
        if (more) gb__element_move(&e, &ahead);
        have = more;
    }
    bool full = i == it->batch_size;
    if (!gb_ok() || i == 0 || (!full && it->drop_remainder) || !finish_text(it, out, i)) {
        gb__element_release(pool, out);
        return false;
    }
    for (int k = 0; k < out->n; k++) out->c[k].shape[0] = i;
    return true;
}

static void batch_iter_free(gb__iter *base) {
    batch_iter *it = (batch_iter *)base;
    for (int k = 0; k < GB_DATA_MAX_COMPONENTS; k++) free(it->text[k].p);
    gb__iter_free(it->up);
    free(base);
}

static const gb__iter_ops batch_iter_ops = {batch_next, batch_iter_free};

static gb__iter *batch_iter_new(gb_dataset *base, gb__pool *pool) {
    const batch_ds *ds = (const batch_ds *)base;
    batch_iter *it = gb__iter_alloc(sizeof *it, &batch_iter_ops, pool);
    if (!it) return NULL;
    it->batch_size = ds->batch_size;
    it->drop_remainder = ds->drop_remainder;
    /* batch(1 << 30) of a small dataset (one batch of everything) must not
     * allocate 2^30 rows. */
    int64_t n = gb_dataset_cardinality(base->input);
    it->rows = n >= 0 && n < ds->batch_size ? (n > 0 ? n : 1) : ds->batch_size;
    it->up = gb__dataset_iter(base->input, pool);
    if (!it->up) {
        free(it);
        return NULL;
    }
    return &it->base;
}

static int64_t batch_cardinality(const gb_dataset *base) {
    const batch_ds *ds = (const batch_ds *)base;
    int64_t n = gb_dataset_cardinality(base->input);
    if (n < 0) return n;
    return ds->drop_remainder ? n / ds->batch_size : (n + ds->batch_size - 1) / ds->batch_size;
}

static const gb__dataset_ops batch_ops = {"BatchDataset", batch_iter_new, batch_cardinality,
                                          NULL};

gb_dataset *gb_dataset_batch(gb_dataset *in, int64_t batch_size, bool drop_remainder) {
    if (!gb__dataset_check_input("gb_dataset_batch", in)) return NULL;
    if (batch_size < 1) {
        gb__error(GB_ERR_VALUE, "BatchDataset", "gb_dataset_batch: batch_size must be >= 1, got %lld",
                  (long long)batch_size);
        gb_dataset_free(in);
        return NULL;
    }
    batch_ds *ds = (batch_ds *)gb__dataset_new(sizeof *ds, &batch_ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->batch_size = batch_size;
    ds->drop_remainder = drop_remainder;
    return &ds->base;
}
