/* test_summary_cli.c — `glassbox inspect` and `glassbox export`, run as a user would.
 *
 * Runs the built build/glassbox binary (GB_BUILD_DIR, set by CTest) on a
 * store written here, and on the wrong files: each error gives a non-zero
 * exit and a message naming the problem, and nothing on stdout.
 */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"

static char dir[256], db[300], out_path[300], err_path[300], out[1 << 16], err[4096];

static void read_file(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(buf, 1, n - 1, f);
    buf[len] = 0;
    fclose(f);
}

/* Runs `glassbox args...`; stdout and stderr land in out and err. */
static int glassbox(const char *const *args) {
    const char *build = getenv("GB_BUILD_DIR");
    char exe[512], self[400] = "";
    if (!build) {   /* run by hand: this test lives in <build>/tests/ */
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        strncat(self, "/..", sizeof self - strlen(self) - 1);
        build = self;
    }
    snprintf(exe, sizeof exe, "%s/glassbox", build);
    ck_assert_msg(access(exe, X_OK) == 0, "%s is not built", exe);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr)) _exit(99);
        char *argv[16] = {exe};
        for (int i = 0; args[i] && i < 14; i++) argv[i + 1] = (char *)args[i];
        execv(exe, argv);
        _exit(98);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    read_file(out_path, out, sizeof out);
    read_file(err_path, err, sizeof err);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

#define ASSERT_FAILS(code, part, ...)                                                         \
    do {                                                                                      \
        ck_assert_int_eq(glassbox((const char *const[]){__VA_ARGS__, NULL}), (code));         \
        ck_assert_msg(strstr(err, (part)), "stderr '%s' lacks '%s'", err, (part));            \
        ck_assert_str_eq(out, "");                                                            \
    } while (0)

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_cli");
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run-a", NULL, &w), GB_OK);
    gb_summary_hparam_num(w, "lr", 0.01);
    const double values[] = {0.5, NAN, INFINITY, -INFINITY, 0.1, -2.25e-300};
    for (int i = 0; i < 6; i++) gb_summary_scalar(w, "loss", values[i], i);
    gb_scope_begin();
    gb_summary_histogram(w, "w", gb_ones(GB_F32, GB_SHAPE(3)), 0);
    gb_scope_end();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static void teardown(void) {
    summary_remove_dir(dir);
}

START_TEST(test_inspect_lists_runs_tags_counts) {
    ck_assert_int_eq(glassbox((const char *const[]){"inspect", "--db", db, NULL}), 0);
    ck_assert_msg(strstr(out, "schema version 1): 1 run"), "%s", out);
    ck_assert(strstr(out, "run 'run-a'"));
    ck_assert(strstr(out, "lr=0.01"));
    ck_assert_msg(strstr(out, "scalar     loss                                      6  0..5"), "%s",
                  out);
    ck_assert(strstr(out, "histogram  w                                         1  0..0"));
    ck_assert(strstr(out, "0 traces, 0 numerics alerts, 0 messages"));
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_export_csv_and_json_are_full_and_exact) {
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db", db, "--run", "run-a", "--tag",
                                                    "loss", "--format", "csv", NULL}),
                     0);
    ck_assert(!strncmp(out, "step,wall_time,value\n0,", 23));
    const char *want[] = {",0.5\n", ",nan\n", ",inf\n", ",-inf\n", ",0.1\n", ",-2.25e-300\n"};
    const char *p = out;
    for (int i = 0; i < 6; i++) {
        char head[32];
        snprintf(head, sizeof head, "\n%d,", i);
        p = strstr(p, head);
        ck_assert_msg(p, "no row for step %d in\n%s", i, out);
        const char *eol = strchr(p + 1, '\n');
        ck_assert(!strncmp(eol - strlen(want[i]) + 1, want[i], strlen(want[i])));
    }
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db=" , "x", NULL}), 2);
    char arg[400];
    snprintf(arg, sizeof arg, "--db=%s", db);
    ck_assert_int_eq(glassbox((const char *const[]){"export", arg, "--run", "run-a", "--tag", "loss",
                                                    "--format=json", NULL}),
                     0);
    ck_assert(out[0] == '[' && strstr(out, "\"value\": \"NaN\"") &&
              strstr(out, "\"value\": \"-Infinity\"") && strstr(out, "\"step\": 5,") &&
              strstr(out, "\n]\n"));
}
END_TEST

START_TEST(test_errors_exit_non_zero_with_a_message) {
    char path[400];
    snprintf(path, sizeof path, "%s/missing.db", dir);
    ASSERT_FAILS(1, "glassbox inspect: store '", "inspect", "--db", path);
    ck_assert(strstr(err, "missing.db' does not exist"));
    snprintf(path, sizeof path, "%s/text.db", dir);
    FILE *f = fopen(path, "w");
    fputs("hello, I am a text file and not a database at all, sorry about that\n", f);
    fclose(f);
    ASSERT_FAILS(1, "not a glassbox store (not an SQLite database)", "inspect", "--db", path);
    ASSERT_FAILS(1, "not a glassbox store", "export", "--db", path, "--run", "r", "--tag", "t");
    ASSERT_FAILS(1, "unknown run 'nope'", "export", "--db", db, "--run", "nope", "--tag", "loss");
    ASSERT_FAILS(1, "run 'run-a' has no scalar tag 'zz'", "export", "--db", db, "--run", "run-a",
                 "--tag", "zz");
    ASSERT_FAILS(1, "has no scalar tag 'w'", "export", "--db", db, "--run", "run-a", "--tag", "w");
    ASSERT_FAILS(2, "unknown format 'xml'", "export", "--db", db, "--run", "run-a", "--tag", "loss",
                 "--format", "xml");
    ASSERT_FAILS(2, "usage: glassbox export", "export", "--db", db);
    ASSERT_FAILS(2, "usage: glassbox inspect", "inspect");
    ASSERT_FAILS(2, "unknown argument '--verbose'", "inspect", "--db", db, "--verbose");
    ASSERT_FAILS(2, "--db needs a value", "inspect", "--db");
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "PRAGMA user_version = 7", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    ASSERT_FAILS(1, "schema version 7, newer than this glassbox supports (1)", "inspect", "--db", db);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_inspect_lists_runs_tags_counts);
    tcase_add_test(tc, test_export_csv_and_json_are_full_and_exact);
    tcase_add_test(tc, test_errors_exit_non_zero_with_a_message);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
