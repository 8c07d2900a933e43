/* trace_rows.c — a run's traced functions, summed up for the Traces and
 * Graphs routes.
 *
 * The store has each trace (with its reason and detail) and each
 * function's last reported counters; a dashboard wants one row per
 * function. Counters win where they exist (they count calls, which traces
 * cannot); traces give the rest, so a store written before counters
 * existed, or a run that crashed before its first report, still lists.
 */
#include <stdlib.h>
#include <string.h>

#include "trace_rows.h"

static gb__fn_summary *find_or_add(gb__fn_summaries *s, const char *name, size_t cap) {
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->rows[i].name, name)) return &s->rows[i];
    if (s->count == cap) return NULL;
    gb__fn_summary *f = &s->rows[s->count++];
    *f = (gb__fn_summary){.name = name};
    return f;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const gb__fn_summary *)a)->name, ((const gb__fn_summary *)b)->name);
}

static void add_traces(gb__fn_summaries *s, size_t cap) {
    for (size_t i = 0; i < s->traces->count; i++) {
        const gb_trace_row *t = &s->traces->rows[i];
        gb__fn_summary *f = find_or_add(s, t->function, cap);
        gb_trace_detail d;
        gb_trace_detail_parse(t->detail, &d);
        f->traces++;
        f->warnings += d.warning == GB_TRISTATE_YES;
        if (t->duration_us == t->duration_us) f->trace_ms += t->duration_us / 1000.0;
        if (t->wall_time > f->last_wall) f->last_wall = t->wall_time;
    }
}

static void add_counters(gb__fn_summaries *s, size_t cap) {
    for (size_t i = 0; i < s->stats->count; i++) {
        const gb_function_stats_row *r = &s->stats->rows[i];
        gb__fn_summary *f = find_or_add(s, r->function, cap);
        f->calls = r->calls;
        f->cache_hits = r->cache_hits;
        f->concrete = r->concrete;
        if (r->traces > f->traces) f->traces = r->traces;
        if (r->trace_ms > 0) f->trace_ms = r->trace_ms;
        if (r->wall_time > f->last_wall) f->last_wall = r->wall_time;
    }
}

gb_store_status gb__fn_summaries_read(gb_store *store, const char *run, gb__fn_summaries *out) {
    *out = (gb__fn_summaries){0};
    gb_store_status st = gb_store_traces(store, run, NULL, NULL, &out->traces);
    if (st == GB_STORE_OK) st = gb_store_function_stats(store, run, &out->stats);
    size_t cap = st == GB_STORE_OK ? out->traces->count + out->stats->count : 0;
    if (st == GB_STORE_OK && !(out->rows = malloc((cap ? cap : 1) * sizeof *out->rows)))
        st = GB_STORE_ERR_MEMORY;
    if (st != GB_STORE_OK) {
        gb__fn_summaries_free(out);
        return st;
    }
    add_traces(out, cap);
    add_counters(out, cap);
    qsort(out->rows, out->count, sizeof *out->rows, by_name);
    return GB_STORE_OK;
}

void gb__fn_summaries_free(gb__fn_summaries *s) {
    free(s->rows);
    gb_store_free(s->traces);
    gb_store_free(s->stats);
    *s = (gb__fn_summaries){0};
}

bool gb__run_has_traces(gb_store *store, const char *run) {
    gb_traces *t = NULL;
    bool any = gb_store_traces(store, run, NULL, &(gb_event_query){0, 1}, &t) == GB_STORE_OK &&
               t->count > 0;
    gb_store_free(t);
    return any;
}

bool gb__any_traces(gb_store *store) {
    bool any = false;
    return gb_store_has_events(store, GB_EVENTS_TRACES, &any) == GB_STORE_OK && any;
}
