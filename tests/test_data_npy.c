/* test_data_npy.c — .npy files: every dtype glassbox holds round-trips
 * bit for bit (strings as NumPy's 'S'), a header as NumPy writes it is
 * read (byte and unicode strings too), and each way a file
 * can be wrong is an error naming the file and the fault.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "glassbox.h"
#include "run_suite.h"
#include "test_util.h"

static char path[128];

static void setup(void) {
    scope_setup();
    test_dir_create();
    snprintf(path, sizeof path, "%s/t.npy", test_dir());
}

static void teardown(void) {
    test_dir_remove();
    scope_teardown();
}

static void assert_same(gb_tensor *a, gb_tensor *b) {
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(gb_tensor_dtype(a), gb_tensor_dtype(b));
    ck_assert_int_eq(gb_rank(a), gb_rank(b));
    for (int d = 0; d < gb_rank(a); d++) ck_assert_int_eq(gb_shape(a)[d], gb_shape(b)[d]);
    ck_assert(memcmp(gb_data(a), gb_data(b), (size_t)gb_size(a) * gb_dtype_size(gb_tensor_dtype(a))) == 0);
}

START_TEST(test_round_trip_every_dtype) {
    for (int dt = 0; dt < GB_DTYPE_COUNT; dt++) {
        if (!gb_dtype_is_numeric((gb_dtype)dt)) continue; /* strings: test_strings */
        gb_tensor *shapes[] = {
            gb_cast(gb_random_uniform(GB_F64, GB_SHAPE(2, 3, 4), 0, 100, 3), (gb_dtype)dt),
            gb_cast(gb_random_uniform(GB_F64, GB_SHAPE(5), 0, 100, 4), (gb_dtype)dt),
            gb_cast(gb_scalar(GB_F64, 7), (gb_dtype)dt),
            gb_zeros((gb_dtype)dt, GB_SHAPE(0, 3)),
        };
        for (int k = 0; k < 4; k++) {
            ck_assert_msg(gb_npy_write(path, shapes[k]), "%s", gb_error_string());
            assert_same(shapes[k], gb_npy_read(path));
        }
    }
}
END_TEST

static void assert_strings(const gb_tensor *t, int n, const gb_string *want) {
    ck_assert_msg(t != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_tensor_dtype(t), GB_STRING);
    ck_assert_int_eq(gb_size(t), n);
    for (int i = 0; i < n; i++) {
        gb_string g = gb_get_string(t, i);
        ck_assert_msg(g.len == want[i].len && !memcmp(g.data, want[i].data, (size_t)g.len),
                      "element %d is '%.*s'", i, (int)g.len, g.data);
    }
}

/* Strings go out as NumPy's bytes 'S' of the longest one's width and come
 * back as they were, a NUL inside kept (NumPy drops only trailing ones). */
START_TEST(test_strings) {
    const gb_string want[] = {{"a", 1}, {"", 0}, {"hello", 5}, {"x\0y", 3}};
    gb_tensor *t = gb_strings_from(want, GB_SHAPE(2, 2));
    ck_assert_msg(gb_npy_write(path, t), "%s", gb_error_string());
    gb_tensor *back = gb_npy_read(path);
    assert_strings(back, 4, want);
    ck_assert_int_eq(gb_rank(back), 2);
    FILE *f = fopen(path, "rb");
    char head[128] = {0};
    ck_assert(fread(head, 1, sizeof head - 1, f) > 0);
    fclose(f);
    ck_assert_msg(strstr(head + 10, "{'descr': '|S5', 'fortran_order': False, 'shape': (2, 2), }"),
                  "%s", head + 10);
}
END_TEST

/* A file as np.save(np.arange(6, dtype='<i8').reshape(2, 3)) writes it
 * in NumPy 1.24 (keys in that order, padding to 64 bytes). */
static size_t numpy_file(unsigned char *buf, const char *dict, const void *data, size_t n) {
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t len = strlen(dict), padded = (10 + len + 1 + 63) / 64 * 64 - 10;
    buf[8] = (unsigned char)padded, buf[9] = 0;
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', padded - len - 1);
    buf[10 + padded - 1] = '\n';
    memcpy(buf + 10 + padded, data, n);
    return 10 + padded + n;
}

START_TEST(test_reads_numpy_headers) {
    unsigned char buf[512];
    int64_t v[6] = {0, 1, 2, 3, 4, 5};
    size_t n = numpy_file(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
    gb_tensor *t = gb_npy_decode(buf, n, "a.npy");
    assert_same(gb_tensor_from(GB_I64, v, GB_SHAPE(2, 3)), t);
    /* Keys in another order, double quotes, no trailing comma. */
    n = numpy_file(buf, "{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<i8\"}", v, sizeof v);
    assert_same(gb_tensor_from(GB_I64, v, GB_SHAPE(6)), gb_npy_decode(buf, n, "b.npy"));
    /* np.array([b'ab', b'cde']): '|S3', NUL-padded */
    n = numpy_file(buf, "{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", "ab\0cde", 6);
    assert_strings(gb_npy_decode(buf, n, "s.npy"), 2, (const gb_string[]){{"ab", 2}, {"cde", 3}});
    /* np.array(['\u00e9', 'hi']): '<U2', UTF-32LE code points, as UTF-8 */
    static const unsigned char u[16] = {0xe9, 0, 0, 0, 0, 0, 0, 0, 'h', 0, 0, 0, 'i', 0, 0, 0};
    n = numpy_file(buf, "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", u, sizeof u);
    assert_strings(gb_npy_decode(buf, n, "u.npy"), 2, (const gb_string[]){{"\xc3\xa9", 2}, {"hi", 2}});
}
END_TEST

START_TEST(test_faults_are_named) {
    unsigned char buf[512];
    float v[4] = {1, 2, 3, 4};
    static const struct {
        const char *dict, *error;
        size_t data;
    } cases[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
         "x.npy: its dtype is not one glassbox holds (float32/64, int32/64, uint8, bool, byte "
         "strings 'S', little-endian unicode strings 'U')", 16},
        {"{'descr': '>U1', 'fortran_order': False, 'shape': (4,), }",
         "x.npy: its dtype is not one glassbox holds (float32/64, int32/64, uint8, bool, byte "
         "strings 'S', little-endian unicode strings 'U')", 16},
        {"{'descr': '|S3', 'fortran_order': False, 'shape': (5,), }",
         "x.npy: string data of shape with 5 elements needs 15 bytes, the file has 16", 16},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }",
         "x.npy: Fortran (column-major) order is not read; save with order='C'", 16},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
         "x.npy: float32 data of shape with 5 elements needs 20 bytes, the file has 16", 16},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
         "x.npy: float32 data of shape with 4 elements needs 16 bytes, the file has 12", 12},
        {"{'descr': '<f4', 'shape': (4,), }", "x.npy: the header lacks 'descr', 'fortran_order' or 'shape'", 16},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}",
         "x.npy: the header has a key other than 'descr', 'fortran_order' and 'shape'", 16},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
         "x.npy: 'shape' must be a tuple of at most 8 sizes, once", 16},
        /* no element, but the dims past the zero overflow (found by the fuzzer) */
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }",
         "x.npy: its shape has more than 2^63 elements", 0},
        {"{'descr': '|S3', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }",
         "x.npy: its shape has more than 2^63 elements", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = numpy_file(buf, cases[i].dict, v, cases[i].data);
        expect_error(gb_npy_decode(buf, n, "x.npy"), GB_ERR_IO, cases[i].error);
    }
    expect_error(gb_npy_decode("PK\x03\x04 not numpy", 16, "x.npy"), GB_ERR_IO,
                 "x.npy: not a .npy file (no \\x93NUMPY magic)");
    size_t n = numpy_file(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", v, 16);
    buf[6] = 4;
    expect_error(gb_npy_decode(buf, n, "x.npy"), GB_ERR_IO, "x.npy: .npy format version 4.0 is not read (1 to 3)");
    expect_error(gb_npy_decode(buf, 60, "x.npy"), GB_ERR_IO, "x.npy: .npy format version 4.0");
    buf[6] = 1;
    expect_error(gb_npy_decode(buf, 40, "x.npy"), GB_ERR_IO, "x.npy: truncated header (118 bytes announced)");
    expect_error(gb_npy_read("/nonexistent/x.npy"), GB_ERR_IO, "/nonexistent/x.npy");
    /* a 'U' element that is no code point (a surrogate) is named */
    static const unsigned char bad_u[8] = {'o', 0, 0, 0, 0x00, 0xd8, 0, 0};
    n = numpy_file(buf, "{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }", bad_u, 8);
    expect_error(gb_npy_decode(buf, n, "x.npy"), GB_ERR_IO,
                 "x.npy: element 1 holds 0xd800 at character 0, which is no Unicode code point");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_npy");
    TCase *tc = tcase_create("npy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_round_trip_every_dtype);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_reads_numpy_headers);
    tcase_add_test(tc, test_faults_are_named);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
