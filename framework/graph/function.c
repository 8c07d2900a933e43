/* graph/function.c — gb_function: a cache of concrete functions.
 *
 * A call finds the most specific cached concrete function whose signature
 * accepts it and whose captured variables are all alive, and runs it; on a
 * miss it traces a new one, recording why (retrace.c). With an input
 * signature every call must fit the declared specs (an error otherwise,
 * never a retrace); with reduce_retracing a second distinct shape traces
 * once with the differing dims relaxed to -1, and that trace replaces the
 * ones it covers.
 *
 * Its counters leave as GB_EVENT_FUNCTION events after the first call,
 * then at most once a second, and when it is freed; live functions are
 * listed so gb_function_flush_counters can send the last counts when a
 * run ends without freeing them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

static _Atomic bool run_eagerly;

static void emit_counters(gb_function *f);

/* The live functions, for gb_function_flush_counters. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static gb_function *live_functions;

static void live_add(gb_function *f) {
    pthread_mutex_lock(&live_lock);
    f->live_next = live_functions;
    if (live_functions) live_functions->live_prev = f;
    live_functions = f;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(gb_function *f) {
    pthread_mutex_lock(&live_lock);
    if (f->live_prev) f->live_prev->live_next = f->live_next;
    else if (live_functions == f) live_functions = f->live_next;
    if (f->live_next) f->live_next->live_prev = f->live_prev;
    f->live_next = f->live_prev = NULL;
    pthread_mutex_unlock(&live_lock);
}

void gb_run_functions_eagerly(bool on) { atomic_store(&run_eagerly, on); }
bool gb_functions_run_eagerly(void) { return atomic_load(&run_eagerly); }

/* ---- creation ------------------------------------------------------------------- */

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static bool copy_options(gb_function *f, const gb_function_options *o) {
    f->user = o->user;
    f->reduce_retracing = o->reduce_retracing;
    f->passes_off = o->passes_off;
    if (o->ninput_names > 0) {
        f->input_names = calloc((size_t)o->ninput_names, sizeof *f->input_names);
        if (!f->input_names) return false;
        f->ninput_names = o->ninput_names;
        for (int i = 0; i < o->ninput_names; i++)
            if (o->input_names[i] && !(f->input_names[i] = dup_str(o->input_names[i])))
                return false;
    }
    if (o->ninput_signature > 0) {
        f->input_signature = calloc((size_t)o->ninput_signature, sizeof *f->input_signature);
        if (!f->input_signature) return false;
        f->ninput_signature = o->ninput_signature;
        for (int i = 0; i < o->ninput_signature; i++) {
            f->input_signature[i] = o->input_signature[i];
            const char *name = o->input_signature[i].name;
            if (name && !(f->input_signature[i].name = dup_str(name))) return false;
        }
    }
    return true;
}

/* A new function; owned: the library's, with a history of its own (and
 * its static arguments select its variants), else the user's, its
 * history keyed on the line that called gb_function_new. */
static gb_function *function_new(const char *name, gb_function_fn fn,
                                 const gb_function_options *opts, bool owned) {
    if (!fn) {
        gb__error(GB_ERR_VALUE, NULL, "gb_function_new: fn is NULL");
        return NULL;
    }
    /* A user's name is kept whole, so the dashboard can select every
     * function by it (the library's own are made from checked names). */
    if (!owned && name &&
        !gb__name_check("gb_function_new", name, sizeof ((gb_function *)0)->name - 1))
        return NULL;
    if (opts && opts->ninput_signature > GB_FUNCTION_MAX_INPUTS) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_function_new: the input signature of function '%s' has %d specs (at most %d)",
                  name ? name : "function", opts->ninput_signature, GB_FUNCTION_MAX_INPUTS);
        return NULL;
    }
    gb_function *f = calloc(1, sizeof *f);
    gb_function_options none = {0};
    if (!f || !copy_options(f, opts ? opts : &none)) {
        gb_function_free(f);
        gb__error(GB_ERR_MEMORY, NULL, "gb_function_new: out of memory");
        return NULL;
    }
    snprintf(f->name, sizeof f->name, "%s", name && name[0] ? name : "function");
    f->fn = fn;
    gb__trace_install_hooks();
    f->owned = owned;
    if (owned)
        f->history = gb__history_own(f->name);
    else
        f->history = gb__history_for(fn, gb__call_site().file, gb__call_site().line, f->name,
                                     &f->rewrapped);
    live_add(f);
    return f;
}

gb_function *gb_function_new(const char *name, gb_function_fn fn, const gb_function_options *opts) {
    return function_new(name, fn, opts, false);
}

gb_function *gb__function_new_owned(const char *name, gb_function_fn fn,
                                    const gb_function_options *opts) {
    return function_new(name, fn, opts, true);
}

void gb_function_free(gb_function *f) {
    if (!f) return;
    live_remove(f);
    if (f->stats.calls != f->counted_calls) emit_counters(f); /* the final counts */
    if (f->owned) gb__history_free_own(f->history);
    free(f->arena);
    for (int i = 0; i < f->ncache; i++) gb__concrete_free(f->cache[i]);
    free(f->cache);
    for (int i = 0; i < f->ninput_names; i++) free(f->input_names[i]);
    free(f->input_names);
    for (int i = 0; i < f->ninput_signature; i++) free((char *)f->input_signature[i].name);
    free(f->input_signature);
    free(f->signatures_text);
    free(f);
}

/* ---- lookup -------------------------------------------------------------------------- */

static bool captures_alive(const gb_concrete_function *cf) {
    for (int i = 0; i < cf->ncaptures; i++)
        if (!gb__variable_by_id(cf->captures[i])) return false;
    return true;
}

/* Whether the call's tensors and statics are exactly cf's signature. */
static bool call_is_exactly(const gb_concrete_function *cf, gb_tensor *const *in, int nin,
                            const gb_value *st, int nst) {
    const gb_signature *s = &cf->sig;
    if (s->nin != nin || s->nstatic != nst) return false;
    for (int i = 0; i < nin; i++) {
        const gb_tensor_spec *sp = &s->in[i];
        if (!in[i] || in[i]->dtype != sp->dtype || in[i]->rank != sp->rank ||
            memcmp(in[i]->shape, sp->shape, (size_t)sp->rank * sizeof *sp->shape) != 0)
            return false;
    }
    for (int i = 0; i < nst; i++) {
        const gb_sig_static *a = &s->st[i];
        if (st[i].kind != a->kind) return false;
        bool same = st[i].kind == GB_VALUE_INT      ? st[i].as.i == a->i
                    : st[i].kind == GB_VALUE_DOUBLE ? st[i].as.d == a->d
                    : st[i].kind == GB_VALUE_BOOL   ? st[i].as.b == a->b
                                                    : st[i].as.s && !strcmp(st[i].as.s, a->s); /* whole */
        if (!same) return false;
    }
    return true;
}

/* The most specific cached concrete function accepting sig, or NULL. */
static gb_concrete_function *lookup(const gb_function *f, const gb_signature *sig) {
    gb_concrete_function *best = NULL;
    int best_unknown = 0;
    for (int i = 0; i < f->ncache; i++) {
        gb_concrete_function *cf = f->cache[i];
        if (!gb__sig_accepts(&cf->sig, sig) || !captures_alive(cf)) continue;
        int u = gb__sig_unknown_dims(&cf->sig);
        if (!best || u < best_unknown) best = cf, best_unknown = u;
    }
    return best;
}

static bool cache_add(gb_function *f, gb_concrete_function *cf) {
    if (f->ncache == f->capcache) {
        int cap = f->capcache ? 2 * f->capcache : 8;
        gb_concrete_function **c = realloc(f->cache, (size_t)cap * sizeof *c);
        if (!c) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory caching a concrete function");
            return false;
        }
        f->cache = c;
        f->capcache = cap;
    }
    f->cache[f->ncache++] = cf;
    return true;
}

/* Drops the cached concrete functions that `relaxed` covers (it replaces
 * them) and those whose captured variables were freed. */
static void cache_prune(gb_function *f, const gb_concrete_function *relaxed) {
    int k = 0;
    for (int i = 0; i < f->ncache; i++) {
        gb_concrete_function *cf = f->cache[i];
        bool covered = relaxed && gb__sig_accepts(&relaxed->sig, &cf->sig);
        if (covered || !captures_alive(cf)) {
            if (f->latest == cf) f->latest = NULL;
            if (f->last_exact == cf) f->last_exact = NULL;
            gb__concrete_free(cf);
        } else {
            f->cache[k++] = cf;
        }
    }
    f->ncache = k;
}

/* ---- signatures to trace ----------------------------------------------------------------- */

/* With an input signature, every call must fit it (dtype, rank, fixed
 * dims): an error naming the argument otherwise, never a retrace. */
static bool check_input_signature(const gb_function *f, const gb_signature *sig) {
    if (sig->nin != f->ninput_signature) {
        gb__error(GB_ERR_VALUE, NULL,
                  "function '%s' was called with %d tensor inputs; its input signature has %d",
                  f->name, sig->nin, f->ninput_signature);
        return false;
    }
    for (int i = 0; i < sig->nin; i++) {
        const gb_tensor_spec *want = &f->input_signature[i], *got = &sig->in[i];
        bool fits = want->dtype == got->dtype && want->rank == got->rank;
        for (int d = 0; fits && d < want->rank; d++)
            fits = want->shape[d] < 0 || want->shape[d] == got->shape[d];
        if (!fits) {
            char name[64], a[128], b[128];
            gb__error(GB_ERR_VALUE, NULL,
                      "function '%s': input %d ('%s') is %s, which does not fit its input "
                      "signature %s",
                      f->name, i, gb__input_name(f, i, name, sizeof name),
                      gb__spec_text(got, a, sizeof a), gb__spec_text(want, b, sizeof b));
            return false;
        }
    }
    return true;
}

/* reduce_retracing: against a cached signature of the same dtypes, ranks
 * and static values, the dims that differ become -1. False when no cached
 * signature is close enough (the call is traced as it is). */
static bool relax(const gb_function *f, gb_signature *sig) {
    for (int i = 0; i < f->ncache; i++) {
        const gb_signature *c = &f->cache[i]->sig;
        bool close = c->nin == sig->nin && gb__sig_statics_equal(c, sig);
        for (int k = 0; close && k < sig->nin; k++)
            close = c->in[k].dtype == sig->in[k].dtype && c->in[k].rank == sig->in[k].rank;
        if (!close) continue;
        for (int k = 0; k < sig->nin; k++)
            for (int d = 0; d < sig->in[k].rank; d++)
                if (c->in[k].shape[d] != sig->in[k].shape[d]) sig->in[k].shape[d] = -1;
        return true;
    }
    return false;
}

/* ---- tracing a miss -------------------------------------------------------------------------- */

/* "float32[32,784], int32[32]": the shapes of a call's inputs. */
static void shapes_text(char *out, size_t n, gb_tensor *const *in, int nin) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < nin && len < n; i++) {
        len += (size_t)snprintf(out + len, n - len, "%s%s[", i ? ", " : "", gb_dtype_name(in[i]->dtype));
        for (int d = 0; d < in[i]->rank && len < n; d++)
            len += (size_t)snprintf(out + len, n - len, "%s%lld", d ? "," : "", (long long)in[i]->shape[d]);
        if (len < n) len += (size_t)snprintf(out + len, n - len, "]");
    }
}

/* The plan for the shapes of the call that traced cf (in; NULL when no
 * call did): with -1 dims, the specialization the call is about to run
 * (made now, found again by the executor), so the trace reports the arena
 * the function really uses rather than the part of it every shape shares. */
static bool plan_for_call(gb_concrete_function *cf, gb_tensor *const *in, int nin) {
    gb_graph_stats *st = &cf->stats;
    st->call_arena_bytes = st->arena_bytes;
    st->call_naive_bytes = st->naive_bytes;
    st->call_shapes[0] = '\0';
    if (!in || !cf->dynamic) return true;
    gb_concrete_function *spec = gb__specialize(cf, in);
    if (!spec) return false;
    st->call_arena_bytes = spec->plan->arena_bytes;
    st->call_naive_bytes = spec->plan->naive_bytes;
    shapes_text(st->call_shapes, sizeof st->call_shapes, in, nin);
    return true;
}

/* Traces f for the call's signature (of the tensors in, when a call
 * traces), caches the result, and reports it. A call refused here, or a
 * trace that fails, leaves the last reason and the counts as they were. */
static gb_concrete_function *trace_miss(gb_function *f, const gb_signature *call,
                                        gb_tensor *const *in) {
    if (f->ninput_signature && !check_input_signature(f, call)) return NULL;
    gb_signature sig;
    if (!gb__sig_copy(&sig, call, 0)) return NULL;
    bool relaxed = false;
    if (f->ninput_signature) {
        for (int i = 0; i < sig.nin; i++) sig.in[i] = f->input_signature[i]; /* traced as declared */
    } else if (f->reduce_retracing) {
        relaxed = relax(f, &sig);
    }
    gb_retrace_cause cause;
    gb__retrace_cause(f, call, f->rewrapped && f->stats.traces == 0, relaxed ? &sig : NULL, &cause);
    gb_concrete_function *cf = gb__trace(f, &sig);
    gb__sig_free(&sig);
    if (!cf) return NULL;
    cache_prune(f, relaxed ? cf : NULL); /* and drop those with freed captures */
    if (!cache_add(f, cf)) {
        gb__concrete_free(cf);
        return NULL;
    }
    f->latest = cf;
    if (!plan_for_call(cf, in, call->nin)) return NULL;
    gb__report_trace(f, cf, &cause);
    return cf;
}

/* ---- counters as events ---------------------------------------------------------------------- */

static void emit_counters(gb_function *f) {
    f->counted_calls = f->stats.calls;
    f->counted_at_us = gb__now_us();
    if (!gb_observer_wants(GB_EVENT_FUNCTION)) return;
    gb_function_event detail = {.function = f->name, .stats = gb_function_get_stats(f)};
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %lld calls, %lld cache hits, %lld traces", f->name,
             (long long)detail.stats.calls, (long long)detail.stats.cache_hits,
             (long long)detail.stats.traces);
    gb_event ev = {.kind = GB_EVENT_FUNCTION, .message = msg, .detail = &detail};
    gb_observer_emit(&ev);
}

/* After the first call, then after a call a second or more after the
 * last event: at most a second behind, one clock read per call. */
static int counted(gb_function *f, int rc) {
    if (f->stats.calls == 1 || gb__now_us() - f->counted_at_us >= 1e6) emit_counters(f);
    return rc;
}

void gb_function_flush_counters(void) {
    pthread_mutex_lock(&live_lock);
    for (gb_function *f = live_functions; f; f = f->live_next)
        if (f->stats.calls != f->counted_calls) emit_counters(f);
    pthread_mutex_unlock(&live_lock);
}

/* ---- calls ------------------------------------------------------------------------------------- */

static int call_eagerly(gb_function *f, gb_tensor *const *in, int nin, const gb_value *st,
                        int nst, gb_tensor **out) {
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int n = f->fn(f->user, in, nin, st, nst, out);
    gb__call_site_restore(site);
    if (n < 0 || !gb_ok()) return -1;
    return n;
}

int gb_function_call(gb_function *f, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    if (!f) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_function_call: function is NULL");
        return -1;
    }
    if (!gb_ok()) return -1;
    f->stats.calls++;
    /* Eagerly when asked; inlined when called while another function
     * traces (its ops become nodes of that graph, as tf.function inlines). */
    if (atomic_load_explicit(&run_eagerly, memory_order_relaxed) || gb__tl_trace)
        return counted(f, call_eagerly(f, in, nin, st, nst, out));
    /* The common case first: the same exact shapes as the last call. No
     * trace can be more specific than an exact one, so it is the match. */
    gb_concrete_function *cf = f->last_exact;
    if (cf && call_is_exactly(cf, in, nin, st, nst) && captures_alive(cf)) {
        f->stats.cache_hits++;
        gb__history_note_call(f->history, false);
        return counted(f, gb__call_recorded(cf, in, nin, out));
    }
    gb_signature sig;
    if (!gb__sig_of_call(f, in, nin, st, nst, &sig)) return -1;
    cf = f->ninput_signature && !check_input_signature(f, &sig) ? NULL : lookup(f, &sig);
    f->last_exact = cf && gb__sig_unknown_dims(&cf->sig) == 0 ? cf : NULL;
    if (cf) {
        f->stats.cache_hits++;
        gb__history_note_call(f->history, false);
    } else if (gb_ok()) {
        cf = trace_miss(f, &sig, in);
    }
    gb__sig_free(&sig);
    if (!cf) return -1;
    return counted(f, gb__call_recorded(cf, in, nin, out));
}

gb_concrete_function *gb_function_get_concrete(gb_function *f, const gb_tensor_spec *specs,
                                               int nspecs, const gb_value *st, int nst) {
    if (!f) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_function_get_concrete: function is NULL");
        return NULL;
    }
    gb_signature sig;
    if (!gb__sig_of_specs(f, specs, nspecs, st, nst, &sig)) return NULL;
    gb_concrete_function *cf = lookup(f, &sig);
    if (!cf) cf = trace_miss(f, &sig, NULL);
    gb__sig_free(&sig);
    return cf;
}

int gb_concrete_call(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out) {
    if (!cf) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_concrete_call: concrete function is NULL");
        return -1;
    }
    gb_signature sig;
    if (!gb__sig_of_call(cf->owner, in, nin, NULL, 0, &sig)) return -1;
    sig.nstatic = cf->sig.nstatic;
    memcpy(sig.st, cf->sig.st, sizeof sig.st);
    bool fits = gb__sig_accepts(&cf->sig, &sig);
    gb__sig_free(&sig);
    if (!fits) {
        gb__error(GB_ERR_VALUE, NULL, "concrete function of '%s': the inputs do not fit %s",
                  cf->owner->name, gb__concrete_signature(cf));
        return -1;
    }
    return gb__call_recorded(cf, in, nin, out);
}

/* ---- introspection ------------------------------------------------------------------------------ */

gb_function_stats gb_function_get_stats(const gb_function *f) {
    gb_function_stats s = {0};
    if (!f) return s;
    s = f->stats;
    s.concrete = f->ncache;
    return s;
}

int gb_function_tracing_count(const gb_function *f) { return f ? (int)f->stats.traces : 0; }
const char *gb_function_name(const gb_function *f) { return f ? f->name : ""; }
const char *gb_function_last_trace_reason(const gb_function *f) {
    return f ? f->last_reason : "";
}

const char *gb_function_graph_text(gb_function *f) {
    return f && f->latest ? gb__concrete_graph(f->latest) : "";
}
