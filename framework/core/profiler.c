/* core/profiler.c — the profiler's capture: per-thread record buffers.
 *
 * Every layer records into it (ops through debug/'s op-log hook, data/
 * its waits and map calls, optim/ its updates, dist/ its collectives), so
 * it sits in core. Each thread appends to a buffer of its own, with no
 * lock: records go into chunks of CHUNK, names are interned per thread.
 * Stopping must not free what a thread is still writing, so a writer
 * marks its buffer busy, then checks that the capture is still on
 * (Dekker's order: both sides sequentially consistent); the collector
 * turns the capture off, then waits for every busy buffer before taking
 * its records. Buffers stay registered for good (a thread that ends
 * leaves its buffer empty), so no record is written into freed memory;
 * their chunks stay too, so a capture does not pay the page faults of
 * fresh memory again (the profiler is a tool: it keeps what it used).
 *
 * The capture leaves as one GB_EVENT_PROFILE event; its gb_profile is
 * reference counted so an observer (the writer) can keep it past emit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include "core/internal.h"

enum { CHUNK = 4096, MAX_CHUNKS = 1024 };   /* up to 4M records per thread */

typedef struct interned {
    uint64_t hash;
    char *s;
} interned;

typedef struct prof_buffer {
    struct prof_buffer *next;       /* in the registry */
    _Atomic int busy;
    uint64_t session;               /* the capture it fills */
    int32_t thread;                 /* its index in that capture */
    const char *thread_name;
    size_t count, dropped;
    gb_profile_record *chunks[MAX_CHUNKS];
    interned *table;                /* open addressing; strings owned until collected */
    size_t table_cap, table_used;
} prof_buffer;

/* A profile and what it owns: the records, the strings they point at. */
typedef struct profile_block {
    gb_profile p;
    _Atomic int refs;
    char **strings;
    size_t nstrings;
    char **names;                   /* thread names made here ("thread 3") */
} profile_block;

_Atomic bool gb__prof_on;
_Thread_local const char *gb__tl_thread_name;
_Atomic(gb_prof_stop_fn) gb__prof_stop_hook;
_Atomic(gb_prof_merge_fn) gb__prof_merge_hook;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static prof_buffer *registry;
static _Thread_local prof_buffer *tl_buf;
static uint64_t session_id;         /* written under lock while off */
static _Atomic int32_t next_thread;
static double started_us, started_wall;
static pthread_t starter;
static int64_t steps_limit;
static _Atomic int64_t steps_seen;

const char *gb_profile_kind_name(gb_profile_kind kind) {
    static const char *const names[GB_PROFILE_KIND_COUNT] = {
        "op", "step", "input_wait", "map", "prefetch", "optimizer", "collective", "comm_wait"};
    return (unsigned)kind < GB_PROFILE_KIND_COUNT ? names[kind] : NULL;
}

/* ---- the writer's side (any thread) ------------------------------------------------ */

static uint64_t fnv1a(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool table_grow(prof_buffer *b) {
    size_t cap = b->table_cap ? b->table_cap * 2 : 256;
    interned *t = calloc(cap, sizeof *t);
    if (!t) return false;
    for (size_t i = 0; i < b->table_cap; i++) {
        if (!b->table[i].s) continue;
        size_t j = b->table[i].hash & (cap - 1);
        while (t[j].s) j = (j + 1) & (cap - 1);
        t[j] = b->table[i];
    }
    free(b->table);
    b->table = t;
    b->table_cap = cap;
    return true;
}

/* The thread's copy of s; "" when memory ran out. */
static const char *intern(prof_buffer *b, const char *s) {
    if (!s || !*s) return "";
    if (2 * (b->table_used + 1) > b->table_cap && !table_grow(b)) return "";
    uint64_t h = fnv1a(s);
    size_t j = h & (b->table_cap - 1);
    for (; b->table[j].s; j = (j + 1) & (b->table_cap - 1))
        if (b->table[j].hash == h && !strcmp(b->table[j].s, s)) return b->table[j].s;
    char *copy = strdup(s);
    if (!copy) return "";
    b->table[j] = (interned){h, copy};
    b->table_used++;
    return copy;
}

static prof_buffer *own_buffer(void) {
    if (tl_buf) return tl_buf;
    prof_buffer *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_lock(&lock);
    b->next = registry;
    registry = b;
    pthread_mutex_unlock(&lock);
    return tl_buf = b;
}

/* The buffer to write into, marked busy; NULL when the capture is off. */
static prof_buffer *buffer_enter(void) {
    prof_buffer *b = own_buffer();
    if (!b) return NULL;
    atomic_store(&b->busy, 1);
    if (!atomic_load(&gb__prof_on)) {
        atomic_store_explicit(&b->busy, 0, memory_order_release);
        return NULL;
    }
    if (b->session != session_id) {   /* the first record of this capture */
        b->session = session_id;
        b->count = b->dropped = 0;
        b->thread = atomic_fetch_add(&next_thread, 1);
        b->thread_name = gb__tl_thread_name ? gb__tl_thread_name
                         : pthread_equal(pthread_self(), starter) ? "training" : NULL;
    }
    return b;
}

static void buffer_leave(prof_buffer *b) { atomic_store_explicit(&b->busy, 0, memory_order_release); }

static gb_profile_record *next_slot(prof_buffer *b) {
    size_t c = b->count / CHUNK;
    if (c >= MAX_CHUNKS) return NULL;
    if (!b->chunks[c] && !(b->chunks[c] = malloc(CHUNK * sizeof(gb_profile_record)))) return NULL;
    return &b->chunks[c][b->count % CHUNK];
}

void gb__prof_add(const gb_profile_record *r) {
    prof_buffer *b = buffer_enter();
    if (!b) return;
    gb_profile_record *slot = next_slot(b);
    if (!slot) {
        b->dropped++;
        buffer_leave(b);
        return;
    }
    *slot = *r;
    /* A range begun before the capture (a map already running) shows its
     * part inside it. */
    slot->start_us = r->start_us - started_us;
    if (slot->start_us < 0) {
        slot->dur_us = slot->dur_us + slot->start_us > 0 ? slot->dur_us + slot->start_us : 0;
        slot->start_us = 0;
    }
    slot->name = intern(b, r->name);
    slot->op_type = intern(b, r->op_type);
    slot->function = intern(b, r->function);
    slot->thread = b->thread;
    slot->live_bytes = (int64_t)gb_scope_bytes_in_use();
    int64_t step;
    slot->step = gb_get_step(&step) ? step : -1;
    b->count++;
    buffer_leave(b);
}

void gb__prof_range(gb_profile_kind kind, const char *name, double t0) {
    if (t0 < 0) return;
    double now = gb__now_us();
    gb_profile_record r = {.start_us = t0, .dur_us = now - t0, .name = name, .kind = (uint8_t)kind};
    gb__prof_add(&r);
}

void gb__prof_step(int64_t step) {
    char name[32];
    snprintf(name, sizeof name, "step %lld", (long long)step);
    gb_profile_record r = {.start_us = gb__now_us(), .name = name, .kind = GB_PROFILE_STEP};
    gb__prof_add(&r);
    /* A window of steps ends at the step after its last one. */
    if (steps_limit > 0 && atomic_fetch_add(&steps_seen, 1) == steps_limit) {
        gb_prof_stop_fn stop = atomic_load(&gb__prof_stop_hook);
        if (stop) stop();
    }
}

/* ---- starting and collecting ------------------------------------------------------- */

bool gb__prof_session_begin(int64_t steps) {
    pthread_mutex_lock(&lock);
    bool was_on = atomic_load(&gb__prof_on);
    if (!was_on) {
        session_id++;
        atomic_store(&next_thread, 0);
        steps_limit = steps;
        atomic_store(&steps_seen, 0);
        starter = pthread_self();
        struct timeval tv;
        gettimeofday(&tv, NULL);
        started_wall = (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
        started_us = gb__now_us();
        atomic_store(&gb__prof_on, true);
    }
    pthread_mutex_unlock(&lock);
    return !was_on;
}

static int by_start(const void *a, const void *b) {
    double x = ((const gb_profile_record *)a)->start_us, y = ((const gb_profile_record *)b)->start_us;
    return (x > y) - (x < y);
}

/* Moves buffer b's records and strings into pb, from record `at` on. */
static bool take(prof_buffer *b, profile_block *pb, size_t at) {
    for (size_t i = 0; i < b->count; i++) pb->p.records[at + i] = b->chunks[i / CHUNK][i % CHUNK];
    qsort(pb->p.records + at, b->count, sizeof(gb_profile_record), by_start);
    char **grown = realloc(pb->strings, (pb->nstrings + b->table_used + 1) * sizeof(char *));
    if (!grown) return false;
    pb->strings = grown;
    for (size_t i = 0; i < b->table_cap; i++)
        if (b->table[i].s) pb->strings[pb->nstrings++] = b->table[i].s;
    free(b->table);
    b->table = NULL;
    b->table_cap = b->table_used = 0;
    pb->p.dropped += b->dropped;
    b->count = b->dropped = 0;   /* the chunks stay for the thread's next capture */
    return true;
}

static void block_free(profile_block *pb) {
    for (size_t i = 0; i < pb->nstrings; i++) free(pb->strings[i]);
    for (int i = 0; pb->names && i < pb->p.nthreads; i++) free(pb->names[i]);
    free(pb->strings);
    free(pb->names);
    free((void *)pb->p.threads);
    free(pb->p.records);
    free(pb);
}

/* The capture's threads, named: the ones that never said get "thread N". */
static bool name_threads(profile_block *pb, const char **by_index) {
    int n = pb->p.nthreads;
    pb->p.threads = calloc((size_t)n + 1, sizeof(char *));
    pb->names = calloc((size_t)n + 1, sizeof(char *));
    if (!pb->p.threads || !pb->names) return false;
    for (int i = 0; i < n; i++) {
        if (by_index[i]) {
            pb->p.threads[i] = by_index[i];
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "thread %d", i);
        if (!(pb->names[i] = strdup(name))) return false;
        pb->p.threads[i] = pb->names[i];
    }
    return true;
}

gb_profile *gb__prof_session_end(int rank) {
    pthread_mutex_lock(&lock);
    if (!atomic_load(&gb__prof_on)) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    atomic_store(&gb__prof_on, false);
    double ended = gb__now_us();
    size_t total = 0;
    for (prof_buffer *b = registry; b; b = b->next) {
        while (atomic_load(&b->busy)) sched_yield();
        if (b->session == session_id) total += b->count;
    }
    profile_block *pb = calloc(1, sizeof *pb);
    int n = atomic_load(&next_thread);
    const char **by_index = calloc((size_t)n + 1, sizeof(char *));
    bool ok = pb && by_index && (pb->p.records = malloc((total + 1) * sizeof(gb_profile_record)));
    size_t at = 0;
    for (prof_buffer *b = registry; b; b = b->next) {
        if (b->session != session_id) continue;
        if (ok && b->thread < n) by_index[b->thread] = b->thread_name;
        size_t c = b->count;
        ok = ok && take(b, pb, at);
        at += c;
        b->session = 0;   /* empty until its thread records again */
    }
    pthread_mutex_unlock(&lock);
    if (pb) {
        pb->p = (gb_profile){.wall_time = started_wall, .duration_us = ended - started_us,
                             .rank = rank, .nthreads = n, .count = at,
                             .records = pb->p.records, .dropped = pb->p.dropped};
        atomic_store(&pb->refs, 1);
        ok = ok && name_threads(pb, by_index);
    }
    free(by_index);
    if (!ok) {
        if (pb) block_free(pb);
        gb__error(GB_ERR_MEMORY, NULL, "gb_profiler_stop: out of memory for %zu records", total);
        return NULL;
    }
    return &pb->p;
}

/* ---- merging the ranks' captures ------------------------------------------------------ */

/* The thread name "rank r: name" (a copy). */
static char *rank_thread(int rank, const char *name) {
    char buf[300];
    snprintf(buf, sizeof buf, "rank %d: %s", rank, name);
    return strdup(buf);
}

gb_profile *gb__prof_merge(const gb_profile *const *parts, const double *shift_us, int n) {
    size_t total = 0;
    int threads = 0;
    for (int r = 0; r < n; r++) total += parts[r]->count, threads += parts[r]->nthreads;
    profile_block *pb = calloc(1, sizeof *pb);
    prof_buffer *strings = calloc(1, sizeof *strings);   /* an intern table, nothing more */
    bool ok = pb && strings && (pb->p.records = malloc((total + 1) * sizeof(gb_profile_record))) &&
              (pb->names = calloc((size_t)threads + 1, sizeof(char *))) &&
              (pb->p.threads = calloc((size_t)threads + 1, sizeof(char *)));
    size_t at = 0;
    int base = 0;
    for (int r = 0; ok && r < n; r++) {
        const gb_profile *p = parts[r];
        for (int t = 0; ok && t < p->nthreads; t++)
            ok = (pb->names[base + t] = rank_thread(r, p->threads[t])) != NULL;
        for (size_t i = 0; ok && i < p->count; i++) {
            gb_profile_record *o = &pb->p.records[at++];
            *o = p->records[i];
            o->start_us += shift_us[r];
            o->thread += base;
            o->name = intern(strings, p->records[i].name);
            o->op_type = intern(strings, p->records[i].op_type);
            o->function = intern(strings, p->records[i].function);
        }
        base += p->nthreads;
    }
    if (pb) {
        pb->p.nthreads = threads;
        for (int t = 0; ok && t < threads; t++) pb->p.threads[t] = pb->names[t];
        pb->p.count = at;
        pb->p.wall_time = n ? parts[0]->wall_time - shift_us[0] * 1e-6 : 0;
        pb->p.gemm_peak_flops = n ? parts[0]->gemm_peak_flops : 0;
        for (int r = 0; r < n; r++) {
            double end = parts[r]->duration_us + shift_us[r];
            if (end > pb->p.duration_us) pb->p.duration_us = end;
            pb->p.dropped += parts[r]->dropped;
        }
        atomic_store(&pb->refs, 1);
    }
    if (strings) {
        /* the table's strings become the profile's */
        if (ok && pb && (pb->strings = calloc(strings->table_used + 1, sizeof(char *))))
            for (size_t i = 0; i < strings->table_cap; i++)
                if (strings->table[i].s) pb->strings[pb->nstrings++] = strings->table[i].s;
        if (!pb || !pb->strings)
            for (size_t i = 0; i < strings->table_cap; i++) free(strings->table[i].s);
        ok = ok && pb->strings;
        free(strings->table);
        free(strings);
    }
    if (!ok) {
        if (pb) block_free(pb);
        gb__error(GB_ERR_MEMORY, NULL, "gb_profiler_stop: out of memory merging %d ranks", n);
        return NULL;
    }
    return &pb->p;
}

void gb_profile_retain(const gb_profile *p) {
    if (p) atomic_fetch_add(&((profile_block *)p)->refs, 1);
}

void gb_profile_release(const gb_profile *p) {
    if (p && atomic_fetch_sub(&((profile_block *)p)->refs, 1) == 1) block_free((profile_block *)p);
}

const char *gb_profile_shapes_text(const gb_profile_record *r, char *buf, size_t n) {
    size_t len = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < r->nshapes && len < n; i++) {
        len += (size_t)snprintf(buf + len, n - len, "%s[", i ? " " : "");
        if (r->rank[i] < 0) {
            if (len < n) len += (size_t)snprintf(buf + len, n - len, "...");
        } else {
            for (int d = 0; d < r->rank[i] && len < n; d++)
                len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? "," : "",
                                        (long long)r->dims[i][d]);
        }
        if (len < n) len += (size_t)snprintf(buf + len, n - len, "]");
    }
    return buf;
}
