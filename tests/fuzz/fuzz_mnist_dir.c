/* fuzz_mnist_dir.c — the MNIST-format directory loader (gb_mnist_load).
 *
 * Beyond each file's IDX parsing (fuzz_idx.c), the loader checks what
 * makes four files a data set: which files exist (.gz or plain), ranks
 * and dtypes, as many labels as images, every label a class. An input is
 *   byte 0   bit i set: part i is written gzip-compressed, as <stem>.gz
 *   byte 1   the number of classes minus 1 (1 to 256 classes)
 *   then     up to four parts separated by "--8<--": train images, train
 *            labels, test images, test labels; a part not given is a
 *            missing file.
 * The parts are written into a private temporary directory, then loaded.
 * What must hold: no crash, leak or undefined behaviour; a refused
 * directory gets an I/O error whose message starts with the directory (or
 * a file in it); an accepted one has uint8 images [N,H,W] and int32 labels
 * [N] per split, every label below the number of classes.
 */
#include <ftw.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_engine.h"

static const char *const stems[4] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",  "t10k-labels-idx1-ubyte",
};
static const char separator[] = "--8<--";

static char dir[64];

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(void) { nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "%s", "/tmp/gb_fuzz_mnist_XXXXXX");
    FUZZ_CHECK(mkdtemp(dir) != NULL, "cannot make a temporary directory");
    atexit(remove_dir);
    return 0;
}

/* Writes part `i` (n bytes), plain or gzip-compressed. */
static void write_part(int i, const uint8_t *bytes, size_t n, bool gz) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s%s", dir, stems[i], gz ? ".gz" : "");
    if (gz) {
        gzFile f = gzopen(path, "wb1");
        FUZZ_CHECK(f && (n == 0 || gzwrite(f, bytes, (unsigned)n) == (int)n), "writing %s", path);
        FUZZ_CHECK(gzclose(f) == Z_OK, "closing %s", path);
    } else {
        FILE *f = fopen(path, "wb");
        FUZZ_CHECK(f && fwrite(bytes, 1, n, f) == n, "writing %s", path);
        FUZZ_CHECK(fclose(f) == 0, "closing %s", path);
    }
}

/* Replaces the directory's contents with the parts of the input. */
static void write_parts(const uint8_t *data, size_t size, uint8_t gz_bits) {
    char path[128];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, stems[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s.gz", dir, stems[i]);
        unlink(path);
    }
    size_t sep = sizeof separator - 1;
    for (int i = 0; i < 4; i++) {
        const uint8_t *end = memmem(data, size, separator, sep);
        size_t n = end ? (size_t)(end - data) : size;
        write_part(i, data, n, gz_bits >> i & 1);
        if (!end) return;
        data += n + sep;
        size -= n + sep;
    }
}

static void check_split(gb_tensor *images, gb_tensor *labels, int classes) {
    FUZZ_CHECK(gb_tensor_dtype(images) == GB_U8 && gb_rank(images) == 3, "images not [N,H,W]");
    FUZZ_CHECK(gb_tensor_dtype(labels) == GB_I32 && gb_rank(labels) == 1, "labels not int32 [N]");
    FUZZ_CHECK(gb_dim(images, 0) == gb_dim(labels, 0), "images and labels differ in number");
    const int32_t *y = gb_data(labels);
    for (int64_t i = 0; i < gb_size(labels); i++)
        FUZZ_CHECK(y[i] >= 0 && y[i] < classes, "label %d at %lld, %d classes", y[i],
                   (long long)i, classes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    int classes = data[1] + 1;
    write_parts(data + 2, size - 2, data[0]);
    fuzz_begin();
    gb_mnist m;
    if (gb_mnist_load(dir, classes, &m)) {
        check_split(m.train_images, m.train_labels, classes);
        check_split(m.test_images, m.test_labels, classes);
    } else {
        fuzz_check_refused(dir);
        FUZZ_CHECK(!m.train_images && !m.test_labels, "a refused load left tensors in out");
    }
    fuzz_end();
    return 0;
}
