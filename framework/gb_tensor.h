/* gb_tensor.h — creating, inspecting and reading tensors.
 *
 * Tensors are immutable values, row-major and contiguous, allocated in the
 * current memory scope. Shapes are passed as (rank, dims); GB_SHAPE(2, 3)
 * expands to both, so gb_zeros(GB_F32, GB_SHAPE(2, 3)) reads naturally.
 * Random tensors take explicit seeds and are reproducible bit for bit.
 */
#ifndef GB_TENSOR_H
#define GB_TENSOR_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expands to `rank, dims` for the creation functions below. */
#define GB_SHAPE(...) \
    (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}
/* A rank-0 shape. */
#define GB_SCALAR_SHAPE 0, (const int64_t *)0

/* ---- creation ------------------------------------------------------------ */

/* Copies `data` (gb_dtype_size(dt) * prod(dims) bytes). */
gb_tensor *gb_tensor_from(gb_dtype dt, const void *data, int rank, const int64_t *dims);
gb_tensor *gb_from_f32(const float *data, int rank, const int64_t *dims);
gb_tensor *gb_from_f64(const double *data, int rank, const int64_t *dims);
gb_tensor *gb_zeros(gb_dtype dt, int rank, const int64_t *dims);
gb_tensor *gb_ones(gb_dtype dt, int rank, const int64_t *dims);
gb_tensor *gb_fill(gb_dtype dt, int rank, const int64_t *dims, double value);
gb_tensor *gb_scalar(gb_dtype dt, double value);
gb_tensor *gb_zeros_like(gb_tensor *t);
gb_tensor *gb_ones_like(gb_tensor *t);
/* [start, start+step, ...) below `limit` (above it when step < 0). */
gb_tensor *gb_arange(gb_dtype dt, double start, double limit, double step);
/* `num` evenly spaced values from start to stop inclusive. */
gb_tensor *gb_linspace(gb_dtype dt, double start, double stop, int64_t num);

/* ---- strings (GB_STRING) ----------------------------------------------------
 * A string tensor owns copies of the bytes it is made from. */

/* From NUL-terminated C strings, prod(dims) of them. */
gb_tensor *gb_strings(const char *const *cstrs, int rank, const int64_t *dims);
/* From (pointer, length) pairs: any bytes, NUL included. */
gb_tensor *gb_strings_from(const gb_string *data, int rank, const int64_t *dims);
/* A scalar: tf.constant("a"). */
gb_tensor *gb_string_scalar(const char *s);
/* A scalar of len bytes (NUL allowed). */
gb_tensor *gb_string_bytes(const void *data, int64_t len);

/* ---- random (explicit seeds; same seed, same tensor) -------------------- */

gb_tensor *gb_random_uniform(gb_dtype dt, int rank, const int64_t *dims,
                             double minval, double maxval, uint64_t seed);
gb_tensor *gb_random_normal(gb_dtype dt, int rank, const int64_t *dims,
                            double mean, double stddev, uint64_t seed);
/* Normal values re-drawn until within two standard deviations, as TF. */
gb_tensor *gb_truncated_normal(gb_dtype dt, int rank, const int64_t *dims,
                               double mean, double stddev, uint64_t seed);

/* ---- inspection ------------------------------------------------------------ */

gb_dtype gb_tensor_dtype(const gb_tensor *t);
int gb_rank(const gb_tensor *t);
int64_t gb_dim(const gb_tensor *t, int64_t axis); /* negative axes count from the end */
const int64_t *gb_shape(const gb_tensor *t);
int64_t gb_size(const gb_tensor *t);            /* number of elements */
size_t gb_nbytes(const gb_tensor *t);
/* "[2,3]" into buf; returns buf. */
const char *gb_shape_str(const gb_tensor *t, char *buf, size_t n);
bool gb_same_shape(const gb_tensor *a, const gb_tensor *b);

/* ---- element access (tests, small reads) --------------------------------- */

/* Raw data; NULL for a symbolic (traced) tensor. Do not write through it
 * unless you created the tensor: tensors are values. */
const void *gb_data(const gb_tensor *t);
const float *gb_data_f32(const gb_tensor *t);   /* NULL unless float32 */
/* Element `flat_index` of any dtype, as a double. */
double gb_get(const gb_tensor *t, int64_t flat_index);
/* The single element of a size-1 tensor. */
double gb_item(const gb_tensor *t);
/* Copies all elements converted to double into out[gb_size(t)]. */
bool gb_to_f64(const gb_tensor *t, double *out);
/* Every element of a string tensor (NULL for any other dtype, or a
 * symbolic tensor); valid while the tensor is. */
const gb_string *gb_data_strings(const gb_tensor *t);
/* Element i of a string tensor; {NULL, -1} when t is no string tensor or
 * i is out of range. */
gb_string gb_get_string(const gb_tensor *t, int64_t flat_index);
/* The single element of a size-1 string tensor ({NULL, -1} otherwise). */
gb_string gb_item_string(const gb_tensor *t);
/* t as TensorFlow prints it, into buf (snprintf-like; returns buf):
 * "tf.Tensor(b'aa', shape=(), dtype=string)", "tf.Tensor([1 2], shape=(2,),
 * dtype=int32)"; a symbolic tensor while tracing as
 * 'Tensor("a:0", shape=(), dtype=string)'. */
const char *gb_tensor_repr(const gb_tensor *t, char *buf, size_t n);
/* Prints dtype, shape and (up to 64) values to stderr, now: plain C, so
 * inside a traced function it runs while tracing and shows the symbolic
 * tensor ("x: float32 [-1,784] (symbolic)"), as Python's print does under
 * tf.function. gb_print (gb_ops.h) is the op that prints at every run. */
void gb_describe(const char *label, const gb_tensor *t);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_tensor_from(...) GB_AT(gb_tensor_from, __VA_ARGS__)
#define gb_from_f32(...) GB_AT(gb_from_f32, __VA_ARGS__)
#define gb_from_f64(...) GB_AT(gb_from_f64, __VA_ARGS__)
#define gb_zeros(...) GB_AT(gb_zeros, __VA_ARGS__)
#define gb_ones(...) GB_AT(gb_ones, __VA_ARGS__)
#define gb_fill(...) GB_AT(gb_fill, __VA_ARGS__)
#define gb_scalar(...) GB_AT(gb_scalar, __VA_ARGS__)
#define gb_zeros_like(...) GB_AT(gb_zeros_like, __VA_ARGS__)
#define gb_ones_like(...) GB_AT(gb_ones_like, __VA_ARGS__)
#define gb_arange(...) GB_AT(gb_arange, __VA_ARGS__)
#define gb_linspace(...) GB_AT(gb_linspace, __VA_ARGS__)
#define gb_strings(...) GB_AT(gb_strings, __VA_ARGS__)
#define gb_strings_from(...) GB_AT(gb_strings_from, __VA_ARGS__)
#define gb_string_scalar(...) GB_AT(gb_string_scalar, __VA_ARGS__)
#define gb_string_bytes(...) GB_AT(gb_string_bytes, __VA_ARGS__)
#define gb_tensor_repr(...) GB_AT(gb_tensor_repr, __VA_ARGS__)
#define gb_random_uniform(...) GB_AT(gb_random_uniform, __VA_ARGS__)
#define gb_random_normal(...) GB_AT(gb_random_normal, __VA_ARGS__)
#define gb_truncated_normal(...) GB_AT(gb_truncated_normal, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
