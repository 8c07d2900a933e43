/* plugin_profile.c — the Profile dashboard's API: the profiler's captures.
 *
 *   GET /api/profile/runs
 *       {"runs": [run, ...]}: the runs with a capture
 *   GET /api/profile/list?run=
 *       {"profiles": [{id, wall, duration_us, rank, threads: [name...],
 *                      records, dropped, gemm_peak_flops}]}
 *   GET /api/profile/overview?run=&profile=
 *       {"steps": [{step, start_us, step_us, input_us, forward_us,
 *                   backward_us, optimizer_us, comm_us, other_us}],
 *        "bound", "bound_share", "sentence"}
 *   GET /api/profile/ops?run=&profile=&by=type|name
 *       {"self_us", "gemm_peak_flops", "ops": [{key, op_type, function,
 *        calls, total_us, self_us, share, mean_us, flops, flops_per_s}]}
 *   GET /api/profile/trace?run=&profile=&offset=&limit=
 *       a page of events, by column: {"total", "offset", "threads",
 *        "strings": [...], "events": {"start": [], "dur": [], "thread": [],
 *        "kind": [], "name": [], "op_type": [], "shapes": [], "step": [],
 *        "flops": [], "bytes": []}} — kind, name, op_type and shapes index
 *        "strings", so a page of 100,000 events stays a few megabytes
 *   GET /api/profile/memory?run=&profile=
 *       {"threads": [{thread, name, t: [], bytes: []}], "peak": {thread,
 *        t, bytes, step}, "at_peak": [{name, op_type, bytes, t}]}
 *
 * The analysis (self times, steps, what bounds them) is the store's
 * (profile_analysis.c); here it becomes JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"

#define MAX_PAGE 100000
#define TOP_AT_PEAK 10

#define P_PROFILE {"profile", GB__PARAM_INT, true, 1, GB__P_INT64_MAX, 0}

static bool run_has_profiles(gb_store *store, const char *run) {
    gb_profile_list *l = NULL;
    bool any = gb_store_profiles(store, run, &l) == GB_STORE_OK && l->count > 0;
    gb_store_free(l);
    return any;
}

static bool any_profiles(gb_store *store) {
    bool any = false;
    return gb_store_has_events(store, GB_EVENTS_PROFILES, &any) == GB_STORE_OK && any;
}

static int profile_runs(gb__request *req) { return gb__reply_runs_where(req, run_has_profiles); }

static void write_threads(gb__json *j, const gb_profile_info *p) {
    gb__json_key(j, "threads");
    gb__json_arr(j);
    for (int t = 0; t < p->nthreads; t++) gb__json_str(j, p->threads[t]);
    gb__json_arr_end(j);
}

static int profile_list(gb__request *req) {
    const char *run = gb__param_text(req, "run");
    gb_profile_list *l = NULL;
    gb_store_status st = gb_store_profiles(req->store, run, &l);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, run);
    gb__json_key(j, "profiles");
    gb__json_arr(j);
    for (size_t i = 0; i < l->count; i++) {
        const gb_profile_info *p = &l->rows[i];
        gb__json_obj(j);
        GB__JSON_KV(j, "id", int, p->id);
        GB__JSON_KV(j, "wall", time, p->wall_time);
        GB__JSON_KV(j, "duration_us", num, p->duration_us);
        GB__JSON_KV(j, "rank", int, p->rank);
        write_threads(j, p);
        GB__JSON_KV(j, "records", int, p->record_count);
        GB__JSON_KV(j, "dropped", int, p->dropped);
        GB__JSON_KV(j, "gemm_peak_flops", num, p->gemm_peak_flops);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(l);
    return 200;
}

/* The whole capture named by run and profile, or a reply already made. */
static gb_profile_events *whole_capture(gb__request *req, int *status) {
    gb_profile_events *ev = NULL;
    gb_store_status st = gb_store_profile_events(req->store, gb__param_text(req, "run"),
                                                 gb__param_int(req, "profile"), 0, 0, &ev);
    if (st != GB_STORE_OK) *status = gb__reply_store_error(req, st);
    return ev;
}

static int profile_overview(gb__request *req) {
    int status = 0;
    gb_profile_events *ev = whole_capture(req, &status);
    if (!ev) return status;
    gb_profile_steps *s = NULL;
    gb_store_status st = gb_profile_steps_of(ev, &s);
    gb_store_free(ev);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "steps");
    gb__json_arr(j);
    for (size_t i = 0; i < s->count; i++) {
        const gb_profile_step_row *r = &s->rows[i];
        gb__json_obj(j);
        GB__JSON_KV(j, "step", int, r->step);
        GB__JSON_KV(j, "start_us", num, r->start_us);
        GB__JSON_KV(j, "step_us", num, r->step_us);
        GB__JSON_KV(j, "input_us", num, r->input_us);
        GB__JSON_KV(j, "forward_us", num, r->forward_us);
        GB__JSON_KV(j, "backward_us", num, r->backward_us);
        GB__JSON_KV(j, "optimizer_us", num, r->optimizer_us);
        GB__JSON_KV(j, "comm_us", num, r->comm_us);
        GB__JSON_KV(j, "other_us", num, r->other_us);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    GB__JSON_KV(j, "bound", str, s->bound);
    GB__JSON_KV(j, "bound_share", num, s->bound_share);
    GB__JSON_KV(j, "sentence", str, s->sentence);
    gb__json_obj_end(j);
    gb_store_free(s);
    return 200;
}

static int profile_ops(gb__request *req) {
    const char *by = gb__param_present(req, "by") ? gb__param_text(req, "by") : "type";
    if (strcmp(by, "type") && strcmp(by, "name"))
        return gb__fail(req, 400, "by must be 'type' or 'name', not '%s'", by);
    int status = 0;
    gb_profile_events *ev = whole_capture(req, &status);
    if (!ev) return status;
    double peak = ev->info.gemm_peak_flops;
    gb_profile_ops *ops = NULL;
    gb_store_status st = gb_profile_ops_of(ev, !strcmp(by, "type"), &ops);
    gb_store_free(ev);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "by", str, by);
    GB__JSON_KV(j, "self_us", num, ops->self_us);
    GB__JSON_KV(j, "gemm_peak_flops", num, peak);
    gb__json_key(j, "ops");
    gb__json_arr(j);
    for (size_t i = 0; i < ops->count; i++) {
        const gb_profile_op_row *o = &ops->rows[i];
        gb__json_obj(j);
        GB__JSON_KV(j, "key", str, o->key);
        GB__JSON_KV(j, "op_type", str, o->op_type);
        GB__JSON_KV(j, "function", str, o->function);
        GB__JSON_KV(j, "calls", int, o->calls);
        GB__JSON_KV(j, "total_us", num, o->total_us);
        GB__JSON_KV(j, "self_us", num, o->self_us);
        GB__JSON_KV(j, "share", num, o->share);
        GB__JSON_KV(j, "mean_us", num, o->calls ? o->total_us / (double)o->calls : 0);
        GB__JSON_KV(j, "flops", num, o->flops);
        gb__json_key(j, "flops_per_s");
        if (o->flops > 0 && o->total_us > 0)
            gb__json_num(j, o->flops / (o->total_us * 1e-6));
        else
            gb__json_null(j);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(ops);
    return 200;
}

/* ---- /api/profile/trace ------------------------------------------------------------ */

/* Strings of a page, each once: a linear probe table of indices. */
typedef struct strtab {
    const char **s;
    size_t n, cap;
    int32_t *slot;
    size_t slots;
} strtab;

static uint32_t hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int32_t intern(strtab *t, const char *s) {
    size_t i = hash(s) & (t->slots - 1);
    for (; t->slot[i] >= 0; i = (i + 1) & (t->slots - 1))
        if (!strcmp(t->s[t->slot[i]], s)) return t->slot[i];
    t->s[t->n] = s;
    t->slot[i] = (int32_t)t->n;
    return (int32_t)t->n++;
}

static bool strtab_init(strtab *t, size_t most) {
    t->cap = most;
    t->slots = 16;
    while (t->slots < 2 * most) t->slots *= 2;
    t->s = malloc(most * sizeof *t->s);
    t->slot = malloc(t->slots * sizeof *t->slot);
    if (t->slot) memset(t->slot, 0xff, t->slots * sizeof *t->slot);
    return t->s && t->slot;
}

static void strtab_free(strtab *t) {
    free(t->s);
    free(t->slot);
}

typedef enum column { C_KIND, C_NAME, C_OP_TYPE, C_SHAPES, C_TEXT_COLUMNS } column;

static void write_text_column(gb__json *j, const char *key, const int32_t *ids, size_t n) {
    gb__json_key(j, key);
    gb__json_arr(j);
    for (size_t i = 0; i < n; i++) gb__json_int(j, ids[i]);
    gb__json_arr_end(j);
}

static void write_page(gb__json *j, const gb_profile_events *ev, const strtab *t,
                       int32_t *const ids[C_TEXT_COLUMNS]) {
    static const char *const text_keys[C_TEXT_COLUMNS] = {"kind", "name", "op_type", "shapes"};
    gb__json_key(j, "strings");
    gb__json_arr(j);
    for (size_t i = 0; i < t->n; i++) gb__json_str(j, t->s[i]);
    gb__json_arr_end(j);
    gb__json_key(j, "events");
    gb__json_obj(j);
#define NUM_COLUMN(key, expr)                                         \
    gb__json_key(j, key);                                             \
    gb__json_arr(j);                                                  \
    for (size_t i = 0; i < ev->count; i++) {                          \
        const gb_profile_event_row *e = &ev->rows[i];                 \
        expr;                                                         \
    }                                                                 \
    gb__json_arr_end(j)
    NUM_COLUMN("start", gb__json_num(j, e->start_us));
    NUM_COLUMN("dur", gb__json_num(j, e->dur_us));
    NUM_COLUMN("thread", gb__json_int(j, e->thread));
    NUM_COLUMN("step", e->step == GB_STEP_NONE ? gb__json_null(j) : gb__json_int(j, e->step));
    NUM_COLUMN("flops", gb__json_num(j, e->flops));
    NUM_COLUMN("bytes", gb__json_int(j, e->bytes));
    NUM_COLUMN("backward", gb__json_int(j, e->backward));
#undef NUM_COLUMN
    for (int c = 0; c < C_TEXT_COLUMNS; c++) write_text_column(j, text_keys[c], ids[c], ev->count);
    gb__json_obj_end(j);
}

static int profile_trace(gb__request *req) {
    size_t offset = (size_t)gb__param_int(req, "offset"), limit = (size_t)gb__param_int(req, "limit");
    gb_profile_events *ev = NULL;
    gb_store_status st = gb_store_profile_events(req->store, gb__param_text(req, "run"),
                                                 gb__param_int(req, "profile"), offset, limit, &ev);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    strtab t = {0};
    int32_t *ids[C_TEXT_COLUMNS] = {0};
    bool ok = strtab_init(&t, 4 * ev->count + 1);
    for (int c = 0; c < C_TEXT_COLUMNS; c++) ok = (ids[c] = malloc((ev->count + 1) * sizeof(int32_t))) && ok;
    for (size_t i = 0; ok && i < ev->count; i++) {
        const gb_profile_event_row *e = &ev->rows[i];
        ids[C_KIND][i] = intern(&t, e->kind);
        ids[C_NAME][i] = intern(&t, e->name);
        ids[C_OP_TYPE][i] = intern(&t, e->op_type);
        ids[C_SHAPES][i] = intern(&t, e->shapes);
    }
    int status = 200;
    if (ok) {
        gb__json *j = &req->json;
        gb__json_obj(j);
        GB__JSON_KV(j, "total", int, ev->info.record_count);
        GB__JSON_KV(j, "offset", int, (int64_t)offset);
        GB__JSON_KV(j, "duration_us", num, ev->info.duration_us);
        write_threads(j, &ev->info);
        write_page(j, ev, &t, ids);
        gb__json_obj_end(j);
    } else {
        status = gb__fail(req, 503, "out of memory for a page of %zu events", ev->count);
    }
    for (int c = 0; c < C_TEXT_COLUMNS; c++) free(ids[c]);
    strtab_free(&t);
    gb_store_free(ev);
    return status;
}

/* ---- /api/profile/memory ---------------------------------------------------------- */

/* The op event at the highest live bytes (first of equals), or -1. */
static long peak_event(const gb_profile_events *ev) {
    long best = -1;
    for (size_t i = 0; i < ev->count; i++)
        if (!strcmp(ev->rows[i].kind, "op") &&
            (best < 0 || ev->rows[i].live_bytes > ev->rows[best].live_bytes))
            best = (long)i;
    return best;
}

/* The largest allocations of the peak's thread in its step up to it. */
static void write_at_peak(gb__json *j, const gb_profile_events *ev, long peak) {
    const gb_profile_event_row *p = &ev->rows[peak];
    size_t top[TOP_AT_PEAK];
    int n = 0;
    for (long i = peak; i >= 0; i--) {
        const gb_profile_event_row *e = &ev->rows[i];
        if (e->thread != p->thread || e->step != p->step) break;
        if (strcmp(e->kind, "op") || e->bytes <= 0) continue;
        if (n < TOP_AT_PEAK)
            top[n++] = (size_t)i;
        else if (e->bytes > ev->rows[top[n - 1]].bytes)
            top[n - 1] = (size_t)i;
        else
            continue;
        for (int k = n - 1; k > 0 && ev->rows[top[k - 1]].bytes < ev->rows[top[k]].bytes; k--) {
            size_t swap = top[k];
            top[k] = top[k - 1], top[k - 1] = swap;
        }
    }
    gb__json_key(j, "at_peak");
    gb__json_arr(j);
    for (int k = 0; k < n; k++) {
        const gb_profile_event_row *e = &ev->rows[top[k]];
        gb__json_obj(j);
        GB__JSON_KV(j, "name", str, e->name);
        GB__JSON_KV(j, "op_type", str, e->op_type);
        GB__JSON_KV(j, "shapes", str, e->shapes);
        GB__JSON_KV(j, "bytes", int, e->bytes);
        GB__JSON_KV(j, "t", num, e->start_us);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
}

static void write_series(gb__json *j, const gb_profile_events *ev, int thread) {
    gb__json_obj(j);
    GB__JSON_KV(j, "thread", int, thread);
    GB__JSON_KV(j, "name", str, thread < ev->info.nthreads ? ev->info.threads[thread] : "");
    for (int col = 0; col < 2; col++) {
        gb__json_key(j, col ? "bytes" : "t");
        gb__json_arr(j);
        for (size_t i = 0; i < ev->count; i++) {
            const gb_profile_event_row *e = &ev->rows[i];
            if (e->thread != thread || strcmp(e->kind, "op")) continue;
            if (col) gb__json_int(j, e->live_bytes);
            else gb__json_num(j, e->start_us + e->dur_us);
        }
        gb__json_arr_end(j);
    }
    gb__json_obj_end(j);
}

static int profile_memory(gb__request *req) {
    int status = 0;
    gb_profile_events *ev = whole_capture(req, &status);
    if (!ev) return status;
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "threads");
    gb__json_arr(j);
    for (int t = 0; t < ev->info.nthreads; t++) write_series(j, ev, t);
    gb__json_arr_end(j);
    long peak = peak_event(ev);
    gb__json_key(j, "peak");
    if (peak < 0) {
        gb__json_null(j);
    } else {
        const gb_profile_event_row *p = &ev->rows[peak];
        gb__json_obj(j);
        GB__JSON_KV(j, "thread", int, p->thread);
        GB__JSON_KV(j, "t", num, p->start_us + p->dur_us);
        GB__JSON_KV(j, "bytes", int, p->live_bytes);
        gb__json_key(j, "step");
        if (p->step == GB_STEP_NONE) gb__json_null(j);
        else gb__json_int(j, p->step);
        gb__json_obj_end(j);
        write_at_peak(j, ev, peak);
    }
    gb__json_obj_end(j);
    gb_store_free(ev);
    return 200;
}

static const gb__route routes[] = {
    {"runs", profile_runs, {GB__P_END}},
    {"list", profile_list, {GB__P_RUN, GB__P_END}},
    {"overview", profile_overview, {GB__P_RUN, P_PROFILE, GB__P_END}},
    {"ops", profile_ops,
     {GB__P_RUN, P_PROFILE, {"by", GB__PARAM_TEXT, false, 1, 8, 0}, GB__P_END}},
    {"trace", profile_trace,
     {GB__P_RUN, P_PROFILE,
      {"offset", GB__PARAM_INT, false, 0, GB__P_INT64_MAX, 0},
      {"limit", GB__PARAM_INT, false, 1, MAX_PAGE, MAX_PAGE},
      GB__P_END}},
    {"memory", profile_memory, {GB__P_RUN, P_PROFILE, GB__P_END}},
};

const gb__plugin gb__plugin_profile = {
    .name = "profile",
    .title = "Profile",
    .order = 75,
    .is_active = any_profiles,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
