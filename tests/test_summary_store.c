/* test_summary_store.c — the store file and the reader's harder queries.
 *
 * Schema recognition and versions (missing file, not SQLite, another
 * application's database, an empty file, a newer schema — for both the
 * reader and the writer, which must leave foreign files untouched),
 * downsampling checked point by point against a brute-force aggregation
 * of the raw series (NaN/Inf, spikes, duplicates, out-of-order and sparse
 * steps, two writers of one tag), streaming order, and row budgets.
 */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gb_health.h"
#include "gb_observer.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"

static char dir[256], db[300];

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_store");
}

static void teardown(void) {
    summary_remove_dir(dir);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

#define ASSERT_OPEN_FAILS(path, status, part)                                        \
    do {                                                                              \
        gb_store *s_ = (gb_store *)1;                                                 \
        ck_assert_int_eq(gb_store_open((path), &s_), (status));                       \
        ck_assert_ptr_null(s_);                                                       \
        ck_assert_msg(strstr(gb_store_last_error(), (part)), "'%s' lacks '%s'",       \
                      gb_store_last_error(), (part));                                 \
    } while (0)

static void make_store(void) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "x", 1, 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

/* ---- schema ---------------------------------------------------------------------------- */

/* A version-1 store (written before function counters existed): read as
 * it is (no counters), then migrated to the current version by the next
 * writer, keeping its rows. */
START_TEST(test_version_1_store_is_read_then_migrated) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s/tests/stores/every_kind_v1.sqlite' '%s'",
             getenv("GB_SOURCE_DIR"), db); /* kept as written by version 1 */
    ck_assert_int_eq(system(cmd), 0);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 1);
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_uint_gt(runs->count, 0);
    const char *run = runs->rows[0].name;
    gb_function_stats_list *f;
    ck_assert_int_eq(gb_store_function_stats(s, run, &f), GB_STORE_OK);
    ck_assert_uint_eq(f->count, 0);
    gb_store_free(f);
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, run, NULL, &w), GB_OK);
    gb_function_record r = {.function = "train_step", .calls = 8, .cache_hits = 7, .traces = 1,
                            .concrete = 1, .trace_ms = 2.5};
    ck_assert_int_eq(gb_summary_function_stats(w, &r), GB_OK);
    r.calls = 16;
    r.cache_hits = 15;
    ck_assert_int_eq(gb_summary_function_stats(w, &r), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store_close(s);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(gb_store_function_stats(s, run, &f), GB_STORE_OK);
    ck_assert_uint_eq(f->count, 1); /* the latest report, not one row per report */
    ck_assert_str_eq(f->rows[0].function, "train_step");
    ck_assert(f->rows[0].calls == 16 && f->rows[0].cache_hits == 15 && f->rows[0].traces == 1);
    ck_assert_double_eq(f->rows[0].trace_ms, 2.5);
    gb_store_free(f);
    gb_runs *again;
    ck_assert_int_eq(gb_store_runs(s, &again), GB_STORE_OK);
    ck_assert_uint_eq(again->count, runs->count);
    gb_store_free(again);
    gb_store_free(runs);
    gb_store_close(s);
}
END_TEST

START_TEST(test_store_is_versioned_and_recognised) {
    make_store();
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    gb_store_close(s);
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "PRAGMA application_id", -1, &st, NULL);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(st, 0), 0x47424F58);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(h);
}
END_TEST

/* The detail of a trace as a version-2 writer stored it: its graphs inside. */
#define V2_DETAIL                                                                         \
    "{\"call_site\":\"t.c:1\",\"concrete_id\":4,\"arena_bytes\":64,"                  \
    "\"graph\":{\"nodes\":[{\"name\":\"x\"}],\"outputs\":[\"x\"]},"                   \
    "\"graph_traced\":{\"nodes\":[],\"outputs\":[]}}"

/* Both graphs of a trace: after the passes, as traced. */
static void assert_trace_graphs(gb_store *s, int64_t id, const char *graph, const char *traced) {
    gb_trace_graph *g;
    ck_assert_int_eq(gb_store_trace_graph(s, "run", id, false, &g), GB_STORE_OK);
    ck_assert_str_eq(g->json, graph);
    ck_assert_uint_eq(g->len, strlen(graph));
    gb_store_free(g);
    ck_assert_int_eq(gb_store_trace_graph(s, "run", id, true, &g), GB_STORE_OK);
    ck_assert_str_eq(g->json, traced);
    gb_store_free(g);
}

/* A version-2 store kept a trace's graphs in its detail: read as it is
 * (the graphs cut out of the detail), then migrated by the next writer,
 * which moves them to trace_graphs and leaves the detail small, with
 * has_graph. A detail that is not JSON stays as it was. */
/* What schema 4 added, taken away again: a current store made to look as
 * a version-3 writer left it. */
#define UNDO_VERSION_4                                                                   \
    "DROP TABLE hparam_domains; DROP TABLE hparam_metrics; DROP TABLE pr_curves;"         \
    "ALTER TABLE runs DROP COLUMN status; ALTER TABLE runs DROP COLUMN status_host;"      \
    "ALTER TABLE runs DROP COLUMN status_pid;"
/* And what schema 5 added (the profiler's tables). */
#define UNDO_VERSION_5 "DROP TABLE profile_events; DROP TABLE profiles;"
/* And what schema 6 added (embeddings and audio clips). */
#define UNDO_VERSION_6 "DROP TABLE embeddings; DROP TABLE audio;"
/* And what schema 7 added (training-health alerts). */
#define UNDO_VERSION_7 "DROP TABLE health;"
/* And what schema 8 added (how far imported event files were read). */
#define UNDO_VERSION_8 "DROP TABLE imported_files;"

START_TEST(test_version_2_store_moves_graphs_out_of_details) {
    make_store();
    summary_sql(db, UNDO_VERSION_8 UNDO_VERSION_7 UNDO_VERSION_6 UNDO_VERSION_5 UNDO_VERSION_4
                "DROP TABLE trace_graphs; ALTER TABLE op_timings DROP COLUMN function;"
            "PRAGMA user_version = 2;"
            "INSERT INTO traces(run_id, wall_time, function, is_retrace, detail) VALUES "
            "(1, 1, 'f', 0, '" V2_DETAIL "'), (1, 2, 'f', 1, '{\"graph\": [1, 2'),"
            "(1, 3, 'f', 1, NULL);");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 2);
    assert_trace_graphs(s, 1, "{\"nodes\":[{\"name\":\"x\"}],\"outputs\":[\"x\"]}",
                        "{\"nodes\":[],\"outputs\":[]}");
    gb_store_close(s);

    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    gb_traces *t;
    ck_assert_int_eq(gb_store_traces(s, "run", NULL, NULL, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 3);
    ck_assert_str_eq(t->rows[0].detail, "{\"call_site\":\"t.c:1\",\"concrete_id\":4,"
                                        "\"arena_bytes\":64,\"has_graph\":true,"
                                        "\"has_graph_traced\":true}");
    ck_assert_str_eq(t->rows[1].detail, "{\"graph\": [1, 2");
    ck_assert_str_eq(t->rows[2].detail, "");
    gb_trace_detail d;
    ck_assert(gb_trace_detail_parse(t->rows[0].detail, &d));
    ck_assert(d.has_graph && d.has_graph_traced && !d.graph && d.concrete_id == 4);
    gb_store_free(t);
    assert_trace_graphs(s, 1, "{\"nodes\":[{\"name\":\"x\"}],\"outputs\":[\"x\"]}",
                        "{\"nodes\":[],\"outputs\":[]}");
    gb_trace_graph *g;
    ck_assert_int_eq(gb_store_trace_graph(s, "run", 2, false, &g), GB_STORE_OK);
    ck_assert_ptr_null(g->json);
    gb_store_free(g);
    ck_assert_int_eq(gb_store_trace_graph(s, "run", 9, false, &g), GB_STORE_ERR_NO_ROW);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' has no trace 9"), "%s",
                  gb_store_last_error());
    gb_store_close(s);
}
END_TEST

/* A version-3 store has no run status, experiment or PR curves: read as
 * it is (status "" = unknown, an empty experiment), then migrated by the
 * next writer, keeping its runs and series; the new tables then work. */
START_TEST(test_version_3_store_gains_status_experiment_and_pr_curves) {
    make_store();
    summary_sql(db, UNDO_VERSION_8 UNDO_VERSION_7 UNDO_VERSION_6 UNDO_VERSION_5 UNDO_VERSION_4 "PRAGMA user_version = 3;");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 3);
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_uint_eq(runs->count, 1);
    ck_assert_str_eq(runs->rows[0].status, "");
    gb_store_free(runs);
    gb_hparams_config *c;
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert(c->hparam_count == 0 && c->metric_count == 0);
    gb_store_free(c);
    gb_pr_curves *pr;
    ck_assert_int_eq(gb_store_pr_curves(s, "run", "pr", NULL, &pr), GB_STORE_ERR_NO_TAG);
    gb_store_close(s);

    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_str_eq(runs->rows[0].status, "running");
    gb_store_free(runs);
    gb_hparam_metric m = {.tag = "loss"};
    ck_assert_int_eq(gb_summary_hparams_config(w, NULL, 0, &m, 1), GB_OK);
    gb_scope_begin();
    ck_assert_int_eq(gb_summary_pr_curve(w, "pr", gb_scalar(GB_F32, 1), gb_scalar(GB_F32, 0.75), 2, NULL, 3),
                     GB_OK);
    gb_scope_end();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_str_eq(runs->rows[0].status, "done");
    gb_store_free(runs);
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert(c->metric_count == 1 && !strcmp(c->metrics[0].tag, "loss"));
    gb_store_free(c);
    ck_assert_int_eq(gb_store_pr_curves(s, "run", "pr", NULL, &pr), GB_STORE_OK);
    ck_assert(pr->count == 1 && pr->rows[0].step == 3);
    ck_assert(pr->rows[0].tp[0] == 1 && pr->rows[0].tp[1] == 0 && pr->rows[0].fn[1] == 1);
    gb_store_free(pr);
    gb_scalar_series *x;   /* what the store held before still reads */
    ck_assert_int_eq(gb_store_scalars(s, "run", "x", NULL, &x), GB_STORE_OK);
    ck_assert_uint_gt(x->count, 0);
    gb_store_free(x);
    gb_store_close(s);
    summary_assert_integrity(db);
}
END_TEST

/* A version-3 store (before hparams and profiles): read as it is (no
 * profiles), then migrated through 3 -> 4 to 5 by the next writer, which
 * can then store a capture. */
START_TEST(test_version_3_store_is_migrated_to_profiles) {
    make_store();
    summary_sql(db, UNDO_VERSION_8 UNDO_VERSION_7 UNDO_VERSION_6 UNDO_VERSION_5 UNDO_VERSION_4 "PRAGMA user_version = 3;");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 3);
    gb_profile_list *list;
    ck_assert_int_eq(gb_store_profiles(s, "run", &list), GB_STORE_OK);
    ck_assert_uint_eq(list->count, 0);
    gb_store_free(list);
    gb_profile_events *ev;
    ck_assert_int_eq(gb_store_profile_events(s, "run", 1, 0, 0, &ev), GB_STORE_ERR_NO_ROW);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' has no profile 1"), "%s",
                  gb_store_last_error());
    gb_store_close(s);
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(gb_store_profiles(s, "run", &list), GB_STORE_OK);
    ck_assert_uint_eq(list->count, 0);
    gb_store_free(list);
    gb_store_close(s);
    summary_sql(db, "INSERT INTO profiles(run_id, wall_time, duration_us, threads, record_count) "
            "VALUES (1, 5, 100, '[\"training\"]', 0)");
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_profiles(s, "run", &list), GB_STORE_OK);
    ck_assert_uint_eq(list->count, 1);
    ck_assert_str_eq(list->rows[0].threads_json, "[\"training\"]");
    gb_store_free(list);
    gb_store_close(s);
}
END_TEST

/* A version-5 store (before embeddings and audio): read as it is (no
 * such tags, and asking for one says so), then migrated to 6 by the next
 * writer, keeping what it held; an embedding and a clip then store. */
START_TEST(test_version_5_store_gains_embeddings_and_audio) {
    make_store();
    summary_sql(db, UNDO_VERSION_8 UNDO_VERSION_7 UNDO_VERSION_6 "PRAGMA user_version = 5;");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 5);
    gb_embeddings *e;
    ck_assert_int_eq(gb_store_embeddings(s, "run", "emb", NULL, &e), GB_STORE_ERR_NO_TAG);
    gb_audio_clips *a;
    ck_assert_int_eq(gb_store_audio(s, "run", "sound", NULL, &a), GB_STORE_ERR_NO_TAG);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' has no audio tag 'sound'"), "%s",
                  gb_store_last_error());
    gb_store_close(s);

    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    gb_scope_begin();
    const float v[4] = {1, 2, 3, 0.5f};
    ck_assert_int_eq(gb_summary_embedding(w, "emb", gb_tensor_from(GB_F32, v, 2, (int64_t[]){2, 2}), NULL,
                                          NULL, NULL, 2), GB_OK);
    ck_assert_int_eq(gb_summary_audio(w, "sound", gb_tensor_from(GB_F32, v, 2, (int64_t[]){1, 4}), 100, 1, 2),
                     GB_OK);
    gb_scope_end();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(gb_store_embeddings(s, "run", "emb", NULL, &e), GB_STORE_OK);
    ck_assert(e->count == 1 && e->rows[0].n == 2 && e->rows[0].dim == 2 && e->rows[0].step == 2);
    gb_store_free(e);
    ck_assert_int_eq(gb_store_audio(s, "run", "sound", NULL, &a), GB_STORE_OK);
    ck_assert(a->count == 1 && a->rows[0].frames == 4 && a->rows[0].clipped == 2);
    gb_store_free(a);
    gb_scalar_series *x;   /* what the store held before still reads */
    ck_assert_int_eq(gb_store_scalars(s, "run", "x", NULL, &x), GB_STORE_OK);
    ck_assert_uint_gt(x->count, 0);
    gb_store_free(x);
    gb_store_close(s);
    summary_assert_integrity(db);
}
END_TEST

/* A version-6 store (before training health): read as it is (no alerts,
 * its health/ figures a heat map all the same), then migrated to 7 by the
 * next writer, which stores the engine's alerts from then on. */
START_TEST(test_version_6_store_gains_health_alerts) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "health/dense/grad_norm", 0.5, 3), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    summary_sql(db, UNDO_VERSION_8 UNDO_VERSION_7 "PRAGMA user_version = 6;");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 6);
    gb_health_alerts *a;
    ck_assert_int_eq(gb_store_health_alerts(s, "run", NULL, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 0);
    gb_store_free(a);
    ck_assert_int_eq(gb_store_health_alerts(s, "nope", NULL, &a), GB_STORE_ERR_NO_RUN);
    gb_health_counts *c;
    ck_assert_int_eq(gb_store_health_counts(s, "run", &c), GB_STORE_OK);
    ck_assert_int_eq(c->total, 0);
    gb_store_free(c);
    gb_health_heatmap *m;
    ck_assert_int_eq(gb_store_health_heatmap(s, "run", "grad_norm", NULL, &m), GB_STORE_OK);
    ck_assert(m->layer_count == 1 && m->column_count == 1 && m->cells[0].value == 0.5);
    gb_store_free(m);
    bool any = false;
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_HEALTH, &any), GB_STORE_OK);
    ck_assert(any);
    gb_store_close(s);

    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    gb_summary_set_default(w);
    gb_health_alert alert = {"dead_units", GB_HEALTH_WARNING, "dense", NULL, 4, 0.75, 0.5,
                             "{\"dead_fraction\":0.75}", "Use LeakyReLU."};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_HEALTH, .wall_time = 5, .message = "dead",
                                 .detail = &alert});
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    ck_assert_int_eq(gb_store_health_alerts(s, "run", NULL, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 1);
    ck_assert_str_eq(a->rows[0].kind, "dead_units");
    ck_assert_str_eq(a->rows[0].figures, "{\"dead_fraction\":0.75}");
    ck_assert_int_eq(a->rows[0].step, 4);
    gb_store_free(a);
    gb_store_close(s);
    summary_assert_integrity(db);
}
END_TEST

/* A version-7 store (before imports kept how far they read): migrated to
 * 8 by the next writer, which then has the table an import marks. */
START_TEST(test_version_7_store_gains_imported_files) {
    make_store();
    summary_sql(db, UNDO_VERSION_8 "PRAGMA user_version = 7;");
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 7);
    gb_store_close(s);
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    ck_assert_int_eq(gb_store_schema_version(s), 8);
    gb_store_close(s);
    summary_sql(db, "INSERT INTO imported_files VALUES (1, 'events.out.tfevents.1', 96, 7, 1.5)");
    summary_assert_integrity(db);
}
END_TEST

START_TEST(test_newer_schema_is_refused) {
    make_store();
    summary_sql(db, "PRAGMA user_version = 99");
    ASSERT_OPEN_FAILS(db, GB_STORE_ERR_NEWER, "has schema version 99, newer than this glassbox");
    gb_summary_writer *w = (gb_summary_writer *)1;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_ERR_IO);
    ck_assert_ptr_null(w);
    ck_assert(strstr(gb_summary_last_error(), "schema version 99, newer"));
}
END_TEST

START_TEST(test_files_that_are_not_stores) {
    char path[400];
    snprintf(path, sizeof path, "%s/missing.db", dir);
    ASSERT_OPEN_FAILS(path, GB_STORE_ERR_NOT_FOUND, "missing.db' does not exist");
    ASSERT_OPEN_FAILS(dir, GB_STORE_ERR_NOT_STORE, "not a glassbox store (a directory)");
    snprintf(path, sizeof path, "%s/text.db", dir);
    write_file(path, "this is not a database, just some text that is long enough to matter\n");
    ASSERT_OPEN_FAILS(path, GB_STORE_ERR_NOT_STORE, "not a glassbox store (not an SQLite database)");
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(path, "run", NULL, &w), GB_ERR_IO);
    ck_assert(strstr(gb_summary_last_error(), "not an SQLite database"));
    snprintf(path, sizeof path, "%s/empty.db", dir);
    write_file(path, "");
    ASSERT_OPEN_FAILS(path, GB_STORE_ERR_NOT_STORE, "not a glassbox store (an empty database)");
    ck_assert_int_eq(gb_summary_writer_open(path, "run", NULL, &w), GB_OK);   /* becomes one */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(path, &s), GB_STORE_OK);
    gb_store_close(s);
    ASSERT_OPEN_FAILS(NULL, GB_STORE_ERR_ARG, "NULL");
}
END_TEST

START_TEST(test_foreign_database_is_left_untouched) {
    char path[400];
    snprintf(path, sizeof path, "%s/other.db", dir);
    summary_sql(path, "CREATE TABLE accounts(id INTEGER, name TEXT); INSERT INTO accounts VALUES (1, 'x')");
    ASSERT_OPEN_FAILS(path, GB_STORE_ERR_NOT_STORE, "an SQLite database of another application");
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(path, "run", NULL, &w), GB_ERR_IO);
    ck_assert(strstr(gb_summary_last_error(), "another application"));
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM sqlite_master), "
                          "(SELECT journal_mode FROM pragma_journal_mode)", -1, &st, NULL);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), "delete");
    sqlite3_finalize(st);
    sqlite3_close(h);
}
END_TEST

START_TEST(test_reader_name_errors) {
    make_store();
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_scalar_series *ser = (gb_scalar_series *)1;
    ck_assert_int_eq(gb_store_scalars(s, "nope", "x", NULL, &ser), GB_STORE_ERR_NO_RUN);
    ck_assert_ptr_null(ser);
    ck_assert(strstr(gb_store_last_error(), "unknown run 'nope'"));
    ck_assert_int_eq(gb_store_scalars(s, "run", "y", NULL, &ser), GB_STORE_ERR_NO_TAG);
    ck_assert(strstr(gb_store_last_error(), "run 'run' has no scalar tag 'y'"));
    gb_histograms *h;
    ck_assert_int_eq(gb_store_histograms(s, "run", "x", NULL, &h), GB_STORE_ERR_NO_TAG);
    ck_assert(strstr(gb_store_last_error(), "has no histogram tag 'x'"));
    ck_assert_int_eq(gb_store_scalars(s, NULL, "x", NULL, &ser), GB_STORE_ERR_ARG);
    ck_assert_int_eq(gb_store_scalars(s, "run", NULL, NULL, &ser), GB_STORE_ERR_ARG);
    ck_assert_int_eq(gb_store_scalars(NULL, "run", "x", NULL, &ser), GB_STORE_ERR_ARG);
    ck_assert_int_eq(gb_store_tags(s, NULL, (gb_summary_kind)77, NULL), GB_STORE_ERR_ARG);
    ck_assert_str_eq(gb_store_status_name(GB_STORE_ERR_NEWER), "GB_STORE_ERR_NEWER");
    gb_store_free(NULL);
    gb_store_close(s);
    gb_store_close(NULL);
}
END_TEST

/* ---- downsampling against brute force ----------------------------------------------------- */

typedef struct point {
    int64_t step;
    double value;
} point;

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Checks one query: rows are disjoint, ordered, within range; each row's
 * statistics equal those of the raw points it spans; all points counted. */
static void check_downsample(gb_store *s, const char *tag, const point *pts, size_t n, int64_t a,
                             int64_t b, size_t budget) {
    gb_query q = {a, b, budget};
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", tag, &q, &ser), GB_STORE_OK);
    size_t in_range = 0;
    for (size_t i = 0; i < n; i++) in_range += pts[i].step >= a && pts[i].step <= b;
    ck_assert_int_eq(ser->total_points, (int64_t)in_range);
    ck_assert_msg(ser->count <= budget, "%zu rows for a budget of %zu", ser->count, budget);
    ck_assert(ser->downsampled == (in_range > budget));
    if (!ser->downsampled) {   /* every point, in step order, ties in write order */
        ck_assert_int_eq(ser->count, in_range);
        point *want = malloc((in_range + 1) * sizeof *want);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)   /* insertion sort: stable, and ranges are small */
            if (pts[i].step >= a && pts[i].step <= b) {
                size_t j = k++;
                for (; j > 0 && want[j - 1].step > pts[i].step; j--) want[j] = want[j - 1];
                want[j] = pts[i];
            }
        for (size_t r = 0; r < k; r++) {
            ck_assert(ser->rows[r].step == want[r].step);
            ck_assert(ser->rows[r].value == want[r].value ||
                      (isnan(ser->rows[r].value) && isnan(want[r].value)));
        }
        free(want);
        gb_store_free(ser);
        return;
    }
    int64_t counted = 0;
    for (size_t r = 0; r < ser->count; r++) {
        const gb_scalar_row *row = &ser->rows[r];
        ck_assert(row->step >= a && row->step_last <= b && row->step <= row->step_last);
        if (r) ck_assert(row->step > ser->rows[r - 1].step_last);
        int64_t cnt = 0, nan = 0, pinf = 0, ninf = 0, finite = 0;
        double mn = INFINITY, mx = -INFINITY, sum = 0;
        for (size_t i = 0; i < n; i++) {
            double v = pts[i].value;
            if (pts[i].step < row->step || pts[i].step > row->step_last) continue;
            cnt++;
            if (isnan(v)) {
                nan++;
            } else if (isinf(v)) {
                pinf += v > 0;
                ninf += v < 0;
            } else {
                finite++;
                mn = fmin(mn, v);
                mx = fmax(mx, v);
                sum += v;
            }
        }
        ck_assert_int_eq(row->count, cnt);
        ck_assert(row->nan_count == nan && row->posinf_count == pinf && row->neginf_count == ninf);
        if (finite) {
            ck_assert(row->min == mn && row->max == mx);
            ck_assert_double_eq_tol(row->mean, sum / (double)finite, 1e-9 * (1 + fabs(sum)));
        } else {
            ck_assert(isnan(row->min) && isnan(row->max));
        }
        counted += cnt;
    }
    ck_assert_int_eq(counted, (int64_t)in_range);
    gb_store_free(ser);
}

START_TEST(test_downsampling_is_exact) {
    gb_summary_options o = {.flush_every_events = 3000};   /* many batches and chunks */
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    enum { N = 20000 };
    point *pts = malloc(N * sizeof *pts);
    size_t n = 0;
    for (int i = 0; i < N; i++) {
        int64_t step = i < 15000 ? i : 15000 + (i - 15000) * 1000;   /* dense, then sparse */
        if (i % 997 == 0) step = (int64_t)(next_random() % 15000);     /* out of order, dupes */
        double v = sin(i / 100.0) + (double)(next_random() % 1000) / 1e4;
        if (i == 7777) v = 1e6;                                        /* a spike */
        if (i % 1201 == 5) v = NAN;
        if (i % 1301 == 6) v = i % 2 ? INFINITY : -INFINITY;
        pts[n++] = (point){step, v};
        ck_assert_int_eq(gb_summary_scalar(w, "noisy", v, step), GB_OK);
    }
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    const int64_t last = 15000 + (N - 15000 - 1) * 1000;
    const struct {
        int64_t a, b;
        size_t budget;
    } cases[] = {
        {GB_STEP_MIN, GB_STEP_MAX, 1000}, {GB_STEP_MIN, GB_STEP_MAX, 1}, {0, last, 7},
        {123, 4567, 100},                 {7000, 8000, 50},             {14990, 15010, 5},
        {-100, 50, 20},                   {100, 100, 3},                {5000, 5099, 100},
        {20000, last, 333},               {16000, 16000, 10},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_downsample(s, "noisy", pts, n, cases[c].a, cases[c].b, cases[c].budget);
    for (int c = 0; c < 25; c++) {   /* random ranges and budgets */
        int64_t a = (int64_t)(next_random() % 16000), b = a + (int64_t)(next_random() % 20000);
        check_downsample(s, "noisy", pts, n, a, b, 1 + next_random() % 400);
    }
    /* the spike survives any budget */
    gb_query q = {GB_STEP_MIN, GB_STEP_MAX, 10};
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", "noisy", &q, &ser), GB_STORE_OK);
    double top = -INFINITY;
    for (size_t r = 0; r < ser->count; r++) top = fmax(top, ser->rows[r].max);
    ck_assert(top == 1e6);
    gb_store_free(ser);
    gb_store_close(s);
    free(pts);
}
END_TEST

START_TEST(test_two_writers_of_one_tag_merge) {
    gb_summary_options o = {.flush_every_events = 500};
    gb_summary_writer *w1, *w2;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w2), GB_OK);
    enum { N = 6000 };
    point *pts = malloc(N * sizeof *pts);
    for (int i = 0; i < N; i++) {
        pts[i] = (point){i, i % 2 ? -i : i};
        ck_assert_int_eq(gb_summary_scalar(i % 2 ? w2 : w1, "x", pts[i].value, i), GB_OK);
        if (i % 1000 == 999) gb_summary_flush(i % 2000 == 999 ? w1 : w2);
    }
    ck_assert_int_eq(gb_summary_writer_close(w1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w2), GB_OK);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", "x", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, N);
    for (int i = 0; i < N; i++) ck_assert(ser->rows[i].step == i && ser->rows[i].value == pts[i].value);
    gb_store_free(ser);
    check_downsample(s, "x", pts, N, GB_STEP_MIN, GB_STEP_MAX, 100);
    check_downsample(s, "x", pts, N, 17, 4444, 64);
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, "run", GB_KIND_SCALAR, &t), GB_STORE_OK);
    ck_assert(t->count == 1 && t->rows[0].count == N && t->rows[0].max_step == N - 1);
    gb_store_free(t);
    gb_store_close(s);
    free(pts);
}
END_TEST

/* ---- streaming and row budgets ------------------------------------------------------------ */

typedef struct collected {
    int64_t steps[16];
    double values[16];
    int n, stop_after;
} collected;

static bool collect_point(void *user, int64_t step, double wall, double value) {
    collected *c = user;
    ck_assert(wall > 0);
    c->steps[c->n] = step;
    c->values[c->n++] = value;
    return c->n != c->stop_after;
}

START_TEST(test_points_stream_in_step_order) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    const int64_t steps[] = {5, 3, 4, 1, 2, 3};
    for (int i = 0; i < 6; i++) gb_summary_scalar(w, "x", 10 + i, steps[i]);
    gb_summary_flush(w);
    gb_summary_scalar(w, "x", 99, 0);   /* a later chunk with an earlier step */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    collected c = {.stop_after = -1};
    ck_assert_int_eq(gb_store_scalar_points(s, "run", "x", GB_STEP_MIN, GB_STEP_MAX, collect_point, &c),
                     GB_STORE_OK);
    ck_assert_int_eq(c.n, 7);
    const int64_t want_steps[] = {0, 1, 2, 3, 3, 4, 5};
    const double want_values[] = {99, 13, 14, 11, 15, 12, 10};   /* step 3: write order */
    for (int i = 0; i < 7; i++)
        ck_assert(c.steps[i] == want_steps[i] && c.values[i] == want_values[i]);
    c = (collected){.stop_after = 2};
    ck_assert_int_eq(gb_store_scalar_points(s, "run", "x", 2, 4, collect_point, &c), GB_STORE_OK);
    ck_assert(c.n == 2 && c.steps[0] == 2 && c.steps[1] == 3);
    ck_assert_int_eq(gb_store_scalar_points(s, "run", "zz", 0, 1, collect_point, &c),
                     GB_STORE_ERR_NO_TAG);
    gb_store_close(s);
}
END_TEST

START_TEST(test_row_budgets_spread_evenly) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    gb_scope_begin();
    for (int i = 0; i < 100; i++) {
        gb_summary_histogram(w, "h", gb_fill(GB_F32, GB_SHAPE(4), i), i);
        gb_summary_text(w, "t", "x", i);
    }
    for (int i = 0; i < 20; i++)
        gb_summary_image(w, "img", gb_zeros(GB_U8, GB_SHAPE(2, 2, 2, 1)), 2, i * 10);
    gb_scope_end();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_query q = {GB_STEP_MIN, GB_STEP_MAX, 10};
    gb_histograms *h;
    ck_assert_int_eq(gb_store_histograms(s, "run", "h", &q, &h), GB_STORE_OK);
    ck_assert_int_eq(h->count, 10);
    ck_assert(h->rows[0].step == 0 && h->rows[9].step == 99 && h->rows[1].step == 11);
    gb_store_free(h);
    q = (gb_query){50, 59, 1};
    gb_texts *t;
    ck_assert_int_eq(gb_store_texts(s, "run", "t", &q, &t), GB_STORE_OK);
    ck_assert(t->count == 1 && t->rows[0].step == 59);   /* the last is kept */
    gb_store_free(t);
    q = (gb_query){GB_STEP_MIN, GB_STEP_MAX, 5};
    gb_images *im;
    ck_assert_int_eq(gb_store_images(s, "run", "img", &q, false, &im), GB_STORE_OK);
    ck_assert_int_eq(im->count, 10);   /* 5 steps, both samples of each */
    ck_assert(im->rows[0].step == 0 && im->rows[1].index == 1 && im->rows[9].step == 190);
    gb_store_free(im);
    gb_distributions *d;
    q = (gb_query){GB_STEP_MIN, GB_STEP_MAX, 0};
    ck_assert_int_eq(gb_store_distributions(s, "run", "h", &q, &d), GB_STORE_OK);
    ck_assert_int_eq(d->count, 100);
    ck_assert(d->rows[7].values[0] == 6.5 && d->rows[7].values[8] == 7.5);   /* constant 7 */
    gb_store_free(d);
    gb_store_close(s);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_store_is_versioned_and_recognised);
    tcase_add_test(tc, test_version_1_store_is_read_then_migrated);
    tcase_add_test(tc, test_version_3_store_is_migrated_to_profiles);
    tcase_add_test(tc, test_version_5_store_gains_embeddings_and_audio);
    tcase_add_test(tc, test_version_6_store_gains_health_alerts);
    tcase_add_test(tc, test_version_2_store_moves_graphs_out_of_details);
    tcase_add_test(tc, test_version_3_store_gains_status_experiment_and_pr_curves);
    tcase_add_test(tc, test_version_7_store_gains_imported_files);
    tcase_add_test(tc, test_newer_schema_is_refused);
    tcase_add_test(tc, test_files_that_are_not_stores);
    tcase_add_test(tc, test_foreign_database_is_left_untouched);
    tcase_add_test(tc, test_reader_name_errors);
    tcase_add_test(tc, test_downsampling_is_exact);
    tcase_add_test(tc, test_two_writers_of_one_tag_merge);
    tcase_add_test(tc, test_points_stream_in_step_order);
    tcase_add_test(tc, test_row_budgets_spread_evenly);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
