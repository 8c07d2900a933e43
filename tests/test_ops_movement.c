/* test_ops_movement.c — shape and movement ops: values, views, errors, gradients.
 *
 * Reshape, Transpose, BroadcastTo, Slice, ConcatV2, Pad, GatherV2 (and
 * ScatterAdd, its gradient), OneHot, and the composites squeeze,
 * expand_dims, stack, split and split by sizes (SplitV). Values are
 * worked out by hand; every
 * listed error is asserted with its code and message; every differentiable
 * op has a finite-difference check in float64. Reshape must be a view: the
 * same data pointer, and gb_keep of it must keep the value.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* 0, 1, 2, ... in the given shape, float64. */
static gb_tensor *iota(int rank, const int64_t *dims) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = (double)i;
    gb_tensor *t = gb_from_f64(v, rank, dims);
    free(v);
    return t;
}
#define IOTA(...) iota(GB_SHAPE(__VA_ARGS__))

static void assert_shape(const gb_tensor *t, int rank, const int64_t *dims) {
    ck_assert_msg(t != NULL, "tensor is NULL: %s", gb_error_string());
    ck_assert_int_eq(gb_rank(t), rank);
    for (int i = 0; i < rank; i++) ck_assert_int_eq(gb_dim(t, i), dims[i]);
}
#define ASSERT_SHAPE(t, ...) assert_shape((t), GB_SHAPE(__VA_ARGS__))

/* The shared error check, plus the op that raised it: movement ops are
 * often composed, and the error must name the op the user called. */
static void assert_op_error(gb_status code, const char *op_type, const char *fragment) {
    const gb_error *e = check_error(code, fragment);
    ck_assert_str_eq(e->op_type, op_type);
    gb_clear_error();
}

/* ---- Reshape ---------------------------------------------------------------------- */

START_TEST(test_reshape_values_and_view) {
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 3);
    gb_tensor *r = gb_reshape(x, GB_SHAPE(3, 2));
    ASSERT_SHAPE(r, 3, 2);
    ASSERT_VALUES(r, 0, 0, 1, 2, 3, 4, 5);
    ck_assert_ptr_eq(gb_data(r), gb_data(x)); /* a view: no copy */
    ASSERT_SHAPE(gb_reshape(x, GB_SHAPE(-1)), 6);
    ASSERT_SHAPE(gb_reshape(x, GB_SHAPE(1, -1, 2)), 1, 3, 2);
    ASSERT_SHAPE(gb_reshape(gb_scalar(GB_F32, 7), GB_SHAPE(1, 1)), 1, 1);
    gb_tensor *scalar = gb_reshape(gb_ones(GB_F32, GB_SHAPE(1, 1)), GB_SCALAR_SHAPE);
    ck_assert_int_eq(gb_rank(scalar), 0);
    ASSERT_VALUES(scalar, 0, 1);
    ASSERT_SHAPE(gb_reshape(gb_zeros(GB_I32, GB_SHAPE(0, 4)), GB_SHAPE(2, 0)), 2, 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_reshape_keep_and_variable) {
    gb_scope_begin();
    gb_tensor *kept;
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 2);
    gb_tensor *view = gb_reshape(x, GB_SHAPE(4));
    kept = gb_keep(view);
    gb_scope_end(); /* x's memory is gone; the kept view copied its value */
    ASSERT_SHAPE(kept, 4);
    ASSERT_VALUES(kept, 0, 0, 1, 2, 3);

    /* A view of an outer tensor kept from an inner scope shares memory. */
    gb_tensor *outer = IOTA(3);
    gb_scope_begin();
    gb_tensor *k2 = gb_keep(gb_reshape(outer, GB_SHAPE(3, 1)));
    gb_scope_end();
    ASSERT_VALUES(k2, 0, 0, 1, 2);

    /* A view of a variable's value holds its buffer after the variable moves on. */
    gb_variable *v = gb_variable_new("v", IOTA(2, 2), true);
    gb_tensor *rv = gb_reshape(gb_variable_value(v), GB_SHAPE(4));
    gb_variable_assign(v, gb_zeros(GB_F64, GB_SHAPE(2, 2)));
    gb_variable_free(v);
    ASSERT_VALUES(rv, 0, 0, 1, 2, 3);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_reshape_errors) {
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 3);
    ck_assert_ptr_null(gb_reshape(x, GB_SHAPE(4)));
    assert_op_error(GB_ERR_SHAPE, "Reshape",
        "cannot reshape a tensor of shape [2,3] (6 elements) into shape [4] (4 elements)");
    ck_assert_ptr_null(gb_reshape(x, GB_SHAPE(4, -1)));
    assert_op_error(GB_ERR_SHAPE, "Reshape", "shape [2,3] (6 elements) into shape [4,-1]");
    ck_assert_ptr_null(gb_reshape(x, GB_SHAPE(-1, -1)));
    assert_op_error(GB_ERR_SHAPE, "Reshape", "two -1 dimensions");
    ck_assert_ptr_null(gb_reshape(x, GB_SHAPE(-2, -3)));
    assert_op_error(GB_ERR_SHAPE, "Reshape", "a negative dimension");
    ck_assert_ptr_null(gb_reshape(x, GB_SHAPE(1, 1, 1, 1, 1, 1, 1, 2, 3)));
    assert_op_error(GB_ERR_SHAPE, "Reshape", "target rank 9 is outside 0..8");
    gb_scope_end();
}
END_TEST

/* Shapes whose element count wraps int64 are refused by name, never
 * multiplied out: the target of a Reshape (2^62 x 4 wraps to 0, which a
 * size check then compared against an empty input), and any op's output
 * (the dispatcher checks every inferred shape). */
START_TEST(test_shapes_past_int64_are_refused) {
    gb_scope_begin();
    const int64_t big = INT64_C(1) << 62;
    ck_assert_ptr_null(gb_reshape(gb_zeros(GB_F32, GB_SHAPE(0)), GB_SHAPE(big, 4)));
    assert_error_text(GB_ERR_SHAPE,
                      "Reshape: target shape [4611686018427387904,4] has more than 2^63 elements");
    ck_assert_ptr_null(gb_broadcast_to(gb_scalar(GB_F32, 1), GB_SHAPE(big, 3)));
    assert_error_text(GB_ERR_SHAPE, "BroadcastTo: output 0 of shape [4611686018427387904,3] has "
                                    "more than 2^63 elements");
    ck_assert_ptr_null(gb_broadcast_to(gb_scalar(GB_F64, 1), GB_SHAPE(big, 1)));
    assert_error_text(GB_ERR_SHAPE, "BroadcastTo: output 0 of shape [4611686018427387904,1] has "
                                    "more than 2^63 bytes");
    /* Empty, but its strides would wrap. */
    ck_assert_ptr_null(gb_zeros(GB_F32, GB_SHAPE(0, INT64_C(1) << 40, INT64_C(1) << 40)));
    assert_error_text(GB_ERR_SHAPE, "gb_zeros: shape [0,1099511627776,1099511627776] has more "
                                    "than 2^63 elements");
    ck_assert_ptr_null(gb_zeros(GB_F32, GB_SHAPE(big, big)));
    assert_error_text(GB_ERR_SHAPE,
                      "gb_zeros: shape [4611686018427387904,4611686018427387904] has more than "
                      "2^63 elements");
    gb_scope_end();
}
END_TEST

/* ---- Transpose --------------------------------------------------------------------- */

START_TEST(test_transpose_values) {
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 3);
    gb_tensor *t = gb_transpose(x, NULL, 0);
    ASSERT_SHAPE(t, 3, 2);
    ASSERT_VALUES(t, 0, 0, 3, 1, 4, 2, 5);
    gb_tensor *y = IOTA(2, 3, 4);
    gb_tensor *a = gb_transpose(y, GB_AXES(1, 0, 2));
    ASSERT_SHAPE(a, 3, 2, 4);
    ASSERT_VALUES(a, 0, 0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20,
                  21, 22, 23);
    gb_tensor *b = gb_transpose(y, GB_AXES(2, 0, 1));
    ASSERT_SHAPE(b, 4, 2, 3);
    ASSERT_VALUES(b, 0, 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11,
                  15, 19, 23);
    ASSERT_VALUES(gb_transpose(y, GB_AXES(0, 1, 2)), 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                  13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23);
    /* Reverse of a rank-3 int tensor: element [k,j,i] = x[i,j,k]. */
    gb_tensor *r = gb_transpose(gb_cast(y, GB_I32), NULL, 0);
    ASSERT_SHAPE(r, 4, 3, 2);
    ck_assert_int_eq(gb_tensor_dtype(r), GB_I32);
    ck_assert(gb_get(r, 3 * 6 + 2 * 2 + 1) == 12 + 8 + 3);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* Large enough for the tiled copy, with partial tiles, for each element size. */
START_TEST(test_transpose_tiled) {
    gb_scope_begin();
    const gb_dtype dts[] = {GB_F32, GB_F64, GB_U8, GB_I64};
    gb_tensor *x = gb_cast(IOTA(3, 37, 45), GB_I64);
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        gb_tensor *xd = gb_cast(x, dts[d]);
        gb_tensor *a = gb_transpose(xd, GB_AXES(0, 2, 1));
        gb_tensor *b = gb_transpose(xd, NULL, 0);
        ASSERT_SHAPE(a, 3, 45, 37);
        ASSERT_SHAPE(b, 45, 37, 3);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 37; j++)
                for (int k = 0; k < 45; k++) {
                    double want = gb_get(xd, (i * 37 + j) * 45 + k);
                    ck_assert_msg(gb_get(a, (i * 45 + k) * 37 + j) == want, "perm 021 [%d,%d,%d]", i, j, k);
                    ck_assert_msg(gb_get(b, (k * 37 + j) * 3 + i) == want, "reverse [%d,%d,%d]", i, j, k);
                }
    }
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_transpose_errors) {
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 3, 4);
    ck_assert_ptr_null(gb_transpose(x, GB_AXES(0, 0, 1)));
    assert_op_error(GB_ERR_VALUE, "Transpose", "perm [0,0,1] is not a permutation of 0..2");
    ck_assert_ptr_null(gb_transpose(x, GB_AXES(0, 1, 3)));
    assert_op_error(GB_ERR_VALUE, "Transpose", "for a tensor of shape [2,3,4]");
    /* the permutation's length must be the rank: too short, too long */
    ck_assert_ptr_null(gb_transpose(x, GB_AXES(1, 0)));
    assert_op_error(GB_ERR_SHAPE, "Transpose",
                    "perm [1,0] has 2 entries but the input of shape [2,3,4] has rank 3");
    ck_assert_ptr_null(gb_transpose(IOTA(2, 3), GB_AXES(1, 0, 2)));
    assert_op_error(GB_ERR_SHAPE, "Transpose",
                    "perm [1,0,2] has 3 entries but the input of "
                    "shape [2,3] has rank 2");
    ck_assert_ptr_null(gb_transpose(x, NULL, 3));
    assert_op_error(GB_ERR_VALUE, "Transpose", "bad perm list (3 entries, NULL array)");
    gb_scope_end();
}
END_TEST

/* ---- BroadcastTo -------------------------------------------------------------------- */

START_TEST(test_broadcast_to) {
    gb_scope_begin();
    gb_tensor *row = IOTA(3);
    ASSERT_VALUES(gb_broadcast_to(row, GB_SHAPE(2, 3)), 0, 0, 1, 2, 0, 1, 2);
    gb_tensor *col = IOTA(2, 1);
    ASSERT_VALUES(gb_broadcast_to(col, GB_SHAPE(2, 3)), 0, 0, 0, 0, 1, 1, 1);
    gb_tensor *one = gb_broadcast_to(gb_scalar(GB_I64, 7), GB_SHAPE(2, 2));
    ck_assert_int_eq(gb_tensor_dtype(one), GB_I64);
    ASSERT_VALUES(one, 0, 7, 7, 7, 7);
    ASSERT_VALUES(gb_broadcast_to(IOTA(1, 2), GB_SHAPE(2, 2, 2)), 0, 0, 1, 0, 1, 0, 1, 0, 1);
    ASSERT_VALUES(gb_broadcast_to(IOTA(2, 1, 2), GB_SHAPE(2, 2, 2)), 0, 0, 1, 0, 1, 2, 3, 2, 3);
    ck_assert_ptr_null(gb_broadcast_to(row, GB_SHAPE(2, 4)));
    assert_op_error(GB_ERR_SHAPE, "BroadcastTo", "cannot broadcast shape [3] to shape [2,4]");
    ck_assert_ptr_null(gb_broadcast_to(IOTA(2, 3), GB_SHAPE(3)));
    assert_op_error(GB_ERR_SHAPE, "BroadcastTo", "of lower rank");
    ck_assert_ptr_null(gb_broadcast_to(row, GB_SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 3)));
    assert_op_error(GB_ERR_SHAPE, "BroadcastTo", "target rank 9 is outside 0..8");
    gb_scope_end();
}
END_TEST

/* ---- Slice ---------------------------------------------------------------------------- */

START_TEST(test_slice) {
    gb_scope_begin();
    gb_tensor *x = IOTA(3, 4);
    gb_tensor *s = gb_slice(x, GB_LIST(1, 1), GB_LIST(2, 2));
    ASSERT_SHAPE(s, 2, 2);
    ASSERT_VALUES(s, 0, 5, 6, 9, 10);
    ASSERT_VALUES(gb_slice(x, GB_LIST(0, 2), GB_LIST(-1, -1)), 0, 2, 3, 6, 7, 10, 11);
    ASSERT_VALUES(gb_slice(x, GB_LIST(2, 0), GB_LIST(1, -1)), 0, 8, 9, 10, 11);
    ASSERT_SHAPE(gb_slice(x, GB_LIST(3, 0), GB_LIST(-1, 4)), 0, 4);
    gb_tensor *y = IOTA(2, 3, 4);
    ASSERT_VALUES(gb_slice(y, GB_LIST(1, 0, 3), GB_LIST(1, 3, 1)), 0, 15, 19, 23);
    ck_assert_ptr_null(gb_slice(x, GB_LIST(1, 3), GB_LIST(1, 2)));
    assert_op_error(GB_ERR_VALUE, "Slice",
        "begin 3 and size 2 are out of range for axis 1 of size 4 (input shape [3,4])");
    ck_assert_ptr_null(gb_slice(x, GB_LIST(-1, 0), GB_LIST(1, 1)));
    assert_op_error(GB_ERR_VALUE, "Slice", "begin -1 and size 1 are out of range for axis 0");
    /* A size near 2^63 is out of range, not a wrapped sum (UBSan). */
    ck_assert_ptr_null(gb_slice(x, GB_LIST(1, 0), GB_LIST(INT64_MAX, 1)));
    assert_op_error(GB_ERR_VALUE, "Slice", "begin 1 and size 9223372036854775807 are out of range");
    ck_assert_ptr_null(gb_slice(x, GB_LIST(0, 0), GB_LIST(-2, 1)));
    assert_op_error(GB_ERR_VALUE, "Slice", "size -2");
    /* one begin and one size per axis */
    ck_assert_ptr_null(gb_slice(x, GB_LIST(0), GB_LIST(1, 1)));
    assert_op_error(GB_ERR_SHAPE, "Slice",
                    "begin has 1 entries and size 2, but the input of shape [3,4] has rank 2");
    ck_assert_ptr_null(gb_slice(x, GB_LIST(0, 0, 0), GB_LIST(1, 1, 1)));
    assert_op_error(GB_ERR_SHAPE, "Slice", "begin has 3 entries and size 3");
    gb_scope_end();
}
END_TEST

/* ---- ConcatV2 --------------------------------------------------------------------------- */

START_TEST(test_concat) {
    gb_scope_begin();
    gb_tensor *a = IOTA(2, 2), *b = gb_add_scalar(IOTA(2, 1), 10), *c = gb_add_scalar(IOTA(2, 3), 20);
    gb_tensor *cols = gb_concat((gb_tensor *[]){a, b, c}, 3, 1);
    ASSERT_SHAPE(cols, 2, 6);
    ASSERT_VALUES(cols, 0, 0, 1, 10, 20, 21, 22, 2, 3, 11, 23, 24, 25);
    ASSERT_VALUES(gb_concat((gb_tensor *[]){a, b, c}, 3, -1), 0, 0, 1, 10, 20, 21, 22, 2, 3, 11,
                  23, 24, 25);
    gb_tensor *rows = gb_concat((gb_tensor *[]){a, gb_add_scalar(IOTA(1, 2), 7)}, 2, 0);
    ASSERT_SHAPE(rows, 3, 2);
    ASSERT_VALUES(rows, 0, 0, 1, 2, 3, 7, 8);
    ASSERT_VALUES(gb_concat(&a, 1, 0), 0, 0, 1, 2, 3);

    ck_assert_ptr_null(gb_concat((gb_tensor *[]){a, b, IOTA(3, 3)}, 3, 1));
    assert_op_error(GB_ERR_SHAPE, "ConcatV2",
        "input 2 has shape [3,3] but input 0 has shape [2,2]; all dimensions except axis 1");
    ck_assert_ptr_null(gb_concat((gb_tensor *[]){a, IOTA(4)}, 2, 0));
    assert_op_error(GB_ERR_SHAPE, "ConcatV2", "input 1 has shape [4]");
    ck_assert_ptr_null(gb_concat((gb_tensor *[]){a, gb_cast(a, GB_F32)}, 2, 0));
    assert_op_error(GB_ERR_DTYPE, "ConcatV2", "input 1 is float32 but input 0 is float64");
    ck_assert_ptr_null(gb_concat((gb_tensor *[]){a, a}, 2, 2));
    assert_op_error(GB_ERR_VALUE, "ConcatV2", "axis 2 is out of range for a rank-2 tensor");
    ck_assert_ptr_null(gb_concat(NULL, 0, 0));
    assert_op_error(GB_ERR_VALUE, "ConcatV2", "needs at least one input");
    gb_scope_end();
}
END_TEST

/* ---- Pad ------------------------------------------------------------------------------- */

/* Paddings that reach past int64 are refused, never added up (UBSan:
 * 2^63-1 + 14); a constant a uint8 cannot hold is saturated, never cast
 * out of range. */
START_TEST(test_pad_at_the_edges) {
    gb_scope_begin();
    gb_tensor *x = gb_zeros(GB_U8, GB_SHAPE(2, 3));
    ck_assert_ptr_null(gb_pad(x, GB_LIST(0, 0, INT64_MAX, 14), 0));
    assert_error_text(GB_ERR_SHAPE, "Pad: axis 1 padded by (9223372036854775807, 14) has more "
                                    "than 2^63 elements");
    gb_tensor *y = gb_pad(x, GB_LIST(0, 0, 1, 0), -3.875);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    ck_assert_double_eq(gb_get(y, 0), 0);
    y = gb_pad(x, GB_LIST(0, 0, 1, 0), 300);
    ck_assert_double_eq(gb_get(y, 0), 255);
    gb_scope_end();
}
END_TEST

START_TEST(test_pad) {
    gb_scope_begin();
    gb_tensor *x = gb_add_scalar(IOTA(2, 2), 1);
    gb_tensor *p = gb_pad(x, GB_LIST(1, 0, 0, 2), 0);
    ASSERT_SHAPE(p, 3, 4);
    ASSERT_VALUES(p, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0);
    gb_tensor *q = gb_pad(gb_cast(x, GB_I32), GB_LIST(0, 1, 1, 1), -1);
    ck_assert_int_eq(gb_tensor_dtype(q), GB_I32);
    ASSERT_VALUES(q, 0, -1, 1, 2, -1, -1, 3, 4, -1, -1, -1, -1, -1);
    ASSERT_VALUES(gb_pad(gb_scalar(GB_F32, 5), NULL, 0, 1), 0, 5);
    ck_assert_ptr_null(gb_pad(x, GB_LIST(0, -1, 0, 0), 0));
    assert_op_error(GB_ERR_VALUE, "Pad", "paddings of axis 0 are (0, -1); they must be >= 0");
    ck_assert_ptr_null(gb_pad(x, GB_LIST(1, 1), 0));
    assert_op_error(GB_ERR_SHAPE, "Pad",
                    "2 paddings for an input of shape [2,2]; give a (before, after) pair per "
                    "axis: 4 values");
    gb_scope_end();
}
END_TEST

/* ---- GatherV2 ------------------------------------------------------------------------- */

START_TEST(test_gather) {
    gb_scope_begin();
    gb_tensor *p = IOTA(4, 3);
    const int32_t i32[] = {2, 0, 2};
    gb_tensor *rows = gb_gather(p, gb_tensor_from(GB_I32, i32, GB_SHAPE(3)), 0);
    ASSERT_SHAPE(rows, 3, 3);
    ASSERT_VALUES(rows, 0, 6, 7, 8, 0, 1, 2, 6, 7, 8);
    const int64_t i64[] = {2, 1, 1, 0};
    gb_tensor *cols = gb_gather(p, gb_tensor_from(GB_I64, i64, GB_SHAPE(2, 2)), -1);
    ASSERT_SHAPE(cols, 4, 2, 2);
    ASSERT_VALUES(cols, 0, 2, 1, 1, 0, 5, 4, 4, 3, 8, 7, 7, 6, 11, 10, 10, 9);
    /* Scalar index removes the axis. */
    const int64_t one = 3;
    gb_tensor *row = gb_gather(p, gb_tensor_from(GB_I64, &one, GB_SCALAR_SHAPE), 0);
    ASSERT_SHAPE(row, 3);
    ASSERT_VALUES(row, 0, 9, 10, 11);

    const int32_t bad[] = {1, 5, 0};
    ck_assert_ptr_null(gb_gather(p, gb_tensor_from(GB_I32, bad, GB_SHAPE(3)), 0));
    assert_op_error(GB_ERR_VALUE, "GatherV2",
        "indices[1] = 5 is out of range: valid indices along axis 0 are [0, 4)");
    const int64_t neg[] = {-1};
    ck_assert_ptr_null(gb_gather(p, gb_tensor_from(GB_I64, neg, GB_SHAPE(1)), 1));
    assert_op_error(GB_ERR_VALUE, "GatherV2", "indices[0] = -1 is out of range");
    ck_assert_ptr_null(gb_gather(p, gb_zeros(GB_F32, GB_SHAPE(1)), 0));
    assert_op_error(GB_ERR_DTYPE, "GatherV2", "indices must be int32 or int64, got float32");
    ck_assert_ptr_null(gb_gather(p, gb_zeros(GB_I32, GB_SHAPE(1)), 2));
    assert_op_error(GB_ERR_VALUE, "GatherV2", "axis 2 is out of range");
    gb_tensor *deep = gb_zeros(GB_I32, GB_SHAPE(1, 1, 1, 1, 1, 1, 1, 1));
    ck_assert_ptr_null(gb_gather(p, deep, 0));
    assert_op_error(GB_ERR_SHAPE, "GatherV2", "the result would have rank 9; the limit is 8");
    gb_scope_end();
}
END_TEST

/* ---- OneHot ----------------------------------------------------------------------------- */

START_TEST(test_one_hot) {
    gb_scope_begin();
    const int32_t i[] = {0, 2, -1, 3};
    gb_tensor *h = gb_one_hot(gb_tensor_from(GB_I32, i, GB_SHAPE(2, 2)), 3, 1, 0, GB_F32);
    ASSERT_SHAPE(h, 2, 2, 3);
    ck_assert_int_eq(gb_tensor_dtype(h), GB_F32);
    /* Indices outside [0, depth) give all-off rows, as in TensorFlow. */
    ASSERT_VALUES(h, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0);
    const int64_t l[] = {1};
    ASSERT_VALUES(gb_one_hot(gb_tensor_from(GB_I64, l, GB_SHAPE(1)), 2, 5, -5, GB_I64), 0, -5, 5);
    ck_assert_ptr_null(gb_one_hot(gb_zeros(GB_F32, GB_SHAPE(2)), 3, 1, 0, GB_F32));
    assert_op_error(GB_ERR_DTYPE, "OneHot", "indices must be an integer dtype, got float32");
    ck_assert_ptr_null(gb_one_hot(gb_zeros(GB_I32, GB_SHAPE(2)), -1, 1, 0, GB_F32));
    assert_op_error(GB_ERR_VALUE, "OneHot", "depth -1 must be >= 0");
    ck_assert_ptr_null(
        gb_one_hot(gb_zeros(GB_I32, GB_SHAPE(1, 1, 1, 1, 1, 1, 1, 1)), 2, 1, 0, GB_F32));
    assert_op_error(GB_ERR_SHAPE, "OneHot", "rank 9; the limit is 8");
    gb_scope_end();
}
END_TEST

/* ---- composites --------------------------------------------------------------------------- */

START_TEST(test_squeeze_expand_dims) {
    gb_scope_begin();
    gb_tensor *x = IOTA(1, 3, 1, 2);
    gb_tensor *all = gb_squeeze(x, NULL, 0);
    ASSERT_SHAPE(all, 3, 2);
    ck_assert_ptr_eq(gb_data(all), gb_data(x));
    ASSERT_SHAPE(gb_squeeze(x, GB_AXES(-2)), 1, 3, 2);
    ASSERT_SHAPE(gb_squeeze(x, GB_AXES(0, 2)), 3, 2);
    ck_assert_ptr_null(gb_squeeze(x, GB_AXES(1)));
    assert_op_error(GB_ERR_SHAPE, "Squeeze", "cannot squeeze axis 1 of shape [1,3,1,2]: its size is 3");
    ck_assert_ptr_null(gb_squeeze(x, GB_AXES(4)));
    assert_op_error(GB_ERR_VALUE, "Squeeze", "axis 4 is out of range for a rank-4 tensor");

    gb_tensor *v = IOTA(3);
    ASSERT_SHAPE(gb_expand_dims(v, 0), 1, 3);
    ASSERT_SHAPE(gb_expand_dims(v, 1), 3, 1);
    ASSERT_SHAPE(gb_expand_dims(v, -1), 3, 1);
    ASSERT_SHAPE(gb_expand_dims(gb_scalar(GB_F32, 1), 0), 1);
    ASSERT_VALUES(gb_expand_dims(v, -2), 0, 0, 1, 2);
    ck_assert_ptr_null(gb_expand_dims(v, 2));
    assert_op_error(GB_ERR_VALUE, "ExpandDims", "axis 2 is out of range [-2, 1]");
    ck_assert_ptr_null(gb_expand_dims(gb_zeros(GB_F32, GB_SHAPE(1, 1, 1, 1, 1, 1, 1, 2)), 0));
    assert_op_error(GB_ERR_SHAPE, "ExpandDims", "rank 9; the limit is 8");
    ck_assert_ptr_null(gb_squeeze(NULL, NULL, 0));
    assert_op_error(GB_ERR_VALUE, "Squeeze", "the input is NULL");
    /* A failed input keeps its own error. */
    ck_assert_ptr_null(gb_expand_dims(gb_reshape(v, GB_SHAPE(2)), 0));
    assert_op_error(GB_ERR_SHAPE, "Reshape", "into shape [2]");
    gb_scope_end();
}
END_TEST

START_TEST(test_stack_split) {
    gb_scope_begin();
    gb_tensor *a = IOTA(2), *b = gb_add_scalar(IOTA(2), 10), *c = gb_add_scalar(IOTA(2), 20);
    gb_tensor *s0 = gb_stack((gb_tensor *[]){a, b, c}, 3, 0);
    ASSERT_SHAPE(s0, 3, 2);
    ASSERT_VALUES(s0, 0, 0, 1, 10, 11, 20, 21);
    gb_tensor *s1 = gb_stack((gb_tensor *[]){a, b, c}, 3, -1);
    ASSERT_SHAPE(s1, 2, 3);
    ASSERT_VALUES(s1, 0, 0, 10, 20, 1, 11, 21);
    /* Many inputs (more than fit on the stack), scalars. */
    gb_tensor *many[40];
    for (int i = 0; i < 40; i++) many[i] = gb_scalar(GB_F64, i);
    gb_tensor *m = gb_stack(many, 40, 0);
    ASSERT_SHAPE(m, 40);
    ck_assert(gb_get(m, 39) == 39);
    ck_assert_ptr_null(gb_stack((gb_tensor *[]){a, IOTA(3)}, 2, 0));
    assert_op_error(GB_ERR_SHAPE, "ConcatV2", "input 1 has shape [1,3]");
    ck_assert_ptr_null(gb_stack(NULL, 0, 0));
    assert_op_error(GB_ERR_VALUE, "Pack", "at least one input");

    gb_tensor *x = IOTA(2, 6);
    gb_tensor *parts[3];
    ck_assert(gb_split(x, 3, 1, parts));
    ASSERT_SHAPE(parts[0], 2, 2);
    ASSERT_VALUES(parts[0], 0, 0, 1, 6, 7);
    ASSERT_VALUES(parts[2], 0, 4, 5, 10, 11);
    gb_tensor *halves[2];
    ck_assert(gb_split(x, 2, 0, halves));
    ASSERT_VALUES(halves[1], 0, 6, 7, 8, 9, 10, 11);
    gb_tensor *four[4];
    ck_assert(!gb_split(x, 4, 1, four));
    ck_assert_ptr_null(four[0]);
    assert_op_error(GB_ERR_VALUE, "Split", "cannot split axis 1 of size 6 (shape [2,6]) into 4 equal parts");
    ck_assert(!gb_split(x, 2, 2, halves));
    assert_op_error(GB_ERR_VALUE, "Split", "axis 2 is out of range");
    gb_scope_end();
}
END_TEST

/* tf.split(x, [1, -1, 2], axis=1) and friends. */
START_TEST(test_split_sizes) {
    gb_scope_begin();
    gb_tensor *x = IOTA(2, 6), *p[3];
    ck_assert(gb_split_sizes(x, GB_LIST(1, 3, 2), 1, p));
    ASSERT_SHAPE(p[0], 2, 1);
    ASSERT_VALUES(p[0], 0, 0, 6);
    ASSERT_VALUES(p[1], 0, 1, 2, 3, 7, 8, 9);
    ASSERT_VALUES(p[2], 0, 4, 5, 10, 11);
    /* -1 takes the rest, wherever it stands; empty parts are fine */
    ck_assert(gb_split_sizes(x, GB_LIST(1, -1, 2), -1, p));
    ASSERT_SHAPE(p[1], 2, 3);
    ASSERT_VALUES(p[1], 0, 1, 2, 3, 7, 8, 9);
    ck_assert(gb_split_sizes(x, GB_LIST(-1, 0, 6), 1, p));
    ASSERT_SHAPE(p[0], 2, 0);
    ASSERT_SHAPE(p[1], 2, 0);
    ASSERT_VALUES(p[2], 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    ck_assert(gb_split_sizes(x, GB_LIST(-1), 0, p));
    ASSERT_SHAPE(p[0], 2, 6);
    /* the same parts as the equal split */
    gb_tensor *eq[3];
    ck_assert(gb_split(x, 3, 1, eq) && gb_split_sizes(x, GB_LIST(2, 2, 2), 1, p));
    for (int i = 0; i < 3; i++) ASSERT_VALUES(gb_sub(p[i], eq[i]), 0, 0, 0, 0, 0);
    ck_assert(gb_ok());

    ck_assert(!gb_split_sizes(x, GB_LIST(1, 2, 2), 1, p));
    ck_assert_ptr_null(p[0]);
    assert_op_error(GB_ERR_SHAPE, "SplitV",
                    "cannot split axis 1 of size 6 (shape [2,6]) into sizes [1,2,2]: the sizes do "
                    "not add up to the axis' length");
    ck_assert(!gb_split_sizes(x, GB_LIST(4, -1, 3), 1, p));
    assert_op_error(GB_ERR_SHAPE, "SplitV", "sizes [4,-1,3]: the sizes add up to more than");
    ck_assert(!gb_split_sizes(x, GB_LIST(-1, 2, -1), 1, p));
    assert_op_error(GB_ERR_SHAPE, "SplitV",
                    "into sizes [-1,2,-1]: more than one size is -1 (only one may be)");
    ck_assert(!gb_split_sizes(x, GB_LIST(3, -2, 5), 1, p));
    assert_op_error(GB_ERR_SHAPE, "SplitV", "a size is negative");
    ck_assert(!gb_split_sizes(x, GB_LIST(1, 1), 2, p));
    assert_op_error(GB_ERR_VALUE, "SplitV", "axis 2 is out of range for a tensor of shape [2,6]");
    ck_assert(!gb_split_sizes(x, NULL, 0, 0, p));
    assert_op_error(GB_ERR_VALUE, "SplitV", "needs at least one size");
    ck_assert(!gb_split_sizes(NULL, GB_LIST(1), 0, p));
    assert_op_error(GB_ERR_VALUE, "SplitV", "the input is NULL");
    /* more parts than the small on-stack buffer holds */
    gb_tensor *many[20];
    int64_t ones[20];
    for (int i = 0; i < 20; i++) ones[i] = 1;
    ck_assert(gb_split_sizes(IOTA(20), ones, 20, 0, many));
    ck_assert(gb_get(many[19], 0) == 19);
    gb_scope_end();
}
END_TEST

/* ---- gradients ---------------------------------------------------------------------------- */

static gb_tensor *f_reshape(gb_tensor *const *x, int n, void *u) {
    return gb_reshape(x[0], GB_SHAPE(4, -1));
}
static gb_tensor *f_transpose3(gb_tensor *const *x, int n, void *u) {
    return gb_transpose(x[0], GB_AXES(2, 0, 1));
}
static gb_tensor *f_transpose_rev(gb_tensor *const *x, int n, void *u) {
    return gb_transpose(x[0], NULL, 0);
}
static gb_tensor *f_broadcast(gb_tensor *const *x, int n, void *u) {
    return gb_broadcast_to(x[0], GB_SHAPE(2, 3, 4));
}
static gb_tensor *f_slice(gb_tensor *const *x, int n, void *u) {
    return gb_slice(x[0], GB_LIST(1, 0, 1), GB_LIST(1, -1, 2));
}
static gb_tensor *f_concat3(gb_tensor *const *x, int n, void *u) {
    return gb_concat(x, 3, 1);
}
static gb_tensor *f_pad(gb_tensor *const *x, int n, void *u) {
    return gb_pad(x[0], GB_LIST(1, 2, 0, 1), 3.0);
}
static gb_tensor *f_gather0(gb_tensor *const *x, int n, void *u) {
    return gb_gather(x[0], x[1], 0);
}
static gb_tensor *f_gather1(gb_tensor *const *x, int n, void *u) {
    return gb_gather(x[0], x[1], 1);
}
static gb_tensor *f_stack(gb_tensor *const *x, int n, void *u) {
    return gb_stack(x, 2, 1);
}
static gb_tensor *f_split(gb_tensor *const *x, int n, void *u) {
    gb_tensor *p[3];
    if (!gb_split(x[0], 3, 0, p)) return NULL;
    return gb_sub(gb_mul(p[0], p[1]), p[2]);
}
static gb_tensor *f_split_sizes(gb_tensor *const *x, int n, void *u) {
    gb_tensor *p[3];
    if (!gb_split_sizes(x[0], GB_LIST(2, -1, 1), 1, p)) return NULL;
    /* parts of different widths meet through reductions */
    gb_tensor *a = gb_reduce_sum(gb_square(p[0]), GB_AXES(1), false);
    gb_tensor *b = gb_reduce_prod(p[1], GB_AXES(1), false);
    return gb_add(gb_add(a, b), gb_reduce_sum(p[2], GB_AXES(1), false));
}
static gb_tensor *f_squeeze_expand(gb_tensor *const *x, int n, void *u) {
    return gb_expand_dims(gb_squeeze(x[0], NULL, 0), 0);
}

START_TEST(test_movement_gradients) {
    gb_scope_begin();
    gb_tensor *x = GC_INPUT(-1, 1, 1, 2, 3, 4);
    GC_ASSERT(f_reshape, &x, 1, NULL);
    GC_ASSERT(f_transpose3, &x, 1, NULL);
    GC_ASSERT(f_transpose_rev, &x, 1, NULL);
    GC_ASSERT(f_slice, &x, 1, NULL);
    gb_tensor *b = GC_INPUT(-1, 1, 2, 3, 1);
    GC_ASSERT(f_broadcast, &b, 1, NULL);
    gb_tensor *cat[3] = {GC_INPUT(-1, 1, 3, 2, 1), GC_INPUT(-1, 1, 4, 2, 3),
                         GC_INPUT(-1, 1, 5, 2, 2)};
    GC_ASSERT(f_concat3, cat, 3, NULL);
    gb_tensor *p = GC_INPUT(-1, 1, 6, 2, 2);
    GC_ASSERT(f_pad, &p, 1, NULL);
    gb_tensor *st[2] = {GC_INPUT(-1, 1, 7, 2, 2), GC_INPUT(-1, 1, 8, 2, 2)};
    GC_ASSERT(f_stack, st, 2, NULL);
    gb_tensor *sp = GC_INPUT(-1, 1, 9, 6, 2);
    GC_ASSERT(f_split, &sp, 1, NULL);
    gb_tensor *sps = GC_INPUT(-1, 1, 14, 2, 6);
    GC_ASSERT(f_split_sizes, &sps, 1, NULL);
    gb_tensor *sq = GC_INPUT(-1, 1, 10, 1, 3, 1);
    GC_ASSERT(f_squeeze_expand, &sq, 1, NULL);
    gb_scope_end();
}
END_TEST

START_TEST(test_gather_gradient_repeated_indices) {
    gb_scope_begin();
    const int64_t idx[] = {2, 0, 2, 2, 1};
    gb_tensor *in0[2] = {GC_INPUT(-1, 1, 11, 4, 3), gb_tensor_from(GB_I64, idx, GB_SHAPE(5))};
    GC_ASSERT(f_gather0, in0, 2, NULL);
    const int32_t idx2[] = {1, 1, 0, 2};
    gb_tensor *in1[2] = {GC_INPUT(-1, 1, 12, 2, 3, 2), gb_tensor_from(GB_I32, idx2, GB_SHAPE(2, 2))};
    GC_ASSERT(f_gather1, in1, 2, NULL);
    /* Exact: repeated indices accumulate. */
    gb_tensor *params = gb_ones(GB_F64, GB_SHAPE(4, 3));
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, params);
    gb_tensor *g = gb_gather(params, in0[1], 0);
    gb_tape_end(t);
    gb_tensor *dx = gb_tape_gradient(t, g, params);
    ASSERT_VALUES(dx, 0, 1, 1, 1, 1, 1, 1, 3, 3, 3, 0, 0, 0);
    gb_scope_end();
}
END_TEST

/* The gradient of a gather, itself differentiated: goes through
 * ScatterAdd's gradient (a gather) and Gather's again. */
static gb_tensor *f_gather_grad(gb_tensor *const *x, int n, void *u) {
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x[0]);
    gb_tensor *g = gb_gather(x[0], x[1], 0);
    gb_tensor *loss = gb_reduce_sum(gb_mul(g, g), GB_ALL_AXES, false);
    gb_tape_end(t);
    return gb_tape_gradient(t, loss, x[0]);
}

START_TEST(test_scatter_add_gradient) {
    gb_scope_begin();
    const int32_t idx[] = {1, 1, 0};
    gb_tensor *in[2] = {GC_INPUT(-1, 1, 13, 3, 2), gb_tensor_from(GB_I32, idx, GB_SHAPE(3))};
    GC_ASSERT(f_gather_grad, in, 2, NULL);
    gb_scope_end();
}
END_TEST

static Suite *movement_suite(void) {
    Suite *s = suite_create("ops_movement");
    TCase *fwd = tcase_create("forward");
    tcase_add_test(fwd, test_reshape_values_and_view);
    tcase_add_test(fwd, test_reshape_keep_and_variable);
    tcase_add_test(fwd, test_reshape_errors);
    tcase_add_test(fwd, test_shapes_past_int64_are_refused);
    tcase_add_test(fwd, test_transpose_values);
    tcase_add_test(fwd, test_transpose_tiled);
    tcase_add_test(fwd, test_transpose_errors);
    tcase_add_test(fwd, test_broadcast_to);
    tcase_add_test(fwd, test_slice);
    tcase_add_test(fwd, test_concat);
    tcase_add_test(fwd, test_pad);
    tcase_add_test(fwd, test_pad_at_the_edges);
    tcase_add_test(fwd, test_gather);
    tcase_add_test(fwd, test_one_hot);
    tcase_add_test(fwd, test_squeeze_expand_dims);
    tcase_add_test(fwd, test_stack_split);
    tcase_add_test(fwd, test_split_sizes);
    suite_add_tcase(s, fwd);
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_movement_gradients);
    tcase_add_test(grad, test_gather_gradient_repeated_indices);
    tcase_add_test(grad, test_scatter_add_gradient);
    suite_add_tcase(s, grad);
    return s;
}

int main(void) { return run_suite(movement_suite()); }
