/* test_webui_auth.c — the token of a board that leaves loopback
 * (webui/auth.h): without it every route, the live stream and the static
 * files answer 401; given once in the address it is answered with a
 * redirect to the address without it and a cookie (HttpOnly,
 * SameSite=Strict, Path=/), which then opens every route, as an
 * Authorization: Bearer header does; bound beyond loopback a board makes
 * a token of its own unless told not to. Raw requests over sockets; the
 * browser's side is tests/browser/auth.test.mjs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_board.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

#define TOKEN "s3cret-Token_1"

static char db_path[512];
static gb_board *board;
static int port;

static void setup(void) {
    board = gb_board_start(db_path, NULL, 0, &(gb_board_options){.token = TOKEN});
    ck_assert_msg(board != NULL, "gb_board_start: %s", gb_board_last_error());
    port = gb_board_port(board);
}

static void teardown(void) { gb_board_stop(board); }

static void expect(const char *path, const char *headers, int status, const char *part) {
    http_response r = http_request(port, "GET", path, headers);
    ck_assert_msg(r.status == status, "GET %s: %d, expected %d (%s)", path, r.status, status,
                  r.body ? r.body : "");
    if (part) ck_assert_msg(r.body && strstr(r.body, part), "GET %s: '%s' lacks '%s'", path, r.body, part);
    http_free(&r);
}

START_TEST(without_the_token_everything_is_401) {
    static const char *const paths[] = {"/", "/static/app.js", "/api/runs", "/api/events",
                                        "/api/scalars/tags?run=alpha", "/favicon.svg"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
        expect(paths[i], NULL, 401, "dashboard needs its token");
    expect("/api/runs", "Cookie: gb_token=s3cret-Token_2\r\n", 401, "needs its token");
    expect("/api/runs", "Authorization: Bearer " TOKEN "x\r\n", 401, "needs its token");
    expect("/api/runs?token=nope", NULL, 401, "wrong token");
    expect("/?token=", NULL, 401, "wrong token");
}
END_TEST

START_TEST(the_token_in_the_address_sets_the_cookie) {
    static const struct {
        const char *path, *location;
    } cases[] = {
        {"/?token=" TOKEN, "/"},
        {"/api/scalars/tags?run=al%20pha&token=" TOKEN, "/api/scalars/tags?run=al%20pha"},
        {"/static/app.js?token=" TOKEN, "/static/app.js"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        http_response r = http_get(port, cases[i].path);
        ck_assert_msg(r.status == 302, "%s: %d", cases[i].path, r.status);
        char location[256], cookie[256];
        http_header(&r, "Location", location, sizeof location);
        http_header(&r, "Set-Cookie", cookie, sizeof cookie);
        ck_assert_str_eq(location, cases[i].location);
        ck_assert_str_eq(cookie, "gb_token=" TOKEN "; Path=/; HttpOnly; SameSite=Strict");
        http_free(&r);
    }
}
END_TEST

START_TEST(the_cookie_or_a_bearer_header_opens_every_route) {
    static const char *const paths[] = {"/", "/static/app.js", "/api/runs",
                                        "/api/scalars/tags?run=alpha"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        expect(paths[i], "Cookie: gb_token=" TOKEN "\r\n", 200, NULL);
        expect(paths[i], "Authorization: Bearer " TOKEN "\r\n", 200, NULL);
    }
    /* The Host check still comes first. */
    http_response r = {0};
    int fd = http_connect(port, 3000);
    ck_assert(http_exchange(fd, "GET /api/runs HTTP/1.1\r\nHost: evil.example\r\nCookie: gb_token="
                                TOKEN "\r\nConnection: close\r\n\r\n", false, &r));
    close(fd);
    ck_assert_int_eq(r.status, 403);
    http_free(&r);
}
END_TEST

/* Beyond loopback a board makes a token of its own (48 hex digits, new at
 * each start) unless no_auth says not to; on loopback it asks none. A
 * token unfit for a URL is refused at start. */
START_TEST(boards_beyond_loopback_make_a_token) {
    gb_board *a = gb_board_start(db_path, "0.0.0.0", 0, NULL);
    gb_board *b = gb_board_start(db_path, "0.0.0.0", 0, NULL);
    ck_assert_msg(a && b, "%s", gb_board_last_error());
    ck_assert_uint_eq(strlen(gb_board_token(a)), 48);
    ck_assert_uint_eq(strspn(gb_board_token(a), "0123456789abcdef"), 48);
    ck_assert_str_ne(gb_board_token(a), gb_board_token(b));
    http_response r = http_get(gb_board_port(a), "/api/runs");
    ck_assert_int_eq(r.status, 401);
    http_free(&r);
    gb_board_stop(a), gb_board_stop(b);
    gb_board *open = gb_board_start(db_path, "0.0.0.0", 0, &(gb_board_options){.no_auth = true});
    ck_assert_str_eq(gb_board_token(open), "");
    gb_board_stop(open);
    gb_board *local = gb_board_start(db_path, "127.0.0.1", 0, NULL);
    ck_assert_str_eq(gb_board_token(local), "");
    gb_board_stop(local);
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0, &(gb_board_options){.token = "short"}));
    ck_assert_str_eq(gb_board_last_error(),
                     "the token must be 8 to 128 letters, digits, '-', '_' or '.'");
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0, &(gb_board_options){.token = "has space1"}));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_auth");
    TCase *tc = tcase_create("token");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, without_the_token_everything_is_401);
    tcase_add_test(tc, the_token_in_the_address_sets_the_cookie);
    tcase_add_test(tc, the_cookie_or_a_bearer_header_opens_every_route);
    tcase_add_test(tc, boards_beyond_loopback_make_a_token);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_auth_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
    int status = run_suite(suite());
    webui_remove_store(db_path);
    return status;
}
