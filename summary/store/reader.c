/* store/reader.c — the read-only store handle, runs, tags and change checks.
 *
 * A gb_store is one read-only SQLite connection with a small cache of
 * prepared statements (keyed by the address of their SQL literal) and a
 * mutex that serializes calls, so a handle may be shared by threads.
 * Multi-statement queries run in one read transaction: one snapshot, even
 * while writers commit. How the connection is made is reader_open.c.
 *
 * The helpers every reader file shares are here too, among them the
 * checks of damaged rows: a row that cannot be what its table says (text
 * that is a BLOB, an hparam flag that is neither 0 nor 1) fails its query
 * with GB_STORE_ERR_DATA and a message naming it, rather than be read as
 * a guess (a BLOB cut at its first NUL, a flag taken as true).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/internal.h"

enum { STMT_CACHE = 48 };

typedef struct cached_stmt {
    const char *sql;
    sqlite3_stmt *st;
} cached_stmt;

struct gb_store {
    sqlite3 *db;
    char *path;
    int version;
    pthread_mutex_t lock;
    gb__logdir *logdir;   /* a handle of many stores (logdir.c): no db of its own */
    int ncached;
    cached_stmt cache[STMT_CACHE];
};

/* ---- kinds -------------------------------------------------------------------------- */

static const char *const kind_names[] = {
    [GB_KIND_ANY] = "any",         [GB_KIND_SCALAR] = "scalar", [GB_KIND_HISTOGRAM] = "histogram",
    [GB_KIND_IMAGE] = "image",     [GB_KIND_TEXT] = "text",     [GB_KIND_GRAPH] = "graph",
    [GB_KIND_PR_CURVE] = "pr_curve", [GB_KIND_EMBEDDING] = "embedding", [GB_KIND_AUDIO] = "audio",
};

const char *gb_kind_name(gb_summary_kind kind) {
    if ((unsigned)kind >= sizeof kind_names / sizeof kind_names[0]) return "unknown";
    return kind_names[kind];
}

bool gb_kind_from_name(const char *name, gb_summary_kind *out) {
    for (size_t k = 0; name && k < sizeof kind_names / sizeof kind_names[0]; k++)
        if (!strcmp(name, kind_names[k])) {
            if (out) *out = (gb_summary_kind)k;
            return true;
        }
    return false;
}

/* ---- helpers shared by the reader files ------------------------------------------- */

const char *gb__store_path(const gb_store *s) { return s->path; }
gb__logdir *gb__store_logdir(const gb_store *s) { return s ? s->logdir : NULL; }
/* A logdir handle has nothing of its own to guard (its table has its own
 * lock, each member its connection's): its callers' threads run at once. */
void gb__store_lock(gb_store *s) {
    if (!s->logdir) pthread_mutex_lock(&s->lock);
}
void gb__store_unlock(gb_store *s) {
    if (!s->logdir) pthread_mutex_unlock(&s->lock);
}

gb_store_status gb__store_sql_error(gb_store *s, const char *what) {
    gb__store_fail("store '%s': %s failed: %s", s->path, what, sqlite3_errmsg(s->db));
    return GB_STORE_ERR_IO;
}

gb_store_status gb__store_damaged(gb_store *s, const char *table, const char *where,
                                  const char *why) {
    gb__store_fail("store '%s': damaged %s row (%s): %s", s->path, table, where, why);
    return GB_STORE_ERR_DATA;
}

const char *gb__text_damage(sqlite3_stmt *st, int col) {
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL) return "the text is NULL";
    if (type == SQLITE_BLOB) return "the text is a BLOB";
    const char *text = (const char *)sqlite3_column_text(st, col);
    if (!text) return gb__out_of_memory;
    /* A C string would silently end at the first NUL. */
    if (strlen(text) != (size_t)sqlite3_column_bytes(st, col)) return "the text holds a NUL byte";
    return NULL;
}

const char gb__out_of_memory[] = "out of memory";

sqlite3_stmt *gb__store_stmt(gb_store *s, const char *sql) {
    for (int i = 0; i < s->ncached; i++)
        if (s->cache[i].sql == sql) {
            sqlite3_reset(s->cache[i].st);
            sqlite3_clear_bindings(s->cache[i].st);
            return s->cache[i].st;
        }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        gb__store_sql_error(s, "preparing a query");
        return NULL;
    }
    if (s->ncached == STMT_CACHE) {   /* never with the queries of this library */
        sqlite3_finalize(st);
        gb__store_fail("store '%s': too many distinct queries", s->path);
        return NULL;
    }
    s->cache[s->ncached++] = (cached_stmt){sql, st};
    return st;
}

double gb__col_double(sqlite3_stmt *st, int col) {
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

void gb__store_read_begin(gb_store *s) { sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL); }

void gb__store_read_end(gb_store *s) {
    for (int i = 0; i < s->ncached; i++) sqlite3_reset(s->cache[i].st);
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

gb_store_status gb__store_resolve(gb_store *s, const char *run, const char *tag,
                                  gb_summary_kind kind, int64_t *run_id, int64_t *tag_id) {
    if (!run) {
        gb__store_fail("store '%s': the run name is NULL", s->path);
        return GB_STORE_ERR_ARG;
    }
    sqlite3_stmt *st = gb__store_stmt(s, "SELECT id FROM runs WHERE name = ?1");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) return gb__store_sql_error(s, "finding the run");
        gb__store_fail("store '%s': unknown run '%s'", s->path, run);
        return GB_STORE_ERR_NO_RUN;
    }
    *run_id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    if (!tag_id) return GB_STORE_OK;
    if (!tag) {
        gb__store_fail("store '%s': the tag name is NULL", s->path);
        return GB_STORE_ERR_ARG;
    }
    st = gb__store_stmt(s, "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2 AND kind = ?3");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(st, 1, *run_id);
    sqlite3_bind_text(st, 2, tag, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, kind);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) return gb__store_sql_error(s, "finding the tag");
        gb__store_fail("store '%s': run '%s' has no %s tag '%s'", s->path, run, gb_kind_name(kind),
                       tag);
        return GB_STORE_ERR_NO_TAG;
    }
    *tag_id = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return GB_STORE_OK;
}

/* ---- open and close ------------------------------------------------------------------- */

static gb_store_status open_store(const char *path, bool snapshot, gb_store **out) {
    if (!out || !path || !*path) {
        gb__store_fail("gb_store_open: %s is NULL or empty", out ? "path" : "out");
        if (out) *out = NULL;
        return GB_STORE_ERR_ARG;
    }
    *out = NULL;
    gb_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        gb__store_fail("gb_store_open: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    pthread_mutex_init(&s->lock, NULL);
    gb_store_status st = gb__store_connect(path, snapshot, &s->db);
    if (st == GB_STORE_OK) {
        char err[1024];
        st = gb__store_check_read(s->db, path, &s->version, err, sizeof err);
        if (st != GB_STORE_OK) gb__store_fail("%s", err);
    }
    if (st != GB_STORE_OK) {
        gb_store_close(s);
        return st;
    }
    *out = s;
    return GB_STORE_OK;
}

gb_store_status gb_store_open(const char *path, gb_store **out) {
    return open_store(path, false, out);
}

gb_store_status gb__store_open_snapshot(const char *path, gb_store **out) {
    return open_store(path, true, out);
}

gb_store_status gb_store_open_logdir(const char *const *patterns, size_t count, gb_store **out) {
    if (!out) return gb__store_null_args("gb_store_open_logdir");
    *out = NULL;
    gb__logdir *ld;
    gb_store_status st = gb__logdir_new(patterns, count, &ld);
    if (st != GB_STORE_OK) return st;
    gb_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(patterns[0]))) {
        free(s);
        gb__logdir_free(ld);
        gb__store_fail("gb_store_open_logdir: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->logdir = ld;
    s->version = GB_STORE_SCHEMA_VERSION;   /* members older than this answer as they are */
    *out = s;
    return GB_STORE_OK;
}

void gb_store_close(gb_store *s) {
    if (!s) return;
    gb__logdir_free(s->logdir);
    for (int i = 0; i < s->ncached; i++) sqlite3_finalize(s->cache[i].st);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    free(s->path);
    free(s);
}

int gb_store_schema_version(gb_store *s) { return s ? s->version : 0; }

int64_t gb_store_pages_read(gb_store *s) {
    if (!s) return 0;
    if (s->logdir) return gb__logdir_pages_read(s->logdir);
    int64_t pages = 0;
    gb__store_lock(s);
    for (int op = SQLITE_DBSTATUS_CACHE_HIT; op <= SQLITE_DBSTATUS_CACHE_MISS; op++) {
        int now = 0, high = 0;
        if (sqlite3_db_status(s->db, op, &now, &high, 0) == SQLITE_OK) pages += now;
    }
    gb__store_unlock(s);
    return pages;
}

gb_store_status gb__store_null_args(const char *what) {
    gb__store_fail("%s: the store or the output pointer is NULL", what);
    return GB_STORE_ERR_ARG;
}

gb_store_status gb__store_done(gb_store *s, int rc, const char *what) {
    if (rc == SQLITE_DONE || rc == SQLITE_OK) return GB_STORE_OK;
    if (rc == SQLITE_NOMEM) {
        gb__store_fail("store '%s': out of memory while %s", s->path, what);
        return GB_STORE_ERR_MEMORY;
    }
    gb__store_fail("store '%s': %s failed: %s", s->path, what, sqlite3_errstr(rc));
    return GB_STORE_ERR_IO;
}

static gb_store_status data_version(gb_store *s, uint64_t *out) {
    sqlite3_stmt *st = gb__store_stmt(s, "PRAGMA data_version");
    if (!st) return GB_STORE_ERR_IO;
    if (sqlite3_step(st) != SQLITE_ROW) return gb__store_sql_error(s, "PRAGMA data_version");
    *out = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return GB_STORE_OK;
}

gb_store_status gb_store_data_version(gb_store *s, uint64_t *out) {
    if (!s || !out) return gb__store_null_args("gb_store_data_version");
    if (s->logdir) return gb__logdir_data_version(s->logdir, out);
    GB__LOCKED(s, data_version(s, out));
}

/* ---- runs ------------------------------------------------------------------------------ */

/* Why an hparams row cannot be read, or NULL: key and value are text,
 * is_number is 0 or 1, and a number is a number (NULL: NaN). */
static const char *hparam_damage(sqlite3_stmt *st) {
    const char *why = gb__text_damage(st, 0);
    if (!why) why = gb__text_damage(st, 1);
    if (why) return why;
    if (sqlite3_column_type(st, 2) != SQLITE_INTEGER || (sqlite3_column_int64(st, 2) & ~1))
        return "is_number is neither 0 nor 1";
    int type = sqlite3_column_type(st, 3);
    if (sqlite3_column_int(st, 2) && type != SQLITE_INTEGER && type != SQLITE_FLOAT &&
        type != SQLITE_NULL)
        return "the number is not a number";
    return NULL;
}

static gb_store_status hparam_damaged(gb_store *s, sqlite3_stmt *st, const gb_run_row *run,
                                      const char *why) {
    char where[600];
    const char *key = (const char *)sqlite3_column_text(st, 0);
    snprintf(where, sizeof where, "run '%s', key '%.256s'", run->name, key ? key : "");
    return gb__store_damaged(s, "hparams", where, why);
}

static gb_store_status load_hparams(gb_store *s, gb__arena *a, gb_run_row *run) {
    sqlite3_stmt *st = gb__store_stmt(
        s, "SELECT key, value, is_number, number FROM hparams WHERE run_id = ?1 ORDER BY key");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(st, 1, run->id);
    gb__rows rows = {.elem = sizeof(gb_hparam)};
    gb_store_status status = GB_STORE_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *why = hparam_damage(st);
        gb_hparam *h = why ? NULL : gb__rows_push(&rows);
        if (why && why != gb__out_of_memory) {
            status = hparam_damaged(s, st, run, why);
            break;
        }
        if (!h) {
            rc = SQLITE_NOMEM;
            break;
        }
        h->key = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 0));
        h->value = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 1));
        h->is_number = sqlite3_column_int(st, 2) != 0;
        h->number = h->is_number ? gb__col_double(st, 3) : NAN;
    }
    sqlite3_reset(st);
    run->hparam_count = rows.count;
    run->hparams = gb__rows_into(a, &rows);
    return status != GB_STORE_OK ? status : gb__store_done(s, rc, "reading hyperparameters");
}

/* A run's status as a reader should see it: a "running" run whose writer
 * ran on this host in a process that no longer exists was killed (SIGKILL
 * leaves no chance to say so) and will never finish. */
static const char *judged_status(const char *stored, const char *host, int64_t pid) {
    if (!stored || !host) return stored ? stored : "";
    if (strcmp(stored, "running") || pid <= 0 || pid > INT32_MAX) return stored;
    char here[256] = "";
    gethostname(here, sizeof here - 1);
    if (strcmp(host, here)) return stored;   /* another machine: cannot tell */
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH ? "killed" : stored;
}

gb_store_status gb__store_runs(gb_store *s, gb_runs **out) {
    if (s->logdir) return gb__logdir_runs(s->logdir, out);
    gb__arena *a;
    gb_runs *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    gb__store_read_begin(s);
    /* A store before schema 4 has no status: it reads as "" (unknown). */
    sqlite3_stmt *st = s->version >= 4
        ? gb__store_stmt(s, "SELECT id, name, start_time, last_write_time, host, pid, "
                            "command_line, status, status_host, status_pid FROM runs ORDER BY name")
        : gb__store_stmt(s, "SELECT id, name, start_time, last_write_time, host, pid, "
                            "command_line, '', '', 0 FROM runs ORDER BY name");
    gb__rows rows = {.elem = sizeof(gb_run_row)};
    int rc = st ? SQLITE_ROW : SQLITE_ERROR;
    while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        gb_run_row *r = gb__rows_push(&rows);
        if (!r) {
            rc = SQLITE_NOMEM;
            break;
        }
        r->id = sqlite3_column_int64(st, 0);
        r->name = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 1));
        r->start_time = sqlite3_column_double(st, 2);
        r->last_write_time = sqlite3_column_double(st, 3);
        r->host = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 4));
        r->pid = sqlite3_column_int64(st, 5);
        r->command_line = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 6));
        r->status = gb__arena_strdup(
            a, judged_status((const char *)sqlite3_column_text(st, 7),
                             (const char *)sqlite3_column_text(st, 8), sqlite3_column_int64(st, 9)));
    }
    gb_store_status status = gb__store_done(s, rc, "reading runs");
    gb_run_row *r = rows.data;
    for (size_t i = 0; status == GB_STORE_OK && i < rows.count; i++)
        status = load_hparams(s, a, &r[i]);
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    gb__store_read_end(s);
    if (status != GB_STORE_OK) {
        gb_store_free(res);
        return status;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb_store_runs(gb_store *s, gb_runs **out) {
    if (!s || !out) return gb__store_null_args("gb_store_runs");
    *out = NULL;
    GB__LOCKED(s, gb__store_runs(s, out));
}

/* ---- what a store holds --------------------------------------------------------------------- */

/* Training health shows for its alerts, or for the figures of a run that
 * has none (a healthy one): scalar tags under "health/". */
#define HEALTH_TAGS "EXISTS (SELECT 1 FROM tags WHERE name >= 'health/' AND name < 'health0' " \
                    "AND kind = 1)"

static const char *has_events_sql(const gb_store *s, gb_event_table table) {
    /* Literals, one per table: the statement cache is keyed by address. */
    switch (table) {
    case GB_EVENTS_TRACES: return "SELECT EXISTS (SELECT 1 FROM traces)";
    case GB_EVENTS_NUMERICS: return "SELECT EXISTS (SELECT 1 FROM numerics)";
    case GB_EVENTS_PROFILES:
        return s->version < 5 ? NULL : "SELECT EXISTS (SELECT 1 FROM profiles)";
    case GB_EVENTS_HEALTH:
        return s->version < 7 ? "SELECT " HEALTH_TAGS
                              : "SELECT EXISTS (SELECT 1 FROM health) OR " HEALTH_TAGS;
    default: return NULL;
    }
}

static gb_store_status has_events(gb_store *s, gb_event_table table, bool *out) {
    const char *sql = has_events_sql(s, table);
    *out = false;
    if (!sql) return GB_STORE_OK;   /* no such table in this version */
    sqlite3_stmt *st = gb__store_stmt(s, sql);
    if (!st) return GB_STORE_ERR_IO;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? GB_STORE_OK : gb__store_sql_error(s, "checking for events");
}

gb_store_status gb_store_has_events(gb_store *s, gb_event_table table, bool *out) {
    if (!s || !out) return gb__store_null_args("gb_store_has_events");
    if ((unsigned)table >= GB_EVENTS_TABLES) {
        gb__store_fail("gb_store_has_events: unknown table %d", (int)table);
        return GB_STORE_ERR_ARG;
    }
    if (s->logdir) return gb__logdir_has_events(s->logdir, table, out);
    GB__LOCKED(s, has_events(s, table, out));
}

/* ---- tags ------------------------------------------------------------------------------ */

gb_store_status gb__store_tags(gb_store *s, const char *run, gb_summary_kind kind,
                               gb_tags **out) {
    if (s->logdir) return gb__logdir_tags(s->logdir, run, kind, out);
    int64_t run_id = 0;
    if (run) {
        gb_store_status st = gb__store_resolve(s, run, NULL, kind, &run_id, NULL);
        if (st != GB_STORE_OK) return st;
    }
    gb__arena *a;
    gb_tags *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    sqlite3_stmt *st = gb__store_stmt(
        s, "SELECT r.name, t.name, t.kind, t.count, t.min_step, t.max_step, t.last_wall_time "
           "FROM tags t JOIN runs r ON r.id = t.run_id "
           "WHERE (?1 = 0 OR t.run_id = ?1) AND (?2 = 0 OR t.kind = ?2) "
           "ORDER BY r.name, t.name, t.kind");
    gb__rows rows = {.elem = sizeof(gb_tag_row)};
    int rc = SQLITE_ERROR;
    if (st) {
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_int(st, 2, kind);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            gb_tag_row *t = gb__rows_push(&rows);
            if (!t) {
                rc = SQLITE_NOMEM;
                break;
            }
            t->run = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 0));
            t->tag = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, 1));
            t->kind = (gb_summary_kind)sqlite3_column_int(st, 2);
            t->count = sqlite3_column_int64(st, 3);
            t->min_step = sqlite3_column_int64(st, 4);
            t->max_step = sqlite3_column_int64(st, 5);
            t->last_wall_time = sqlite3_column_double(st, 6);
        }
    }
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    gb_store_status status = gb__store_done(s, rc, "reading tags");
    if (status != GB_STORE_OK) {
        gb_store_free(res);
        return status;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb_store_tags(gb_store *s, const char *run, gb_summary_kind kind, gb_tags **out) {
    if (!s || !out) return gb__store_null_args("gb_store_tags");
    *out = NULL;
    if ((unsigned)kind > GB_KIND_AUDIO) {
        gb__store_fail("gb_store_tags: unknown kind %d", (int)kind);
        return GB_STORE_ERR_ARG;
    }
    GB__LOCKED(s, gb__store_tags(s, run, kind, out));
}

