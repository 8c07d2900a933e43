/* test_summary_readonly.c — a reader reads stores it may not write, and
 * leaves nothing behind.
 *
 * The stores are written by the writer; each reader runs in a child
 * process that really lacks the permissions: tests run as root, which
 * ignores file modes, so a root child first becomes nobody (65534). Cases:
 *   - a finished store in a read-only directory (it once failed with
 *     "attempt to write a readonly database": SQLite could not create the
 *     WAL side files): read, and no -wal/-shm created, the file unchanged;
 *   - a read-only store in a writable, shared directory: read without
 *     leaving side files owned by the reader beside someone else's store;
 *   - a live writer's store in a read-only directory: read through the
 *     writer's side files, its later commits seen by the same handle;
 *   - a write-ahead log without its index where none can be made: a clear
 *     error, not the store silently missing its last commits.
 */
#include <check.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "run_suite.h"
#include "summary_test_util.h"

static char dir[256], db[300];   /* db may become a copy elsewhere in dir */

static void setup(void) { SUMMARY_TEMP_STORE(dir, db, "gb_summary_readonly"); }

static void teardown(void) {
    char cmd[400];   /* the tests take write permission away; give it back to remove */
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    summary_remove_dir(dir);
}

static void write_points(gb_summary_writer *w, int64_t first, int64_t last) {
    for (int64_t step = first; step <= last; step++)
        ck_assert_int_eq(gb_summary_scalar(w, "x", (double)step, step), GB_OK);
    ck_assert_int_eq(gb_summary_flush(w), GB_OK);
}

/* A finished store: run "r", scalars "x" at steps 0..last; the writer
 * closed (and so removed its side files). */
static void write_store(int64_t last) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "r", NULL, &w), GB_OK);
    write_points(w, 0, last);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static bool exists(const char *suffix) {
    char path[400];
    snprintf(path, sizeof path, "%s%s", db, suffix);
    return access(path, F_OK) == 0;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* ---- the unprivileged child ---------------------------------------------------------------- */

/* A reader process: `go` it reads (a byte from the parent: go on), `ack`
 * it writes (a byte: a stage is done), `result` carries its verdict. */
typedef struct reader_child {
    pid_t pid;
    int go, ack, result;
} reader_child;

/* What the child checks: NULL when all is well, else what went wrong. */
typedef const char *(*reader_body)(int go, int ack);

static const char *become_unprivileged(void) {
    if (geteuid() != 0) return NULL;
    if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) return "cannot become nobody";
    return geteuid() == 0 ? "still root" : NULL;
}

static reader_child spawn_reader(reader_body body) {
    int go[2], ack[2], result[2];
    ck_assert(!pipe(go) && !pipe(ack) && !pipe(result));
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(go[1]), close(ack[0]), close(result[0]);
        const char *why = become_unprivileged();
        if (!why) why = body(go[0], ack[1]);
        if (why && write(result[1], why, strlen(why)) < 0) _exit(2);
        _exit(0);
    }
    close(go[0]), close(ack[1]), close(result[1]);
    return (reader_child){pid, go[1], ack[0], result[0]};
}

/* Waits for the child; fails the test with its verdict unless all was well. */
static void finish_reader(reader_child *c) {
    char why[1200] = "";
    close(c->go);
    ssize_t n = read(c->result, why, sizeof why - 1);
    why[n > 0 ? n : 0] = '\0';
    close(c->result);
    close(c->ack);
    ck_assert_int_eq(summary_exit_code(c->pid), 0);
    ck_assert_msg(why[0] == '\0', "reader: %s", why);
}

static void run_reader(reader_body body) {
    reader_child c = spawn_reader(body);
    finish_reader(&c);
}

static void signal_fd(int fd) { ck_assert_int_eq(write(fd, "!", 1), 1); }

static bool wait_fd(int fd) {
    char c;
    return read(fd, &c, 1) == 1;
}

/* ---- what the child does ------------------------------------------------------------------ */

static char message[1200];

/* NULL when run "r" tag "x" reads back as steps 0..last through s. */
static const char *check_points(gb_store *s, int64_t last) {
    gb_scalar_series *x;
    if (gb_store_scalars(s, "r", "x", NULL, &x) != GB_STORE_OK) {
        snprintf(message, sizeof message, "%s", gb_store_last_error());
        return message;
    }
    bool ok = x->count == (size_t)last + 1 && x->rows[last].step == last &&
              x->rows[last].value == (double)last;
    size_t count = x->count;
    gb_store_free(x);
    if (ok) return NULL;
    snprintf(message, sizeof message, "read %zu points, expected %lld", count,
             (long long)last + 1);
    return message;
}

static const char *open_failed(void) {
    snprintf(message, sizeof message, "gb_store_open: %s", gb_store_last_error());
    return message;
}

/* Opens the store, reads steps 0..2 and closes it. */
static const char *read_finished(int go, int ack) {
    (void)go, (void)ack;
    gb_store *s;
    if (gb_store_open(db, &s) != GB_STORE_OK) return open_failed();
    gb_runs *runs;
    const char *why = gb_store_runs(s, &runs) != GB_STORE_OK ? "gb_store_runs failed"
                      : runs->count != 1                    ? "not one run"
                                                            : check_points(s, 2);
    if (!why) gb_store_free(runs);
    gb_store_close(s);
    return why;
}

/* Opens the store when told, reads 0..1, then, when told again, 0..2
 * through the same handle. */
static const char *read_live(int go, int ack) {
    if (!wait_fd(go)) return "the parent never said go";
    gb_store *s;
    if (gb_store_open(db, &s) != GB_STORE_OK) return open_failed();
    uint64_t before = 0, after = 0;
    const char *why = check_points(s, 1);
    if (!why && gb_store_data_version(s, &before) != GB_STORE_OK) why = "data_version failed";
    if (!why && write(ack, "!", 1) != 1) why = "cannot signal the parent";
    if (!why && !wait_fd(go)) why = "the parent never wrote again";
    if (!why) why = check_points(s, 2);
    if (!why && (gb_store_data_version(s, &after) != GB_STORE_OK || after == before))
        why = "data_version did not move";
    gb_store_close(s);
    return why;
}

static const char *open_expecting_error(int go, int ack) {
    (void)go, (void)ack;
    gb_store *s;
    if (gb_store_open(db, &s) == GB_STORE_OK) {
        gb_store_close(s);
        return "the store opened without its log's index";
    }
    snprintf(message, sizeof message, "store '%s': its write-ahead log '%s-wal' needs the index "
             "file '%s-shm', which is missing and cannot be created here (the directory or the "
             "store is read-only); copy the store with its -wal file to a writable directory",
             db, db, db);
    if (strcmp(gb_store_last_error(), message)) {
        snprintf(message, sizeof message, "unexpected message: %s", gb_store_last_error());
        return message;
    }
    return NULL;
}

/* ---- tests ---------------------------------------------------------------------------------- */

START_TEST(finished_store_in_a_read_only_directory) {
    write_store(2);
    ck_assert(!exists("-wal") && !exists("-shm"));
    size_t n0, n1;
    char *before = slurp(db, &n0);
    ck_assert_int_eq(chmod(db, 0444), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    run_reader(read_finished);
    ck_assert_msg(!exists("-wal") && !exists("-shm"), "reading created side files");
    char *after = slurp(db, &n1);
    ck_assert(n0 == n1 && !memcmp(before, after, n0));
    free(before);
    free(after);
}
END_TEST

START_TEST(read_only_store_in_a_shared_directory) {
    /* Side files the reader made here would be its own, and could keep
     * the store's owner from writing it again. */
    write_store(2);
    ck_assert_int_eq(chmod(db, 0444), 0);
    ck_assert_int_eq(chmod(dir, 01777), 0);
    run_reader(read_finished);
    ck_assert_msg(!exists("-wal") && !exists("-shm"), "reading created side files");
}
END_TEST

START_TEST(live_writer_in_a_read_only_directory) {
    write_store(0);
    /* The reader forks before this process opens a connection: SQLite
     * connections must not cross a fork. */
    reader_child c = spawn_reader(read_live);
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "r", NULL, &w), GB_OK);
    write_points(w, 1, 1);
    ck_assert(exists("-wal") && exists("-shm"));
    ck_assert_int_eq(chmod(dir, 0555), 0);
    signal_fd(c.go);
    ck_assert_msg(wait_fd(c.ack), "the reader stopped early");
    write_points(w, 2, 2);
    signal_fd(c.go);
    finish_reader(&c);
    ck_assert_int_eq(chmod(dir, 0700), 0);   /* the writer removes its side files */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}
END_TEST

static void copy_file(const char *from, const char *to) {
    size_t n;
    char *data = slurp(from, &n);
    FILE *f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(data);
}

START_TEST(log_without_its_index_is_a_clear_error) {
    /* A copy of a live store and its log, without the -shm index, in a
     * directory where no index can be made. */
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "r", NULL, &w), GB_OK);
    write_points(w, 0, 2);
    char copy_dir[280], from[320], to[320];
    snprintf(copy_dir, sizeof copy_dir, "%s/copy", dir);
    ck_assert_int_eq(mkdir(copy_dir, 0700), 0);
    for (int i = 0; i < 2; i++) {
        const char *suffix = i ? "-wal" : "";
        snprintf(from, sizeof from, "%s%s", db, suffix);
        snprintf(to, sizeof to, "%s/store.db%s", copy_dir, suffix);
        copy_file(from, to);
    }
    struct stat sb;
    ck_assert(stat(to, &sb) == 0 && sb.st_size > 0);   /* the log holds the points */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    snprintf(db, sizeof db, "%s/store.db", copy_dir);
    ck_assert_int_eq(chmod(copy_dir, 0555), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    run_reader(open_expecting_error);
    ck_assert(!exists("-shm"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_readonly");
    TCase *tc = tcase_create("readonly");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, finished_store_in_a_read_only_directory);
    tcase_add_test(tc, read_only_store_in_a_shared_directory);
    tcase_add_test(tc, live_writer_in_a_read_only_directory);
    tcase_add_test(tc, log_without_its_index_is_a_clear_error);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
