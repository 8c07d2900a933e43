/* test_summary_crash.c — a writer killed with SIGKILL loses nothing old.
 *
 * A child process writes scalars (and some histograms and text) as fast
 * as it can; the parent kills it with SIGKILL at a random moment, a dozen
 * times, each time in a new run of the same store file (so every trial
 * also starts on the debris of the previous one). After each kill:
 * PRAGMA integrity_check is "ok", the run's points are exactly steps
 * 0..M-1 with their values (a committed prefix: no holes, no duplicates),
 * and every point enqueued more than the flush interval before the kill
 * is among them. The child stamps its progress into shared memory.
 */
#include <check.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"

enum {
    TRIALS = 12,
    FLUSH_MS = 200,         /* the flush interval under test */
    STAMP_EVERY = 1024,     /* steps between progress stamps */
    MAX_STAMPS = 1 << 16,
};

typedef struct progress {
    atomic_int ready;
    atomic_llong stamps;                 /* stamps written so far */
    atomic_llong stamp_ns[MAX_STAMPS];   /* when step k*STAMP_EVERY was enqueued */
} progress;

static char dir[256], db[300];
static progress *shared;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The child: write until killed. */
static void writer_child(const char *run) {
    gb_summary_options o = {.flush_every_events = 1000, .flush_every_ms = FLUSH_MS,
                            .max_queue_events = 4000};
    gb_summary_writer *w;
    if (gb_summary_writer_open(db, run, &o, &w) != GB_OK) {
        fprintf(stderr, "child: %s\n", gb_summary_last_error());
        _exit(3);
    }
    atomic_store(&shared->ready, 1);
    for (int64_t step = 0;; step++) {
        if (gb_summary_scalar(w, "x", (double)step, step) != GB_OK) _exit(4);
        if (step % STAMP_EVERY == 0 && step / STAMP_EVERY < MAX_STAMPS) {
            atomic_store(&shared->stamp_ns[step / STAMP_EVERY], now_ns());
            atomic_store(&shared->stamps, step / STAMP_EVERY + 1);
        }
        if (step % 5000 == 0) {
            gb_scope_begin();
            gb_summary_histogram(w, "h", gb_fill(GB_F32, GB_SHAPE(64), (double)step), step);
            gb_summary_text(w, "t", "still alive", step);
            gb_scope_end();
        }
    }
}

static void integrity_ok(void) {
    if (access(db, F_OK) != 0) return;   /* killed before the file was created */
    summary_assert_integrity(db);
}

typedef struct prefix {
    int64_t next;   /* the step expected next */
    bool ok;
} prefix;

static bool check_point(void *user, int64_t step, double wall, double value) {
    prefix *p = user;
    if (step != p->next || value != (double)step || wall <= 0) {
        p->ok = false;
        return false;
    }
    p->next++;
    return true;
}

/* The points committed for run: must be 0..M-1; returns M (-1 if no run). */
static int64_t committed_prefix(const char *run) {
    gb_store *s;
    gb_store_status st = gb_store_open(db, &s);
    if (st == GB_STORE_ERR_NOT_STORE || st == GB_STORE_ERR_NOT_FOUND)
        return -1;   /* killed before the schema was committed */
    ck_assert_msg(st == GB_STORE_OK, "%s", gb_store_last_error());
    prefix p = {0, true};
    st = gb_store_scalar_points(s, run, "x", GB_STEP_MIN, GB_STEP_MAX, check_point, &p);
    gb_store_close(s);
    if (st == GB_STORE_ERR_NO_RUN || st == GB_STORE_ERR_NO_TAG) return -1;
    ck_assert_msg(st == GB_STORE_OK, "%s", gb_store_last_error());
    ck_assert_msg(p.ok, "%s: the committed points are not steps 0..M-1 (broke at %lld)", run,
                  (long long)p.next);
    return p.next;
}

static void trial(int t, bool early) {
    char run[32];
    snprintf(run, sizeof run, "crash-%d", t);
    memset(shared, 0, sizeof *shared);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) writer_child(run);
    if (early) {
        summary_sleep_ms(rand() % 30);   /* while opening: maybe mid-schema, mid-run-creation */
    } else {
        for (int i = 0; i < 10000 && !atomic_load(&shared->ready); i++) summary_sleep_ms(1);
        ck_assert_msg(atomic_load(&shared->ready), "the writer never became ready");
        summary_sleep_ms(20 + rand() % 400);
    }
    int64_t killed_at = now_ns();
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the writer died on its own (status %d)", status);

    integrity_ok();
    int64_t m = committed_prefix(run);
    int64_t stamps = atomic_load(&shared->stamps);
    int64_t must_have = 0;   /* steps enqueued more than FLUSH_MS before the kill */
    for (int64_t k = 0; k < stamps; k++)
        if (atomic_load(&shared->stamp_ns[k]) < killed_at - (int64_t)FLUSH_MS * 1000000)
            must_have = k * STAMP_EVERY + 1;
    ck_assert_msg((m < 0 ? 0 : m) >= must_have, "trial %d: %lld points committed, but %lld were older than %d ms",
                  t, (long long)m, (long long)must_have, FLUSH_MS);
    if (!early) ck_assert_int_ge(m, 0);
    int64_t k = m > 0 ? (m - 1) / STAMP_EVERY : 0;   /* how old the newest committed point was */
    double lag_ms = m > 0 && k < stamps ? (double)(killed_at - atomic_load(&shared->stamp_ns[k])) / 1e6 : 0;
    fprintf(stderr, "crash trial %2d: killed after %lld steps, %lld committed (up to ~%.0f ms "
                    "before the kill), %lld required\n",
            t, (long long)(stamps * STAMP_EVERY), (long long)m, lag_ms, (long long)must_have);
}

START_TEST(test_sigkill_loses_nothing_older_than_the_flush_interval) {
    srand((unsigned)time(NULL));
    for (int t = 0; t < TRIALS; t++) trial(t, t == 0 || t == 5);
    /* and the store still takes a normal writer afterwards */
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "after", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "x", 0, 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(committed_prefix("after"), 1);
    integrity_ok();
}
END_TEST

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_crash");
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(shared != MAP_FAILED);
}

static void teardown(void) {
    munmap(shared, sizeof *shared);
    summary_remove_dir(dir);
}

int main(void) {
    Suite *s = suite_create("summary_crash");
    TCase *tc = tcase_create("crash");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sigkill_loses_nothing_older_than_the_flush_interval);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
