/* trace_rows.h — what the Traces and Graphs routes share: a run's traced
 * functions summed up from its traces and counters (trace_rows.c). */
#ifndef GB_WEBUI_TRACE_ROWS_H
#define GB_WEBUI_TRACE_ROWS_H

#include "board_internal.h"

typedef struct gb__fn_summary {
    const char *name;
    int64_t calls, cache_hits, traces, concrete, warnings;
    double trace_ms, last_wall;
} gb__fn_summary;

typedef struct gb__fn_summaries {
    gb__fn_summary *rows;        /* by name */
    size_t count;
    gb_traces *traces;           /* what the names point into */
    gb_function_stats_list *stats;
} gb__fn_summaries;

/* Every function of run: from its traces (count, warnings, time) and its
 * last reported counters. */
gb_store_status gb__fn_summaries_read(gb_store *store, const char *run, gb__fn_summaries *out);
void gb__fn_summaries_free(gb__fn_summaries *s);

/* Whether run has a trace (one row read). */
bool gb__run_has_traces(gb_store *store, const char *run);
/* Whether any run of the store has a trace (the two dashboards' tabs). */
bool gb__any_traces(gb_store *store);

#endif
