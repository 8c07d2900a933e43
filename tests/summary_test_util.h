/* summary_test_util.h — helpers shared by the summary store tests: a
 * private temporary directory holding the store file, its removal, short
 * sleeps, child-process exit codes and SQLite's own integrity check.
 *
 * Each test gets a fresh mkdtemp() directory rather than a fixed path so
 * test files (and ctest -j runs) never share a store by accident. */
#ifndef GB_TEST_SUMMARY_TEST_UTIL_H
#define GB_TEST_SUMMARY_TEST_UTIL_H

#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

/* Creates /tmp/<name>_XXXXXX into dir and sets db to <dir>/store.db (the
 * file itself is left for the code under test to create). */
static inline void summary_temp_store(char *dir, size_t dir_cap, char *db, size_t db_cap,
                                      const char *name) {
    snprintf(dir, dir_cap, "/tmp/%s_XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(db, db_cap, "%s/store.db", dir);
}

/* For char arrays, which is how every test keeps its paths. */
#define SUMMARY_TEMP_STORE(dir, db, name) summary_temp_store(dir, sizeof(dir), db, sizeof(db), name)

/* Removes the directory with the store and SQLite's -wal/-shm side files. */
static inline void summary_remove_dir(const char *dir) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs SQL on the store behind the writer's and reader's backs (a store
 * of an older version, rows of known values). */
static inline void summary_sql(const char *path, const char *stmt) {
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(h, stmt, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
}

static inline void summary_sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits for a child; its exit status, or 128 + the signal that killed it
 * (the shell's convention, so a crash never reads as success). */
static inline int summary_exit_code(pid_t pid) {
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* PRAGMA integrity_check on the store must answer exactly "ok". The busy
 * timeout lets it wait for a writer that is still checkpointing. */
static inline void summary_assert_integrity(const char *db) {
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(h);
}

#endif
