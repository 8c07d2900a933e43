/* writer/trace_detail.c — a trace event as the JSON detail the store
 * keeps with it (format in writer/internal.h).
 *
 * The traces table has columns for what every trace has (function,
 * reason, signature, cost, node counts); this carries the rest: where the
 * call came from, what each graph pass did, what the memory plan saved,
 * and the graph before and after the passes, for the Graphs and Traces
 * dashboards.
 */
#include <stdlib.h>

#include "writer/internal.h"

static void put_passes(gb__jtext *j, const gb_graph_stats *st) {
    gb__jtext_put(j, ",\"nodes_traced\":%d,\"passes\":[", st->nodes_traced);
    for (int i = 0; i < st->npasses; i++) {
        const gb_pass_stats *p = &st->passes[i];
        gb__jtext_put(j, "%s{\"pass\":", i ? "," : "");
        gb__jtext_string(j, p->pass);
        gb__jtext_put(j, ",\"ran\":%s,\"nodes\":%d,\"ms\":", p->ran ? "true" : "false", p->nodes);
        gb__jtext_number(j, p->ms);
        gb__jtext_put(j, "}");
    }
    gb__jtext_put(j, "],\"arena_bytes\":%zu,\"naive_bytes\":%zu,\"inplace\":%d", st->arena_bytes,
                 st->naive_bytes, st->inplace);
    gb__jtext_put(j, ",\"call_arena_bytes\":%zu,\"call_naive_bytes\":%zu,\"call_shapes\":",
                 st->call_arena_bytes, st->call_naive_bytes);
    gb__jtext_string(j, st->call_shapes);
}

char *gb__trace_detail_json(const gb_trace_event *t, const char *call_site) {
    gb__jtext j = {.grows = true};
    gb__jtext_put(&j, "{\"call_site\":");
    gb__jtext_string(&j, call_site);
    gb__jtext_put(&j, ",\"concrete_id\":%lld,\"warning\":%s", (long long)t->concrete_id,
                 t->warning ? "true" : "false");
    if (t->stats) put_passes(&j, t->stats);
    /* The graphs are JSON objects already (the graph layer's): copied in. */
    if (t->graph_json) gb__jtext_put(&j, ",\"graph\":%s", t->graph_json);
    if (t->graph_traced_json) gb__jtext_put(&j, ",\"graph_traced\":%s", t->graph_traced_json);
    gb__jtext_put(&j, "}");
    if (j.failed) {
        free(j.buf);
        return NULL;
    }
    return j.buf;
}
