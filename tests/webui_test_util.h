/* webui_test_util.h — helpers shared by the dashboard's Check tests: the
 * stores they have written before the suite runs and while it runs (by
 * helper programs: these tests link no writer), starting a board on a
 * store, GETs with an expected status, and the JSON error every bad
 * request gets. The HTTP client itself is webui_http.h. */
#ifndef GB_TEST_WEBUI_TEST_UTIL_H
#define GB_TEST_WEBUI_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_board.h"
#include "run_program.h"
#include "webui_http.h"

/* Runs `webui_fixtures args...` (tests/webui_fixtures.c), which writes a
 * store. Called from main(), before the suite and outside any test, so a
 * failure cannot be a Check assertion: say what failed and stop. */
static inline void webui_write_fixture(const char *const *args) {
    int rc = run_program("tests/webui_fixtures", args, NULL, NULL);
    if (rc != 0) {
        fprintf(stderr, "store setup failed: webui_fixtures %s exited with %d\n", args[0], rc);
        exit(1);
    }
}

/* Inside a test: `append_scalar DB RUN TAG STEP VALUE COUNT` (COUNT "0"
 * only opens the run) and `append_alert DB RUN STEP OP_TYPE OP_NAME`
 * (tests/browser/), each a writer that flushes and closes before it exits. */
static inline void webui_append_scalar(const char *db, const char *run, const char *tag,
                                       const char *step, const char *value, const char *count) {
    ck_assert_int_eq(run_program("tests/append_scalar",
                                 (const char *const[]){db, run, tag, step, value, count, NULL},
                                 NULL, NULL), 0);
}

static inline void webui_append_alert(const char *db, const char *run, const char *step,
                                      const char *op_type, const char *op_name) {
    ck_assert_int_eq(run_program("tests/append_alert",
                                 (const char *const[]){db, run, step, op_type, op_name, NULL},
                                 NULL, NULL), 0);
}

/* Removes a store file and SQLite's -wal/-shm side files. */
static inline void webui_remove_store(const char *path) {
    static const char *const sides[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, sides[i]);
        unlink(p);
    }
}

/* Starts a board on `db` at an ephemeral port (stored in *port). */
static inline gb_board *webui_start_board(const char *db, int *port) {
    gb_board *board = gb_board_start(db, NULL, 0, NULL);
    ck_assert_msg(board != NULL, "gb_board_start: %s", gb_board_last_error());
    *port = gb_board_port(board);
    ck_assert_int_gt(*port, 0);
    return board;
}

/* GET path, expecting `status`; returns the body (caller frees). Check
 * caps message sizes, so only the start of a long body is shown. */
static inline char *webui_get_expect(int port, const char *path, int status) {
    http_response r = http_get(port, path);
    ck_assert_msg(r.status == status, "GET %s: status %d, expected %d; body: %.2000s", path,
                  r.status, status, r.body ? r.body : "");
    return r.body;
}

#define ASSERT_HAS(body, text) \
    ck_assert_msg(strstr((body), (text)), "missing %s in %.3000s", (text), (body))

/* A request the API must refuse, and a key part of the error message. */
typedef struct bad_case {
    const char *path;
    int status;
    const char *message;
} bad_case;

/* Every refusal is JSON: {"error":"<message>",...,"status":<code>}, so the
 * dashboard can show the reason whatever went wrong. */
static inline void webui_assert_json_error(int port, const bad_case *c) {
    http_response r = http_get(port, c->path);
    ck_assert_msg(r.status == c->status, "%s: status %d, expected %d (%.300s)", c->path, r.status,
                  c->status, r.body ? r.body : "");
    char type[64];
    http_header(&r, "Content-Type", type, sizeof type);
    ck_assert_str_eq(type, "application/json; charset=utf-8");
    ck_assert_msg(!strncmp(r.body, "{\"error\":\"", 10), "%s: body %.300s", c->path, r.body);
    ck_assert_msg(strstr(r.body, c->message), "%s: body %s lacks '%s'", c->path, r.body, c->message);
    char status[32];
    snprintf(status, sizeof status, "\"status\":%d}", c->status);
    ck_assert_msg(strstr(r.body, status), "%s: %s", c->path, r.body);
    http_free(&r);
}

#endif
