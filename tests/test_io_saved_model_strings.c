/* test_io_saved_model_strings.c — SavedModels with strings: string inputs,
 * outputs and constants, and lookup tables, saved and loaded back; their
 * entries in constants.ckpt checked as input (a string entry cut short).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "io/internal.h"
#include "test_util.h"

static gb_lookup_table *table;

/* text [n] -> (ids [n] of the lowercased, de-punctuated text; text + "!") */
static int body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *clean = gb_regex_replace(gb_strings_lower(in[0]), "[^a-z]", "", true);
    out[0] = gb_lookup_table_find(table, clean);
    out[1] = gb_add(in[0], gb_string_scalar("!"));
    return out[0] && out[1] ? 2 : -1;
}

static void assert_str(const gb_tensor *t, int64_t i, const char *want) {
    gb_string s = gb_get_string(t, i);
    ck_assert_msg(s.len == (int64_t)strlen(want) && !memcmp(s.data, want, (size_t)s.len),
                  "element %lld is '%.*s', want '%s'", (long long)i, (int)s.len, s.data, want);
}

static const char *save_model(void) {
    table = gb_static_hash_table_new(gb_strings((const char *const[]){"cat", "dog"}, GB_SHAPE(2)),
                                     gb_tensor_from(GB_I64, (const int64_t[]){10, 20}, GB_SHAPE(2)), -1);
    gb_function *f = gb_function_new("ids", body, NULL);
    gb_saved_model_signature sig = {
        .name = "serving_default", .function = f,
        .inputs = (gb_tensor_spec[]){GB_SPEC("text", GB_STRING, -1)}, .ninputs = 1,
        .output_names = (const char *const[]){"ids", "shout"}};
    const char *dir = in_test_dir("sm");
    ck_assert_msg(gb_saved_model_save(dir, &sig, 1), "%s", gb_error_string());
    gb_function_free(f);
    gb_lookup_table_free(table); /* the model must not need it any more */
    return dir;
}

START_TEST(test_round_trip) {
    const char *dir = save_model();
    gb_saved_model *m = gb_saved_model_load(dir);
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    gb_tensor *x = gb_strings((const char *const[]){"Dog!", "C-a-t", "bird"}, GB_SHAPE(3)), *out[2];
    ck_assert_int_eq(gb_saved_model_call(m, "serving_default", &x, 1, out), 2);
    ck_assert_double_eq(gb_get(out[0], 0), 20);
    ck_assert_double_eq(gb_get(out[0], 1), 10);
    ck_assert_double_eq(gb_get(out[0], 2), -1);
    assert_str(out[1], 2, "bird!");
    gb_saved_model_free(m);
}
END_TEST

/* The file says which Const holds strings and where a table's entries are. */
START_TEST(test_file_marks_strings_and_tables) {
    const char *dir = save_model();
    char path[512];
    snprintf(path, sizeof path, "%s/saved_model.json", dir);
    FILE *f = fopen(path, "rb");
    char json[65536];
    size_t n = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[n] = '\0';
    ck_assert_ptr_nonnull(strstr(json, "\"strings\": true"));
    ck_assert_ptr_nonnull(strstr(json, "\"table\": ["));
}
END_TEST

/* An entry whose lengths run past its bytes, or leave bytes over, is
 * refused by name (the file is input). */
START_TEST(test_bad_string_entries) {
    unsigned char blob[8 + 3] = {5, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c'};
    ck_assert_ptr_null(gb__strings_decode(blob, sizeof blob, 1, (const int64_t[]){1}, "e"));
    assert_error_text(GB_ERR_IO, "e: string 0 of 5 bytes runs past the entry's end");
    blob[0] = 2;
    ck_assert_ptr_null(gb__strings_decode(blob, sizeof blob, 1, (const int64_t[]){1}, "e"));
    assert_error_text(GB_ERR_IO, "e: 1 bytes after the last string");
    ck_assert_ptr_null(gb__strings_decode(blob, sizeof blob, 1, (const int64_t[]){2}, "e"));
    assert_error_text(GB_ERR_IO, "e: 11 bytes cannot hold 2 strings");
    blob[0] = 3;
    gb_tensor *t = gb__strings_decode(blob, sizeof blob, 0, NULL, "e");
    assert_str(t, 0, "abc");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("io_saved_model_strings");
    TCase *tc = tcase_create("strings");
    tcase_add_checked_fixture(tc, nn_dir_setup, nn_dir_teardown);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_file_marks_strings_and_tables);
    tcase_add_test(tc, test_bad_string_entries);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
