/* core/parallel.c — the fork-join pool behind gb__parallel_for (see core/parallel.h).
 *
 * Worker threads are started on first use. A region publishes its task in
 * the pool and one word — its generation, its number of parts and the
 * next part to claim — then wakes the workers; every thread (the caller
 * too) claims parts from that word until none are left. The region ends
 * when every part is done, not when every worker has checked in: on 2
 * cores shared with other processes a worker may not run for a whole time
 * slice, and the caller then simply runs all parts itself and goes on
 * instead of waiting for it. A late worker finds the parts claimed (or a
 * newer region's) and goes back to waiting. A claim names its generation,
 * so no worker can take a part of a region that has ended; the task's
 * fields are rewritten only when the last region's parts are all done,
 * and the worker that claimed a part reads them before it reports the
 * part done.
 *
 * Waiting spins briefly before sleeping on a condition variable: a
 * training step runs regions back to back, and a sleeping thread takes
 * tens of microseconds to wake on a virtual machine. The spin is short
 * (~50 us) so idle workers do not keep a core that other threads need.
 *
 * One region runs at a time: a second thread that finds the pool busy
 * runs its loop inline rather than queue. A forked child runs inline.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/parallel.h"

enum { MAX_WORKERS = 16, PARTS_PER_WORKER = 4, SPIN_ROUNDS = 4000 };

/* The claim word: generation << 16 | parts << 8 | next part. Parts are
 * at most MAX_WORKERS * PARTS_PER_WORKER = 64, so 8 bits hold each count. */
#define CLAIM(gen, parts, next) ((uint64_t)(gen) << 16 | (uint64_t)(parts) << 8 | (uint64_t)(next))
#define CLAIM_GEN(w) ((w) >> 16)
#define CLAIM_PARTS(w) ((int)(((w) >> 8) & 0xff))
#define CLAIM_NEXT(w) ((int)((w)&0xff))

static struct {
    pthread_once_t once;
    int workers;              /* including the calling thread */
    pthread_mutex_t busy;     /* held for the whole of a region */
    /* the region's task: written by the caller before the claim word
     * publishes it, read by whoever claims a part */
    gb__range_fn fn;
    void *ctx;
    int64_t n;
    atomic_uint_fast64_t claim;
    atomic_int done;          /* parts of this region finished */
    pthread_mutex_t mu;       /* guards sleepers and the two conditions */
    pthread_cond_t wake, finished;
    int sleepers;
    bool caller_sleeps;       /* the caller waits on `finished` */
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .workers = 1,
    .busy = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .finished = PTHREAD_COND_INITIALIZER,
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claims and runs parts of the current region as worker `id` until none
 * are left (or the region is another than the one in `w`). */
static void run_parts(int id) {
    uint64_t w = atomic_load_explicit(&pool.claim, memory_order_acquire);
    for (;;) {
        int p = CLAIM_NEXT(w), parts = CLAIM_PARTS(w);
        if (p >= parts) return;
        if (!atomic_compare_exchange_weak_explicit(&pool.claim, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* w now holds the word as it is: retry, or another region */
        /* Part p is ours: the region cannot end (nor its task change) before we report it. */
        int64_t n = pool.n, begin = n * p / parts, end = n * (p + 1) / parts;
        if (begin < end) pool.fn(pool.ctx, begin, end, id);
        if (atomic_fetch_add_explicit(&pool.done, 1, memory_order_acq_rel) + 1 == parts && id != 0) {
            pthread_mutex_lock(&pool.mu);
            if (pool.caller_sleeps) pthread_cond_signal(&pool.finished);
            pthread_mutex_unlock(&pool.mu);
        }
        w = atomic_load_explicit(&pool.claim, memory_order_acquire);
    }
}

/* Waits until the claim word's generation differs from `seen`; returns the new one. */
static uint64_t wait_generation(uint64_t seen) {
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        uint64_t g = CLAIM_GEN(atomic_load_explicit(&pool.claim, memory_order_acquire));
        if (g != seen) return g;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.mu);
    pool.sleepers++;
    while (CLAIM_GEN(atomic_load_explicit(&pool.claim, memory_order_acquire)) == seen)
        pthread_cond_wait(&pool.wake, &pool.mu);
    pool.sleepers--;
    pthread_mutex_unlock(&pool.mu);
    return CLAIM_GEN(atomic_load_explicit(&pool.claim, memory_order_acquire));
}

static void *worker_main(void *arg) {
    int id = (int)(intptr_t)arg;
    uint64_t seen = 0;
    for (;;) {
        seen = wait_generation(seen);
        run_parts(id);
    }
    return NULL;
}

/* The caller's wait for the parts other threads are still running. */
static void wait_parts(int parts) {
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&pool.done, memory_order_acquire) == parts) return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.mu);
    pool.caller_sleeps = true;
    while (atomic_load_explicit(&pool.done, memory_order_acquire) < parts)
        pthread_cond_wait(&pool.finished, &pool.mu);
    pool.caller_sleeps = false;
    pthread_mutex_unlock(&pool.mu);
}

static atomic_int suggested_workers;
static atomic_bool pool_started;

bool gb__parallel_suggest_workers(int n) {
    atomic_store(&suggested_workers, n);
    return !atomic_load(&pool_started);
}

static int configured_workers(void) {
    const char *env = getenv("GB_NUM_THREADS");
    int suggested = atomic_load(&suggested_workers);
    long n = env && *env   ? strtol(env, NULL, 10)
             : suggested > 0 ? suggested
                             : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > MAX_WORKERS ? MAX_WORKERS : (int)n;
}

/* A forked child has only the forking thread: it runs everything inline
 * (waiting for workers that do not exist would hang it). */
static void after_fork_in_child(void) {
    pool.workers = 1;
    pool.sleepers = 0;
    pool.caller_sleeps = false;
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.finished, NULL);
}

static void pool_init(void) {
    atomic_store(&pool_started, true);
    /* Our parts call BLAS; OpenBLAS's own threads would compete with them
     * (and spin for a while after each call). */
    openblas_set_num_threads(1);
    pthread_atfork(NULL, NULL, after_fork_in_child);
    int want = configured_workers();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 1; i < want; i++) {
        pthread_t th;
        if (pthread_create(&th, &attr, worker_main, (void *)(intptr_t)i) != 0) break;
        pool.workers = i + 1;
    }
    pthread_attr_destroy(&attr);
}

int gb__parallel_workers(void) {
    pthread_once(&pool.once, pool_init);
    return pool.workers;
}

int gb__parallel_for(int64_t n, int64_t grain, gb__range_fn fn, void *ctx) {
    int workers = gb__parallel_workers();
    int64_t fit = grain > 0 ? n / grain : n, most = (int64_t)workers * PARTS_PER_WORKER;
    int parts = fit < 1 ? 1 : fit > most ? (int)most : (int)fit;
    if (parts == 1 || pthread_mutex_trylock(&pool.busy) != 0) {
        if (n > 0) fn(ctx, 0, n, 0);
        return 1;
    }
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
    uint64_t gen = CLAIM_GEN(atomic_load_explicit(&pool.claim, memory_order_relaxed)) + 1;
    atomic_store_explicit(&pool.claim, CLAIM(gen, parts, 0), memory_order_release);
    /* Sleepers check the generation under the mutex, so none can miss it. */
    pthread_mutex_lock(&pool.mu);
    if (pool.sleepers > 0) pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    run_parts(0);
    wait_parts(parts);
    pthread_mutex_unlock(&pool.busy);
    return parts < workers ? parts : workers;
}
