/* store/trace_detail.c — reads the JSON detail stored with a trace
 * (gb_trace_detail_parse).
 *
 * The writer (writer/trace_detail.c) stores what the traces table has no
 * column for:
 *   {"call_site":"train.c:42","concrete_id":3,"warning":false,
 *    "nodes_traced":47,"passes":[{"pass":"pruning","ran":true,"nodes":40,"ms":0.01},...],
 *    "arena_bytes":1072000,"naive_bytes":1950000,"inplace":1,
 *    "call_arena_bytes":2144000,"call_naive_bytes":3900000,"call_shapes":"float32[32,784]",
 *    "graph":{"nodes":[...],"outputs":[...]},"graph_traced":{...}}
 * Since schema 3 the store keeps the two graphs apart (trace_graphs) and
 * the detail says only has_graph / has_graph_traced; a detail of an older
 * store still holds them. Scalar fields come out typed. The passes and the two graphs are large
 * nested values a server hands on as they are: they come out as spans of
 * the detail's text, each checked to be one well-formed JSON value (a
 * damaged one rejects the whole detail), so a response that embeds them
 * stays valid JSON.
 */
#include <string.h>

#include "store/json_parse.h"

/* A nested value, checked and recorded as a span of the text. */
static bool span(gb__jp *ps, const char **start, size_t *len) {
    gb__jp_ws(ps);
    const char *s = ps->p;
    if (!gb__jp_skip_value(ps)) return false;
    *start = s;
    *len = (size_t)(ps->p - s);
    return true;
}

/* A true/false member (has_graph): set only when true, so a graph given
 * in the detail itself also counts. */
static bool flag(gb__jp *ps, bool *out) {
    gb_tristate t;
    if (!gb__jp_boolean(ps, &t)) return false;
    if (t == GB_TRISTATE_YES) *out = true;
    return true;
}

static bool member(gb__jp *ps, const char *key, void *ctx) {
    gb_trace_detail *d = ctx;
    if (!strcmp(key, "call_site")) return gb__jp_string_into(ps, d->call_site, sizeof d->call_site);
    if (!strcmp(key, "concrete_id")) return gb__jp_integer(ps, 0, INT64_MAX, &d->concrete_id);
    if (!strcmp(key, "warning")) return gb__jp_boolean(ps, &d->warning);
    if (!strcmp(key, "nodes_traced")) return gb__jp_integer(ps, 0, INT64_MAX, &d->nodes_traced);
    if (!strcmp(key, "arena_bytes")) return gb__jp_integer(ps, 0, INT64_MAX, &d->arena_bytes);
    if (!strcmp(key, "naive_bytes")) return gb__jp_integer(ps, 0, INT64_MAX, &d->naive_bytes);
    if (!strcmp(key, "inplace")) return gb__jp_integer(ps, 0, INT64_MAX, &d->inplace);
    if (!strcmp(key, "call_arena_bytes")) return gb__jp_integer(ps, 0, INT64_MAX, &d->call_arena_bytes);
    if (!strcmp(key, "call_naive_bytes")) return gb__jp_integer(ps, 0, INT64_MAX, &d->call_naive_bytes);
    if (!strcmp(key, "call_shapes")) return gb__jp_string_into(ps, d->call_shapes, sizeof d->call_shapes);
    if (!strcmp(key, "passes")) return span(ps, &d->passes, &d->passes_len);
    if (!strcmp(key, "graph"))
        return (d->has_graph = span(ps, &d->graph, &d->graph_len));
    if (!strcmp(key, "graph_traced"))
        return (d->has_graph_traced = span(ps, &d->graph_traced, &d->graph_traced_len));
    if (!strcmp(key, "has_graph")) return flag(ps, &d->has_graph);
    if (!strcmp(key, "has_graph_traced")) return flag(ps, &d->has_graph_traced);
    return gb__jp_skip_value(ps);
}

static void unknown(gb_trace_detail *d) {
    memset(d, 0, sizeof *d);
    d->concrete_id = d->nodes_traced = d->arena_bytes = d->naive_bytes = d->inplace = -1;
    d->call_arena_bytes = d->call_naive_bytes = -1;
    d->warning = GB_TRISTATE_UNKNOWN;
}

bool gb_trace_detail_parse(const char *json, gb_trace_detail *out) {
    unknown(out);
    if (!json || !*json) return true;
    gb__jp ps = {json, 0};
    bool ok = gb__jp_object(&ps, member, out);
    gb__jp_ws(&ps);
    if (ok && !*ps.p) return true;
    unknown(out);
    return false;
}

bool gb_json_is_value(const char *text) {
    if (!text) return false;
    gb__jp ps = {text, 0};
    if (!gb__jp_skip_value(&ps)) return false;
    gb__jp_ws(&ps);
    return !*ps.p;
}
