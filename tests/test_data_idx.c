/* test_data_idx.c — the IDX reader and the MNIST-format loader: valid
 * files of every type (plain and gzip, from a file or from memory), each
 * way a file can be wrong (missing, directory, FIFO, device, empty, bad
 * magic, unknown type, bad rank, truncated header, truncated data plain
 * and gzip, a header announcing more than the input can hold, trailing
 * data, corrupt gzip, bytes after the gzip stream), each way a directory
 * can be wrong (missing, a file, a missing part, label/image count
 * mismatch, wrong rank, a label outside the classes, a FIFO part), the
 * float conversion of images, and, when installed, the real Fashion-MNIST
 * files through a full shuffled, batched, prefetched epoch. Files are
 * written into a fresh temporary directory. */
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "glassbox.h"
#include "test_util.h"

static char tmpdir[64];
static char pathbuf[512];

static void setup(void) {
    gb_clear_error();
    gb_scope_begin();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/gb_idx_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void teardown(void) {
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    gb_scope_end();
    gb_clear_error();
}

static const char *in_tmp(const char *name) {
    snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
    return pathbuf;
}

/* Writes n bytes to tmpdir/name, gzip-compressed if the name ends in .gz. */
static const char *write_file(const char *name, const void *bytes, size_t n) {
    const char *path = in_tmp(name);
    size_t len = strlen(name);
    if (len > 3 && strcmp(name + len - 3, ".gz") == 0) {
        gzFile f = gzopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(gzwrite(f, bytes, (unsigned)n), (int)n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
        fclose(f);
    }
    return path;
}

/* An IDX image: header for (type, rank, dims), then `payload` bytes of
 * already big-endian data. Returns the total size written into out. */
static size_t idx_bytes(uint8_t *out, uint8_t type, int rank, const uint32_t *dims,
                        const void *payload, size_t payload_len) {
    uint8_t *p = out;
    *p++ = 0, *p++ = 0, *p++ = type, *p++ = (uint8_t)rank;
    for (int i = 0; i < rank; i++) {
        *p++ = (uint8_t)(dims[i] >> 24), *p++ = (uint8_t)(dims[i] >> 16);
        *p++ = (uint8_t)(dims[i] >> 8), *p++ = (uint8_t)dims[i];
    }
    memcpy(p, payload, payload_len);
    return (size_t)(p - out) + payload_len;
}

/* A uint8 IDX file of shape dims with element i = (i * 7) % 256. */
static const char *write_u8(const char *name, int rank, const uint32_t *dims) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    uint8_t *payload = malloc(n), *buf = malloc(n + 64);
    for (size_t i = 0; i < n; i++) payload[i] = (uint8_t)(i * 7);
    const char *path = write_file(name, buf, idx_bytes(buf, 0x08, rank, dims, payload, n));
    free(payload);
    free(buf);
    return path;
}

static void assert_io_error(const char *path, const char *what) {
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GB_ERR_IO);
    ck_assert_msg(strncmp(e->message, path, strlen(path)) == 0, "message %s does not start with %s",
                  e->message, path);
    ck_assert_msg(strstr(e->message, what) != NULL, "message '%s' lacks '%s'", e->message, what);
    gb_clear_error();
}

/* ---- valid files ------------------------------------------------------------------- */

START_TEST(test_read_u8_plain_and_gzip) {
    const char *names[2] = {"a-idx3-ubyte", "a-idx3-ubyte.gz"};
    for (int gz = 0; gz < 2; gz++) {
        char path[512];
        snprintf(path, sizeof path, "%s", write_u8(names[gz], 3, (uint32_t[]){3, 4, 5}));
        gb_tensor *t = gb_idx_read(path);
        ck_assert_msg(t != NULL, "%s", gb_error_string());
        ck_assert_int_eq(gb_tensor_dtype(t), GB_U8);
        ck_assert_int_eq(gb_rank(t), 3);
        ck_assert_int_eq(gb_dim(t, 0), 3);
        ck_assert_int_eq(gb_dim(t, 1), 4);
        ck_assert_int_eq(gb_dim(t, 2), 5);
        for (int i = 0; i < 60; i++) ck_assert_double_eq(gb_get(t, i), (i * 7) % 256);
    }
}
END_TEST

/* Big-endian int8/int16/int32/float/double, widened and byte-swapped. */
START_TEST(test_read_every_type) {
    uint8_t buf[256];
    const uint8_t i8[3] = {0x80, 0x01, 0xFF};                 /* -128, 1, -1 */
    const uint8_t i16[6] = {0x80, 0x00, 0x01, 0x02, 0xFF, 0xFE};   /* -32768, 258, -2 */
    const uint8_t i32[8] = {0xFF, 0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x00, 0x00};   /* -3, 65536 */
    const uint8_t f32[8] = {0x3F, 0xC0, 0, 0, 0xC1, 0x20, 0, 0};           /* 1.5, -10 */
    const uint8_t f64[16] = {0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18,   /* pi */
                             0xBF, 0xF0, 0, 0, 0, 0, 0, 0};                  /* -1 */
    struct {
        uint8_t code;
        const void *data;
        size_t len;
        uint32_t n;
        gb_dtype dt;
        double want[3];
    } cases[] = {
        {0x09, i8, 3, 3, GB_I32, {-128, 1, -1}},
        {0x0B, i16, 6, 3, GB_I32, {-32768, 258, -2}},
        {0x0C, i32, 8, 2, GB_I32, {-3, 65536}},
        {0x0D, f32, 8, 2, GB_F32, {1.5, -10}},
        {0x0E, f64, 16, 2, GB_F64, {3.141592653589793, -1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = idx_bytes(buf, cases[c].code, 1, &cases[c].n, cases[c].data, cases[c].len);
        gb_tensor *t = gb_idx_read(write_file("t.gz", buf, n));
        ck_assert_msg(t != NULL, "%s", gb_error_string());
        ck_assert_int_eq(gb_tensor_dtype(t), cases[c].dt);
        ck_assert_int_eq(gb_size(t), cases[c].n);
        for (uint32_t i = 0; i < cases[c].n; i++) ck_assert_double_eq(gb_get(t, i), cases[c].want[i]);
    }
}
END_TEST

/* A dataset over IDX data shares its buffer: no copy, and still valid
 * after the tensor's scope ends. */
START_TEST(test_dataset_shares_idx_buffer) {
    const char *path = write_u8("s-idx1-ubyte", 1, (uint32_t[]){6});
    gb_scope_begin();
    gb_tensor *t = gb_idx_read(path);
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_tensor_slices(1, &t), 6, false);
    gb_scope_end();
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    ck_assert(gb_iterator_next(it, &b));
    for (int i = 0; i < 6; i++) ck_assert_double_eq(gb_get(b, i), i * 7);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* ---- broken files ------------------------------------------------------------------- */

START_TEST(test_missing_and_directory) {
    ck_assert_ptr_null(gb_idx_read(in_tmp("nope.gz")));
    assert_io_error(in_tmp("nope.gz"), ": cannot open: No such file or directory");
    ck_assert_ptr_null(gb_idx_read(tmpdir));
    assert_io_error(tmpdir, ": is a directory, not an IDX file");
}
END_TEST

/* A FIFO (or any non-regular file) is refused at once: opening one for
 * reading would block until a writer comes, which may be never. The
 * alarm turns a hang into a failure instead of waiting for the timeout. */
START_TEST(test_fifo_refused) {
    const char *p = in_tmp("fifo-idx1-ubyte");
    ck_assert_int_eq(mkfifo(p, 0600), 0);
    alarm(10);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": is a FIFO, not an IDX file");

    ck_assert_ptr_null(gb_idx_read("/dev/null"));
    assert_io_error("/dev/null", ": is a character device, not an IDX file");
    alarm(0);

    /* A regular file whose size stat reports as 0 is still read to its end. */
    ck_assert_ptr_null(gb_idx_read("/proc/self/stat"));
    assert_io_error("/proc/self/stat", ": bad magic number");
}
END_TEST

START_TEST(test_header_errors) {
    uint8_t buf[64];
    const char *p;

    p = write_file("empty", "", 0);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": not an IDX file: the file is empty");

    p = write_file("short.gz", "\0\0", 2);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": not an IDX file: shorter than the 4-byte magic number");

    p = write_file("png", "\x89PNG\r\n\x1a\n", 8);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": bad magic number 0x89504E47: not an IDX file");

    size_t n = idx_bytes(buf, 0x07, 1, (uint32_t[]){1}, "x", 1);
    p = write_file("type.gz", buf, n);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": unknown IDX data type 0x07 in magic number 0x00000701");

    n = idx_bytes(buf, 0x08, 0, NULL, "x", 1);
    p = write_file("rank0", buf, n);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": 0 dimensions in magic number 0x00000800; supported: 1 to 8");

    n = idx_bytes(buf, 0x08, 9, (uint32_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, "x", 1);
    p = write_file("rank9", buf, n);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": 9 dimensions in magic number 0x00000809");

    /* Says 3 dims, gives one. */
    n = idx_bytes(buf, 0x08, 1, (uint32_t[]){10}, "", 0);
    buf[3] = 3;
    p = write_file("hdr.gz", buf, n);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": truncated header: expected 3 dimension sizes (12 bytes), got 4 bytes");
}
END_TEST

START_TEST(test_truncated_data) {
    static uint8_t payload[7840], buf[8000];
    size_t full = idx_bytes(buf, 0x08, 3, (uint32_t[]){10, 28, 28}, payload, sizeof payload);
    const char *p = write_file("t10k-images-idx3-ubyte", buf, 16 + 1234);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": truncated: expected 7840 bytes of data, got 1234");
    /* Shortened before compression: a clean gzip stream with too little. */
    p = write_file("t10k-images-idx3-ubyte.gz", buf, 16 + 99);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": truncated: expected 7840 bytes of data, got 99");
    ck_assert_uint_eq(full, 16 + 7840);
}
END_TEST

/* A gzip file cut in the middle of its compressed stream. */
START_TEST(test_truncated_gzip_stream) {
    static uint8_t payload[50000], buf[50100];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 2654435761u >> 13);
    size_t n = idx_bytes(buf, 0x08, 1, (uint32_t[]){50000}, payload, sizeof payload);
    const char *p = write_file("cut.gz", buf, n);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(truncate(p, st.st_size / 2), 0);
    ck_assert_ptr_null(gb_idx_read(p));
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(strstr(e->message, ": truncated: expected 50000 bytes of data, got "));
    ck_assert_ptr_nonnull(strstr(e->message, "(the gzip stream ends early)"));
    assert_io_error(p, "truncated");
}
END_TEST

START_TEST(test_trailing_data) {
    uint8_t buf[64];
    size_t n = idx_bytes(buf, 0x08, 2, (uint32_t[]){3, 4}, "abcdefghijklmnopq", 17);
    const char *p = write_file("trail.gz", buf, n);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": 5 bytes of trailing data after the 12 bytes of data the header "
                       "announces");
}
END_TEST

START_TEST(test_corrupt_gzip) {
    static uint8_t payload[5000], buf[5100];
    size_t n = idx_bytes(buf, 0x08, 1, (uint32_t[]){5000}, payload, sizeof payload);
    const char *p = write_file("bad.gz", buf, n);
    /* After the 10-byte gzip header: a deflate block of reserved type 3. */
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 10, SEEK_SET);
    fputc(0xFF, f);
    fclose(f);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": corrupt gzip data: invalid block type");

    /* Data intact but the CRC in the trailer wrong: caught at the end. */
    p = write_file("crc.gz", buf, n);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, st.st_size - 8, SEEK_SET);
    int c = fgetc(f);
    fseek(f, st.st_size - 8, SEEK_SET);
    fputc(c ^ 0xFF, f);
    fclose(f);
    ck_assert_ptr_null(gb_idx_read(p));
    assert_io_error(p, ": corrupt gzip data: incorrect data check");
}
END_TEST

START_TEST(test_null_path) {
    ck_assert_ptr_null(gb_idx_read(NULL));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message, "gb_idx_read: path is NULL");
}
END_TEST

/* ---- bytes in memory ------------------------------------------------------------------ */

/* n bytes gzip-compressed into out (one member); the compressed size. */
static size_t gzip_bytes(uint8_t *out, size_t cap, const void *in, size_t n) {
    z_stream z = {0};
    ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    deflateEnd(&z);
    return cap - z.avail_out;
}

START_TEST(test_decode_memory) {
    uint8_t idx[64], gz[128];
    size_t n = idx_bytes(idx, 0x08, 2, (uint32_t[]){2, 3}, "abcdef", 6);
    size_t ngz = gzip_bytes(gz, sizeof gz, idx, n);
    const void *inputs[2] = {idx, gz};
    size_t sizes[2] = {n, ngz};
    for (int i = 0; i < 2; i++) {
        gb_tensor *t = gb_idx_decode(inputs[i], sizes[i], "mem");
        ck_assert_msg(t != NULL, "%s", gb_error_string());
        ck_assert_int_eq(gb_rank(t), 2);
        ck_assert_int_eq(gb_dim(t, 1), 3);
        ck_assert_double_eq(gb_get(t, 5), 'f');
    }
    /* The name stands for the file in messages; NULL gives a generic one. */
    ck_assert_ptr_null(gb_idx_decode(idx, n - 1, "mem"));
    assert_io_error("mem", ": truncated: expected 6 bytes of data, got 5");
    ck_assert_ptr_null(gb_idx_decode(NULL, 0, NULL));
    assert_io_error("IDX data", ": not an IDX file: the file is empty");
    ck_assert_ptr_null(gb_idx_decode(NULL, 3, "mem"));
    assert_error(GB_ERR_VALUE, "gb_idx_decode: data is NULL but size is 3");
}
END_TEST

/* As gzip(1): members concatenated read as one stream, zero padding after
 * the last is ignored, anything else after it is an error. */
START_TEST(test_gzip_members) {
    uint8_t idx[64], gz[512];
    size_t n = idx_bytes(idx, 0x08, 1, (uint32_t[]){10}, "0123456789", 10);
    size_t a = gzip_bytes(gz, sizeof gz, idx, 13);
    size_t b = gzip_bytes(gz + a, sizeof gz - a, idx + 13, n - 13);
    gb_tensor *t = gb_idx_decode(gz, a + b, "two");
    ck_assert_msg(t != NULL, "%s", gb_error_string());
    ck_assert_double_eq(gb_get(t, 9), '9');

    memset(gz + a + b, 0, 7);
    ck_assert_ptr_nonnull(gb_idx_decode(gz, a + b + 7, "padded"));

    gz[a + b + 3] = 'x';
    ck_assert_ptr_null(gb_idx_decode(gz, a + b + 7, "garbage"));
    assert_io_error("garbage", ": corrupt gzip data: bytes after the end of the gzip stream that "
                               "are neither gzip data nor zero padding");
}
END_TEST

/* A header announcing far more data than the input holds is refused
 * before anything is allocated for it (here 2^48 bytes). */
START_TEST(test_header_larger_than_input) {
    uint8_t idx[64], gz[128];
    size_t n = idx_bytes(idx, 0x08, 3, (uint32_t[]){65536, 65536, 65536}, "abc", 3);
    ck_assert_ptr_null(gb_idx_decode(idx, n, "plain"));
    assert_io_error("plain", ": truncated: expected 281474976710656 bytes of data, got 3");
    size_t ngz = gzip_bytes(gz, sizeof gz, idx, n);
    ck_assert_ptr_null(gb_idx_decode(gz, ngz, "gz"));
    assert_io_error("gz", ": truncated: expected 281474976710656 bytes of data, but the ");
}
END_TEST

/* ---- MNIST directories ---------------------------------------------------------------- */

/* A tiny MNIST directory: n_train/n_test images of 4x3, labels i % 10. */
static void write_mnist(int n_train, int n_train_labels, int n_test, bool gz) {
    const char *suffix = gz ? ".gz" : "";
    char name[64];
    snprintf(name, sizeof name, "train-images-idx3-ubyte%s", suffix);
    write_u8(name, 3, (uint32_t[]){(uint32_t)n_train, 4, 3});
    snprintf(name, sizeof name, "t10k-images-idx3-ubyte%s", suffix);
    write_u8(name, 3, (uint32_t[]){(uint32_t)n_test, 4, 3});
    uint8_t lbl[64], buf[128];
    for (int i = 0; i < 64; i++) lbl[i] = (uint8_t)(i % 10);
    snprintf(name, sizeof name, "train-labels-idx1-ubyte%s", suffix);
    write_file(name, buf, idx_bytes(buf, 0x08, 1, (uint32_t[]){(uint32_t)n_train_labels}, lbl,
                                    (size_t)n_train_labels));
    /* The test labels always plain: directories may mix both. */
    write_file("t10k-labels-idx1-ubyte", buf,
               idx_bytes(buf, 0x08, 1, (uint32_t[]){(uint32_t)n_test}, lbl, (size_t)n_test));
}

START_TEST(test_mnist_small_dir) {
    for (int gz = 0; gz < 2; gz++) {
        write_mnist(12, 12, 5, gz);
        gb_mnist m;
        ck_assert_msg(gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m), "%s", gb_error_string());
        ck_assert_int_eq(gb_tensor_dtype(m.train_images), GB_U8);
        ck_assert_int_eq(gb_dim(m.train_images, 0), 12);
        ck_assert_int_eq(gb_dim(m.train_images, 1), 4);
        ck_assert_int_eq(gb_dim(m.train_images, 2), 3);
        ck_assert_int_eq(gb_dim(m.test_images, 0), 5);
        ck_assert_int_eq(gb_tensor_dtype(m.train_labels), GB_I32);
        ck_assert_int_eq(gb_rank(m.train_labels), 1);
        ck_assert_int_eq(gb_dim(m.test_labels, 0), 5);
        for (int i = 0; i < 12; i++) ck_assert_double_eq(gb_get(m.train_labels, i), i % 10);
        ck_assert_double_eq(gb_get(m.train_images, 13), (13 * 7) % 256);
        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        ck_assert_int_eq(mkdir(tmpdir, 0700), 0);
    }
}
END_TEST

START_TEST(test_mnist_dir_errors) {
    gb_mnist m;
    const char *missing = in_tmp("no-such-dir");
    ck_assert(!gb_mnist_load(missing, GB_MNIST_CLASSES, &m));
    ck_assert_ptr_null(m.train_images);
    assert_io_error(missing, ": No such file or directory (expected a directory holding "
                             "train-images-idx3-ubyte.gz");

    const char *file = write_file("plain-file", "x", 1);
    ck_assert(!gb_mnist_load(file, GB_MNIST_CLASSES, &m));
    assert_io_error(file, ": not a directory");

    write_u8("train-images-idx3-ubyte.gz", 3, (uint32_t[]){2, 2, 2});
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    assert_io_error(tmpdir, ": missing train-labels-idx1-ubyte.gz (or train-labels-idx1-ubyte): "
                            "not an MNIST-format directory");
}
END_TEST

START_TEST(test_mnist_label_count_mismatch) {
    write_mnist(12, 11, 5, true);
    gb_mnist m;
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    char want[512];
    snprintf(want, sizeof want, "%s/train-labels-idx1-ubyte.gz has 11 labels but "
             "%s/train-images-idx3-ubyte.gz has 12 images", tmpdir, tmpdir);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_IO);
    ck_assert_str_eq(gb_last_error()->message, want);
    ck_assert_ptr_null(m.train_labels);
}
END_TEST

/* An empty test set is refused: it would score 0/0, printed as 0. */
START_TEST(test_mnist_empty_split) {
    write_mnist(12, 12, 0, true);
    gb_mnist m;
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    char want[512];
    snprintf(want, sizeof want, "%s/t10k-images-idx3-ubyte.gz holds no images; a data set needs "
             "at least one", tmpdir);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_IO);
    ck_assert_str_eq(gb_last_error()->message, want);
}
END_TEST

START_TEST(test_mnist_wrong_rank_and_bad_part) {
    write_mnist(12, 12, 5, true);
    const char *p = write_u8("t10k-images-idx3-ubyte.gz", 2, (uint32_t[]){5, 12});
    gb_mnist m;
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    assert_io_error(p, ": expected images (uint8, rank 3), found uint8 [5,12]");

    /* A broken part is reported by the reader, naming that file. */
    write_mnist(12, 12, 5, true);
    p = write_file("t10k-labels-idx1-ubyte", "\0\0\x08\x01\0\0\0\x05\1\2", 10);
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    assert_io_error(p, ": truncated: expected 5 bytes of data, got 2");
}
END_TEST

/* A label outside the classes would index past a table of class names
 * (or a one-hot row): the loader names the file, the record and the value. */
START_TEST(test_mnist_label_out_of_range) {
    write_mnist(12, 12, 5, true);
    uint8_t lbl[5] = {0, 1, 2, 200, 4}, buf[64];
    const char *p = write_file("t10k-labels-idx1-ubyte", buf,
                               idx_bytes(buf, 0x08, 1, (uint32_t[]){5}, lbl, sizeof lbl));
    gb_mnist m;
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    assert_io_error(p, ": label 200 at record 3 is not one of the 10 classes (0 to 9)");
    ck_assert_ptr_null(m.test_labels);

    /* Fewer classes than the labels use; then a count labels cannot have. */
    write_mnist(12, 12, 5, true);
    ck_assert(!gb_mnist_load(tmpdir, 5, &m));
    assert_io_error(in_tmp("train-labels-idx1-ubyte.gz"),
                    ": label 5 at record 5 is not one of the 5 classes (0 to 4)");
    ck_assert(gb_mnist_load(tmpdir, 256, &m));
    ck_assert(!gb_mnist_load(tmpdir, 0, &m));
    assert_error(GB_ERR_VALUE, "gb_mnist_load: num_classes is 0; expected 1 to 256");
    ck_assert(!gb_mnist_load(tmpdir, 257, &m));
    assert_error(GB_ERR_VALUE, "num_classes is 257");
}
END_TEST

/* A FIFO in place of a part: an error naming it, not a hang. */
START_TEST(test_mnist_fifo_part) {
    write_mnist(12, 12, 5, false);
    const char *p = in_tmp("t10k-images-idx3-ubyte");
    ck_assert_int_eq(remove(p), 0);
    ck_assert_int_eq(mkfifo(p, 0600), 0);
    alarm(10);
    gb_mnist m;
    ck_assert(!gb_mnist_load(tmpdir, GB_MNIST_CLASSES, &m));
    assert_io_error(p, ": is a FIFO, not an IDX file");
    alarm(0);
}
END_TEST

/* ---- images as float ---------------------------------------------------------------------- */

START_TEST(test_images_to_float) {
    uint8_t px[2 * 2 * 3] = {0, 51, 255, 1, 2, 3, 4, 5, 6, 7, 8, 128};
    gb_tensor *img = gb_tensor_from(GB_U8, px, GB_SHAPE(2, 2, 3));
    gb_tensor *nhw = gb_images_to_float(img, GB_IMAGES_NHW);
    gb_tensor *flat = gb_images_to_float(img, GB_IMAGES_FLAT);
    gb_tensor *nhwc = gb_images_to_float(img, GB_IMAGES_NHWC);
    ck_assert(gb_ok());
    ck_assert_int_eq(gb_rank(nhw), 3);
    ck_assert_int_eq(gb_rank(flat), 2);
    ck_assert_int_eq(gb_dim(flat, 1), 6);
    ck_assert_int_eq(gb_rank(nhwc), 4);
    ck_assert_int_eq(gb_dim(nhwc, 3), 1);
    ck_assert_int_eq(gb_dim(nhwc, 1), 2);
    for (int i = 0; i < 12; i++) {
        float want = (float)px[i] / 255.0f;
        ck_assert_float_eq(gb_data_f32(nhw)[i], want);
        ck_assert_float_eq(gb_data_f32(flat)[i], want);
        ck_assert_float_eq(gb_data_f32(nhwc)[i], want);
    }
    ck_assert_float_eq(gb_data_f32(flat)[2], 1.0f);
    ck_assert_float_eq(gb_data_f32(flat)[1], 0.2f);

    ck_assert_ptr_null(gb_images_to_float(nhw, GB_IMAGES_FLAT));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_DTYPE);
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_images_to_float: expected concrete uint8 images [N,H,W], got float32 "
                     "[2,2,3]");
    gb_clear_error();
    ck_assert_ptr_null(gb_images_to_float(gb_tensor_from(GB_U8, px, GB_SHAPE(12)), GB_IMAGES_NHW));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    gb_clear_error();
    ck_assert_ptr_null(gb_images_to_float(img, (gb_image_layout)7));
    ck_assert_str_eq(gb_last_error()->message, "gb_images_to_float: unknown layout 7");
}
END_TEST

/* ---- the real Fashion-MNIST ------------------------------------------------------------------ */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

START_TEST(test_real_fashion_mnist) {
    struct stat st;
    /* scripts/bootstrap.sh installs it before any test runs. */
    ck_assert_msg(stat(GB_FASHION_MNIST_DIR, &st) == 0,
                  "%s is missing: run scripts/bootstrap.sh (Debian package dataset-fashion-mnist)",
                  GB_FASHION_MNIST_DIR);
    double t0 = now_ms();
    gb_mnist m;
    ck_assert_msg(gb_mnist_load(GB_FASHION_MNIST_DIR, GB_MNIST_CLASSES, &m), "%s",
                  gb_error_string());
    double t_load = now_ms() - t0;
    ck_assert_int_eq(gb_rank(m.train_images), 3);
    ck_assert_int_eq(gb_dim(m.train_images, 0), 60000);
    ck_assert_int_eq(gb_dim(m.train_images, 1), 28);
    ck_assert_int_eq(gb_dim(m.train_images, 2), 28);
    ck_assert_int_eq(gb_dim(m.train_labels, 0), 60000);
    ck_assert_int_eq(gb_dim(m.test_images, 0), 10000);
    ck_assert_int_eq(gb_dim(m.test_labels, 0), 10000);
    /* Balanced classes 0..9: 6000 each in train, 1000 each in test. */
    int train_count[10] = {0}, test_count[10] = {0};
    for (int i = 0; i < 60000; i++) {
        int y = (int)gb_get(m.train_labels, i);
        ck_assert(y >= 0 && y <= 9);
        train_count[y]++;
    }
    for (int i = 0; i < 10000; i++) {
        int y = (int)gb_get(m.test_labels, i);
        ck_assert(y >= 0 && y <= 9);
        test_count[y]++;
    }
    for (int c = 0; c < 10; c++) {
        ck_assert_int_eq(train_count[c], 6000);
        ck_assert_int_eq(test_count[c], 1000);
    }

    /* One epoch as the examples run it: float32, shuffle 10000, batch
     * 128, prefetch 2. Every image and label exactly once, in pairs. */
    t0 = now_ms();
    gb_tensor *x = gb_images_to_float(m.train_images, GB_IMAGES_FLAT);
    double t_float = now_ms() - t0;
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_shuffle(
                             gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, m.train_labels}),
                             10000, 42),
                         128, false),
        2);
    int seen[10] = {0};
    int64_t n = 0, steps = 0;
    double pixel_sum = 0;
    t0 = now_ms();
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin()) {
        int64_t rows = gb_dim(b[0], 0);
        ck_assert_int_eq(gb_dim(b[0], 1), 784);
        ck_assert_int_eq(gb_dim(b[1], 0), rows);
        const int32_t *y = gb_data(b[1]);
        for (int64_t i = 0; i < rows; i++) seen[y[i]]++;
        pixel_sum += gb_data_f32(b[0])[0];
        n += rows;
        steps++;
    }
    gb_scope_end();
    double t_epoch = now_ms() - t0;
    gb_iterator_free(it);
    ck_assert(gb_ok());
    ck_assert_int_eq(n, 60000);
    ck_assert_int_eq(steps, 469);   /* 468 full batches and one of 96 */
    for (int c = 0; c < 10; c++) ck_assert_int_eq(seen[c], 6000);
    ck_assert(pixel_sum >= 0);
    printf("fashion-mnist: load %.0f ms, to float %.0f ms, one epoch (shuffle 10000, batch 128, "
           "prefetch 2) %.1f ms = %.0f samples/s\n",
           t_load, t_float, t_epoch, 60000 / (t_epoch / 1000));
    gb_dataset_free(ds);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_idx");
    TCase *tc = tcase_create("idx");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_read_u8_plain_and_gzip);
    tcase_add_test(tc, test_read_every_type);
    tcase_add_test(tc, test_dataset_shares_idx_buffer);
    tcase_add_test(tc, test_missing_and_directory);
    tcase_add_test(tc, test_fifo_refused);
    tcase_add_test(tc, test_header_errors);
    tcase_add_test(tc, test_truncated_data);
    tcase_add_test(tc, test_truncated_gzip_stream);
    tcase_add_test(tc, test_trailing_data);
    tcase_add_test(tc, test_corrupt_gzip);
    tcase_add_test(tc, test_null_path);
    tcase_add_test(tc, test_decode_memory);
    tcase_add_test(tc, test_gzip_members);
    tcase_add_test(tc, test_header_larger_than_input);
    tcase_add_test(tc, test_mnist_small_dir);
    tcase_add_test(tc, test_mnist_dir_errors);
    tcase_add_test(tc, test_mnist_label_count_mismatch);
    tcase_add_test(tc, test_mnist_empty_split);
    tcase_add_test(tc, test_mnist_wrong_rank_and_bad_part);
    tcase_add_test(tc, test_mnist_label_out_of_range);
    tcase_add_test(tc, test_mnist_fifo_part);
    tcase_add_test(tc, test_images_to_float);
    tcase_add_test(tc, test_real_fashion_mnist);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
