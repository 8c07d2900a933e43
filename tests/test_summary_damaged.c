/* test_summary_damaged.c — damaged rows meet a clear error, never a guess
 * or a crash.
 *
 * A store is written by the writer, then one row is damaged by hand with
 * SQLite, as another tool or a damaged disk could: an empty PNG (which
 * once made the reader memcpy from a NULL pointer), bytes that are no
 * PNG, histogram buckets of the wrong size, a negative or huge
 * bucket_count, text stored as a BLOB or holding a NUL byte, a graph
 * likewise, hyperparameters that are not what they claim, a scalar
 * chunk whose BLOB lost its points, scalar rollups whose counts are wrong,
 * and a tag whose steps span all of int64 (which once divided by zero
 * when downsampled). Each query that meets the row fails
 * with GB_STORE_ERR_DATA and a message naming the table, run, tag and
 * step; queries of the other rows still answer.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "run_suite.h"
#include "summary_test_util.h"

static char dir[256], db[300];
static gb_store *store;

/* Run "r": hparams lr (number) and opt (text); at steps 0 and 1 two
 * images "img", a histogram "h", a text "t" and a graph "g"; scalars "x"
 * at steps 0..2, and "wide" at steps 0, 1 and 1000 (far enough apart that
 * downsampling reads its rollups). */
static void write_store(void) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "r", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_num(w, "lr", 0.5), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_str(w, "opt", "adam"), GB_OK);
    gb_scope_begin();
    for (int64_t step = 0; step < 2; step++) {
        unsigned char px[2 * 2 * 2] = {1, 2, 3, 4, 5, 6, 7, 8};
        gb_tensor *img = gb_tensor_from(GB_U8, px, 4, (int64_t[]){2, 2, 2, 1});
        gb_tensor *v = gb_tensor_from(GB_F32, (float[]){1, 2, 3, 4}, 1, (int64_t[]){4});
        ck_assert_int_eq(gb_summary_image(w, "img", img, 2, step), GB_OK);
        ck_assert_int_eq(gb_summary_histogram(w, "h", v, step), GB_OK);
        ck_assert_int_eq(gb_summary_text(w, "t", "hello", step), GB_OK);
        ck_assert_int_eq(gb_summary_graph(w, "g", "text", "a -> b", step), GB_OK);
    }
    gb_scope_end();
    for (int64_t step = 0; step < 3; step++)
        ck_assert_int_eq(gb_summary_scalar(w, "x", (double)step, step), GB_OK);
    for (int64_t step = 0; step < 3; step++)
        ck_assert_int_eq(gb_summary_scalar(w, "wide", 1, step == 2 ? 1000 : step), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_damaged");
    write_store();
    store = NULL;
}

static void teardown(void) {
    gb_store_close(store);
    summary_remove_dir(dir);
}

/* Damages the store with one statement, then opens it for reading. */
static void damage(const char *sql) {
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    ck_assert_int_eq(sqlite3_changes(h), 1);
    sqlite3_close(h);
    ck_assert_msg(gb_store_open(db, &store) == GB_STORE_OK, "%s", gb_store_last_error());
}

/* The call failed with DATA and exactly "store '<db>': damaged <rest>". */
#define ASSERT_DAMAGED(call, rest)                                                         \
    do {                                                                                   \
        ck_assert_int_eq((call), GB_STORE_ERR_DATA);                                       \
        char want_[1024];                                                                  \
        snprintf(want_, sizeof want_, "store '%s': damaged %s", db, (rest));               \
        ck_assert_str_eq(gb_store_last_error(), want_);                                    \
    } while (0)

/* ---- images ------------------------------------------------------------------------------ */

/* The PNG of image (step 1, sample 1) is `png` (SQL); every query that
 * returns PNG bytes of that row fails saying `why`, the others answer. */
static void check_bad_png(const char *png, const char *why) {
    char sql[200], rest[300];
    snprintf(sql, sizeof sql, "UPDATE images SET png = %s WHERE step = 1 AND sample_index = 1",
             png);
    damage(sql);
    snprintf(rest, sizeof rest, "images row (run 'r', tag 'img', step 1, sample 1): %s", why);
    gb_blob *b = (gb_blob *)1;
    ASSERT_DAMAGED(gb_store_image_png(store, "r", "img", 1, 1, &b), rest);
    ck_assert_ptr_null(b);
    gb_images *im = (gb_images *)1;
    ASSERT_DAMAGED(gb_store_images(store, "r", "img", NULL, true, &im), rest);
    ck_assert_ptr_null(im);
    /* The other images, and the list without bytes, still answer. */
    ck_assert_int_eq(gb_store_image_png(store, "r", "img", 1, 0, &b), GB_STORE_OK);
    ck_assert(b->size > 8 && !memcmp(b->data, "\x89PNG", 4));
    gb_store_free(b);
    gb_query step0 = {0, 0, 0};
    ck_assert_int_eq(gb_store_images(store, "r", "img", &step0, true, &im), GB_STORE_OK);
    ck_assert_int_eq(im->count, 2);
    gb_store_free(im);
    ck_assert_int_eq(gb_store_images(store, "r", "img", NULL, false, &im), GB_STORE_OK);
    ck_assert_int_eq(im->count, 4);
    gb_store_free(im);
}

START_TEST(empty_png) { check_bad_png("x''", "the PNG is empty (0 bytes)"); }
END_TEST

START_TEST(bytes_that_are_no_png) {
    check_bad_png("x'89504e470d0a1a'", "the BLOB is not a PNG file (no PNG signature)");
}
END_TEST

START_TEST(png_that_is_text) { check_bad_png("'a png'", "the PNG is not a BLOB"); }
END_TEST

/* ---- histograms ------------------------------------------------------------------------------ */

static void check_bad_buckets(const char *set, const char *why) {
    char sql[200], rest[300];
    snprintf(sql, sizeof sql, "UPDATE histograms SET %s WHERE step = 1", set);
    damage(sql);
    snprintf(rest, sizeof rest, "histograms row (run 'r', tag 'h', step 1): %s", why);
    gb_histograms *h = (gb_histograms *)1;
    ASSERT_DAMAGED(gb_store_histograms(store, "r", "h", NULL, &h), rest);
    ck_assert_ptr_null(h);
    gb_distributions *d = (gb_distributions *)1;
    ASSERT_DAMAGED(gb_store_distributions(store, "r", "h", NULL, &d), rest);
    ck_assert_ptr_null(d);
    gb_query step0 = {0, 0, 0};
    ck_assert_int_eq(gb_store_histograms(store, "r", "h", &step0, &h), GB_STORE_OK);
    ck_assert(h->count == 1 && h->rows[0].bucket_count == 30 && h->rows[0].edges[0] == 1);
    gb_store_free(h);
}

#define WRONG_SIZE "the buckets BLOB does not hold bucket_count + 1 edges and bucket_count counts"

START_TEST(empty_buckets) { check_bad_buckets("buckets = x''", "the buckets BLOB is empty"); }
END_TEST

START_TEST(buckets_of_the_wrong_size) {
    check_bad_buckets("buckets = zeroblob(488 - 8)", WRONG_SIZE);
}
END_TEST

START_TEST(negative_bucket_count) { check_bad_buckets("bucket_count = -1", WRONG_SIZE); }
END_TEST

START_TEST(huge_bucket_count) {
    /* (2k + 1) * 8 wraps to 488 bytes in 64 bits: the size alone would pass. */
    check_bad_buckets("bucket_count = 2305843009213693982", WRONG_SIZE);
}
END_TEST

START_TEST(buckets_that_are_a_number) {
    check_bad_buckets("buckets = 7", "the buckets are not a BLOB");
}
END_TEST

/* ---- text, graphs --------------------------------------------------------------------------- */

START_TEST(text_that_is_a_blob) {
    damage("UPDATE texts SET value = x'68656c6c6f' WHERE step = 1");
    gb_texts *t = (gb_texts *)1;
    ASSERT_DAMAGED(gb_store_texts(store, "r", "t", NULL, &t),
                   "texts row (run 'r', tag 't', step 1): the text is a BLOB");
    ck_assert_ptr_null(t);
    gb_query step0 = {0, 0, 0};
    ck_assert_int_eq(gb_store_texts(store, "r", "t", &step0, &t), GB_STORE_OK);
    ck_assert(t->count == 1 && !strcmp(t->rows[0].text, "hello"));
    gb_store_free(t);
}
END_TEST

START_TEST(text_holding_a_nul_byte) {
    /* A C string would end at the NUL and silently lose the rest. */
    damage("UPDATE texts SET value = CAST(x'6865006c6f' AS TEXT) WHERE step = 0");
    gb_texts *t;
    ASSERT_DAMAGED(gb_store_texts(store, "r", "t", NULL, &t),
                   "texts row (run 'r', tag 't', step 0): the text holds a NUL byte");
}
END_TEST

START_TEST(graph_that_is_a_blob) {
    damage("UPDATE graphs SET content = x'00' WHERE step = 0");
    gb_graphs *g;
    ASSERT_DAMAGED(gb_store_graphs(store, "r", "g", NULL, &g),
                   "graphs row (run 'r', tag 'g', step 0): the text is a BLOB");
}
END_TEST

/* ---- hyperparameters ------------------------------------------------------------------------- */

static void check_bad_hparam(const char *sql, const char *rest) {
    damage(sql);
    gb_runs *runs = (gb_runs *)1;
    ASSERT_DAMAGED(gb_store_runs(store, &runs), rest);
    ck_assert_ptr_null(runs);
}

START_TEST(hparam_value_that_is_a_blob) {
    check_bad_hparam("UPDATE hparams SET value = x'ff' WHERE key = 'opt'",
                     "hparams row (run 'r', key 'opt'): the text is a BLOB");
}
END_TEST

START_TEST(hparam_flag_that_is_no_flag) {
    check_bad_hparam("UPDATE hparams SET is_number = 7 WHERE key = 'lr'",
                     "hparams row (run 'r', key 'lr'): is_number is neither 0 nor 1");
}
END_TEST

START_TEST(hparam_number_that_is_text) {
    check_bad_hparam("UPDATE hparams SET number = 'half' WHERE key = 'lr'",
                     "hparams row (run 'r', key 'lr'): the number is not a number");
}
END_TEST

/* ---- scalars --------------------------------------------------------------------------------- */

static bool count_point(void *user, int64_t step, double wall_time, double value) {
    (void)step, (void)wall_time, (void)value;
    ++*(int *)user;
    return true;
}

START_TEST(scalar_chunk_that_lost_its_points) {
    damage("UPDATE scalar_chunks SET points = x'' "
           "WHERE tag_id = (SELECT id FROM tags WHERE name = 'x')");
    const char *rest =
        "scalar_chunks row (run 'r', tag 'x', chunk from step 0): 3 points need 72 bytes, "
        "the BLOB holds 0";
    gb_scalar_series *sc = (gb_scalar_series *)1;
    ASSERT_DAMAGED(gb_store_scalars(store, "r", "x", NULL, &sc), rest);
    ck_assert_ptr_null(sc);
    int points = 0;
    ASSERT_DAMAGED(gb_store_scalar_points(store, "r", "x", GB_STEP_MIN, GB_STEP_MAX, count_point,
                                          &points),
                   rest);
    ck_assert_int_eq(points, 0);
}
END_TEST

/* Level 2 (256-step blocks), bucket 0 of "wide": its points at steps 0 and 1. */
#define WIDE_BUCKET_0                                                                         \
    "WHERE level = 2 AND bucket = 0 AND tag_id = (SELECT id FROM tags WHERE name = 'wide')"

START_TEST(scalar_rollup_whose_counts_do_not_add_up) {
    damage("UPDATE scalar_rollups SET nan_count = 3 " WIDE_BUCKET_0);
    gb_scalar_series *sc = (gb_scalar_series *)1;
    gb_query one = {GB_STEP_MIN, GB_STEP_MAX, 1};
    ASSERT_DAMAGED(gb_store_scalars(store, "r", "wide", &one, &sc),
                   "scalar_rollups row (run 'r', tag 'wide', level 2, bucket 0): its point counts "
                   "do not add up");
    ck_assert_ptr_null(sc);
    /* The raw points do not need the rollups. */
    ck_assert_int_eq(gb_store_scalars(store, "r", "wide", NULL, &sc), GB_STORE_OK);
    ck_assert_int_eq(sc->count, 3);
    gb_store_free(sc);
}
END_TEST

START_TEST(scalar_rollup_outside_its_bucket) {
    damage("UPDATE scalar_rollups SET last_step = 256 " WIDE_BUCKET_0);
    gb_scalar_series *sc;
    gb_query one = {GB_STEP_MIN, GB_STEP_MAX, 1};
    ASSERT_DAMAGED(gb_store_scalars(store, "r", "wide", &one, &sc),
                   "scalar_rollups row (run 'r', tag 'wide', level 2, bucket 0): its steps are not "
                   "inside its bucket");
}
END_TEST

START_TEST(scalar_rollups_that_count_too_few) {
    /* 2 points by the rollups: few enough to read raw for 2 rows, where
     * the chunks hold 3; returning 3 rows would break the budget. */
    damage("UPDATE scalar_rollups SET count = 1 " WIDE_BUCKET_0);
    gb_scalar_series *sc = (gb_scalar_series *)1;
    gb_query two = {GB_STEP_MIN, GB_STEP_MAX, 2};
    ASSERT_DAMAGED(gb_store_scalars(store, "r", "wide", &two, &sc),
                   "scalar_rollups row (run 'r', tag 'wide', steps 0 to 1000): they count at most "
                   "2 points, the scalar_chunks rows hold more");
    ck_assert_ptr_null(sc);
}
END_TEST

START_TEST(scalar_tag_spanning_all_of_int64) {
    damage("UPDATE tags SET min_step = -9223372036854775808, max_step = 9223372036854775807 "
           "WHERE name = 'x'");
    for (size_t n = 1; n <= 4; n++) {
        gb_scalar_series *sc;
        gb_query q = {GB_STEP_MIN, GB_STEP_MAX, n};
        ck_assert_msg(gb_store_scalars(store, "r", "x", &q, &sc) == GB_STORE_OK, "%s",
                      gb_store_last_error());
        ck_assert_int_eq(sc->total_points, 3);
        ck_assert_uint_le(sc->count, n);
        gb_store_free(sc);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_damaged");
    TCase *tc = tcase_create("damaged");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_png);
    tcase_add_test(tc, bytes_that_are_no_png);
    tcase_add_test(tc, png_that_is_text);
    tcase_add_test(tc, empty_buckets);
    tcase_add_test(tc, buckets_of_the_wrong_size);
    tcase_add_test(tc, negative_bucket_count);
    tcase_add_test(tc, huge_bucket_count);
    tcase_add_test(tc, buckets_that_are_a_number);
    tcase_add_test(tc, text_that_is_a_blob);
    tcase_add_test(tc, text_holding_a_nul_byte);
    tcase_add_test(tc, graph_that_is_a_blob);
    tcase_add_test(tc, hparam_value_that_is_a_blob);
    tcase_add_test(tc, hparam_flag_that_is_no_flag);
    tcase_add_test(tc, hparam_number_that_is_text);
    tcase_add_test(tc, scalar_chunk_that_lost_its_points);
    tcase_add_test(tc, scalar_rollup_whose_counts_do_not_add_up);
    tcase_add_test(tc, scalar_rollup_outside_its_bucket);
    tcase_add_test(tc, scalar_rollups_that_count_too_few);
    tcase_add_test(tc, scalar_tag_spanning_all_of_int64);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
