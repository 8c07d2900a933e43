/* test_webui_limits.c — the server's limits on what a client may send, each
 * answered at once (see "Limits" in webui/http_api.md): the request target
 * length, the number of query parameters, the number and size of header
 * fields, and the header deadline that keeps trickling clients (slowloris)
 * from holding every connection. Raw sockets, so the requests can be as
 * malformed or as slow as a hostile client makes them. Links the server
 * and the store only. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gb_board.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

static char db_path[512];
static gb_board *board;
static int port;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void setup(void) { board = webui_start_board(db_path, &port); }

static void teardown(void) { gb_board_stop(board); }

/* ---- one request, as raw bytes ------------------------------------------------ */

typedef struct answer {
    http_response r;
    double seconds;   /* from the first byte sent to the whole response read */
} answer;

/* Sends `request` (len bytes) on a fresh connection and reads the answer.
 * A send cut short by the server (it refused the request and closed) is
 * not a failure: the answer it sent first is what counts. */
static answer exchange(const char *request, size_t len) {
    answer a = {0};
    int fd = http_connect(port, 3000);
    ck_assert_int_ge(fd, 0);
    double t0 = now_s();
    http_send_all(fd, request, len);
    if (!http_read_response(fd, false, &a.r)) a.r.status = 0;
    a.seconds = now_s() - t0;
    close(fd);
    return a;
}

/* A GET of `target` with `extra` header lines. */
static answer get_raw(const char *target, const char *extra) {
    size_t n = strlen(target) + strlen(extra) + 128;
    char *req = malloc(n);
    ck_assert_ptr_nonnull(req);
    snprintf(req, n, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n", target,
             extra);
    answer a = exchange(req, strlen(req));
    free(req);
    return a;
}

/* The answer must be `status` (an answer at all: the connection's 3 s read
 * timeout fails a server that holds a refused request open; how fast it
 * answers is no assertion, make test runs on loaded machines); `message`,
 * if given, is part of its JSON error body. */
static void assert_refused(answer *a, const char *what, int status, const char *message) {
    ck_assert_msg(a->r.status == status, "%s: status %d after %.2f s, expected %d; body %.300s",
                  what, a->r.status, a->seconds, status, a->r.body ? a->r.body : "");
    if (message) {
        ck_assert_msg(a->r.body && !strncmp(a->r.body, "{\"error\":\"", 10), "%s: body %s", what,
                      a->r.body);
        ck_assert_msg(strstr(a->r.body, message), "%s: body %s lacks '%s'", what, a->r.body,
                      message);
    }
    http_free(&a->r);
}

/* "/api/runs?a0=1&a1=1&..." with n parameters (caller frees). */
static char *many_params(int n) {
    size_t size = 16 + (size_t)n * 12;
    char *t = malloc(size);
    ck_assert_ptr_nonnull(t);
    size_t len = (size_t)snprintf(t, size, "/api/runs?");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, size - len, "%sa%d=1", i ? "&" : "", i);
    return t;
}

/* "/" followed by n-1 copies of c: a target of n bytes (caller frees). */
static char *target_of(size_t n, const char *prefix, char c) {
    char *t = malloc(n + 1);
    ck_assert_ptr_nonnull(t);
    memset(t, c, n);
    memcpy(t, prefix, strlen(prefix));
    t[n] = '\0';
    return t;
}

/* ---- the request line ------------------------------------------------------------ */

/* Parameters past the limit are refused at once, however many: libmicrohttpd
 * 0.9.75 ran out of connection memory at 924 and then answered nothing. */
START_TEST(too_many_parameters_are_refused_at_once) {
    static const int counts[] = {17, 100, 923, 924, 1100};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char *t = many_params(counts[i]);
        ck_assert_uint_le(strlen(t), 8192);
        answer a = get_raw(t, "");
        char what[64];
        snprintf(what, sizeof what, "%d parameters", counts[i]);
        assert_refused(&a, what, 400, "more than 16 query parameters");
        free(t);
    }
    /* Empty parameters count too. */
    char *amps = target_of(3000, "/api/runs?", '&');
    answer a = get_raw(amps, "");
    assert_refused(&a, "3000 empty parameters", 400, "more than 16 query parameters");
    free(amps);
    /* 16 is the limit: such a request gets to the route's own checks. */
    char *t = many_params(16);
    a = get_raw(t, "");
    assert_refused(&a, "16 parameters", 400, "unknown parameter 'a0'");
    free(t);
}
END_TEST

START_TEST(long_targets_get_414_at_once) {
    /* 8192 bytes is the longest target: a path that long is just unknown. */
    char *t = target_of(8192, "/", 'a');
    answer a = get_raw(t, "");
    assert_refused(&a, "8192-byte path", 404, "not found");
    free(t);
    static const size_t lengths[] = {8193, 20000, 60000};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "%zu-byte path", lengths[i]);
        t = target_of(lengths[i], "/", 'a');
        a = get_raw(t, "");
        assert_refused(&a, what, 414, "request target longer than 8192 bytes");
        free(t);
        snprintf(what, sizeof what, "%zu-byte query", lengths[i]);
        t = target_of(lengths[i], "/api/scalars/series?run=", 'a');
        a = get_raw(t, "");
        assert_refused(&a, what, 414, "request target longer than 8192 bytes");
        free(t);
        snprintf(what, sizeof what, "%zu-byte query of parameters", lengths[i]);
        t = target_of(lengths[i], "/api/runs?", '&');
        a = get_raw(t, "");
        assert_refused(&a, what, 414, "request target longer than 8192 bytes");
        free(t);
    }
    /* Longer than the connection's memory: refused before the line ends. */
    t = target_of(200000, "/api/runs?", 'a');
    a = get_raw(t, "");
    assert_refused(&a, "200000-byte query", 414, NULL);
    free(t);
}
END_TEST

/* The connection after a refused request line is closed, and the server
 * goes on serving everyone else. */
START_TEST(refused_request_line_closes_only_its_connection) {
    char *t = many_params(2000);
    int fd = http_connect(port, 3000);
    char req[32768];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", t);
    free(t);
    http_response r;
    ck_assert(http_exchange(fd, req, false, &r));
    ck_assert_int_eq(r.status, 414);
    ck_assert(r.closed);
    http_free(&r);
    char c;
    ck_assert_int_le(recv(fd, &c, 1, 0), 0);
    close(fd);
    char *b = webui_get_expect(port, "/api/runs", 200);
    free(b);
}
END_TEST

/* A refused request line is answered before libmicrohttpd has parsed it,
 * and libmicrohttpd then fails on it (out of connection memory) while the
 * client already has its answer. Stopping the board right then must not
 * crash: libmicrohttpd 0.9.75 dereferences NULL when it refuses a request
 * while it stops (see gb__conns_drain). */
START_TEST(stop_right_after_a_refusal_is_safe) {
    char *amps = target_of(8000, "/api/runs?", '&');
    for (int i = 0; i < 100; i++) {
        gb_board *b = gb_board_start(db_path, NULL, 0, NULL);
        ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
        port = gb_board_port(b);
        answer a = get_raw(amps, "");
        assert_refused(&a, "7990 empty parameters", 400, "more than 16 query parameters");
        gb_board_stop(b);
    }
    free(amps);
}
END_TEST

/* ---- header fields ------------------------------------------------------------------- */

/* n header lines "X-Field-<i>: <value of len bytes>" (caller frees). */
static char *header_lines(int n, size_t len) {
    size_t size = (size_t)n * (len + 24) + 1;
    char *h = malloc(size);
    ck_assert_ptr_nonnull(h);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        off += (size_t)snprintf(h + off, size - off, "X-Field-%d: ", i);
        memset(h + off, 'v', len);
        off += len;
        off += (size_t)snprintf(h + off, size - off, "\r\n");
    }
    h[off] = '\0';
    return h;
}

START_TEST(header_limits_are_431_at_once) {
    /* Up to the limits: served. Host and Connection are two of the 100. */
    char *h = header_lines(98, 8);
    answer a = get_raw("/api/runs", h);
    ck_assert_msg(a.r.status == 200, "98 more header fields: %d %s", a.r.status, a.r.body);
    http_free(&a.r);
    free(h);
    h = header_lines(1, 15000);
    a = get_raw("/api/runs", h);
    ck_assert_msg(a.r.status == 200, "a 15000-byte header: %d %s", a.r.status, a.r.body);
    http_free(&a.r);
    free(h);

    h = header_lines(99, 8);
    a = get_raw("/api/runs", h);
    assert_refused(&a, "101 header fields", 431, "more than 100 header fields");
    free(h);
    h = header_lines(1, 17000);
    a = get_raw("/api/runs", h);
    assert_refused(&a, "a 17000-byte header", 431, "request head larger than 16384 bytes");
    free(h);
    h = header_lines(40, 1000);
    a = get_raw("/api/runs", h);
    assert_refused(&a, "40 headers of 1000 bytes", 431, "request head larger than 16384 bytes");
    free(h);
    /* Past the connection's memory: refused while the head still comes in. */
    h = header_lines(3000, 1);
    a = get_raw("/api/runs", h);
    assert_refused(&a, "3000 header fields", 431, NULL);
    free(h);
    h = header_lines(1, 100000);
    a = get_raw("/api/runs", h);
    assert_refused(&a, "a 100000-byte header", 431, NULL);
    free(h);
}
END_TEST

/* ---- the header deadline ----------------------------------------------------------------- */

enum { SLOW = 300 };

/* true once the server has closed fd (or reset it). */
static bool closed_by_server(int fd) {
    char buf[512];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* 300 connections trickle a header line every 200 ms (every tenth sends
 * nothing at all after connecting): a normal client is still answered,
 * and each slow one is closed once the deadline (2 s here) has passed
 * since it opened, never before. How soon after is the machine's business
 * (make test runs on loaded machines): the wait only bounds a broken
 * build, at 30 s. */
START_TEST(slow_connections_are_closed_at_the_header_deadline) {
    gb_board *b = gb_board_start(db_path, NULL, 0,
                                 &(gb_board_options){.header_timeout_ms = 2000});
    ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
    int p = gb_board_port(b);
    int fds[SLOW];
    double opened[SLOW], closed_at[SLOW];
    for (int i = 0; i < SLOW; i++) {
        fds[i] = http_connect(p, 1000);
        ck_assert_msg(fds[i] >= 0, "connection %d: %s", i, strerror(errno));
        opened[i] = now_s();
        closed_at[i] = 0;
        if (i % 10) ck_assert(http_send_all(fds[i], "GET /api/runs HTTP/1.1\r\n", 24));
    }
    double start = now_s(), served_after = -1;
    int open_when_served = 0, line = 0;
    while (now_s() < start + 30.0) {
        int still_open = 0;
        for (int i = 0; i < SLOW; i++) {
            if (closed_at[i] > 0) continue;
            if (closed_by_server(fds[i])) {
                closed_at[i] = now_s();
                continue;
            }
            still_open++;
            char h[48];
            int n = snprintf(h, sizeof h, "X-Slow-%d: %d\r\n", line, i);
            if (i % 10 && send(fds[i], h, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
                errno != EAGAIN)
                closed_at[i] = now_s();
        }
        line++;
        if (served_after < 0 && now_s() > start + 0.5) {
            open_when_served = still_open;
            double t0 = now_s();
            http_response r = http_get(p, "/api/runs");
            served_after = now_s() - t0;
            ck_assert_msg(r.status == 200, "normal request beside %d slow ones: status %d",
                          still_open, r.status);
            http_free(&r);
        }
        if (!still_open) break;
        usleep(200000);
    }
    ck_assert_msg(open_when_served == SLOW, "only %d of %d slow connections were open",
                  open_when_served, SLOW);
    ck_assert_msg(served_after >= 0, "no normal request was served beside %d slow connections",
                  SLOW);
    for (int i = 0; i < SLOW; i++) {
        ck_assert_msg(closed_at[i] > 0, "slow connection %d still open after %.1f s", i,
                      now_s() - opened[i]);
        double held = closed_at[i] - opened[i];
        ck_assert_msg(held > 1.9, "slow connection %d closed after %.2f s, before its deadline", i,
                      held);
        close(fds[i]);
    }
    /* The server is as it was. */
    http_response r = http_get(p, "/api/runs");
    ck_assert_int_eq(r.status, 200);
    http_free(&r);
    gb_board_stop(b);
}
END_TEST

/* The deadline is per request: a keep-alive connection whose requests each
 * come in time lives on past it. */
START_TEST(deadline_restarts_with_each_request) {
    gb_board *b = gb_board_start(db_path, NULL, 0,
                                 &(gb_board_options){.header_timeout_ms = 1000});
    ck_assert_msg(b != NULL, "gb_board_start: %s", gb_board_last_error());
    int fd = http_connect(gb_board_port(b), 2000);
    double t0 = now_s();
    for (int i = 0; i < 5; i++) { /* 5 x 0.3 s: past the 1 s deadline, each request in time */
        usleep(300000);
        http_response r;
        ck_assert_msg(http_exchange(fd, "GET /api/plugins HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                    false, &r),
                      "request %d after %.2f s: no answer", i, now_s() - t0);
        ck_assert_int_eq(r.status, 200);
        ck_assert(!r.closed);
        http_free(&r);
    }
    ck_assert_double_gt(now_s() - t0, 1.0);
    /* Idle past the deadline: closed (waited for, up to 30 s). */
    usleep(1100000);
    for (int i = 0; i < 300 && !closed_by_server(fd); i++) usleep(100000);
    ck_assert(closed_by_server(fd));
    close(fd);
    gb_board_stop(b);
}
END_TEST

START_TEST(limits_that_cannot_be_met_are_start_errors) {
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0,
                                      &(gb_board_options){.max_connections = 100000000}));
    ASSERT_HAS(gb_board_last_error(), "max_connections 100000000");
    ASSERT_HAS(gb_board_last_error(), "ulimit -n");
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 0,
                                      &(gb_board_options){.header_timeout_ms = 5}));
    ASSERT_HAS(gb_board_last_error(), "header_timeout_ms 5");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_limits");
    TCase *tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, too_many_parameters_are_refused_at_once);
    tcase_add_test(tc, long_targets_get_414_at_once);
    tcase_add_test(tc, refused_request_line_closes_only_its_connection);
    tcase_add_test(tc, stop_right_after_a_refusal_is_safe);
    tcase_add_test(tc, header_limits_are_431_at_once);
    tcase_add_test(tc, slow_connections_are_closed_at_the_header_deadline);
    tcase_add_test(tc, deadline_restarts_with_each_request);
    tcase_add_test(tc, limits_that_cannot_be_met_are_start_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_limits_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
    int status = run_suite(suite());
    webui_remove_store(db_path);
    return status;
}
