/* plugin_graphs.c — the Graphs dashboard's API: every traced concrete
 * function's graph, before and after the graph passes, with per-node
 * compute time; and graphs written with gb_summary_graph.
 *
 *   GET /api/graphs/list?run=
 *       {"functions": [{function, calls, concretes: [{trace_id, concrete_id,
 *         signature, wall, nodes_before, nodes_after}]}],
 *        "exported": [{tag, steps: [step]}]}
 *   GET /api/graphs/graph?run=&trace=&stage=optimized|traced
 *   GET /api/graphs/graph?run=&tag=&step=
 *       {run, function, signature, stage, trace_id, graph: {nodes, outputs},
 *        passes, arena_bytes, naive_bytes, call_arena_bytes, call_naive_bytes,
 *        call_shapes, profile: {node: {calls, total_us}}, profile_total_us}
 *
 * A concrete function is listed by its newest trace (a retrace of the same
 * signature replaces an evicted one). The list reads the traces' small
 * fields only, never a graph (the store keeps those apart), so it costs
 * the same whatever the graphs' size. The graph is the JSON the engine
 * wrote with the trace, checked here (well-formed, UTF-8) before it is
 * handed on; a trace stored without one (an older writer) is a 404 that
 * says so. The profile is the op timings by node name of the trace's
 * function (of the run, for an exported graph or a store before schema
 * 3): empty unless op timing was on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"
#include "trace_rows.h"

/* ---- /api/graphs/list --------------------------------------------------------------- */

/* Each trace's detail, parsed once; newest[i]: trace i is the newest of
 * its concrete function (a retrace of the same signature replaces an
 * evicted one), found by one pass from the newest trace back. */
typedef struct trace_info {
    gb_trace_detail *detail;
    bool *newest;
} trace_info;

static bool trace_info_read(const gb_traces *t, trace_info *out) {
    size_t n = t->count ? t->count : 1;
    out->detail = malloc(n * sizeof *out->detail);
    out->newest = calloc(n, sizeof *out->newest);
    if (!out->detail || !out->newest) return false;
    for (size_t i = 0; i < t->count; i++) gb_trace_detail_parse(t->rows[i].detail, &out->detail[i]);
    for (size_t i = t->count; i-- > 0;) {
        const gb_trace_detail *d = &out->detail[i];
        bool newest = true;
        /* A later trace of the same concrete function: few per function. */
        for (size_t k = i + 1; k < t->count && newest && d->concrete_id >= 0; k++)
            newest = !(out->newest[k] && out->detail[k].concrete_id == d->concrete_id &&
                       !strcmp(t->rows[k].function, t->rows[i].function));
        out->newest[i] = newest;
    }
    return true;
}

static void trace_info_free(trace_info *ti) {
    free(ti->detail);
    free(ti->newest);
}

static void write_concretes(gb__json *j, const gb_traces *t, const trace_info *ti,
                            const char *function) {
    gb__json_arr(j);
    for (size_t i = 0; i < t->count; i++) {
        const gb_trace_row *r = &t->rows[i];
        const gb_trace_detail *d = &ti->detail[i];
        if (!ti->newest[i] || strcmp(r->function, function)) continue;
        gb__json_obj(j);
        GB__JSON_KV(j, "trace_id", int, r->id);
        gb__json_key(j, "concrete_id");
        if (d->concrete_id < 0) gb__json_null(j);
        else gb__json_int(j, d->concrete_id);
        GB__JSON_KV(j, "signature", str, r->signature);
        GB__JSON_KV(j, "wall", time, r->wall_time);
        GB__JSON_KV(j, "nodes_before", int, r->nodes_before);
        GB__JSON_KV(j, "nodes_after", int, r->nodes_after);
        GB__JSON_KV(j, "has_graph", bool, d->has_graph);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
}

static gb_store_status write_exported(gb__request *req, const char *run) {
    gb_tags *tags = NULL;
    gb_store_status st = gb_store_tags(req->store, run, GB_KIND_GRAPH, &tags);
    if (st != GB_STORE_OK) return st;
    gb__json *j = &req->json;
    gb__json_arr(j);
    for (size_t i = 0; i < tags->count && st == GB_STORE_OK; i++) {
        gb_graphs *g = NULL;
        st = gb_store_graphs(req->store, run, tags->rows[i].tag, NULL, &g);
        if (st != GB_STORE_OK) break;
        gb__json_obj(j);
        GB__JSON_KV(j, "tag", str, tags->rows[i].tag);
        gb__json_key(j, "steps");
        gb__json_arr(j);
        for (size_t k = 0; k < g->count; k++) gb__json_int(j, g->rows[k].step);
        gb__json_arr_end(j);
        gb__json_obj_end(j);
        gb_store_free(g);
    }
    gb__json_arr_end(j);
    gb_store_free(tags);
    return st;
}

static int graphs_list(gb__request *req) {
    const char *run = gb__param_text(req, "run");
    gb__fn_summaries s;
    gb_store_status st = gb__fn_summaries_read(req->store, run, &s);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    trace_info ti;
    if (!trace_info_read(s.traces, &ti)) {
        trace_info_free(&ti);
        gb__fn_summaries_free(&s);
        return gb__reply_store_error(req, GB_STORE_ERR_MEMORY);
    }
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    gb__json_key(j, "functions");
    gb__json_arr(j);
    for (size_t i = 0; i < s.count; i++) {
        gb__json_obj(j);
        GB__JSON_KV(j, "function", str, s.rows[i].name);
        GB__JSON_KV(j, "calls", int, s.rows[i].calls);
        gb__json_key(j, "concretes");
        write_concretes(j, s.traces, &ti, s.rows[i].name);
        gb__json_obj_end(j);
    }
    trace_info_free(&ti);
    gb__json_arr_end(j);
    gb__json_key(j, "exported");
    st = write_exported(req, run);
    gb__json_obj_end(j);
    gb__fn_summaries_free(&s);
    return st == GB_STORE_OK ? 200 : gb__reply_store_error(req, st);
}

/* ---- /api/graphs/graph ---------------------------------------------------------------- */

static void write_profile(gb__json *j, const gb_op_timings *o) {
    double total = 0;
    gb__json_key(j, "profile");
    gb__json_obj(j);
    for (size_t i = 0; o && i < o->count; i++) {
        gb__json_key(j, o->rows[i].op_name);
        gb__json_obj(j);
        GB__JSON_KV(j, "calls", int, o->rows[i].calls);
        GB__JSON_KV(j, "total_us", num, o->rows[i].total_us);
        gb__json_obj_end(j);
        total += o->rows[i].total_us;
    }
    gb__json_obj_end(j);
    GB__JSON_KV(j, "profile_total_us", num, total);
}

/* The graph part of a response: the graph itself, then the profile — the
 * op timings of function's graph (NULL: of the whole run, for an exported
 * graph), so another graph or eager code naming its ops alike (a test
 * step, evaluation) does not count as this graph's steps. */
static int write_graph(gb__request *req, const char *graph, size_t len, const char *what,
                       const char *function) {
    gb__json *j = &req->json;
    gb__json_key(j, "graph");
    if (!gb__json_raw(j, graph, len))
        return gb__fail(req, 500, "the stored graph of %s is damaged (not UTF-8)", what);
    gb_op_timings *o = NULL;
    const char *run = gb__param_text(req, "run");
    gb_store_status st = function ? gb_store_function_op_timings(req->store, run, function, &o)
                                  : gb_store_op_timings(req->store, run, &o);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    write_profile(j, o);
    gb_store_free(o);
    return 200;
}

/* The trace with this id in run, or a 404. */
static int find_trace(gb__request *req, int64_t id, gb_traces **out) {
    const char *run = gb__param_text(req, "run");
    gb_store_status st = gb_store_traces(req->store, run, NULL, &(gb_event_query){id - 1, 1}, out);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    if ((*out)->count == 1 && (*out)->rows[0].id == id) return 200;
    gb_store_free(*out);
    *out = NULL;
    return gb__fail(req, 404, "run '%s' has no trace %lld", run, (long long)id);
}

static int trace_graph(gb__request *req) {
    int64_t id = gb__param_int(req, "trace");
    const char *stage = gb__param_present(req, "stage") ? gb__param_text(req, "stage") : "optimized";
    bool traced = !strcmp(stage, "traced");
    if (!traced && strcmp(stage, "optimized"))
        return gb__fail(req, 400, "stage must be 'optimized' or 'traced', not '%s'", stage);
    gb_traces *t;
    int status = find_trace(req, id, &t);
    if (status != 200) return status;
    const gb_trace_row *r = &t->rows[0];
    gb_trace_detail d;
    gb_trace_detail_parse(r->detail, &d);
    gb_trace_graph *g = NULL;
    gb_store_status st = gb_store_trace_graph(req->store, gb__param_text(req, "run"), id, traced, &g);
    if (st != GB_STORE_OK) {
        gb_store_free(t);
        return gb__reply_store_error(req, st);
    }
    if (!g->json || !gb_json_is_value(g->json)) {
        status = g->json ? gb__fail(req, 500, "the stored %s graph of trace %lld is damaged "
                                              "(not JSON)", stage, (long long)id)
                         : gb__fail(req, 404, "trace %lld of '%s' has no %s graph stored",
                                    (long long)id, r->function, stage);
        gb_store_free(g);
        gb_store_free(t); /* after the message: r points into it */
        return status;
    }
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "function", str, r->function);
    GB__JSON_KV(j, "signature", str, r->signature);
    GB__JSON_KV(j, "stage", str, stage);
    GB__JSON_KV(j, "trace_id", int, r->id);
    gb__json_key(j, "passes");
    if (!d.passes || !gb__json_raw(j, d.passes, d.passes_len)) {
        gb__json_arr(j);
        gb__json_arr_end(j);
    }
    GB__JSON_KV(j, "arena_bytes", int, d.arena_bytes);
    GB__JSON_KV(j, "naive_bytes", int, d.naive_bytes);
    GB__JSON_KV(j, "call_arena_bytes", int, d.call_arena_bytes);
    GB__JSON_KV(j, "call_naive_bytes", int, d.call_naive_bytes);
    GB__JSON_KV(j, "call_shapes", str, d.call_shapes);
    char what[64];
    snprintf(what, sizeof what, "trace %lld", (long long)id);
    status = write_graph(req, g->json, g->len, what, r->function);
    gb__json_obj_end(j);
    gb_store_free(g);
    gb_store_free(t);
    return status;
}

static int exported_graph(gb__request *req) {
    const char *tag = gb__param_text(req, "tag");
    int64_t step = gb__param_int(req, "step");
    gb_graphs *g = NULL;
    gb_store_status st = gb_store_graphs(req->store, gb__param_text(req, "run"), tag,
                                         &(gb_query){step, step, 1}, &g);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    int status = 200;
    if (!g->count) status = gb__fail(req, 404, "graph '%s' has no step %lld", tag, (long long)step);
    else if (strcmp(g->rows[0].format, "json") || !gb_json_is_value(g->rows[0].content))
        status = gb__fail(req, 415, "graph '%s' at step %lld is stored as %s, not JSON", tag,
                          (long long)step, g->rows[0].format);
    if (status == 200) {
        gb__json *j = &req->json;
        gb__json_obj(j);
        GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
        GB__JSON_KV(j, "tag", str, tag);
        GB__JSON_KV(j, "step", int, step);
        GB__JSON_KV(j, "stage", str, "exported");
        status = write_graph(req, g->rows[0].content, strlen(g->rows[0].content), tag, NULL);
        gb__json_obj_end(j);
    }
    gb_store_free(g);
    return status;
}

static int graphs_graph(gb__request *req) {
    bool by_trace = gb__param_present(req, "trace"), by_tag = gb__param_present(req, "tag");
    if (by_trace == by_tag)
        return gb__fail(req, 400, "give either trace (a trace id) or tag and step");
    if (by_tag && !gb__param_present(req, "step"))
        return gb__fail(req, 400, "an exported graph needs its step");
    if (by_tag && gb__param_present(req, "stage"))
        return gb__fail(req, 400, "an exported graph has one stage");
    return by_trace ? trace_graph(req) : exported_graph(req);
}

static const gb__route routes[] = {
    {"list", graphs_list, {GB__P_RUN, GB__P_END}},
    {"graph", graphs_graph,
     {GB__P_RUN,
      {"trace", GB__PARAM_INT, false, 1, GB__P_INT64_MAX, 0},
      {"stage", GB__PARAM_TEXT, false, 1, 16, 0},
      {"tag", GB__PARAM_TEXT, false, 1, GB__MAX_TEXT_PARAM, 0},
      {"step", GB__PARAM_INT, false, GB__P_INT64_MIN, GB__P_INT64_MAX, 0},
      GB__P_END}},
};

/* Active once any run has a traced function or a graph summary: one
 * query over every run's tags, not one per run (a sweep of a thousand
 * runs must not slow every page's first request). */
static bool any_graph_tags(gb_store *store) { return gb__has_kind(store, GB_KIND_GRAPH); }

static bool is_active(gb_store *store) { return gb__any_traces(store) || any_graph_tags(store); }

const gb__plugin gb__plugin_graphs = {
    .name = "graphs",
    .title = "Graphs",
    .order = 60,
    .is_active = is_active,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
