/* test_data_cache.c — cache() in memory and in a file: later passes do
 * not run the input (a counting generator and map), a pass that stops
 * early caches nothing, the file appears only when a pass completes and
 * serves a new dataset object, and damaged files are clear errors.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

enum { N = 5 };

/* Element i: ([i, i / 2] float32, i * i int32); counts the elements made. */
static bool gen(void *ctx, int64_t i, gb_tensor **out) {
    if (i >= N) return false;
    ++*(int *)ctx;
    out[0] = gb_from_f32((const float[]){(float)i, (float)i / 2}, GB_SHAPE(2));
    out[1] = gb_scalar(GB_I32, (double)(i * i));
    return true;
}

static gb_dataset *counted(int *calls) { return gb_dataset_from_generator(gen, calls, 2); }

/* One pass: true when it saw elements 0..N-1 in order and the end. */
static bool pass_ok(gb_dataset *ds) {
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[2];
    int64_t i = 0;
    bool same = true;
    for (gb_scope_begin(); gb_iterator_next(it, e); gb_scope_end(), gb_scope_begin(), i++)
        same = same && gb_get(e[0], 0) == i && gb_get(e[0], 1) == i / 2.0 && gb_item(e[1]) == i * i &&
               gb_rank(e[0]) == 1 && gb_tensor_dtype(e[1]) == GB_I32;
    gb_scope_end();
    gb_iterator_free(it);
    return same && i == N && gb_ok();
}

/* Reads k elements and stops (frees the iterator early). */
static void partial_pass(gb_dataset *ds, int k) {
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[2];
    gb_scope_begin();
    for (int i = 0; i < k; i++) ck_assert(gb_iterator_next(it, e));
    gb_scope_end();
    gb_iterator_free(it);
}

START_TEST(test_memory) {
    int calls = 0;
    gb_dataset *ds = gb_dataset_cache(counted(&calls), NULL);
    ck_assert_int_eq(gb_dataset_num_components(ds), 2);
    partial_pass(ds, 2);   /* stops early: nothing is kept */
    ck_assert_int_eq(calls, 2);
    ck_assert(pass_ok(ds));
    ck_assert_int_eq(calls, 2 + N);
    ck_assert(pass_ok(ds));   /* replayed: the generator is not called */
    ck_assert(pass_ok(ds));
    ck_assert_int_eq(calls, 2 + N);
    /* Batching and repeating above the cache see the same elements. */
    gb_dataset *r = gb_dataset_batch(gb_dataset_repeat(gb_dataset_ref(ds), 3), 4, false);
    gb_iterator *it = gb_iterator_new(r);
    gb_tensor *b[2];
    double sum = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin())
        for (int64_t i = 0; i < gb_size(b[1]); i++) sum += gb_get(b[1], i);
    gb_scope_end();
    ck_assert(gb_ok());
    ck_assert_double_eq(sum, 3 * (0 + 1 + 4 + 9 + 16));
    ck_assert_int_eq(calls, 2 + N);
    gb_iterator_free(it);
    gb_dataset_free(r);
    gb_dataset_free(ds);
}
END_TEST

static bool count_map(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)nin;
    ++*(int *)ctx;
    out[0] = gb_mul(in[0], gb_scalar(GB_F32, 2));
    return true;
}

START_TEST(test_memory_over_map_and_repeat) {
    int calls = 0;
    gb_tensor *x = gb_from_f32((const float[]){1, 2, 3}, GB_SHAPE(3));
    /* repeat above cache: the map runs in the first round only. */
    gb_dataset *ds = gb_dataset_repeat(
        gb_dataset_cache(gb_dataset_map(gb_dataset_from_tensor_slices(1, &x), count_map, &calls, 1), ""),
        4);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 12);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[1];
    double sum = 0;
    for (gb_scope_begin(); gb_iterator_next(it, e); gb_scope_end(), gb_scope_begin()) sum += gb_item(e[0]);
    gb_scope_end();
    ck_assert(gb_ok());
    ck_assert_double_eq(sum, 4 * 12);
    ck_assert_int_eq(calls, 3);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* ---- files ------------------------------------------------------------------------------ */

static char path[128];

static void dir_setup(void) {
    scope_setup();
    test_dir_create();
    snprintf(path, sizeof path, "%s/train.cache", test_dir());
}

static void dir_teardown(void) {
    test_dir_remove();
    scope_teardown();
}

static bool exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Files in the directory (the cache and any temporary left behind). */
static int files_in_dir(void) {
    DIR *d = opendir(test_dir());
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

START_TEST(test_file) {
    int calls = 0;
    gb_dataset *ds = gb_dataset_cache(counted(&calls), path);
    /* A pass that stops early leaves neither the cache nor a temporary. */
    partial_pass(ds, 3);
    ck_assert(!exists(path));
    ck_assert_int_eq(files_in_dir(), 0);
    /* During a full pass the path does not exist yet; at its end it does. */
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[2];
    gb_scope_begin();
    ck_assert(gb_iterator_next(it, e) && gb_iterator_next(it, e));
    ck_assert(!exists(path));
    while (gb_iterator_next(it, e)) {}
    gb_scope_end();
    ck_assert(gb_ok());
    gb_iterator_free(it);
    ck_assert(exists(path));
    ck_assert_int_eq(files_in_dir(), 1);
    ck_assert_int_eq(calls, 3 + N);
    ck_assert(pass_ok(ds));
    ck_assert_int_eq(calls, 3 + N);
    gb_dataset_free(ds);

    /* A new dataset object (as a later process makes) reads the file. */
    int calls2 = 0;
    ds = gb_dataset_cache(counted(&calls2), path);
    ck_assert(pass_ok(ds));
    ck_assert(pass_ok(ds));
    ck_assert_int_eq(calls2, 0);
    gb_dataset_free(ds);
}
END_TEST

/* Writes the cache of a full pass and returns its bytes (*size). */
static char *cache_bytes(size_t *size) {
    int calls = 0;
    gb_dataset *ds = gb_dataset_cache(counted(&calls), path);
    ck_assert(pass_ok(ds));
    gb_dataset_free(ds);
    FILE *f = fopen(path, "rb");
    static char buf[4096];
    *size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

static void write_bytes(const char *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A pass over the damaged file fails with an I/O error naming it and
 * saying `part`, without calling the input. */
static void damaged(const char *part) {
    int calls = 0;
    gb_dataset *ds = gb_dataset_cache(counted(&calls), path);
    ck_assert(!pass_ok(ds));
    const gb_error *e = check_error(GB_ERR_IO, part);
    ck_assert_msg(!strncmp(e->message, path, strlen(path)), "%s does not name the file", e->message);
    gb_clear_error();
    ck_assert_int_eq(calls, 0);
    gb_dataset_free(ds);
}

START_TEST(test_damaged_files) {
    size_t n;
    char *good = cache_bytes(&n);
    /* 16 header bytes, 29 per element ('E', [2] float32, int32, CRC), 13 at the end. */
    ck_assert_uint_eq(n, 16 + N * 29 + 13);
    char bytes[4096];
    /* Truncated: inside the end marker, inside an element, before it. */
    write_bytes(good, n - 3);
    damaged("corrupt or truncated cache file: the end marker is cut short (element 5)");
    write_bytes(good, n - 13 - 14);   /* 15 of element 4's 29 bytes */
    damaged("corrupt or truncated cache file: cut short in the data (element 4)");
    write_bytes(good, n - 13);
    damaged("corrupt or truncated cache file: the file ends before its end marker (element 5)");
    /* A flipped data byte in the first element. */
    memcpy(bytes, good, n);
    bytes[16 + 1 + 2 + 8 + 1] ^= 0x40;
    write_bytes(bytes, n);
    damaged("the checksum does not match (element 0)");
    /* Bytes after the end. */
    memcpy(bytes, good, n);
    bytes[n] = 0;
    write_bytes(bytes, n + 1);
    damaged("bytes after the end marker");
    write_bytes("not a cache at all", 18);
    damaged("not a glassbox cache file (bad magic)");
    write_bytes("", 0);
    damaged("not a glassbox cache file");
    /* Another pipeline's cache: one component, not two. */
    unlink(path);
    gb_tensor *x = gb_zeros(GB_F32, GB_SHAPE(3));
    gb_dataset *one = gb_dataset_cache(gb_dataset_from_tensor_slices(1, &x), path);
    gb_iterator *it = gb_iterator_new(one);
    gb_tensor *e[1];
    while (gb_iterator_next(it, e)) {}
    gb_iterator_free(it);
    gb_dataset_free(one);
    int calls = 0;
    gb_dataset *ds = gb_dataset_cache(counted(&calls), path);
    ck_assert_ptr_null(gb_iterator_new(ds));
    assert_error(GB_ERR_IO, "the cache file holds elements of 1 components, this dataset has 2");
    gb_dataset_free(ds);
    /* A directory where the file should be. */
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    ds = gb_dataset_cache(counted(&calls), path);
    ck_assert_ptr_null(gb_iterator_new(ds));
    assert_error(GB_ERR_IO, "the cache path is not a regular file");
    gb_dataset_free(ds);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_cache");
    TCase *tc = tcase_create("memory");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_memory);
    tcase_add_test(tc, test_memory_over_map_and_repeat);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("file");
    tcase_add_checked_fixture(tf, dir_setup, dir_teardown);
    tcase_add_test(tf, test_file);
    tcase_add_test(tf, test_damaged_files);
    suite_add_tcase(s, tf);
    return s;
}

int main(void) { return run_suite(suite()); }
