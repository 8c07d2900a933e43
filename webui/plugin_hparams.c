/* plugin_hparams.c — the HParams dashboard's API.
 *
 *   GET /api/hparams
 *       {"declared": bool, "hparams": [{name, display_name, description,
 *        type, domain, min, max, values}], "metrics": [{tag, display_name,
 *        higher_is_better}], "runs": [{name, status, start_time,
 *        last_write_time, hparams: {key: value}, metrics: [[last,
 *        last_step, min, max, count] or null, ...]}]}
 *   One request is the whole table (gb_store_experiment): the runs that
 *   recorded hparams, each metric from the top rollup (never the series),
 *   so a thousand runs cost a thousand index rows per metric. A run's
 *   metrics are in the order of "metrics"; null where it lacks the tag.
 *   With step=S each metric's array gains its value at S and the step it
 *   was written at (the run's last point at or before S; null, null when
 *   it has none): the table's "at a step" mode. That reads one bucket of
 *   each series (gb_store_scalars with a row budget of 1).
 */
#include <string.h>

#include "board_internal.h"

static void write_hparam_info(gb__json *j, const gb_hparam_info *h) {
    gb__json_obj(j);
    GB__JSON_KV(j, "name", str, h->name);
    GB__JSON_KV(j, "display_name", str, h->display_name);
    GB__JSON_KV(j, "description", str, h->description);
    GB__JSON_KV(j, "type", str, gb_hparam_type_name(h->type));
    GB__JSON_KV(j, "domain", str, gb_hparam_domain_name(h->domain));
    gb__json_key(j, "min");
    if (h->domain == GB_DOMAIN_INTERVAL) gb__json_num(j, h->min);
    else gb__json_null(j);
    gb__json_key(j, "max");
    if (h->domain == GB_DOMAIN_INTERVAL) gb__json_num(j, h->max);
    else gb__json_null(j);
    gb__json_key(j, "values");
    if (!gb__json_raw(j, h->values_json, strlen(h->values_json))) gb__json_null(j);
    gb__json_obj_end(j);
}

/* The run's last point of tag at or before step, as two JSON values. */
static void write_at_step(gb__json *j, gb_store *store, const char *run, const char *tag,
                          int64_t step) {
    gb_query q = {GB_STEP_MIN, step, 1};
    gb_scalar_series *s = NULL;
    if (gb_store_scalars(store, run, tag, &q, &s) == GB_STORE_OK && s->count) {
        const gb_scalar_row *row = &s->rows[s->count - 1];
        gb__json_num(j, row->last);
        gb__json_int(j, row->step_last);
    } else {
        gb__json_null(j);
        gb__json_null(j);
    }
    gb_store_free(s);
}

static void write_run(gb__request *req, const gb_experiment *e, const gb_experiment_run *r) {
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "name", str, r->run->name);
    GB__JSON_KV(j, "status", str, r->run->status);
    GB__JSON_KV(j, "start_time", time, r->run->start_time);
    GB__JSON_KV(j, "last_write_time", time, r->run->last_write_time);
    gb__json_key(j, "hparams");
    gb__json_obj(j);
    for (size_t k = 0; k < r->run->hparam_count; k++) {
        const gb_hparam *h = &r->run->hparams[k];
        gb__json_key(j, h->key);
        if (h->is_number) gb__json_num(j, h->number);
        else gb__json_str(j, h->value);
    }
    gb__json_obj_end(j);
    gb__json_key(j, "metrics");
    gb__json_arr(j);
    for (size_t m = 0; m < e->metric_count; m++) {
        const gb_scalar_summary_row *v = &r->metrics[m];
        if (!v->count) {
            gb__json_null(j);
            continue;
        }
        gb__json_arr(j);
        gb__json_num(j, v->last);
        gb__json_int(j, v->last_step);
        gb__json_num(j, v->min);
        gb__json_num(j, v->max);
        gb__json_int(j, v->count);
        if (gb__param_present(req, "step"))
            write_at_step(j, req->store, r->run->name, e->metrics[m].tag, gb__param_int(req, "step"));
        gb__json_arr_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
}

static int experiment(gb__request *req) {
    gb_experiment *e = NULL;
    gb_store_status st = gb_store_experiment(req->store, &e);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "declared", bool, e->declared);
    gb__json_key(j, "hparams");
    gb__json_arr(j);
    for (size_t i = 0; i < e->hparam_count; i++) write_hparam_info(j, &e->hparams[i]);
    gb__json_arr_end(j);
    gb__json_key(j, "metrics");
    gb__json_arr(j);
    for (size_t i = 0; i < e->metric_count; i++) {
        gb__json_obj(j);
        GB__JSON_KV(j, "tag", str, e->metrics[i].tag);
        GB__JSON_KV(j, "display_name", str, e->metrics[i].display_name);
        GB__JSON_KV(j, "higher_is_better", bool, e->metrics[i].higher_is_better);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_key(j, "runs");
    gb__json_arr(j);
    for (size_t i = 0; i < e->run_count; i++) write_run(req, e, &e->runs[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(e);
    return 200;
}

static const gb__route routes[] = {
    {"", experiment,
     {{"step", GB__PARAM_INT, false, GB__P_INT64_MIN, GB__P_INT64_MAX, 0}, GB__P_END}},
};

/* Shown once a run recorded hparams or an experiment was declared. */
static bool has_hparams(gb_store *store) {
    gb_hparams_config *c = NULL;
    bool any = gb_store_hparams_config(store, &c) == GB_STORE_OK &&
               (c->hparam_count || c->metric_count);
    gb_store_free(c);
    if (any) return true;
    gb_runs *runs = NULL;
    if (gb_store_runs(store, &runs) == GB_STORE_OK)
        for (size_t i = 0; i < runs->count && !any; i++) any = runs->rows[i].hparam_count > 0;
    gb_store_free(runs);
    return any;
}

const gb__plugin gb__plugin_hparams = {
    .name = "hparams",
    .title = "HParams",
    .order = 72,
    .is_active = has_hparams,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
