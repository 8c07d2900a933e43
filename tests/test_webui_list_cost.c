/* test_webui_list_cost.c — the list routes of the Traces and Graphs
 * dashboards cost the same whatever the size of the traced graphs.
 *
 * Two stores hold the same 200 traces (webui_fixtures many_traces), one
 * with a 100-op graph per trace, one with a 2,000-op graph: each route
 * must read exactly as many database pages from either (work done, not
 * time: make test runs on loaded machines; the time is the bench line
 * graphs_list_1000). Reading a trace's graph, on the other hand, does
 * read more of the big store, so the measure would see graphs if a list
 * read them. Routes are answered as the server answers them
 * (gb__answer_request), on a pool of one reader whose pages are counted.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "answer.h"
#include "gb_reader.h"
#include "run_suite.h"
#include "webui_test_util.h"

enum { TRACES = 200 };

static char small_db[512], big_db[512];
static gb__hosts hosts;

/* The pages one request of target ("/api/...", with a query) read from
 * the store at db, after a first request warmed the reader (schema,
 * statements); its status in *status. */
static int64_t pages_of(const char *db, const char *path, const char *const *params,
                        int *status) {
    char err[256];
    gb__reader_pool *pool = gb__pool_new(db, 1, err, sizeof err);
    ck_assert_msg(pool != NULL, "%s", err);
    gb__head head = {.method = "GET", .version = "HTTP/1.1", .path = path, .host_count = 1,
                     .host = "127.0.0.1"};
    for (int i = 0; params[i]; i += 2)
        gb__head_add_param(&head, params[i], strlen(params[i]), params[i + 1],
                           strlen(params[i + 1]));
    int64_t pages = 0;
    for (int round = 0; round < 2; round++) {
        gb_store *s = gb__pool_acquire(pool);
        int64_t before = gb_store_pages_read(s);
        gb__pool_release(pool, s);
        gb__answer a;
        ck_assert(gb__answer_request(&hosts, NULL, pool, &head, &a));
        *status = (int)a.status;
        gb__answer_free(&a);
        s = gb__pool_acquire(pool);
        pages = gb_store_pages_read(s) - before;
        gb__pool_release(pool, s);
    }
    gb__pool_free(pool);
    return pages;
}

static void assert_same_cost(const char *path, const char *const *params) {
    int small_status, big_status;
    int64_t small = pages_of(small_db, path, params, &small_status);
    int64_t big = pages_of(big_db, path, params, &big_status);
    ck_assert_int_eq(small_status, 200);
    ck_assert_int_eq(big_status, 200);
    ck_assert_msg(small > 0 && big == small,
                  "%s read %lld pages with 100-op graphs, %lld with 2,000-op graphs", path,
                  (long long)small, (long long)big);
}

START_TEST(graphs_list_reads_no_graph) {
    assert_same_cost("/api/graphs/list", (const char *const[]){"run", "many", NULL});
}
END_TEST

START_TEST(traces_list_reads_no_graph) {
    assert_same_cost("/api/traces/list", (const char *const[]){"run", "many", NULL});
    assert_same_cost("/api/traces/functions", (const char *const[]){"run", "many", NULL});
}
END_TEST

/* The measure sees a graph when one is read: the graph route reads many
 * more pages (over 5 times as many) of the store whose graphs are 20
 * times bigger. */
START_TEST(reading_a_graph_is_seen) {
    const char *const params[] = {"run", "many", "trace", "7", NULL};
    int small_status, big_status;
    int64_t small = pages_of(small_db, "/api/graphs/graph", params, &small_status);
    int64_t big = pages_of(big_db, "/api/graphs/graph", params, &big_status);
    ck_assert_int_eq(small_status, 200);
    ck_assert_int_eq(big_status, 200);
    ck_assert_msg(big > 5 * small, "graph route: %lld pages, then %lld", (long long)small,
                  (long long)big);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("webui_list_cost");
    TCase *tc = tcase_create("cost");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, graphs_list_reads_no_graph);
    tcase_add_test(tc, traces_list_reads_no_graph);
    tcase_add_test(tc, reading_a_graph_is_seen);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    char err[256];
    if (!gb__hosts_init(&hosts, "127.0.0.1", NULL, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    char traces[16];
    snprintf(traces, sizeof traces, "%d", TRACES);
    snprintf(small_db, sizeof small_db, "%s/webui_cost_small_%d.db", P_tmpdir, (int)getpid());
    snprintf(big_db, sizeof big_db, "%s/webui_cost_big_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(small_db);
    webui_remove_store(big_db);
    webui_write_fixture((const char *const[]){"many_traces", small_db, traces, "100", NULL});
    webui_write_fixture((const char *const[]){"many_traces", big_db, traces, "2000", NULL});
    int rc = run_suite(suite());
    webui_remove_store(small_db);
    webui_remove_store(big_db);
    return rc;
}
