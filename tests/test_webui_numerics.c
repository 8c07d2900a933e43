/* test_webui_numerics.c — the Numerics dashboard's API against a store
 * written in the test: alerts written out of step order come back by
 * (step, arrival), filters and windows select exactly, after_id gives a
 * live page only what is new, every field of an alert reaches the JSON
 * (from the writer API and from the engine's own numerics checks through
 * the default writer's observer), damaged details degrade to nulls, and
 * bad parameters get 400/404/405. The detail parser is checked directly
 * on valid and malformed JSON. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board_internal.h"
#include "gb_board.h"
#include "gb_reader.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "numerics.h"
#include "test_util.h"
#include "webui_http.h"
#include "webui_test_util.h"

/* The plugin's descriptor (webui/plugin_numerics.c), for its is_active. */
extern const gb__plugin gb__plugin_numerics;

static char db_path[512], quiet_path[512];
static gb_board *board;
static int port;

/* ---- the store -------------------------------------------------------------- */

#define LOG_DETAIL                                                                          \
    "{\"output_index\":0,\"dtype\":\"float32\",\"shape\":[4],\"first_index\":2,"           \
    "\"created\":true,\"backward\":false,\"forward_op_type\":\"\",\"inputs\":[{\"dtype\":" \
    "\"float32\",\"shape\":[4],\"min\":0,\"max\":2.5,\"nan_count\":0,\"inf_count\":0}]}"

/* Alerts of run "alpha", written in this order (ids 1..6) with steps out
 * of order, one without a step and one with a damaged detail. */
static const struct {
    int64_t step;
    gb_numerics_record r;
} alpha[] = {
    {7, {.op_type = "Log", .op_name = "loss/Log", .function = "train_step", .scope_path = "loss",
         .neginf_count = 3, .message = "Log made -Inf", .detail_json = LOG_DETAIL}},
    {5, {.op_type = "Mul", .op_name = "loss/Mul", .scope_path = "loss", .nan_count = 2,
         .message = "Mul got NaN",
         .detail_json = "{\"created\":false,\"inputs\":[{\"dtype\":\"float32\",\"shape\":[2],"
                        "\"min\":null,\"max\":null,\"nan_count\":2,\"inf_count\":0}]}"}},
    {GB_STEP_DEFAULT, {.op_type = "Sqrt", .op_name = "pre/Sqrt", .nan_count = 1}},
    {7, {.op_type = "Div", .op_name = "gradients/loss/Log_grad/Div", .forward_op = "loss/Log",
         .posinf_count = 1,
         .detail_json = "{\"backward\":true,\"created\":true,\"forward_op_type\":\"Log\"}"}},
    {5, {.op_type = "Log", .op_name = "loss/Log_1", .neginf_count = 1,
         .detail_json = "{\"created\": tru}"}},
    {9, {.op_type = "Mul", .op_name = "odd/Mul", .forward_op = "odd/Exp", .nan_count = 5,
         .detail_json = "{\"future\":{\"a\":[1,{\"b\":null}]},\"dtype\":\"f\\u00e9\"}"}},
};
#define ALPHA_ORDER \
    "pre/Sqrt,loss/Mul,loss/Log_1,loss/Log,gradients/loss/Log_grad/Div,odd/Mul"

static void write_alpha(void) {
    gb_summary_writer *w = NULL;
    REQUIRE(gb_summary_writer_open(db_path, "alpha", NULL, &w) == GB_OK);
    for (size_t i = 0; i < sizeof alpha / sizeof alpha[0]; i++)
        REQUIRE(gb_summary_numerics(w, &alpha[i].r, alpha[i].step) == GB_OK);
    REQUIRE(gb_summary_writer_close(w) == GB_OK);
}

/* Run "engine": the engine's RECORD-mode checks reach the store through
 * the default writer: log(0) creates -Inf, 0 * -Inf receives it as NaN,
 * and d sqrt(x)/dx at 0 is +Inf in the backward pass of model/Sqrt. */
static void write_engine(void) {
    gb_summary_writer *w = NULL;
    REQUIRE(gb_summary_writer_open(db_path, "engine", NULL, &w) == GB_OK);
    gb_summary_set_default(w);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_scope_begin();
    gb_set_step(3);
    gb_name_scope_push("net");
    gb_tensor *y = gb_log(gb_tensor_from(GB_F32, (float[]){1, 0, 4}, 1, (int64_t[]){3}));
    gb_mul(y, gb_zeros(GB_F32, 1, (int64_t[]){3}));
    gb_name_scope_pop();
    gb_set_step(4);
    gb_tensor *x = gb_scalar(GB_F64, 0);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_name_scope_push("model");
    gb_tensor *s = gb_sqrt(x);
    gb_name_scope_pop();
    gb_tape_end(tape);
    REQUIRE(gb_tape_gradient(tape, s, x) != NULL);
    gb_scope_end();
    gb_disable_check_numerics();
    gb_clear_step();
    REQUIRE(gb_summary_writer_close(w) == GB_OK);
}

static void write_quiet(const char *path) {
    gb_summary_writer *w = NULL;
    REQUIRE(gb_summary_writer_open(path, "quiet", NULL, &w) == GB_OK);
    REQUIRE(gb_summary_scalar(w, "loss", 1.0, 0) == GB_OK);
    REQUIRE(gb_summary_writer_close(w) == GB_OK);
}

static void build_store(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_numerics_%d.db", P_tmpdir, (int)getpid());
    snprintf(quiet_path, sizeof quiet_path, "%s/webui_numerics_quiet_%d.db", P_tmpdir,
             (int)getpid());
    unlink(db_path);
    unlink(quiet_path);
    write_alpha();
    write_engine();
    write_quiet(db_path);
    write_quiet(quiet_path);
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
        "\"truncated\":false,\"first\":{\"id\":3,\"step\":null,\"op_type\":\"Sqrt\","
        "\"op_name\":\"pre/Sqrt\"}},{\"run\":\"engine\",\"count\":3,";
    ck_assert_msg(!strncmp(b, head, sizeof head - 1), "%s", b);
    ASSERT_HAS(b, "\"first_step\":3,\"last_step\":4,\"truncated\":false,\"first\":{\"id\":7,"
                  "\"step\":3,\"op_type\":\"Log\",\"op_name\":\"net/Log\"}}]}");
    ck_assert_ptr_null(strstr(b, "quiet"));
    free(b);
    b = webui_get_expect(port, "/api/numerics/alerts?run=quiet", 200);
    ASSERT_HAS(b, "\"total\":0,\"matched\":0,\"window_matched\":0,\"last_id\":0,"
                  "\"first_step\":null,\"last_step\":null,\"truncated\":false,\"offset\":0,"
                  "\"first\":null,\"op_types\":[],\"alerts\":[]}");
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

/* ---- the detail parser -------------------------------------------------------------------------------- */

START_TEST(detail_parser_reads_every_field) {
    gb__numerics_detail d;
    ck_assert(gb__numerics_detail_parse(
        " {\"output_index\":1,\"dtype\":\"float64\",\"shape\":[2,0,3],\"first_index\":5,"
        "\"created\":false,\"backward\":true,\"forward_op_type\":\"L\\u00e9\\ud83d\\ude00\\n\\\"\","
        "\"inputs\":[{\"dtype\":\"int32\",\"shape\":[],\"min\":-1.5e3,\"max\":null,"
        "\"nan_count\":7,\"inf_count\":8},{}]} ",
        &d));
    ck_assert_int_eq(d.output_index, 1);
    ck_assert_str_eq(d.output.dtype, "float64");
    ck_assert_int_eq(d.output.rank, 3);
    ck_assert_int_eq(d.output.shape[0], 2);
    ck_assert_int_eq(d.output.shape[1], 0);
    ck_assert_int_eq(d.output.shape[2], 3);
    ck_assert_int_eq(d.first_index, 5);
    ck_assert_int_eq(d.created, GB__NO);
    ck_assert_int_eq(d.backward, GB__YES);
    ck_assert_str_eq(d.forward_op_type, "L\xc3\xa9\xf0\x9f\x98\x80\n\"");
    ck_assert_int_eq(d.ninputs, 2);
    ck_assert_str_eq(d.inputs[0].tensor.dtype, "int32");
    ck_assert_int_eq(d.inputs[0].tensor.rank, 0);
    ck_assert(d.inputs[0].min == -1500.0);
    ck_assert(isnan(d.inputs[0].max));
    ck_assert_int_eq(d.inputs[0].nan_count, 7);
    ck_assert_int_eq(d.inputs[0].inf_count, 8);
    /* An empty input object: everything unknown. */
    ck_assert_int_eq(d.inputs[1].tensor.rank, -1);
    ck_assert_str_eq(d.inputs[1].tensor.dtype, "");
    ck_assert(isnan(d.inputs[1].min));
}
END_TEST

START_TEST(detail_parser_skips_unknown_and_caps_inputs) {
    gb__numerics_detail d;
    ck_assert(gb__numerics_detail_parse(
        "{\"x\":{\"y\":[1,-0.5e-2,true,false,null,\"\\u00e9\",{\"z\":[]}]},\"a_key_longer_than_"
        "thirty_two_bytes_is_unknown\":1,\"created\":true}",
        &d));
    ck_assert_int_eq(d.created, GB__YES);
    ck_assert_int_eq(d.backward, GB__UNKNOWN);
    ck_assert_int_eq(d.first_index, -1);
    char many[1024] = "{\"inputs\":[";
    for (int i = 0; i < 10; i++) strcat(many, i ? ",{\"nan_count\":1}" : "{\"nan_count\":1}");
    strcat(many, "]}");
    ck_assert(gb__numerics_detail_parse(many, &d));
    ck_assert_int_eq(d.ninputs, GB__NUMERICS_MAX_INPUTS);
}
END_TEST

static const char *const malformed[] = {
    "", "null", "[]", "{", "{}x", "{\"created\":tru}", "{\"created\":1}",
    "{\"first_index\":1.5}", "{\"first_index\":-2}", "{\"output_index\":\"0\"}",
    "{\"shape\":[1,2,3,4,5,6,7,8,9]}", "{\"shape\":[-1]}", "{\"dtype\":\"a_dtype_name_too_long\"}",
    "{\"inputs\":[{\"min\":\"0\"}]}", "{\"inputs\":{}}", "{\"x\":01}", "{\"x\":1.}", "{\"x\":-}",
    "{\"x\":1e}", "{\"x\":\"\\ud800\"}", "{\"x\":\"\\udc00\"}", "{\"x\":\"\\u0000\"}",
    "{\"x\":\"\\q\"}", "{\"x\":\"a\nb\"}", "{\"x\":\"open}", "{\"x\":1,}", "{,}", "{\"x\" 1}",
    "{\"x\":[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}", "{\"x\":NaN}",
};

START_TEST(detail_parser_rejects_malformed) {
    gb__numerics_detail d;
    const char *json = malformed[_i];
    ck_assert_msg(!gb__numerics_detail_parse(json, &d), "accepted: %s", json);
    /* A rejected detail is all unknowns, never half-filled. */
    ck_assert_int_eq(d.created, GB__UNKNOWN);
    ck_assert_int_eq(d.output.rank, -1);
    ck_assert_int_eq(d.ninputs, 0);
    ck_assert_str_eq(d.output.dtype, "");
}
END_TEST

/* ---- live: an alert written while the server runs ---------------------------------------------- */

START_TEST(new_alert_comes_after_last_id_in_its_place) {
    gb_summary_writer *w = NULL;
    ck_assert_int_eq(gb_summary_writer_open(db_path, "alpha", NULL, &w), GB_OK);
    gb_numerics_record r = {.op_type = "Exp", .op_name = "late/Exp", .posinf_count = 1};
    ck_assert_int_eq(gb_summary_numerics(w, &r, 1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
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
    TCase *parser = tcase_create("detail");
    tcase_add_test(parser, detail_parser_reads_every_field);
    tcase_add_test(parser, detail_parser_skips_unknown_and_caps_inputs);
    tcase_add_loop_test(parser, detail_parser_rejects_malformed, 0,
                        (int)(sizeof malformed / sizeof malformed[0]));
    suite_add_tcase(s, parser);
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
