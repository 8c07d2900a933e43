/* writer/trace_export.c — tf.summary.trace_on / trace_export.
 *
 * TensorFlow's pair records the graph (and optionally the profile) of the
 * functions called between them and writes it as one summary. Here every
 * trace is already stored with its graphs when the writer is the default
 * one; trace_export adds a named, stepped copy of the last one traced
 * since trace_on, as TensorFlow users expect to find under a tag, and
 * trace_on(profile) keeps op timing on in between so the Graphs dashboard
 * can colour that graph by compute time, and runs the profiler
 * (gb_profiler.h), whose capture trace_export stores (the Profile page).
 */
#include <stdlib.h>
#include <string.h>

#include "gb_observer.h"
#include "gb_profiler.h"
#include "writer/internal.h"

gb_status gb_summary_trace_on(gb_summary_writer *w, bool profile) {
    if (!w) {
        gb__summary_fail("gb_summary_trace_on: writer is NULL");
        return GB_ERR_VALUE;
    }
    pthread_mutex_lock(&w->lock);
    free(w->traced_graph);
    w->traced_graph = NULL;
    w->tracing = true;
    w->profiling = profile;
    pthread_mutex_unlock(&w->lock);
    if (profile) {
        gb_set_op_timing(true);
        /* A capture the program runs already goes on: it is not ours to end. */
        bool start = !gb_profiler_active();
        gb_status st = start ? gb_profiler_start(NULL) : GB_OK;
        if (st != GB_OK) {
            gb__summary_fail("gb_summary_trace_on: %s", gb_error_string());
            return st;
        }
        pthread_mutex_lock(&w->lock);
        w->owns_capture = start;
        pthread_mutex_unlock(&w->lock);
    }
    return GB_OK;
}

void gb__writer_note_traced_graph(gb_summary_writer *w, const char *graph_json) {
    if (!graph_json) return;
    pthread_mutex_lock(&w->lock);
    if (w->tracing) {
        char *copy = strdup(graph_json);
        if (copy) {
            free(w->traced_graph);
            w->traced_graph = copy;
        }
    }
    pthread_mutex_unlock(&w->lock);
}

gb_status gb_summary_trace_export(gb_summary_writer *w, const char *name, int64_t step) {
    static const char what[] = "gb_summary_trace_export";
    if (!w || !name || !*name) {
        gb__summary_fail("%s: the writer or the name is NULL", what);
        return GB_ERR_VALUE;
    }
    pthread_mutex_lock(&w->lock);
    bool was_tracing = w->tracing, profiling = w->profiling, owns_capture = w->owns_capture;
    w->owns_capture = false;
    char *graph = w->traced_graph;
    w->traced_graph = NULL;
    w->tracing = w->profiling = false;
    pthread_mutex_unlock(&w->lock);
    if (profiling) {
        gb_set_op_timing(false);
        if (owns_capture && gb_profiler_active()) gb_profiler_stop();
    }
    if (!graph) {
        gb__summary_fail("%s '%s': %s", what, name,
                         was_tracing ? "no function was traced since gb_summary_trace_on (is "
                                       "this writer the default one?)"
                                     : "gb_summary_trace_on was not called");
        return GB_ERR_STATE;
    }
    gb_status st = gb_summary_graph(w, name, "json", graph, step);
    free(graph);
    return st;
}
