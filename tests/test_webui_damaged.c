/* test_webui_damaged.c — the dashboard over a store with damaged rows.
 *
 * The "api" store (webui_fixtures.c) with rows damaged by hand as another
 * tool or a damaged disk could: run alpha's image (step 20, sample 1)
 * emptied, its weights histogram at step 20 cut to no buckets, its note
 * at step 20 made a BLOB, its accuracy chunk emptied. Each route reading
 * such a row answers 500 with a JSON error naming the row; every other
 * route (the other images, steps, runs and tags, the lists) still
 * answers, so the rest of the page keeps working. Run beta's hparams are
 * damaged last: the run list then fails the same way. Links the server
 * and the store only.
 */
#include <check.h>
#include <sqlite3.h>
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

#define TAG_ID(run, tag)                                                                 \
    "(SELECT t.id FROM tags t JOIN runs r ON r.id = t.run_id WHERE r.name = '" run "' AND " \
    "t.name = '" tag "')"

static void damage(const char *sql) {
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db_path, &h), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    ck_assert_int_gt(sqlite3_changes(h), 0);
    sqlite3_close(h);
}

static void setup(void) {
    snprintf(db_path, sizeof db_path, "%s/webui_damaged_%d.db", P_tmpdir, (int)getpid());
    webui_remove_store(db_path);
    webui_write_fixture((const char *const[]){"api", db_path, NULL});
    damage("UPDATE images SET png = x'' WHERE step = 20 AND sample_index = 1 AND tag_id = "
           TAG_ID("alpha", "inputs"));
    damage("UPDATE histograms SET buckets = x'' WHERE step = 20 AND tag_id = "
           TAG_ID("alpha", "weights"));
    damage("UPDATE texts SET value = x'6e6f7465' WHERE step = 20 AND tag_id = "
           TAG_ID("alpha", "notes"));
    damage("UPDATE scalar_chunks SET points = x'' WHERE tag_id = " TAG_ID("alpha", "accuracy"));
    board = webui_start_board(db_path, &port);
}

static void teardown(void) {
    gb_board_stop(board);
    webui_remove_store(db_path);
}

static const bad_case damaged_routes[] = {
    {"/api/images/png?run=alpha&tag=inputs&step=20&index=1", 500,
     "damaged images row (run 'alpha', tag 'inputs', step 20, sample 1): the PNG is empty (0 "
     "bytes)"},
    {"/api/histograms/series?run=alpha&tag=weights", 500,
     "damaged histograms row (run 'alpha', tag 'weights', step 20): the buckets BLOB is empty"},
    {"/api/distributions/series?run=alpha&tag=weights", 500,
     "damaged histograms row (run 'alpha', tag 'weights', step 20)"},
    {"/api/text/series?run=alpha&tag=notes", 500,
     "damaged texts row (run 'alpha', tag 'notes', step 20): the text is a BLOB"},
    {"/api/scalars/series?run=alpha&tag=accuracy", 500,
     "damaged scalar_chunks row (run 'alpha', tag 'accuracy', chunk from step 0)"},
};

START_TEST(a_damaged_row_is_a_json_error) { webui_assert_json_error(port, &damaged_routes[_i]); }
END_TEST

START_TEST(the_rest_of_the_page_still_answers) {
    static const char *const fine[] = {
        "/api/runs",
        "/api/plugins",
        "/api/images/tags",
        "/api/images/list?run=alpha&tag=inputs",
        "/api/images/png?run=alpha&tag=inputs&step=20&index=0",
        "/api/images/png?run=alpha&tag=inputs&step=30&index=1",
        "/api/histograms/series?run=alpha&tag=weights&max_step=10",
        "/api/histograms/series?run=beta&tag=weights",
        "/api/distributions/series?run=beta&tag=weights",
        "/api/text/series?run=alpha&tag=notes&min_step=30",
        "/api/scalars/series?run=alpha&tag=loss",
        "/api/scalars/series?run=beta&tag=accuracy",
        "/api/numerics/runs",
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        free(webui_get_expect(port, fine[i], 200));
}
END_TEST

START_TEST(damaged_hparams_fail_the_run_list_with_a_json_error) {
    damage("UPDATE hparams SET is_number = 2 WHERE key = 'learning_rate' AND run_id = "
           "(SELECT id FROM runs WHERE name = 'beta')");
    bad_case c = {"/api/runs", 500,
                  "damaged hparams row (run 'beta', key 'learning_rate'): is_number is neither 0 "
                  "nor 1"};
    webui_assert_json_error(port, &c);
    free(webui_get_expect(port, "/api/scalars/series?run=beta&tag=loss", 200));
}
END_TEST

int main(void) {
    Suite *s = suite_create("webui_damaged");
    TCase *tc = tcase_create("damaged");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, a_damaged_row_is_a_json_error, 0,
                        (int)(sizeof damaged_routes / sizeof damaged_routes[0]));
    tcase_add_test(tc, the_rest_of_the_page_still_answers);
    tcase_add_test(tc, damaged_hparams_fail_the_run_list_with_a_json_error);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
