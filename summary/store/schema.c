/* store/schema.c — creating, recognising, migrating and opening stores.
 *
 * A store is an SQLite file with application_id 'GBOX' whose user_version
 * is the schema version. A writer creates the schema (schema.sql, compiled
 * in) inside one IMMEDIATE transaction, so two processes creating the same
 * file at once end with one complete schema; it migrates an older store
 * step by step, and refuses a newer one or another application's database
 * without touching it. Only then is the file switched to WAL.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/internal.h"

/* migrations[v] turns a version-v store into version v+1 (v >= 1); each
 * repeats, for an existing store, what schema.sql gained in version v+1.
 *   1 -> 2: function_stats, each traced function's call counters.
 *   2 -> 3: trace_graphs, each trace's graphs moved out of its detail;
 *           op_timings.function, the function whose graph ran the op.
 *   3 -> 4: a run's status; the experiment's hyperparameter domains and
 *           metrics (hparam_domains, hparam_metrics); pr_curves. Runs of
 *           older stores get status '' (unknown), not a guess.
 *   4 -> 5: profiles and profile_events, the profiler's captures.
 *   5 -> 6: embeddings (the projector's points) and audio (WAV clips).
 *   6 -> 7: health, the training-health alerts.
 *   7 -> 8: imported_files, how far each imported TensorBoard event file
 *           was read. */
static const char *const migrations[GB_STORE_SCHEMA_VERSION] = {
    [0] = NULL,   /* 0 -> 1 is creation from schema.sql */
    [1] = "CREATE TABLE function_stats ("
          "id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), "
          "function TEXT NOT NULL, wall_time REAL NOT NULL, "
          "calls INTEGER NOT NULL DEFAULT 0, cache_hits INTEGER NOT NULL DEFAULT 0, "
          "traces INTEGER NOT NULL DEFAULT 0, trace_ms REAL NOT NULL DEFAULT 0, "
          "concrete INTEGER NOT NULL DEFAULT 0, UNIQUE (run_id, function));",
    [2] = "CREATE TABLE trace_graphs (trace_id INTEGER PRIMARY KEY REFERENCES traces(id), "
          "graph TEXT, graph_traced TEXT);"
          "INSERT INTO trace_graphs (trace_id, graph, graph_traced) SELECT id, "
          GB__DETAIL_GRAPH("detail", "graph") ", " GB__DETAIL_GRAPH("detail", "graph_traced")
          " FROM traces WHERE " GB__DETAIL_HAS_GRAPHS("detail") ";"
          "UPDATE traces SET detail = " GB__DETAIL_WITHOUT_GRAPHS("detail")
          " WHERE " GB__DETAIL_HAS_GRAPHS("detail") ";"
          "ALTER TABLE op_timings ADD COLUMN function TEXT NOT NULL DEFAULT '';",
    [3] = "ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT '';"
          "ALTER TABLE runs ADD COLUMN status_host TEXT NOT NULL DEFAULT '';"
          "ALTER TABLE runs ADD COLUMN status_pid INTEGER NOT NULL DEFAULT 0;"
          "CREATE TABLE hparam_domains (name TEXT PRIMARY KEY, "
          "display_name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '', "
          "type TEXT NOT NULL, domain TEXT NOT NULL DEFAULT '', min REAL, max REAL, "
          "\"values\" TEXT NOT NULL DEFAULT '[]', position INTEGER NOT NULL) WITHOUT ROWID;"
          "CREATE TABLE hparam_metrics (tag TEXT PRIMARY KEY, "
          "display_name TEXT NOT NULL DEFAULT '', higher_is_better INTEGER NOT NULL, "
          "position INTEGER NOT NULL) WITHOUT ROWID;"
          "CREATE TABLE pr_curves (id INTEGER PRIMARY KEY, "
          "tag_id INTEGER NOT NULL REFERENCES tags(id), step INTEGER NOT NULL, "
          "wall_time REAL NOT NULL, num_thresholds INTEGER NOT NULL, counts BLOB NOT NULL);"
          "CREATE INDEX pr_curves_by_step ON pr_curves (tag_id, step);",
    [4] = "CREATE TABLE profiles (id INTEGER PRIMARY KEY, "
          "run_id INTEGER NOT NULL REFERENCES runs(id), wall_time REAL NOT NULL, "
          "duration_us REAL NOT NULL, rank INTEGER NOT NULL DEFAULT 0, threads TEXT NOT NULL, "
          "record_count INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0, "
          "gemm_peak REAL NOT NULL DEFAULT 0);"
          "CREATE INDEX profiles_by_run ON profiles (run_id);"
          "CREATE TABLE profile_events (id INTEGER PRIMARY KEY, "
          "profile_id INTEGER NOT NULL REFERENCES profiles(id), kind TEXT NOT NULL, "
          "thread INTEGER NOT NULL, step INTEGER, start_us REAL NOT NULL, "
          "dur_us REAL NOT NULL, name TEXT NOT NULL, op_type TEXT NOT NULL DEFAULT '', "
          "function TEXT NOT NULL DEFAULT '', backward INTEGER NOT NULL DEFAULT 0, "
          "shapes TEXT NOT NULL DEFAULT '', flops REAL NOT NULL DEFAULT 0, "
          "bytes INTEGER NOT NULL DEFAULT 0, live_bytes INTEGER NOT NULL DEFAULT 0);"
          "CREATE INDEX profile_events_by_profile ON profile_events (profile_id);",
    [5] = "CREATE TABLE embeddings (id INTEGER PRIMARY KEY, "
          "tag_id INTEGER NOT NULL REFERENCES tags(id), step INTEGER NOT NULL, "
          "wall_time REAL NOT NULL, n INTEGER NOT NULL, dim INTEGER NOT NULL, "
          "vectors BLOB NOT NULL, metadata TEXT NOT NULL DEFAULT '', sprite BLOB, "
          "sprite_width INTEGER NOT NULL DEFAULT 0, sprite_height INTEGER NOT NULL DEFAULT 0);"
          "CREATE INDEX embeddings_by_step ON embeddings (tag_id, step);"
          "CREATE TABLE audio (id INTEGER PRIMARY KEY, "
          "tag_id INTEGER NOT NULL REFERENCES tags(id), step INTEGER NOT NULL, "
          "wall_time REAL NOT NULL, sample_index INTEGER NOT NULL, "
          "sample_rate INTEGER NOT NULL, channels INTEGER NOT NULL, frames INTEGER NOT NULL, "
          "clipped INTEGER NOT NULL DEFAULT 0, wav BLOB NOT NULL);"
          "CREATE INDEX audio_by_step ON audio (tag_id, step, sample_index);",
    [6] = "CREATE TABLE health (id INTEGER PRIMARY KEY, "
          "run_id INTEGER NOT NULL REFERENCES runs(id), step INTEGER, wall_time REAL NOT NULL, "
          "kind TEXT NOT NULL, severity INTEGER NOT NULL, layer TEXT NOT NULL DEFAULT '', "
          "variable TEXT NOT NULL DEFAULT '', value REAL, threshold REAL, "
          "figures TEXT NOT NULL DEFAULT '{}', message TEXT NOT NULL DEFAULT '', "
          "advice TEXT NOT NULL DEFAULT '');"
          "CREATE INDEX health_by_severity ON health (run_id, severity DESC, step, id);",
    [7] = "CREATE TABLE imported_files (run_id INTEGER NOT NULL REFERENCES runs(id), "
          "file TEXT NOT NULL, bytes_read INTEGER NOT NULL, tail INTEGER NOT NULL, "
          "wall_time REAL NOT NULL, PRIMARY KEY (run_id, file)) WITHOUT ROWID;",
};

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int gb__begin_immediate(sqlite3 *db) {
    for (;;) {
        int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) return rc;
        sleep_ms(1);   /* the busy timeout already waited; never give up */
    }
}

/* Runs a one-integer query (a PRAGMA or a count). */
static int query_int(sqlite3 *db, const char *sql, int *out) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Maps an SQLite failure to a status and message. */
static gb_store_status sql_failure(sqlite3 *db, int rc, const char *path, char *err, size_t n) {
    if (rc == SQLITE_NOTADB) {
        snprintf(err, n, "'%s' is not a glassbox store (not an SQLite database)", path);
        return GB_STORE_ERR_NOT_STORE;
    }
    snprintf(err, n, "store '%s': %s", path, sqlite3_errmsg(db));
    return GB_STORE_ERR_IO;
}

typedef struct header {
    int application_id, version, objects;
} header;

static int read_header(sqlite3 *db, header *h) {
    int rc = query_int(db, "PRAGMA application_id", &h->application_id);
    if (rc == SQLITE_OK) rc = query_int(db, "PRAGMA user_version", &h->version);
    if (rc == SQLITE_OK) rc = query_int(db, "SELECT count(*) FROM sqlite_master", &h->objects);
    return rc;
}

/* The verdict on a header: OK, NOT_STORE or NEWER (message in err). An
 * empty database is reported as NOT_STORE too; the writer checks for it
 * first. */
static gb_store_status judge(const header *h, const char *path, char *err, size_t n) {
    if (h->application_id != GB__APPLICATION_ID) {
        if (h->objects == 0)
            snprintf(err, n, "'%s' is not a glassbox store (an empty database)", path);
        else
            snprintf(err, n,
                     "'%s' is not a glassbox store (an SQLite database of another "
                     "application, application_id %d)",
                     path, h->application_id);
        return GB_STORE_ERR_NOT_STORE;
    }
    if (h->version > GB_STORE_SCHEMA_VERSION) {
        snprintf(err, n,
                 "store '%s' has schema version %d, newer than this glassbox supports (%d); "
                 "use a newer glassbox",
                 path, h->version, GB_STORE_SCHEMA_VERSION);
        return GB_STORE_ERR_NEWER;
    }
    if (h->version < 1) {
        snprintf(err, n, "'%s' is not a glassbox store (schema version %d)", path, h->version);
        return GB_STORE_ERR_NOT_STORE;
    }
    return GB_STORE_OK;
}

static int migrate(sqlite3 *db, int from) {
    for (int v = from; v < GB_STORE_SCHEMA_VERSION; v++) {
        int rc = sqlite3_exec(db, migrations[v], NULL, NULL, NULL);
        if (rc != SQLITE_OK) return rc;
    }
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", GB_STORE_SCHEMA_VERSION);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

/* Creates or upgrades the schema inside the caller's transaction. */
static gb_store_status ensure_schema(sqlite3 *db, const char *path, char *err, size_t n) {
    header h = {0};
    int rc = read_header(db, &h);
    if (rc != SQLITE_OK) return sql_failure(db, rc, path, err, n);
    if (h.application_id == 0 && h.objects == 0) {
        rc = sqlite3_exec(db, gb__schema_sql, NULL, NULL, NULL);
        return rc == SQLITE_OK ? GB_STORE_OK : sql_failure(db, rc, path, err, n);
    }
    gb_store_status st = judge(&h, path, err, n);
    if (st != GB_STORE_OK || h.version == GB_STORE_SCHEMA_VERSION) return st;
    rc = migrate(db, h.version);
    return rc == SQLITE_OK ? GB_STORE_OK : sql_failure(db, rc, path, err, n);
}

static int set_wal(sqlite3 *db) {
    for (int attempt = 0;; attempt++) {
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
        if (rc != SQLITE_OK) return rc;
        rc = sqlite3_step(st);
        bool wal = rc == SQLITE_ROW &&
                   !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        if (wal) return SQLITE_OK;
        if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_ROW) return rc;
        if (attempt > 10000) return SQLITE_BUSY;
        sleep_ms(1);
    }
}

gb_store_status gb__store_prepare_write(sqlite3 *db, const char *path, char *err, size_t n) {
    int rc = gb__begin_immediate(db);
    if (rc != SQLITE_OK) return sql_failure(db, rc, path, err, n);
    gb_store_status st = ensure_schema(db, path, err, n);
    if (st != GB_STORE_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = set_wal(db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return sql_failure(db, rc, path, err, n);
    return GB_STORE_OK;
}

gb_store_status gb__store_check_read(sqlite3 *db, const char *path, int *version, char *err,
                                     size_t n) {
    header h = {0};
    int rc = read_header(db, &h);
    if (rc != SQLITE_OK) return sql_failure(db, rc, path, err, n);
    *version = h.version;
    return judge(&h, path, err, n);
}

gb_store_status gb_store_create(const char *path, bool *created) {
    if (created) *created = false;
    if (!path || !*path) return gb__store_null_args("gb_store_create");
    struct stat sb;
    bool existed = stat(path, &sb) == 0;
    if (!existed && errno != ENOENT) {
        gb__store_fail("store '%s': %s", path, strerror(errno));
        return GB_STORE_ERR_IO;
    }
    if (existed) return GB_STORE_OK;   /* gb_store_open judges what it is */
    sqlite3 *db = NULL;
    char err[1024] = "";
    gb_store_status st = GB_STORE_OK;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, sizeof err, "cannot create store '%s': %s", path,
                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        st = GB_STORE_ERR_IO;
    } else {
        sqlite3_busy_timeout(db, 5000);
        /* A writer creating the same file at once is fine: the schema is
         * made in one IMMEDIATE transaction by whichever comes first. */
        st = gb__store_prepare_write(db, path, err, sizeof err);
    }
    sqlite3_close(db);
    if (st != GB_STORE_OK) gb__store_fail("%s", err);
    else if (created) *created = true;
    return st;
}
