/* writer/default_writer.c — the default writer, the global step, engine events.
 *
 * tf.summary writes through the writer of `with writer.as_default()`; here
 * gb_summary_set_default() names it for the whole process, and calls given
 * a NULL writer use it. The default writer also subscribes to the engine's
 * observer hook, turning traces, numerics alerts, training-health alerts,
 * op timings, warnings and placements into rows of their own tables, and the scalars the engine
 * measures (each rank's step times) into scalars. The global step is the
 * engine's (gb_set_step), so numerics alerts carry the summary step.
 */
#include <math.h>
#include <stdlib.h>

#include "gb_debug.h"
#include "gb_function.h"
#include "gb_observer.h"
#include "writer/internal.h"

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static gb_summary_writer *_Atomic default_writer;

/* ---- the global step ------------------------------------------------------------- */

void gb_summary_set_step(int64_t step) { gb_set_step(step); }
bool gb_summary_get_step(int64_t *out) {
    int64_t s;
    if (!gb_get_step(&s)) return false;
    if (out) *out = s;
    return true;
}
void gb_summary_clear_step(void) { gb_clear_step(); }

/* ---- engine events ---------------------------------------------------------------- */

static void push_strings(gb_summary_writer *w, gb__event_type type, const gb_event *ev, int n,
                         const char *const *s) {
    size_t bytes;
    gb__strings *p = gb__strings_new(n, s, &bytes);
    if (!p) return;
    gb__event e = {.type = (uint8_t)type, .wall_time = ev->wall_time, .value = ev->duration_us,
                   .payload = p};
    gb__writer_step("observer", NULL, GB_STEP_DEFAULT, false, &e.step);
    gb__writer_push(w, "observer", NULL, GB_KIND_ANY, e, bytes);
}

static void on_numerics(gb_summary_writer *w, const gb_event *ev) {
    const gb_numerics_alert *a = ev->detail;
    char detail[4096];
    gb_numerics_record r = {.op_type = ev->op_type ? ev->op_type : "unknown",
                            .op_name = ev->op_name, .message = ev->message};
    if (a) {
        gb__numerics_detail_json(a, detail, sizeof detail);
        r.function = a->function;
        r.scope_path = a->scope;
        r.forward_op = a->forward_op;
        r.nan_count = a->nan_count;
        r.posinf_count = a->pos_inf_count;
        r.neginf_count = a->neg_inf_count;
        r.detail_json = detail;
    }
    /* The alert's own step when it has one, else the global step if any. */
    gb_summary_numerics(w, &r, a && a->has_step ? a->step : GB_STEP_DEFAULT);
}

/* A trace: the graph layer's gb_trace_event detail gives the function,
 * reason, signature, cost, node counts before and after the passes, and
 * the JSON detail (trace_detail.c); an event without one names the
 * function in op_name and the reason in its message. */
static void on_trace(gb_summary_writer *w, const gb_event *ev) {
    const gb_trace_event *t = ev->detail;
    const char *fn = ev->op_name ? ev->op_name : ev->op_type ? ev->op_type : "unknown";
    gb_trace_record r = {.function = fn, .reason = ev->message, .duration_us = NAN,
                         .nodes_before = -1, .nodes_after = -1};
    char *detail = NULL;
    if (t) {
        r.function = t->function;
        r.is_retrace = t->retrace;
        r.reason = t->reason;
        r.signature = t->signature;
        r.duration_us = t->duration_ms * 1e3;
        r.nodes_before = t->stats ? t->stats->nodes_traced : -1;
        r.nodes_after = t->nodes;
        r.detail_json = detail = gb__trace_detail_json(t, t->call_site);
        gb__writer_note_traced_graph(w, t->graph_json);
    }
    gb_summary_trace(w, &r, GB_STEP_DEFAULT);
    free(detail);
}

/* A function's call counters (sent after its first call, then at most a
 * second apart, when it is freed and when this writer flushes, closes or
 * stops being the default): the store keeps the latest per function. */
static void on_function(gb_summary_writer *w, const gb_event *ev) {
    const gb_function_event *f = ev->detail;
    if (!f) return;
    gb_function_record r = {f->function, f->stats.calls, f->stats.cache_hits, f->stats.traces,
                            f->stats.concrete, f->stats.trace_ms};
    gb_summary_function_stats(w, &r);
}

/* A number the engine measured: into this run, or into a run of its own
 * beside it when the event names one (each rank's timings). */
static void on_scalar(gb_summary_writer *w, const gb_event *ev) {
    const gb_scalar_event *s = ev->detail;
    if (!s || !s->tag) return;
    gb_summary_writer *to = s->run ? gb__writer_sibling(w, s->run) : w;
    if (to) gb__writer_scalar_at(to, s->tag, s->value, s->step, ev->wall_time);
}

static void on_event(const gb_event *ev, void *user) {
    gb_summary_writer *w = user;
    switch (ev->kind) {
    case GB_EVENT_OP: {
        const gb_op_event *op = ev->detail;
        push_strings(w, GB__EV_OP_TIMING, ev, 4,
                     (const char *[]){ev->op_type, ev->op_name, ev->device,
                                      op && op->function ? op->function : ""});
        break;
    }
    case GB_EVENT_PLACEMENT:
    case GB_EVENT_WARNING:
        push_strings(w, GB__EV_MESSAGE, ev, 5,
                     (const char *[]){ev->kind == GB_EVENT_WARNING ? "warning" : "placement",
                                      ev->op_type, ev->op_name, ev->device, ev->message});
        break;
    case GB_EVENT_TRACE: on_trace(w, ev); break;
    case GB_EVENT_FUNCTION: on_function(w, ev); break;
    case GB_EVENT_NUMERICS: on_numerics(w, ev); break;
    case GB_EVENT_SCALAR: on_scalar(w, ev); break;
    case GB_EVENT_PROFILE: gb__writer_on_profile(w, ev); break;
    case GB_EVENT_HEALTH: gb__writer_on_health(w, ev); break;
    default: break;
    }
}

/* ---- the default writer ------------------------------------------------------------ */

void gb_summary_set_default(gb_summary_writer *w) {
    /* The functions' last counts go to the run that saw their calls: a
     * store's counters are exact when its writer closes or is replaced. */
    if (gb_summary_get_default() && gb_summary_get_default() != w) gb_function_flush_counters();
    pthread_mutex_lock(&default_lock);
    gb_summary_writer *old = default_writer;
    if (old != w) {
        if (old && old->observer_id) gb_observer_remove(old->observer_id);
        if (old) old->observer_id = 0;
        if (w) w->observer_id = gb_observer_add(on_event, w, GB_EVENT_ALL);
        default_writer = w;
    }
    pthread_mutex_unlock(&default_lock);
}

gb_summary_writer *gb_summary_get_default(void) { return default_writer; }

void gb__writer_forget_default(gb_summary_writer *w) {
    pthread_mutex_lock(&default_lock);
    bool is_default = default_writer == w;
    pthread_mutex_unlock(&default_lock);
    if (is_default) gb_summary_set_default(NULL);
}
