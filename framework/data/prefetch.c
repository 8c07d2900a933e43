/* data/prefetch.c — prefetch(n): the pipeline below runs ahead on a
 * background thread, as tf.data.Dataset.prefetch.
 *
 * A producer job (on a worker thread, data/worker.c) pulls elements from
 * the upstream iterator into a ring of n and waits when it is full; the
 * consumer's next() takes from the ring. The elements carry their pool
 * buffers with them, so nothing is copied.
 *
 * A starved consumer helps: when the ring is empty and the producer is
 * not inside the upstream iterator (it waits to be scheduled, as on a
 * machine busier than its cores), the consumer pulls the next element
 * itself instead of sleeping until the producer runs. One `producing`
 * flag serializes the two, so the sequence is the same element for
 * element; the consumer only ever waits for an element being made.
 *
 * Errors: the producer's thread has its own sticky error. When the
 * upstream fails, the error is moved into the ring's state and raised on
 * the consumer's thread when it reaches that point of the sequence, with
 * the same message as without prefetch.
 *
 * Shutdown: freeing the iterator (even mid-epoch) sets `stop`, wakes the
 * producer and waits until its job has returned; the producer finishes at
 * most the element it is computing. Then the ring's elements go back to
 * the pool and the upstream iterator is freed on the consumer's thread.
 */
#include <stdlib.h>

#include "data/internal.h"

enum { AUTOTUNE_DEPTH = 2 };

typedef struct prefetch_ds {
    gb_dataset base;
    int depth;
} prefetch_ds;

typedef struct prefetch_iter {
    gb__iter base;
    gb__iter *up;
    gb__job job;
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* to the consumer: an element, the end, or the job's return */
    pthread_cond_t space;     /* to the producer: room in the ring, or stop */
    gb__element *ring;
    int cap, head, count;
    bool stop;       /* the consumer is leaving */
    bool done;       /* the upstream has reached the end or an error */
    bool producing;  /* a thread is inside the upstream iterator */
    bool running;    /* the job has not returned yet */
    bool failed, raised;
    gb_error err;    /* the producer's error when failed */
} prefetch_iter;

/* Producer thread: the end or the error of the upstream sequence. */
static void finish_sequence(prefetch_iter *p) {
    p->done = true;
    const gb_error *e = gb_last_error();
    if (e) {
        p->failed = true;
        p->err = *e;
        gb_clear_error();
    }
}

static void produce(void *arg) {
    prefetch_iter *p = arg;
    gb_clear_error();   /* the worker's thread may have run other pipelines */
    gb__tl_thread_name = "prefetch";
    pthread_mutex_lock(&p->mu);
    while (!p->stop && !p->done) {
        if (p->count == p->cap || p->producing) {
            pthread_cond_wait(&p->space, &p->mu);
            continue;
        }
        p->producing = true;
        pthread_mutex_unlock(&p->mu);
        gb__element e;
        double t0 = gb__prof_clock();
        bool ok = gb__iter_next(p->up, &e);
        gb__prof_range(GB_PROFILE_PREFETCH, "prefetch", t0);
        pthread_mutex_lock(&p->mu);
        p->producing = false;
        if (!ok) {
            finish_sequence(p);
        } else {
            /* Only the consumer takes from the ring, so there is still room. */
            gb__element_move(&p->ring[(p->head + p->count) % p->cap], &e);
            p->count++;
        }
        pthread_cond_signal(&p->changed);
    }
    p->running = false;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);   /* after this, p may be freed */
}

/* Consumer thread, p->mu held: pulls the next element itself (the ring
 * is empty and the producer idle). An error stays on this thread. */
static bool help(prefetch_iter *p, gb__element *out) {
    p->producing = true;
    pthread_mutex_unlock(&p->mu);
    bool ok = gb__iter_next(p->up, out);
    pthread_mutex_lock(&p->mu);
    p->producing = false;
    p->done = !ok;
    pthread_cond_signal(&p->space);   /* the producer may go on (or stop) */
    return ok;
}

/* Consumer thread. */
static bool prefetch_next(gb__iter *base, gb__element *out) {
    prefetch_iter *p = (prefetch_iter *)base;
    pthread_mutex_lock(&p->mu);
    bool ok;
    for (;;) {
        if (p->count > 0) {
            gb__element_move(out, &p->ring[p->head]);
            p->head = (p->head + 1) % p->cap;
            p->count--;
            pthread_cond_signal(&p->space);
            ok = true;
            break;
        }
        if (p->done) {
            ok = false;
            break;
        }
        if (!p->producing) {
            ok = help(p, out);
            break;
        }
        pthread_cond_wait(&p->changed, &p->mu);
    }
    bool raise = !ok && p->failed && !p->raised;
    p->raised |= raise;
    pthread_mutex_unlock(&p->mu);
    if (raise) gb__reraise(&p->err);
    return ok;
}

static void prefetch_iter_free(gb__iter *base) {
    prefetch_iter *p = (prefetch_iter *)base;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->space);
    while (p->running) pthread_cond_wait(&p->changed, &p->mu);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->count; i++)
        gb__element_release(base->pool, &p->ring[(p->head + i) % p->cap]);
    gb__iter_free(p->up);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->changed);
    pthread_cond_destroy(&p->space);
    free(p->ring);
    free(p);
}

static const gb__iter_ops prefetch_iter_ops = {prefetch_next, prefetch_iter_free};

static gb__iter *prefetch_iter_new(gb_dataset *ds, gb__pool *pool) {
    prefetch_iter *p = gb__iter_alloc(sizeof *p, &prefetch_iter_ops, pool);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->changed, NULL);
    pthread_cond_init(&p->space, NULL);
    p->cap = ((const prefetch_ds *)ds)->depth;
    p->ring = malloc((size_t)p->cap * sizeof *p->ring);
    p->up = p->ring ? gb__dataset_iter(ds->input, pool) : NULL;
    if (!p->ring && gb_ok())
        gb__error(GB_ERR_MEMORY, "PrefetchDataset", "PrefetchDataset: out of memory");
    p->job = (gb__job){.fn = produce, .arg = p};
    p->running = p->up != NULL;
    if (p->up && !gb__worker_run(&p->job)) p->running = false;
    if (!p->running) {
        prefetch_iter_free(&p->base);
        return NULL;
    }
    return &p->base;
}

static int64_t prefetch_cardinality(const gb_dataset *ds) {
    return gb_dataset_cardinality(ds->input);
}

static const gb__dataset_ops prefetch_ops = {"PrefetchDataset", prefetch_iter_new,
                                             prefetch_cardinality, NULL};

gb_dataset *gb_dataset_prefetch(gb_dataset *in, int n) {
    if (!gb__dataset_check_input("gb_dataset_prefetch", in)) return NULL;
    if (n == 0) return in;   /* TensorFlow: no prefetching */
    if (n < 0 && n != GB_DATA_AUTOTUNE) {
        gb__error(GB_ERR_VALUE, "PrefetchDataset",
                  "gb_dataset_prefetch: n must be >= 0 or GB_DATA_AUTOTUNE (-1), got %d", n);
        gb_dataset_free(in);
        return NULL;
    }
    prefetch_ds *ds = (prefetch_ds *)gb__dataset_new(sizeof *ds, &prefetch_ops, in, in->ncomp);
    if (!ds) return NULL;
    ds->depth = n == GB_DATA_AUTOTUNE ? AUTOTUNE_DEPTH : n;
    return &ds->base;
}
