/* test_summary_concurrency.c — four writer processes and a reader at once.
 *
 * Four processes start together on a store file that does not exist yet
 * (so they also race to create it). Each writes its own run, and all of
 * them write one shared run and tag with interleaved steps, plus
 * histograms and text, with small batches so their transactions contend
 * for the write lock. A reader process polls meanwhile: tags, downsampled
 * series and data_version must only ever grow. At the end every event of
 * every writer is there, exactly once, and the rollups agree.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"

enum { WRITERS = 4, POINTS = 30000, SHARED_POINTS = 10000, HIST_EVERY = 1000 };

static char dir[256], db[300], stop_file[320];

/* Child i: its own run and its quarter of the shared run. Exit 0 on success. */
static int writer_process(int i) {
    gb_summary_options o = {.flush_every_events = 500, .flush_every_ms = 20};
    gb_summary_writer *w;
    char run[32];
    snprintf(run, sizeof run, "proc-%d", i);
    if (gb_summary_writer_open(db, run, &o, &w) != GB_OK) goto fail;
    gb_summary_writer *shared;
    if (gb_summary_writer_open(db, "shared", &o, &shared) != GB_OK) goto fail;
    if (gb_summary_hparam_num(w, "index", i) != GB_OK) goto fail;
    for (int64_t step = 0; step < POINTS; step++) {
        if (gb_summary_scalar(w, "x", (double)(step * 10 + i), step) != GB_OK) goto fail;
        if (step < SHARED_POINTS &&
            gb_summary_scalar(shared, "y", (double)(step * WRITERS + i), step * WRITERS + i) != GB_OK)
            goto fail;
        if (step % HIST_EVERY == 0) {
            gb_scope_begin();
            gb_status st = gb_summary_histogram(w, "h", gb_fill(GB_F32, GB_SHAPE(8), (double)i), step);
            gb_scope_end();
            if (st != GB_OK || gb_summary_text(shared, "log", run, step) != GB_OK) goto fail;
        }
    }
    if (gb_summary_writer_close(shared) != GB_OK || gb_summary_writer_close(w) != GB_OK) goto fail;
    return 0;
fail:
    fprintf(stderr, "writer %d: %s\n", i, gb_summary_last_error());
    return 1;
}

/* The reader: whatever it sees only grows, until the stop file appears. */
static int reader_process(void) {
    gb_store *s = NULL;
    int64_t last_total = 0, polls = 0;
    uint64_t last_version = 0;
    for (bool stopping = false; !stopping;) {
        stopping = access(stop_file, F_OK) == 0;   /* the writers are done: one last poll */
        if (!s && gb_store_open(db, &s) != GB_STORE_OK) {   /* not created yet */
            s = NULL;
            summary_sleep_ms(5);
            continue;
        }
        uint64_t v;
        if (gb_store_data_version(s, &v) != GB_STORE_OK) goto fail;
        if (v == last_version && polls > 0 && !stopping) {
            summary_sleep_ms(2);
            continue;
        }
        last_version = v;
        gb_query q = {GB_STEP_MIN, GB_STEP_MAX, 200};
        gb_scalar_series *ser;
        gb_store_status st = gb_store_scalars(s, "shared", "y", &q, &ser);
        if (st == GB_STORE_ERR_NO_RUN || st == GB_STORE_ERR_NO_TAG) {
            if (stopping) break;   /* impossible once the writers are done */
            continue;
        }
        if (st != GB_STORE_OK) goto fail;
        int64_t total = 0;
        for (size_t r = 0; r < ser->count; r++) total += ser->rows[r].count;
        bool bad = total != ser->total_points || total < last_total || ser->count > 200;
        gb_store_free(ser);
        if (bad) {
            fprintf(stderr, "reader: inconsistent series (%lld after %lld)\n", (long long)total,
                    (long long)last_total);
            return 1;
        }
        last_total = total;
        polls++;
    }
    gb_store_close(s);
    fprintf(stderr, "reader: %lld consistent polls, last saw %lld shared points\n", (long long)polls,
            (long long)last_total);
    return polls > 0 && last_total == (int64_t)WRITERS * SHARED_POINTS ? 0 : 1;
fail:
    fprintf(stderr, "reader: %s\n", gb_store_last_error());
    return 1;
}

static pid_t spawn(int (*fn)(int), int arg) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) _exit(fn(arg));
    return pid;
}

static int run_reader(int unused) {
    (void)unused;
    return reader_process();
}

/* The series must be steps 0..n-1 with values step * mult + offset. */
static void check_series(gb_store *s, const char *run, const char *tag, int64_t n, int mult,
                         int offset) {
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, run, tag, NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, n);
    for (int64_t k = 0; k < n; k++)
        ck_assert_msg(ser->rows[k].step == k && ser->rows[k].value == (double)(k * mult + offset),
                      "%s/%s point %lld: step %lld value %g", run, tag, (long long)k,
                      (long long)ser->rows[k].step, ser->rows[k].value);
    gb_store_free(ser);
    gb_query q = {GB_STEP_MIN, GB_STEP_MAX, 100};
    ck_assert_int_eq(gb_store_scalars(s, run, tag, &q, &ser), GB_STORE_OK);
    ck_assert(ser->downsampled && ser->total_points == n);
    gb_store_free(ser);
}

START_TEST(test_four_writers_and_a_reader) {
    pid_t reader = spawn(run_reader, 0);
    pid_t writers[WRITERS];
    for (int i = 0; i < WRITERS; i++) writers[i] = spawn(writer_process, i);
    for (int i = 0; i < WRITERS; i++) ck_assert_int_eq(summary_exit_code(writers[i]), 0);
    FILE *f = fopen(stop_file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(summary_exit_code(reader), 0);

    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_int_eq(runs->count, WRITERS + 1);
    gb_store_free(runs);
    char run[32];
    for (int i = 0; i < WRITERS; i++) {
        snprintf(run, sizeof run, "proc-%d", i);
        check_series(s, run, "x", POINTS, 10, i);
        gb_histograms *h;
        ck_assert_int_eq(gb_store_histograms(s, run, "h", NULL, &h), GB_STORE_OK);
        ck_assert_int_eq(h->count, POINTS / HIST_EVERY);
        ck_assert(h->rows[0].min == i && h->rows[0].count == 8);
        gb_store_free(h);
    }
    check_series(s, "shared", "y", (int64_t)WRITERS * SHARED_POINTS, 1, 0);
    gb_texts *t;
    ck_assert_int_eq(gb_store_texts(s, "shared", "log", NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, WRITERS * (POINTS / HIST_EVERY));
    gb_store_free(t);
    gb_store_close(s);
    summary_assert_integrity(db);
}
END_TEST

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_conc");
    snprintf(stop_file, sizeof stop_file, "%s/stop", dir);
}

static void teardown(void) {
    summary_remove_dir(dir);
}

int main(void) {
    Suite *s = suite_create("summary_concurrency");
    TCase *tc = tcase_create("concurrency");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_four_writers_and_a_reader);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
