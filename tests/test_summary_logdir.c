/* test_summary_logdir.c — many stores read as one (gb_store_open_logdir):
 * stores found by content under nested directories, runs named by their
 * store's path, queries routed to the store holding the run, merged
 * listings and experiment, stores appearing, growing and disappearing
 * while the handle is open, several patterns and globs, and the errors.
 *
 * The stores are written by the writer (so this test links it); every
 * read goes through the logdir handle. Waits for a change poll
 * gb_store_data_version, as a board's watcher does, with a generous
 * deadline: the test asserts what is seen, never how soon.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_tfevents.h"
#include "run_suite.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_logdir")

/* Writes run `run` into the store at dir/rel with scalar "loss" = base + step
 * for steps 0..n-1, and hparam lr = base when hparam is set. */
static void write_run(const char *rel, const char *run, double base, int n, bool hparam) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    *slash = '/';
    gb_summary_writer *w = NULL;
    ck_assert_msg(gb_summary_writer_open(path, run, NULL, &w) == GB_OK, "%s",
                  gb_summary_last_error());
    if (hparam) ck_assert_int_eq(gb_summary_hparam_num(w, "lr", base), GB_OK);
    for (int s = 0; s < n; s++) ck_assert_int_eq(gb_summary_scalar(w, "loss", base + s, s), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static void write_file(const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static gb_store *open_logdir(void) {
    const char *dirs[] = {dir};
    gb_store *s = NULL;
    ck_assert_msg(gb_store_open_logdir(dirs, 1, &s) == GB_STORE_OK, "%s", gb_store_last_error());
    return s;
}

/* The run names, comma-joined. */
static const char *run_names(gb_store *s) {
    static char out[1024];
    gb_runs *r = NULL;
    ck_assert_msg(gb_store_runs(s, &r) == GB_STORE_OK, "%s", gb_store_last_error());
    out[0] = '\0';
    for (size_t i = 0; i < r->count; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? "," : "",
                 r->rows[i].name);
    gb_store_free(r);
    return out;
}

/* Polls data_version (which drives the rescans) until the run list is
 * `want`; fails after 20 s. */
static void wait_for_runs(gb_store *s, const char *want) {
    for (int i = 0; i < 400; i++) {
        uint64_t v;
        ck_assert_int_eq(gb_store_data_version(s, &v), GB_STORE_OK);
        if (!strcmp(run_names(s), want)) return;
        usleep(50 * 1000);
    }
    ck_assert_str_eq(run_names(s), want);
}

START_TEST(test_stores_found_by_content_and_named_by_path) {
    write_run("a.db", "train", 1, 3, false);
    write_run("sub/b.sqlite", "x", 10, 2, false);
    write_run("sub/b.sqlite", "y", 20, 2, false);
    write_run("sub/deeper/c", "r", 30, 1, false);   /* no extension: found by its header */
    write_file("notes.txt", "not a store");
    write_file("sub/empty.db", "");                 /* named like one, but is not */
    gb_store *s = open_logdir();
    ck_assert_str_eq(run_names(s), "a/train,sub/b/x,sub/b/y,sub/deeper/c/r");
    ck_assert_int_eq(gb_store_schema_version(s), GB_STORE_SCHEMA_VERSION);
    /* What the tabs ask, from what was read of each store. */
    bool any = true;
    for (int t = 0; t < GB_EVENTS_TABLES; t++) {
        ck_assert_int_eq(gb_store_has_events(s, (gb_event_table)t, &any), GB_STORE_OK);
        ck_assert(!any);
    }
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_TABLES, &any), GB_STORE_ERR_ARG);
    ck_assert_str_eq(gb_store_last_error(), "gb_store_has_events: unknown table 4");

    /* A query naming a run reads its store. */
    gb_scalar_series *ser = NULL;
    ck_assert_int_eq(gb_store_scalars(s, "sub/b/y", "loss", NULL, &ser), GB_STORE_OK);
    ck_assert_uint_eq(ser->count, 2);
    ck_assert(ser->rows[0].value == 20.0 && ser->rows[1].value == 21.0);
    gb_store_free(ser);

    /* Tags of every store, runs prefixed, sorted; and of one run. */
    gb_tags *t = NULL;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_SCALAR, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 4);
    ck_assert_str_eq(t->rows[0].run, "a/train");
    ck_assert_str_eq(t->rows[3].run, "sub/deeper/c/r");
    ck_assert_int_eq(t->rows[0].count, 3);
    gb_store_free(t);
    ck_assert_int_eq(gb_store_tags(s, "sub/b/x", GB_KIND_ANY, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 1);
    ck_assert_str_eq(t->rows[0].run, "sub/b/x");
    ck_assert_str_eq(t->rows[0].tag, "loss");
    gb_store_free(t);
    ck_assert_int_eq(gb_store_tags(s, "sub/b/z", GB_KIND_ANY, &t), GB_STORE_ERR_NO_RUN);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(gb_store_last_error(), "unknown run 'sub/b/z'");
    ck_assert_int_eq(gb_store_scalars(s, "train", "loss", NULL, &ser), GB_STORE_ERR_NO_RUN);
    ck_assert_str_eq(gb_store_last_error(), "unknown run 'train'");
    /* The store answers for the run's tag under its own name. */
    ck_assert_int_eq(gb_store_scalars(s, "a/train", "acc", NULL, &ser), GB_STORE_ERR_NO_TAG);
    ck_assert_ptr_nonnull(strstr(gb_store_last_error(), "run 'train' has no scalar tag 'acc'"));
    gb_store_close(s);
}
END_TEST

START_TEST(test_longest_prefix_holding_the_run_wins) {
    /* "m/n/r" is run "n/r" of m.db or run "r" of m/n.db: both exist. */
    write_run("m.db", "n/r", 1, 1, false);
    write_run("m/n.db", "r", 2, 1, false);
    gb_store *s = open_logdir();
    ck_assert_str_eq(run_names(s), "m/n/r,m/n/r");
    gb_scalar_series *ser = NULL;
    ck_assert_int_eq(gb_store_scalars(s, "m/n/r", "loss", NULL, &ser), GB_STORE_OK);
    ck_assert(ser->rows[0].value == 2.0);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

START_TEST(test_experiment_and_summaries_merge_the_stores) {
    write_run("sweep/lr1.db", "trial", 1, 4, true);
    write_run("sweep/lr2.db", "trial", 2, 4, true);
    write_run("other.db", "plain", 5, 1, false);
    gb_store *s = open_logdir();
    gb_scalar_summaries *sum = NULL;
    ck_assert_int_eq(gb_store_scalar_summaries(s, "loss", &sum), GB_STORE_OK);
    ck_assert_uint_eq(sum->count, 3);
    ck_assert_str_eq(sum->rows[0].run, "other/plain");
    ck_assert_str_eq(sum->rows[2].run, "sweep/lr2/trial");
    ck_assert(sum->rows[2].last == 5.0 && sum->rows[2].min == 2.0 && sum->rows[2].max == 5.0);
    gb_store_free(sum);
    gb_experiment *e = NULL;
    ck_assert_int_eq(gb_store_experiment(s, &e), GB_STORE_OK);
    ck_assert(!e->declared);
    ck_assert_uint_eq(e->hparam_count, 1);
    ck_assert_str_eq(e->hparams[0].name, "lr");
    ck_assert_uint_eq(e->metric_count, 1);
    ck_assert_str_eq(e->metrics[0].tag, "loss");
    ck_assert_uint_eq(e->run_count, 2);
    ck_assert_str_eq(e->runs[0].run->name, "sweep/lr1/trial");
    ck_assert_str_eq(e->runs[0].run->hparams[0].value, "1");
    ck_assert(e->runs[1].metrics[0].last == 5.0);
    gb_store_free(e);
    gb_store_close(s);
}
END_TEST

START_TEST(test_stores_appear_grow_and_disappear) {
    write_run("rank0.db", "mnist", 0, 2, false);
    gb_store *s = open_logdir();
    uint64_t v0, v;
    ck_assert_int_eq(gb_store_data_version(s, &v0), GB_STORE_OK);
    ck_assert_str_eq(run_names(s), "rank0/mnist");

    write_run("late/rank1.db", "mnist", 0, 2, false);   /* a store and its directory appear */
    wait_for_runs(s, "late/rank1/mnist,rank0/mnist");
    ck_assert_int_eq(gb_store_data_version(s, &v), GB_STORE_OK);
    ck_assert_uint_ne(v, v0);

    write_run("rank0.db", "mnist_eval", 0, 1, false);   /* a store grows a run */
    wait_for_runs(s, "late/rank1/mnist,rank0/mnist,rank0/mnist_eval");
    /* ... and a series grows: the cached tag counts follow. */
    write_run("rank0.db", "mnist", 2, 5, false);   /* steps 0..4 */
    gb_tags *t = NULL;
    for (int i = 0; i < 400; i++) {
        ck_assert_int_eq(gb_store_data_version(s, &v), GB_STORE_OK);
        ck_assert_int_eq(gb_store_tags(s, "rank0/mnist", GB_KIND_SCALAR, &t), GB_STORE_OK);
        if (t->rows[0].max_step == 4) break;
        gb_store_free(t);
        t = NULL;
        usleep(50 * 1000);
    }
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->rows[0].max_step, 4);
    gb_store_free(t);

    char path[512];
    snprintf(path, sizeof path, "rm -rf '%s/late'", dir);   /* and disappears */
    ck_assert_int_eq(system(path), 0);
    wait_for_runs(s, "rank0/mnist,rank0/mnist_eval");
    gb_scalar_series *ser = NULL;
    ck_assert_int_eq(gb_store_scalars(s, "late/rank1/mnist", "loss", NULL, &ser),
                     GB_STORE_ERR_NO_RUN);
    gb_store_close(s);
}
END_TEST

/* A listing of many stores reads them on several threads, the finished
 * ones as they are, without locks: no side file appears beside them. A
 * store being written is read through its log, its last commit seen. */
START_TEST(test_many_stores_listed_at_once) {
    enum { STORES = 60 };
    char rel[64], path[600];
    for (int i = 0; i < STORES; i++) {
        snprintf(rel, sizeof rel, "many/s_%02d.db", i);
        write_run(rel, "r", i, i + 1, false);
    }
    snprintf(path, sizeof path, "%s/many/live.db", dir);
    gb_summary_writer *live = NULL;
    ck_assert_int_eq(gb_summary_writer_open(path, "w", NULL, &live), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(live, "loss", 7, 0), GB_OK);
    ck_assert_int_eq(gb_summary_flush(live), GB_OK);

    gb_store *s = open_logdir();
    gb_tags *t = NULL;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_SCALAR, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, STORES + 1);
    ck_assert_str_eq(t->rows[0].run, "many/live/w");
    ck_assert_int_eq(t->rows[0].count, 1);
    for (int i = 0; i < STORES; i++) {
        snprintf(rel, sizeof rel, "many/s_%02d/r", i);
        ck_assert_str_eq(t->rows[i + 1].run, rel);
        ck_assert_int_eq(t->rows[i + 1].count, i + 1);
        ck_assert_int_eq(t->rows[i + 1].max_step, i);
    }
    gb_store_free(t);
    for (int i = 0; i < STORES; i++) {
        snprintf(path, sizeof path, "%s/many/s_%02d.db-wal", dir, i);
        ck_assert_msg(access(path, F_OK) != 0, "a listing left %s", path);
    }
    ck_assert_int_eq(gb_summary_writer_close(live), GB_OK);
    gb_store_close(s);
}
END_TEST

/* Appends scalar records loss = base + i at steps first.. (the last one
 * only its first `keep` bytes when keep > 0; skip: bytes of the first
 * already there) to the event file at dir/rel. */
static void append_events(const char *rel, int first, int n, double base, size_t keep, size_t skip) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    gb_tf_buf b = {0};
    for (int i = 0; i < n; i++) gb_tf_put_scalar(&b, 1.7e9 + first + i, first + i, "loss", base + i);
    ck_assert(!b.failed);
    size_t end = keep ? b.len - (b.len / n - keep) : b.len;
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b.data + skip, 1, end - skip, f), end - skip);
    fclose(f);
    gb_tf_buf_free(&b);
}

/* Events the converter has read, over all its conversions. */
static _Atomic size_t converted_events;

/* As `glassbox import --run` does for a board: a file that changed
 * otherwise than by growing fails the conversion (exit status 3), so the
 * logdir converts the directory again whole. */
static bool convert(const char *events, const char *run, const char *out, char *why, size_t n) {
    gb_tfevents_report r;
    if (gb_summary_import_tfevents_run(events, run, out, &r) == GB_OK) {
        converted_events += r.events;
        if (!r.changed) return true;
        snprintf(why, n, "%s", r.notes);
        return false;
    }
    snprintf(why, n, "%s", gb_summary_last_error());
    return false;
}

/* The values of the logdir's run `run`, tag "loss", comma-joined. */
static const char *loss_values(gb_store *s, const char *run) {
    static char out[256];
    gb_scalar_series *ser = NULL;
    out[0] = '\0';
    if (gb_store_scalars(s, run, "loss", NULL, &ser) != GB_STORE_OK) return gb_store_last_error();
    for (size_t i = 0; i < ser->count; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%g", i ? "," : "", ser->rows[i].value);
    gb_store_free(ser);
    return out;
}

/* Polls data_version until run's losses are `want`; fails after 20 s. */
static void wait_for_losses(gb_store *s, const char *run, const char *want) {
    for (int i = 0; i < 400 && strcmp(loss_values(s, run), want); i++) {
        uint64_t v;
        ck_assert_int_eq(gb_store_data_version(s, &v), GB_STORE_OK);
        usleep(50 * 1000);
    }
    ck_assert_str_eq(loss_values(s, run), want);
}

/* With a converter, a directory of event files is a run named by its
 * path, read as its files grow; a torn last record waits for its end;
 * the stores made for it go with the handle. */
START_TEST(test_event_directories_are_runs) {
    converted_events = 0;
    write_run("a.db", "train", 1, 2, false);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/tb/eval' '%s/tb/train'", dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    append_events("tb/eval/events.out.tfevents.1.host", 0, 3, 10, 0, 0);
    append_events("tb/train/events.out.tfevents.1.host", 0, 2, 20, 0, 0);
    append_events("events.out.tfevents.2.host", 0, 1, 30, 0, 0);   /* in the logdir itself: "." */
    gb_store_set_tfevents_converter(convert);
    char tmp[] = "/tmp/gb_logdir_mirror_XXXXXX";   /* where the handle makes its stores */
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char *old_tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);
    gb_store *s = open_logdir();
    ck_assert_str_eq(run_names(s), ".,a/train,tb/eval,tb/train");
    ck_assert_str_eq(loss_values(s, "tb/eval"), "10,11,12");
    ck_assert_str_eq(loss_values(s, "tb/train"), "20,21");
    ck_assert_str_eq(loss_values(s, "."), "30");
    ck_assert_str_eq(loss_values(s, "a/train"), "1,2");
    gb_tags *t = NULL;
    ck_assert_int_eq(gb_store_tags(s, "tb/eval", GB_KIND_SCALAR, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 1);
    ck_assert_str_eq(t->rows[0].run, "tb/eval");
    ck_assert_int_eq(t->rows[0].max_step, 2);
    gb_store_free(t);

    /* Records appended: two whole, the third torn; then its rest. */
    gb_tf_buf one = {0};
    gb_tf_put_scalar(&one, 1.7e9 + 5, 5, "loss", 15);
    size_t half = one.len / 2;
    gb_tf_buf_free(&one);
    append_events("tb/eval/events.out.tfevents.1.host", 3, 3, 13, half, 0);
    wait_for_losses(s, "tb/eval", "10,11,12,13,14");
    append_events("tb/eval/events.out.tfevents.1.host", 5, 1, 15, 0, half);
    wait_for_losses(s, "tb/eval", "10,11,12,13,14,15");
    /* Each conversion read only what the files gained: 3 + 2 + 1 events
     * at first, then the 2 whole records, then the one completed. */
    ck_assert_uint_eq(converted_events, 9);

    /* A file replaced (a rename over it) by a shorter one: the directory
     * is converted anew. */
    append_events("tb/eval/replacement", 0, 2, 40, 0, 0);
    snprintf(cmd, sizeof cmd, "mv '%s/tb/eval/replacement' '%s/tb/eval/events.out.tfevents.1.host'",
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    wait_for_losses(s, "tb/eval", "40,41");

    /* The directory gone, its run goes. */
    snprintf(cmd, sizeof cmd, "rm -r '%s/tb/train'", dir);
    ck_assert_int_eq(system(cmd), 0);
    wait_for_runs(s, ".,a/train,tb/eval");
    gb_store_close(s);
    gb_store_set_tfevents_converter(NULL);
    if (old_tmpdir) setenv("TMPDIR", old_tmpdir, 1);
    else unsetenv("TMPDIR");
    free(old_tmpdir);
    ck_assert_msg(rmdir(tmp) == 0, "the handle left files in %s", tmp);   /* empty: all gone */
}
END_TEST

START_TEST(test_several_patterns_and_globs) {
    write_run("node1/ranks/r0.db", "job", 0, 1, false);
    write_run("node2/ranks/r0.db", "job", 0, 1, false);
    write_run("sweep/t.db", "a", 0, 1, false);
    char node_glob[400], sweep[400];
    snprintf(node_glob, sizeof node_glob, "%s/node*/ranks", dir);
    snprintf(sweep, sizeof sweep, "%s/sweep/", dir);
    const char *patterns[] = {node_glob, sweep};
    gb_store *s = NULL;
    ck_assert_int_eq(gb_store_open_logdir(patterns, 2, &s), GB_STORE_OK);
    char want[1400];
    snprintf(want, sizeof want, "%s/node1/ranks/r0/job,%s/node2/ranks/r0/job,%s/sweep/t/a", dir,
             dir, dir);
    ck_assert_str_eq(run_names(s), want);
    gb_store_close(s);
    /* A pattern that matches nothing yet is fine: the board waits. */
    snprintf(node_glob, sizeof node_glob, "%s/later_*", dir);
    ck_assert_int_eq(gb_store_open_logdir(patterns, 1, &s), GB_STORE_OK);
    ck_assert_str_eq(run_names(s), "");
    write_run("later_1/x.db", "r", 0, 1, false);
    snprintf(want, sizeof want, "%s/later_1/x/r", dir);
    wait_for_runs(s, want);
    gb_store_close(s);
}
END_TEST

START_TEST(test_bad_logdirs_are_named) {
    gb_store *s = (gb_store *)1;
    const char *missing[] = {"/nonexistent/logdir"};
    ck_assert_int_eq(gb_store_open_logdir(missing, 1, &s), GB_STORE_ERR_NOT_FOUND);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(gb_store_last_error(), "logdir '/nonexistent/logdir' does not exist");
    write_file("file.txt", "x");
    char file[400];
    snprintf(file, sizeof file, "%s/file.txt", dir);
    const char *not_dir[] = {file};
    ck_assert_int_eq(gb_store_open_logdir(not_dir, 1, &s), GB_STORE_ERR_NOT_FOUND);
    char want[500];
    snprintf(want, sizeof want, "logdir '%s' is not a directory", file);
    ck_assert_str_eq(gb_store_last_error(), want);
    ck_assert_int_eq(gb_store_open_logdir(missing, 0, &s), GB_STORE_ERR_ARG);
    ck_assert_str_eq(gb_store_last_error(), "gb_store_open_logdir: no directory given");
    const char *empty[] = {""};
    ck_assert_int_eq(gb_store_open_logdir(empty, 1, &s), GB_STORE_ERR_ARG);
    ck_assert_str_eq(gb_store_last_error(), "gb_store_open_logdir: directory 1 is NULL or empty");
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_logdir");
    TCase *tc = tcase_create("logdir");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stores_found_by_content_and_named_by_path);
    tcase_add_test(tc, test_longest_prefix_holding_the_run_wins);
    tcase_add_test(tc, test_experiment_and_summaries_merge_the_stores);
    tcase_add_test(tc, test_stores_appear_grow_and_disappear);
    tcase_add_test(tc, test_many_stores_listed_at_once);
    tcase_add_test(tc, test_event_directories_are_runs);
    tcase_add_test(tc, test_several_patterns_and_globs);
    tcase_add_test(tc, test_bad_logdirs_are_named);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
