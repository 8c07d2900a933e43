/* debug/health.c — the training-health checks' switch, options and monitor.
 *
 * Off, on, or (the default) on while someone listens for GB_EVENT_HEALTH:
 * the summary writer subscribes to every kind when it becomes the default
 * writer, so a program that writes a store is checked without asking and
 * one that writes nothing measures nothing. The engine learns of the
 * writer only through its subscription — it never depends on summary/.
 *
 * A monitor (one per compiled model, made by fit) remembers what the rules
 * need across checks: which findings are active, so each is reported once
 * per onset; the last global gradient norm; each weight's history; the
 * recent losses. The figures leave as GB_EVENT_SCALAR events tagged
 * "health/<layer>/<figure>", layer by layer in the model's order, then the
 * rules run (health_checks.c) and the findings leave as GB_EVENT_HEALTH.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "debug/health_internal.h"

typedef enum { HEALTH_AUTO = 0, HEALTH_ON, HEALTH_OFF } health_switch;

static health_switch state = HEALTH_AUTO;
static gb_health_options options;   /* as given; zeros take the defaults */
static gb_health_options in_force;
static bool in_force_ready;

static gb_health_options with_defaults(gb_health_options o) {
    if (!o.interval) o.interval = 20;
    if (o.vanishing_ratio == 0) o.vanishing_ratio = 1e-3;
    if (o.exploding_ratio == 0) o.exploding_ratio = 1e3;
    if (o.jump_factor == 0) o.jump_factor = 10;
    if (o.min_update_ratio == 0) o.min_update_ratio = 1e-5;
    if (o.max_update_ratio == 0) o.max_update_ratio = 1e-1;
    if (o.max_dead_fraction == 0) o.max_dead_fraction = 0.5;
    if (o.saturation_eps == 0) o.saturation_eps = 0.01;
    if (o.max_saturated_fraction == 0) o.max_saturated_fraction = 0.5;
    if (o.spike_k == 0) o.spike_k = 6;
    if (!o.loss_window) o.loss_window = 50;
    if (o.growth_factor == 0) o.growth_factor = 3;
    if (!o.growth_checks) o.growth_checks = 5;
    if (o.bias_drift == 0) o.bias_drift = 2;
    if (o.min_variance == 0) o.min_variance = 1e-6;
    return o;
}

/* The first option out of range, named, or NULL. */
static const char *bad_option(const gb_health_options *o) {
    if (o->interval < 1) return "interval must be >= 1";
    if (!(o->vanishing_ratio > 0 && o->vanishing_ratio < 1)) return "vanishing_ratio must be in (0, 1)";
    if (!(o->exploding_ratio > 1 && isfinite(o->exploding_ratio))) return "exploding_ratio must be > 1";
    if (!(o->jump_factor > 1 && isfinite(o->jump_factor))) return "jump_factor must be > 1";
    if (!(o->min_update_ratio > 0 && o->min_update_ratio < o->max_update_ratio))
        return "min_update_ratio must be > 0 and below max_update_ratio";
    if (!isfinite(o->max_update_ratio)) return "max_update_ratio must be finite";
    if (!(o->max_dead_fraction > 0 && o->max_dead_fraction < 1)) return "max_dead_fraction must be in (0, 1)";
    if (!(o->saturation_eps > 0 && o->saturation_eps < 0.5)) return "saturation_eps must be in (0, 0.5)";
    if (!(o->max_saturated_fraction > 0 && o->max_saturated_fraction < 1))
        return "max_saturated_fraction must be in (0, 1)";
    if (!(o->spike_k > 0 && isfinite(o->spike_k))) return "spike_k must be > 0";
    if (o->loss_window < 4) return "loss_window must be >= 4";
    if (!(o->growth_factor > 1 && isfinite(o->growth_factor))) return "growth_factor must be > 1";
    if (o->growth_checks < 1) return "growth_checks must be >= 1";
    if (!(o->bias_drift > 0 && isfinite(o->bias_drift))) return "bias_drift must be > 0";
    if (!(o->min_variance > 0 && isfinite(o->min_variance))) return "min_variance must be > 0";
    return NULL;
}

bool gb_health_enable(const gb_health_options *opts) {
    gb_health_options o = opts ? *opts : (gb_health_options){0};
    gb_health_options full = with_defaults(o);
    const char *bad = bad_option(&full);
    if (bad) {
        gb__error(GB_ERR_VALUE, NULL, "gb_health_enable: %s", bad);
        return false;
    }
    options = o;
    in_force = full;
    in_force_ready = true;
    state = HEALTH_ON;
    return true;
}

void gb_health_disable(void) { state = HEALTH_OFF; }

bool gb_health_active(void) { return state != HEALTH_OFF && gb_observer_wants(GB_EVENT_HEALTH); }

const gb_health_options *gb__health_options(void) {
    if (!in_force_ready) {
        in_force = with_defaults(options);
        in_force_ready = true;
    }
    return &in_force;
}

gb_health_options gb_health_get_options(void) { return *gb__health_options(); }

/* The first step is checked too: a learning rate 100x too large does its
 * harm in the first steps (Adam's first step moves every weight by the
 * learning rate whatever its gradient), and by the first interval's end
 * the weights have grown to where each step looks small again. */
bool gb__health_due(int64_t step, bool first) {
    return first || (step > 0 && step % gb__health_options()->interval == 0);
}

/* ---- the monitor ------------------------------------------------------------------------ */

typedef struct finding {
    char *key;                /* kind \x1f layer \x1f variable */
    bool active;
} finding;

typedef struct history_entry {
    char *variable;
    gb__health_history h;
} history_entry;

struct gb__health {
    finding *findings;
    int nfindings, capfindings;
    history_entry *history;
    int nhistory, caphistory;
    double prev_global;
    gb__loss_watch loss;
};

gb__health *gb__health_new(void) {
    gb__health *h = calloc(1, sizeof *h);
    if (!h) {
        gb__error(GB_ERR_MEMORY, NULL, "health checks: out of memory for a monitor");
        return NULL;
    }
    h->prev_global = -1;
    return h;
}

void gb__health_free(gb__health *h) {
    if (!h) return;
    for (int i = 0; i < h->nfindings; i++) free(h->findings[i].key);
    for (int i = 0; i < h->nhistory; i++) free(h->history[i].variable);
    free(h->findings);
    free(h->history);
    gb__loss_watch_free(&h->loss);
    free(h);
}

/* Grows an array of `size`-byte items to hold one more; false when out of memory. */
static bool grow(void **items, int n, int *cap, size_t size) {
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 16;
    void *p = realloc(*items, (size_t)c * size);
    if (!p) return false;
    *items = p;
    *cap = c;
    return true;
}

static char *dup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

gb__health_history *gb__health_history_of(gb__health *h, const char *variable) {
    for (int i = 0; i < h->nhistory; i++)
        if (!strcmp(h->history[i].variable, variable)) return &h->history[i].h;
    char *name = dup(variable);
    if (!name || !grow((void **)&h->history, h->nhistory, &h->caphistory, sizeof *h->history)) {
        free(name);
        return NULL;
    }
    h->history[h->nhistory] = (history_entry){.variable = name};
    return &h->history[h->nhistory++].h;
}

gb__loss_watch *gb__health_loss_watch(gb__health *h) { return &h->loss; }

double gb__health_swap_global(gb__health *h, double now) {
    double prev = h->prev_global;
    h->prev_global = now;
    return prev;
}

/* The finding's slot, added inactive when new; NULL when out of memory. */
static finding *finding_of(gb__health *h, const gb_health_alert *a) {
    char key[512];
    snprintf(key, sizeof key, "%s\x1f%s\x1f%s", a->kind, a->layer ? a->layer : "",
             a->variable ? a->variable : "");
    for (int i = 0; i < h->nfindings; i++)
        if (!strcmp(h->findings[i].key, key)) return &h->findings[i];
    char *k = dup(key);
    if (!k || !grow((void **)&h->findings, h->nfindings, &h->capfindings, sizeof *h->findings)) {
        free(k);
        return NULL;
    }
    h->findings[h->nfindings] = (finding){.key = k};
    return &h->findings[h->nfindings++];
}

static void emit_v(const gb_health_alert *a, const char *fmt, va_list ap) {
    char text[1024];
    vsnprintf(text, sizeof text, fmt, ap);
    gb_health_alert copy = *a;
    gb_event ev = {.kind = GB_EVENT_HEALTH, .message = text, .detail = &copy};
    gb_observer_emit(&ev);
}

void gb__health_emit(const gb_health_alert *a, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    emit_v(a, fmt, ap);
    va_end(ap);
}

void gb__health_finding(gb__health *h, bool firing, const gb_health_alert *a, const char *fmt, ...) {
    finding *f = finding_of(h, a);
    if (!f) return;   /* out of memory: the check says nothing rather than repeat itself */
    bool onset = firing && !f->active;
    f->active = firing;
    if (!onset) return;
    va_list ap;
    va_start(ap, fmt);
    emit_v(a, fmt, ap);
    va_end(ap);
}

/* ---- figures ---------------------------------------------------------------------------- */

static void emit_scalar_of(const char *layer, const char *figure, double value, int64_t step,
                           const char *run) {
    char tag[512];
    snprintf(tag, sizeof tag, "health/%s/%s", layer, figure);
    gb_scalar_event s = {.tag = tag, .value = value, .step = step, .run = run};
    gb_event ev = {.kind = GB_EVENT_SCALAR, .message = tag, .detail = &s};
    gb_observer_emit(&ev);
}

static void emit_scalar(const char *layer, const char *figure, double value, int64_t step) {
    emit_scalar_of(layer, figure, value, step, NULL);
}

void gb__health_rank_figure(const char *layer, const char *figure, double value, int64_t step,
                            int rank) {
    char run[32];
    snprintf(run, sizeof run, "rank_%d", rank);
    emit_scalar_of(layer, figure, value, step, run);
}

/* A layer's figures: the norms over all its variables at once (the
 * layer's parameters as one vector), the ratio of its update to its
 * weights before the step, and its output's dead or saturated share. */
static void emit_layer(const gb__health_layer *l, int64_t step) {
    double g = 0, w = 0, before = 0, upd = 0;
    bool any_grad = false, any_update = false;
    for (int i = 0; i < l->nvars; i++) {
        const gb__health_var *v = &l->vars[i];
        if (v->has_grad) any_grad = true, g += v->grad_sumsq;
        if (v->has_update) any_update = true, before += v->before_sumsq, upd += v->update_sumsq;
        w += v->weight_sumsq;
    }
    if (any_grad) emit_scalar(l->name, "grad_norm", sqrt(g), step);
    if (any_update && before > 0) emit_scalar(l->name, "update_ratio", sqrt(upd / before), step);
    if (l->nvars) emit_scalar(l->name, "weight_norm", sqrt(w), step);
    if (l->has_output && l->act == GB__HEALTH_ACT_RELU && l->units > 0)
        emit_scalar(l->name, "dead_fraction", (double)l->dead_units / (double)l->units, step);
    if (l->has_output && (l->act == GB__HEALTH_ACT_SIGMOID || l->act == GB__HEALTH_ACT_TANH) &&
        l->values > 0)
        emit_scalar(l->name, "saturated_fraction", (double)l->saturated_values / (double)l->values,
                    step);
}

void gb__health_check(gb__health *h, int64_t step, const gb__health_layer *layers, int n) {
    if (!h) return;
    if (gb_observer_wants(GB_EVENT_SCALAR))
        for (int i = 0; i < n; i++) emit_layer(&layers[i], step);
    gb__health_rules(h, step, layers, n);
}
