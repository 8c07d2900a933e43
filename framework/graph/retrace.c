/* graph/retrace.c — why a function traced, in words.
 *
 * Every trace is explained against the closest cached signature (the one
 * with the fewest differing parts), listing every part that differs, as
 * JAX's explain_cache_misses does: which input, by index and name,
 * changed dtype, rank or which dims, old -> new; which static argument
 * changed value or kind (doubles printed so that two different values
 * never read the same); that a captured variable, by name, was freed; or
 * that the same C function was wrapped in a new gb_function at the same
 * line (the "function in a loop" mistake) — with the fix for each cause,
 * the call site and the trace's cost. A trace that reduce_retracing
 * relaxed says which dims became -1. TensorFlow says only that a function
 * retraced; this says which argument and what to do.
 *
 * The excessive-retracing warning is retrace_history.c's.
 * GB_LOG_TRACES=1 (or gb_log_traces) prints every trace on stderr as it
 * happens, as TORCH_LOGS=recompiles does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

/* What to do about each kind of cause. */
static const char *const fixes[] = {
    [GB_CAUSE_FIRST] = "",
    [GB_CAUSE_REWRAPPED] = "create the gb_function once, outside the loop, and call it many times",
    [GB_CAUSE_COUNT] = "call it with the same number of inputs, or give each arity its own function",
    [GB_CAUSE_DTYPE] = "cast the input (gb_cast) if its dtype should not change; each dtype "
                       "needs its own graph",
    [GB_CAUSE_RANK] = "declare an input signature if the rank should not change; each rank "
                      "needs its own graph",
    [GB_CAUSE_DIM] = "declare the dim -1 in an input signature (GB_SPEC), or set reduce_retracing",
    [GB_CAUSE_STATIC] = "pass a tensor instead of a static value when it does not change the "
                        "graph's structure; each static value needs its own graph",
    [GB_CAUSE_CAPTURE] = "keep the variables a function uses alive as long as the function",
};

void gb__retrace_fixes(unsigned kinds, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < GB_CAUSE_KINDS && k < n; i++)
        if ((kinds >> i) & 1u && fixes[i][0])
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "; " : "", fixes[i]);
}

/* ---- logging every trace ------------------------------------------------------------------- */

/* -1: not decided yet (GB_LOG_TRACES is read on the first trace). */
static _Atomic int log_traces = -1;

void gb_log_traces(bool on) { atomic_store(&log_traces, on ? 1 : 0); }

bool gb_traces_logged(void) {
    int on = atomic_load(&log_traces);
    if (on < 0) {
        const char *env = getenv("GB_LOG_TRACES");
        on = env && env[0] && strcmp(env, "0") != 0;
        int unset = -1;
        atomic_compare_exchange_strong(&log_traces, &unset, on);
        on = atomic_load(&log_traces);
    }
    return on == 1;
}

/* ---- the reason of one trace ------------------------------------------------------------- */

static int differences(const gb_signature *a, const gb_signature *b) {
    if (a->nin != b->nin || a->nstatic != b->nstatic) return 1000;
    int n = 0;
    for (int i = 0; i < a->nin; i++) {
        const gb_tensor_spec *x = &a->in[i], *y = &b->in[i];
        n += 10 * (x->dtype != y->dtype);
        if (x->rank != y->rank) {
            n += 10;
            continue;
        }
        for (int d = 0; d < x->rank; d++) n += x->shape[d] >= 0 && x->shape[d] != y->shape[d];
    }
    for (int i = 0; i < a->nstatic; i++) n += !gb__static_equal(&a->st[i], &b->st[i]);
    return n;
}

/* The cached signature with the fewest differing parts; the newest among
 * equals (a dim growing call after call reads 3 -> 4, not 1 -> 4). Of a
 * library-owned function, only those of the call's variant (its static
 * values): another variant is another program, not an earlier trace. */
static const gb_concrete_function *closest(const gb_function *f, const gb_signature *sig) {
    const gb_concrete_function *best = NULL;
    int best_n = 0;
    for (int i = 0; i < f->ncache; i++) {
        if (f->owned && !gb__sig_statics_equal(&f->cache[i]->sig, sig)) continue;
        int n = differences(&f->cache[i]->sig, sig);
        if (!best || n <= best_n) best = f->cache[i], best_n = n;
    }
    return best;
}

/* Appends to the cause's text; parts of one reason are joined by "; ". */
static void put(gb_retrace_cause *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(gb_retrace_cause *c, const char *fmt, ...) {
    size_t k = strlen(c->text);
    if (k + 1 >= sizeof c->text) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text + k, sizeof c->text - k, fmt, ap);
    va_end(ap);
}

static void add_diff(gb_retrace_cause *c, gb_retrace_kind kind, const char *key, const char *old,
                     const char *value) {
    if (c->ndiffs == 0) c->kind = (int)kind;
    if (c->ndiffs == GB_RETRACE_MAX_DIFFS) return;
    gb_retrace_diff *d = &c->diffs[c->ndiffs++];
    d->kind = (int)kind;
    snprintf(d->key, sizeof d->key, "%s", key);
    snprintf(d->old, sizeof d->old, "%s", old);
    snprintf(d->value, sizeof d->value, "%s", value);
}

/* "input 0 'x' changed dtype: float32 -> float64 and dim 0: 3 -> 4
 * (float32[3] -> float64[4])": every part of one input that differs. */
static void describe_input(const gb_function *f, int i, const gb_tensor_spec *x,
                           const gb_tensor_spec *y, gb_retrace_cause *c) {
    char name[64], key[160], a[128], b[128], old[48], now[48];
    gb__input_name(f, i, name, sizeof name);
    int parts = 0;
    bool shapes = false;
    const char *lead = c->text[0] ? "; " : "";
    if (x->dtype != y->dtype) {
        snprintf(key, sizeof key, "input %d '%s' (dtype)", i, name);
        add_diff(c, GB_CAUSE_DTYPE, key, gb_dtype_name(x->dtype), gb_dtype_name(y->dtype));
        put(c, "%sinput %d '%s' changed dtype: %s -> %s", lead, i, name, gb_dtype_name(x->dtype),
            gb_dtype_name(y->dtype));
        parts++;
    }
    if (x->rank != y->rank) {
        snprintf(key, sizeof key, "input %d '%s' (rank)", i, name);
        snprintf(old, sizeof old, "%d", x->rank);
        snprintf(now, sizeof now, "%d", y->rank);
        add_diff(c, GB_CAUSE_RANK, key, old, now);
        if (parts)
            put(c, " and rank: %d -> %d", x->rank, y->rank);
        else
            put(c, "%sinput %d '%s' changed rank: %d -> %d", lead, i, name, x->rank, y->rank);
        parts++;
        shapes = true;
    } else {
        for (int d = 0; d < x->rank; d++) {
            if (x->shape[d] < 0 || x->shape[d] == y->shape[d]) continue;
            snprintf(key, sizeof key, "input %d '%s' dim %d", i, name, d);
            snprintf(old, sizeof old, "%lld", (long long)x->shape[d]);
            snprintf(now, sizeof now, "%lld", (long long)y->shape[d]);
            add_diff(c, GB_CAUSE_DIM, key, old, now);
            if (parts)
                put(c, " and dim %d: %s -> %s", d, old, now);
            else
                put(c, "%sinput %d '%s' changed dim %d: %s -> %s", lead, i, name, d, old, now);
            parts++;
            shapes = true;
        }
    }
    if (shapes) put(c, " (%s -> %s)", gb__spec_text(x, a, sizeof a), gb__spec_text(y, b, sizeof b));
}

static const char *kind_name(gb_value_kind k) {
    switch (k) {
    case GB_VALUE_INT: return "int";
    case GB_VALUE_DOUBLE: return "double";
    case GB_VALUE_BOOL: return "bool";
    default: return "string";
    }
}

enum { SHORT_STRING = 32, STRING_WINDOW = 16 };

static size_t first_difference(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

/* Two strings, one longer than SHORT_STRING: each as the STRING_WINDOW
 * bytes that end at their first difference ("…aaaab"), so two long
 * strings never read alike however long their common part. */
static bool long_strings(const gb_sig_static *x, const gb_sig_static *y, char *a, char *b, size_t n) {
    if (x->kind != GB_VALUE_STRING || y->kind != GB_VALUE_STRING) return false;
    size_t lx = strlen(x->s), ly = strlen(y->s);
    if (lx <= SHORT_STRING && ly <= SHORT_STRING) return false;
    size_t at = first_difference(x->s, y->s);
    size_t from = at + 1 > STRING_WINDOW ? at + 1 - STRING_WINDOW : 0;
    snprintf(a, n, "\"%s%.*s\"", from ? "..." : "", (int)(at + 1 - from), x->s + from);
    snprintf(b, n, "\"%s%.*s\"", from ? "..." : "", (int)(at + 1 - from), y->s + from);
    return true;
}

/* Every part of the call's signature that differs from the cached one. */
static void describe(const gb_function *f, const gb_signature *old, const gb_signature *now,
                     gb_retrace_cause *c) {
    if (old->nin != now->nin) {
        add_diff(c, GB_CAUSE_COUNT, "", "", "");
        put(c, "the number of tensor inputs changed: %d -> %d", old->nin, now->nin);
        return;
    }
    for (int i = 0; i < now->nin; i++) describe_input(f, i, &old->in[i], &now->in[i], c);
    if (old->nstatic != now->nstatic) {
        add_diff(c, GB_CAUSE_COUNT, "", "", "");
        put(c, "%sthe number of static arguments changed: %d -> %d", c->text[0] ? "; " : "",
            old->nstatic, now->nstatic);
        return;
    }
    for (int i = 0; i < now->nstatic; i++) {
        const gb_sig_static *x = &old->st[i], *y = &now->st[i];
        if (gb__static_equal(x, y)) continue;
        char key[160], a[48], b[48];
        snprintf(key, sizeof key, "static argument '%s'", y->name);
        if (long_strings(x, y, a, b, sizeof a)) {
            add_diff(c, GB_CAUSE_STATIC, key, a, b);
            put(c, "%sstatic argument '%s' changed value at byte %zu: %s -> %s (%zu -> %zu bytes)",
                c->text[0] ? "; " : "", y->name, first_difference(x->s, y->s), a, b,
                strlen(x->s), strlen(y->s));
            continue;
        }
        gb__static_text(x, a, sizeof a);
        gb__static_text(y, b, sizeof b);
        add_diff(c, GB_CAUSE_STATIC, key, a, b);
        if (x->kind != y->kind)
            put(c, "%sstatic argument '%s' changed kind: %s %s -> %s %s", c->text[0] ? "; " : "",
                y->name, kind_name(x->kind), a, kind_name(y->kind), b);
        else
            put(c, "%sstatic argument '%s' changed value: %s -> %s", c->text[0] ? "; " : "",
                y->name, a, b);
    }
}

/* A cached concrete function that accepts the call but captured a
 * variable since freed: that is the cause. */
static bool freed_capture(const gb_function *f, const gb_signature *sig, gb_retrace_cause *c) {
    for (int i = 0; i < f->ncache; i++) {
        const gb_concrete_function *cf = f->cache[i];
        if (!gb__sig_accepts(&cf->sig, sig)) continue;
        for (int k = 0; k < cf->ncaptures; k++) {
            if (gb__variable_by_id(cf->captures[k])) continue;
            add_diff(c, GB_CAUSE_CAPTURE, "", "", "");
            put(c, "variable '%s', which its graph captured, was freed", cf->capture_names[k]);
            return true;
        }
    }
    return false;
}

/* "reduce_retracing relaxed input 0 'x' dim 0 to -1 (float32[-1])". */
static void describe_relaxed(const gb_function *f, const gb_signature *sig,
                             const gb_signature *relaxed, gb_retrace_cause *c) {
    size_t k = (size_t)snprintf(c->relaxed, sizeof c->relaxed, "reduce_retracing relaxed");
    int n = 0;
    char name[64], spec[128];
    for (int i = 0; i < sig->nin; i++) {
        int dims = 0;
        for (int d = 0; d < sig->in[i].rank && k < sizeof c->relaxed; d++) {
            if (relaxed->in[i].shape[d] >= 0 || sig->in[i].shape[d] < 0) continue;
            if (dims++ == 0)
                k += (size_t)snprintf(c->relaxed + k, sizeof c->relaxed - k, "%s input %d '%s' dim %d",
                                      n++ ? ";" : "", i, gb__input_name(f, i, name, sizeof name), d);
            else
                k += (size_t)snprintf(c->relaxed + k, sizeof c->relaxed - k, ", %d", d);
        }
        if (dims && k < sizeof c->relaxed)
            k += (size_t)snprintf(c->relaxed + k, sizeof c->relaxed - k, " to -1 (%s)",
                                  gb__spec_text(&relaxed->in[i], spec, sizeof spec));
    }
    if (k < sizeof c->relaxed)
        snprintf(c->relaxed + k, sizeof c->relaxed - k,
                 ": this one trace serves every size there, and replaces the traces it covers");
}

/* A signature's inputs and outputs without the variables it captures
 * (a model's step captures dozens; they never decide a match). */
static void put_signature_call(gb_retrace_cause *c, const char *sig) {
    const char *at = strstr(sig, ") captures "), *arrow = NULL;
    for (const char *p = sig; (p = strstr(p, " -> (")); p++) arrow = p;
    if (!at || !arrow || at > arrow)
        put(c, "%s", sig);
    else
        put(c, "%.*s%s", (int)(at + 1 - sig), sig, arrow);
}

void gb__retrace_cause(const gb_function *f, const gb_signature *sig, bool rewrapped,
                       const gb_signature *relaxed, gb_retrace_cause *c) {
    memset(c, 0, sizeof *c);
    gb__call_site_text(c->site, sizeof c->site);
    const gb_concrete_function *near = NULL;
    if (!freed_capture(f, sig, c) && (near = closest(f, sig))) {
        describe(f, &near->sig, sig, c);
        if (!c->text[0]) put(c, "no cached signature accepts it");
        put(c, ", against the closest cached signature ");
        put_signature_call(c, gb__concrete_signature((gb_concrete_function *)near));
    } else if (!c->ndiffs && rewrapped) {
        char site[160], line[168] = "";
        if (gb__history_site(f->history, site, sizeof site)[0]) snprintf(line, sizeof line, " (%s)", site);
        add_diff(c, GB_CAUSE_REWRAPPED, "", "", "");
        put(c, "its C function was wrapped in a new gb_function at the line that wrapped it "
               "before%s, so the earlier wrapper's traces are lost", line);
    } else if (!c->ndiffs) {
        c->kind = GB_CAUSE_FIRST;
        c->first = true;
        c->variant_first = f->owned && f->ncache > 0;
        put(c, "first call");
        for (int i = 0; c->variant_first && i < sig->nstatic; i++) {
            char v[48];
            put(c, "%s%s=%s", i ? ", " : " of the variant ", sig->st[i].name,
                gb__static_text(&sig->st[i], v, sizeof v));
        }
    }
    unsigned kinds = 0;
    for (int i = 0; i < c->ndiffs; i++) kinds |= 1u << c->diffs[i].kind;
    if (relaxed) {
        describe_relaxed(f, sig, relaxed, c);
        kinds &= ~(1u << GB_CAUSE_DIM); /* it did what the fix would advise */
    }
    gb__retrace_fixes(kinds, c->fix, sizeof c->fix);
}

/* "first call at t.c:12; traced in 0.42 ms" (or "first call of the
 * variant ..."), or what changed, the site, the cost, then the fix or
 * what reduce_retracing did. */
static void reason_text(const gb_retrace_cause *c, double ms, char *buf, size_t n) {
    /* c->text is "first call..." or fits the buffer with room to spare. */
    bool first = c->first;
    const char *at = !c->site[0] ? "" : first ? " at " : "; called at ";
    int k = snprintf(buf, n, "%.900s%s%.100s; traced in %.2f ms", c->text, at, c->site, ms);
    if (first || k < 0 || (size_t)k >= n) return;
    if (c->relaxed[0])
        k += snprintf(buf + k, n - (size_t)k, ". %s", c->relaxed);
    if (c->fix[0] && k >= 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, ". Fix: %s", c->fix);
}

/* ---- reporting -------------------------------------------------------------------------------- */

void gb__report_trace(gb_function *f, gb_concrete_function *cf, const gb_retrace_cause *cause) {
    reason_text(cause, cf->trace_ms, f->last_reason, sizeof f->last_reason);
    f->stats.traces++;
    f->stats.trace_ms += cf->trace_ms;
    f->stats.last_trace_ms = cf->trace_ms;
    const char *warn = gb__history_note_trace(f->history, cause);
    bool logged = gb_traces_logged();
    if (!logged && !warn[0] && !gb_observer_wants(GB_EVENT_TRACE)) return;
    char msg[1400];
    snprintf(msg, sizeof msg, "traced '%s' (trace %d): %s", f->name, (int)f->stats.traces,
             f->last_reason);
    if (logged) fprintf(stderr, "glassbox: %s\n", msg);
    if (warn[0]) gb__warn("%s", warn);
    if (!gb_observer_wants(GB_EVENT_TRACE)) return; /* the texts cost half a trace */
    gb_trace_event detail = {
        .function = f->name,
        .concrete_id = cf->id,
        .trace_number = (int)f->stats.traces,
        .retrace = !cause->first,
        .signature = gb__concrete_signature(cf),
        .reason = f->last_reason,
        .call_site = cause->site,
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
    gb_event ev = {.kind = GB_EVENT_TRACE, .message = msg, .detail = &detail};
    gb_observer_emit(&ev);
    free(json);
    free(json_traced);
}
