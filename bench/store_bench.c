/* store_bench.c — the event store's speed, side by side with plain SQLite.
 *
 *   store_ingest          scalar events/s through the writer API, from the
 *                         first call until close() has committed the last
 *                         one; peer: the strongest plain SQLite insert loop
 *                         (WAL, synchronous=NORMAL, one prepared statement,
 *                         10k-row transactions, rowid table, no index)
 *   store_enqueue         what a gb_summary_scalar call costs its caller
 *                         (ns per call in bursts the queue absorbs: what a
 *                         training step pays), no peer
 *   store_downsample_10m  ms to read 1000 rows (min/max/mean envelopes) over
 *                         the whole of a 10,000,000-point series; peer: the
 *                         same envelopes from plain SQLite (one pass over a
 *                         table keyed by step, aggregated in C as it streams)
 *   store_downsample_10m_vs_sampling
 *                         the same query against 1000 index seeks that
 *                         sample one point per interval (fast, but it drops
 *                         every spike between samples)
 *
 * Medians of several repeats. The 10M-point series is built once per run
 * into a temporary directory (both the glassbox store and the peer's
 * table) and deleted at the end. Progress goes to stderr.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"

enum { INGEST_EVENTS = 2000000, INGEST_REPEATS = 5, SERIES = 10000000, POINTS = 1000 };

static char dir[256];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Reports a failure and removes the temporary directory (it may hold
 * hundreds of megabytes). */
static void die(const char *what, const char *msg) {
    fprintf(stderr, "store_bench: %s: %s\n", what, msg);
    if (dir[0]) {
        char cmd[320];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "store_bench: could not remove %s\n", dir);
    }
    exit(1);
}

static void remove_store(const char *path) {
    char side[400];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path), unlink(side);
    snprintf(side, sizeof side, "%s-shm", path), unlink(side);
}

static sqlite3 *peer_open(const char *path) {
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) die("sqlite3_open", sqlite3_errmsg(db));
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    return db;
}

/* ---- ingest -------------------------------------------------------------------------- */

static const char *const ingest_tags[] = {"loss", "accuracy", "learning_rate", "grad_norm"};

/* What one call costs the caller: bursts shorter than the queue, each
 * committed (untimed) before the next; ns per call. */
static double glassbox_enqueue_ns(void) {
    char path[300];
    snprintf(path, sizeof path, "%s/enqueue.db", dir);
    remove_store(path);
    gb_summary_writer *w;
    if (gb_summary_writer_open(path, "bench", NULL, &w) != GB_OK)
        die("open", gb_summary_last_error());
    enum { BURST = 100000, BURSTS = 11 };
    double ns[BURSTS];
    for (int b = 0; b < BURSTS; b++) {
        double t0 = now_s();
        for (int i = 0; i < BURST; i++)
            gb_summary_scalar(w, ingest_tags[i & 3], 1.0 / (i + 1), (b * BURST + i) >> 2);
        ns[b] = (now_s() - t0) / BURST * 1e9;
        gb_summary_flush(w);
    }
    if (gb_summary_writer_close(w) != GB_OK) die("close", gb_summary_last_error());
    remove_store(path);
    return median(ns, BURSTS);
}

/* Writes n events (4 tags per step, as a training loop would); events/s. */
static double glassbox_ingest(int n) {
    char path[300];
    snprintf(path, sizeof path, "%s/ingest.db", dir);
    remove_store(path);
    gb_summary_writer *w;
    if (gb_summary_writer_open(path, "bench", NULL, &w) != GB_OK)
        die("open", gb_summary_last_error());
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        gb_summary_scalar(w, ingest_tags[i & 3], 1.0 / (i + 1), i >> 2);
    if (gb_summary_writer_close(w) != GB_OK) die("close", gb_summary_last_error());
    double t1 = now_s();
    remove_store(path);
    return n / (t1 - t0);
}

static double sqlite_ingest(int n) {
    char path[300];
    snprintf(path, sizeof path, "%s/peer_ingest.db", dir);
    remove_store(path);
    sqlite3 *db = peer_open(path);
    sqlite3_exec(db, "CREATE TABLE scalars(tag_id INTEGER, step INTEGER, wall_time REAL, value REAL)",
                 NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO scalars VALUES (?1, ?2, ?3, ?4)", -1, &st, NULL);
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        if (i % 10000 == 0) sqlite3_exec(db, i ? "COMMIT; BEGIN" : "BEGIN", NULL, NULL, NULL);
        struct timespec ts;   /* a wall time per event, as the writer takes */
        clock_gettime(CLOCK_REALTIME, &ts);
        sqlite3_bind_int(st, 1, i & 3);
        sqlite3_bind_int64(st, 2, i >> 2);
        sqlite3_bind_double(st, 3, (double)ts.tv_sec + ts.tv_nsec * 1e-9);
        sqlite3_bind_double(st, 4, 1.0 / (i + 1));
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    double t1 = now_s();
    sqlite3_finalize(st);
    sqlite3_close(db);
    remove_store(path);
    return n / (t1 - t0);
}

static void bench_ingest(void) {
    double gb[INGEST_REPEATS], peer[INGEST_REPEATS];
    for (int r = 0; r < INGEST_REPEATS; r++) {
        gb[r] = glassbox_ingest(INGEST_EVENTS);
        peer[r] = sqlite_ingest(INGEST_EVENTS);
        fprintf(stderr, "  ingest repeat %d: glassbox %.0f/s, sqlite %.0f/s\n", r, gb[r], peer[r]);
    }
    double g = median(gb, INGEST_REPEATS), p = median(peer, INGEST_REPEATS);
    printf("bench store_ingest glassbox=%.0f sqlite_insert=%.0f ratio=%.2f unit=events/s\n", g, p,
           g / p);
    printf("bench store_enqueue glassbox=%.1f unit=ns/event\n", glassbox_enqueue_ns());
    fflush(stdout);
}

/* ---- downsampling a 10M-point series ---------------------------------------------------- */

/* A noisy curve with rare spikes: what a long training loss looks like. */
static double series_value(int64_t i) {
    return 1.0 / (1 + i * 1e-6) + 0.01 * sin((double)i) + (i % 1000003 == 0 ? 50 : 0);
}

static void build_series(const char *gb_path, const char *peer_path) {
    double t0 = now_s();
    gb_summary_writer *w;
    if (gb_summary_writer_open(gb_path, "bench", NULL, &w) != GB_OK)
        die("open", gb_summary_last_error());
    for (int64_t i = 0; i < SERIES; i++) gb_summary_scalar(w, "loss", series_value(i), i);
    if (gb_summary_writer_close(w) != GB_OK) die("close", gb_summary_last_error());
    double t1 = now_s();
    sqlite3 *db;   /* setup only, untimed: no journal, no syncs, one transaction */
    if (sqlite3_open(peer_path, &db) != SQLITE_OK) die("sqlite3_open", sqlite3_errmsg(db));
    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                     "CREATE TABLE loss(step INTEGER PRIMARY KEY, wall_time REAL, value REAL); BEGIN",
                 NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO loss VALUES (?1, ?2, ?3)", -1, &st, NULL);
    for (int64_t i = 0; i < SERIES; i++) {
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_double(st, 2, 1.7e9 + i * 1e-3);
        sqlite3_bind_double(st, 3, series_value(i));
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    fprintf(stderr, "  built the 10M-point series: glassbox %.1f s, sqlite %.1f s\n", t1 - t0,
            now_s() - t1);
}

/* ms for one 1000-row envelope query; checks that the spikes survive. */
static double glassbox_query(gb_store *s) {
    gb_query q = {GB_STEP_MIN, GB_STEP_MAX, POINTS};
    gb_scalar_series *ser;
    double t0 = now_s();
    if (gb_store_scalars(s, "bench", "loss", &q, &ser) != GB_STORE_OK)
        die("query", gb_store_last_error());
    double ms = (now_s() - t0) * 1e3;
    int spikes = 0;
    for (size_t i = 0; i < ser->count; i++) spikes += ser->rows[i].max > 40;
    if (ser->count != POINTS || ser->total_points != SERIES || spikes != 10)
        die("query", "wrong result");
    gb_store_free(ser);
    return ms;
}

/* The same envelopes with plain SQLite: one pass over the range in step
 * order (the table is keyed by step), aggregated as it streams. (A GROUP BY
 * in SQL is far slower: it sorts into a temporary index.) */
static double sqlite_envelope_query(sqlite3 *db) {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT step, value FROM loss WHERE step BETWEEN 0 AND ?1", -1, &st,
                       NULL);
    static double mn[POINTS], mx[POINTS], sum[POINTS];
    static int64_t count[POINTS];
    const int64_t width = SERIES / POINTS;
    double t0 = now_s();
    sqlite3_bind_int64(st, 1, SERIES - 1);
    for (int k = 0; k < POINTS; k++) mn[k] = INFINITY, mx[k] = -INFINITY, sum[k] = 0, count[k] = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0) / width;
        double v = sqlite3_column_double(st, 1);
        mn[k] = fmin(mn[k], v), mx[k] = fmax(mx[k], v), sum[k] += v, count[k]++;
    }
    double ms = (now_s() - t0) * 1e3;
    sqlite3_finalize(st);
    int spikes = 0;
    for (int k = 0; k < POINTS; k++) spikes += mx[k] > 40;
    if (spikes != 10 || count[POINTS - 1] != width) die("sqlite query", "wrong result");
    return ms;
}

/* One point per interval by index seeks: fast, but blind between samples. */
static double sqlite_sample_query(sqlite3 *db) {
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT step, value FROM loss WHERE step >= ?1 ORDER BY step LIMIT 1", -1,
                       &st, NULL);
    double t0 = now_s();
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (int k = 0; k < POINTS; k++) {
        sqlite3_bind_int64(st, 1, (int64_t)k * (SERIES / POINTS));
        if (sqlite3_step(st) != SQLITE_ROW) die("sqlite seek", "no row");
        sqlite3_reset(st);
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    double ms = (now_s() - t0) * 1e3;
    sqlite3_finalize(st);
    return ms;
}

static void bench_downsample(void) {
    char gb_path[300], peer_path[300];
    snprintf(gb_path, sizeof gb_path, "%s/series.db", dir);
    snprintf(peer_path, sizeof peer_path, "%s/peer_series.db", dir);
    build_series(gb_path, peer_path);
    gb_store *s;
    if (gb_store_open(gb_path, &s) != GB_STORE_OK) die("open", gb_store_last_error());
    sqlite3 *db;
    if (sqlite3_open(peer_path, &db) != SQLITE_OK) die("sqlite3_open", sqlite3_errmsg(db));
    enum { FAST = 21, SLOW = 3 };
    double gb[FAST], scan[SLOW], seek[FAST];
    glassbox_query(s), sqlite_sample_query(db);   /* warm caches (the scan reads it all anyway) */
    for (int r = 0; r < FAST; r++) gb[r] = glassbox_query(s);
    for (int r = 0; r < FAST; r++) seek[r] = sqlite_sample_query(db);
    for (int r = 0; r < SLOW; r++) scan[r] = sqlite_envelope_query(db);
    double g = median(gb, FAST), p = median(scan, SLOW), q = median(seek, FAST);
    printf("bench store_downsample_10m glassbox=%.2f sqlite_scan=%.1f ratio=%.1f unit=ms\n", g, p,
           p / g);
    printf("bench store_downsample_10m_vs_sampling glassbox=%.2f sqlite_seek_sample=%.2f ratio=%.2f "
           "unit=ms\n",
           g, q, q / g);
    fflush(stdout);
    gb_store_close(s);
    sqlite3_close(db);
    remove_store(gb_path);
    remove_store(peer_path);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gb_store_bench_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "store_bench: cannot create %s\n", dir);
        return 1;
    }
    bench_ingest();
    bench_downsample();
    rmdir(dir);
    return 0;
}
