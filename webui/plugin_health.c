/* plugin_health.c — the Health dashboard's API: what the engine's
 * training-health checks found, and each layer's figures as a heat map.
 *
 *   GET /api/health/runs
 *       {"runs": [{run, total, critical, warning, info, first_step,
 *                  last_step, last_id, figures: bool}]}
 *       every run with health alerts or health/ figures, by name
 *   GET /api/health/alerts?run=&limit=
 *       {"run": run or null, "total", "critical", "warning", "info",
 *        "alerts": [{run, id, step, wall, kind, severity, layer, variable,
 *                    value, threshold, figures: {...}, message, advice}]}
 *       one run's alerts, or every run's (run absent), most severe first,
 *       then earliest (step; alerts without one first), then by run and
 *       id; the totals count them all, `alerts` holds the first `limit`
 *   GET /api/health/heatmap?run=&figure=&points=&min_step=&max_step=
 *       {run, figure, figures: [...], downsampled, steps: [...],
 *        steps_last: [...], layers: [{layer, values: [...], min: [...],
 *        max: [...], counts: [...]}]}
 *       a row per layer (input side first), a column per step written or,
 *       past `points` columns, per interval of steps steps[k]..steps_last[k];
 *       values[k] is the cell's worst point (gb_reader.h says which that
 *       is for each figure), null where the layer has none. Without a
 *       figure: grad_norm when the run has it, else its first figure.
 *
 * severity is "info", "warning" or "critical"; layer is "" for the model
 * as a whole (the loss, the global gradient norm), variable "" for a
 * layer's output; figures is the JSON object the check stored (null when
 * the store holds something else there).
 */
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"

#define MAX_LIMIT 5000
#define DEFAULT_FIGURE "grad_norm"

/* ---- runs -------------------------------------------------------------------------- */

static int by_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The runs with a scalar tag "health/...", sorted, to look runs up in
 * (one pass over the tags, however many runs: a logdir has thousands).
 * NULL with *n 0 when there is none or memory ran out. */
static const char **runs_with_figures(const gb_tags *tags, size_t *n) {
    *n = 0;
    const char **out = tags && tags->count ? malloc(tags->count * sizeof *out) : NULL;
    for (size_t i = 0; out && i < tags->count; i++) {
        const gb_tag_row *t = &tags->rows[i];
        if (strncmp(t->tag, "health/", 7)) continue;
        if (*n && !strcmp(out[*n - 1], t->run)) continue;   /* rows come by run */
        out[(*n)++] = t->run;
    }
    if (out) qsort(out, *n, sizeof *out, by_name);
    return out;
}

static void write_step(gb__json *j, const char *key, int64_t step) {
    gb__json_key(j, key);
    if (step == GB_STEP_NONE) gb__json_null(j);
    else gb__json_int(j, step);
}

static void write_counts(gb__json *j, const gb_health_counts *c) {
    GB__JSON_KV(j, "total", int, c->total);
    GB__JSON_KV(j, "critical", int, c->by_severity[GB_HEALTH_SEVERITY_CRITICAL]);
    GB__JSON_KV(j, "warning", int, c->by_severity[GB_HEALTH_SEVERITY_WARNING]);
    GB__JSON_KV(j, "info", int, c->by_severity[GB_HEALTH_SEVERITY_INFO]);
}

static int health_runs(gb__request *req) {
    gb_runs *runs = NULL;
    gb_tags *tags = NULL;
    bool any = true;
    gb_store_status st = gb_store_has_events(req->store, GB_EVENTS_HEALTH, &any);
    if (st == GB_STORE_OK) st = gb_store_runs(req->store, &runs);
    if (st == GB_STORE_OK && any) st = gb_store_tags(req->store, NULL, GB_KIND_SCALAR, &tags);
    size_t nfig = 0;
    const char **with_figures = st == GB_STORE_OK ? runs_with_figures(tags, &nfig) : NULL;
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "runs");
    gb__json_arr(j);
    /* No health anywhere (one row read; a logdir's cache): no store opened. */
    for (size_t i = 0; st == GB_STORE_OK && any && i < runs->count; i++) {
        const char *run = runs->rows[i].name;
        gb_health_counts *c = NULL;
        st = gb_store_health_counts(req->store, run, &c);
        bool figures = nfig && bsearch(&run, with_figures, nfig, sizeof *with_figures, by_name);
        if (st == GB_STORE_OK && (c->total || figures)) {
            gb__json_obj(j);
            GB__JSON_KV(j, "run", str, run);
            write_counts(j, c);
            write_step(j, "first_step", c->first_step);
            write_step(j, "last_step", c->last_step);
            GB__JSON_KV(j, "last_id", int, c->last_id);
            GB__JSON_KV(j, "figures", bool, figures);
            gb__json_obj_end(j);
        }
        gb_store_free(c);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    free(with_figures);
    gb_store_free(runs);
    gb_store_free(tags);
    return st == GB_STORE_OK ? 200 : gb__reply_store_error(req, st);
}

/* ---- alerts ---------------------------------------------------------------------------- */

typedef struct alert_ref {
    const char *run;
    const gb_health_row *row;
} alert_ref;

/* Most severe first, then earliest (no step first), then by run and id. */
static int alert_order(const void *x, const void *y) {
    const alert_ref *a = x, *b = y;
    if (a->row->severity != b->row->severity) return a->row->severity > b->row->severity ? -1 : 1;
    if (a->row->step != b->row->step) return a->row->step < b->row->step ? -1 : 1;
    int c = strcmp(a->run, b->run);
    if (c) return c;
    return (a->row->id > b->row->id) - (a->row->id < b->row->id);
}

static void write_alert(gb__json *j, const alert_ref *r) {
    const gb_health_row *a = r->row;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, r->run);
    GB__JSON_KV(j, "id", int, a->id);
    write_step(j, "step", a->step);
    GB__JSON_KV(j, "wall", time, a->wall_time);
    GB__JSON_KV(j, "kind", str, a->kind);
    GB__JSON_KV(j, "severity", str, gb_health_severity_name(a->severity));
    GB__JSON_KV(j, "layer", str, a->layer);
    GB__JSON_KV(j, "variable", str, a->variable);
    GB__JSON_KV(j, "value", num, a->value);
    GB__JSON_KV(j, "threshold", num, a->threshold);
    gb__json_key(j, "figures");
    /* The writer stores one JSON object; a store some other program wrote
     * may hold anything there, which is never passed on as JSON. */
    const char *f = a->figures + strspn(a->figures, " \t\r\n");
    if (*f != '{' || !gb_json_is_value(f) || !gb__json_raw(j, f, strlen(f))) gb__json_null(j);
    GB__JSON_KV(j, "message", str, a->message);
    GB__JSON_KV(j, "advice", str, a->advice);
    gb__json_obj_end(j);
}

/* The results read, and the alerts in them in the page's order. */
typedef struct alert_set {
    gb_health_alerts **results;
    size_t nresults;
    alert_ref *refs;
    size_t count, cap;
    gb_health_counts totals;
} alert_set;

static void alert_set_free(alert_set *s) {
    for (size_t i = 0; i < s->nresults; i++) gb_store_free(s->results[i]);
    free(s->results);
    free(s->refs);
}

/* Adds run's first `limit` alerts and its counts to s. */
static gb_store_status add_run(gb__request *req, alert_set *s, const char *run, size_t limit) {
    gb_health_counts *c = NULL;
    gb_store_status st = gb_store_health_counts(req->store, run, &c);
    if (st != GB_STORE_OK || !c->total) {
        gb_store_free(c);
        return st;
    }
    s->totals.total += c->total;
    for (int k = 0; k < 4; k++) s->totals.by_severity[k] += c->by_severity[k];
    gb_store_free(c);
    gb_health_alerts *a = NULL;
    gb_event_query q = {0, limit};
    st = gb_store_health_alerts(req->store, run, &q, &a);
    if (st != GB_STORE_OK) return st;
    gb_health_alerts **results = realloc(s->results, (s->nresults + 1) * sizeof *results);
    if (results) s->results = results;
    if (results && s->count + a->count > s->cap) {
        alert_ref *refs = realloc(s->refs, (s->count + a->count) * sizeof *refs);
        if (refs) s->refs = refs, s->cap = s->count + a->count;
        else results = NULL;
    }
    if (!results) {
        gb_store_free(a);
        return GB_STORE_ERR_MEMORY;
    }
    s->results[s->nresults++] = a;
    for (size_t i = 0; i < a->count; i++) s->refs[s->count++] = (alert_ref){run, &a->rows[i]};
    return GB_STORE_OK;
}

static int health_alerts(gb__request *req) {
    const char *run = gb__param_text(req, "run");
    size_t limit = (size_t)gb__param_int(req, "limit");
    alert_set set = {0};
    gb_runs *runs = NULL;
    gb_store_status st = GB_STORE_OK;
    if (run) {
        st = add_run(req, &set, run, limit);
    } else {
        bool any = true;
        st = gb_store_has_events(req->store, GB_EVENTS_HEALTH, &any);
        if (st == GB_STORE_OK && any) st = gb_store_runs(req->store, &runs);
        for (size_t i = 0; st == GB_STORE_OK && runs && i < runs->count; i++)
            st = add_run(req, &set, runs->rows[i].name, limit);
    }
    if (st != GB_STORE_OK) {
        alert_set_free(&set);
        gb_store_free(runs);
        if (st == GB_STORE_ERR_MEMORY) return gb__fail(req, 503, "out of memory reading alerts");
        return gb__reply_store_error(req, st);
    }
    if (set.count) qsort(set.refs, set.count, sizeof *set.refs, alert_order);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "run");
    if (run) gb__json_str(j, run);
    else gb__json_null(j);
    write_counts(j, &set.totals);
    gb__json_key(j, "alerts");
    gb__json_arr(j);
    for (size_t i = 0; i < set.count && i < limit; i++) write_alert(j, &set.refs[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    alert_set_free(&set);
    gb_store_free(runs);
    return 200;
}

/* ---- the heat map ---------------------------------------------------------------------- */

static void write_cells(gb__json *j, const char *key, const gb_health_heatmap *m, size_t layer,
                        int what) {
    gb__json_key(j, key);
    gb__json_arr(j);
    for (size_t k = 0; k < m->column_count; k++) {
        const gb_health_cell *c = &m->cells[layer * m->column_count + k];
        if (what == 3) gb__json_int(j, c->count);
        else if (!c->count) gb__json_null(j);
        else gb__json_num(j, what == 0 ? c->value : what == 1 ? c->min : c->max);
    }
    gb__json_arr_end(j);
}

static void write_steps(gb__json *j, const char *key, const int64_t *steps, size_t n) {
    gb__json_key(j, key);
    gb__json_arr(j);
    for (size_t k = 0; k < n; k++) gb__json_int(j, steps[k]);
    gb__json_arr_end(j);
}

static int health_heatmap(gb__request *req) {
    const char *run = gb__param_text(req, "run"), *figure = gb__param_text(req, "figure");
    gb_query q = gb__query_of(req);
    gb_health_heatmap *m = NULL;
    gb_store_status st =
        gb_store_health_heatmap(req->store, run, figure ? figure : DEFAULT_FIGURE, &q, &m);
    /* No figure asked for and the run has no gradient norms: its first. */
    if (st == GB_STORE_OK && !figure && !m->layer_count && m->figure_count) {
        figure = m->figures[0];
        gb_health_heatmap *first = NULL;
        st = gb_store_health_heatmap(req->store, run, figure, &q, &first);
        gb_store_free(m);
        m = first;
    }
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    GB__JSON_KV(j, "figure", str, figure ? figure : DEFAULT_FIGURE);
    gb__json_key(j, "figures");
    gb__json_arr(j);
    for (size_t i = 0; i < m->figure_count; i++) gb__json_str(j, m->figures[i]);
    gb__json_arr_end(j);
    GB__JSON_KV(j, "downsampled", bool, m->downsampled);
    write_steps(j, "steps", m->steps, m->column_count);
    write_steps(j, "steps_last", m->steps_last, m->column_count);
    gb__json_key(j, "layers");
    gb__json_arr(j);
    for (size_t l = 0; l < m->layer_count; l++) {
        gb__json_obj(j);
        GB__JSON_KV(j, "layer", str, m->layers[l]);
        write_cells(j, "values", m, l, 0);
        write_cells(j, "min", m, l, 1);
        write_cells(j, "max", m, l, 2);
        write_cells(j, "counts", m, l, 3);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(m);
    return 200;
}

static const gb__route routes[] = {
    {"runs", health_runs, {GB__P_END}},
    {"alerts", health_alerts,
     {GB__P_RUN_OPT, {"limit", GB__PARAM_INT, false, 1, MAX_LIMIT, 500}, GB__P_END}},
    {"heatmap", health_heatmap,
     {GB__P_RUN,
      {"figure", GB__PARAM_TEXT, false, 1, GB__MAX_TEXT_PARAM, 0},
      GB__P_POINTS_UPTO(GB_HEALTH_HEATMAP_MAX_COLUMNS, 400),
      GB__P_STEP_MIN,
      GB__P_STEP_MAX,
      GB__P_END}},
};

/* Active when any run has an alert or a health figure: one row read. */
static bool has_health(gb_store *store) {
    bool any = false;
    return gb_store_has_events(store, GB_EVENTS_HEALTH, &any) == GB_STORE_OK && any;
}

const gb__plugin gb__plugin_health = {
    .name = "health",
    .title = "Health",
    .order = 82,
    .is_active = has_health,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
