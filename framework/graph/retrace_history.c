/* graph/retrace_history.c — the excessive-retracing warning.
 *
 * Every gb_function of the user's has a history shared with the other
 * wrappers of its C function made at the same place (internal.h says
 * which place); one the library owns has a history of its own: its last
 * calls, whether each traced, and every argument that varied with the
 * values it took. The warning follows TensorFlow's rule — 5 or more traces
 * within the last 10 calls, at most 2 warnings — so re-wrapping the
 * function in a loop counts; it names every argument that varies, each
 * with its own list of values (kept when another argument varies in
 * between), and the fixes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

enum { WINDOW = 10, TRACE_LIMIT = 5, MAX_WARNINGS = 2, MAX_SEEN = 8, MAX_VARYING = 4 };

/* An argument that varied between traces, and the values it took. */
typedef struct varying {
    gb_retrace_kind kind;
    char key[160];
    char seen[MAX_SEEN][48];     /* oldest first; the latest MAX_SEEN */
    int nseen;
} varying;

struct gb_fn_history {
    gb_function_fn fn;
    const char *file;            /* the key: where it was wrapped */
    int line;
    char name[64];
    bool traced[WINDOW];         /* the last WINDOW calls, a ring */
    int pos, ncalls;
    /* Traces in the ring, and whether the ring is full: read without the
     * lock so that a cache hit when nothing traced lately costs two loads. */
    _Atomic int window_traces;
    _Atomic bool window_full;
    int warnings;
    bool rewrapped;              /* the last trace was a wrapper's first after a re-wrap */
    varying vary[MAX_VARYING];   /* every argument that varied, in the order first seen */
    int nvary;
    char warning[2048];
    struct gb_fn_history *next;
};

static pthread_mutex_t histories_lock = PTHREAD_MUTEX_INITIALIZER;
static gb_fn_history *histories;

static bool same_key(const gb_fn_history *h, gb_function_fn fn, const char *file, int line) {
    if (h->fn != fn || h->line != line) return false;
    if (!h->file || !file) return h->file == file;
    return h->file == file || strcmp(h->file, file) == 0;
}

gb_fn_history *gb__history_for(gb_function_fn fn, const char *file, int line, const char *name,
                               bool *rewrapped) {
    pthread_mutex_lock(&histories_lock);
    gb_fn_history *h = histories;
    while (h && !same_key(h, fn, file, line)) h = h->next;
    *rewrapped = h != NULL;
    if (!h && (h = calloc(1, sizeof *h))) {
        h->fn = fn;
        h->file = file; /* __FILE__ of the user's code: a literal, lives as long */
        h->line = line;
        snprintf(h->name, sizeof h->name, "%s", name);
        h->next = histories;
        histories = h;
    }
    pthread_mutex_unlock(&histories_lock);
    return h; /* lives as long as the process: the key outlives its functions */
}

gb_fn_history *gb__history_own(const char *name) {
    gb_fn_history *h = calloc(1, sizeof *h);
    if (h) snprintf(h->name, sizeof h->name, "%s", name);
    return h;
}

void gb__history_free_own(gb_fn_history *h) { free(h); }

static void add_seen(varying *v, const char *value) {
    if (v->nseen == MAX_SEEN) {
        memmove(v->seen[0], v->seen[1], sizeof v->seen[0] * (MAX_SEEN - 1));
        v->nseen--;
    }
    snprintf(v->seen[v->nseen++], sizeof v->seen[0], "%s", value);
}

/* The entry of the argument d names: found, or new (the oldest replaced
 * when all are taken), its list started with the value it had before. */
static varying *varying_of(gb_fn_history *h, const gb_retrace_diff *d) {
    for (int i = 0; i < h->nvary; i++)
        if (h->vary[i].kind == (gb_retrace_kind)d->kind && strcmp(h->vary[i].key, d->key) == 0)
            return &h->vary[i];
    if (h->nvary == MAX_VARYING) {
        memmove(&h->vary[0], &h->vary[1], sizeof h->vary[0] * (MAX_VARYING - 1));
        h->nvary--;
    }
    varying *v = &h->vary[h->nvary++];
    memset(v, 0, sizeof *v);
    v->kind = (gb_retrace_kind)d->kind;
    snprintf(v->key, sizeof v->key, "%s", d->key);
    if (d->old[0]) add_seen(v, d->old);
    return v;
}

/* Notes the values of every argument that changed; each keeps its list
 * when another one changes in between. */
static void note_values(gb_fn_history *h, const gb_retrace_cause *c) {
    h->rewrapped = c->kind == GB_CAUSE_REWRAPPED;
    for (int i = 0; i < c->ndiffs; i++)
        if (c->diffs[i].key[0]) add_seen(varying_of(h, &c->diffs[i]), c->diffs[i].value);
}

static const char *warning_text(gb_fn_history *h, int traces) {
    int calls = h->ncalls < WINDOW ? h->ncalls : WINDOW;
    size_t k = (size_t)snprintf(h->warning, sizeof h->warning,
                                "function '%s' traced %d times in its last %d calls", h->name,
                                traces, calls);
    unsigned kinds = 0;
    if (h->rewrapped) {
        kinds = 1u << GB_CAUSE_REWRAPPED;
        k += (size_t)snprintf(h->warning + k, sizeof h->warning - k,
                              ", each time wrapped in a new gb_function around the same C "
                              "function at the same line");
    } else if (h->nvary) {
        k += (size_t)snprintf(h->warning + k, sizeof h->warning - k, "; %s ",
                              h->nvary == 1 ? "the argument that varies is"
                                            : "the arguments that vary are");
        for (int i = 0; i < h->nvary && k < sizeof h->warning; i++) {
            const varying *v = &h->vary[i];
            kinds |= 1u << v->kind;
            const char *sep = i == 0 ? "" : i == h->nvary - 1 ? " and " : ", ";
            k += (size_t)snprintf(h->warning + k, sizeof h->warning - k, "%s%s (values seen: ",
                                  sep, v->key);
            for (int j = 0; j < v->nseen && k < sizeof h->warning; j++)
                k += (size_t)snprintf(h->warning + k, sizeof h->warning - k, "%s%s",
                                      j ? ", " : "", v->seen[j]);
            if (k < sizeof h->warning) k += (size_t)snprintf(h->warning + k, sizeof h->warning - k, ")");
        }
    }
    char fix[512];
    gb__retrace_fixes(kinds, fix, sizeof fix);
    if (k < sizeof h->warning)
        snprintf(h->warning + k, sizeof h->warning - k, ". Tracing is expensive%s%s",
                 fix[0] ? ": " : "", fix);
    return h->warning;
}

const char *gb__history_note_call(gb_fn_history *h, bool traced) {
    if (!h) return "";
    /* A hit into a full ring of hits leaves the ring as it is. */
    if (!traced && atomic_load_explicit(&h->window_full, memory_order_relaxed) &&
        atomic_load_explicit(&h->window_traces, memory_order_relaxed) == 0)
        return "";
    pthread_mutex_lock(&histories_lock);
    h->traced[h->pos] = traced;
    h->pos = (h->pos + 1) % WINDOW;
    h->ncalls++;
    int traces = 0;
    for (int i = 0; i < WINDOW && i < h->ncalls; i++) traces += h->traced[i];
    atomic_store_explicit(&h->window_traces, traces, memory_order_relaxed);
    atomic_store_explicit(&h->window_full, h->ncalls >= WINDOW, memory_order_relaxed);
    const char *warn = "";
    if (traced && traces >= TRACE_LIMIT && h->warnings < MAX_WARNINGS) {
        h->warnings++;
        warn = warning_text(h, traces);
    }
    pthread_mutex_unlock(&histories_lock);
    return warn;
}

const char *gb__history_note_trace(gb_fn_history *h, const gb_retrace_cause *c) {
    if (!h) return "";
    /* A library function's variant traces once, as a program of its own:
     * no retrace to count. */
    if (c->variant_first) return gb__history_note_call(h, false);
    pthread_mutex_lock(&histories_lock);
    note_values(h, c);
    pthread_mutex_unlock(&histories_lock);
    return gb__history_note_call(h, true);
}

const char *gb__history_site(const gb_fn_history *h, char *buf, size_t n) {
    if (h && h->file)
        snprintf(buf, n, "%s:%d", gb__site_file_name(h->file), h->line);
    else if (n)
        buf[0] = '\0';
    return buf;
}
