/* cli/export_profile.c — `glassbox export --profile`: a profiler capture
 * as Chrome trace-event JSON, the format Perfetto and chrome://tracing
 * open.
 *
 * One process per MPI rank (pid = the rank), one thread per recorded
 * thread (tid = its index), named by metadata events; every range as a
 * complete event ("X": ts and dur in microseconds since the capture
 * began), step marks as instant events ("i"), and each thread's live
 * bytes after its ops as a counter ("C"). Events are written as they are
 * read, each one a JSON object built by the dashboard's JSON writer, so
 * names are escaped as the dashboard escapes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gb_json.h"

/* Writes j's text, the element separator before it unless first. */
static bool emit(gb__json *j, bool *first) {
    size_t len;
    char *text = gb__json_finish(j, &len);   /* ours now, or NULL (freed) */
    if (!text) return false;
    printf("%s\n%s", *first ? "" : ",", text);
    *first = false;
    free(text);
    return true;
}

static bool metadata(int pid, int tid, const char *what, const char *name, bool *first) {
    gb__json j;
    gb__json_init(&j, 4096);
    gb__json_obj(&j);
    gb__json_key(&j, "ph"), gb__json_str(&j, "M");
    gb__json_key(&j, "name"), gb__json_str(&j, what);
    gb__json_key(&j, "pid"), gb__json_int(&j, pid);
    gb__json_key(&j, "tid"), gb__json_int(&j, tid);
    gb__json_key(&j, "args"), gb__json_obj(&j);
    gb__json_key(&j, "name"), gb__json_str(&j, name);
    gb__json_obj_end(&j);
    gb__json_obj_end(&j);
    return emit(&j, first);
}

static void head(gb__json *j, const char *ph, const char *name, const char *cat, double ts,
                 int pid, int tid) {
    gb__json_init(j, 8192);
    gb__json_obj(j);
    gb__json_key(j, "ph"), gb__json_str(j, ph);
    gb__json_key(j, "name"), gb__json_str(j, name);
    gb__json_key(j, "cat"), gb__json_str(j, cat);
    gb__json_key(j, "ts"), gb__json_num(j, ts);
    gb__json_key(j, "pid"), gb__json_int(j, pid);
    gb__json_key(j, "tid"), gb__json_int(j, tid);
}

static bool range(const gb_profile_event_row *e, int pid, bool *first) {
    gb__json j;
    head(&j, "X", e->name, e->kind, e->start_us, pid, e->thread);
    gb__json_key(&j, "dur"), gb__json_num(&j, e->dur_us);
    gb__json_key(&j, "args"), gb__json_obj(&j);
    if (e->step != GB_STEP_NONE) gb__json_key(&j, "step"), gb__json_int(&j, e->step);
    if (*e->op_type) gb__json_key(&j, "op_type"), gb__json_str(&j, e->op_type);
    if (*e->function) gb__json_key(&j, "function"), gb__json_str(&j, e->function);
    if (*e->shapes) gb__json_key(&j, "input_shapes"), gb__json_str(&j, e->shapes);
    if (e->backward) gb__json_key(&j, "backward"), gb__json_bool(&j, true);
    if (e->flops > 0) gb__json_key(&j, "flops"), gb__json_num(&j, e->flops);
    if (e->bytes > 0) gb__json_key(&j, "bytes"), gb__json_int(&j, e->bytes);
    gb__json_obj_end(&j);
    gb__json_obj_end(&j);
    return emit(&j, first);
}

static bool instant(const gb_profile_event_row *e, int pid, bool *first) {
    gb__json j;
    head(&j, "i", e->name, e->kind, e->start_us, pid, e->thread);
    gb__json_key(&j, "s"), gb__json_str(&j, "t");
    gb__json_obj_end(&j);
    return emit(&j, first);
}

static bool counter(const gb_profile_event_row *e, int pid, const char *thread, bool *first) {
    char name[300];
    snprintf(name, sizeof name, "live bytes: %s", thread);
    gb__json j;
    head(&j, "C", name, "memory", e->start_us + e->dur_us, pid, e->thread);
    gb__json_key(&j, "args"), gb__json_obj(&j);
    gb__json_key(&j, "bytes"), gb__json_int(&j, e->live_bytes);
    gb__json_obj_end(&j);
    gb__json_obj_end(&j);
    return emit(&j, first);
}

static bool write_trace(const gb_profile_events *ev) {
    int pid = ev->info.rank;
    bool first = true, ok = true;
    char rank[32];
    snprintf(rank, sizeof rank, "rank %d", pid);
    printf("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
    ok = metadata(pid, 0, "process_name", rank, &first);
    for (int t = 0; ok && t < ev->info.nthreads; t++)
        ok = metadata(pid, t, "thread_name", ev->info.threads[t], &first);
    for (size_t i = 0; ok && i < ev->count; i++) {
        const gb_profile_event_row *e = &ev->rows[i];
        const char *thread = e->thread >= 0 && e->thread < ev->info.nthreads
                                 ? ev->info.threads[e->thread] : "?";
        if (!strcmp(e->kind, "step")) {
            ok = instant(e, pid, &first);
            continue;
        }
        ok = range(e, pid, &first);
        if (ok && !strcmp(e->kind, "op")) ok = counter(e, pid, thread, &first);
    }
    printf("\n]}\n");
    fflush(stdout);
    return ok;
}

int gb__cli_export_profile(const gb__cli_command *cmd, gb_store *s, const char *run,
                           const char *id_text, const char *format) {
    if (strcmp(format, "chrome-trace"))
        return gb__cli_usage_error(cmd, "unknown format '%s' for --profile (use chrome-trace)",
                                   format);
    gb_profile_list *list;
    if (gb_store_profiles(s, run, &list) != GB_STORE_OK) return gb__cli_store_failed(cmd);
    int64_t id = list->count ? list->rows[list->count - 1].id : 0;
    size_t count = list->count;
    gb_store_free(list);
    if (id_text) {
        char *end;
        long long v = strtoll(id_text, &end, 10);
        if (!*id_text || *end || v < 1)
            return gb__cli_usage_error(cmd, "--id must be a profile id (a whole number >= 1), got '%s'",
                                       id_text);
        id = v;
    } else if (!count) {
        fprintf(stderr, "glassbox export: run '%s' has no profile (gb_profiler_start or "
                        "gb_summary_trace_on(w, true) records one)\n", run);
        return 1;
    }
    gb_profile_events *ev;
    if (gb_store_profile_events(s, run, id, 0, 0, &ev) != GB_STORE_OK) return gb__cli_store_failed(cmd);
    bool ok = write_trace(ev);
    gb_store_free(ev);
    if (!ok) {
        fprintf(stderr, "glassbox export: out of memory writing the trace\n");
        return 1;
    }
    return 0;
}
