/* store/trace_graph.c — the graph stored with one trace
 * (gb_store_trace_graph).
 *
 * Since schema 3 a trace's graphs sit in trace_graphs, apart from its row,
 * so a list of traces never reads them and this reads one graph and
 * nothing else. A store of an older schema opened read-only (it cannot be
 * migrated) still has them inside the detail: that detail is read and the
 * graph cut out of it (gb_trace_detail_parse).
 */
#include <stdio.h>
#include <string.h>

#include "store/internal.h"

#define V3_SQL                                                                                 \
    "SELECT t.id, g.graph, g.graph_traced FROM traces t LEFT JOIN trace_graphs g "            \
    "ON g.trace_id = t.id WHERE t.run_id = ?1 AND t.id = ?2"
#define V2_SQL "SELECT id, detail FROM traces WHERE run_id = ?1 AND id = ?2"

/* The graph of the current row of q into a result (json NULL: none). */
static gb_store_status take(gb_store *s, sqlite3_stmt *q, bool v3, bool traced,
                            gb_trace_graph **out) {
    gb__arena *a;
    gb_trace_graph *g = gb__result_new(sizeof *g, &a);
    if (!g) return gb__store_done(s, SQLITE_NOMEM, "reading a trace's graph");
    const char *text = NULL;
    size_t len = 0;
    gb_trace_detail d;
    if (v3) {
        int col = traced ? 2 : 1;
        const char *why = sqlite3_column_type(q, col) == SQLITE_NULL ? NULL : gb__text_damage(q, col);
        if (why) {
            gb_store_free(g);
            char where[64];
            snprintf(where, sizeof where, "trace %lld", (long long)sqlite3_column_int64(q, 0));
            return why == gb__out_of_memory ? gb__store_done(s, SQLITE_NOMEM, "reading a trace's graph")
                                            : gb__store_damaged(s, "trace_graphs", where, why);
        }
        text = (const char *)sqlite3_column_text(q, col);
        len = text ? (size_t)sqlite3_column_bytes(q, col) : 0;
    } else if (gb_trace_detail_parse((const char *)sqlite3_column_text(q, 1), &d)) {
        text = traced ? d.graph_traced : d.graph;
        len = traced ? d.graph_traced_len : d.graph_len;
    }
    if (text) {
        char *copy = gb__arena_alloc(a, len + 1);
        if (!copy) {
            gb_store_free(g);
            return gb__store_done(s, SQLITE_NOMEM, "reading a trace's graph");
        }
        memcpy(copy, text, len);
        g->json = copy;
        g->len = len;
    }
    *out = g;
    return GB_STORE_OK;
}

static gb_store_status trace_graph(gb_store *s, const char *run, int64_t id, bool traced,
                                   gb_trace_graph **out) {
    int64_t run_id;
    bool v3 = gb_store_schema_version(s) >= 3;
    gb__store_read_begin(s);
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    sqlite3_stmt *q = st == GB_STORE_OK ? gb__store_stmt(s, v3 ? V3_SQL : V2_SQL) : NULL;
    if (st == GB_STORE_OK && !q) st = GB_STORE_ERR_IO;
    if (q) {
        sqlite3_bind_int64(q, 1, run_id);
        sqlite3_bind_int64(q, 2, id);
        int rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            st = take(s, q, v3, traced, out);
        } else if (rc == SQLITE_DONE) {
            gb__store_fail("store '%s': run '%s' has no trace %lld", gb__store_path(s), run,
                           (long long)id);
            st = GB_STORE_ERR_NO_ROW;
        } else {
            st = gb__store_done(s, rc, "reading a trace's graph");
        }
        sqlite3_reset(q);
    }
    gb__store_read_end(s);
    return st;
}

gb_store_status gb_store_trace_graph(gb_store *s, const char *run, int64_t id, bool traced,
                                     gb_trace_graph **out) {
    if (!s || !out) return gb__store_null_args("gb_store_trace_graph");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_trace_graph, id, traced, out);
    GB__LOCKED(s, trace_graph(s, run, id, traced, out));
}
