/* gb_data.h — tf.data-style input pipelines, and the IDX (MNIST) and CSV
 * readers.
 *
 * A dataset is a sequence of elements; an element is a tuple of tensors
 * (image, label). Datasets are built from tensors and transformed
 * (shuffle, batch, repeat, map, take, skip, prefetch); an iterator walks
 * one epoch. Usage, with Fashion-MNIST:
 *
 *     gb_mnist m;
 *     if (!gb_mnist_load(GB_FASHION_MNIST_DIR, GB_MNIST_CLASSES, &m)) {
 *         puts(gb_error_string());
 *         return 1;
 *     }
 *     gb_tensor *x = gb_images_to_float(m.train_images, GB_IMAGES_FLAT);  // [60000,784] in [0,1]
 *     gb_dataset *ds = gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, m.train_labels});
 *     ds = gb_dataset_shuffle(ds, 10000, 42);     // each call takes over its input
 *     ds = gb_dataset_batch(ds, 128, false);
 *     ds = gb_dataset_prefetch(ds, 2);            // a background thread stays 2 batches ahead
 *     for (int epoch = 0; epoch < 5; epoch++) {
 *         gb_iterator *it = gb_iterator_new(ds);  // reshuffles: a new order each epoch
 *         gb_tensor *b[2];                        // b[0]: float32 [128,784], b[1]: int32 [128]
 *         for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin()) {
 *             // one training step on b[0], b[1]: its tensors die with the step's scope
 *         }
 *         gb_scope_end();
 *         gb_iterator_free(it);
 *     }
 *     gb_dataset_free(ds);
 *     if (!gb_ok()) puts(gb_error_string());
 *
 * Semantics follow tf.data:
 * - from_tensor_slices slices along the first dimension; from_tensors
 *   makes one element of the whole tensors. Their data is shared when a
 *   tensor is backed by a heap buffer (IDX files, variables, float
 *   images) and copied otherwise, so a dataset outlives the scope of its
 *   tensors. from_generator calls a C function for each element.
 * - shuffle(buffer, seed) keeps a buffer of `buffer` elements and draws
 *   each output uniformly from it. Each new iteration (a new iterator, or
 *   the next round of a later repeat) uses the next order of a sequence
 *   derived from the seed: epochs differ, runs repeat exactly.
 * - batch(n, drop_remainder) stacks n elements along a new first
 *   dimension; the last, smaller batch is kept unless drop_remainder.
 * - repeat(count) restarts its input count times (-1: forever).
 * - prefetch(n) runs the pipeline below it on a background thread, up to
 *   n elements ahead; freeing the iterator stops the thread cleanly.
 * - map runs a C function on each element (on the prefetch thread when a
 *   prefetch is downstream), in a memory scope of its own.
 * - take(n) / skip(n): the first n elements / all but them.
 * - cache(path) runs its input on the first full pass only (in memory or
 *   in a file), replaying it after.
 * - Errors inside the pipeline (a map function's, batch's shape check)
 *   end the epoch with that error, with or without prefetch.
 *
 * Ownership: each transformation takes over the dataset it is given (the
 * result owns it), so a chain needs one gb_dataset_free at the end;
 * gb_dataset_ref shares a dataset between two chains. A NULL input gives
 * a NULL result and keeps the first error, as ops do.
 *
 * Iterating: gb_iterator_next writes one tensor per component into out
 * and returns true, or returns false at the end of the epoch or after an
 * error (check gb_ok()). The tensors belong to the current scope: call it
 * inside a per-step scope as above. Batches are views of buffers that
 * the pipeline recycles when the step's scope ends (no copy, no
 * allocation in the steady state); gb_keep one to hold it longer.
 * An iterator is used from one thread. gb_iterator_get_stats tells how
 * long the consumer waited for data (is training input-bound?).
 */
#ifndef GB_DATA_H
#define GB_DATA_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Components per element, at most. */
#define GB_DATA_MAX_COMPONENTS 8
/* Cardinalities, as tf.data.INFINITE_CARDINALITY / UNKNOWN_CARDINALITY. */
#define GB_DATA_INFINITE (-1)
#define GB_DATA_UNKNOWN (-2)
/* prefetch buffer size chosen by the library (tf.data.AUTOTUNE). */
#define GB_DATA_AUTOTUNE (-1)

typedef struct gb_dataset gb_dataset;
typedef struct gb_iterator gb_iterator;

/* ---- sources ---------------------------------------------------------------------- */

/* Element i is (t[0][i], ..., t[n-1][i]); all t share their first dim. */
gb_dataset *gb_dataset_from_tensor_slices(int n, gb_tensor *const *t);
/* A single element (t[0], ..., t[n-1]). */
gb_dataset *gb_dataset_from_tensors(int n, gb_tensor *const *t);
/* Element `index` (0, 1, ... in each iteration): write nout tensors into
 * out and return true, or return false at the end (or after an error,
 * which then stops the iteration). Runs in a scope of its own, like map. */
typedef bool (*gb_generator_fn)(void *ctx, int64_t index, gb_tensor **out);
gb_dataset *gb_dataset_from_generator(gb_generator_fn fn, void *ctx, int nout);

/* keras.utils.Sequence: an object that makes batch i of len() batches.
 * get_item writes ncomponents tensors (the batch: inputs, targets,
 * optionally sample weights, as fit takes them) and returns true, or
 * false after an error; it runs in a scope of its own. on_epoch_end
 * (optional) runs after each full pass. */
typedef struct gb_sequence {
    int64_t (*len)(void *user);
    bool (*get_item)(void *user, int64_t index, gb_tensor **out);
    void (*on_epoch_end)(void *user);
    void *user;
    int ncomponents;
} gb_sequence;
/* The sequence as a dataset of batches, each pass in order or (shuffle)
 * in the pass's seeded order. workers > 1: that many threads make batches
 * in parallel (get_item must then be thread-safe), handed out in order;
 * 0 or 1: made on the consumer's thread. */
gb_dataset *gb_dataset_from_sequence(const gb_sequence *seq, bool shuffle, uint64_t seed,
                                     int workers);
/* ---- CSV files (tf.data.experimental.CsvDataset) ------------------------------------------ */

/* A column to read: by name (the file needs a header) or, name NULL, by
 * 0-based index; parsed as dtype (GB_F32, the zero value, GB_F64, GB_I32
 * or GB_I64). An empty field takes default_value (text parsed as dtype
 * when the dataset is made); with none it is an error. */
typedef struct gb_csv_column {
    const char *name;
    int index;
    gb_dtype dtype;
    const char *default_value;
} gb_csv_column;

typedef struct gb_csv_options {
    bool header;                   /* the first line names the columns (not an element) */
    char delimiter;                /* 0: ',' */
    const gb_csv_column *columns;  /* the columns of an element, in order */
    int ncolumns;                  /* 0: every column, float32, no defaults */
} gb_csv_options;

/* A dataset of the file's records: element i is record i's selected
 * fields, one scalar component per column (at most
 * GB_DATA_MAX_COMPONENTS), so it batches, shuffles and maps as slices do.
 * The file is read and checked when the dataset is made: fields may be
 * quoted ("a ""b"", c"), lines end in \n or \r\n, blank lines are
 * skipped, spaces around a number are ignored. Every record must have as
 * many fields as the first (or the header). A bad file is a GB_ERR_IO
 * error "<file>:<line>: column <n> ('<name>'): <what is wrong>" (lines and
 * columns counted from 1); options that cannot work are GB_ERR_VALUE or
 * GB_ERR_DTYPE. */
gb_dataset *gb_dataset_from_csv(const char *path, const gb_csv_options *options);
/* The same from `size` bytes in memory; `name` stands for the file in
 * errors (NULL: "CSV data"). */
gb_dataset *gb_dataset_from_csv_data(const void *data, size_t size, const char *name,
                                     const gb_csv_options *options);

/* Text files as strings (tf.data.TextLineDataset): every file matching the
 * glob pattern (braces too: dir/{a,b}), in sorted order, read when the
 * dataset is made. Each line
 * is an element (its \n or \r\n dropped), or, with a record separator,
 * each run of lines between lines equal to it, joined by \n (Debian's
 * fortune files: records between "%" lines). with_file_index adds the
 * matched file's index (int64 scalar) as a second component. No match is
 * a GB_ERR_IO error naming the pattern. String elements batch, shuffle,
 * take, prefetch and map (to numbers) as any; they are valid while the
 * dataset lives. */
typedef struct gb_text_options {
    const char *record_separator;   /* NULL: one element per line */
    bool with_file_index;
} gb_text_options;
gb_dataset *gb_dataset_from_text_files(const char *pattern, const gb_text_options *options);

/* ---- transformations (each takes over `in`) ---------------------------------------- */

/* A new seed-derived order in each iteration (reshuffle_each_iteration). */
gb_dataset *gb_dataset_shuffle(gb_dataset *in, int64_t buffer_size, uint64_t seed);
gb_dataset *gb_dataset_batch(gb_dataset *in, int64_t batch_size, bool drop_remainder);
gb_dataset *gb_dataset_repeat(gb_dataset *in, int64_t count);   /* -1: forever */
gb_dataset *gb_dataset_take(gb_dataset *in, int64_t count);     /* -1: all */
gb_dataset *gb_dataset_skip(gb_dataset *in, int64_t count);     /* -1: all */
/* Elements index, index + num_shards, index + 2*num_shards, ...: this
 * process's share in data-parallel training (after a shuffle with the
 * same seed everywhere, before batch; gb_dist.h). */
gb_dataset *gb_dataset_shard(gb_dataset *in, int64_t num_shards, int64_t index);
/* n >= 1 elements ahead, or GB_DATA_AUTOTUNE; 0 returns `in` unchanged. */
gb_dataset *gb_dataset_prefetch(gb_dataset *in, int n);

/* Keeps the elements of the first full pass and replays them after, the
 * input untouched (tf.data's cache). path NULL or "": in memory; else in
 * that file, written beside it and renamed into place only when the pass
 * completes, then read by later passes and later processes (delete it
 * when the input changes). A pass that stops early caches nothing (with
 * a warning); a damaged cache file is a GB_ERR_IO error naming it. */
gb_dataset *gb_dataset_cache(gb_dataset *in, const char *path);

/* Computes `nout` output tensors from the `nin` tensors of an element.
 * Return false (or a NULL output) to fail; the error recorded by the ops
 * it called stops the iteration. Runs inside a scope that ends after the
 * outputs are copied, so it allocates freely. */
typedef bool (*gb_map_fn)(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out);
gb_dataset *gb_dataset_map(gb_dataset *in, gb_map_fn fn, void *ctx, int nout);

/* ---- datasets ------------------------------------------------------------------------- */

/* Another owner of ds (returns ds); each owner calls gb_dataset_free. */
gb_dataset *gb_dataset_ref(gb_dataset *ds);
void gb_dataset_free(gb_dataset *ds);
int gb_dataset_num_components(const gb_dataset *ds);
/* Elements per epoch, GB_DATA_INFINITE or GB_DATA_UNKNOWN. */
int64_t gb_dataset_cardinality(const gb_dataset *ds);

/* ---- iterators ------------------------------------------------------------------------- */

/* One pass over ds (which it keeps alive); NULL after an error. */
gb_iterator *gb_iterator_new(gb_dataset *ds);
/* Writes gb_dataset_num_components(ds) tensors into out (current scope);
 * false (out all NULL) at the end of the epoch or after an error, and
 * from then on. */
bool gb_iterator_next(gb_iterator *it, gb_tensor **out);
/* Stops its threads and frees it; tensors already handed out stay valid. */
void gb_iterator_free(gb_iterator *it);

typedef struct gb_iterator_stats {
    int64_t elements;           /* elements handed out */
    int64_t buffers_allocated;  /* pipeline buffers ever allocated: flat once warm */
    int64_t bytes_allocated;
    int64_t buffers_in_use;     /* held by the consumer's live tensors */
    double next_ms;             /* total time inside gb_iterator_next: high = input-bound */
} gb_iterator_stats;
bool gb_iterator_get_stats(const gb_iterator *it, gb_iterator_stats *out);

/* ---- IDX files (the MNIST format) ----------------------------------------------------------- */

/* Reads an IDX file, gzip-compressed or not: uint8 -> GB_U8, int8/int16/
 * int32 -> GB_I32, float -> GB_F32, double -> GB_F64, shape from the
 * header. Checks the magic number, type code, dims and data size; errors
 * (GB_ERR_IO) name the file and what is wrong with it. Only regular files
 * are read: a FIFO or a device is refused at once, never waited on. */
gb_tensor *gb_idx_read(const char *path);
/* The same from `size` bytes in memory (an IDX file's contents, gzip-
 * compressed or not), copied into the result; `name` stands for the file
 * in error messages (NULL: "IDX data"). */
gb_tensor *gb_idx_decode(const void *data, size_t size, const char *name);

/* ---- .npy files (NumPy) ---------------------------------------------------------------------- */

/* Reads a .npy file (format 1 to 3; float32/64, int32/64, uint8, bool,
 * and NumPy's fixed-width strings as string tensors: bytes 'S' as they
 * are, unicode 'U' as UTF-8, trailing NULs dropped as NumPy does; C
 * order). Errors (GB_ERR_IO) name the file and what is wrong: magic,
 * version, a dtype glassbox does not hold, Fortran order, a damaged
 * header, a data size that does not match the shape. */
gb_tensor *gb_npy_read(const char *path);
/* The same from bytes in memory; name stands for the file in errors. */
gb_tensor *gb_npy_decode(const void *data, size_t size, const char *name);
/* Writes t as a version 1.0 .npy file NumPy reads with np.load; string
 * tensors as bytes 'S' of the longest element's width. */
bool gb_npy_write(const char *path, gb_tensor *t);

#define GB_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/* Classes of MNIST and Fashion-MNIST: labels 0 to 9. */
#define GB_MNIST_CLASSES 10

/* MNIST and Fashion-MNIST: images uint8 [N,28,28], labels int32 [N]. */
typedef struct gb_mnist {
    gb_tensor *train_images, *train_labels;
    gb_tensor *test_images, *test_labels;
} gb_mnist;

/* Loads train-images-idx3-ubyte, train-labels-idx1-ubyte,
 * t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each .gz or not) from
 * dir into the current scope. Every label must be a class, 0 to
 * num_classes - 1 (1 to 256; GB_MNIST_CLASSES for (Fashion-)MNIST), so it
 * can index a table of class names or a one-hot row. false after an
 * error: a missing directory or file, a bad file, label and image counts
 * that differ, or a label out of range (naming the file, the record and
 * the value). */
bool gb_mnist_load(const char *dir, int num_classes, gb_mnist *out);

typedef enum gb_image_layout {
    GB_IMAGES_NHW,    /* [N,H,W] */
    GB_IMAGES_FLAT,   /* [N,H*W]: for dense layers */
    GB_IMAGES_NHWC,   /* [N,H,W,1]: for convolutions */
} gb_image_layout;

/* uint8 images [N,H,W] as float32 in [0,1] (pixel / 255) in `layout`. */
gb_tensor *gb_images_to_float(gb_tensor *images, gb_image_layout layout);

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_dataset_from_tensor_slices(...) GB_AT(gb_dataset_from_tensor_slices, __VA_ARGS__)
#define gb_dataset_from_tensors(...) GB_AT(gb_dataset_from_tensors, __VA_ARGS__)
#define gb_dataset_from_generator(...) GB_AT(gb_dataset_from_generator, __VA_ARGS__)
#define gb_dataset_from_sequence(...) GB_AT(gb_dataset_from_sequence, __VA_ARGS__)
#define gb_dataset_from_csv(...) GB_AT(gb_dataset_from_csv, __VA_ARGS__)
#define gb_dataset_from_text_files(...) GB_AT(gb_dataset_from_text_files, __VA_ARGS__)
#define gb_dataset_from_csv_data(...) GB_AT(gb_dataset_from_csv_data, __VA_ARGS__)
#define gb_dataset_shuffle(...) GB_AT(gb_dataset_shuffle, __VA_ARGS__)
#define gb_dataset_batch(...) GB_AT(gb_dataset_batch, __VA_ARGS__)
#define gb_dataset_repeat(...) GB_AT(gb_dataset_repeat, __VA_ARGS__)
#define gb_dataset_take(...) GB_AT(gb_dataset_take, __VA_ARGS__)
#define gb_dataset_skip(...) GB_AT(gb_dataset_skip, __VA_ARGS__)
#define gb_dataset_shard(...) GB_AT(gb_dataset_shard, __VA_ARGS__)
#define gb_dataset_prefetch(...) GB_AT(gb_dataset_prefetch, __VA_ARGS__)
#define gb_dataset_map(...) GB_AT(gb_dataset_map, __VA_ARGS__)
#define gb_dataset_cache(...) GB_AT(gb_dataset_cache, __VA_ARGS__)
#define gb_iterator_new(...) GB_AT(gb_iterator_new, __VA_ARGS__)
#define gb_iterator_next(...) GB_AT(gb_iterator_next, __VA_ARGS__)
#define gb_idx_read(...) GB_AT(gb_idx_read, __VA_ARGS__)
#define gb_npy_read(...) GB_AT(gb_npy_read, __VA_ARGS__)
#define gb_npy_decode(...) GB_AT(gb_npy_decode, __VA_ARGS__)
#define gb_npy_write(...) GB_AT(gb_npy_write, __VA_ARGS__)
#define gb_idx_decode(...) GB_AT(gb_idx_decode, __VA_ARGS__)
#define gb_mnist_load(...) GB_AT(gb_mnist_load, __VA_ARGS__)
#define gb_images_to_float(...) GB_AT(gb_images_to_float, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
