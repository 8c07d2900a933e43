/* store/profile.c — reading the profiler's captures (schema 5).
 *
 * A run's captures (profiles) and one capture's events (profile_events),
 * as result objects freed with gb_store_free. A store before schema 5
 * has no captures: the list is empty, and asking for one is NO_ROW. The
 * analysis of a capture (ops table, steps) is profile_analysis.c's.
 */
#include <stdio.h>
#include <string.h>

#include "store/json_parse.h"

static const char *const LIST_SQL =
    "SELECT id, wall_time, duration_us, rank, threads, record_count, dropped, gemm_peak "
    "FROM profiles WHERE run_id = ?1 ORDER BY id";
static const char *const ONE_SQL =
    "SELECT id, wall_time, duration_us, rank, threads, record_count, dropped, gemm_peak "
    "FROM profiles WHERE run_id = ?1 AND id = ?2";
static const char *const EVENTS_SQL =
    "SELECT start_us, dur_us, step, thread, backward, kind, name, op_type, function, shapes, "
    "flops, bytes, live_bytes FROM profile_events WHERE profile_id = ?1 "
    "ORDER BY id LIMIT ?3 OFFSET ?2";   /* inserted by thread, then start */

typedef struct names {
    gb__arena *a;
    const char **v;
    int n, cap;
} names;

static bool thread_name(gb__jp *ps, size_t i, void *ctx) {
    (void)i;
    names *t = ctx;
    char buf[256];
    if (!gb__jp_string_into(ps, buf, sizeof buf)) return false;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        const char **v = gb__arena_alloc(t->a, (size_t)cap * sizeof *v);
        if (!v) return false;
        if (t->n) memcpy(v, t->v, (size_t)t->n * sizeof *v);
        t->v = v, t->cap = cap;
    }
    return (t->v[t->n++] = gb__arena_strdup(t->a, buf)) != NULL;
}

/* The names of threads_json (a damaged list reads as no names). */
static void parse_threads(gb__arena *a, gb_profile_info *p) {
    names t = {.a = a};
    gb__jp ps = {.p = p->threads_json};
    if (gb__jp_array(&ps, thread_name, &t)) {
        p->threads = t.v;
        p->nthreads = t.n;
    }
}

static bool fill_info(sqlite3_stmt *st, gb__arena *a, gb_profile_info *p) {
    p->id = sqlite3_column_int64(st, 0);
    p->wall_time = sqlite3_column_double(st, 1);
    p->duration_us = sqlite3_column_double(st, 2);
    p->rank = sqlite3_column_int(st, 3);
    p->threads_json = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 4));
    p->record_count = sqlite3_column_int64(st, 5);
    p->dropped = sqlite3_column_int64(st, 6);
    p->gemm_peak_flops = sqlite3_column_double(st, 7);
    if (p->threads_json) parse_threads(a, p);
    return p->threads_json != NULL;
}

static gb_store_status list_locked(gb_store *s, const char *run, gb__arena *a,
                                   gb_profile_list *res) {
    int64_t run_id;
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    if (st != GB_STORE_OK || gb_store_schema_version(s) < 5) return st;
    sqlite3_stmt *q = gb__store_stmt(s, LIST_SQL);
    if (!q) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(q, 1, run_id);
    gb__rows rows = {.elem = sizeof(gb_profile_info)};
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gb_profile_info *p = gb__rows_push(&rows);
        if (!p || !fill_info(q, a, p)) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_reset(q);
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    if (rows.count && !res->rows) rc = SQLITE_NOMEM;
    gb__rows_release(&rows);
    return gb__store_done(s, rc, "reading profiles");
}

gb_store_status gb_store_profiles(gb_store *s, const char *run, gb_profile_list **out) {
    if (!s || !out) return gb__store_null_args("gb_store_profiles");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_profiles, out);
    gb__arena *a;
    gb_profile_list *res = gb__result_new(sizeof *res, &a);
    if (!res) return gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    gb__store_lock(s);
    gb__store_read_begin(s);
    gb_store_status st = list_locked(s, run, a, res);
    gb__store_read_end(s);
    gb__store_unlock(s);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}

static gb_store_status find_profile(gb_store *s, const char *run, int64_t profile, gb__arena *a,
                                    gb_profile_info *info) {
    int64_t run_id;
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    if (st != GB_STORE_OK) return st;
    sqlite3_stmt *q = gb_store_schema_version(s) >= 5 ? gb__store_stmt(s, ONE_SQL) : NULL;
    int rc = SQLITE_DONE;
    if (q) {
        sqlite3_bind_int64(q, 1, run_id);
        sqlite3_bind_int64(q, 2, profile);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW && !fill_info(q, a, info)) rc = SQLITE_NOMEM;
        sqlite3_reset(q);
    } else if (gb_store_schema_version(s) >= 5) {
        return GB_STORE_ERR_IO;
    }
    if (rc == SQLITE_DONE) {
        gb__store_fail("store '%s': run '%s' has no profile %lld", gb__store_path(s), run,
                       (long long)profile);
        return GB_STORE_ERR_NO_ROW;
    }
    return rc == SQLITE_ROW ? GB_STORE_OK : gb__store_done(s, rc, "reading a profile");
}

static bool fill_event(sqlite3_stmt *q, gb__arena *a, gb_profile_event_row *e) {
    e->start_us = sqlite3_column_double(q, 0);
    e->dur_us = sqlite3_column_double(q, 1);
    e->step = sqlite3_column_type(q, 2) == SQLITE_NULL ? GB_STEP_NONE : sqlite3_column_int64(q, 2);
    e->thread = sqlite3_column_int(q, 3);
    e->backward = sqlite3_column_int(q, 4) != 0;
    e->kind = gb__arena_strdup(a, (const char *)sqlite3_column_text(q, 5));
    e->name = gb__arena_strdup(a, (const char *)sqlite3_column_text(q, 6));
    e->op_type = gb__arena_strdup(a, (const char *)sqlite3_column_text(q, 7));
    e->function = gb__arena_strdup(a, (const char *)sqlite3_column_text(q, 8));
    e->shapes = gb__arena_strdup(a, (const char *)sqlite3_column_text(q, 9));
    e->flops = sqlite3_column_double(q, 10);
    e->bytes = sqlite3_column_int64(q, 11);
    e->live_bytes = sqlite3_column_int64(q, 12);
    return e->kind && e->name && e->op_type && e->function && e->shapes;
}

static gb_store_status events_locked(gb_store *s, const char *run, int64_t profile,
                                     size_t offset, size_t limit, gb__arena *a,
                                     gb_profile_events *res) {
    gb_store_status st = find_profile(s, run, profile, a, &res->info);
    if (st != GB_STORE_OK) return st;
    sqlite3_stmt *q = gb__store_stmt(s, EVENTS_SQL);
    if (!q) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(q, 1, profile);
    sqlite3_bind_int64(q, 2, (int64_t)offset);
    sqlite3_bind_int64(q, 3, limit ? (int64_t)limit : -1);
    gb__rows rows = {.elem = sizeof(gb_profile_event_row)};
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        gb_profile_event_row *e = gb__rows_push(&rows);
        if (!e || !fill_event(q, a, e)) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_reset(q);
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    if (rows.count && !res->rows) rc = SQLITE_NOMEM;
    gb__rows_release(&rows);
    return gb__store_done(s, rc, "reading profile events");
}

gb_store_status gb_store_profile_events(gb_store *s, const char *run, int64_t profile,
                                        size_t offset, size_t limit, gb_profile_events **out) {
    if (!s || !out) return gb__store_null_args("gb_store_profile_events");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_profile_events, profile, offset, limit, out);
    gb__arena *a;
    gb_profile_events *res = gb__result_new(sizeof *res, &a);
    if (!res) return gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    gb__store_lock(s);
    gb__store_read_begin(s);
    gb_store_status st = events_locked(s, run, profile, offset, limit, a, res);
    gb__store_read_end(s);
    gb__store_unlock(s);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}
