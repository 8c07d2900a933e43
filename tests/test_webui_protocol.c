/* test_webui_protocol.c — the HTTP layer's checks before any route runs,
 * and connection reuse: NUL bytes in paths (encoded and raw) and header
 * fields, the parameters of
 * /api/events, the Host header (required in HTTP/1.1, once, strictly
 * host[:port], and naming an allowed host whatever address is bound),
 * keep-alive and pipelined requests. Raw requests over sockets. Links the
 * server and the store only. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_board.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

static char db_path[512];
static gb_board *board;
static int port;

static void setup(void) { board = webui_start_board(db_path, &port); }

static void teardown(void) { gb_board_stop(board); }

/* Sends a raw request to port on a fresh connection; its response. */
static http_response raw_request(int to_port, const char *request) {
    http_response r = {0};
    int fd = http_connect(to_port, 3000);
    ck_assert_int_ge(fd, 0);
    if (!http_exchange(fd, request, false, &r)) r.status = 0;
    close(fd);
    return r;
}

/* Sends len bytes (NULs included) on the connection fd; the response. */
static http_response send_bytes(int fd, const char *bytes, size_t len) {
    http_response r = {0};
    if (!http_send_all(fd, bytes, len) || !http_read_response(fd, false, &r)) r.status = 0;
    return r;
}

/* ---- paths ------------------------------------------------------------------------ */

START_TEST(nul_in_a_path_is_400) {
    static const char *const paths[] = {"/static/app.js%00.png", "/api/runs%00", "/%00",
                                        "/api/scalars/tags%00?run=alpha"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        webui_assert_json_error(port, &(bad_case){paths[i], 400, "the path contains a NUL byte"});
    /* %00 in a parameter keeps its own message. */
    webui_assert_json_error(port, &(bad_case){"/api/scalars/tags?run=al%00pha", 400,
                                              "a parameter contains a NUL byte"});
}
END_TEST

START_TEST(events_rejects_parameters_like_every_route) {
    webui_assert_json_error(port, &(bad_case){"/api/events?x=1", 400,
                                              "unknown parameter 'x' (accepted: none)"});
    webui_assert_json_error(port, &(bad_case){"/api/events?since=3", 400,
                                              "unknown parameter 'since'"});
}
END_TEST

/* A raw NUL byte would end the line libmicrohttpd reads there: refused,
 * not served as what came before it. sizeof - 1 keeps the NULs. */
#define RAW(s) {s, sizeof s - 1}
typedef struct raw_case {
    const char *bytes;
    size_t len;
} raw_case;

/* The answer to c's bytes on a fresh connection. */
static http_response raw_on_new_connection(const raw_case *c) {
    int fd = http_connect(port, 3000);
    http_response r = send_bytes(fd, c->bytes, c->len);
    close(fd);
    return r;
}

START_TEST(raw_nul_bytes_are_400) {
    static const raw_case target[] = {
        RAW("GET /api/runs\0x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        RAW("GET /static/app.js\0.png HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
    };
    for (size_t i = 0; i < sizeof target / sizeof target[0]; i++) {
        http_response r = raw_on_new_connection(&target[i]);
        ck_assert_int_eq(r.status, 400);
        ASSERT_HAS(r.body, "NUL byte in the request target");
        http_free(&r);
    }
    static const struct {
        raw_case head;
        const char *field;
    } fields[] = {
        {RAW("GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\0.evil.example\r\n\r\n"), "'Host'"},
        {RAW("GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: a\0b\r\n\r\n"), "'Accept'"},
        {RAW("GET /api/runs HTTP/1.1\r\nAccept: a\0b\r\nHost: 127.0.0.1\r\n\r\n"), "'Accept'"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        /* On a connection that already served a request: its second head. */
        int fd = http_connect(port, 3000);
        const char *good = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        http_response first = send_bytes(fd, good, strlen(good));
        ck_assert_int_eq(first.status, 200);
        http_free(&first);
        http_response r = send_bytes(fd, fields[i].head.bytes, fields[i].head.len);
        close(fd);
        ck_assert_int_eq(r.status, 400);
        ASSERT_HAS(r.body, "NUL byte in header field ");
        ASSERT_HAS(r.body, fields[i].field);
        http_free(&r);
    }
    /* What libmicrohttpd skips between a head's pieces is not taken for one. */
    static const raw_case fine[] = {
        RAW("GET /api/runs HTTP/1.1\r\nHost:127.0.0.1\r\nAccept:   */*  \r\n\r\n"),
        RAW("GET /api/runs HTTP/1.1\nHost: 127.0.0.1\nAccept: */*\n\n"),
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        http_response r = raw_on_new_connection(&fine[i]);
        ck_assert_msg(r.status == 200, "case %zu: %d %s", i, r.status, r.body ? r.body : "");
        http_free(&r);
    }
}
END_TEST

/* ---- the Host header ------------------------------------------------------------------ */

typedef struct host_case {
    const char *headers;   /* header lines, or the whole request after the first line */
    int status;
    const char *message;   /* part of the error, NULL for 200 */
} host_case;

/* Each case is a GET /api/runs HTTP/1.1 with these header lines. */
static const host_case host_cases[] = {
    {"", 400, "missing Host header"},
    {"Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n", 400, "more than one Host header"},
    {"Host: 127.0.0.1\r\nHost: evil.example\r\n", 400, "more than one Host header"},
    {"Host: 127.0.0.1:1@evil.example\r\n", 400, "malformed Host header"},
    {"Host: localhost:abc\r\n", 400, "malformed Host header"},
    {"Host: localhost:80/x\r\n", 400, "malformed Host header"},
    {"Host: localhost:80 x\r\n", 400, "malformed Host header"},
    {"Host: localhost:\r\n", 400, "malformed Host header"},
    {"Host: localhost:99999\r\n", 400, "malformed Host header"},
    {"Host: localhost:1:2\r\n", 400, "malformed Host header"},
    {"Host: [::1\r\n", 400, "malformed Host header"},
    {"Host: [::1]x\r\n", 400, "malformed Host header"},
    {"Host: user@localhost\r\n", 400, "malformed Host header"},
    {"Host: \r\n", 400, "malformed Host header"},
    {"Host: evil.example\r\n", 403, "host not allowed: 'evil.example'"},
    {"Host: evil.example:6006\r\n", 403, "host not allowed"},
    {"Host: 127.0.0.1.evil.example\r\n", 403, "host not allowed"},
    {"Host: localhost.evil.example\r\n", 403, "host not allowed"},
    {"Host: 127.0.0.2\r\n", 403, "host not allowed"},
    {"Host: 127.0.0.1\r\n", 200, NULL},
    {"Host: 127.0.0.1:6006\r\n", 200, NULL},
    {"Host: localhost\r\n", 200, NULL},
    {"Host: LocalHost:80\r\n", 200, NULL},
    {"Host: [::1]:6006\r\n", 200, NULL},
    {"Host: [::1]\r\n", 200, NULL},
};

static void assert_host_case(int to_port, const host_case *c) {
    char req[1024];
    snprintf(req, sizeof req, "GET /api/runs HTTP/1.1\r\n%sConnection: close\r\n\r\n", c->headers);
    http_response r = raw_request(to_port, req);
    ck_assert_msg(r.status == c->status, "%s: status %d, expected %d (%s)", c->headers, r.status,
                  c->status, r.body ? r.body : "");
    if (c->message) ck_assert_msg(strstr(r.body, c->message), "%s: %s", c->headers, r.body);
    http_free(&r);
}

START_TEST(host_header_is_checked_strictly) { assert_host_case(port, &host_cases[_i]); }
END_TEST

START_TEST(http10_without_host_is_served) {
    http_response r = raw_request(port, "GET /api/runs HTTP/1.0\r\n\r\n");
    ck_assert_int_eq(r.status, 200);
    http_free(&r);
    r = raw_request(port, "GET /api/runs HTTP/1.0\r\nHost: evil.example\r\n\r\n");
    ck_assert_int_eq(r.status, 403);
    http_free(&r);
}
END_TEST

/* Bound to every interface, the check stays on: loopback names, the bound
 * address and the allowed names pass, nothing else (no token here, to see
 * the Host check alone: test_webui_auth has the token). */
START_TEST(wildcard_bind_keeps_the_host_check) {
    gb_board *b = gb_board_start(db_path, "0.0.0.0", 0,
                                 &(gb_board_options){.allow_hosts = "Dash.Example.com, 10.1.2.3,::5",
                                                     .no_auth = true});
    ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
    int p = gb_board_port(b);
    static const host_case cases[] = {
        {"Host: evil.example\r\n", 403, "host not allowed"},
        {"Host: 10.1.2.4\r\n", 403, "host not allowed"},
        {"Host: example.com\r\n", 403, "host not allowed"},
        {"Host: 127.0.0.1:9\r\n", 200, NULL},
        {"Host: localhost\r\n", 200, NULL},
        {"Host: 0.0.0.0:6006\r\n", 200, NULL},
        {"Host: dash.example.com\r\n", 200, NULL},
        {"Host: DASH.EXAMPLE.COM:443\r\n", 200, NULL},
        {"Host: 10.1.2.3:6006\r\n", 200, NULL},
        {"Host: [::5]:6006\r\n", 200, NULL},
        {"", 400, "missing Host header"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) assert_host_case(p, &cases[i]);
    gb_board_stop(b);
}
END_TEST

START_TEST(allowed_hosts_are_checked_at_start) {
    static const char *const bad[] = {"evil example", "a,,b", "host:80", " ", ",", "a/b",
                                      "[::1", "x@y", "a,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(gb_board_start(db_path, NULL, 0, &(gb_board_options){.allow_hosts = bad[i]}) ==
                          NULL,
                      "allow_hosts '%s' was accepted", bad[i]);
        ASSERT_HAS(gb_board_last_error(), "allowed host");
    }
    /* "" is no name, like NULL. */
    gb_board *none = gb_board_start(db_path, NULL, 0, &(gb_board_options){.allow_hosts = ""});
    ck_assert_ptr_nonnull(none);
    gb_board_stop(none);
    /* An allowed name on a loopback board. */
    gb_board *b = gb_board_start(db_path, NULL, 0, &(gb_board_options){.allow_hosts = "box.lan"});
    ck_assert_ptr_nonnull(b);
    assert_host_case(gb_board_port(b), &(host_case){"Host: box.lan:6006\r\n", 200, NULL});
    assert_host_case(gb_board_port(b), &(host_case){"Host: lan\r\n", 403, "host not allowed"});
    gb_board_stop(b);
}
END_TEST

/* ---- connection reuse ---------------------------------------------------------------------- */

START_TEST(keep_alive_serves_several_requests) {
    int fd = http_connect(port, 3000);
    static const char *const paths[] = {"/api/runs", "/api/nope", "/static/app.css",
                                        "/api/runs?x=1", "/api/plugins"};
    static const int statuses[] = {200, 404, 200, 400, 200};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        char req[256];
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", paths[i]);
        http_response r;
        ck_assert_msg(http_exchange(fd, req, false, &r), "%s: no answer", paths[i]);
        ck_assert_int_eq(r.status, statuses[i]);
        ck_assert_msg(!r.closed, "%s: the server closes the connection", paths[i]);
        http_free(&r);
    }
    close(fd);
}
END_TEST

/* Reads until the server closes fd (or 3 s pass); returns the bytes. */
static size_t read_until_closed(int fd, char *buf, size_t size) {
    size_t have = 0;
    while (have < size - 1) {
        ssize_t n = recv(fd, buf + have, size - 1 - have, 0);
        if (n <= 0) break;
        have += (size_t)n;
    }
    buf[have] = '\0';
    return have;
}

/* Requests sent back to back before any answer are answered in order. */
START_TEST(pipelined_requests_are_answered_in_order) {
    int fd = http_connect(port, 3000);
    const char *reqs = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                       "GET /api/nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                       "HEAD /api/plugins HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                       "GET /api/plugins HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    ck_assert(http_send_all(fd, reqs, strlen(reqs)));
    static char buf[1 << 16];
    read_until_closed(fd, buf, sizeof buf);
    close(fd);
    /* Four responses: status lines in order, each body its Content-Length. */
    static const int want[] = {200, 404, 200, 200};
    const char *p = buf;
    for (int i = 0; i < 4; i++) {
        int status = 0;
        ck_assert_msg(p && sscanf(p, "HTTP/1.1 %d", &status) == 1, "response %d missing: %s", i,
                      buf);
        ck_assert_int_eq(status, want[i]);
        const char *end = strstr(p, "\r\n\r\n");
        ck_assert_ptr_nonnull(end);
        const char *cl = strstr(p, "Content-Length: ");
        ck_assert_msg(cl && cl < end, "response %d has no length", i);
        size_t len = i == 2 ? 0 : strtoul(cl + 16, NULL, 10); /* HEAD: no body */
        p = end + 4 + len;
    }
    ck_assert_str_eq(p, "");
}
END_TEST

/* A refused method may come with a body it will never read: that
 * connection is closed after the answer, and nothing waits for the body. */
START_TEST(refused_method_closes_its_connection) {
    int fd = http_connect(port, 3000);
    http_response r;
    ck_assert(http_exchange(fd, "POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Content-Length: 100\r\n\r\n", false, &r));
    ck_assert_int_eq(r.status, 405);
    ck_assert(r.closed);
    http_free(&r);
    close(fd);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_protocol");
    TCase *tc = tcase_create("protocol");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, nul_in_a_path_is_400);
    tcase_add_test(tc, raw_nul_bytes_are_400);
    tcase_add_test(tc, events_rejects_parameters_like_every_route);
    tcase_add_loop_test(tc, host_header_is_checked_strictly, 0,
                        (int)(sizeof host_cases / sizeof host_cases[0]));
    tcase_add_test(tc, http10_without_host_is_served);
    tcase_add_test(tc, wildcard_bind_keeps_the_host_check);
    tcase_add_test(tc, allowed_hosts_are_checked_at_start);
    tcase_add_test(tc, keep_alive_serves_several_requests);
    tcase_add_test(tc, pipelined_requests_are_answered_in_order);
    tcase_add_test(tc, refused_method_closes_its_connection);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_protocol_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
    int status = run_suite(suite());
    webui_remove_store(db_path);
    return status;
}
