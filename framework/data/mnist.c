/* data/mnist.c — MNIST-format directories (MNIST, Fashion-MNIST) and the
 * conversion of their uint8 images to float32 in [0,1].
 *
 * A directory holds four IDX files, gzip-compressed or not, under the
 * names the data sets are distributed with. Besides what gb_idx_read
 * checks in each file, the loader checks what makes them a data set:
 * images of rank 3 and labels of rank 1, both uint8, as many labels as
 * images, and every label one of the caller's classes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "data/internal.h"

/* The file stems; each may also end in .gz. */
static const char *const stems[4] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",  "t10k-labels-idx1-ubyte",
};

/* Present and not a directory. A FIFO or device counts as present, so
 * that gb_idx_read refuses it by name instead of this loader reporting
 * the part missing. */
static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* dir/stem.gz or dir/stem into path; false after an error naming both. */
static bool find_file(const char *dir, const char *stem, char *path, size_t n) {
    snprintf(path, n, "%s/%s.gz", dir, stem);
    if (is_file(path)) return true;
    snprintf(path, n, "%s/%s", dir, stem);
    if (is_file(path)) return true;
    gb__error(GB_ERR_IO, NULL, "%s: missing %s.gz (or %s): not an MNIST-format directory", dir,
              stem, stem);
    return false;
}

/* Reads one file and checks its rank and dtype. */
static gb_tensor *read_part(const char *path, int rank, const char *what) {
    gb_tensor *t = gb_idx_read(path);
    if (!t) return NULL;
    if (t->rank != rank || t->dtype != GB_U8) {
        char s[128];
        gb__error(GB_ERR_IO, NULL, "%s: expected %s (uint8, rank %d), found %s %s", path, what,
                  rank, gb_dtype_name(t->dtype), gb__shape_fmt(t->rank, t->shape, s, sizeof s));
        return NULL;
    }
    return t;
}

/* uint8 labels as int32, the dtype losses take, each checked to be a
 * class: an out-of-range label would index past a table of class names
 * or a one-hot row in the user's code. */
static gb_tensor *labels_i32(gb_tensor *u8, const char *path, int num_classes) {
    const uint8_t *src = u8->data;
    for (int64_t i = 0; i < u8->size; i++) {
        if (src[i] >= num_classes) {
            gb__error(GB_ERR_IO, NULL,
                      "%s: label %d at record %lld is not one of the %d classes (0 to %d)", path,
                      src[i], (long long)i, num_classes, num_classes - 1);
            return NULL;
        }
    }
    gb_buffer *b = gb__buffer_new_heap((size_t)u8->size * sizeof(int32_t));
    if (!b) return NULL;
    int32_t *dst = b->data;
    for (int64_t i = 0; i < u8->size; i++) dst[i] = src[i];
    return gb__heap_tensor(b, true, GB_I32, 1, u8->shape);
}

/* Images and labels of one split; false after an error. */
static bool load_split(const char *dir, const char *img_stem, const char *lbl_stem,
                       int num_classes, gb_tensor **images, gb_tensor **labels) {
    char ipath[PATH_MAX], lpath[PATH_MAX];
    if (!find_file(dir, img_stem, ipath, sizeof ipath) ||
        !find_file(dir, lbl_stem, lpath, sizeof lpath))
        return false;
    gb_tensor *img = read_part(ipath, 3, "images");
    gb_tensor *lbl = img ? read_part(lpath, 1, "labels") : NULL;
    if (!lbl) return false;
    if (lbl->shape[0] != img->shape[0]) {
        gb__error(GB_ERR_IO, NULL, "%s has %lld labels but %s has %lld images", lpath,
                  (long long)lbl->shape[0], ipath, (long long)img->shape[0]);
        return false;
    }
    /* An empty split trains nothing and scores 0/0: an accuracy of 0.0000
     * printed for an empty test set hid the mistake. */
    if (img->shape[0] == 0) {
        gb__error(GB_ERR_IO, NULL, "%s holds no images; a data set needs at least one", ipath);
        return false;
    }
    *images = img;
    *labels = labels_i32(lbl, lpath, num_classes);
    return *labels != NULL;
}

bool gb_mnist_load(const char *dir, int num_classes, gb_mnist *out) {
    if (!out) {
        gb__error(GB_ERR_VALUE, NULL, "gb_mnist_load: out is NULL");
        return false;
    }
    *out = (gb_mnist){0};
    if (!dir) {
        gb__error(GB_ERR_VALUE, NULL, "gb_mnist_load: dir is NULL");
        return false;
    }
    if (num_classes < 1 || num_classes > 256) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_mnist_load: num_classes is %d; expected 1 to 256 (labels are bytes)",
                  num_classes);
        return false;
    }
    struct stat st;
    const char *why = stat(dir, &st) != 0 ? strerror(errno)
                      : !S_ISDIR(st.st_mode) ? "not a directory"
                                             : NULL;
    if (why) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: %s (expected a directory holding %s.gz, %s.gz, %s.gz and %s.gz%s)", dir,
                  why, stems[0], stems[1], stems[2], stems[3],
                  strcmp(dir, GB_FASHION_MNIST_DIR) == 0
                      ? "; on Debian: apt-get install dataset-fashion-mnist"
                      : "");
        return false;
    }
    gb_mnist m = {0};
    if (!load_split(dir, stems[0], stems[1], num_classes, &m.train_images, &m.train_labels) ||
        !load_split(dir, stems[2], stems[3], num_classes, &m.test_images, &m.test_labels))
        return false;
    *out = m;
    return true;
}

/* ---- images as float --------------------------------------------------------------- */

gb_tensor *gb_images_to_float(gb_tensor *images, gb_image_layout layout) {
    if (!images) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_images_to_float: images is NULL");
        return NULL;
    }
    char s[128];
    if (images->dtype != GB_U8 || images->rank != 3 || !images->data) {
        gb__error(images->dtype != GB_U8 ? GB_ERR_DTYPE : GB_ERR_SHAPE, NULL,
                  "gb_images_to_float: expected concrete uint8 images [N,H,W], got %s %s%s",
                  gb_dtype_name(images->dtype),
                  gb__shape_fmt(images->rank, images->shape, s, sizeof s),
                  images->data ? "" : " (symbolic)");
        return NULL;
    }
    const int64_t *d = images->shape;
    int64_t shape[4] = {d[0], d[1], d[2], 1};
    int rank = 3;
    if (layout == GB_IMAGES_FLAT) {
        shape[1] = d[1] * d[2];
        rank = 2;
    } else if (layout == GB_IMAGES_NHWC) {
        rank = 4;
    } else if (layout != GB_IMAGES_NHW) {
        gb__error(GB_ERR_VALUE, NULL, "gb_images_to_float: unknown layout %d", (int)layout);
        return NULL;
    }
    /* A heap buffer, so a dataset made from the result shares it. */
    gb_buffer *b = gb__buffer_new_heap((size_t)images->size * sizeof(float));
    if (!b) return NULL;
    const uint8_t *src = images->data;
    float *dst = b->data;
    for (int64_t i = 0; i < images->size; i++) dst[i] = (float)src[i] / 255.0f;  /* as x / 255 in TF */
    return gb__heap_tensor(b, true, GB_F32, rank, shape);
}
