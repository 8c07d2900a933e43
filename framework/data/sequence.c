/* data/sequence.c — a Sequence as a dataset (keras.utils.Sequence, Keras
 * 3's PyDataset): the user's object knows its length in batches and makes
 * batch i on demand; each epoch visits the batches in order, or in the
 * shuffled order of that epoch, then calls on_epoch_end.
 *
 * With workers > 1, that many background threads make batches in
 * parallel (get_item must then be safe to call from several threads at
 * once, as Keras asks of use_multiprocessing). Batches are still handed
 * out in the epoch's order: thread w makes any batch not yet claimed,
 * into a ring of 2 * workers slots, and the consumer waits for the next
 * one in order. A worker's error is moved to the consumer and raised
 * when its batch's turn comes; stopping (the iterator freed mid-epoch)
 * waits for the workers to leave before anything is freed.
 */
#include <stdlib.h>

#include "data/internal.h"

enum { MAX_WORKERS = 16 };

typedef struct sequence_ds {
    gb_dataset base;
    gb_sequence seq;
    bool shuffle;
    uint64_t seed;
    int workers;
    atomic_int_least64_t epochs;   /* iterations started, for the shuffle */
} sequence_ds;

typedef struct slot {
    gb__element e;
    bool ready, failed;
    gb_error err;
} slot;

typedef struct sequence_iter {
    gb__iter base;
    const sequence_ds *ds;
    int64_t n, next_out;          /* batches this epoch, the next to hand out */
    int64_t *order;               /* batch index of each position */
    bool ended;
    /* workers */
    pthread_mutex_t mu;
    pthread_cond_t changed;       /* a slot filled, or a worker left */
    pthread_cond_t space;         /* a slot freed, or stop */
    slot *ring;
    int cap, running;
    int64_t next_claim;
    bool stop;
    gb__job jobs[MAX_WORKERS];
} sequence_iter;

/* Batch `pos` of the epoch into e, in a scope of its own (as a generator's). */
static bool make_batch(const sequence_iter *it, int64_t pos, gb__element *e) {
    const gb_sequence *s = &it->ds->seq;
    gb_tensor *res[GB_DATA_MAX_COMPONENTS] = {0};
    gb_scope_begin();
    gb_call_site site = gb__call_site();
    bool ok = s->get_item(s->user, it->order[pos], res);
    gb__call_site_restore(site);
    if (!ok && gb_ok())
        gb__error(GB_ERR_VALUE, "SequenceDataset",
                  "SequenceDataset: get_item(%lld) failed without an error",
                  (long long)it->order[pos]);
    ok = ok && gb_ok() &&
         gb__element_from_tensors(it->base.pool, "SequenceDataset: get_item", it->order[pos], res,
                                  it->ds->base.ncomp, e);
    gb_scope_end();
    return ok;
}

/* A worker: claims the next batch nobody makes yet, while the ring has room. */
static void work(void *arg) {
    sequence_iter *it = arg;
    gb_clear_error();
    gb__tl_thread_name = "data worker";
    pthread_mutex_lock(&it->mu);
    while (!it->stop && it->next_claim < it->n) {
        if (it->next_claim >= it->next_out + it->cap) {
            pthread_cond_wait(&it->space, &it->mu);
            continue;
        }
        int64_t pos = it->next_claim++;
        pthread_mutex_unlock(&it->mu);
        gb__element e = {0};
        double t0 = gb__prof_clock();
        bool ok = make_batch(it, pos, &e);
        gb__prof_range(GB_PROFILE_MAP, "get_item", t0);
        pthread_mutex_lock(&it->mu);
        slot *s = &it->ring[pos % it->cap];
        s->ready = true;
        if (ok) {
            gb__element_move(&s->e, &e);
        } else {
            s->failed = true;
            s->err = *gb_last_error();
            gb_clear_error();
            it->stop = true;   /* no more batches after a failed one */
        }
        pthread_cond_broadcast(&it->changed);
    }
    it->running--;
    pthread_cond_broadcast(&it->changed);
    pthread_mutex_unlock(&it->mu);   /* after this, it may be freed */
}

/* The epoch's end: on_epoch_end, once. */
static bool end_epoch(sequence_iter *it) {
    if (!it->ended && it->ds->seq.on_epoch_end) it->ds->seq.on_epoch_end(it->ds->seq.user);
    it->ended = true;
    return false;
}

static bool parallel_next(sequence_iter *it, gb__element *out) {
    pthread_mutex_lock(&it->mu);
    slot *s = &it->ring[it->next_out % it->cap];
    while (!s->ready) pthread_cond_wait(&it->changed, &it->mu);
    bool ok = !s->failed;
    if (ok)
        gb__element_move(out, &s->e);
    else
        gb__reraise(&s->err);
    s->ready = false;
    it->next_out++;
    pthread_cond_broadcast(&it->space);
    pthread_mutex_unlock(&it->mu);
    return ok;
}

static bool sequence_next(gb__iter *base, gb__element *out) {
    sequence_iter *it = (sequence_iter *)base;
    if (it->ended || it->next_out >= it->n) return end_epoch(it);
    bool ok = it->ring ? parallel_next(it, out) : make_batch(it, it->next_out++, out);
    if (!ok) it->ended = true;   /* a failed pass is no complete epoch: no on_epoch_end */
    return ok;
}

static void sequence_iter_free(gb__iter *base) {
    sequence_iter *it = (sequence_iter *)base;
    /* Every batch handed out (fit stops at the known length without
     * asking for more): the pass is complete all the same. */
    if (it->order && it->n > 0 && it->next_out == it->n) end_epoch(it);
    if (it->ring) {
        pthread_mutex_lock(&it->mu);
        it->stop = true;
        pthread_cond_broadcast(&it->space);
        while (it->running > 0) pthread_cond_wait(&it->changed, &it->mu);
        pthread_mutex_unlock(&it->mu);
        for (int i = 0; i < it->cap; i++)
            if (it->ring[i].ready && !it->ring[i].failed) gb__element_release(base->pool, &it->ring[i].e);
        free(it->ring);
        pthread_mutex_destroy(&it->mu);
        pthread_cond_destroy(&it->changed);
        pthread_cond_destroy(&it->space);
    }
    free(it->order);
    free(it);
}

static const gb__iter_ops sequence_iter_ops = {sequence_next, sequence_iter_free};

static bool start_workers(sequence_iter *it, int workers) {
    it->cap = 2 * workers;
    if (!(it->ring = calloc((size_t)it->cap, sizeof *it->ring))) {
        gb__error(GB_ERR_MEMORY, "SequenceDataset", "SequenceDataset: out of memory");
        return false;
    }
    pthread_mutex_init(&it->mu, NULL);
    pthread_cond_init(&it->changed, NULL);
    pthread_cond_init(&it->space, NULL);
    for (int w = 0; w < workers; w++) {
        it->jobs[w] = (gb__job){.fn = work, .arg = it};
        pthread_mutex_lock(&it->mu);
        it->running++;
        pthread_mutex_unlock(&it->mu);
        if (gb__worker_run(&it->jobs[w])) continue;
        pthread_mutex_lock(&it->mu);
        it->running--;
        pthread_mutex_unlock(&it->mu);
        return false;
    }
    return true;
}

static gb__iter *sequence_iter_new(gb_dataset *base, gb__pool *pool) {
    sequence_ds *ds = (sequence_ds *)base;
    sequence_iter *it = gb__iter_alloc(sizeof *it, &sequence_iter_ops, pool);
    if (!it) return NULL;
    it->ds = ds;
    it->n = ds->seq.len(ds->seq.user);
    if (it->n < 0) {
        gb__error(GB_ERR_VALUE, "SequenceDataset", "SequenceDataset: len() returned %lld",
                  (long long)it->n);
        sequence_iter_free(&it->base);
        return NULL;
    }
    if (!(it->order = malloc((size_t)(it->n ? it->n : 1) * sizeof *it->order))) {
        gb__error(GB_ERR_MEMORY, "SequenceDataset", "SequenceDataset: out of memory");
        sequence_iter_free(&it->base);
        return NULL;
    }
    uint64_t epoch = (uint64_t)atomic_fetch_add(&ds->epochs, 1);
    if (ds->shuffle)
        gb__shuffle_permutation(it->order, it->n, ds->seed, epoch);
    else
        for (int64_t i = 0; i < it->n; i++) it->order[i] = i;
    if (ds->workers > 1 && it->n > 0 && !start_workers(it, ds->workers)) {
        sequence_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static int64_t sequence_cardinality(const gb_dataset *base) {
    const sequence_ds *ds = (const sequence_ds *)base;
    int64_t n = ds->seq.len(ds->seq.user);
    return n >= 0 ? n : GB_DATA_UNKNOWN;
}

static const gb__dataset_ops sequence_ops = {"SequenceDataset", sequence_iter_new,
                                             sequence_cardinality, NULL};

gb_dataset *gb_dataset_from_sequence(const gb_sequence *seq, bool shuffle, uint64_t seed,
                                     int workers) {
    const char *why = !seq                                   ? "the sequence is NULL"
                      : !seq->len || !seq->get_item          ? "len and get_item are required"
                      : seq->ncomponents < 1 || seq->ncomponents > GB_DATA_MAX_COMPONENTS
                          ? "ncomponents must be 1 to 8"
                      : workers < 0 || workers > MAX_WORKERS ? "workers must be 0 to 16"
                                                             : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "gb_dataset_from_sequence: %s", why);
        return NULL;
    }
    sequence_ds *ds = (sequence_ds *)gb__dataset_new(sizeof *ds, &sequence_ops, NULL, seq->ncomponents);
    if (!ds) return NULL;
    ds->seq = *seq;
    ds->shuffle = shuffle;
    ds->seed = seed;
    ds->workers = workers;
    atomic_init(&ds->epochs, 0);
    return &ds->base;
}
