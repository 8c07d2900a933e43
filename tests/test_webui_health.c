/* test_webui_health.c — the Health dashboard's API against a store written
 * for the test through the default writer, as the engine's health checks
 * emit their events (webui_fixtures "health"): the runs with health, a
 * run's alerts and every run's, most severe first then earliest, each
 * field as written; the heat map's layers, steps and cells, exact, and
 * squeezed into fewer columns; the tab shown only when there is health;
 * and every bad parameter a 4xx with a JSON message, never a 5xx. Links
 * the server and the store only. */
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

/* The plugin's descriptor (webui/plugin_health.c), for its is_active. */
extern const gb__plugin gb__plugin_health;

static char db_path[512], quiet_path[512];
static gb_board *board;
static int port;

static void build_store(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_health_%d.db", P_tmpdir, (int)getpid());
    snprintf(quiet_path, sizeof quiet_path, "%s/webui_health_quiet_%d.db", P_tmpdir,
             (int)getpid());
    webui_remove_store(db_path);
    webui_remove_store(quiet_path);
    webui_write_fixture((const char *const[]){"health", db_path, quiet_path, NULL});
}

static void setup(void) { board = webui_start_board(db_path, &port); }
static void teardown(void) { gb_board_stop(board); }

static void assert_body(const char *path, const char *want) {
    char *b = webui_get_expect(port, path, 200);
    ck_assert_msg(!strcmp(b, want), "%s:\n got %s\nwant %s", path, b, want);
    free(b);
}

/* webui_fixtures.c, "health": alpha's alerts (ids 1, 2), then beta's
 * (id 3); wall times 50, 51. */
#define ALPHA_VANISHING                                                                      \
    "{\"run\":\"alpha\",\"id\":2,\"step\":10,\"wall\":51.000000,\"kind\":\"vanishing_gradient\","   \
    "\"severity\":\"critical\",\"layer\":\"enc/dense\",\"variable\":\"enc/dense/kernel\","  \
    "\"value\":1.1e-05,\"threshold\":0.001,\"figures\":{\"grad_norm\":1.1e-5,\"above\":0.5},"  \
    "\"message\":\"vanishing_gradient\",\"advice\":\"Check the initialization.\"}"
#define ALPHA_DEAD                                                                              \
    "{\"run\":\"alpha\",\"id\":1,\"step\":20,\"wall\":50.000000,\"kind\":\"dead_units\","              \
    "\"severity\":\"warning\",\"layer\":\"enc/dense\",\"variable\":\"\",\"value\":0.25,"       \
    "\"threshold\":0.2,\"figures\":{\"dead_fraction\":0.25},\"message\":\"dead_units\","       \
    "\"advice\":\"Use LeakyReLU.\"}"
#define BETA_SPIKE                                                                              \
    "{\"run\":\"beta\",\"id\":3,\"step\":2,\"wall\":50.000000,\"kind\":\"loss_spike\","                \
    "\"severity\":\"critical\",\"layer\":\"\",\"variable\":\"\",\"value\":9.5,\"threshold\":3,"  \
    "\"figures\":{\"median\":0.7},\"message\":\"loss_spike\",\"advice\":\"Lower the learning "  \
    "rate.\"}"

START_TEST(runs_with_health) {
    assert_body("/api/health/runs",
                "{\"runs\":["
                "{\"run\":\"alpha\",\"total\":2,\"critical\":1,\"warning\":1,\"info\":0,"
                "\"first_step\":10,\"last_step\":20,\"last_id\":2,\"figures\":true},"
                "{\"run\":\"beta\",\"total\":1,\"critical\":1,\"warning\":0,\"info\":0,"
                "\"first_step\":2,\"last_step\":2,\"last_id\":3,\"figures\":true}]}");
}
END_TEST

START_TEST(alerts_most_severe_first) {
    assert_body("/api/health/alerts?run=alpha",
                "{\"run\":\"alpha\",\"total\":2,\"critical\":1,\"warning\":1,\"info\":0,"
                "\"alerts\":[" ALPHA_VANISHING "," ALPHA_DEAD "]}");
    /* Every run: critical ones by step (beta's at 2 before alpha's at 10). */
    assert_body("/api/health/alerts",
                "{\"run\":null,\"total\":3,\"critical\":2,\"warning\":1,\"info\":0,"
                "\"alerts\":[" BETA_SPIKE "," ALPHA_VANISHING "," ALPHA_DEAD "]}");
    assert_body("/api/health/alerts?limit=1",
                "{\"run\":null,\"total\":3,\"critical\":2,\"warning\":1,\"info\":0,"
                "\"alerts\":[" BETA_SPIKE "]}");
    assert_body("/api/health/alerts?run=quiet",
                "{\"run\":\"quiet\",\"total\":0,\"critical\":0,\"warning\":0,\"info\":0,"
                "\"alerts\":[]}");
}
END_TEST

START_TEST(heatmap_layers_steps_and_cells) {
    /* No figure asked for: grad_norm. Layers in the model's order. */
    assert_body("/api/health/heatmap?run=alpha",
                "{\"run\":\"alpha\",\"figure\":\"grad_norm\","
                "\"figures\":[\"grad_norm\",\"dead_fraction\"],\"downsampled\":false,"
                "\"steps\":[0,10,20],\"steps_last\":[0,10,20],\"layers\":["
                "{\"layer\":\"enc/dense\",\"values\":[1e-06,1.1e-05,2.1e-05],"
                "\"min\":[1e-06,1.1e-05,2.1e-05],\"max\":[1e-06,1.1e-05,2.1e-05],"
                "\"counts\":[1,1,1]},"
                "{\"layer\":\"out\",\"values\":[0.5,0.5,0.5],\"min\":[0.5,0.5,0.5],"
                "\"max\":[0.5,0.5,0.5],\"counts\":[1,1,1]}]}");
    /* Two columns: steps 0-10 and 20; a step range. */
    assert_body("/api/health/heatmap?run=alpha&figure=dead_fraction&points=2",
                "{\"run\":\"alpha\",\"figure\":\"dead_fraction\","
                "\"figures\":[\"grad_norm\",\"dead_fraction\"],\"downsampled\":true,"
                "\"steps\":[0,20],\"steps_last\":[10,20],\"layers\":["
                "{\"layer\":\"enc/dense\",\"values\":[0.25,0.25],\"min\":[0.25,0.25],"
                "\"max\":[0.25,0.25],\"counts\":[2,1]},"
                "{\"layer\":\"out\",\"values\":[0,0],\"min\":[0,0],\"max\":[0,0],"
                "\"counts\":[2,1]}]}");
    assert_body("/api/health/heatmap?run=beta&figure=grad_norm&min_step=5&max_step=15",
                "{\"run\":\"beta\",\"figure\":\"grad_norm\","
                "\"figures\":[\"grad_norm\",\"dead_fraction\"],\"downsampled\":false,"
                "\"steps\":[10],\"steps_last\":[10],\"layers\":["
                "{\"layer\":\"enc/dense\",\"values\":[1.1e-05],\"min\":[1.1e-05],"
                "\"max\":[1.1e-05],\"counts\":[1]}]}");
    /* A figure the run lacks: no layers, and those it has. */
    assert_body("/api/health/heatmap?run=alpha&figure=update_ratio",
                "{\"run\":\"alpha\",\"figure\":\"update_ratio\","
                "\"figures\":[\"grad_norm\",\"dead_fraction\"],\"downsampled\":false,"
                "\"steps\":[],\"steps_last\":[],\"layers\":[]}");
}
END_TEST

START_TEST(tab_shows_only_with_health) {
    gb_store *s;
    ck_assert_int_eq(gb_store_open(db_path, &s), GB_STORE_OK);
    ck_assert(gb__plugin_health.is_active(s));
    gb_store_close(s);
    ck_assert_int_eq(gb_store_open(quiet_path, &s), GB_STORE_OK);
    ck_assert(!gb__plugin_health.is_active(s));
    gb_store_close(s);
}
END_TEST

static const bad_case bad_cases[] = {
    {"/api/health/heatmap", 400, "missing required parameter 'run'"},
    {"/api/health/heatmap?run=", 400, "parameter 'run' must not be empty"},
    {"/api/health/heatmap?run=nobody", 404, "unknown run 'nobody'"},
    {"/api/health/heatmap?run=alpha&figure=a%2Fb", 400,
     "'a/b' is not a figure's name (1 to 64 bytes, no '/')"},
    {"/api/health/heatmap?run=alpha&figure=", 400, "parameter 'figure' must not be empty"},
    {"/api/health/heatmap?run=alpha&figure=%01", 400,
     "parameter 'figure' contains a control character"},
    {"/api/health/heatmap?run=alpha&points=0", 400,
     "parameter 'points' is out of range (expected an integer in [1, 2000])"},
    {"/api/health/heatmap?run=alpha&points=2001", 400, "parameter 'points' is out of range"},
    {"/api/health/heatmap?run=alpha&min_step=x", 400, "parameter 'min_step' is not an integer"},
    {"/api/health/heatmap?run=alpha&tag=x", 400, "unknown parameter 'tag'"},
    {"/api/health/alerts?run=nobody", 404, "unknown run 'nobody'"},
    {"/api/health/alerts?limit=0", 400,
     "parameter 'limit' is out of range (expected an integer in [1, 5000])"},
    {"/api/health/alerts?limit=5001", 400, "parameter 'limit' is out of range"},
    {"/api/health/alerts?run=%ff", 400, "parameter 'run' is not valid UTF-8"},
    {"/api/health/runs?run=alpha", 400, "unknown parameter 'run'"},
    {"/api/health/nothing", 404, "no such API route"},
};

START_TEST(bad_request_gets_json_error) { webui_assert_json_error(port, &bad_cases[_i]); }
END_TEST

static Suite *health_suite(void) {
    build_store();
    Suite *s = suite_create("webui_health");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, runs_with_health);
    tcase_add_test(tc, alerts_most_severe_first);
    tcase_add_test(tc, heatmap_layers_steps_and_cells);
    tcase_add_test(tc, tab_shows_only_with_health);
    tcase_add_loop_test(tc, bad_request_gets_json_error, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    int rc = run_suite(health_suite());
    webui_remove_store(db_path);
    webui_remove_store(quiet_path);
    return rc;
}
