/* test_webui_profile.c — the Profile routes on a store the engine wrote
 * (webui_fixtures "profile": three steps of a traced function, profiled
 * between trace_on(profile) and trace_export). Shapes of the answers and
 * the counts the engine fixes are checked exactly (times are the
 * machine's); every bad parameter is a 4xx that says why.
 */
#include <check.h>
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

START_TEST(runs_and_captures) {
    char *b = webui_get_expect(port, "/api/profile/runs", 200);
    ck_assert_str_eq(b, "{\"runs\":[\"prof\"]}");
    free(b);
    b = webui_get_expect(port, "/api/profile/list?run=prof", 200);
    ASSERT_HAS(b, "{\"run\":\"prof\",\"profiles\":[{\"id\":1,");
    ASSERT_HAS(b, "\"rank\":0,\"threads\":[\"training\"],\"records\":");
    ASSERT_HAS(b, "\"dropped\":0,\"gemm_peak_flops\":");
    free(b);
    b = webui_get_expect(port, "/api/plugins", 200);
    ASSERT_HAS(b, "\"name\":\"profile\"");
    free(b);
}
END_TEST

START_TEST(overview_has_each_step_and_a_sentence) {
    char *b = webui_get_expect(port, "/api/profile/overview?run=prof&profile=1", 200);
    ASSERT_HAS(b, "{\"steps\":[{\"step\":1,\"start_us\":");
    ASSERT_HAS(b, "{\"step\":2,");
    ASSERT_HAS(b, "{\"step\":3,");
    ck_assert_ptr_null(strstr(b, "{\"step\":4,"));
    ASSERT_HAS(b, ",\"input_us\":0,");
    ASSERT_HAS(b, ",\"comm_us\":0,");
    ASSERT_HAS(b, "\"bound\":\"");
    ASSERT_HAS(b, "-bound: ");
    free(b);
}
END_TEST

START_TEST(ops_by_type_and_by_name) {
    char *b = webui_get_expect(port, "/api/profile/ops?run=prof&profile=1", 200);
    ASSERT_HAS(b, "{\"by\":\"type\",\"self_us\":");
    ASSERT_HAS(b, "{\"key\":\"MatMul\",\"op_type\":\"\",\"function\":\"\",\"calls\":3,");
    ASSERT_HAS(b, "\"flops\":3072,\"flops_per_s\":");   /* 3 x 2*8*8*8 */
    ASSERT_HAS(b, "{\"key\":\"Sum\",\"op_type\":\"\",\"function\":\"\",\"calls\":3,");
    ASSERT_HAS(b, "\"flops\":0,\"flops_per_s\":null}");
    free(b);
    b = webui_get_expect(port, "/api/profile/ops?run=prof&profile=1&by=name", 200);
    ASSERT_HAS(b, "{\"key\":\"dense/MatMul\",\"op_type\":\"MatMul\",\"function\":\"step\",\"calls\":3,");
    free(b);
}
END_TEST

START_TEST(trace_pages_by_columns) {
    char *b = webui_get_expect(port, "/api/profile/trace?run=prof&profile=1&limit=2", 200);
    ASSERT_HAS(b, "{\"total\":9,\"offset\":0,\"duration_us\":");   /* 3 marks, 3 x 2 ops */
    ASSERT_HAS(b, "\"threads\":[\"training\"],\"strings\":[\"step\",\"step 1\",\"\",\"op\",");
    ASSERT_HAS(b, "\"thread\":[0,0],\"step\":[1,1],");
    ASSERT_HAS(b, "\"kind\":[0,3],\"name\":[1,4],");
    free(b);
    b = webui_get_expect(port, "/api/profile/trace?run=prof&profile=1&offset=9", 200);
    ASSERT_HAS(b, "\"strings\":[],\"events\":{\"start\":[],\"dur\":[]");
    free(b);
}
END_TEST

START_TEST(memory_has_series_and_peak) {
    char *b = webui_get_expect(port, "/api/profile/memory?run=prof&profile=1", 200);
    ASSERT_HAS(b, "{\"threads\":[{\"thread\":0,\"name\":\"training\",\"t\":[");
    ASSERT_HAS(b, "\"peak\":{\"thread\":0,\"t\":");
    ASSERT_HAS(b, "\"at_peak\":[{\"name\":\"");
    free(b);
}
END_TEST

START_TEST(bad_parameters_are_4xx) {
    static const struct {
        const char *path;
        int status;
        const char *says;
    } cases[] = {
        {"/api/profile/list", 400, "run"},
        {"/api/profile/list?run=nope", 404, "nope"},
        {"/api/profile/overview?run=prof", 400, "profile"},
        {"/api/profile/overview?run=prof&profile=abc", 400, "profile"},
        {"/api/profile/overview?run=prof&profile=0", 400, "profile"},
        {"/api/profile/overview?run=prof&profile=99", 404, "has no profile 99"},
        {"/api/profile/overview?run=nope&profile=1", 404, "nope"},
        {"/api/profile/ops?run=prof&profile=1&by=size", 400, "by must be 'type' or 'name'"},
        {"/api/profile/ops?run=prof&profile=1&by=", 400, "by"},
        {"/api/profile/trace?run=prof&profile=1&limit=0", 400, "limit"},
        {"/api/profile/trace?run=prof&profile=1&limit=100001", 400, "limit"},
        {"/api/profile/trace?run=prof&profile=1&offset=-1", 400, "offset"},
        {"/api/profile/memory?run=prof&profile=2", 404, "has no profile 2"},
        {"/api/profile/memory?run=prof&profile=1&extra=1", 400, "extra"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = webui_get_expect(port, cases[i].path, cases[i].status);
        ck_assert_msg(strstr(b, cases[i].says), "%s: %s", cases[i].path, b);
        free(b);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_profile");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, runs_and_captures);
    tcase_add_test(tc, overview_has_each_step_and_a_sentence);
    tcase_add_test(tc, ops_by_type_and_by_name);
    tcase_add_test(tc, trace_pages_by_columns);
    tcase_add_test(tc, memory_has_series_and_peak);
    tcase_add_test(tc, bad_parameters_are_4xx);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_profile_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"profile", db_path, NULL});
    int rc = run_suite(suite());
    webui_remove_store(db_path);
    return rc;
}
