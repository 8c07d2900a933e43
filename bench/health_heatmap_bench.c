/* health_heatmap_bench.c — the Health page's heat map over a long run, side by
 * side with plain SQLite.
 *
 *   health_heatmap_1m_<N>col  ms to read the heat map of one figure, 10
 *                      layers x 100,000 steps (1,000,000 points, written as
 *                      the engine writes them: health/<layer>/grad_norm
 *                      scalars through the default writer's observer), in
 *                      N columns keeping each cell's worst value; peer: the
 *                      same cells from plain SQLite, one pass per layer over
 *                      a table keyed by (layer, step), min and max
 *                      aggregated in C as the rows stream (the fastest plain
 *                      way: a GROUP BY sorts into a temporary index). At 400
 *                      columns an interval (251 steps) is narrower than the
 *                      first rollup level (256), so the reader aggregates the
 *                      raw points too; at 200 it reads the rollups.
 *
 * Both must find the one vanishing step planted in layer 0 (a gradient
 * norm of 1e-12 at step 54321). Medians of several repeats; the store and
 * the peer's table are built once into a temporary directory and deleted.
 * Progress goes to stderr.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "gb_health.h"
#include "gb_summary.h"
#include "glassbox.h"

enum { LAYERS = 10, STEPS = 100000, MAX_COLUMNS = 400, REPEATS = 7 };
#define DIP_STEP 54321

static char dir[256];

static void cleanup(void) {
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "health_heatmap_bench: could not remove %s\n", dir);
}

static void die(const char *what, const char *msg) {
    fprintf(stderr, "health_heatmap_bench: %s: %s\n", what, msg);
    cleanup();
    exit(1);
}

/* Gradient norms that shrink towards the input, noisy, with one dip. */
static double grad_norm(int layer, int64_t step) {
    if (layer == 0 && step == DIP_STEP) return 1e-12;
    return pow(10, layer - 8) * (1 + 0.1 * sin((double)step * 0.01 + layer));
}

static void build(const char *gb_path, const char *peer_path) {
    double t0 = bench_now();
    gb_summary_writer *w;
    if (gb_summary_writer_open(gb_path, "long", NULL, &w) != GB_OK)
        die("open", gb_summary_last_error());
    gb_summary_set_default(w);
    char tags[LAYERS][64];
    for (int l = 0; l < LAYERS; l++) snprintf(tags[l], sizeof tags[l], "health/layer_%d/grad_norm", l);
    for (int64_t s = 0; s < STEPS; s++)
        for (int l = 0; l < LAYERS; l++) {
            gb_scalar_event e = {tags[l], grad_norm(l, s), s, NULL};
            gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .wall_time = 1.7e9 + (double)s,
                                         .message = tags[l], .detail = &e});
        }
    gb_summary_set_default(NULL);
    if (gb_summary_writer_close(w) != GB_OK) die("close", gb_summary_last_error());
    double t1 = bench_now();
    sqlite3 *db;   /* setup only, untimed: no journal, no syncs, one transaction */
    if (sqlite3_open(peer_path, &db) != SQLITE_OK) die("sqlite3_open", sqlite3_errmsg(db));
    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; CREATE TABLE points("
                     "layer INTEGER, step INTEGER, value REAL, PRIMARY KEY (layer, step)) "
                     "WITHOUT ROWID; BEGIN",
                 NULL, NULL, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "INSERT INTO points VALUES (?1, ?2, ?3)", -1, &st, NULL);
    for (int l = 0; l < LAYERS; l++)
        for (int64_t s = 0; s < STEPS; s++) {
            sqlite3_bind_int(st, 1, l);
            sqlite3_bind_int64(st, 2, s);
            sqlite3_bind_double(st, 3, grad_norm(l, s));
            sqlite3_step(st);
            sqlite3_reset(st);
        }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(st);
    sqlite3_close(db);
    fprintf(stderr, "  built %d layers x %d steps: glassbox %.1f s, sqlite %.1f s\n", LAYERS, STEPS,
            t1 - t0, bench_now() - t1);
}

/* ms for one heat map; checks its shape and that the dip is in it. */
static double glassbox_query(gb_store *s, int columns) {
    gb_query q = {GB_STEP_MIN, GB_STEP_MAX, (size_t)columns};
    gb_health_heatmap *m;
    double t0 = bench_now();
    if (gb_store_health_heatmap(s, "long", "grad_norm", &q, &m) != GB_STORE_OK)
        die("heat map", gb_store_last_error());
    double ms = (bench_now() - t0) * 1e3;
    bool dip = false;
    for (size_t k = 0; k < m->column_count; k++)
        if (m->steps[k] <= DIP_STEP && DIP_STEP <= m->steps_last[k]) dip = m->cells[k].value == 1e-12;
    if (m->layer_count != LAYERS || m->column_count != (size_t)columns || !dip)
        die("heat map", "wrong result");
    gb_store_free(m);
    return ms;
}

/* The same cells from plain SQLite: per layer one ordered pass, min and
 * max per interval of STEPS / COLUMNS steps. */
static double sqlite_query(sqlite3 *db, int columns) {
    static double mn[LAYERS][MAX_COLUMNS], mx[LAYERS][MAX_COLUMNS];
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT step, value FROM points WHERE layer = ?1 ORDER BY step", -1, &st,
                       NULL);
    const int64_t width = STEPS / columns;
    double t0 = bench_now();
    for (int l = 0; l < LAYERS; l++) {
        for (int k = 0; k < columns; k++) mn[l][k] = INFINITY, mx[l][k] = -INFINITY;
        sqlite3_bind_int(st, 1, l);
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t k = sqlite3_column_int64(st, 0) / width;
            double v = sqlite3_column_double(st, 1);
            mn[l][k] = fmin(mn[l][k], v), mx[l][k] = fmax(mx[l][k], v);
        }
        sqlite3_reset(st);
    }
    double ms = (bench_now() - t0) * 1e3;
    sqlite3_finalize(st);
    if (mn[0][DIP_STEP / width] != 1e-12) die("sqlite", "wrong result");
    return ms;
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/gb_health_heatmap_bench_XXXXXX");
    if (!mkdtemp(dir)) die("mkdtemp", "cannot make a temporary directory");
    char gb_path[320], peer_path[320];
    snprintf(gb_path, sizeof gb_path, "%s/health.db", dir);
    snprintf(peer_path, sizeof peer_path, "%s/peer.db", dir);
    build(gb_path, peer_path);
    gb_store *s;
    sqlite3 *db;
    if (gb_store_open(gb_path, &s) != GB_STORE_OK) die("open", gb_store_last_error());
    if (sqlite3_open_v2(peer_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        die("sqlite3_open", sqlite3_errmsg(db));
    static const int columns[] = {400, 200};
    for (size_t c = 0; c < sizeof columns / sizeof columns[0]; c++) {
        double gb[REPEATS], peer[REPEATS];
        for (int r = 0; r < REPEATS; r++) {
            gb[r] = glassbox_query(s, columns[c]);
            peer[r] = sqlite_query(db, columns[c]);
            fprintf(stderr, "  %d columns, repeat %d: glassbox %.2f ms, sqlite %.2f ms\n", columns[c],
                    r, gb[r], peer[r]);
        }
        char name[64];
        snprintf(name, sizeof name, "health_heatmap_1m_%dcol", columns[c]);
        bench_line_time(name, bench_median(gb, REPEATS), "sqlite_scan", bench_median(peer, REPEATS),
                        "ms");
    }
    gb_store_close(s);
    sqlite3_close(db);
    cleanup();
    return 0;
}
