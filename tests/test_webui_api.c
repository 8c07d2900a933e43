/* test_webui_api.c — every route of the dashboard server against a store
 * written for the test (by webui_fixtures, see there): exact JSON for good
 * requests, 400/404/405 bodies for bad ones, parameters carrying SQL or ../
 * that change nothing, the static files, the live event stream, and
 * gb_board_start's errors. Links the server and the store only. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gb_board.h"
#include "gb_reader.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

static char db_path[512];
static gb_board *board;
static int port;

/* ---- the store -------------------------------------------------------------- */

/* Runs alpha and beta (webui_fixtures.c, "api"): hparams learning_rate and
 * optimizer; scalars loss (1/(s+1), NaN at 50, +Inf at 60, -Inf at 70) and
 * accuracy (s/100) at steps 0..99; at steps 0, 10, ..., 40 a histogram
 * "weights" of 64 values, two 4x4 gray images "inputs" and a text "notes". */
static void build_store(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_api_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
}

static void setup(void) { board = webui_start_board(db_path, &port); }

static void teardown(void) { gb_board_stop(board); }

/* ---- good requests ------------------------------------------------------------- */

START_TEST(runs_lists_both_runs_with_hparams) {
    char *b = webui_get_expect(port, "/api/runs", 200);
    ASSERT_HAS(b, "{\"runs\":[{\"name\":\"alpha\"");
    ASSERT_HAS(b, "\"hparams\":{\"learning_rate\":0.001,\"optimizer\":\"adam\"}");
    ASSERT_HAS(b, "\"name\":\"beta\"");
    ASSERT_HAS(b, "\"learning_rate\":0.01,");
    free(b);
}
END_TEST

START_TEST(plugins_lists_active_dashboards_in_order) {
    char *b = webui_get_expect(port, "/api/plugins", 200);
    ck_assert_str_eq(b, "{\"plugins\":["
                        "{\"name\":\"scalars\",\"title\":\"Scalars\",\"active\":true},"
                        "{\"name\":\"histograms\",\"title\":\"Histograms\",\"active\":true},"
                        "{\"name\":\"distributions\",\"title\":\"Distributions\",\"active\":true},"
                        "{\"name\":\"images\",\"title\":\"Images\",\"active\":true},"
                        "{\"name\":\"audio\",\"title\":\"Audio\",\"active\":true},"
                        "{\"name\":\"text\",\"title\":\"Text\",\"active\":true},"
                        "{\"name\":\"graphs\",\"title\":\"Graphs\",\"active\":false},"
                        "{\"name\":\"traces\",\"title\":\"Traces\",\"active\":false},"
                        "{\"name\":\"hparams\",\"title\":\"HParams\",\"active\":true},"
                        "{\"name\":\"pr_curves\",\"title\":\"PR Curves\",\"active\":false},"
                        "{\"name\":\"profile\",\"title\":\"Profile\",\"active\":false},"
                        "{\"name\":\"numerics\",\"title\":\"Numerics\",\"active\":false},"
                     "{\"name\":\"health\",\"title\":\"Health\",\"active\":false},"
                        "{\"name\":\"projector\",\"title\":\"Projector\",\"active\":true}]}");
    free(b);
}
END_TEST

START_TEST(scalar_tags_of_one_run_and_of_all) {
    char *b = webui_get_expect(port, "/api/scalars/tags?run=alpha", 200);
    ck_assert_msg(!strncmp(b, "{\"runs\":{\"alpha\":[{\"tag\":\"accuracy\",\"count\":100,\"min_step\":0,"
                              "\"max_step\":99,", 71), "%s", b);
    ASSERT_HAS(b, "{\"tag\":\"loss\",\"count\":100,\"min_step\":0,\"max_step\":99,");
    ck_assert_ptr_null(strstr(b, "beta"));
    free(b);
    b = webui_get_expect(port, "/api/scalars/tags", 200);
    ASSERT_HAS(b, "\"alpha\":[");
    ASSERT_HAS(b, "\"beta\":[");
    free(b);
}
END_TEST

START_TEST(scalar_series_raw_with_nonfinite_values) {
    char *b = webui_get_expect(port, "/api/scalars/series?run=alpha&tag=loss", 200);
    ASSERT_HAS(b, "{\"run\":\"alpha\",\"tag\":\"loss\",\"downsampled\":false,\"total_points\":100,"
                  "\"step\":[0,1,2,3,");
    ASSERT_HAS(b, "\"value\":[1,0.5,0.333333333333333");
    ASSERT_HAS(b, ",0.0204081632653061");           /* step 48: 1/49 */
    ASSERT_HAS(b, ",0.02,\"NaN\",0.019230769230769232,"); /* steps 49..51 */
    ASSERT_HAS(b, "\"Infinity\"");
    ASSERT_HAS(b, "\"-Infinity\"");
    free(b);
}
END_TEST

START_TEST(scalar_series_downsampled_since_and_range) {
    char *b = webui_get_expect(port, "/api/scalars/series?run=alpha&tag=accuracy&points=10", 200);
    ASSERT_HAS(b, "\"downsampled\":true,\"total_points\":100,\"step\":[0,10,20,30,40,50,60,70,80,90],");
    ASSERT_HAS(b, "\"neginf\":[0,0,0,0,0,0,0,0,0,0],\"step_last\":[9,19,29,39,49,59,69,79,89,99]");
    ASSERT_HAS(b, "\"min\":[0,0.1,0.2,");
    ASSERT_HAS(b, "\"max\":[0.09,0.19,");
    free(b);
    b = webui_get_expect(port, "/api/scalars/series?run=beta&tag=accuracy&since=96", 200);
    ASSERT_HAS(b, "\"total_points\":3,\"step\":[97,98,99],");
    free(b);
    b = webui_get_expect(port, "/api/scalars/series?run=beta&tag=accuracy&min_step=10&max_step=12", 200);
    ck_assert_msg(strstr(b, "\"downsampled\":false,\"total_points\":3,\"step\":[10,11,12],\"wall\":["), "%s", b);
    ASSERT_HAS(b, "\"value\":[0.1,0.11,0.12],\"nan\":[0,0,0],\"posinf\":[0,0,0],\"neginf\":[0,0,0]}");
    ck_assert_ptr_null(strstr(b, "step_last")); /* raw points: no bucket columns */
    free(b);
    b = webui_get_expect(port, "/api/scalars/series?run=beta&tag=accuracy&since=99", 200);
    ASSERT_HAS(b, "\"total_points\":0,\"step\":[],");
    free(b);
}
END_TEST

START_TEST(histogram_and_distribution_series) {
    char *b = webui_get_expect(port, "/api/histograms/series?run=alpha&tag=weights", 200);
    ASSERT_HAS(b, "{\"run\":\"alpha\",\"tag\":\"weights\",\"histograms\":[{\"step\":0,");
    ASSERT_HAS(b, "\"min\":0,\"max\":7.875,\"count\":64,");
    ASSERT_HAS(b, "\"step\":40,");
    ASSERT_HAS(b, "\"min\":4,\"max\":11.875,\"count\":64,");
    ASSERT_HAS(b, "\"edges\":[0,0.2625,");
    free(b);
    b = webui_get_expect(port, "/api/distributions/series?run=alpha&tag=weights", 200);
    ASSERT_HAS(b, "\"percentiles\":[0,6.68,15.87,30.85,50,69.15,84.13,93.32,100],"
                  "\"step\":[0,10,20,30,40],");
    ASSERT_HAS(b, "\"values\":[[0,1,2,3,4],");
    free(b);
    b = webui_get_expect(port, "/api/histograms/tags?run=beta", 200);
    ASSERT_HAS(b, "{\"runs\":{\"beta\":[{\"tag\":\"weights\",\"count\":5,\"min_step\":0,\"max_step\":40,");
    free(b);
}
END_TEST

START_TEST(images_list_and_png_bytes) {
    char *b = webui_get_expect(port, "/api/images/list?run=alpha&tag=inputs", 200);
    ASSERT_HAS(b, "\"steps\":[{\"step\":0,");
    ASSERT_HAS(b, "\"samples\":[{\"index\":0,\"width\":4,\"height\":4,\"channels\":1},"
                  "{\"index\":1,\"width\":4,\"height\":4,\"channels\":1}]}");
    ASSERT_HAS(b, "{\"step\":40,");
    free(b);
    http_response r = http_get(port, "/api/images/png?run=alpha&tag=inputs&step=20&index=1");
    ck_assert_int_eq(r.status, 200);
    char type[64];
    http_header(&r, "Content-Type", type, sizeof type);
    ck_assert_str_eq(type, "image/png");
    ck_assert_uint_gt(r.body_len, 8);
    ck_assert_int_eq(memcmp(r.body, "\x89PNG\r\n\x1a\n", 8), 0);
    http_free(&r);
    b = webui_get_expect(port, "/api/images/png?run=alpha&tag=inputs&step=20&index=2", 404);
    ASSERT_HAS(b, "\"status\":404");
    free(b);
    b = webui_get_expect(port, "/api/images/png?run=alpha&tag=inputs&step=21", 404);
    free(b);
}
END_TEST

/* A stored file of a route: its status, type and bytes. */
static http_response get_file(const char *path, const char *type) {
    http_response r = http_get(port, path);
    ck_assert_msg(r.status == 200, "GET %s: %d %s", path, r.status, r.body ? r.body : "");
    char got[96];
    http_header(&r, "Content-Type", got, sizeof got);
    ck_assert_str_eq(got, type);
    return r;
}

START_TEST(projector_lists_steps_and_sends_parts) {
    char *b = webui_get_expect(port, "/api/projector/tags?run=alpha", 200);
    ASSERT_HAS(b, "{\"runs\":{\"alpha\":[{\"tag\":\"points\",\"count\":2,\"min_step\":0,\"max_step\":10,");
    free(b);
    b = webui_get_expect(port, "/api/projector/list?run=alpha&tag=points", 200);
    ASSERT_HAS(b, "{\"run\":\"alpha\",\"tag\":\"points\",\"steps\":[{\"step\":0,");
    ASSERT_HAS(b, "\"n\":3,\"dim\":2,\"metadata_bytes\":19,\"sprite\":{\"width\":2,\"height\":2}}");
    ASSERT_HAS(b, "{\"step\":10,");
    ASSERT_HAS(b, "\"n\":3,\"dim\":2,\"metadata_bytes\":0,\"sprite\":null}]}");
    free(b);
    http_response r = get_file("/api/projector/vectors?run=alpha&tag=points&step=0", "application/octet-stream");
    ck_assert_uint_eq(r.body_len, 24);
    float v[6];
    memcpy(v, r.body, sizeof v);
    ck_assert(v[0] == 1 && v[3] == 1 && v[4] == 0.5f && v[5] == 0.25f);
    http_free(&r);
    r = get_file("/api/projector/metadata?run=alpha&tag=points&step=0", "text/tab-separated-values; charset=utf-8");
    ck_assert_uint_eq(r.body_len, 19);
    ck_assert_int_eq(memcmp(r.body, "animal\ncat\ndog\ncat\n", 19), 0);
    http_free(&r);
    r = get_file("/api/projector/sprite?run=alpha&tag=points&step=0", "image/png");
    ck_assert_int_eq(memcmp(r.body, "\x89PNG\r\n\x1a\n", 8), 0);
    http_free(&r);
    b = webui_get_expect(port, "/api/projector/sprite?run=alpha&tag=points&step=10", 404);
    ASSERT_HAS(b, "run 'alpha' embedding tag 'points' has no sprite at step 10");
    free(b);
    b = webui_get_expect(port, "/api/projector/vectors?run=alpha&tag=points&step=5", 404);
    ASSERT_HAS(b, "run 'alpha' embedding tag 'points' has no embedding at step 5");
    free(b);
}
END_TEST

START_TEST(audio_lists_clips_and_sends_wav) {
    char *b = webui_get_expect(port, "/api/audio/list?run=alpha&tag=tone", 200);
    ASSERT_HAS(b, "\"steps\":[{\"step\":0,");
    ASSERT_HAS(b, "\"clips\":[{\"index\":0,\"sample_rate\":8000,\"channels\":1,\"frames\":6,\"clipped\":2}]}]}");
    free(b);
    http_response r = get_file("/api/audio/wav?run=alpha&tag=tone&step=0", "audio/wav");
    ck_assert_uint_eq(r.body_len, 44 + 12);
    ck_assert_int_eq(memcmp(r.body, "RIFF", 4), 0);
    ck_assert_int_eq(memcmp(r.body + 8, "WAVE", 4), 0);
    http_free(&r);
    b = webui_get_expect(port, "/api/audio/wav?run=alpha&tag=tone&step=0&index=1", 404);
    ASSERT_HAS(b, "run 'alpha' audio tag 'tone' has no clip 1 at step 0");
    free(b);
}
END_TEST

START_TEST(text_series_is_escaped_json) {
    char *b = webui_get_expect(port, "/api/text/series?run=beta&tag=notes", 200);
    ASSERT_HAS(b, "\"rows\":[{\"step\":0,");
    ASSERT_HAS(b, "\"text\":\"\\u003cb>note\\u003c/b> 0 \\\"quoted\\\"\\n\"}");
    ASSERT_HAS(b, "{\"step\":40,");
    free(b);
}
END_TEST

START_TEST(tags_of_every_kind) {
    static const struct {
        const char *path, *want;
    } cases[] = {
        {"/api/images/tags?run=alpha", "{\"runs\":{\"alpha\":[{\"tag\":\"inputs\",\"count\":10,\"min_step\":0,\"max_step\":40,"},
        {"/api/text/tags?run=alpha", "{\"runs\":{\"alpha\":[{\"tag\":\"notes\",\"count\":5,\"min_step\":0,\"max_step\":40,"},
        {"/api/distributions/tags?run=alpha", "{\"runs\":{\"alpha\":[{\"tag\":\"weights\",\"count\":5,\"min_step\":0,\"max_step\":40,"},
        {"/api/histograms/tags", "{\"runs\":{\"alpha\":[{\"tag\":\"weights\",\"count\":5,"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = webui_get_expect(port, cases[i].path, 200);
        ck_assert_msg(!strncmp(b, cases[i].want, strlen(cases[i].want)), "%s: %s", cases[i].path, b);
        free(b);
    }
}
END_TEST

START_TEST(static_files_are_embedded) {
    http_response r = http_get(port, "/");
    ck_assert_int_eq(r.status, 200);
    char v[256];
    http_header(&r, "Content-Type", v, sizeof v);
    ck_assert_str_eq(v, "text/html; charset=utf-8");
    ASSERT_HAS(r.body, "<title>glassbox</title>");
    http_header(&r, "Content-Security-Policy", v, sizeof v);
    ASSERT_HAS(v, "default-src 'self'");
    http_free(&r);
    r = http_get(port, "/static/app.js");
    ck_assert_int_eq(r.status, 200);
    http_header(&r, "Content-Type", v, sizeof v);
    ck_assert_str_eq(v, "text/javascript; charset=utf-8");
    ck_assert_uint_gt(r.body_len, 20000); /* uPlot is in the bundle */
    http_free(&r);
    r = http_request(port, "HEAD", "/static/app.css", NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, 0);
    http_free(&r);
}
END_TEST

/* ---- bad requests ----------------------------------------------------------------- */

static const bad_case bad_cases[] = {
    {"/api/nope", 404, "no such API route"},
    {"/api/scalars", 404, "no such API route"},
    {"/api/scalars/series/extra", 404, "no such API route"},
    {"/nope.html", 404, "not found"},
    {"/static/../../../etc/passwd", 404, "not found"},
    {"/static/..%2f..%2fetc%2fpasswd", 404, "not found"},
    {"/static/%2e%2e/webui/board.c", 404, "not found"},
    {"/../../etc/passwd", 404, "not found"},
    {"/api/scalars/series?tag=loss", 400, "missing required parameter 'run'"},
    {"/api/scalars/series?run=alpha", 400, "missing required parameter 'tag'"},
    {"/api/scalars/series?run=alpha&tag=loss&points=abc", 400, "parameter 'points' is not an integer"},
    {"/api/scalars/series?run=alpha&tag=loss&points=0", 400, "parameter 'points' is out of range"},
    {"/api/scalars/series?run=alpha&tag=loss&points=100001", 400, "is out of range"},
    {"/api/scalars/series?run=alpha&tag=loss&points=12x", 400, "is not an integer"},
    {"/api/scalars/series?run=alpha&tag=loss&points=99999999999999999999", 400, "not an integer"},
    {"/api/scalars/series?run=alpha&tag=loss&since=-5", 400, "parameter 'since' is out of range"},
    {"/api/scalars/series?run=alpha&tag=loss&limit=5", 400,
     "unknown parameter 'limit' (accepted: run, tag, points, since, min_step, max_step)"},
    {"/api/scalars/series?run=alpha&run=beta&tag=loss", 400, "parameter 'run' given more than once"},
    {"/api/scalars/series?run=&tag=loss", 400, "parameter 'run' must not be empty"},
    {"/api/scalars/series?run&tag=loss", 400, "parameter 'run' has no value"},
    {"/api/scalars/series?run=%ff%fe&tag=loss", 400, "parameter 'run' is not valid UTF-8"},
    {"/api/scalars/series?run=%c0%af&tag=loss", 400, "is not valid UTF-8"},
    {"/api/scalars/series?run=a%01b&tag=loss", 400, "parameter 'run' contains a control character"},
    {"/api/scalars/series?run=alpha%00&tag=loss", 400, "a parameter contains a NUL byte"},
    {"/api/runs?x=1", 400, "unknown parameter 'x' (accepted: none)"},
    {"/api/images/png?run=alpha&tag=inputs", 400, "missing required parameter 'step'"},
    {"/api/images/png?run=alpha&tag=inputs&step=0&index=-1", 400, "parameter 'index' is out of range"},
    {"/api/scalars/series?run=gamma&tag=loss", 404, "unknown run 'gamma'"},
    {"/api/scalars/series?run=alpha&tag=nope", 404, "nope"},
    {"/api/scalars/tags?run=gamma", 404, "unknown run 'gamma'"},
    {"/api/histograms/series?run=alpha&tag=loss", 404, "loss"},
    /* SQL and paths in parameters are just names that do not exist. */
    {"/api/scalars/series?run=alpha'%20OR%20'1'='1&tag=loss", 404, "unknown run"},
    {"/api/scalars/series?run=alpha&tag=loss';%20DROP%20TABLE%20scalars;--", 404, "DROP TABLE"},
    {"/api/scalars/series?run=alpha%22;DELETE%20FROM%20runs;--&tag=loss", 404, "unknown run"},
    {"/api/scalars/series?run=..%2F..%2F..%2Fetc%2Fpasswd&tag=loss", 404, "unknown run '../../../etc/passwd'"},
    {"/api/text/series?run=alpha&tag=..%2F..%2Fnotes", 404, "../../notes"},
    {"/api/images/png?run=alpha&tag=inputs&step=0%20OR%201=1", 400, "'step' is not an integer"},
    /* the projector's and the audio routes: 4xx for every bad parameter */
    {"/api/projector/vectors?run=alpha&tag=points", 400, "missing required parameter 'step'"},
    {"/api/projector/vectors?run=alpha&tag=points&step=x", 400, "parameter 'step' is not an integer"},
    {"/api/projector/vectors?run=alpha&tag=points&step=0&index=0", 400, "unknown parameter 'index'"},
    {"/api/projector/metadata?run=alpha&step=0", 400, "missing required parameter 'tag'"},
    {"/api/projector/sprite?run=gamma&tag=points&step=0", 404, "unknown run 'gamma'"},
    {"/api/projector/vectors?run=alpha&tag=inputs&step=0", 404, "run 'alpha' has no embedding tag 'inputs'"},
    {"/api/projector/list?run=alpha&tag=points&points=0", 400, "parameter 'points' is out of range"},
    {"/api/projector/list?run=alpha&tag=points&points=1001", 400, "parameter 'points' is out of range"},
    {"/api/projector/vectors?run=alpha&tag=points&step=99999999999999999999", 400, "not an integer"},
    {"/api/audio/wav?run=alpha&tag=tone", 400, "missing required parameter 'step'"},
    {"/api/audio/wav?run=alpha&tag=tone&step=0&index=4097", 400, "parameter 'index' is out of range"},
    {"/api/audio/wav?run=alpha&tag=tone&step=0&index=x", 400, "parameter 'index' is not an integer"},
    {"/api/audio/wav?run=alpha&tag=points&step=0", 404, "run 'alpha' has no audio tag 'points'"},
    {"/api/audio/list?run=alpha", 400, "missing required parameter 'tag'"},
    {"/api/audio/tags?run=nobody", 404, "unknown run 'nobody'"},
};

START_TEST(bad_request_gets_json_error) { webui_assert_json_error(port, &bad_cases[_i]); }
END_TEST

START_TEST(wrong_methods_get_405) {
    static const char *const methods[] = {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"};
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        http_response r = http_request(port, methods[i], "/api/runs", "Content-Length: 0\r\n");
        ck_assert_msg(r.status == 405, "%s: %d", methods[i], r.status);
        char allow[64];
        http_header(&r, "Allow", allow, sizeof allow);
        ck_assert_str_eq(allow, "GET, HEAD");
        ck_assert_str_eq(r.body, "{\"error\":\"only GET and HEAD are allowed\",\"status\":405}");
        http_free(&r);
    }
    http_response r = http_request(port, "POST", "/api/scalars/series?run=alpha&tag=loss",
                                   "Content-Length: 11\r\n");
    ck_assert_int_eq(r.status, 405);
    http_free(&r);
}
END_TEST

START_TEST(foreign_host_header_is_refused) {
    http_response r;
    int fd = http_connect(port, 5000);
    ck_assert_int_ge(fd, 0);
    ck_assert(http_exchange(fd, "GET /api/runs HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
                            false, &r));
    close(fd);
    ck_assert_int_eq(r.status, 403);
    ASSERT_HAS(r.body, "host not allowed");
    http_free(&r);
    fd = http_connect(port, 5000);
    ck_assert(http_exchange(fd, "GET /api/runs HTTP/1.1\r\nHost: localhost:1234\r\nConnection: close\r\n\r\n",
                            false, &r));
    close(fd);
    ck_assert_int_eq(r.status, 200);
    http_free(&r);
}
END_TEST

/* Hash of the store file: a request must never change a byte of it. */
static unsigned long long file_hash(const char *path) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned long long h = 1469598103934665603ULL;
    int c;
    while ((c = fgetc(f)) != EOF) h = (h ^ (unsigned)c) * 1099511628211ULL;
    fclose(f);
    return h;
}

START_TEST(injection_attempts_change_nothing) {
    unsigned long long before = file_hash(db_path);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        http_response r = http_get(port, bad_cases[i].path);
        ck_assert_int_ge(r.status, 400);
        ck_assert_int_lt(r.status, 500);
        http_free(&r);
    }
    ck_assert(file_hash(db_path) == before);
    char *b = webui_get_expect(port, "/api/scalars/tags?run=alpha", 200);
    ASSERT_HAS(b, "\"tag\":\"loss\",\"count\":100,");
    free(b);
    b = webui_get_expect(port, "/api/runs", 200);
    ASSERT_HAS(b, "\"name\":\"alpha\"");
    ASSERT_HAS(b, "\"name\":\"beta\"");
    free(b);
}
END_TEST

/* ---- live updates ------------------------------------------------------------------ */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads from an SSE socket until `text` shows up at or after offset
 * `from` of the stream, or timeout_s passes. */
static bool sse_wait(int fd, char *buf, size_t size, size_t *have, size_t from, const char *text,
                     double timeout_s) {
    double until = now_s() + timeout_s;
    while (now_s() < until) {
        buf[*have] = '\0';
        if (strstr(buf + from, text)) return true;
        ssize_t n = recv(fd, buf + *have, size - 1 - *have, 0);
        if (n > 0) *have += (size_t)n;
        else if (n == 0) return false;
    }
    buf[*have] = '\0';
    return strstr(buf + from, text) != NULL;
}

START_TEST(event_stream_reports_a_flush_within_a_second) {
    int fd = http_connect(port, 200);
    ck_assert_int_ge(fd, 0);
    const char *req = "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert(http_send_all(fd, req, strlen(req)));
    char buf[8192];
    size_t have = 0;
    ck_assert_msg(sse_wait(fd, buf, sizeof buf, &have, 0, "data: {\"generation\":1}\n\n", 2.0), "%s", buf);
    ASSERT_HAS(buf, "Content-Type: text/event-stream");
    ASSERT_HAS(buf, "retry: 1000\n");

    /* Opening a run commits too: let that event pass first. */
    webui_append_scalar(db_path, "gamma", "loss", "0", "0.25", "0");
    sse_wait(fd, buf, sizeof buf, &have, 0, "never", 0.4);
    size_t mark = have;
    webui_append_scalar(db_path, "gamma", "loss", "7", "0.25", "1");
    /* How soon is a bench figure, not an assertion (make test runs on
     * loaded machines); the 10 s bound only keeps a broken stream from
     * hanging the test. */
    ck_assert_msg(sse_wait(fd, buf, sizeof buf, &have, mark, "data: {\"generation\":", 10.0),
                  "no event after the flush: %s", buf);
    close(fd);
    char *b = webui_get_expect(port, "/api/scalars/series?run=gamma&tag=loss", 200);
    ASSERT_HAS(b, "\"step\":[7],");
    ASSERT_HAS(b, "\"value\":[0.25],");
    free(b);
}
END_TEST

START_TEST(stop_ends_open_event_streams) {
    int fd = http_connect(port, 2000);
    const char *req = "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ck_assert(http_send_all(fd, req, strlen(req)));
    char buf[4096];
    size_t have = 0;
    ck_assert(sse_wait(fd, buf, sizeof buf, &have, 0, "generation", 2.0));
    size_t mark = have;
    gb_board_stop(board); /* returns (a hang fails the test by its timeout) */
    board = NULL;
    /* The stream ended, not cut: its last chunk came before the close (a
     * browser reports a cut one as ERR_INCOMPLETE_CHUNKED_ENCODING). */
    sse_wait(fd, buf, sizeof buf, &have, mark, "never", 2.0);
    ck_assert_msg(have >= 5 && !memcmp(buf + have - 5, "0\r\n\r\n", 5), "stream cut: '%s'", buf + mark);
    close(fd);
}
END_TEST

/* ---- start-up and errors -------------------------------------------------------------- */

START_TEST(start_and_first_response) {
    gb_board *b = gb_board_start(db_path, "127.0.0.1", 0, NULL);
    ck_assert_ptr_nonnull(b);
    http_response r = http_get(gb_board_port(b), "/api/runs");
    ck_assert_int_eq(r.status, 200);
    http_free(&r);
    gb_board_stop(b);
}
END_TEST

START_TEST(start_errors_are_reported_not_fatal) {
    ck_assert_ptr_null(gb_board_start("/nonexistent/dir/none.db", NULL, 0, NULL));
    ASSERT_HAS(gb_board_last_error(), "cannot open store '/nonexistent/dir/none.db'");
    ck_assert_ptr_null(gb_board_start("", NULL, 0, NULL));
    ASSERT_HAS(gb_board_last_error(), "no store given");
    ck_assert_ptr_null(gb_board_start(db_path, NULL, 70000, NULL));
    ck_assert_str_eq(gb_board_last_error(), "port 70000 is out of range 0..65535");
    ck_assert_ptr_null(gb_board_start(P_tmpdir, NULL, 0, NULL));
    ASSERT_HAS(gb_board_last_error(), "is not a regular file");

    char junk[600];
    snprintf(junk, sizeof junk, "%s.junk", db_path);
    FILE *f = fopen(junk, "w");
    fputs("not a database, just text\n", f);
    fclose(f);
    ck_assert_ptr_null(gb_board_start(junk, NULL, 0, NULL));
    ASSERT_HAS(gb_board_last_error(), "cannot open store");
    unlink(junk);

    /* The port of the running board is taken. */
    ck_assert_ptr_null(gb_board_start(db_path, "127.0.0.1", port, NULL));
    ASSERT_HAS(gb_board_last_error(), "Address already in use (port in use");
    ck_assert_ptr_null(gb_board_start(db_path, "no-such-host.invalid", 0, NULL));
    ASSERT_HAS(gb_board_last_error(), "cannot resolve host 'no-such-host.invalid'");
    /* The running board still answers. */
    char *b = webui_get_expect(port, "/api/runs", 200);
    free(b);
}
END_TEST

START_TEST(url_and_loopback_default) {
    char want[64];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/", port);
    ck_assert_str_eq(gb_board_url(board), want);
    gb_board *b6 = gb_board_start(db_path, "::1", 0, NULL);
    if (b6) { /* IPv6 loopback may be missing in a container */
        snprintf(want, sizeof want, "http://[::1]:%d/", gb_board_port(b6));
        ck_assert_str_eq(gb_board_url(b6), want);
        gb_board_stop(b6);
    }
    gb_board_stop(NULL);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_api");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, runs_lists_both_runs_with_hparams);
    tcase_add_test(tc, plugins_lists_active_dashboards_in_order);
    tcase_add_test(tc, scalar_tags_of_one_run_and_of_all);
    tcase_add_test(tc, scalar_series_raw_with_nonfinite_values);
    tcase_add_test(tc, scalar_series_downsampled_since_and_range);
    tcase_add_test(tc, histogram_and_distribution_series);
    tcase_add_test(tc, images_list_and_png_bytes);
    tcase_add_test(tc, projector_lists_steps_and_sends_parts);
    tcase_add_test(tc, audio_lists_clips_and_sends_wav);
    tcase_add_test(tc, text_series_is_escaped_json);
    tcase_add_test(tc, tags_of_every_kind);
    tcase_add_test(tc, static_files_are_embedded);
    tcase_add_loop_test(tc, bad_request_gets_json_error, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, wrong_methods_get_405);
    tcase_add_test(tc, foreign_host_header_is_refused);
    tcase_add_test(tc, injection_attempts_change_nothing);
    tcase_add_test(tc, start_and_first_response);
    tcase_add_test(tc, start_errors_are_reported_not_fatal);
    tcase_add_test(tc, url_and_loopback_default);
    suite_add_tcase(s, tc);
    /* The live tests write to the store: they run last. */
    TCase *live = tcase_create("live");
    tcase_add_checked_fixture(live, setup, teardown);
    tcase_set_timeout(live, 30);
    tcase_add_test(live, event_stream_reports_a_flush_within_a_second);
    tcase_add_test(live, stop_ends_open_event_streams);
    suite_add_tcase(s, live);
    return s;
}

int main(void) {
    build_store();
    int status = run_suite(suite());
    webui_remove_store(db_path);
    return status;
}
