/* writer/profile.c — a profiler capture into the store.
 *
 * The engine emits a finished capture as one GB_EVENT_PROFILE event; the
 * observer keeps a reference to its gb_profile (no copy of a million
 * records on the training thread) and queues it; the background thread
 * writes a profiles row and one profile_events row per record inside its
 * batch transaction, then lets the profile go.
 */
#include <stdlib.h>

#include "gb_profiler.h"
#include "writer/internal.h"

typedef struct profile_payload {
    const gb_profile *p;
} profile_payload;

void gb__writer_on_profile(gb_summary_writer *w, const gb_event *ev) {
    const gb_profile *p = ev->detail;
    profile_payload *pl = p ? malloc(sizeof *pl) : NULL;
    if (!pl) return;
    gb_profile_retain(p);
    pl->p = p;
    gb__event e = {.type = GB__EV_PROFILE, .step = GB_STEP_NONE, .wall_time = p->wall_time,
                   .payload = pl};
    /* The records belong to the profile: the queue counts only the event. */
    gb__writer_push(w, "profile", NULL, GB_KIND_ANY, e, sizeof *pl);
}

void gb__writer_profile_payload_free(void *payload) {
    profile_payload *pl = payload;
    if (pl) gb_profile_release(pl->p);
}

/* The thread names as a JSON array; NULL when memory ran out. */
static char *threads_json(const gb_profile *p) {
    gb__jtext t = {.grows = true};
    gb__jtext_put(&t, "[");
    for (int i = 0; i < p->nthreads; i++) {
        if (i) gb__jtext_put(&t, ",");
        gb__jtext_string(&t, p->threads[i]);
    }
    gb__jtext_put(&t, "]");
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}

static int add_record(sqlite3_stmt *st, int64_t profile_id, const gb_profile_record *r) {
    char shapes[256];
    sqlite3_bind_int64(st, 1, profile_id);
    sqlite3_bind_text(st, 2, gb_profile_kind_name(r->kind), -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, r->thread);
    if (r->step >= 0)
        sqlite3_bind_int64(st, 4, r->step);
    else
        sqlite3_bind_null(st, 4);
    sqlite3_bind_double(st, 5, r->start_us);
    sqlite3_bind_double(st, 6, r->dur_us);
    sqlite3_bind_text(st, 7, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, r->op_type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, r->function, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 10, r->backward);
    sqlite3_bind_text(st, 11, gb_profile_shapes_text(r, shapes, sizeof shapes), -1,
                      SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 12, r->flops);
    sqlite3_bind_int64(st, 13, r->bytes);
    sqlite3_bind_int64(st, 14, r->live_bytes);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int gb__writer_add_profile(gb_summary_writer *w, const gb__event *ev) {
    const gb_profile *p = ((const profile_payload *)ev->payload)->p;
    char *threads = threads_json(p);
    if (!threads) return SQLITE_NOMEM;
    sqlite3_stmt *st = w->st[GB__ST_PROFILE];
    sqlite3_bind_int64(st, 1, w->run_id);
    sqlite3_bind_double(st, 2, p->wall_time);
    sqlite3_bind_double(st, 3, p->duration_us);
    sqlite3_bind_int(st, 4, p->rank);
    sqlite3_bind_text(st, 5, threads, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 6, (int64_t)p->count);
    sqlite3_bind_int64(st, 7, (int64_t)p->dropped);
    sqlite3_bind_double(st, 8, p->gemm_peak_flops);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    free(threads);
    if (rc != SQLITE_DONE) return rc;
    if (ev->wall_time > w->batch_wall) w->batch_wall = ev->wall_time;
    int64_t id = sqlite3_last_insert_rowid(w->db);
    for (size_t i = 0; i < p->count; i++) {
        rc = add_record(w->st[GB__ST_PROFILE_EVENT], id, &p->records[i]);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}
