/* test_webui_hparams.c — the HParams and PR Curves dashboards' API
 * against a store webui_fixtures wrote ("hparams"): the experiment as
 * declared, each run's hparams, status (done, failed, killed) and metrics
 * (last, last step, min, max, count; null where a run lacks one), the PR
 * counts, precision and recall of the hand case, step ranges and budgets,
 * and every bad request refused with 4xx and a JSON message, never 5xx.
 * Links the server and the store only. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board_internal.h"
#include "gb_board.h"
#include "gb_reader.h"
#include "run_suite.h"
#include "webui_http.h"
#include "webui_test_util.h"

static char db_path[512];
static gb_board *board;
static int port;

static void build_store(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_hparams_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"hparams", db_path, NULL});
}

#define ASSERT_PREFIX(body, prefix) \
    ck_assert_msg(!strncmp((body), (prefix), strlen(prefix)), "%s lacks the prefix %s", (body), (prefix))

static void setup(void) { board = webui_start_board(db_path, &port); }
static void teardown(void) { gb_board_stop(board); }

START_TEST(experiment_is_the_declared_table) {
    char *b = webui_get_expect(port, "/api/hparams", 200);
    ASSERT_PREFIX(b,
        "{\"declared\":true,\"hparams\":["
        "{\"name\":\"lr\",\"display_name\":\"\",\"description\":\"\",\"type\":\"real\","
        "\"domain\":\"discrete\",\"min\":null,\"max\":null,\"values\":[0.001,0.01,0.1]},"
        "{\"name\":\"optimizer\",\"display_name\":\"\",\"description\":\"\",\"type\":\"string\","
        "\"domain\":\"discrete\",\"min\":null,\"max\":null,\"values\":[\"adam\",\"sgd\"]}],"
        "\"metrics\":[{\"tag\":\"acc\",\"display_name\":\"\",\"higher_is_better\":true},"
        "{\"tag\":\"loss\",\"display_name\":\"\",\"higher_is_better\":false}],"
        "\"runs\":[{\"name\":\"a\",\"status\":\"done\",\"start_time\":");
    ASSERT_HAS(b, "\"hparams\":{\"lr\":0.001,\"optimizer\":\"adam\"},"
                  "\"metrics\":[[0.75,2,0.5,0.75,2],[0.25,2,0.25,0.25,1]]}");
    ASSERT_HAS(b, "{\"name\":\"b\",\"status\":\"failed\",");
    ASSERT_HAS(b, "\"hparams\":{\"lr\":0.01,\"optimizer\":\"sgd\"},"
                  "\"metrics\":[[0.25,1,0.25,0.25,1],null]}");
    ASSERT_HAS(b, "{\"name\":\"c\",\"status\":\"killed\",");
    ASSERT_HAS(b, "\"hparams\":{\"lr\":0.1},\"metrics\":[null,null]}]}");
    free(b);
}
END_TEST

/* step=S: each metric's last point at or before S, with its step. */
START_TEST(metrics_at_a_step) {
    char *b = webui_get_expect(port, "/api/hparams?step=1", 200);
    ASSERT_HAS(b, "\"hparams\":{\"lr\":0.001,\"optimizer\":\"adam\"},"
                  "\"metrics\":[[0.75,2,0.5,0.75,2,0.5,1],[0.25,2,0.25,0.25,1,null,null]]}");
    ASSERT_HAS(b, "\"metrics\":[[0.25,1,0.25,0.25,1,0.25,1],null]}");
    free(b);
    b = webui_get_expect(port, "/api/hparams?step=99", 200);
    ASSERT_HAS(b, "\"metrics\":[[0.75,2,0.5,0.75,2,0.75,2],[0.25,2,0.25,0.25,1,0.25,2]]}");
    free(b);
    b = webui_get_expect(port, "/api/hparams?step=0", 200);
    ASSERT_HAS(b, "\"metrics\":[[0.75,2,0.5,0.75,2,null,null],[0.25,2,0.25,0.25,1,null,null]]}");
    free(b);
}
END_TEST

START_TEST(pr_tags_and_series_of_the_hand_case) {
    char *b = webui_get_expect(port, "/api/pr_curves/tags", 200);
    ASSERT_HAS(b, "{\"runs\":{\"a\":[{\"tag\":\"pr/cat\",\"count\":2,\"min_step\":1,\"max_step\":2,");
    free(b);
    b = webui_get_expect(port, "/api/pr_curves/series?run=a&tag=pr/cat", 200);
    ASSERT_PREFIX(b, "{\"run\":\"a\",\"tag\":\"pr/cat\",\"rows\":[{\"step\":1,\"wall\":");
    ASSERT_HAS(b, "\"thresholds\":5,\"tp\":[3,2,2,1,0],\"fp\":[3,2,2,1,1],\"tn\":[0,1,1,2,2],"
                  "\"fn\":[0,1,1,2,3],\"precision\":[0.5,0.5,0.5,0.5,0],"
                  "\"recall\":[1,0.66666666666666663,0.66666666666666663,0.33333333333333331,0]}");
    ASSERT_HAS(b, "{\"step\":2,");
    free(b);
    b = webui_get_expect(port, "/api/pr_curves/series?run=a&tag=pr/cat&min_step=2", 200);
    ck_assert_ptr_null(strstr(b, "\"step\":1"));
    ASSERT_HAS(b, "\"step\":2");
    free(b);
    b = webui_get_expect(port, "/api/pr_curves/series?run=a&tag=pr/cat&points=1", 200);
    ck_assert_ptr_null(strstr(b, "\"step\":1"));   /* the last step is kept */
    free(b);
    b = webui_get_expect(port, "/api/plugins", 200);
    ASSERT_HAS(b, "{\"name\":\"hparams\",\"title\":\"HParams\",\"active\":true},"
                  "{\"name\":\"pr_curves\",\"title\":\"PR Curves\",\"active\":true}");
    free(b);
}
END_TEST

static const bad_case bad[] = {
    {"/api/hparams?run=a", 400, "unknown parameter 'run'"},
    {"/api/hparams?step=x", 400, "parameter 'step' is not an integer"},
    {"/api/hparams?step=1&step=2", 400, "step"},
    {"/api/hparams/table", 404, "no such API route"},
    {"/api/pr_curves/series?tag=pr/cat", 400, "missing required parameter 'run'"},
    {"/api/pr_curves/series?run=a", 400, "missing required parameter 'tag'"},
    {"/api/pr_curves/series?run=zz&tag=pr/cat", 404, "unknown run 'zz'"},
    {"/api/pr_curves/series?run=a&tag=pr/dog", 404, "pr/dog"},
    {"/api/pr_curves/series?run=b&tag=pr/cat", 404, "pr/cat"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&min_step=x", 400, "parameter 'min_step' is not an integer"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&max_step=1.5", 400, "parameter 'max_step' is not an integer"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&since=-2", 400, "parameter 'since' is out of range"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&points=0", 400, "parameter 'points' is out of range"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&points=1001", 400, "parameter 'points' is out of range"},
    {"/api/pr_curves/series?run=a&tag=pr/cat&step=1", 400, "unknown parameter 'step'"},
    {"/api/pr_curves/series?run=&tag=pr/cat", 400, "parameter 'run'"},
    {"/api/pr_curves/tags?run=zz", 404, "unknown run 'zz'"},
    {"/api/pr_curves/series?run=a%ff&tag=pr/cat", 400, "parameter 'run'"},
};

START_TEST(bad_requests_are_4xx_with_a_message) {
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) webui_assert_json_error(port, &bad[i]);
}
END_TEST

int main(void) {
    build_store();
    Suite *s = suite_create("webui_hparams");
    TCase *tc = tcase_create("hparams");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, experiment_is_the_declared_table);
    tcase_add_test(tc, metrics_at_a_step);
    tcase_add_test(tc, pr_tags_and_series_of_the_hand_case);
    tcase_add_test(tc, bad_requests_are_4xx_with_a_message);
    suite_add_tcase(s, tc);
    int failed = run_suite(s);
    webui_remove_store(db_path);
    return failed;
}
