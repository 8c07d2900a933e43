/* data/shuffle.c — shuffle(buffer_size, seed), as tf.data.Dataset.shuffle.
 *
 * The iterator fills a buffer with the first buffer_size elements, then
 * each output is drawn uniformly from the buffer and its place taken by
 * the next input element; at the end of the input the buffer drains. A
 * buffer at least as large as the dataset gives a uniform permutation.
 *
 * Reshuffling: the k-th iterator made from the dataset (a new epoch, or
 * the k-th round of a repeat above it) draws from a generator seeded by
 * (seed, k), so every epoch has its own order and a run with the same
 * seed sees the same orders, with or without prefetch.
 *
 * The buffer holds elements, which are pointers for slices of a source:
 * a 10000-element buffer of images costs no image copies. It stores just
 * the components each element has, packed: every output reads a random
 * entry, and a small buffer keeps those reads in cache.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct shuffle_ds {
    gb_dataset base;
    int64_t buffer_size;
    uint64_t seed;
    atomic_uint_fast64_t iterations;   /* iterators made so far */
} shuffle_ds;

typedef struct shuffle_iter {
    gb__iter base;
    gb__iter *up;
    int64_t limit;        /* buffer_size */
    int ncomp;            /* components per element */
    gb__component *buf;   /* entry i: buf[i * ncomp ...] */
    int64_t count, cap;
    bool up_done;
    uint64_t rng;
    uint64_t next_raw;   /* the random number of the next draw */
} shuffle_iter;

static gb__component *entry(shuffle_iter *it, int64_t i) { return it->buf + i * it->ncomp; }

static void store(shuffle_iter *it, int64_t i, const gb__element *e) {
    memcpy(entry(it, i), e->c, (size_t)it->ncomp * sizeof e->c[0]);
}

static void load(shuffle_iter *it, int64_t i, gb__element *e) {
    e->n = it->ncomp;
    memcpy(e->c, entry(it, i), (size_t)it->ncomp * sizeof e->c[0]);
}

/* Uniform in [0, n) from a random 64-bit r (Lemire's multiply-shift;
 * bias below n / 2^64). */
static int64_t scale(uint64_t r, int64_t n) {
    return (int64_t)(((unsigned __int128)r * (uint64_t)n) >> 64);
}

/* The generator of the k-th iterator of a shuffle seeded by seed. */
static uint64_t rng_for(uint64_t seed, uint64_t k) {
    uint64_t mix = seed ^ (0x9E3779B97F4A7C15ull * (k + 1));
    return gb__splitmix64(&mix);
}

void gb__shuffle_permutation(int64_t *perm, int64_t n, uint64_t seed, uint64_t k) {
    /* shuffle_next's draws over a buffer that holds everything: pick an
     * entry, move the last one into its place. */
    uint64_t rng = rng_for(seed, k);
    int64_t *buf = malloc((size_t)(n ? n : 1) * sizeof *buf);
    if (!buf) {
        for (int64_t i = 0; i < n; i++) perm[i] = i; /* unshuffled beats crashing */
        gb__error(GB_ERR_MEMORY, NULL, "shuffle: out of memory for %lld indices", (long long)n);
        return;
    }
    for (int64_t i = 0; i < n; i++) buf[i] = i;
    for (int64_t count = n, o = 0; count > 0; o++) {
        int64_t i = scale(gb__splitmix64(&rng), count);
        perm[o] = buf[i];
        buf[i] = buf[--count];
    }
    free(buf);
}

/* Adds input elements until the buffer is full or the input ends. */
static bool fill(shuffle_iter *it) {
    while (!it->up_done && it->count < it->limit) {
        if (it->count == it->cap) {
            int64_t cap = it->cap ? 2 * it->cap : 1024;
            if (cap > it->limit) cap = it->limit;
            gb__component *b = realloc(it->buf, (size_t)(cap * it->ncomp) * sizeof *b);
            if (!b) {
                gb__error(GB_ERR_MEMORY, "ShuffleDataset",
                          "ShuffleDataset: out of memory growing the buffer to %lld elements",
                          (long long)cap);
                return false;
            }
            it->buf = b;
            it->cap = cap;
        }
        gb__element e;
        if (gb__iter_next(it->up, &e)) {
            assert(e.n == it->ncomp);
            store(it, it->count++, &e);
        } else {
            if (!gb_ok()) return false;
            it->up_done = true;
        }
    }
    return true;
}

static bool shuffle_next(gb__iter *base, gb__element *out) {
    shuffle_iter *it = (shuffle_iter *)base;
    if (!fill(it) || it->count == 0) return false;
    int64_t i = scale(it->next_raw, it->count);
    load(it, i, out);
    /* The last element fills the hole; the next call refills the buffer. */
    if (i != --it->count)
        memcpy(entry(it, i), entry(it, it->count), (size_t)it->ncomp * sizeof *it->buf);
    /* Draw the next number now and fetch the entry it will most likely
     * pick (with the buffer refilled), so that random read does not stall
     * the next call. The order does not depend on the guess. */
    it->next_raw = gb__splitmix64(&it->rng);
    __builtin_prefetch(entry(it, scale(it->next_raw, it->count + !it->up_done)));
    return true;
}

static void shuffle_iter_free(gb__iter *base) {
    shuffle_iter *it = (shuffle_iter *)base;
    for (int64_t i = 0; i < it->count; i++) {
        gb__element e;
        load(it, i, &e);
        gb__element_release(base->pool, &e);
    }
    free(it->buf);
    gb__iter_free(it->up);
    free(it);
}

static const gb__iter_ops shuffle_iter_ops = {shuffle_next, shuffle_iter_free};

static gb__iter *shuffle_iter_new(gb_dataset *base, gb__pool *pool) {
    shuffle_ds *ds = (shuffle_ds *)base;
    shuffle_iter *it = gb__iter_alloc(sizeof *it, &shuffle_iter_ops, pool);
    if (!it) return NULL;
    it->limit = ds->buffer_size;
    it->ncomp = base->ncomp;
    it->rng = rng_for(ds->seed, atomic_fetch_add(&ds->iterations, 1));
    it->next_raw = gb__splitmix64(&it->rng);
    it->up = gb__dataset_iter(base->input, pool);
    if (!it->up) {
        shuffle_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static int64_t shuffle_cardinality(const gb_dataset *ds) {
    return gb_dataset_cardinality(ds->input);
}

static const gb__dataset_ops shuffle_ops = {"ShuffleDataset", shuffle_iter_new,
                                            shuffle_cardinality, NULL};

gb_dataset *gb_dataset_shuffle(gb_dataset *in, int64_t buffer_size, uint64_t seed) {
    if (!gb__dataset_check_input("gb_dataset_shuffle", in)) return NULL;
    if (buffer_size < 1) {
        gb__error(GB_ERR_VALUE, "ShuffleDataset",
                  "gb_dataset_shuffle: buffer_size must be >= 1, got %lld",
                  (long long)buffer_size);
        gb_dataset_free(in);
        return NULL;
    }
    shuffle_ds *ds = (shuffle_ds *)gb__dataset_new(sizeof *ds, &shuffle_ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->buffer_size = buffer_size;
    ds->seed = seed;
    atomic_init(&ds->iterations, 0);
    return &ds->base;
}
