/* test_data_text.c — string elements in the input pipeline: text files as
 * datasets (lines, separator-delimited records, files by pattern, the file
 * index), string tensor slices that outlive their scope, and batch,
 * shuffle, map (strings in, strings or numbers out), cache and prefetch
 * over them.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

static void write_file(const char *name, const char *text) {
    FILE *f = fopen(in_test_dir(name), "wb");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void assert_str(const gb_tensor *t, int64_t i, const char *want) {
    ck_assert_msg(t != NULL, "NULL: %s", gb_error_string());
    gb_string s = gb_get_string(t, i);
    ck_assert_msg(s.len == (int64_t)strlen(want) && memcmp(s.data, want, (size_t)s.len) == 0,
                  "element %lld is '%.*s', want '%s'", (long long)i, (int)s.len, s.data, want);
}

START_TEST(test_lines_of_files_by_pattern) {
    write_file("b.txt", "third\r\nfourth");
    write_file("a.txt", "first\n\nsecond\n");
    write_file("c.csv", "not,matched\n");
    char pattern[300];
    snprintf(pattern, sizeof pattern, "%s/*.txt", test_dir());
    gb_dataset *ds = gb_dataset_from_text_files(pattern, &(gb_text_options){.with_file_index = true});
    ck_assert_ptr_nonnull(ds);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 5);
    ck_assert_int_eq(gb_dataset_num_components(ds), 2);
    gb_iterator *it = gb_iterator_new(ds);
    const char *want[] = {"first", "", "second", "third", "fourth"};
    const int file[] = {0, 0, 0, 1, 1};
    gb_tensor *e[2];
    for (int i = 0; i < 5; i++) {
        ck_assert(gb_iterator_next(it, e));
        ck_assert_int_eq(gb_tensor_dtype(e[0]), GB_STRING);
        ck_assert_int_eq(gb_rank(e[0]), 0);
        assert_str(e[0], 0, want[i]);
        ck_assert_double_eq(gb_item(e[1]), file[i]);
    }
    ck_assert(!gb_iterator_next(it, e));
    gb_iterator_free(it);
    gb_dataset_free(ds);
    snprintf(pattern, sizeof pattern, "%s/*.none", test_dir());
    ck_assert_ptr_null(gb_dataset_from_text_files(pattern, NULL));
    char msg[400];
    snprintf(msg, sizeof msg, "gb_dataset_from_text_files: no file matches '%s'", pattern);
    assert_error_text(GB_ERR_IO, "%s", msg);
}
END_TEST

START_TEST(test_records_between_separator_lines) {
    write_file("fortunes", "A saying\n  on two lines.\n%\nAnother.\r\n%\n%\nLast one\n");
    gb_dataset *ds = gb_dataset_from_text_files(in_test_dir("fortunes"),
                                                &(gb_text_options){.record_separator = "%"});
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    ds = gb_dataset_batch(ds, 3, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_int_eq(gb_dim(b, 0), 3);
    assert_str(b, 0, "A saying\n  on two lines.");
    assert_str(b, 1, "Another.");
    assert_str(b, 2, "Last one");
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* strings in, numbers out: the length of each line */
static bool lengths(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = gb_strings_length(in[0], false);
    return out[0] != NULL;
}

static bool echo(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = gb_strings_upper(in[0]);
    return out[0] != NULL;
}

/* Slices of a string tensor outlive the scope that made it; they shuffle,
 * batch, prefetch and map like numbers. */
START_TEST(test_string_slices_through_a_pipeline) {
    gb_scope_begin();
    gb_dataset *ds = gb_dataset_from_tensor_slices(
        1, (gb_tensor *[]){gb_strings((const char *const[]){"a", "bb", "ccc", "dddd"}, GB_SHAPE(4))});
    gb_scope_end();
    gb_scope_begin();
    gb_strings((const char *const[]){"reuse the memory of the scope that ended"}, GB_SHAPE(1));
    gb_scope_end();
    gb_dataset *both = gb_dataset_ref(ds);
    gb_dataset *p = gb_dataset_prefetch(gb_dataset_batch(gb_dataset_shuffle(ds, 4, 7), 2, false), 2);
    gb_iterator *it = gb_iterator_new(p);
    gb_tensor *b;
    int64_t total = 0;
    for (int k = 0; k < 2; k++) {
        ck_assert(gb_iterator_next(it, &b));
        for (int i = 0; i < 2; i++) total += gb_get_string(b, i).len;
    }
    ck_assert_int_eq(total, 10);
    gb_iterator_free(it);
    gb_dataset_free(p);
    gb_dataset *m = gb_dataset_batch(gb_dataset_map(both, lengths, NULL, 1), 4, false);
    it = gb_iterator_new(m);
    ck_assert(gb_iterator_next(it, &b));
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(b, i), i + 1);
    gb_iterator_free(it);
    gb_dataset_free(m);
}
END_TEST

/* A map returning strings: its bytes outlive the function's scope; they
 * batch (the bytes gathered behind the batch's pairs), cache in memory and
 * prefetch; a cache file refuses them by name. */
START_TEST(test_map_returning_strings) {
    gb_dataset *src = gb_dataset_from_tensor_slices(
        1, (gb_tensor *[]){gb_strings((const char *const[]){"a", "bb", "", "dddd", "e"}, GB_SHAPE(5))});
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_repeat(gb_dataset_cache(gb_dataset_map(gb_dataset_ref(src), echo,
                                                                            NULL, 1), NULL), 2),
                         3, false),
        2);
    const char *const want[] = {"A", "BB", "", "DDDD", "E", "A", "BB", "", "DDDD", "E"};
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    int got = 0;
    for (int batch = 0; batch < 4; batch++) {
        gb_scope_begin();
        ck_assert_msg(gb_iterator_next(it, &b), "%s", gb_error_string());
        ck_assert_int_eq(gb_tensor_dtype(b), GB_STRING);
        ck_assert_int_eq(gb_size(b), batch < 3 ? 3 : 1);
        for (int i = 0; i < gb_size(b); i++) assert_str(b, i, want[got++]);
        gb_scope_end();
    }
    ck_assert(!gb_iterator_next(it, &b));
    ck_assert(gb_ok());
    gb_iterator_free(it);
    gb_dataset_free(ds);

    ds = gb_dataset_cache(gb_dataset_map(src, echo, NULL, 1), in_test_dir("strings.cache"));
    it = gb_iterator_new(ds);
    ck_assert(!gb_iterator_next(it, &b));
    char msg[512];
    snprintf(msg, sizeof msg, "CacheDataset: %s: component 0 is a string tensor; a cache file "
             "holds numbers only (cache strings in memory: gb_dataset_cache(ds, NULL))",
             in_test_dir("strings.cache"));
    assert_error_text(GB_ERR_DTYPE, "%s", msg);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* A CSV file with string columns: its lines batched, each batch decoded. */
START_TEST(test_csv_lines_through_decode_csv) {
    write_file("people.csv", "name,city,age\nAda,\"London, UK\",36\nAlan,,41\n");
    gb_dataset *ds = gb_dataset_batch(
        gb_dataset_skip(gb_dataset_from_text_files(in_test_dir("people.csv"), NULL), 1), 2, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *lines, *col[3];
    ck_assert(gb_iterator_next(it, &lines));
    gb_tensor *defaults[3] = {gb_string_scalar(""), gb_string_scalar("nowhere"), gb_scalar(GB_I32, 0)};
    ck_assert_int_eq(gb_decode_csv(lines, defaults, 3, ',', col), 3);
    assert_str(col[0], 1, "Alan");
    assert_str(col[1], 0, "London, UK");
    assert_str(col[1], 1, "nowhere");
    ck_assert_double_eq(gb_get(col[2], 0), 36);
    ck_assert_double_eq(gb_get(col[2], 1), 41);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

static Suite *text_suite(void) {
    Suite *s = suite_create("data_text");
    TCase *tc = tcase_create("text");
    tcase_add_checked_fixture(tc, nn_dir_setup, nn_dir_teardown);
    tcase_add_test(tc, test_lines_of_files_by_pattern);
    tcase_add_test(tc, test_records_between_separator_lines);
    tcase_add_test(tc, test_string_slices_through_a_pipeline);
    tcase_add_test(tc, test_map_returning_strings);
    tcase_add_test(tc, test_csv_lines_through_decode_csv);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(text_suite()); }
