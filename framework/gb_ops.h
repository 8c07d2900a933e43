/* gb_ops.h — the ops users call.
 *
 * Each function runs one op (or a short composition of ops) through the
 * dispatcher: shape/dtype checks, then the kernel (or a graph node while
 * tracing), then tapes and hooks. A NULL input returns NULL and keeps the
 * first error. Binary ops broadcast as NumPy does; dtypes must match (as
 * in TensorFlow: no silent promotion; use gb_cast).
 *
 * One array convention: every list of integers an op takes — axes,
 * permutations, begin/size, paddings, split sizes, strides, dilations,
 * window sizes — is an int64_t array followed by its element count, and a
 * single axis is an int64_t. GB_AXES(0, 1) and GB_LIST(2, 2) expand to
 * both (`array, count`), so calls read as in Python:
 *     gb_reduce_sum(x, GB_AXES(0, 1), false)          tf.reduce_sum(x, [0, 1])
 *     gb_conv2d(x, f, GB_LIST(2, 2), GB_PADDING_SAME, NULL, 0)
 * Shapes are the one exception, passed as (rank, dims) like everywhere in
 * gb_tensor.h; GB_SHAPE(2, 3) expands to both. Axes may be negative
 * (counting from the end).
 */
#ifndef GB_OPS_H
#define GB_OPS_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expands to `(const int64_t[]){...}, count` for the list parameters. */
#define GB_LIST(...)                                                                               \
    (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
/* The same, named for axes and permutations. */
#define GB_AXES(...) GB_LIST(__VA_ARGS__)
/* No axes: reductions reduce over every axis. */
#define GB_ALL_AXES (const int64_t *)0, 0

typedef enum gb_padding { GB_PADDING_VALID = 0, GB_PADDING_SAME = 1 } gb_padding;

/* ---- elementwise unary ----------------------------------------------------- */
gb_tensor *gb_neg(gb_tensor *x);
gb_tensor *gb_abs(gb_tensor *x);
gb_tensor *gb_sign(gb_tensor *x);
gb_tensor *gb_exp(gb_tensor *x);
gb_tensor *gb_log(gb_tensor *x);
gb_tensor *gb_log1p(gb_tensor *x);
gb_tensor *gb_sqrt(gb_tensor *x);
gb_tensor *gb_rsqrt(gb_tensor *x);
gb_tensor *gb_square(gb_tensor *x);
gb_tensor *gb_reciprocal(gb_tensor *x);
gb_tensor *gb_sin(gb_tensor *x);
gb_tensor *gb_cos(gb_tensor *x);
gb_tensor *gb_tanh(gb_tensor *x);
gb_tensor *gb_sigmoid(gb_tensor *x);
gb_tensor *gb_relu(gb_tensor *x);
gb_tensor *gb_leaky_relu(gb_tensor *x, double alpha);    /* TF default alpha 0.2 */
gb_tensor *gb_elu(gb_tensor *x);
gb_tensor *gb_gelu(gb_tensor *x, bool approximate);      /* exact: erf; approximate: tanh */
gb_tensor *gb_softplus(gb_tensor *x);
gb_tensor *gb_cast(gb_tensor *x, gb_dtype dt);
gb_tensor *gb_copy(gb_tensor *x);                        /* Identity: a new tensor, same value */
/* The value of x, seen by tapes as a constant. */
gb_tensor *gb_stop_gradient(gb_tensor *x);

/* ---- elementwise binary (broadcasting) ------------------------------------ */
gb_tensor *gb_add(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_sub(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_mul(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_div(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_pow(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_maximum(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_minimum(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_equal(gb_tensor *a, gb_tensor *b);          /* -> bool */
gb_tensor *gb_not_equal(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_less(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_less_equal(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_greater(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_greater_equal(gb_tensor *a, gb_tensor *b);
/* cond ? a : b elementwise; cond is bool; all three broadcast. */
gb_tensor *gb_where(gb_tensor *cond, gb_tensor *a, gb_tensor *b);
/* x op s, the scalar taking x's dtype (as `x + 2.0` in TensorFlow). For an
 * integer or bool x, an s that dtype cannot hold exactly (2.5 for int32)
 * is a GB_ERR_DTYPE error rather than a silent truncation. */
gb_tensor *gb_add_scalar(gb_tensor *x, double s);
gb_tensor *gb_sub_scalar(gb_tensor *x, double s);
gb_tensor *gb_mul_scalar(gb_tensor *x, double s);
gb_tensor *gb_div_scalar(gb_tensor *x, double s);
gb_tensor *gb_pow_scalar(gb_tensor *x, double s);

/* ---- reductions ------------------------------------------------------------- */
/* Over axes[naxes] (naxes 0, GB_ALL_AXES: every axis); an axis out of
 * range or given twice is an error. keepdims leaves the reduced axes as 1. */
gb_tensor *gb_reduce_sum(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_reduce_mean(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_reduce_max(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_reduce_min(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_reduce_prod(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_reduce_logsumexp(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
/* The population variance, mean((x - mean(x))^2): it divides by N, not
 * N - 1, as tf.math.reduce_variance and NumPy's var (ddof=0). Float only. */
gb_tensor *gb_reduce_variance(gb_tensor *x, const int64_t *axes, int naxes, bool keepdims);
gb_tensor *gb_argmax(gb_tensor *x, int64_t axis); /* -> int64 */
gb_tensor *gb_argmin(gb_tensor *x, int64_t axis);

/* ---- shape and movement ------------------------------------------------------ */
/* A view sharing x's memory; one dim may be -1 (inferred). */
gb_tensor *gb_reshape(gb_tensor *x, int rank, const int64_t *dims);
/* Output axis k is input axis perm[k]; nperm must equal x's rank.
 * perm NULL (nperm 0) reverses the axes. */
gb_tensor *gb_transpose(gb_tensor *x, const int64_t *perm, int nperm);
gb_tensor *gb_broadcast_to(gb_tensor *x, int rank, const int64_t *dims);
/* Removes the given size-1 axes (naxes 0: all size-1 axes). */
gb_tensor *gb_squeeze(gb_tensor *x, const int64_t *axes, int naxes);
gb_tensor *gb_expand_dims(gb_tensor *x, int64_t axis);
/* One begin and one size per axis of x; size[i] == -1 takes everything
 * from begin[i] to the end. */
gb_tensor *gb_slice(gb_tensor *x, const int64_t *begin, int nbegin, const int64_t *size, int nsize);
gb_tensor *gb_concat(gb_tensor *const *xs, int n, int64_t axis);
gb_tensor *gb_stack(gb_tensor *const *xs, int n, int64_t axis);
/* tf.split(x, num, axis): `num` equal parts along axis, written to out[num]. */
bool gb_split(gb_tensor *x, int num, int64_t axis, gb_tensor **out);
/* tf.split(x, size_splits, axis): nsizes parts of the given sizes along
 * axis, written to out[nsizes]. One size may be -1: the rest of the axis.
 * The sizes must add up to the axis' length (TF's SplitV). */
bool gb_split_sizes(gb_tensor *x, const int64_t *sizes, int nsizes, int64_t axis, gb_tensor **out);
/* params gathered at integer indices along axis (TF's gather). */
gb_tensor *gb_gather(gb_tensor *params, gb_tensor *indices, int64_t axis);
/* indices (int) -> one-hot of `depth` along a new last axis. */
gb_tensor *gb_one_hot(gb_tensor *indices, int64_t depth, double on, double off, gb_dtype dt);
/* paddings[2*i], paddings[2*i+1]: before/after axis i (npaddings = 2 *
 * rank); the new elements hold value. */
gb_tensor *gb_pad(gb_tensor *x, const int64_t *paddings, int npaddings, double value);

/* ---- linear algebra ------------------------------------------------------------ */
/* tf.matmul: [..., M, K] x [..., K, N] -> [..., M, N]; batch dims broadcast.
 * As in TensorFlow both inputs need rank 2 or more: a vector is an error
 * (not silently promoted); use gb_matvec / gb_vecmat for those. */
gb_tensor *gb_matmul(gb_tensor *a, gb_tensor *b);
gb_tensor *gb_matmul_t(gb_tensor *a, gb_tensor *b, bool transpose_a, bool transpose_b);
/* tf.linalg.matvec (NumPy's matvec): matrix times vector,
 * [..., M, K] x [..., K] -> [..., M]; batch dims broadcast. */
gb_tensor *gb_matvec(gb_tensor *a, gb_tensor *x);
/* NumPy's vecmat (x @ b for a vector x): vector times matrix,
 * [..., K] x [..., K, N] -> [..., N]; batch dims broadcast. */
gb_tensor *gb_vecmat(gb_tensor *x, gb_tensor *b);

/* ---- convolution and pooling (NHWC) --------------------------------------------- */
/* Strides, dilations and window sizes are lists as TensorFlow takes them:
 * 1 element (the same for height and width), 2 ({h, w}) or 4 (NHWC,
 * {1, h, w, 1}); an empty list (NULL, 0) means the default.
 *
 * Padding, as TensorFlow computes it, for each spatial axis of size `in`
 * with window k, stride s and dilation d (effective window (k-1)*d + 1):
 *   VALID: no padding; out = floor((in - ((k-1)*d + 1)) / s) + 1.
 *   SAME:  out = ceil(in / s);
 *          total = max((out - 1)*s + (k-1)*d + 1 - in, 0);
 *          pad_before = floor(total / 2), pad_after = total - pad_before,
 *          so an odd total puts the extra row/column after: at the bottom
 *          and on the right. E.g. in 4, k 2, s 2 pads (0, 0); in 5, k 2,
 *          s 2 pads (0, 1); in 4, k 4, s 1 pads (1, 2).
 * Padded positions hold 0 for convolution; pooling ignores them (AvgPool
 * divides by the number of real elements in each window). */

/* x [N,H,W,C], filter [KH,KW,C,OC] -> [N,OH,OW,OC]; strides and dilations
 * default to 1. */
gb_tensor *gb_conv2d(gb_tensor *x, gb_tensor *filter, const int64_t *strides, int nstrides,
                     gb_padding padding, const int64_t *dilations, int ndilations);
/* x [N,H,W,C] -> [N,OH,OW,C]; ksize is required, strides default to ksize
 * (as Keras' pooling layers). */
gb_tensor *gb_max_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding);
gb_tensor *gb_avg_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding);

/* ---- softmax, losses, dropout -------------------------------------------------- */
gb_tensor *gb_softmax(gb_tensor *logits, int64_t axis);
gb_tensor *gb_log_softmax(gb_tensor *logits, int64_t axis);
/* Softmax over the last axis where mask (bool, broadcast to the logits)
 * is true; masked entries are exactly 0, and a row with nothing unmasked
 * is all 0 (not NaN, not uniform). A composition of ops: it traces and
 * differentiates as they do. */
gb_tensor *gb_masked_softmax(gb_tensor *logits, gb_tensor *mask);
/* Per-example loss [batch]: labels int32/int64 [batch], logits [batch, classes]. */
gb_tensor *gb_sparse_softmax_cross_entropy_with_logits(gb_tensor *labels, gb_tensor *logits);
/* Per-example loss [batch]: labels a distribution [batch, classes]. */
gb_tensor *gb_softmax_cross_entropy_with_logits(gb_tensor *labels, gb_tensor *logits);
/* Zeroes each element with probability `rate`, scales the rest by 1/(1-rate). */
gb_tensor *gb_dropout(gb_tensor *x, double rate, uint64_t seed);

/* ---- strings (as tf.strings; gb_add concatenates two string tensors,
 * gb_equal / gb_not_equal compare them byte for byte) ------------------------- */

/* Element by element, inputs of one shape or scalars, with `separator`
 * (at most 63 bytes) between them. */
gb_tensor *gb_strings_join(gb_tensor *const *inputs, int n, const char *separator);
/* int32 lengths in bytes, or in UTF-8 characters (an error names an element
 * that is not valid UTF-8). */
gb_tensor *gb_strings_length(gb_tensor *x, bool utf8_chars);
/* len bytes (or UTF-8 characters) from pos of every element; a negative
 * pos counts from the end; len is cut at the end; a pos past it is an error. */
gb_tensor *gb_substr(gb_tensor *x, int64_t pos, int64_t len, bool utf8_chars);
/* ASCII letters changed, other bytes kept. */
gb_tensor *gb_strings_lower(gb_tensor *x);
gb_tensor *gb_strings_upper(gb_tensor *x);
/* Splits each element of a rank-1 x: on `separator` (empty tokens kept),
 * or on runs of whitespace when it is "" (as Python's str.split);
 * maxsplit < 0 for no limit. Ragged, as RaggedTensor.from_row_splits:
 * *tokens holds every token in order, *row_splits (int64, size(x) + 1)
 * where each element's tokens start and end. */
bool gb_strings_split(gb_tensor *x, const char *separator, int64_t maxsplit, gb_tensor **tokens,
                      gb_tensor **row_splits);
/* The n-grams of ragged rows of tokens (as gb_strings_split gives them):
 * for each row its min_width-grams, then the next width's, up to
 * max_width, each joined by separator (tf.strings.ngrams with widths
 * min..max; a row shorter than a width has none of it). Ragged too:
 * *ngrams and *ngram_splits (int64, as many as row_splits). */
bool gb_strings_ngrams(gb_tensor *tokens, gb_tensor *row_splits, int64_t min_width, int64_t max_width,
                       const char *separator, gb_tensor **ngrams, gb_tensor **ngram_splits);
/* int64 in [0, num_buckets): a stable 64-bit hash (FNV-1a) modulo. */
gb_tensor *gb_strings_to_hash_bucket(gb_tensor *x, int64_t num_buckets);
/* Parses every element as out_type (float32/64, int32/64); an element
 * that is not a whole number of that type is an error naming it. */
gb_tensor *gb_string_to_number(gb_tensor *x, gb_dtype out_type);
/* Numbers as strings: floats "%f" with `precision` digits (-1: 6), as
 * tf.strings.as_string; integers in decimal; bools "true" / "false". */
gb_tensor *gb_as_string(gb_tensor *x, int precision);
/* Whether each element matches the PCRE2 pattern as a whole (bool). */
gb_tensor *gb_regex_full_match(gb_tensor *x, const char *pattern);
/* Each element with the first (or, replace_global, every) match of the
 * PCRE2 pattern replaced by rewrite ($1, ${name}: groups; $$: a dollar). */
gb_tensor *gb_regex_replace(gb_tensor *x, const char *pattern, const char *rewrite,
                            bool replace_global);

/* Ragged rows (values [n] and int64 row_splits [rows + 1], as
 * gb_strings_split gives them) padded with 0 or cut to `length`: [rows, length]. */
gb_tensor *gb_ragged_to_tensor(gb_tensor *values, gb_tensor *row_splits, int64_t length);
/* How often each value in [0, size) occurs in each row: float32 [rows,
 * size]; binary_output: 1 where it occurs at all. */
gb_tensor *gb_ragged_bincount(gb_tensor *values, gb_tensor *row_splits, int64_t size,
                              bool binary_output);

/* What a decode or encode does with invalid UTF-8 or a value that is no
 * code point: an error naming it, U+FFFD in its place, or nothing. */
typedef enum gb_unicode_errors { GB_UNICODE_STRICT, GB_UNICODE_REPLACE, GB_UNICODE_IGNORE } gb_unicode_errors;
/* Each string of a rank-1 x as int32 code points, ragged (as
 * gb_strings_split): *code_points [n] and *row_splits [size(x) + 1]. */
bool gb_unicode_decode(gb_tensor *x, gb_unicode_errors errors, gb_tensor **code_points,
                       gb_tensor **row_splits);
/* The reverse: a string [rows] of UTF-8 per row. */
gb_tensor *gb_unicode_encode(gb_tensor *code_points, gb_tensor *row_splits, gb_unicode_errors errors);
/* Each string's bytes as numbers of out_type (tf.io.decode_raw): shape
 * x.shape + [bytes / size]; every string as long as the first. */
gb_tensor *gb_decode_raw(gb_tensor *x, gb_dtype out_type, bool little_endian);

/* Each string of records a CSV record (tf.io.decode_csv) of ncols fields
 * split on delim; defaults[k], a scalar, gives column k's dtype (float32/64,
 * int32/64, string) and the value of an empty field (a [0] tensor: the
 * field is required). Quoted fields ("a, ""b""") are unquoted. Writes the
 * columns (records' shape each); returns ncols, or -1 after an error naming
 * the record and column. */
int gb_decode_csv(gb_tensor *records, gb_tensor *const *defaults, int ncols, char delim,
                  gb_tensor **columns);

/* ---- lookup tables: strings to int64 ids (tf.lookup.StaticHashTable) ---- */

typedef struct gb_lookup_table gb_lookup_table;
/* From rank-1 string keys and int64 values of the same shape (copied); a
 * key not in the table finds default_value. A repeated key is an error. */
gb_lookup_table *gb_static_hash_table_new(gb_tensor *keys, gb_tensor *values,
                                          int64_t default_value);
/* From a vocabulary file: one token per line (a trailing \r dropped), its
 * id the line's number from 0; an empty line or a repeated token is an
 * error naming the line or token. */
gb_lookup_table *gb_lookup_table_from_file(const char *path, int64_t default_value);
int64_t gb_lookup_table_size(const gb_lookup_table *t);
void gb_lookup_table_free(gb_lookup_table *t);
/* The id of every key (an op: traced, the table is named by its id). */
gb_tensor *gb_lookup_table_find(gb_lookup_table *t, gb_tensor *keys);

/* ---- printing ------------------------------------------------------------------ */
/* tf.print: prints `message`, then x's values (x may be NULL), at every
 * execution — eagerly, and at each run of a traced function, where plain
 * printf runs only while tracing. Messages longer than 63 bytes are cut. */
bool gb_print(const char *message, gb_tensor *x);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_neg(...) GB_AT(gb_neg, __VA_ARGS__)
#define gb_abs(...) GB_AT(gb_abs, __VA_ARGS__)
#define gb_sign(...) GB_AT(gb_sign, __VA_ARGS__)
#define gb_exp(...) GB_AT(gb_exp, __VA_ARGS__)
#define gb_log(...) GB_AT(gb_log, __VA_ARGS__)
#define gb_log1p(...) GB_AT(gb_log1p, __VA_ARGS__)
#define gb_sqrt(...) GB_AT(gb_sqrt, __VA_ARGS__)
#define gb_rsqrt(...) GB_AT(gb_rsqrt, __VA_ARGS__)
#define gb_square(...) GB_AT(gb_square, __VA_ARGS__)
#define gb_reciprocal(...) GB_AT(gb_reciprocal, __VA_ARGS__)
#define gb_sin(...) GB_AT(gb_sin, __VA_ARGS__)
#define gb_cos(...) GB_AT(gb_cos, __VA_ARGS__)
#define gb_tanh(...) GB_AT(gb_tanh, __VA_ARGS__)
#define gb_sigmoid(...) GB_AT(gb_sigmoid, __VA_ARGS__)
#define gb_relu(...) GB_AT(gb_relu, __VA_ARGS__)
#define gb_leaky_relu(...) GB_AT(gb_leaky_relu, __VA_ARGS__)
#define gb_elu(...) GB_AT(gb_elu, __VA_ARGS__)
#define gb_gelu(...) GB_AT(gb_gelu, __VA_ARGS__)
#define gb_softplus(...) GB_AT(gb_softplus, __VA_ARGS__)
#define gb_cast(...) GB_AT(gb_cast, __VA_ARGS__)
#define gb_copy(...) GB_AT(gb_copy, __VA_ARGS__)
#define gb_stop_gradient(...) GB_AT(gb_stop_gradient, __VA_ARGS__)
#define gb_add(...) GB_AT(gb_add, __VA_ARGS__)
#define gb_sub(...) GB_AT(gb_sub, __VA_ARGS__)
#define gb_mul(...) GB_AT(gb_mul, __VA_ARGS__)
#define gb_div(...) GB_AT(gb_div, __VA_ARGS__)
#define gb_pow(...) GB_AT(gb_pow, __VA_ARGS__)
#define gb_maximum(...) GB_AT(gb_maximum, __VA_ARGS__)
#define gb_minimum(...) GB_AT(gb_minimum, __VA_ARGS__)
#define gb_equal(...) GB_AT(gb_equal, __VA_ARGS__)
#define gb_not_equal(...) GB_AT(gb_not_equal, __VA_ARGS__)
#define gb_less(...) GB_AT(gb_less, __VA_ARGS__)
#define gb_less_equal(...) GB_AT(gb_less_equal, __VA_ARGS__)
#define gb_greater(...) GB_AT(gb_greater, __VA_ARGS__)
#define gb_greater_equal(...) GB_AT(gb_greater_equal, __VA_ARGS__)
#define gb_where(...) GB_AT(gb_where, __VA_ARGS__)
#define gb_strings_join(...) GB_AT(gb_strings_join, __VA_ARGS__)
#define gb_strings_length(...) GB_AT(gb_strings_length, __VA_ARGS__)
#define gb_substr(...) GB_AT(gb_substr, __VA_ARGS__)
#define gb_strings_lower(...) GB_AT(gb_strings_lower, __VA_ARGS__)
#define gb_strings_upper(...) GB_AT(gb_strings_upper, __VA_ARGS__)
#define gb_strings_split(...) GB_AT(gb_strings_split, __VA_ARGS__)
#define gb_strings_ngrams(...) GB_AT(gb_strings_ngrams, __VA_ARGS__)
#define gb_strings_to_hash_bucket(...) GB_AT(gb_strings_to_hash_bucket, __VA_ARGS__)
#define gb_string_to_number(...) GB_AT(gb_string_to_number, __VA_ARGS__)
#define gb_as_string(...) GB_AT(gb_as_string, __VA_ARGS__)
#define gb_regex_full_match(...) GB_AT(gb_regex_full_match, __VA_ARGS__)
#define gb_regex_replace(...) GB_AT(gb_regex_replace, __VA_ARGS__)
#define gb_ragged_to_tensor(...) GB_AT(gb_ragged_to_tensor, __VA_ARGS__)
#define gb_ragged_bincount(...) GB_AT(gb_ragged_bincount, __VA_ARGS__)
#define gb_unicode_decode(...) GB_AT(gb_unicode_decode, __VA_ARGS__)
#define gb_unicode_encode(...) GB_AT(gb_unicode_encode, __VA_ARGS__)
#define gb_decode_raw(...) GB_AT(gb_decode_raw, __VA_ARGS__)
#define gb_decode_csv(...) GB_AT(gb_decode_csv, __VA_ARGS__)
#define gb_static_hash_table_new(...) GB_AT(gb_static_hash_table_new, __VA_ARGS__)
#define gb_lookup_table_from_file(...) GB_AT(gb_lookup_table_from_file, __VA_ARGS__)
#define gb_lookup_table_find(...) GB_AT(gb_lookup_table_find, __VA_ARGS__)
#define gb_add_scalar(...) GB_AT(gb_add_scalar, __VA_ARGS__)
#define gb_sub_scalar(...) GB_AT(gb_sub_scalar, __VA_ARGS__)
#define gb_mul_scalar(...) GB_AT(gb_mul_scalar, __VA_ARGS__)
#define gb_div_scalar(...) GB_AT(gb_div_scalar, __VA_ARGS__)
#define gb_pow_scalar(...) GB_AT(gb_pow_scalar, __VA_ARGS__)
#define gb_reduce_sum(...) GB_AT(gb_reduce_sum, __VA_ARGS__)
#define gb_reduce_mean(...) GB_AT(gb_reduce_mean, __VA_ARGS__)
#define gb_reduce_max(...) GB_AT(gb_reduce_max, __VA_ARGS__)
#define gb_reduce_min(...) GB_AT(gb_reduce_min, __VA_ARGS__)
#define gb_reduce_prod(...) GB_AT(gb_reduce_prod, __VA_ARGS__)
#define gb_reduce_logsumexp(...) GB_AT(gb_reduce_logsumexp, __VA_ARGS__)
#define gb_reduce_variance(...) GB_AT(gb_reduce_variance, __VA_ARGS__)
#define gb_argmax(...) GB_AT(gb_argmax, __VA_ARGS__)
#define gb_argmin(...) GB_AT(gb_argmin, __VA_ARGS__)
#define gb_reshape(...) GB_AT(gb_reshape, __VA_ARGS__)
#define gb_transpose(...) GB_AT(gb_transpose, __VA_ARGS__)
#define gb_broadcast_to(...) GB_AT(gb_broadcast_to, __VA_ARGS__)
#define gb_squeeze(...) GB_AT(gb_squeeze, __VA_ARGS__)
#define gb_expand_dims(...) GB_AT(gb_expand_dims, __VA_ARGS__)
#define gb_slice(...) GB_AT(gb_slice, __VA_ARGS__)
#define gb_concat(...) GB_AT(gb_concat, __VA_ARGS__)
#define gb_stack(...) GB_AT(gb_stack, __VA_ARGS__)
#define gb_split(...) GB_AT(gb_split, __VA_ARGS__)
#define gb_split_sizes(...) GB_AT(gb_split_sizes, __VA_ARGS__)
#define gb_gather(...) GB_AT(gb_gather, __VA_ARGS__)
#define gb_one_hot(...) GB_AT(gb_one_hot, __VA_ARGS__)
#define gb_pad(...) GB_AT(gb_pad, __VA_ARGS__)
#define gb_matmul(...) GB_AT(gb_matmul, __VA_ARGS__)
#define gb_matmul_t(...) GB_AT(gb_matmul_t, __VA_ARGS__)
#define gb_matvec(...) GB_AT(gb_matvec, __VA_ARGS__)
#define gb_vecmat(...) GB_AT(gb_vecmat, __VA_ARGS__)
#define gb_conv2d(...) GB_AT(gb_conv2d, __VA_ARGS__)
#define gb_max_pool2d(...) GB_AT(gb_max_pool2d, __VA_ARGS__)
#define gb_avg_pool2d(...) GB_AT(gb_avg_pool2d, __VA_ARGS__)
#define gb_softmax(...) GB_AT(gb_softmax, __VA_ARGS__)
#define gb_log_softmax(...) GB_AT(gb_log_softmax, __VA_ARGS__)
#define gb_masked_softmax(...) GB_AT(gb_masked_softmax, __VA_ARGS__)
#define gb_sparse_softmax_cross_entropy_with_logits(...) \
    GB_AT(gb_sparse_softmax_cross_entropy_with_logits, __VA_ARGS__)
#define gb_softmax_cross_entropy_with_logits(...) \
    GB_AT(gb_softmax_cross_entropy_with_logits, __VA_ARGS__)
#define gb_dropout(...) GB_AT(gb_dropout, __VA_ARGS__)
#define gb_print(...) GB_AT(gb_print, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
