/* plugin_traces.c — the Traces dashboard's API: every trace and retrace of
 * every traced function, with its reason, and the functions' counters.
 *
 *   GET /api/traces/functions?run=
 *       {"functions": [{function, calls, cache_hits, traces, trace_ms,
 *                       concrete, warnings, last_wall}]}
 *   GET /api/traces/runs
 *       {"runs": [run, ...]}: the runs with traces, in the store's order
 *       (the page opens on the first of them)
 *   GET /api/traces/list?run=&function=&after_id=&limit=
 *       {"traces": [{id, step, wall, function, is_retrace, reason, signature,
 *                    call_site, duration_us, nodes_before, nodes_after,
 *                    concrete_id, warning}]}
 *
 * Counters come from the engine's function events (function_stats, the
 * last report per function); a function known only from its traces (a
 * store written before counters existed) still lists with its traces.
 * warnings: how many of its traces raised the excessive-retracing warning.
 */
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"
#include "trace_rows.h"

#define MAX_LIMIT 5000

/* ---- /api/traces/list --------------------------------------------------------------- */

static void write_trace(gb__json *j, const gb_trace_row *t, const gb_trace_detail *d) {
    gb__json_obj(j);
    GB__JSON_KV(j, "id", int, t->id);
    gb__json_key(j, "step");
    if (t->step == GB_STEP_NONE) gb__json_null(j);
    else gb__json_int(j, t->step);
    GB__JSON_KV(j, "wall", time, t->wall_time);
    GB__JSON_KV(j, "function", str, t->function);
    GB__JSON_KV(j, "is_retrace", bool, t->is_retrace);
    GB__JSON_KV(j, "reason", str, t->reason);
    GB__JSON_KV(j, "signature", str, t->signature);
    GB__JSON_KV(j, "call_site", str, d->call_site);
    GB__JSON_KV(j, "duration_us", num, t->duration_us);
    GB__JSON_KV(j, "nodes_before", int, t->nodes_before);
    GB__JSON_KV(j, "nodes_after", int, t->nodes_after);
    gb__json_key(j, "concrete_id");
    if (d->concrete_id < 0) gb__json_null(j);
    else gb__json_int(j, d->concrete_id);
    GB__JSON_KV(j, "warning", bool, d->warning == GB_TRISTATE_YES);
    gb__json_obj_end(j);
}

static int traces_list(gb__request *req) {
    const char *run = gb__param_text(req, "run"), *function = gb__param_text(req, "function");
    gb_event_query q = {gb__param_int(req, "after_id"), (size_t)gb__param_int(req, "limit")};
    gb_traces *t = NULL;
    gb_store_status st = gb_store_traces(req->store, run, function, &q, &t);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    if (function && !t->count && !q.after_id) {
        gb_store_free(t);
        return gb__fail(req, 404, "run '%s' has no traced function '%s'", run, function);
    }
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    gb__json_key(j, "traces");
    gb__json_arr(j);
    for (size_t i = 0; i < t->count; i++) {
        gb_trace_detail d;
        gb_trace_detail_parse(t->rows[i].detail, &d); /* damaged: its fields unknown */
        write_trace(j, &t->rows[i], &d);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(t);
    return 200;
}

/* ---- /api/traces/functions ---------------------------------------------------------- */

static void write_function(gb__json *j, const gb__fn_summary *f) {
    gb__json_obj(j);
    GB__JSON_KV(j, "function", str, f->name);
    GB__JSON_KV(j, "calls", int, f->calls);
    GB__JSON_KV(j, "cache_hits", int, f->cache_hits);
    GB__JSON_KV(j, "traces", int, f->traces);
    GB__JSON_KV(j, "trace_ms", num, f->trace_ms);
    GB__JSON_KV(j, "concrete", int, f->concrete);
    GB__JSON_KV(j, "warnings", int, f->warnings);
    GB__JSON_KV(j, "last_wall", time, f->last_wall);
    gb__json_obj_end(j);
}

static int traces_functions(gb__request *req) {
    const char *run = gb__param_text(req, "run");
    gb__fn_summaries s;
    gb_store_status st = gb__fn_summaries_read(req->store, run, &s);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    gb__json_key(j, "functions");
    gb__json_arr(j);
    for (size_t i = 0; i < s.count; i++) write_function(j, &s.rows[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb__fn_summaries_free(&s);
    return 200;
}

/* ---- /api/traces/runs --------------------------------------------------------------- */

static int traces_runs(gb__request *req) { return gb__reply_runs_where(req, gb__run_has_traces); }

static const gb__route routes[] = {
    {"runs", traces_runs, {GB__P_END}},
    {"functions", traces_functions, {GB__P_RUN, GB__P_END}},
    {"list", traces_list,
     {GB__P_RUN,
      {"function", GB__PARAM_TEXT, false, 1, GB__MAX_TEXT_PARAM, 0},
      {"after_id", GB__PARAM_INT, false, 0, GB__P_INT64_MAX, 0},
      {"limit", GB__PARAM_INT, false, 1, MAX_LIMIT, 1000},
      GB__P_END}},
};

const gb__plugin gb__plugin_traces = {
    .name = "traces",
    .title = "Traces",
    .order = 70,
    .is_active = gb__any_traces,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
