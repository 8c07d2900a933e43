/* writer_default.c — the default writer, the global step, engine events.
 *
 * tf.summary writes through the writer of `with writer.as_default()`; here
 * gb_summary_set_default() names it for the whole process, and calls given
 * a NULL writer use it. The default writer also subscribes to the engine's
 * observer hook, turning traces, numerics alerts, op timings, warnings and
 * placements into rows of their own tables. The global step is the
 * engine's (gb_set_step), so numerics alerts carry the summary step.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gb_debug.h"
#include "gb_observer.h"
#include "writer_internal.h"

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

static const char *or_empty(const char *s) { return s ? s : ""; }

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

/* A bounded string builder for the JSON details. */
typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    if (t->len >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len = n < 0 ? t->cap : t->len + (size_t)n;
}

static void put_json_string(text *t, const char *s) {
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)or_empty(s); *p; p++) {
        if (*p == '"' || *p == '\\')
            put(t, "\\%c", *p);
        else if (*p < 0x20)
            put(t, "\\u%04x", *p);
        else
            put(t, "%c", *p);
    }
    put(t, "\"");
}

static void put_number(text *t, double v) {
    if (isfinite(v))
        put(t, "%.17g", v);
    else
        put(t, "null");
}

static void put_shape(text *t, int rank, const int64_t *shape) {
    put(t, "[");
    for (int i = 0; i < rank; i++) put(t, "%s%lld", i ? "," : "", (long long)shape[i]);
    put(t, "]");
}

/* The alert fields that have no column, as a JSON object. */
static void alert_detail(const gb_numerics_alert *a, text *t) {
    put(t, "{\"output_index\":%d,\"dtype\":", a->output_index);
    put_json_string(t, gb_dtype_name(a->dtype));
    put(t, ",\"shape\":");
    put_shape(t, a->rank, a->shape);
    put(t, ",\"first_index\":%lld,\"created\":%s,\"backward\":%s,\"forward_op_type\":",
        (long long)a->first_index, a->created ? "true" : "false", a->backward ? "true" : "false");
    put_json_string(t, a->forward_op_type);
    put(t, ",\"inputs\":[");
    for (int i = 0; i < a->ninputs && i < GB_NUMERICS_MAX_INPUTS; i++) {
        const gb_numerics_input *in = &a->inputs[i];
        put(t, "%s{\"dtype\":", i ? "," : "");
        put_json_string(t, gb_dtype_name(in->dtype));
        put(t, ",\"shape\":");
        put_shape(t, in->rank, in->shape);
        put(t, ",\"min\":");
        put_number(t, in->min);
        put(t, ",\"max\":");
        put_number(t, in->max);
        put(t, ",\"nan_count\":%lld,\"inf_count\":%lld}", (long long)in->nan_count,
            (long long)in->inf_count);
    }
    put(t, "]}");
    if (t->len >= t->cap) t->buf[0] = 0;   /* truncated JSON is worse than none */
}

static void on_numerics(gb_summary_writer *w, const gb_event *ev) {
    const gb_numerics_alert *a = ev->detail;
    char detail[4096];
    text t = {detail, 0, sizeof detail};
    detail[0] = 0;
    gb_numerics_record r = {.op_type = ev->op_type ? ev->op_type : "unknown",
                            .op_name = ev->op_name, .message = ev->message};
    if (a) {
        alert_detail(a, &t);
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

static void on_event(const gb_event *ev, void *user) {
    gb_summary_writer *w = user;
    switch (ev->kind) {
    case GB_EVENT_OP:
        push_strings(w, GB__EV_OP_TIMING, ev, 3,
                     (const char *[]){ev->op_type, ev->op_name, ev->device});
        break;
    case GB_EVENT_PLACEMENT:
    case GB_EVENT_WARNING:
        push_strings(w, GB__EV_MESSAGE, ev, 5,
                     (const char *[]){ev->kind == GB_EVENT_WARNING ? "warning" : "placement",
                                      ev->op_type, ev->op_name, ev->device, ev->message});
        break;
    case GB_EVENT_TRACE: {
        const char *fn = ev->op_name ? ev->op_name : ev->op_type ? ev->op_type : "unknown";
        gb_trace_record r = {.function = fn, .reason = ev->message, .duration_us = NAN,
                             .nodes_before = -1, .nodes_after = -1};
        gb_summary_trace(w, &r, GB_STEP_DEFAULT);
        break;
    }
    case GB_EVENT_NUMERICS: on_numerics(w, ev); break;
    default: break;
    }
}

/* ---- the default writer ------------------------------------------------------------ */

void gb_summary_set_default(gb_summary_writer *w) {
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
