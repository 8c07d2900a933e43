/* test_summary_reader.c — the store's reader API with nothing but the
 * store library linked (no writer, no engine): the proof that reading a
 * store needs no engine, as the dashboard server relies on.
 *
 * The detail of numerics alerts parsed from valid, unusual and malformed
 * JSON (a rejected detail is all unknowns, never half filled),
 * distributions from buckets by hand (TensorBoard's compressor), the
 * names of kinds and statuses, and files the reader refuses. Stores the
 * writer makes are read in test_summary_store.c and test_summary_writer.c.
 */
#include <check.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_reader.h"
#include "run_suite.h"
#include "summary_test_util.h"

/* ---- the numerics detail parser ---------------------------------------------------------- */

START_TEST(detail_parser_reads_every_field) {
    gb_numerics_detail d;
    ck_assert(gb_numerics_detail_parse(
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
    ck_assert_int_eq(d.created, GB_TRISTATE_NO);
    ck_assert_int_eq(d.backward, GB_TRISTATE_YES);
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
    gb_numerics_detail d;
    ck_assert(gb_numerics_detail_parse(
        "{\"x\":{\"y\":[1,-0.5e-2,true,false,null,\"\\u00e9\",{\"z\":[]}]},\"a_key_longer_than_"
        "thirty_two_bytes_is_unknown\":1,\"created\":true}",
        &d));
    ck_assert_int_eq(d.created, GB_TRISTATE_YES);
    ck_assert_int_eq(d.backward, GB_TRISTATE_UNKNOWN);
    ck_assert_int_eq(d.first_index, -1);
    char many[1024] = "{\"inputs\":[";
    for (int i = 0; i < 10; i++) strcat(many, i ? ",{\"nan_count\":1}" : "{\"nan_count\":1}");
    strcat(many, "]}");
    ck_assert(gb_numerics_detail_parse(many, &d));
    ck_assert_int_eq(d.ninputs, GB_NUMERICS_DETAIL_MAX_INPUTS);
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
    gb_numerics_detail d;
    const char *json = malformed[_i];
    ck_assert_msg(!gb_numerics_detail_parse(json, &d), "accepted: %s", json);
    /* A rejected detail is all unknowns, never half-filled. */
    ck_assert_int_eq(d.created, GB_TRISTATE_UNKNOWN);
    ck_assert_int_eq(d.output.rank, -1);
    ck_assert_int_eq(d.ninputs, 0);
    ck_assert_str_eq(d.output.dtype, "");
}
END_TEST

/* ---- distributions -------------------------------------------------------------------------- */

START_TEST(test_distribution_from_buckets_by_hand) {
    /* TensorBoard's compressor on buckets [0,1):3 [1,2):0 [2,4):1 (4 values) */
    const double edges[] = {0, 1, 2, 4}, counts[] = {3, 0, 1};
    double out[GB_DISTRIBUTION_POINTS];
    gb_distribution_from_buckets(edges, counts, 3, out);
    /* cumulative weights 7500, 7500, 10000 (basis points) */
    const double want[] = {0,        668.0 / 7500,          1587.0 / 7500,
                           3085.0 / 7500, 5000.0 / 7500,    6915.0 / 7500,
                           2 + 2 * (8413.0 - 7500) / 2500, 2 + 2 * (9332.0 - 7500) / 2500, 4};
    for (int p = 0; p < GB_DISTRIBUTION_POINTS; p++)
        ck_assert_msg(fabs(out[p] - want[p]) < 1e-12, "p%d: %g want %g", p, out[p], want[p]);
    gb_distribution_from_buckets(edges, counts, 0, out);
    ck_assert(isnan(out[0]) && isnan(out[8]));
    ck_assert_double_eq(gb_distribution_percentiles[1], 6.68);
    ck_assert_double_eq(gb_distribution_percentiles[7], 93.32);
}
END_TEST

/* ---- names and refusals --------------------------------------------------------------------- */

START_TEST(kind_and_status_names) {
    gb_summary_kind k;
    for (int i = GB_KIND_ANY; i <= GB_KIND_GRAPH; i++) {
        ck_assert(gb_kind_from_name(gb_kind_name((gb_summary_kind)i), &k));
        ck_assert_int_eq(k, i);
    }
    ck_assert_str_eq(gb_kind_name(GB_KIND_SCALAR), "scalar");
    ck_assert_str_eq(gb_kind_name((gb_summary_kind)99), "unknown");
    ck_assert(!gb_kind_from_name("movie", &k) && !gb_kind_from_name(NULL, &k));
    ck_assert_str_eq(gb_store_status_name(GB_STORE_ERR_NO_TAG), "GB_STORE_ERR_NO_TAG");
    ck_assert_str_eq(gb_store_status_name((gb_store_status)99), "GB_STORE_ERR_UNKNOWN");
}
END_TEST

/* A database made by hand: an application id and a schema version. */
static void make_database(const char *path, int application_id, int version) {
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE TABLE t(x); PRAGMA application_id = %d; "
             "PRAGMA user_version = %d", application_id, version);
    ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(h));
    sqlite3_close(h);
}

static void assert_open_fails(const char *path, gb_store_status status, const char *part) {
    gb_store *s = (gb_store *)1;
    ck_assert_int_eq(gb_store_open(path, &s), status);
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(gb_store_last_error(), part), "'%s' lacks '%s'", gb_store_last_error(),
                  part);
}

START_TEST(files_the_reader_refuses) {
    char dir[256], db[300];
    SUMMARY_TEMP_STORE(dir, db, "gb_summary_reader");
    assert_open_fails(db, GB_STORE_ERR_NOT_FOUND, "store.db' does not exist");
    make_database(db, 0x47424F58 /* 'GBOX' */, GB_STORE_SCHEMA_VERSION + 1);
    assert_open_fails(db, GB_STORE_ERR_NEWER, "newer than this glassbox supports");
    unlink(db);
    make_database(db, 7, 1);
    assert_open_fails(db, GB_STORE_ERR_NOT_STORE, "another application, application_id 7");
    assert_open_fails(NULL, GB_STORE_ERR_ARG, "NULL");
    summary_remove_dir(dir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_reader");
    TCase *detail = tcase_create("numerics_detail");
    tcase_add_test(detail, detail_parser_reads_every_field);
    tcase_add_test(detail, detail_parser_skips_unknown_and_caps_inputs);
    tcase_add_loop_test(detail, detail_parser_rejects_malformed, 0,
                        (int)(sizeof malformed / sizeof malformed[0]));
    suite_add_tcase(s, detail);
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, test_distribution_from_buckets_by_hand);
    tcase_add_test(tc, kind_and_status_names);
    tcase_add_test(tc, files_the_reader_refuses);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
