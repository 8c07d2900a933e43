/* test_webui_traces.c — the Traces and Graphs routes on a store the engine
 * wrote (webui_fixtures "traces"): a function traced twice (its input's
 * dim 0 went 3 -> 4) and called five times through the default writer,
 * between trace_on(profile) and trace_export; and a run whose one trace
 * has a damaged detail. Every bad parameter is a 4xx that says why. And
 * a store holding nothing but one big exported graph (webui_fixtures
 * "graph": 10,000 ops in 100 scopes): its Graphs tab is active.
 */
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

static char db_path[512], graph_db_path[512];
static gb_board *board;
static int port;

static void setup(void) { board = webui_start_board(db_path, &port); }
static void teardown(void) { gb_board_stop(board); }

/* The id of the n-th trace (1-based) of run engine, from the list route. */
static long trace_id(int n) {
    char *b = webui_get_expect(port, "/api/traces/list?run=engine", 200);
    const char *p = b;
    for (int i = 0; i < n && p; i++) p = strstr(p + 1, "{\"id\":");
    ck_assert_ptr_nonnull(p);
    long id = strtol(p + 6, NULL, 10);
    free(b);
    return id;
}

/* ---- traces ------------------------------------------------------------------------- */

START_TEST(functions_have_counters_and_traces) {
    char *b = webui_get_expect(port, "/api/traces/functions?run=engine", 200);
    ASSERT_HAS(b, "{\"run\":\"engine\",\"functions\":[{\"function\":\"square\",\"calls\":5,"
                  "\"cache_hits\":3,\"traces\":2,");
    ASSERT_HAS(b, "\"concrete\":2,\"warnings\":0,");
    free(b);
}
END_TEST

START_TEST(list_gives_reasons_signatures_call_sites) {
    char *b = webui_get_expect(port, "/api/traces/list?run=engine&function=square", 200);
    ASSERT_HAS(b, "\"function\":\"square\",\"is_retrace\":false,\"reason\":\"first call at "
                  "webui_fixtures.c:");
    ASSERT_HAS(b, "\"signature\":\"square(x0: float32[3]) -> (float32[3])\","
                  "\"call_site\":\"webui_fixtures.c:");
    ASSERT_HAS(b, "\"is_retrace\":true,\"reason\":\"input 0 'x0' changed dim 0: 3 -> 4");
    ASSERT_HAS(b, "\"nodes_before\":4,\"nodes_after\":3,\"concrete_id\":1,");
    free(b);
    /* Paging: after the first, only the second. */
    char path[128];
    snprintf(path, sizeof path, "/api/traces/list?run=engine&after_id=%ld&limit=1", trace_id(1));
    b = webui_get_expect(port, path, 200);
    ASSERT_HAS(b, "\"is_retrace\":true");
    ck_assert_ptr_null(strstr(b, "\"is_retrace\":false"));
    free(b);
}
END_TEST

/* The runs with traces, in the store's order; the run without is not one. */
START_TEST(runs_are_those_with_traces) {
    char *b = webui_get_expect(port, "/api/traces/runs", 200);
    ck_assert_str_eq(b, "{\"runs\":[\"damaged\",\"engine\"]}");
    free(b);
}
END_TEST

/* A damaged detail: the trace still lists, its detail's fields unknown. */
START_TEST(damaged_detail_lists_with_unknowns) {
    char *b = webui_get_expect(port, "/api/traces/list?run=damaged", 200);
    ASSERT_HAS(b, "\"function\":\"broken\"");
    ASSERT_HAS(b, "\"call_site\":\"\",");
    ASSERT_HAS(b, "\"concrete_id\":null,\"warning\":false");
    free(b);
}
END_TEST

/* ---- graphs ------------------------------------------------------------------------- */

START_TEST(list_has_each_concrete_function_and_the_export) {
    char *b = webui_get_expect(port, "/api/graphs/list?run=engine", 200);
    ASSERT_HAS(b, "{\"run\":\"engine\",\"functions\":[{\"function\":\"square\",\"calls\":5,\"concretes\":[{");
    ASSERT_HAS(b, "\"signature\":\"square(x0: float32[3]) -> (float32[3])\"");
    ASSERT_HAS(b, "\"signature\":\"square(x0: float32[4]) -> (float32[4])\"");
    ASSERT_HAS(b, "\"has_graph\":true");
    ASSERT_HAS(b, "\"exported\":[{\"tag\":\"square_graph\",\"steps\":[7]}]");
    free(b);
}
END_TEST

START_TEST(graph_of_a_trace_both_stages) {
    char path[160];
    snprintf(path, sizeof path, "/api/graphs/graph?run=engine&trace=%ld", trace_id(1));
    char *b = webui_get_expect(port, path, 200);
    ASSERT_HAS(b, "\"function\":\"square\",\"signature\":\"square(x0: float32[3]) -> (float32[3])\","
                  "\"stage\":\"optimized\"");
    ASSERT_HAS(b, "\"passes\":[{\"pass\":\"pruning\",\"ran\":true,\"nodes\":");
    /* Mul and the +1 fused into one node that keeps their names. */
    ASSERT_HAS(b, "\"op\":\"FusedElementwise\",\"device\":\"CPU:0\",\"inputs\":[\"x0\",");
    ASSERT_HAS(b, "\"fused\":[{\"op\":\"Mul\",\"name\":\"model/Mul\"},{\"op\":\"Add\",\"name\":\"model/Add\"}]");
    ASSERT_HAS(b, "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[3]}]");
    /* trace_on(profile): the nodes' kernel times. */
    ASSERT_HAS(b, "\"profile\":{\"");
    ASSERT_HAS(b, "\"model/Add\":{\"calls\":");
    free(b);
    snprintf(path, sizeof path, "/api/graphs/graph?run=engine&trace=%ld&stage=traced", trace_id(1));
    b = webui_get_expect(port, path, 200);
    ASSERT_HAS(b, "\"stage\":\"traced\"");
    ASSERT_HAS(b, "{\"name\":\"model/Mul\",\"op\":\"Mul\",\"device\":\"CPU:0\",\"inputs\":[\"x0\",\"x0\"],\"control\":[],");
    ASSERT_HAS(b, "\"outputs\":[\"model/Add\"]}");
    free(b);
}
END_TEST

START_TEST(exported_graph_by_tag_and_step) {
    char *b = webui_get_expect(port, "/api/graphs/graph?run=engine&tag=square_graph&step=7", 200);
    ASSERT_HAS(b, "\"tag\":\"square_graph\",\"step\":7,\"stage\":\"exported\",\"graph\":{\"nodes\":[");
    free(b);
}
END_TEST

/* ---- bad requests: 4xx, with a reason ------------------------------------------------ */

START_TEST(bad_parameters_are_4xx) {
    static const struct {
        const char *path;
        int status;
        const char *says;
    } cases[] = {
        {"/api/traces/functions", 400, "run"},
        {"/api/traces/functions?run=nope", 404, "nope"},
        {"/api/traces/list?run=nope", 404, "nope"},
        {"/api/traces/list?run=engine&function=nope", 404, "nope"},
        {"/api/traces/list?run=engine&limit=0", 400, "limit"},
        {"/api/traces/list?run=engine&limit=99999", 400, "limit"},
        {"/api/traces/list?run=engine&after_id=-1", 400, "after_id"},
        {"/api/graphs/list", 400, "run"},
        {"/api/graphs/list?run=nope", 404, "nope"},
        {"/api/graphs/graph?run=engine", 400, "trace"},
        {"/api/graphs/graph?run=engine&trace=0", 400, "trace"},
        {"/api/graphs/graph?run=engine&trace=abc", 400, "trace"},
        {"/api/graphs/graph?run=engine&trace=999999", 404, "999999"},
        {"/api/graphs/graph?run=nope&trace=1", 404, "nope"},
        {"/api/graphs/graph?run=engine&trace=1&stage=bogus", 400, "stage"},
        {"/api/graphs/graph?run=engine&trace=1&tag=square_graph&step=7", 400, "either"},
        {"/api/graphs/graph?run=engine&tag=square_graph", 400, "step"},
        {"/api/graphs/graph?run=engine&tag=nope&step=7", 404, "nope"},
        {"/api/graphs/graph?run=engine&tag=square_graph&step=8", 404, "step 8"},
        {"/api/graphs/graph?run=damaged&tag=text_graph&step=1", 415, "not JSON"},
        {"/api/graphs/graph?run=engine&trace=1&extra=1", 400, "extra"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *b = webui_get_expect(port, cases[i].path, cases[i].status);
        ck_assert_msg(strstr(b, cases[i].says), "%s: %s", cases[i].path, b);
        free(b);
    }
}
END_TEST

/* The damaged run's trace has no graph to give: a 404 that says so. */
START_TEST(trace_without_graph_is_404) {
    char *b = webui_get_expect(port, "/api/traces/list?run=damaged", 200);
    const char *p = strstr(b, "{\"id\":");
    ck_assert_ptr_nonnull(p);
    char path[160];
    snprintf(path, sizeof path, "/api/graphs/graph?run=damaged&trace=%ld", strtol(p + 6, NULL, 10));
    free(b);
    b = webui_get_expect(port, path, 404);
    ASSERT_HAS(b, "has no optimized graph stored");
    free(b);
}
END_TEST

/* Graphs is active for a store with graphs but no traced function, and
 * the route hands over all of a 10,001-node graph (an input and 100
 * scopes of 100 ops), each node with its device. */
START_TEST(exported_only_store_has_the_graphs_tab) {
    int p2;
    gb_board *b2 = webui_start_board(graph_db_path, &p2);
    char *b = webui_get_expect(p2, "/api/plugins", 200);
    ASSERT_HAS(b, "{\"name\":\"graphs\",\"title\":\"Graphs\",\"active\":true}");
    ASSERT_HAS(b, "{\"name\":\"traces\",\"title\":\"Traces\",\"active\":false}");
    free(b);
    b = webui_get_expect(p2, "/api/graphs/graph?run=big&tag=generated&step=0", 200);
    int nodes = 0;
    for (const char *q = strstr(b, "{\"name\":"); q; q = strstr(q + 1, "{\"name\":")) nodes++;
    ck_assert_int_eq(nodes, 10001);
    ASSERT_HAS(b, "{\"name\":\"block_99/Add_99\",\"op\":\"Add\",\"device\":\"CPU:0\"");
    free(b);
    gb_board_stop(b2);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_traces");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, functions_have_counters_and_traces);
    tcase_add_test(tc, list_gives_reasons_signatures_call_sites);
    tcase_add_test(tc, damaged_detail_lists_with_unknowns);
    tcase_add_test(tc, runs_are_those_with_traces);
    tcase_add_test(tc, list_has_each_concrete_function_and_the_export);
    tcase_add_test(tc, graph_of_a_trace_both_stages);
    tcase_add_test(tc, exported_graph_by_tag_and_step);
    tcase_add_test(tc, bad_parameters_are_4xx);
    tcase_add_test(tc, trace_without_graph_is_404);
    tcase_add_test(tc, exported_only_store_has_the_graphs_tab);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_traces_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"traces", db_path, NULL});
    snprintf(graph_db_path, sizeof graph_db_path, "%s/webui_graph_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(graph_db_path);
    webui_write_fixture((const char *const[]){"graph", graph_db_path, NULL});
    int rc = run_suite(suite());
    webui_remove_store(db_path);
    webui_remove_store(graph_db_path);
    return rc;
}
