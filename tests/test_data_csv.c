/* test_data_csv.c — CSV datasets: typed columns chosen by name or index,
 * defaults for empty fields, the delimiter, quoting, line ends, elements
 * that batch and shuffle as slices do, and every kind of bad file with
 * the exact message (file, line, column number and name, what is wrong).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

static gb_dataset *csv(const char *text, const gb_csv_options *o) {
    return gb_dataset_from_csv_data(text, strlen(text), "t.csv", o);
}

/* Every element of ds (n components each) as doubles, row by row. */
static int64_t read_all(gb_dataset *ds, int n, double *out, gb_dtype *dtypes) {
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[GB_DATA_MAX_COMPONENTS];
    int64_t rows = 0;
    while (gb_iterator_next(it, e)) {
        for (int k = 0; k < n; k++) {
            ck_assert_int_eq(gb_rank(e[k]), 0);
            if (dtypes) ck_assert_int_eq(gb_tensor_dtype(e[k]), dtypes[k]);
            out[rows * n + k] = gb_item(e[k]);
        }
        rows++;
    }
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
    gb_iterator_free(it);
    return rows;
}

START_TEST(test_typed_columns_by_name) {
    /* CRLF line ends, a blank line, quoted fields (one with the delimiter
     * and a doubled quote, in a column not read), spaces around numbers,
     * and empty fields filled from defaults. */
    const char *text = "id;name;age;score\r\n"
                       "1;\"Smith; \"\"Jr\"\"\";41; 2.5\r\n"
                       "\r\n"
                       "2;Lee;;-1e3\r\n"
                       "3000000000;\"x\";7;\r\n";
    gb_csv_column cols[] = {
        {.name = "score", .dtype = GB_F64, .default_value = "0.25"},
        {.name = "age", .dtype = GB_I32, .default_value = "-1"},
        {.name = "id", .dtype = GB_I64},
    };
    gb_dataset *ds = csv(text, &(gb_csv_options){.header = true, .delimiter = ';',
                                                 .columns = cols, .ncolumns = 3});
    ck_assert_ptr_nonnull(ds);
    ck_assert_int_eq(gb_dataset_num_components(ds), 3);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    double v[9];
    ck_assert_int_eq(read_all(ds, 3, v, (gb_dtype[]){GB_F64, GB_I32, GB_I64}), 3);
    const double want[9] = {2.5, 41, 1, -1000, -1, 2, 0.25, 7, 3000000000.0};
    for (int i = 0; i < 9; i++) ck_assert_double_eq(v[i], want[i]);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_all_columns_no_header) {
    /* No options: every column, float32; no final line end. */
    gb_dataset *ds = csv("1,2,3\n4,5,6", NULL);
    ck_assert_int_eq(gb_dataset_num_components(ds), 3);
    double v[6];
    ck_assert_int_eq(read_all(ds, 3, v, (gb_dtype[]){GB_F32, GB_F32, GB_F32}), 2);
    for (int i = 0; i < 6; i++) ck_assert_double_eq(v[i], i + 1);
    gb_dataset_free(ds);
    /* By index, in any order; a trailing delimiter is an empty last field. */
    ds = csv("a,b,\n1,2,\n", &(gb_csv_options){
                                 .header = true,
                                 .columns = (gb_csv_column[]){{.index = 2, .default_value = "9"},
                                                              {.index = 0, .dtype = GB_I32}},
                                 .ncolumns = 2});
    ck_assert_int_eq(read_all(ds, 2, v, NULL), 1);
    ck_assert_double_eq(v[0], 9);
    ck_assert_double_eq(v[1], 1);
    gb_dataset_free(ds);
    /* Columns given and no records: an empty dataset. */
    ds = csv("", &(gb_csv_options){.columns = (gb_csv_column[]){{.index = 0}}, .ncolumns = 1});
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_batches_and_shuffles) {
    char text[256] = "x,y\n";
    for (int i = 0; i < 10; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "%d,%d\n", i, i % 2);
    gb_dataset *ds = csv(text, &(gb_csv_options){
                                   .header = true,
                                   .columns = (gb_csv_column[]){{.name = "x"}, {.name = "y", .dtype = GB_I32}},
                                   .ncolumns = 2});
    ds = gb_dataset_batch(gb_dataset_shuffle(ds, 10, 7), 4, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    double sum = 0;
    int batches = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin()) {
        ck_assert_int_eq(gb_rank(b[0]), 1);
        ck_assert_int_eq(gb_tensor_dtype(b[1]), GB_I32);
        for (int64_t i = 0; i < gb_size(b[0]); i++) {
            sum += gb_get(b[0], i);
            ck_assert_double_eq(gb_get(b[1], i), fmod(gb_get(b[0], i), 2));   /* rows stay whole */
        }
        batches++;
    }
    gb_scope_end();
    ck_assert(gb_ok());
    ck_assert_int_eq(batches, 3);
    ck_assert_double_eq(sum, 45);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* The dataset is refused with this error. */
static void refused(const char *text, const gb_csv_options *o, gb_status code, const char *msg) {
    gb_dataset *ds = csv(text, o);
    ck_assert_ptr_null(ds);
    assert_error(code, msg);
}

static const gb_csv_column AGE_SCORE[] = {{.name = "age", .dtype = GB_I32},
                                          {.name = "score"}};
static const gb_csv_options HEADED = {.header = true, .columns = AGE_SCORE, .ncolumns = 2};

START_TEST(test_bad_records) {
    refused("age,score\n1,2\n3\n", &HEADED, GB_ERR_IO, "t.csv:3: 1 fields, but the header has 2");
    refused("age,score\n1,2,3\n", &HEADED, GB_ERR_IO, "t.csv:2: 3 fields, but the header has 2");
    refused("age,score\n1,2\n,4\n", &HEADED, GB_ERR_IO,
            "t.csv:3: column 1 ('age'): the field is empty and the column has no default");
    refused("age,score\n1,abc\n", &HEADED, GB_ERR_IO,
            "t.csv:2: column 2 ('score'): cannot read 'abc' as float32: not a number");
    refused("age,score\n1.5,2\n", &HEADED, GB_ERR_IO,
            "t.csv:2: column 1 ('age'): cannot read '1.5' as int32: not an integer");
    refused("age,score\n\n\n3000000000,2\n", &HEADED, GB_ERR_IO,
            "t.csv:4: column 1 ('age'): cannot read '3000000000' as int32: out of range");
    refused("age,score\n1,1e999\n", &HEADED, GB_ERR_IO,
            "t.csv:2: column 2 ('score'): cannot read '1e999' as float32: out of range");
    refused("age,score\n1,\"2\n", &HEADED, GB_ERR_IO,
            "t.csv:2: column 2: a quoted field is not closed before the end of the file");
    refused("age,score\n\"1\"x,2\n", &HEADED, GB_ERR_IO,
            "t.csv:2: column 1: text after the closing quote of a quoted field");
    refused("age,score\n1,2\n3,0000000000000000000000000000000000000000000000000000000000000000000000"
            "000000000000000000000000000000000000000000000000000000000000000000000000000001\n",
            &HEADED, GB_ERR_IO,
            "t.csv:3: column 2 ('score'): cannot read '0000000000000000000000000000000000000000...' "
            "as float32: too long to be a number");
    /* Without a header, columns have numbers only. */
    refused("1,x\n", &(gb_csv_options){0}, GB_ERR_IO,
            "t.csv:1: column 2: cannot read 'x' as float32: not a number");
}
END_TEST

START_TEST(test_bad_options) {
    refused("a,b\n1,2\n", &HEADED, GB_ERR_IO, "t.csv:1: the header has no column named 'age'");
    refused("a\n1\n", &(gb_csv_options){.columns = (gb_csv_column[]){{.index = 3}}, .ncolumns = 1},
            GB_ERR_IO, "t.csv:1: column 4 is chosen, but the first record has 1");
    refused("1,2,3,4,5,6,7,8,9\n", NULL, GB_ERR_IO,
            "t.csv:1: 9 columns, but an element holds at most 8 components");
    refused("", NULL, GB_ERR_IO, "t.csv:1: the file has no records, so the columns are unknown");
    refused("\n\n", &HEADED, GB_ERR_IO, "t.csv:1: the file is empty: no header");
    refused("a\n1\n", &(gb_csv_options){.columns = (gb_csv_column[]){{.index = 0, .dtype = GB_U8}}, .ncolumns = 1},
            GB_ERR_DTYPE, "gb_dataset_from_csv_data: column 0: dtype uint8 is not float32");
    refused("a\n1\n", &(gb_csv_options){.columns = (gb_csv_column[]){{.name = "a"}}, .ncolumns = 1},
            GB_ERR_VALUE, "column 0 is chosen by name ('a') but the options say the file has no header");
    refused("a\n1\n", &(gb_csv_options){.header = true,
                                        .columns = (gb_csv_column[]){{.name = "a", .dtype = GB_I64,
                                                                      .default_value = "zero"}},
                                        .ncolumns = 1},
            GB_ERR_VALUE, "cannot read the default 'zero' of column 1 as int64: not an integer");
    refused("a\n", &(gb_csv_options){.delimiter = '"'}, GB_ERR_VALUE,
            "the delimiter cannot be a quote or a line break");
    refused("a\n", &(gb_csv_options){.ncolumns = 9, .columns = AGE_SCORE}, GB_ERR_VALUE,
            "need 0 to 8 columns (one component each), got 9");
}
END_TEST

START_TEST(test_from_file) {
    char path[] = "/tmp/gb_csv_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text = "age,score\n30,0.5\n31,x\n";
    ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    ck_assert_ptr_null(gb_dataset_from_csv(path, &HEADED));
    char want[128];
    snprintf(want, sizeof want, "%s:3: column 2 ('score'): cannot read 'x'", path);
    assert_error(GB_ERR_IO, want);
    FILE *f = fopen(path, "w");
    fputs("age,score\n30,0.5\n", f);
    fclose(f);
    gb_dataset *ds = gb_dataset_from_csv(path, &HEADED);
    double v[2];
    ck_assert_int_eq(read_all(ds, 2, v, NULL), 1);
    ck_assert_double_eq(v[0], 30);
    ck_assert_double_eq(v[1], 0.5);
    gb_dataset_free(ds);
    unlink(path);
    ck_assert_ptr_null(gb_dataset_from_csv(path, NULL));
    snprintf(want, sizeof want, "%s: cannot open", path);
    assert_error(GB_ERR_IO, want);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_csv");
    TCase *tc = tcase_create("csv");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_typed_columns_by_name);
    tcase_add_test(tc, test_all_columns_no_header);
    tcase_add_test(tc, test_batches_and_shuffles);
    tcase_add_test(tc, test_bad_records);
    tcase_add_test(tc, test_bad_options);
    tcase_add_test(tc, test_from_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
