/* test_webui_numerics.c — the Numerics dashboard's API against a store
 * written for the test (by webui_fixtures, see there): alerts written out
 * of step order come back by (step, arrival), filters and windows select
 * exactly, after_id gives a live page only what is new, every field of an
 * alert reaches the JSON (from the writer API and from the engine's own
 * numerics checks through the default writer's observer), damaged details
 * degrade to nulls, and bad parameters get 400/404/405. Links the server
 * and the store only; the detail parser itself is the store's
 * (test_summary_reader.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board_internal.h"
#include "gb_board.h"
#include "gb_reader.h"
#include "numerics/internal.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

/* The plugin's descriptor (webui/numerics/plugin.c), for its is_active. */
extern const gb__plugin gb__plugin_numerics;

static char db_path[512], quiet_path[512];
static gb_board *board;
static int port;

/* ---- the store -------------------------------------------------------------- */

/* webui_fixtures.c, "numerics": run alpha has six alerts written in this
 * order (ids 1..6): loss/Log step 7 (a full detail), loss/Mul step 5 (an
 * input without finite values), pre/Sqrt without a step (no detail),
 * gradients/loss/Log_grad/Div step 7 (backward), loss/Log_1 step 5 (a
 * damaged detail), odd/Mul step 9 (unknown fields, a forward op without a
 * backward flag). Run engine has the engine's own alerts (ids 7..9):
 * net/Log and net/Mul at step 3, the backward pass of model/Sqrt at step 4.
 * Run quiet has a scalar and no alert, in db_path and alone in quiet_path. */
#define ALPHA_ORDER \
    "pre/Sqrt,loss/Mul,loss/Log_1,loss/Log,gradients/loss/Log_grad/Div,odd/Mul"

static void build_store(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_numerics_%d.db", P_tmpdir, (int)getpid());
    snprintf(quiet_path, sizeof quiet_path, "%s/webui_numerics_quiet_%d.db", P_tmpdir,
             (int)getpid());
    webui_remove_store(db_path);
    webui_remove_store(quiet_path);
    webui_write_fixture((const char *const[]){"numerics", db_path, quiet_path, NULL});
}

static void setup(void) { board = webui_start_board(db_path, &port); }

static void teardown(void) { gb_board_stop(board); }

/* ---- helpers ----------------------------------------------------------------- */

/* The op names of the "alerts" array, in order, comma-separated. */
static void alert_names(const char *body, char *out, size_t size) {
    const char *p = strstr(body, "\"alerts\":[");
    ck_assert_ptr_nonnull(p);
    size_t len = 0;
    out[0] = '\0';
    while ((p = strstr(p, "\"op_name\":\""))) {
        p += 11;
        size_t n = strcspn(p, "\"");
        len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%.*s", len ? "," : "",
                                (int)n, p);
        p += n;
    }
}

static void assert_order(const char *path, const char *want) {
    char *b = webui_get_expect(port, path, 200);
    char names[1024];
    alert_names(b, names, sizeof names);
    ck_assert_msg(!strcmp(names, want), "%s: got %s, want %s", path, names, want);
    free(b);
}

/* ---- ordering, filters, windows ------------------------------------------------------- */

START_TEST(alerts_come_in_first_occurrence_order) {
    /* Stepless first, then by step, ties in the order written. */
    assert_order("/api/numerics/alerts?run=alpha", ALPHA_ORDER);
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha", 200);
    ASSERT_HAS(b, "{\"run\":\"alpha\",\"total\":6,\"matched\":6,\"window_matched\":6,"
                  "\"last_id\":6,\"first_step\":5,\"last_step\":9,\"truncated\":false,"
                  "\"seen\":null,\"seen_last_step\":null,"   /* written without the engine's count */
                  "\"offset\":0,\"first\":{\"id\":3,\"step\":null,");
    ASSERT_HAS(b, "\"op_types\":[{\"op_type\":\"Log\",\"count\":2},{\"op_type\":\"Mul\","
                  "\"count\":2},{\"op_type\":\"Div\",\"count\":1},{\"op_type\":\"Sqrt\","
                  "\"count\":1}]");
    free(b);
}
END_TEST

START_TEST(filters_select_op_type_and_steps) {
    assert_order("/api/numerics/alerts?run=alpha&op_type=Log", "loss/Log_1,loss/Log");
    assert_order("/api/numerics/alerts?run=alpha&min_step=7&max_step=7",
                 "loss/Log,gradients/loss/Log_grad/Div");
    assert_order("/api/numerics/alerts?run=alpha&op_type=Mul&min_step=6", "odd/Mul");
    /* A step bound leaves out alerts without a step. */
    assert_order("/api/numerics/alerts?run=alpha&max_step=5", "loss/Mul,loss/Log_1");
    assert_order("/api/numerics/alerts?run=alpha&op_type=MatMul", "");
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&op_type=Log&max_step=6", 200);
    /* Totals and the first alert describe the whole run, whatever the filter. */
    ASSERT_HAS(b, "\"total\":6,\"matched\":1,\"window_matched\":1,");
    ASSERT_HAS(b, "\"first\":{\"id\":3,");
    free(b);
}
END_TEST

START_TEST(windows_cut_the_ordered_alerts) {
    assert_order("/api/numerics/alerts?run=alpha&limit=2", "pre/Sqrt,loss/Mul");
    assert_order("/api/numerics/alerts?run=alpha&offset=2&limit=3",
                 "loss/Log_1,loss/Log,gradients/loss/Log_grad/Div");
    assert_order("/api/numerics/alerts?run=alpha&offset=5", "odd/Mul");
    assert_order("/api/numerics/alerts?run=alpha&offset=6", "");
    /* after_id: what arrived after alert 4, still in first-occurrence order. */
    assert_order("/api/numerics/alerts?run=alpha&after_id=4", "loss/Log_1,odd/Mul");
    assert_order("/api/numerics/alerts?run=alpha&after_id=1&limit=2", "pre/Sqrt,loss/Mul");
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&after_id=4&op_type=Mul", 200);
    ASSERT_HAS(b, "\"total\":6,\"matched\":2,\"window_matched\":1,\"last_id\":6,");
    free(b);
}
END_TEST

/* ---- the fields of an alert --------------------------------------------------------------- */

START_TEST(alert_fields_from_the_writer) {
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&min_step=7&max_step=7", 200);
    /* Everything after the wall time, exactly. */
    ASSERT_HAS(b, "\"op_type\":\"Log\",\"op_name\":\"loss/Log\",\"scope\":\"loss\","
                  "\"function\":\"train_step\",\"direction\":\"forward\",\"forward_op\":\"\","
                  "\"forward_op_type\":\"\",\"nan\":0,\"posinf\":0,\"neginf\":3,"
                  "\"first_index\":2,\"origin\":\"created\",\"output\":{\"index\":0,"
                  "\"dtype\":\"float32\",\"shape\":[4]},\"inputs\":[{\"dtype\":\"float32\","
                  "\"shape\":[4],\"min\":0,\"max\":2.5,\"nan\":0,\"inf\":0}],"
                  "\"message\":\"Log made -Inf\"}");
    ASSERT_HAS(b, "{\"id\":1,\"step\":7,\"wall\":");
    ASSERT_HAS(b, "\"op_name\":\"gradients/loss/Log_grad/Div\",\"scope\":\"\",\"function\":\"\","
                  "\"direction\":\"backward\",\"forward_op\":\"loss/Log\","
                  "\"forward_op_type\":\"Log\",\"nan\":0,\"posinf\":1,\"neginf\":0,"
                  "\"first_index\":null,\"origin\":\"created\",\"output\":null,\"inputs\":[],");
    free(b);
    /* An input with no finite value: min and max are NaN. */
    b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&op_type=Mul&max_step=5", 200);
    ASSERT_HAS(b, "\"origin\":\"received\",\"output\":null,\"inputs\":[{\"dtype\":\"float32\","
                  "\"shape\":[2],\"min\":\"NaN\",\"max\":\"NaN\",\"nan\":2,\"inf\":0}]");
    free(b);
}
END_TEST

START_TEST(missing_or_damaged_detail_gives_nulls) {
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&op_type=Log&max_step=5", 200);
    /* {"created": tru}: nothing from it is trusted, the row still shows. */
    ASSERT_HAS(b, "\"op_name\":\"loss/Log_1\",\"scope\":\"\",\"function\":\"\","
                  "\"direction\":\"forward\",\"forward_op\":\"\",\"forward_op_type\":\"\","
                  "\"nan\":0,\"posinf\":0,\"neginf\":1,\"first_index\":null,\"origin\":null,"
                  "\"output\":null,\"inputs\":[],\"message\":\"\"}");
    free(b);
    b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&op_type=Sqrt", 200);
    ASSERT_HAS(b, "{\"id\":3,\"step\":null,");
    ASSERT_HAS(b, "\"direction\":\"forward\",\"forward_op\":\"\",\"forward_op_type\":\"\","
                  "\"nan\":1,\"posinf\":0,\"neginf\":0,\"first_index\":null,\"origin\":null,"
                  "\"output\":null,\"inputs\":[]");
    free(b);
    /* Unknown fields are skipped; a forward op with no detail flag means backward. */
    b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&min_step=9", 200);
    ASSERT_HAS(b, "\"direction\":\"backward\",\"forward_op\":\"odd/Exp\",");
    ASSERT_HAS(b, "\"output\":{\"index\":null,\"dtype\":\"f\xc3\xa9\",\"shape\":null}");
    free(b);
}
END_TEST

START_TEST(engine_alerts_through_the_default_writer) {
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=engine", 200);
    char names[1024];
    alert_names(b, names, sizeof names);
    /* log(0) first, then what received it, then the backward pass. */
    ck_assert_msg(!strncmp(names, "net/Log,net/Mul,gradients/model/Sqrt_grad/", 42), "%s", names);
    ASSERT_HAS(b, "\"first\":{\"id\":7,\"step\":3,");
    ASSERT_HAS(b, "\"op_type\":\"Log\",\"op_name\":\"net/Log\",\"scope\":\"net\",\"function\":\"\","
                  "\"direction\":\"forward\",\"forward_op\":\"\",\"forward_op_type\":\"\","
                  "\"nan\":0,\"posinf\":0,\"neginf\":1,\"first_index\":1,\"origin\":\"created\","
                  "\"output\":{\"index\":0,\"dtype\":\"float32\",\"shape\":[3]},"
                  "\"inputs\":[{\"dtype\":\"float32\",\"shape\":[3],\"min\":0,\"max\":4,"
                  "\"nan\":0,\"inf\":0}],\"message\":\"");
    ASSERT_HAS(b, "\"op_name\":\"net/Mul\",\"scope\":\"net\",\"function\":\"\","
                  "\"direction\":\"forward\",\"forward_op\":\"\",\"forward_op_type\":\"\","
                  "\"nan\":1,\"posinf\":0,\"neginf\":0,\"first_index\":1,\"origin\":\"received\"");
    ASSERT_HAS(b, "\"step\":4,");
    ASSERT_HAS(b, "\"direction\":\"backward\",\"forward_op\":\"model/Sqrt\","
                  "\"forward_op_type\":\"Sqrt\",\"nan\":0,\"posinf\":1,");
    free(b);
}
END_TEST

START_TEST(runs_lists_only_runs_with_alerts) {
    char *b = webui_get_expect(port, "/api/numerics/runs", 200);
    static const char head[] =
        "{\"runs\":[{\"run\":\"alpha\",\"count\":6,\"first_step\":5,\"last_step\":9,"
        "\"truncated\":false,\"seen\":null,\"seen_last_step\":null,"
        "\"first\":{\"id\":3,\"step\":null,\"op_type\":\"Sqrt\","
        "\"op_name\":\"pre/Sqrt\"}},{\"run\":\"engine\",\"count\":3,";
    ck_assert_msg(!strncmp(b, head, sizeof head - 1), "%s", b);
    /* The engine's run: its checks counted every alert, the last at step 4. */
    ASSERT_HAS(b, "\"first_step\":3,\"last_step\":4,\"truncated\":false,\"seen\":3,"
                  "\"seen_last_step\":4,\"first\":{\"id\":7,"
                  "\"step\":3,\"op_type\":\"Log\",\"op_name\":\"net/Log\"}}]}");
    ck_assert_ptr_null(strstr(b, "quiet"));
    free(b);
    b = webui_get_expect(port, "/api/numerics/alerts?run=quiet", 200);
    ASSERT_HAS(b, "\"total\":0,\"matched\":0,\"window_matched\":0,\"last_id\":0,"
                  "\"first_step\":null,\"last_step\":null,\"truncated\":false,\"seen\":null,"
                  "\"seen_last_step\":null,\"offset\":0,\"first\":null,\"op_types\":[],\"alerts\":[]}");
    free(b);
}
END_TEST

START_TEST(plugin_is_active_only_with_alerts) {
    char *b = webui_get_expect(port, "/api/plugins", 200);
    ASSERT_HAS(b, "{\"name\":\"numerics\",\"title\":\"Numerics\",\"active\":true}");
    free(b);
    gb_store *s = NULL;
    ck_assert_int_eq(gb_store_open(quiet_path, &s), GB_STORE_OK);
    ck_assert(!gb__plugin_numerics.is_active(s));
    gb_store_close(s);
    ck_assert_int_eq(gb_store_open(db_path, &s), GB_STORE_OK);
    ck_assert(gb__plugin_numerics.is_active(s));
    gb_store_close(s);
}
END_TEST

START_TEST(scan_limit_truncates_and_says_so) {
    gb_store *s = NULL;
    ck_assert_int_eq(gb_store_open(db_path, &s), GB_STORE_OK);
    gb__numerics_view v;
    gb__numerics_filter f = {.step_min = GB_STEP_MIN, .step_max = GB_STEP_MAX, .limit = 10,
                             .scan_max = 4};
    ck_assert_int_eq(gb__numerics_read(s, "alpha", &f, &v), GB_STORE_OK);
    ck_assert(v.truncated);
    ck_assert_int_eq(v.total, 4);
    ck_assert_int_eq(v.last_id, 4);
    ck_assert_uint_eq(v.count, 4);
    /* The first four by id, in first-occurrence order. */
    static const int64_t want[] = {3, 2, 1, 4};
    for (size_t i = 0; i < 4; i++) ck_assert_int_eq(v.rows[i]->id, want[i]);
    gb__numerics_view_free(&v);
    f.scan_max = 6;
    ck_assert_int_eq(gb__numerics_read(s, "alpha", &f, &v), GB_STORE_OK);
    ck_assert(!v.truncated);
    ck_assert_int_eq(v.total, 6);
    gb__numerics_view_free(&v);
    ck_assert_int_eq(gb__numerics_read(s, "nobody", &f, &v), GB_STORE_ERR_NO_RUN);
    gb__numerics_view_free(&v);
    gb_store_close(s);
}
END_TEST

/* ---- bad requests -------------------------------------------------------------------------------- */

static const bad_case bad_cases[] = {
    {"/api/numerics/alerts", 400, "missing required parameter 'run'"},
    {"/api/numerics/alerts?run=", 400, "parameter 'run' must not be empty"},
    {"/api/numerics/alerts?run=nobody", 404, "unknown run 'nobody'"},
    {"/api/numerics/alerts?run=alpha&limit=0", 400, "parameter 'limit' is out of range (expected an integer in [1, 5000])"},
    {"/api/numerics/alerts?run=alpha&limit=5001", 400, "parameter 'limit' is out of range"},
    {"/api/numerics/alerts?run=alpha&offset=-1", 400, "parameter 'offset' is out of range (expected an integer in [0, 200000])"},
    {"/api/numerics/alerts?run=alpha&after_id=x", 400, "parameter 'after_id' is not an integer"},
    {"/api/numerics/alerts?run=alpha&after_id=-1", 400, "parameter 'after_id' is out of range"},
    {"/api/numerics/alerts?run=alpha&min_step=1.5", 400, "parameter 'min_step' is not an integer"},
    {"/api/numerics/alerts?run=alpha&op_type=", 400, "parameter 'op_type' must not be empty"},
    {"/api/numerics/alerts?run=alpha&op_type=%01", 400, "parameter 'op_type' contains a control character"},
    {"/api/numerics/alerts?run=alpha&op_type=%ff", 400, "parameter 'op_type' is not valid UTF-8"},
    {"/api/numerics/alerts?run=alpha&limit=1&limit=2", 400, "parameter 'limit' given more than once"},
    {"/api/numerics/alerts?run=alpha&tag=x", 400, "unknown parameter 'tag' (accepted: run, op_type, min_step, max_step, after_id, offset, limit)"},
    {"/api/numerics/runs?run=alpha", 400, "unknown parameter 'run' (accepted: none)"},
    {"/api/numerics", 404, "no such API route"},
    {"/api/numerics/", 404, "no such API route"},
    {"/api/numerics/alert", 404, "no such API route"},
    {"/api/numerics/alerts/extra", 404, "no such API route"},
};

START_TEST(bad_request_gets_json_error) { webui_assert_json_error(port, &bad_cases[_i]); }
END_TEST

START_TEST(injection_in_op_type_matches_nothing) {
    assert_order("/api/numerics/alerts?run=alpha&op_type=Log'%20OR%20'1'='1", "");
    assert_order("/api/numerics/alerts?run=alpha&op_type=%25", "");
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha%22%3B--", 404);
    free(b);
}
END_TEST

START_TEST(only_get_and_head) {
    static const char *const methods[] = {"POST", "PUT", "DELETE"};
    for (size_t i = 0; i < 3; i++) {
        http_response r =
            http_request(port, methods[i], "/api/numerics/alerts?run=alpha", "Content-Length: 0\r\n");
        ck_assert_msg(r.status == 405, "%s: %d", methods[i], r.status);
        http_free(&r);
    }
    http_response r = http_request(port, "HEAD", "/api/numerics/alerts?run=alpha", NULL);
    ck_assert_int_eq(r.status, 200);
    http_free(&r);
}
END_TEST

/* ---- live: an alert written while the server runs ---------------------------------------------- */

START_TEST(new_alert_comes_after_last_id_in_its_place) {
    webui_append_alert(db_path, "alpha", "1", "Exp", "late/Exp");
    /* The page held ids up to 6: it gets only the new one... */
    char *b = webui_get_expect(port, "/api/numerics/alerts?run=alpha&after_id=6", 200);
    ASSERT_HAS(b, "\"total\":7,\"matched\":7,\"window_matched\":1,\"last_id\":");
    free(b);
    assert_order("/api/numerics/alerts?run=alpha&after_id=6", "late/Exp");
    /* ...whose place is second: step 1 happened before step 5. */
    assert_order("/api/numerics/alerts?run=alpha&limit=3", "pre/Sqrt,late/Exp,loss/Mul");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_numerics");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, alerts_come_in_first_occurrence_order);
    tcase_add_test(tc, filters_select_op_type_and_steps);
    tcase_add_test(tc, windows_cut_the_ordered_alerts);
    tcase_add_test(tc, alert_fields_from_the_writer);
    tcase_add_test(tc, missing_or_damaged_detail_gives_nulls);
    tcase_add_test(tc, engine_alerts_through_the_default_writer);
    tcase_add_test(tc, runs_lists_only_runs_with_alerts);
    tcase_add_test(tc, plugin_is_active_only_with_alerts);
    tcase_add_test(tc, scan_limit_truncates_and_says_so);
    tcase_add_loop_test(tc, bad_request_gets_json_error, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, injection_in_op_type_matches_nothing);
    tcase_add_test(tc, only_get_and_head);
    suite_add_tcase(s, tc);
    /* Writes to the store: runs last. */
    TCase *live = tcase_create("live");
    tcase_add_checked_fixture(live, setup, teardown);
    tcase_set_timeout(live, 30);
    tcase_add_test(live, new_alert_comes_after_last_id_in_its_place);
    suite_add_tcase(s, live);
    return s;
}

int main(void) {
    build_store();
    int status = run_suite(suite());
    webui_remove_store(db_path);
    webui_remove_store(quiet_path);
    return status;
}
