/* test_util.h — helpers shared by the Check test files: the fixtures that
 * give each test a fresh scope and a clean error state, the assertions on
 * the sticky error (exact code, key message part or the whole message),
 * and (from run_suite.h) the runner every main() uses.
 *
 * Everything is static inline so a test file pays only for what it uses
 * and unused helpers raise no -Wunused-function warning. The error
 * helpers clear the error after checking it, so the next call in the same
 * test starts from a clean state (errors are sticky: a left-over error
 * would make every later op fail). */
#ifndef GB_TEST_UTIL_H
#define GB_TEST_UTIL_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "run_suite.h"

/* ---- fixtures --------------------------------------------------------------------- */

/* Each test runs in its own scope, so tensors it makes are freed by the
 * teardown even when an assertion fails half way (checked fixtures run in
 * the forked child too). */
static inline void scope_setup(void) {
    gb_clear_error();
    gb_scope_begin();
}

static inline void scope_teardown(void) {
    gb_scope_end();
    gb_clear_error();
}

/* Layer tests also need the Keras-like global state reset: layer names
 * restart at dense, dense_1, ... and the initializer sequence restarts
 * from seed 0, so expected weights are the same whatever ran before. */
static inline void nn_seeded_setup(void) {
    gb_clear_error();
    gb_nn_clear_session();
    gb_nn_set_seed(0);
    gb_scope_begin();
}

/* A fresh directory per test, under /tmp, removed with its contents by
 * test_dir_remove (for tests of files: caches, checkpoints). */
static inline char *test_dir(void) {
    static char dir[64];
    return dir;
}

static inline void test_dir_create(void) {
    snprintf(test_dir(), 64, "/tmp/gb-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(test_dir()));
}

static inline void test_dir_remove(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", test_dir());
    ck_assert_int_eq(system(cmd), 0);
}

/* The fixture of tests of files: a seeded nn scope and a fresh directory. */
static inline void nn_dir_setup(void) {
    nn_seeded_setup();
    test_dir_create();
}

static inline void nn_dir_teardown(void) {
    test_dir_remove();
    scope_teardown();
}

/* "<test_dir()>/<name>", from a ring of 8 buffers (several in one call). */
static inline const char *in_test_dir(const char *name) {
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 256, "%s/%s", test_dir(), name);
    return p;
}

/* The fixture of checkpoint tests: nn_dir_setup, and ckpt_path() "<dir>/ckpt". */
static inline char *ckpt_path(void) {
    static char path[128];
    return path;
}

static inline void ckpt_dir_setup(void) {
    nn_dir_setup();
    snprintf(ckpt_path(), 128, "%s/ckpt", test_dir());
}

static inline void ckpt_dir_teardown(void) { nn_dir_teardown(); }

/* ---- the sticky error ------------------------------------------------------------- */

/* Asserts that an error is set, with status `code` and `part` somewhere in
 * its message; returns it for further checks and leaves it set. */
static inline const gb_error *check_error(gb_status code, const char *part) {
    const gb_error *e = gb_last_error();
    ck_assert_msg(e != NULL, "expected an error containing '%s'", part);
    ck_assert_msg(e->code == code, "code %s, expected %s: %s", gb_status_name(e->code),
                  gb_status_name(code), e->message);
    ck_assert_msg(strstr(e->message, part), "message '%s' lacks '%s'", e->message, part);
    return e;
}

/* check_error(), then clears the error. */
static inline void assert_error(gb_status code, const char *part) {
    check_error(code, part);
    gb_clear_error();
}

/* Asserts an error with status `code` whose whole message is the text fmt
 * makes (printf-style), then clears it. */
static inline void assert_error_text(gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void assert_error_text(gb_status code, const char *fmt, ...) {
    char want[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    const gb_error *e = check_error(code, "");
    ck_assert_str_eq(e->message, want);
    gb_clear_error();
}

/* For ops returning a tensor: a failed op returns NULL and sets the error. */
static inline void expect_error(gb_tensor *t, gb_status code, const char *part) {
    ck_assert_ptr_null(t);
    ck_assert(!gb_ok());
    assert_error(code, part);
}

/* ---- trace reasons ------------------------------------------------------------------ */

/* A trace reason carries the trace's cost ("; traced in 0.42 ms"). The
 * expected reason is written with COST where the cost stands, filled from
 * the function's own stats, so the whole reason is still compared word
 * for word without asserting a time. */
#define COST "; traced in %.2f ms"
static inline void assert_reason(const gb_function *f, const char *fmt) {
    char want[1400];
    snprintf(want, sizeof want, fmt, gb_function_get_stats(f).last_trace_ms);
    ck_assert_str_eq(gb_function_last_trace_reason(f), want);
}

#endif
