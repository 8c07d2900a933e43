/* graph/retrace.c — why a function traced, and when it traces too often.
 *
 * Every trace is explained against the closest cached signature (the one
 * with the fewest differing parts): which input, by index and name,
 * changed dtype, rank or which dim, old -> new; which static argument
 * changed value; that a captured variable was freed; or that the same C
 * function was wrapped in a new gb_function (the "function in a loop"
 * mistake) — with the fix for that cause. TensorFlow says only that a
 * function retraced; this says which argument and what to do.
 *
 * The excessive-retracing warning follows TensorFlow's rule — 5 or more
 * traces within the last 10 calls, at most 2 warnings — keyed on the C
 * function pointer, so re-wrapping the same function in a loop counts,
 * and it names the argument that varies and the values seen.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

enum { WINDOW = 10, TRACE_LIMIT = 5, MAX_WARNINGS = 2, MAX_SEEN = 8 };

typedef enum cause_kind {
    CAUSE_FIRST,
    CAUSE_REWRAPPED,
    CAUSE_COUNT,
    CAUSE_DTYPE,
    CAUSE_RANK,
    CAUSE_DIM,
    CAUSE_STATIC,
    CAUSE_CAPTURE,
} cause_kind;

static const char *const fixes[] = {
    [CAUSE_FIRST] = "",
    [CAUSE_REWRAPPED] = "create the gb_function once, outside the loop, and call it many times",
    [CAUSE_COUNT] = "call it with the same number of inputs, or give each arity its own function",
    [CAUSE_DTYPE] = "cast the input (gb_cast) if its dtype should not change; each dtype needs "
                    "its own graph",
    [CAUSE_RANK] = "declare an input signature if the rank should not change; each rank needs "
                   "its own graph",
    [CAUSE_DIM] = "declare the dim -1 in an input signature (GB_SPEC), or set reduce_retracing",
    [CAUSE_STATIC] = "pass a tensor instead of a static value when it does not change the "
                     "graph's structure; each static value needs its own graph",
    [CAUSE_CAPTURE] = "keep the variables a function uses alive as long as the function",
};

/* ---- the history of a C function ---------------------------------------------------- */

struct gb_fn_history {
    gb_function_fn fn;
    void *user;
    char name[64];
    bool traced[WINDOW];         /* the last WINDOW calls, a ring */
    int pos, ncalls;
    /* Traces in the ring, and whether the ring is full: read without the
     * lock so that a cache hit when nothing traced lately costs two loads. */
    _Atomic int window_traces;
    _Atomic bool window_full;
    int warnings;
    cause_kind last_kind;
    char key[128];               /* the argument that varied in the last traces */
    char seen[MAX_SEEN][48];     /* its values, oldest first */
    int nseen;
    char warning[1024];
    struct gb_fn_history *next;
};

static pthread_mutex_t histories_lock = PTHREAD_MUTEX_INITIALIZER;
static gb_fn_history *histories;

gb_fn_history *gb__history_for(gb_function_fn fn, void *user, const char *name, bool *rewrapped) {
    pthread_mutex_lock(&histories_lock);
    gb_fn_history *h = histories;
    while (h && (h->fn != fn || h->user != user)) h = h->next;
    *rewrapped = h != NULL;
    if (!h && (h = calloc(1, sizeof *h))) {
        h->fn = fn;
        h->user = user;
        snprintf(h->name, sizeof h->name, "%s", name);
        h->next = histories;
        histories = h;
    }
    pthread_mutex_unlock(&histories_lock);
    return h; /* lives as long as the process: the key outlives its functions */
}

static void add_seen(gb_fn_history *h, const char *value) {
    if (h->nseen == MAX_SEEN) {
        memmove(h->seen[0], h->seen[1], sizeof h->seen[0] * (MAX_SEEN - 1));
        h->nseen--;
    }
    snprintf(h->seen[h->nseen++], sizeof h->seen[0], "%s", value);
}

/* The values the varying argument took; a new argument starts its list
 * with the value it had before. */
static void note_value(gb_fn_history *h, const gb_retrace_cause *c) {
    if (c->kind == CAUSE_REWRAPPED) { /* no argument varies: the wrapper does */
        h->last_kind = CAUSE_REWRAPPED;
        h->key[0] = '\0';
        h->nseen = 0;
        return;
    }
    if (!c->key[0]) return;
    if (strcmp(h->key, c->key) != 0 || h->last_kind != (cause_kind)c->kind) {
        snprintf(h->key, sizeof h->key, "%s", c->key);
        h->last_kind = (cause_kind)c->kind;
        h->nseen = 0;
        if (c->old[0]) add_seen(h, c->old);
    }
    add_seen(h, c->value);
}

static const char *warning_text(gb_fn_history *h, int traces) {
    char values[MAX_SEEN * 50] = "";
    size_t k = 0;
    for (int i = 0; i < h->nseen && k < sizeof values; i++)
        k += (size_t)snprintf(values + k, sizeof values - k, "%s%s", i ? ", " : "", h->seen[i]);
    if (h->key[0])
        snprintf(h->warning, sizeof h->warning,
                 "function '%s' traced %d times in its last %d calls; the argument that varies "
                 "is %s (values seen: %s). Tracing is expensive: %s",
                 h->name, traces, h->ncalls < WINDOW ? h->ncalls : WINDOW, h->key, values,
                 fixes[h->last_kind]);
    else if (h->last_kind == CAUSE_REWRAPPED)
        snprintf(h->warning, sizeof h->warning,
                 "function '%s' traced %d times in its last %d calls, each time wrapped in a new "
                 "gb_function around the same C function. Tracing is expensive: %s",
                 h->name, traces, h->ncalls < WINDOW ? h->ncalls : WINDOW, fixes[h->last_kind]);
    else
        snprintf(h->warning, sizeof h->warning,
                 "function '%s' traced %d times in its last %d calls. Tracing is expensive: %s",
                 h->name, traces, h->ncalls < WINDOW ? h->ncalls : WINDOW, fixes[h->last_kind]);
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

/* ---- the reason of one trace ------------------------------------------------------------- */

typedef struct trace_cause {
    cause_kind kind;
    char text[512];              /* what changed, old -> new */
    char key[128], value[48];    /* for the warning */
    char old[48];                /* the value before, starting the warning's list */
} trace_cause;
_Static_assert(sizeof(((trace_cause *)0)->key) == sizeof(((gb_retrace_cause *)0)->key), "key sizes");

static int differences(const gb_signature *a, const gb_signature *b) {
    if (a->nin != b->nin || a->nstatic != b->nstatic) return 1000;
    int n = 0;
    for (int i = 0; i < a->nin; i++) {
        const gb_tensor_spec *x = &a->in[i], *y = &b->in[i];
        if (x->dtype != y->dtype || x->rank != y->rank) {
            n += 10;
            continue;
        }
        for (int d = 0; d < x->rank; d++) n += x->shape[d] >= 0 && x->shape[d] != y->shape[d];
    }
    for (int i = 0; i < a->nstatic; i++) n += !gb__static_equal(&a->st[i], &b->st[i]);
    return n;
}

static const gb_concrete_function *closest(const gb_function *f, const gb_signature *sig) {
    const gb_concrete_function *best = NULL;
    int best_n = 0;
    for (int i = 0; i < f->ncache; i++) {
        int n = differences(&f->cache[i]->sig, sig);
        if (!best || n < best_n) best = f->cache[i], best_n = n;
    }
    return best;
}

/* The first difference between the cached signature and the call. */
static void describe(const gb_function *f, const gb_signature *old, const gb_signature *now,
                     trace_cause *c) {
    char name[64], a[128], b[128];
    if (old->nin != now->nin) {
        c->kind = CAUSE_COUNT;
        snprintf(c->text, sizeof c->text, "the number of tensor inputs changed: %d -> %d",
                 old->nin, now->nin);
        return;
    }
    for (int i = 0; i < now->nin; i++) {
        const gb_tensor_spec *x = &old->in[i], *y = &now->in[i];
        gb__input_name(f, i, name, sizeof name);
        if (x->dtype != y->dtype) {
            c->kind = CAUSE_DTYPE;
            snprintf(c->key, sizeof c->key, "input %d '%s' (dtype)", i, name);
            snprintf(c->value, sizeof c->value, "%s", gb_dtype_name(y->dtype));
            snprintf(c->old, sizeof c->old, "%s", gb_dtype_name(x->dtype));
            snprintf(c->text, sizeof c->text, "input %d '%s' changed dtype: %s -> %s", i, name,
                     gb_dtype_name(x->dtype), gb_dtype_name(y->dtype));
            return;
        }
        if (x->rank != y->rank) {
            c->kind = CAUSE_RANK;
            snprintf(c->key, sizeof c->key, "input %d '%s' (rank)", i, name);
            snprintf(c->value, sizeof c->value, "%d", y->rank);
            snprintf(c->old, sizeof c->old, "%d", x->rank);
            snprintf(c->text, sizeof c->text, "input %d '%s' changed rank: %d -> %d (%s -> %s)", i,
                     name, x->rank, y->rank, gb__spec_text(x, a, sizeof a),
                     gb__spec_text(y, b, sizeof b));
            return;
        }
        for (int d = 0; d < x->rank; d++) {
            if (x->shape[d] < 0 || x->shape[d] == y->shape[d]) continue;
            c->kind = CAUSE_DIM;
            snprintf(c->key, sizeof c->key, "input %d '%s' dim %d", i, name, d);
            snprintf(c->value, sizeof c->value, "%lld", (long long)y->shape[d]);
            snprintf(c->old, sizeof c->old, "%lld", (long long)x->shape[d]);
            snprintf(c->text, sizeof c->text, "input %d '%s' changed dim %d: %lld -> %lld (%s -> %s)",
                     i, name, d, (long long)x->shape[d], (long long)y->shape[d],
                     gb__spec_text(x, a, sizeof a), gb__spec_text(y, b, sizeof b));
            return;
        }
    }
    for (int i = 0; i < now->nstatic && i < old->nstatic; i++) {
        if (gb__static_equal(&old->st[i], &now->st[i])) continue;
        c->kind = CAUSE_STATIC;
        snprintf(c->key, sizeof c->key, "static argument '%s'", now->st[i].name);
        gb__static_text(&now->st[i], c->value, sizeof c->value);
        gb__static_text(&old->st[i], c->old, sizeof c->old);
        snprintf(c->text, sizeof c->text, "static argument '%s' changed value: %s -> %s",
                 now->st[i].name, gb__static_text(&old->st[i], a, sizeof a), c->value);
        return;
    }
    c->kind = CAUSE_COUNT;
    snprintf(c->text, sizeof c->text, "the number of static arguments changed: %d -> %d",
             old->nstatic, now->nstatic);
}

/* A cached concrete function that accepts the call but captured a
 * variable since freed: that is the cause. */
static bool freed_capture(const gb_function *f, const gb_signature *sig, trace_cause *c) {
    for (int i = 0; i < f->ncache; i++) {
        const gb_concrete_function *cf = f->cache[i];
        if (!gb__sig_accepts(&cf->sig, sig)) continue;
        for (int k = 0; k < cf->ncaptures; k++) {
            if (gb__variable_by_id(cf->captures[k])) continue;
            c->kind = CAUSE_CAPTURE;
            snprintf(c->text, sizeof c->text,
                     "a variable its graph captured was freed (variable id %lld)",
                     (long long)cf->captures[k]);
            return true;
        }
    }
    return false;
}

static void find_cause(const gb_function *f, const gb_signature *sig, bool rewrapped, trace_cause *c) {
    memset(c, 0, sizeof *c);
    if (freed_capture(f, sig, c)) return;
    const gb_concrete_function *near = closest(f, sig);
    if (near) {
        describe(f, &near->sig, sig, c);
        size_t len = strlen(c->text);
        snprintf(c->text + len, sizeof c->text - len, ", against the closest cached signature %s",
                 gb__concrete_signature((gb_concrete_function *)near));
    } else if (rewrapped) {
        c->kind = CAUSE_REWRAPPED;
        snprintf(c->text, sizeof c->text,
                 "its C function was wrapped in a new gb_function (the same function pointer "
                 "was wrapped before, so its traces are lost)");
    } else {
        c->kind = CAUSE_FIRST;
        snprintf(c->text, sizeof c->text, "first call");
    }
}

void gb__retrace_reason(const gb_function *f, const gb_signature *sig, bool rewrapped,
                        char *buf, size_t n, gb_retrace_cause *out) {
    trace_cause c;
    find_cause(f, sig, rewrapped, &c);
    char site[160];
    gb__call_site_text(site, sizeof site);
    if (c.kind == CAUSE_FIRST)
        snprintf(buf, n, "first call%s%s", site[0] ? " at " : "", site);
    else
        snprintf(buf, n, "%s%s%s. Fix: %s", c.text, site[0] ? "; called at " : "", site,
                 fixes[c.kind]);
    out->kind = (int)c.kind;
    memcpy(out->key, c.key, sizeof out->key);
    memcpy(out->value, c.value, sizeof out->value);
    memcpy(out->old, c.old, sizeof out->old);
}

/* ---- reporting -------------------------------------------------------------------------------- */

void gb__report_trace(gb_function *f, gb_concrete_function *cf, const gb_retrace_cause *cause) {
    f->stats.traces++;
    f->stats.trace_ms += cf->trace_ms;
    if (f->history) {
        pthread_mutex_lock(&histories_lock);
        note_value(f->history, cause);
        pthread_mutex_unlock(&histories_lock);
    }
    const char *warn = gb__history_note_call(f->history, true);
    if (warn[0]) gb__warn("%s", warn);
    if (!gb_observer_wants(GB_EVENT_TRACE)) return; /* the texts cost half a trace */
    char site[160];
    gb__call_site_text(site, sizeof site);
    gb_trace_event detail = {
        .function = f->name,
        .concrete_id = cf->id,
        .trace_number = (int)f->stats.traces,
        .signature = gb__concrete_signature(cf),
        .reason = f->last_reason,
        .call_site = site,
        .duration_ms = cf->trace_ms,
        .nodes = cf->plan->norder,
        .graph = gb__concrete_graph(cf),
        .graph_traced = gb_concrete_traced_graph_text(cf),
        .stats = &cf->stats,
        .warning = warn[0] != 0,
    };
    char *json = gb__concrete_graph_json(cf, false), *json_traced = gb__concrete_graph_json(cf, true);
    detail.graph_json = json;
    detail.graph_traced_json = json_traced;
    char msg[1400];
    snprintf(msg, sizeof msg, "traced '%s' (trace %d, %.2f ms): %s", f->name,
             detail.trace_number, cf->trace_ms, f->last_reason);
    gb_event ev = {.kind = GB_EVENT_TRACE, .message = msg, .detail = &detail};
    gb_observer_emit(&ev);
    free(json);
    free(json_traced);
}
