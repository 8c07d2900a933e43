/* core/parallel.c — the fork-join pool behind gb__parallel_for (see core/parallel.h).
 *
 * Worker threads are started on first use. A region publishes its task,
 * bumps a generation counter and wakes the workers; every thread (the
 * caller too) claims parts from an atomic counter until none are left, so
 * a thread that the OS delays (2 cores shared with a data pipeline) simply
 * takes fewer parts. The caller waits until every worker has checked in.
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

typedef struct task {
    gb__range_fn fn;
    void *ctx;
    int64_t n;
    int parts;
    atomic_int next; /* the next part to claim */
} task;

static struct {
    pthread_once_t once;
    int workers;              /* including the calling thread */
    pthread_mutex_t busy;     /* held for the whole of a region */
    _Atomic(task *) t;        /* the region's task, published before... */
    atomic_uint_fast64_t gen; /* ...the generation moves on */
    atomic_int pending;       /* workers yet to finish this generation */
    pthread_mutex_t mu;       /* guards sleepers and the two conditions */
    pthread_cond_t wake, done;
    int sleepers;
} pool = {
    .once = PTHREAD_ONCE_INIT,
    .workers = 1,
    .busy = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claims and runs parts of t as worker `id` until none are left. */
static void run_parts(task *t, int id) {
    for (;;) {
        int p = atomic_fetch_add(&t->next, 1);
        if (p >= t->parts) return;
        int64_t begin = t->n * p / t->parts, end = t->n * (p + 1) / t->parts;
        if (begin < end) t->fn(t->ctx, begin, end, id);
    }
}

/* Waits until the generation differs from `seen`; returns the new one. */
static uint64_t wait_generation(uint64_t seen) {
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        uint64_t g = atomic_load_explicit(&pool.gen, memory_order_acquire);
        if (g != seen) return g;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.mu);
    pool.sleepers++;
    while (atomic_load_explicit(&pool.gen, memory_order_acquire) == seen)
        pthread_cond_wait(&pool.wake, &pool.mu);
    pool.sleepers--;
    pthread_mutex_unlock(&pool.mu);
    return atomic_load_explicit(&pool.gen, memory_order_acquire);
}

static void *worker_main(void *arg) {
    int id = (int)(intptr_t)arg;
    uint64_t seen = 0;
    for (;;) {
        seen = wait_generation(seen);
        run_parts(atomic_load_explicit(&pool.t, memory_order_acquire), id);
        if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
    return NULL;
}

/* The caller's wait for the workers of the current region. */
static void wait_workers(void) {
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&pool.pending, memory_order_acquire) == 0) return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.mu);
    while (atomic_load_explicit(&pool.pending, memory_order_acquire) > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
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
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
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
    task t = {.fn = fn, .ctx = ctx, .n = n, .parts = parts};
    atomic_init(&t.next, 0);
    atomic_store_explicit(&pool.pending, workers - 1, memory_order_relaxed);
    atomic_store_explicit(&pool.t, &t, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool.gen, 1, memory_order_release);
    /* Sleepers check the generation under the mutex, so none can miss it. */
    pthread_mutex_lock(&pool.mu);
    if (pool.sleepers > 0) pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    run_parts(&t, 0);
    wait_workers();
    pthread_mutex_unlock(&pool.busy);
    return parts < workers ? parts : workers;
}
