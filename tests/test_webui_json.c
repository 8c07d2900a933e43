/* test_webui_json.c — the dashboard server's building blocks without HTTP:
 * the bounded JSON writer (escaping, non-finite numbers, exact number
 * round trips, the size limit) and query-parameter validation. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"
#include "run_suite.h"

static char *finish(gb__json *j) {
    size_t len;
    char *s = gb__json_finish(j, &len);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), len);
    return s;
}

START_TEST(json_nesting_and_commas) {
    gb__json j;
    gb__json_init(&j, 1024);
    gb__json_obj(&j);
    GB__JSON_KV(&j, "a", int, -3);
    gb__json_key(&j, "b");
    gb__json_arr(&j);
    gb__json_bool(&j, true);
    gb__json_null(&j);
    gb__json_obj(&j);
    gb__json_obj_end(&j);
    gb__json_arr(&j);
    gb__json_arr_end(&j);
    gb__json_arr_end(&j);
    GB__JSON_KV(&j, "c", str, NULL);
    gb__json_obj_end(&j);
    char *s = finish(&j);
    ck_assert_str_eq(s, "{\"a\":-3,\"b\":[true,null,{},[]],\"c\":null}");
    free(s);
}
END_TEST

START_TEST(json_strings_are_escaped) {
    gb__json j;
    gb__json_init(&j, 1024);
    gb__json_str(&j, "q\"b\\s\n\r\t\x01\x7f</script>é");
    char *s = finish(&j);
    ck_assert_str_eq(s, "\"q\\\"b\\\\s\\n\\r\\t\\u0001\\u007f\\u003c/script>é\"");
    free(s);
}
END_TEST

/* Names from a store may hold anything: the JSON stays valid UTF-8, with
 * C1 controls escaped (U+009B is a CSI to a terminal showing the raw
 * JSON) and each byte that is not UTF-8 (stray, cut short, overlong, a
 * surrogate) a U+FFFD; valid multi-byte text passes as is. */
START_TEST(json_strings_from_the_store_stay_valid_utf8) {
    gb__json j;
    gb__json_init(&j, 1024);
    gb__json_str(&j, "a\xc2\x9b" "b\xc2\x85\xff" "c\xe2\x82" "d\xc0\xaf\xed\xa0\x80"
                     "\xf0\x9f\x98\x80\xe2\x80\xa8");
    char *s = finish(&j);
    ck_assert_str_eq(s, "\"a\\u009bb\\u0085\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffd\\ufffd"
                        "\\ufffd\xf0\x9f\x98\x80\xe2\x80\xa8\"");
    free(s);
}
END_TEST

START_TEST(json_numbers_round_trip) {
    gb__json j;
    gb__json_init(&j, 1024);
    gb__json_arr(&j);
    gb__json_num(&j, 0.1);
    gb__json_num(&j, (double)0.1f);   /* float32 widened: shortest float text */
    gb__json_num(&j, 1.0 / 3.0);
    gb__json_num(&j, 1e300);
    gb__json_num(&j, -0.0);
    gb__json_num(&j, NAN);
    gb__json_num(&j, INFINITY);
    gb__json_num(&j, -INFINITY);
    gb__json_int(&j, INT64_MIN);
    gb__json_arr_end(&j);
    char *s = finish(&j);
    ck_assert_str_eq(s, "[0.1,0.1,0.33333333333333331,1e+300,-0,\"NaN\",\"Infinity\",\"-Infinity\","
                        "-9223372036854775808]");
    free(s);
}
END_TEST

START_TEST(json_limit_and_unbalanced_fail) {
    gb__json j;
    gb__json_init(&j, 32);
    gb__json_arr(&j);
    for (int i = 0; i < 100; i++) gb__json_int(&j, 123456);
    gb__json_arr_end(&j);
    size_t len = 99;
    ck_assert_ptr_null(gb__json_finish(&j, &len));
    ck_assert_uint_eq(len, 99);
    gb__json_init(&j, 1024);
    gb__json_obj(&j);
    ck_assert_ptr_null(gb__json_finish(&j, &len));
    gb__json_init(&j, 1024);
    gb__json_arr_end(&j);
    ck_assert_ptr_null(gb__json_finish(&j, &len));
}
END_TEST

/* ---- parameters ------------------------------------------------------------------ */

static int dummy(gb__request *req) { return req ? 200 : 500; }

static const gb__route route = {
    "series", dummy,
    {GB__P_RUN, GB__P_POINTS, GB__P_STEP_RANGE, {"scale", GB__PARAM_FLOAT, false, 0, 10, 1.5},
     GB__P_END},
};

typedef struct kv {
    const char *names[8], *values[8];
    size_t n;
} kv;

static bool get_kv(void *ctx, size_t i, const char **name, const char **value) {
    kv *p = ctx;
    if (i >= p->n) return false;
    *name = p->names[i];
    *value = p->values[i];
    return true;
}

static bool validate(gb__request *req, kv *p) {
    memset(req, 0, sizeof *req);
    req->route = &route;
    return gb__validate_params(req, get_kv, p);
}

START_TEST(params_typed_values_and_fallbacks) {
    gb__request req;
    kv p = {{"run", "points", "max_step", "scale"}, {"résumé", "250", "-9223372036854775808", "2.5"}, 4};
    ck_assert(validate(&req, &p));
    ck_assert_str_eq(gb__param_text(&req, "run"), "résumé");
    ck_assert_int_eq(gb__param_int(&req, "points"), 250);
    ck_assert(gb__param_int(&req, "max_step") == INT64_MIN);
    ck_assert(gb__param_float(&req, "scale") == 2.5);
    ck_assert(!gb__param_present(&req, "since"));
    ck_assert_int_eq(gb__param_int(&req, "since"), -1);
    ck_assert(gb__param_int(&req, "min_step") == INT64_MIN);
    ck_assert_ptr_null(gb__param_text(&req, "nope"));
    kv q = {{"run"}, {"x"}, 1};
    ck_assert(validate(&req, &q));
    ck_assert_int_eq(gb__param_int(&req, "points"), GB__DEFAULT_POINTS);
    ck_assert(gb__param_float(&req, "scale") == 1.5);
}
END_TEST

typedef struct bad_param {
    const char *name, *value, *error;
} bad_param;

static const bad_param bad_params[] = {
    {"points", "1e3", "parameter 'points' is not an integer (expected an integer in [1, 10000])"},
    {"points", " 5", "parameter 'points' is not an integer (expected an integer in [1, 10000])"},
    {"points", "+5", "parameter 'points' is not an integer (expected an integer in [1, 10000])"},
    {"points", "", "parameter 'points' is not an integer (expected an integer in [1, 10000])"},
    {"points", "10001", "parameter 'points' is out of range (expected an integer in [1, 10000])"},
    {"scale", "nan", "parameter 'scale' is not a number (expected a number in [0, 10])"},
    {"scale", "inf", "parameter 'scale' is not a number (expected a number in [0, 10])"},
    {"scale", "0x10", "parameter 'scale' is not a number (expected a number in [0, 10])"},
    {"scale", "11", "parameter 'scale' is out of range (expected a number in [0, 10])"},
    {"since", "-2", "parameter 'since' is out of range (expected an integer >= -1)"},
    {"min_step", "9223372036854775808", "parameter 'min_step' is not an integer (expected an integer)"},
    {"run", "\xed\xa0\x80", "parameter 'run' is not valid UTF-8"},   /* a surrogate */
    {"run", "\xf4\x90\x80\x80", "parameter 'run' is not valid UTF-8"}, /* > U+10FFFF */
    {"run", "\xe2\x82", "parameter 'run' is not valid UTF-8"},         /* truncated */
    {"run", "a\tb", "parameter 'run' contains a control character"},
    {"run", "a\xc2\x9b", "parameter 'run' contains a control character"},   /* C1 CSI */
    {"Run", "x", "unknown parameter 'Run' (accepted: run, points, since, min_step, max_step, scale)"},
};

START_TEST(params_rejected_with_reason) {
    const bad_param *b = &bad_params[_i];
    gb__request req;
    kv p = {{"run", b->name}, {"ok", b->value}, 2};
    if (!strcmp(b->name, "run")) p = (kv){{"run"}, {b->value}, 1};
    ck_assert(!validate(&req, &p));
    ck_assert_str_eq(req.error, b->error);
}
END_TEST

START_TEST(params_long_text_and_repeats) {
    gb__request req;
    char long_run[GB__MAX_TEXT_PARAM + 2];
    memset(long_run, 'a', sizeof long_run - 1);
    long_run[sizeof long_run - 1] = '\0';
    kv p = {{"run"}, {long_run}, 1};
    ck_assert(!validate(&req, &p));
    ck_assert_str_eq(req.error, "parameter 'run' is too long");
    long_run[GB__MAX_TEXT_PARAM] = '\0';
    ck_assert(validate(&req, &p));
    kv q = {{"run", "points", "points"}, {"a", "1", "2"}, 3};
    ck_assert(!validate(&req, &q));
    ck_assert_str_eq(req.error, "parameter 'points' given more than once");
    kv r = {{"points"}, {"1"}, 1};
    ck_assert(!validate(&req, &r));
    ck_assert_str_eq(req.error, "missing required parameter 'run'");
}
END_TEST

START_TEST(routes_resolve_by_exact_path) {
    ck_assert_ptr_nonnull(gb__find_route("/api/runs"));
    ck_assert_str_eq(gb__find_route("/api/scalars/series")->path, "series");
    ck_assert_ptr_null(gb__find_route("/api/runs/"));
    ck_assert_ptr_null(gb__find_route("/api/scalarsx/series"));
    ck_assert_ptr_null(gb__find_route("/api/scalars/series/"));
    ck_assert_ptr_null(gb__find_route("/api/"));
    ck_assert_ptr_null(gb__find_route("/runs"));
    ck_assert_ptr_nonnull(gb__find_static("index.html"));
    ck_assert_ptr_nonnull(gb__find_static("app.js"));
    ck_assert_ptr_null(gb__find_static("../index.html"));
    ck_assert_ptr_null(gb__find_static("/index.html"));
}
END_TEST

int main(void) {
    Suite *s = suite_create("webui_json");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, json_nesting_and_commas);
    tcase_add_test(tc, json_strings_are_escaped);
    tcase_add_test(tc, json_strings_from_the_store_stay_valid_utf8);
    tcase_add_test(tc, json_numbers_round_trip);
    tcase_add_test(tc, json_limit_and_unbalanced_fail);
    tcase_add_test(tc, params_typed_values_and_fallbacks);
    tcase_add_loop_test(tc, params_rejected_with_reason, 0, (int)(sizeof bad_params / sizeof bad_params[0]));
    tcase_add_test(tc, params_long_text_and_repeats);
    tcase_add_test(tc, routes_resolve_by_exact_path);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
