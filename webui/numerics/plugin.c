/* numerics/plugin.c — the Numerics dashboard's API: NaN/Inf alerts of the
 * engine's numerics checks, the first one first.
 *
 *   GET /api/numerics/runs
 *       {"runs": [{run, count, first_step, last_step, truncated,
 *                  first: {id, step, op_type, op_name}}]}
 *       every run with at least one alert, by name
 *   GET /api/numerics/alerts?run=&op_type=&min_step=&max_step=&after_id=&offset=&limit=
 *       {run, total, matched, window_matched, last_id, first_step, last_step,
 *        truncated, offset, first, op_types: [{op_type, count}], alerts: [...]}
 *
 * Alerts come in first-occurrence order: by step, then in the order they
 * were recorded (alerts without a step, step null, come first). `first` is
 * the run's first alert whatever the filters — the one to look at. op_type
 * (exact) and min_step/max_step (inclusive; a step bound leaves out the
 * alerts without a step) filter the alerts; `matched` counts what they let
 * through. after_id=N keeps only alerts recorded
 * after alert N in `alerts` (and `window_matched` counts those): a live
 * page passes the `last_id` it holds, merges what comes, and replaces its
 * totals. offset/limit (100, at most 5000) cut the window.
 *
 * An alert: {id, step, wall, op_type, op_name, scope, function,
 *   direction: "forward"|"backward", forward_op, forward_op_type,
 *   nan, posinf, neginf, first_index, origin: "created"|"received",
 *   output: {index, dtype, shape}, inputs: [{dtype, shape, min, max, nan, inf}],
 *   message}
 * "created": every input was finite, so this op made the NaN/Inf;
 * "received": an input already held one. Fields the store does not know
 * are null; an input's min/max are "NaN" when it has no finite value.
 */
#include <string.h>

#include "board_internal.h"
#include "numerics/internal.h"

#define MAX_LIMIT 5000

/* ---- routes ---------------------------------------------------------------------- */

/* A failed read: the reader's errors as every route maps them; our own
 * allocation failures say so (the reader's last message is not ours). */
static int read_failed(gb__request *req, gb_store_status st) {
    if (st == GB_STORE_ERR_MEMORY) return gb__fail(req, 503, "out of memory reading alerts");
    return gb__reply_store_error(req, st);
}

/* How many alerts the checks raised in run — stored or past their limit —
 * and the step of the last: the last bucket of the engine's count series
 * (GB_STORE_NUMERICS_SEEN_TAG). Nulls for a store without it. */
static void write_seen(gb__json *j, gb_store *store, const char *run) {
    gb_query q = GB_QUERY_ALL;
    q.max_rows = 1;
    gb_scalar_series *ser = NULL;
    const gb_scalar_row *last = NULL;
    if (gb_store_scalars(store, run, GB_STORE_NUMERICS_SEEN_TAG, &q, &ser) == GB_STORE_OK && ser->count)
        last = &ser->rows[ser->count - 1];
    gb__json_key(j, "seen");
    if (last) gb__json_int(j, (int64_t)last->max);
    else gb__json_null(j);
    gb__json_key(j, "seen_last_step");
    if (last) gb__json_int(j, last->step_last);
    else gb__json_null(j);
    gb_store_free(ser);
}

static void write_totals(gb__json *j, const gb__numerics_view *v, gb_store *store, const char *run) {
    gb__json_key(j, "first_step");
    gb__numerics_write_step(j, v->first_step);
    gb__json_key(j, "last_step");
    gb__numerics_write_step(j, v->last_step);
    GB__JSON_KV(j, "truncated", bool, v->truncated);
    write_seen(j, store, run);
}

static int numerics_runs(gb__request *req) {
    gb_runs *runs = NULL;
    gb_store_status st = gb_store_runs(req->store, &runs);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "runs");
    gb__json_arr(j);
    /* No alert anywhere (one row read; a logdir's cache): no run to look at,
     * and a board of 1,000 stores opens none of them for this list. */
    bool any = true;
    if (gb_store_has_events(req->store, GB_EVENTS_NUMERICS, &any) == GB_STORE_OK && !any)
        runs->count = 0;
    for (size_t i = 0; i < runs->count && st == GB_STORE_OK; i++) {
        const char *run = runs->rows[i].name;
        if (!gb__numerics_any(req->store, run)) continue;
        gb__numerics_view v;
        gb__numerics_filter f = {.step_min = GB_STEP_MIN, .step_max = GB_STEP_MAX};
        st = gb__numerics_read(req->store, run, &f, &v);
        if (st == GB_STORE_OK && v.first) {
            gb__json_obj(j);
            GB__JSON_KV(j, "run", str, run);
            GB__JSON_KV(j, "count", int, v.total);
            write_totals(j, &v, req->store, run);
            gb__json_key(j, "first");
            gb__json_obj(j);
            GB__JSON_KV(j, "id", int, v.first->id);
            gb__json_key(j, "step");
            gb__numerics_write_step(j, v.first->step);
            GB__JSON_KV(j, "op_type", str, v.first->op_type);
            GB__JSON_KV(j, "op_name", str, v.first->op_name);
            gb__json_obj_end(j);
            gb__json_obj_end(j);
        }
        gb__numerics_view_free(&v);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(runs);
    return st == GB_STORE_OK ? 200 : read_failed(req, st);
}

static int numerics_alerts(gb__request *req) {
    const char *run = gb__param_text(req, "run");
    gb__numerics_filter f = {
        .op_type = gb__param_text(req, "op_type"),
        .step_min = gb__param_int(req, "min_step"),
        .step_max = gb__param_int(req, "max_step"),
        .after_id = gb__param_int(req, "after_id"),
        .offset = (size_t)gb__param_int(req, "offset"),
        .limit = (size_t)gb__param_int(req, "limit"),
    };
    gb__numerics_view v;
    gb_store_status st = gb__numerics_read(req->store, run, &f, &v);
    if (st != GB_STORE_OK) {
        gb__numerics_view_free(&v);
        return read_failed(req, st);
    }
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    GB__JSON_KV(j, "total", int, v.total);
    GB__JSON_KV(j, "matched", int, v.matched);
    GB__JSON_KV(j, "window_matched", int, v.window_matched);
    GB__JSON_KV(j, "last_id", int, v.last_id);
    write_totals(j, &v, req->store, run);
    GB__JSON_KV(j, "offset", int, (int64_t)f.offset);
    gb__json_key(j, "first");
    if (v.first) gb__numerics_write_alert(j, v.first);
    else gb__json_null(j);
    gb__json_key(j, "op_types");
    gb__json_arr(j);
    for (size_t i = 0; i < v.type_count; i++) {
        gb__json_obj(j);
        GB__JSON_KV(j, "op_type", str, v.types[i].op_type);
        GB__JSON_KV(j, "count", int, v.types[i].count);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_key(j, "alerts");
    gb__json_arr(j);
    for (size_t i = 0; i < v.count; i++) gb__numerics_write_alert(j, v.rows[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb__numerics_view_free(&v);
    return 200;
}

static const gb__route routes[] = {
    {"runs", numerics_runs, {GB__P_END}},
    {"alerts", numerics_alerts,
     {GB__P_RUN,
      {"op_type", GB__PARAM_TEXT, false, 1, GB__MAX_TEXT_PARAM, 0},
      GB__P_STEP_MIN,
      GB__P_STEP_MAX,
      {"after_id", GB__PARAM_INT, false, 0, (double)INT64_MAX, 0},
      {"offset", GB__PARAM_INT, false, 0, GB__NUMERICS_SCAN_MAX, 0},
      {"limit", GB__PARAM_INT, false, 1, MAX_LIMIT, 100},
      GB__P_END}},
};

/* Active when any run has an alert: one row read (a logdir: none). */
static bool has_alerts(gb_store *store) {
    bool any = false;
    return gb_store_has_events(store, GB_EVENTS_NUMERICS, &any) == GB_STORE_OK && any;
}

const gb__plugin gb__plugin_numerics = {
    .name = "numerics",
    .title = "Numerics",
    .order = 80,
    .is_active = has_alerts,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
