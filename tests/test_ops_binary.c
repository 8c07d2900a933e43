/* test_ops_binary.c — elementwise binary ops, comparisons and Select.
 *
 * Forward values against hand-computed numbers for every op and dtype
 * class, every broadcasting layout the kernels special-case (same shape,
 * scalar op tensor, tensor op scalar, row broadcast, general N-d), the
 * errors (shapes, dtypes, NULL inputs), and finite-difference gradient
 * checks for every differentiable op, including broadcasting.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

static gb_tensor *f64(int rank, const int64_t *dims, const double *v) {
    return gb_from_f64(v, rank, dims);
}
#define F64(shape, ...) f64(GB_SHAPE shape, (const double[]){__VA_ARGS__})
#define F32(shape, ...) gb_from_f32((const float[]){__VA_ARGS__}, GB_SHAPE shape)
#define I32(shape, ...) gb_tensor_from(GB_I32, (const int32_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define I64(shape, ...) gb_tensor_from(GB_I64, (const int64_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define U8(shape, ...) gb_tensor_from(GB_U8, (const uint8_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define BOOL(shape, ...) gb_tensor_from(GB_BOOL, (const uint8_t[]){__VA_ARGS__}, GB_SHAPE shape)

static void assert_shape(const gb_tensor *t, int rank, const int64_t *dims) {
    ck_assert_msg(t != NULL, "NULL tensor: %s", gb_error_string());
    ck_assert_int_eq(gb_rank(t), rank);
    for (int i = 0; i < rank; i++) ck_assert_int_eq(gb_dim(t, i), dims[i]);
}
#define ASSERT_SHAPE(t, ...) assert_shape((t), GB_SHAPE(__VA_ARGS__))

/* The current error has this code and its message contains `part`. */
/* ---- forward: arithmetic ---------------------------------------------------------- */

START_TEST(test_arith_same_shape_float) {
    gb_scope_begin();
    gb_tensor *a = F64((2, 2), 1, 2, 3, 4), *b = F64((2, 2), 0.5, -1, 2, 8);
    ASSERT_VALUES(gb_add(a, b), 0, 1.5, 1, 5, 12);
    ASSERT_VALUES(gb_sub(a, b), 0, 0.5, 3, 1, -4);
    ASSERT_VALUES(gb_mul(a, b), 0, 0.5, -2, 6, 32);
    ASSERT_VALUES(gb_div(a, b), 0, 2, -2, 1.5, 0.5);
    ASSERT_VALUES(gb_pow(a, b), 1e-12, 1, 0.5, 9, 65536);
    ASSERT_VALUES(gb_maximum(a, b), 0, 1, 2, 3, 8);
    ASSERT_VALUES(gb_minimum(a, b), 0, 0.5, -1, 2, 4);
    gb_tensor *x = F32((3), 1.5f, -2, 0.25f), *y = F32((3), 2, 4, -0.5f);
    gb_tensor *s = gb_add(x, y);
    ck_assert_int_eq(gb_tensor_dtype(s), GB_F32);
    ASSERT_VALUES(s, 0, 3.5, 2, -0.25);
    ASSERT_VALUES(gb_mul(x, y), 0, 3, -8, -0.125);
    ASSERT_VALUES(gb_div(x, y), 0, 0.75, -0.5, -0.5);
    ASSERT_VALUES(gb_pow(F32((2), 2, 9), F32((2), 3, 0.5f)), 1e-6, 8, 3);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_arith_integers) {
    gb_scope_begin();
    gb_tensor *a = I32((4), 7, -7, 9, 100), *b = I32((4), 2, 2, -3, 7);
    ck_assert_int_eq(gb_tensor_dtype(gb_add(a, b)), GB_I32);
    ASSERT_VALUES(gb_add(a, b), 0, 9, -5, 6, 107);
    ASSERT_VALUES(gb_sub(a, b), 0, 5, -9, 12, 93);
    ASSERT_VALUES(gb_mul(a, b), 0, 14, -14, -27, 700);
    /* C's (and TensorFlow's Div's) truncation toward zero. */
    ASSERT_VALUES(gb_div(a, b), 0, 3, -3, -3, 14);
    ASSERT_VALUES(gb_maximum(a, b), 0, 7, 2, 9, 100);
    ASSERT_VALUES(gb_minimum(a, b), 0, 2, -7, -3, 7);
    /* Overflow wraps, as in TensorFlow. */
    ASSERT_VALUES(gb_add(I32((1), 2147483647), I32((1), 1)), 0, -2147483648.0);
    ASSERT_VALUES(gb_div(I32((1), -2147483647 - 1), I32((1), -1)), 0, -2147483648.0);
    ASSERT_VALUES(gb_mul(I64((2), 1LL << 40, -3), I64((2), 4, 5)), 0, (double)(1LL << 42), -15);
    ASSERT_VALUES(gb_div(I64((2), -9, 9), I64((2), 4, -1)), 0, -2, -9);
    gb_tensor *u = U8((3), 200, 3, 10), *v = U8((3), 100, 5, 3);
    ASSERT_VALUES(gb_add(u, v), 0, 44, 8, 13);
    ASSERT_VALUES(gb_sub(u, v), 0, 100, 254, 7);
    ASSERT_VALUES(gb_mul(u, v), 0, 32, 15, 30);
    ASSERT_VALUES(gb_div(u, v), 0, 2, 0, 3);
    ASSERT_VALUES(gb_maximum(u, v), 0, 200, 5, 10);
    ASSERT_VALUES(gb_minimum(u, v), 0, 100, 3, 3);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_integer_division_by_zero) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_div(I32((2), 1, 2), I32((2), 1, 0)));
    assert_error(GB_ERR_VALUE, "Div: integer division by zero");
    ck_assert_ptr_null(gb_div(U8((1), 1), U8((1), 0)));
    assert_error(GB_ERR_VALUE, "integer division by zero");
    /* Floats follow IEEE. */
    gb_tensor *q = gb_div(F64((2), 1, -1), F64((2), 0, 0));
    ck_assert(isinf(gb_get(q, 0)) && gb_get(q, 0) > 0);
    ck_assert(isinf(gb_get(q, 1)) && gb_get(q, 1) < 0);
    gb_scope_end();
}
END_TEST

START_TEST(test_maximum_minimum_nan) {
    gb_scope_begin();
    gb_tensor *a = F64((2), NAN, 1), *b = F64((2), 1, NAN);
    gb_tensor *mx = gb_maximum(a, b), *mn = gb_minimum(a, b);
    ck_assert(isnan(gb_get(mx, 0)) && isnan(gb_get(mx, 1)));
    ck_assert(isnan(gb_get(mn, 0)) && isnan(gb_get(mn, 1)));
    gb_scope_end();
}
END_TEST

/* ---- forward: broadcasting layouts ---------------------------------------------- */

START_TEST(test_broadcast_scalar_sides) {
    gb_scope_begin();
    gb_tensor *m = F64((2, 3), 1, 2, 3, 4, 5, 6), *s = gb_scalar(GB_F64, 10);
    gb_tensor *r = gb_sub(s, m);
    ASSERT_SHAPE(r, 2, 3);
    ASSERT_VALUES(r, 0, 9, 8, 7, 6, 5, 4);
    ASSERT_VALUES(gb_sub(m, s), 0, -9, -8, -7, -6, -5, -4);
    ASSERT_VALUES(gb_div(s, F64((2), 4, 5)), 0, 2.5, 2);
    /* A [1,1] tensor is a single element too but keeps its rank. */
    gb_tensor *one = F64((1, 1), 2);
    ASSERT_SHAPE(gb_mul(F64((3), 1, 2, 3), one), 1, 3);
    ASSERT_VALUES(gb_mul(F64((3), 1, 2, 3), one), 0, 2, 4, 6);
    ck_assert_int_eq(gb_rank(gb_add(s, s)), 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_broadcast_rows_and_columns) {
    gb_scope_begin();
    gb_tensor *m = F64((2, 3), 1, 2, 3, 4, 5, 6);
    /* The bias add: [N,M] + [M]. */
    ASSERT_VALUES(gb_add(m, F64((3), 10, 20, 30)), 0, 11, 22, 33, 14, 25, 36);
    ASSERT_VALUES(gb_sub(F64((3), 10, 20, 30), m), 0, 9, 18, 27, 6, 15, 24);
    /* Rows of a different element size in and out, and integer rows. */
    ASSERT_VALUES(gb_greater(m, F64((3), 2, 2, 2)), 0, 0, 0, 1, 1, 1, 1);
    ASSERT_VALUES(gb_less_equal(F64((3), 2, 5, 9), m), 0, 0, 0, 0, 1, 1, 0);
    ASSERT_VALUES(gb_add(I32((2, 2), 1, 2, 3, 4), I32((2), 10, 20)), 0, 11, 22, 13, 24);
    /* [K,N,M] + [N,M]: the row is a whole matrix. */
    ASSERT_VALUES(gb_add(gb_ones(GB_F64, GB_SHAPE(2, 1, 2)), F64((1, 2), 5, 6)), 0, 6, 7, 6, 7);
    /* Per-row scale: [N,M] * [N,1]. */
    ASSERT_VALUES(gb_mul(m, F64((2, 1), 2, -1)), 0, 2, 4, 6, -4, -5, -6);
    ASSERT_VALUES(gb_div(F64((2, 1), 12, 60), m), 0, 12, 6, 4, 15, 12, 10);
    /* Outer product layout: [2,1] * [1,3] -> [2,3]. */
    gb_tensor *o = gb_mul(F64((2, 1), 1, 2), F64((1, 3), 3, 4, 5));
    ASSERT_SHAPE(o, 2, 3);
    ASSERT_VALUES(o, 0, 3, 4, 5, 6, 8, 10);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_broadcast_general_nd) {
    gb_scope_begin();
    /* [4,1,3] vs [2,3] -> [4,2,3]. */
    double av[12], bv[6];
    for (int i = 0; i < 12; i++) av[i] = 100.0 * i;
    for (int i = 0; i < 6; i++) bv[i] = i;
    gb_tensor *a = gb_from_f64(av, GB_SHAPE(4, 1, 3)), *b = gb_from_f64(bv, GB_SHAPE(2, 3));
    gb_tensor *r = gb_add(a, b);
    ASSERT_SHAPE(r, 4, 2, 3);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 3; k++)
                ck_assert_double_eq(gb_get(r, (i * 2 + j) * 3 + k), av[i * 3 + k] + bv[j * 3 + k]);
    /* Middle-axis broadcast on both sides: [2,1,2,1] * [1,3,1,2] -> [2,3,2,2]. */
    gb_tensor *p = gb_mul(F64((2, 1, 2, 1), 1, 2, 3, 4),
                          F64((1, 3, 1, 2), 1, 10, 100, 1000, 1e4, 1e5));
    ASSERT_SHAPE(p, 2, 3, 2, 2);
    const double pa[4] = {1, 2, 3, 4}, pb[6] = {1, 10, 100, 1000, 1e4, 1e5};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 2; l++)
                    ck_assert_double_eq(gb_get(p, ((i * 3 + j) * 2 + k) * 2 + l),
                                        pa[i * 2 + k] * pb[j * 2 + l]);
    /* Integer and comparison kernels take the same path. */
    ASSERT_VALUES(gb_sub(I64((2, 1), 10, 20), I64((3), 1, 2, 3)), 0, 9, 8, 7, 19, 18, 17);
    ASSERT_VALUES(gb_less(F64((2, 1), 1, 5), F64((3), 0, 2, 6)), 0, 0, 1, 1, 0, 0, 1);
    /* Empty outputs are fine. */
    ck_assert_int_eq(gb_size(gb_add(gb_zeros(GB_F32, GB_SHAPE(0, 3)), F32((3), 1, 2, 3))), 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* ---- forward: comparisons and Select ----------------------------------------------- */

START_TEST(test_comparisons) {
    gb_scope_begin();
    gb_tensor *a = F64((4), 1, 2, 3, NAN), *b = F64((4), 2, 2, 1, NAN);
    gb_tensor *eq = gb_equal(a, b);
    ck_assert_int_eq(gb_tensor_dtype(eq), GB_BOOL);
    ASSERT_VALUES(eq, 0, 0, 1, 0, 0);
    ASSERT_VALUES(gb_not_equal(a, b), 0, 1, 0, 1, 1);
    ASSERT_VALUES(gb_less(a, b), 0, 1, 0, 0, 0);
    ASSERT_VALUES(gb_less_equal(a, b), 0, 1, 1, 0, 0);
    ASSERT_VALUES(gb_greater(a, b), 0, 0, 0, 1, 0);
    ASSERT_VALUES(gb_greater_equal(a, b), 0, 0, 1, 1, 0);
    ASSERT_VALUES(gb_less(I32((3), -1, 0, 1), gb_scalar(GB_I32, 0)), 0, 1, 0, 0);
    ASSERT_VALUES(gb_greater(U8((2), 0, 255), U8((2), 1, 254)), 0, 0, 1);
    ASSERT_VALUES(gb_greater_equal(F32((2), 1.5f, 1), F32((2), 1.5f, 2)), 0, 1, 0);
    ASSERT_VALUES(gb_equal(I64((2), 1LL << 50, 3), I64((2), 1LL << 50, 4)), 0, 1, 0);
    ASSERT_VALUES(gb_equal(BOOL((3), 1, 0, 1), BOOL((3), 1, 1, 0)), 0, 1, 0, 0);
    ASSERT_VALUES(gb_not_equal(BOOL((3), 1, 0, 1), BOOL((1), 1)), 0, 0, 1, 0);
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_less(BOOL((1), 1), BOOL((1), 0)));
    assert_error(GB_ERR_DTYPE, "Less: unsupported dtype bool");
    gb_scope_end();
}
END_TEST

START_TEST(test_select) {
    gb_scope_begin();
    gb_tensor *c = BOOL((2, 2), 1, 0, 0, 1);
    ASSERT_VALUES(gb_where(c, F64((2, 2), 1, 2, 3, 4), F64((2, 2), -1, -2, -3, -4)), 0, 1, -2,
                  -3, 4);
    /* Three-way broadcasting: cond [2,1], a [3], b scalar. */
    gb_tensor *r = gb_where(BOOL((2, 1), 1, 0), F32((3), 1, 2, 3), gb_scalar(GB_F32, 9));
    ASSERT_SHAPE(r, 2, 3);
    ASSERT_VALUES(r, 0, 1, 2, 3, 9, 9, 9);
    r = gb_where(BOOL((3), 0, 1, 0), I64((2, 1), 5, 6), I64((1, 3), 7, 8, 9));
    ASSERT_SHAPE(r, 2, 3);
    ASSERT_VALUES(r, 0, 7, 5, 9, 7, 6, 9);
    ASSERT_VALUES(gb_where(BOOL((2), 1, 0), U8((2), 1, 2), U8((2), 3, 4)), 0, 1, 4);
    ASSERT_VALUES(gb_where(BOOL((2), 1, 0), BOOL((2), 0, 0), BOOL((2), 1, 1)), 0, 0, 1);
    ASSERT_VALUES(gb_where(gb_scalar(GB_BOOL, 1), gb_scalar(GB_F64, 2), gb_scalar(GB_F64, 3)), 0,
                  2);
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_where(F32((1), 1), F32((1), 1), F32((1), 2)));
    assert_error(GB_ERR_DTYPE, "Select: the condition must be bool, got float32");
    ck_assert_ptr_null(gb_where(BOOL((1), 1), F32((1), 1), F64((1), 2)));
    assert_error(GB_ERR_DTYPE, "Select: dtype mismatch: float32 vs float64");
    ck_assert_ptr_null(gb_where(BOOL((2), 1, 1), F32((3), 1, 2, 3), F32((3), 1, 2, 3)));
    assert_error(GB_ERR_SHAPE, "Select: incompatible shapes");
    ck_assert_ptr_null(gb_where(BOOL((1), 1), F32((2), 1, 2), F32((3), 1, 2, 3)));
    assert_error(GB_ERR_SHAPE, "Select: incompatible shapes [2] and [3]");
    gb_scope_end();
}
END_TEST

START_TEST(test_scalar_composites) {
    gb_scope_begin();
    gb_tensor *x = F32((2), 1, 2);
    gb_tensor *a = gb_add_scalar(x, 0.5);
    ck_assert_int_eq(gb_tensor_dtype(a), GB_F32);
    ASSERT_VALUES(a, 0, 1.5, 2.5);
    ASSERT_VALUES(gb_mul_scalar(x, -3), 0, -3, -6);
    ASSERT_VALUES(gb_mul_scalar(I64((2), 4, 5), 2), 0, 8, 10);
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_add_scalar(NULL, 1));
    assert_error(GB_ERR_VALUE, "Add: input 0 is NULL");
    gb_scope_end();
}
END_TEST

/* x - s, x / s, x ** s: values, the dtype of x kept, as x op tf.constant(s). */
START_TEST(test_sub_div_pow_scalar) {
    gb_scope_begin();
    gb_tensor *x = F32((3), 1, 2, 4), *d = F64((3), 1, 2, 4);
    gb_tensor *s = gb_sub_scalar(x, 0.5), *q = gb_div_scalar(x, 4), *p = gb_pow_scalar(x, 0.5);
    ck_assert_int_eq(gb_tensor_dtype(s), GB_F32);
    ck_assert_int_eq(gb_tensor_dtype(q), GB_F32);
    ck_assert_int_eq(gb_tensor_dtype(p), GB_F32);
    ASSERT_VALUES(s, 0, 0.5, 1.5, 3.5);
    ASSERT_VALUES(q, 0, 0.25, 0.5, 1);
    ASSERT_VALUES(p, 1e-7, 1, sqrt(2.0), 2);
    ck_assert_int_eq(gb_tensor_dtype(gb_pow_scalar(d, -1)), GB_F64);
    ASSERT_VALUES(gb_pow_scalar(d, -1), 0, 1, 0.5, 0.25);
    ASSERT_VALUES(gb_pow_scalar(d, 0), 0, 1, 1, 1);
    ASSERT_VALUES(gb_sub_scalar(d, -1e-3), 1e-15, 1.001, 2.001, 4.001);
    /* a float32 tensor takes the scalar rounded to float32, as TF would */
    ASSERT_VALUES(gb_sub_scalar(gb_scalar(GB_F32, 0), 0.1), 0, -(double)0.1f);
    /* integers: integer arithmetic, truncating division as gb_div */
    gb_tensor *i = I32((3), 7, -7, 9);
    ck_assert_int_eq(gb_tensor_dtype(gb_div_scalar(i, 2)), GB_I32);
    ASSERT_VALUES(gb_div_scalar(i, 2), 0, 3, -3, 4);
    ASSERT_VALUES(gb_sub_scalar(I64((2), 5, 6), 10), 0, -5, -4);
    ASSERT_VALUES(gb_sub_scalar(U8((2), 5, 6), 5), 0, 0, 1);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* A scalar the tensor's dtype cannot hold is refused, as TensorFlow refuses
 * tf.constant([1, 2]) * 2.5, rather than truncated. */
START_TEST(test_scalar_must_fit_the_dtype) {
    gb_scope_begin();
    gb_tensor *i = I32((2), 1, 2);
    ck_assert_ptr_null(gb_mul_scalar(i, 2.5));
    assert_error(GB_ERR_DTYPE,
                 "Mul: the scalar 2.5 cannot be converted to int32, the dtype of the tensor; cast "
                 "the tensor first (gb_cast)");
    ck_assert_ptr_null(gb_div_scalar(i, 0.5));
    assert_error(GB_ERR_DTYPE, "Div: the scalar 0.5 cannot be converted to int32");
    ck_assert_ptr_null(gb_add_scalar(i, 3e9));
    assert_error(GB_ERR_DTYPE, "cannot be converted to int32");
    ck_assert_ptr_null(gb_sub_scalar(U8((1), 1), -1));
    assert_error(GB_ERR_DTYPE, "Sub: the scalar -1 cannot be converted to uint8");
    ck_assert_ptr_null(gb_add_scalar(I64((1), 1), NAN));
    assert_error(GB_ERR_DTYPE, "the scalar nan cannot be converted to int64");
    ck_assert_ptr_null(gb_add_scalar(I64((1), 1), INFINITY));
    assert_error(GB_ERR_DTYPE, "cannot be converted to int64");
    /* whole numbers in range are fine, at the edges too */
    ASSERT_VALUES(gb_add_scalar(I32((1), 0), -2147483648.0), 0, -2147483648.0);
    ASSERT_VALUES(gb_add_scalar(U8((1), 0), 255), 0, 255);
    /* other errors are the op's own */
    ck_assert_ptr_null(gb_pow_scalar(i, 2));
    assert_error(GB_ERR_DTYPE, "Pow: unsupported dtype int32");
    ck_assert_ptr_null(gb_div_scalar(i, 0));
    assert_error(GB_ERR_VALUE, "Div: integer division by zero");
    ck_assert_ptr_null(gb_pow_scalar(NULL, 2));
    assert_error(GB_ERR_VALUE, "Pow: input 0 is NULL");
    gb_scope_end();
}
END_TEST

/* ---- errors ---------------------------------------------------------------------------- */

START_TEST(test_shape_and_dtype_errors) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_add(gb_zeros(GB_F32, GB_SHAPE(2, 3)), gb_zeros(GB_F32, GB_SHAPE(4))));
    const gb_error *e = gb_last_error();
    ck_assert_str_eq(e->op_type, "Add");
    assert_error(GB_ERR_SHAPE, "Add: incompatible shapes [2,3] and [4]");
    ck_assert_ptr_null(gb_mul(gb_zeros(GB_F64, GB_SHAPE(2, 3)), gb_zeros(GB_F64, GB_SHAPE(3, 2))));
    assert_error(GB_ERR_SHAPE, "Mul: incompatible shapes [2,3] and [3,2]");
    ck_assert_ptr_null(gb_add(gb_zeros(GB_F32, GB_SHAPE(2)), gb_zeros(GB_F64, GB_SHAPE(2))));
    assert_error(GB_ERR_DTYPE, "Add: dtype mismatch: float32 vs float64");
    ck_assert_ptr_null(gb_sub(I32((1), 1), I64((1), 1)));
    assert_error(GB_ERR_DTYPE, "Sub: dtype mismatch: int32 vs int64");
    ck_assert_ptr_null(gb_add(BOOL((1), 1), BOOL((1), 1)));
    assert_error(GB_ERR_DTYPE, "Add: unsupported dtype bool");
    ck_assert_ptr_null(gb_pow(I32((1), 2), I32((1), 2)));
    assert_error(GB_ERR_DTYPE, "Pow: unsupported dtype int32");
    ck_assert_ptr_null(gb_maximum(BOOL((1), 1), BOOL((1), 0)));
    assert_error(GB_ERR_DTYPE, "Maximum: unsupported dtype bool");
    gb_scope_end();
}
END_TEST

START_TEST(test_null_inputs_keep_first_error) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_add(NULL, gb_scalar(GB_F32, 1)));
    assert_error(GB_ERR_VALUE, "Add: input 0 is NULL");
    ck_assert_ptr_null(gb_where(BOOL((1), 1), gb_scalar(GB_F32, 1), NULL));
    assert_error(GB_ERR_VALUE, "Select: input 2 is NULL");
    /* A chain fails once, at its first bad op; later ops keep that error. */
    gb_tensor *bad = gb_add(gb_zeros(GB_F32, GB_SHAPE(2)), gb_zeros(GB_F32, GB_SHAPE(3)));
    gb_tensor *r = gb_div(gb_mul(bad, gb_scalar(GB_F32, 2)), gb_sub(gb_scalar(GB_F32, 1), bad));
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(gb_greater(r, r));
    ck_assert_str_eq(gb_last_error()->op_type, "Add");
    assert_error(GB_ERR_SHAPE, "Add: incompatible shapes [2] and [3]");
    gb_scope_end();
}
END_TEST


/* ---- gradients ------------------------------------------------------------------------- */

#define BINARY_F(name, expr)                                                                  \
    static gb_tensor *name(gb_tensor *const *x, int n, void *u) {                            \
        (void)n;                                                                              \
        (void)u;                                                                              \
        return (expr);                                                                        \
    }
BINARY_F(f_add, gb_add(x[0], x[1]))
BINARY_F(f_sub, gb_sub(x[0], x[1]))
BINARY_F(f_mul, gb_mul(x[0], x[1]))
BINARY_F(f_div, gb_div(x[0], x[1]))
BINARY_F(f_pow, gb_pow(x[0], x[1]))
BINARY_F(f_maximum, gb_maximum(x[0], x[1]))
BINARY_F(f_minimum, gb_minimum(x[0], x[1]))
BINARY_F(f_select, gb_where(gb_greater(x[0], gb_scalar(GB_F64, 0)), x[1], x[2]))
BINARY_F(f_add_scalar, gb_mul_scalar(gb_add_scalar(x[0], 2.5), -3))
BINARY_F(f_sub_scalar, gb_sub_scalar(gb_mul(x[0], x[0]), 0.75))
BINARY_F(f_div_scalar, gb_div_scalar(gb_exp(x[0]), -2.5))
BINARY_F(f_pow_scalar, gb_pow_scalar(x[0], 2.5))
BINARY_F(f_pow_scalar_neg, gb_pow_scalar(x[0], -1.5))

/* Runs every differentiable binary op's gradient check on (a, b). */
static void check_all_binary(gb_tensor *a, gb_tensor *b) {
    gb_tensor *xs[2] = {a, b};
    GC_ASSERT(f_add, xs, 2, NULL);
    GC_ASSERT(f_sub, xs, 2, NULL);
    GC_ASSERT(f_mul, xs, 2, NULL);
    GC_ASSERT(f_div, xs, 2, NULL);
    GC_ASSERT(f_pow, xs, 2, NULL);
    GC_ASSERT(f_maximum, xs, 2, NULL);
    GC_ASSERT(f_minimum, xs, 2, NULL);
}

/* Positive inputs (Pow's base, Div's divisor) in disjoint-ish ranges
 * with distinct values, so Maximum/Minimum never tie. */
START_TEST(test_gradcheck_same_shape) {
    gb_scope_begin();
    check_all_binary(GC_INPUT(0.5, 2, 21, 2, 3), GC_INPUT(0.3, 1.7, 22, 2, 3));
    gb_scope_end();
}
END_TEST

START_TEST(test_gradcheck_broadcasting) {
    gb_scope_begin();
    /* The bias layout [2,3] + [3], both ways round. */
    check_all_binary(GC_INPUT(0.5, 2, 23, 2, 3), GC_INPUT(0.3, 1.7, 24, 3));
    check_all_binary(GC_INPUT(0.5, 2, 25, 3), GC_INPUT(0.3, 1.7, 26, 2, 3));
    /* Outer product layout [2,1] * [1,3]. */
    check_all_binary(GC_INPUT(0.5, 2, 27, 2, 1), GC_INPUT(0.3, 1.7, 28, 1, 3));
    /* Scalar with [2,2], both ways round. */
    check_all_binary(gb_scalar(GB_F64, 1.3), GC_INPUT(0.3, 1.7, 29, 2, 2));
    check_all_binary(GC_INPUT(0.5, 2, 30, 2, 2), gb_scalar(GB_F64, 0.8));
    /* General N-d: [4,1,3] vs [2,3] -> [4,2,3]. */
    check_all_binary(GC_INPUT(0.5, 2, 31, 4, 1, 3), GC_INPUT(0.3, 1.7, 32, 2, 3));
    gb_tensor *xs[1] = {GC_INPUT(-1, 1, 33, 2, 2)};
    GC_ASSERT(f_add_scalar, xs, 1, NULL);
    GC_ASSERT(f_sub_scalar, xs, 1, NULL);
    GC_ASSERT(f_div_scalar, xs, 1, NULL);
    gb_tensor *pos[1] = {GC_INPUT(0.5, 2, 34, 2, 3)}; /* Pow's base */
    GC_ASSERT(f_pow_scalar, pos, 1, NULL);
    GC_ASSERT(f_pow_scalar_neg, pos, 1, NULL);
    gb_scope_end();
}
END_TEST

START_TEST(test_gradcheck_select) {
    gb_scope_begin();
    /* cond comes from x[0] (not differentiated through the comparison). */
    gb_tensor *xs[3] = {GC_INPUT(-1, 1, 34, 2, 3), GC_INPUT(-1, 1, 35, 2, 3),
                        GC_INPUT(-1, 1, 36, 2, 3)};
    GC_ASSERT(f_select, xs, 3, NULL);
    /* Broadcasting: cond [2,3], a [3], b scalar. */
    xs[1] = GC_INPUT(-1, 1, 37, 3);
    xs[2] = gb_scalar(GB_F64, 0.25);
    GC_ASSERT(f_select, xs, 3, NULL);
    /* cond [2,1] broadcast against a [1,3] and b [2,3]. */
    xs[0] = GC_INPUT(-1, 1, 38, 2, 1);
    xs[1] = GC_INPUT(-1, 1, 39, 1, 3);
    xs[2] = GC_INPUT(-1, 1, 40, 2, 3);
    GC_ASSERT(f_select, xs, 3, NULL);
    gb_scope_end();
}
END_TEST

START_TEST(test_select_gradient_values) {
    gb_scope_begin();
    gb_tensor *c = BOOL((2, 2), 1, 0, 0, 1), *a = F64((2), 1, 2), *b = F64((2, 2), 3, 4, 5, 6);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, a);
    gb_tape_watch(t, b);
    gb_tensor *y = gb_where(c, a, b);
    gb_tape_end(t);
    gb_tensor *g[2];
    gb_tape_gradients(t, y, (gb_tensor *const[]){a, b}, 2, g);
    ASSERT_VALUES(g[0], 0, 1, 1);
    ASSERT_VALUES(g[1], 0, 0, 1, 1, 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_maximum_minimum_ties_go_first) {
    gb_scope_begin();
    gb_tensor *a = F64((3), 1, 2, 3), *b = F64((3), 1, 5, 0);
    gb_tape *t = gb_tape_begin_ex(true, true);
    gb_tape_watch(t, a);
    gb_tape_watch(t, b);
    gb_tensor *mx = gb_maximum(a, b), *mn = gb_minimum(a, b);
    gb_tape_end(t);
    gb_tensor *g[2];
    gb_tape_gradients(t, mx, (gb_tensor *const[]){a, b}, 2, g);
    ASSERT_VALUES(g[0], 0, 1, 0, 1);
    ASSERT_VALUES(g[1], 0, 0, 1, 0);
    gb_tape_gradients(t, mn, (gb_tensor *const[]){a, b}, 2, g);
    ASSERT_VALUES(g[0], 0, 1, 1, 0);
    ASSERT_VALUES(g[1], 0, 0, 0, 1);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_pow_x_to_the_x) {
    gb_scope_begin();
    gb_tensor *x = gb_scalar(GB_F64, 3.0);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *y = gb_pow(x, x);
    gb_tape_end(t);
    gb_tensor *g = gb_tape_gradient(t, y, x);
    ASSERT_VALUES(y, 0, 27);
    /* 27 (ln 3 + 1) */
    ASSERT_VALUES(g, 1e-12, 56.66253179403897);
    gb_scope_end();
}
END_TEST

START_TEST(test_pow_gradient_at_nonpositive_base) {
    gb_scope_begin();
    /* d(a^b)/db is 0 where a <= 0 (TF's rule), and nothing is NaN. */
    gb_tensor *a = F64((3), -2, 0, 2), *b = F64((3), 2, 2, 2);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, a);
    gb_tape_watch(t, b);
    gb_tensor *y = gb_pow(a, b);
    gb_tape_end(t);
    gb_tensor *g[2];
    gb_tape_gradients(t, y, (gb_tensor *const[]){a, b}, 2, g);
    ASSERT_VALUES(g[0], 1e-12, -4, 0, 4);
    ASSERT_VALUES(g[1], 1e-12, 0, 0, 4 * log(2.0));
    gb_scope_end();
}
END_TEST

START_TEST(test_broadcast_gradient_shapes) {
    gb_scope_begin();
    gb_tensor *m = F64((2, 3), 1, 2, 3, 4, 5, 6), *bias = F64((3), 1, 1, 1);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, m);
    gb_tape_watch(t, bias);
    gb_tensor *y = gb_mul(gb_add(m, bias), F64((2, 1), 1, 10));
    gb_tape_end(t);
    gb_tensor *g[2];
    gb_tape_gradients(t, y, (gb_tensor *const[]){m, bias}, 2, g);
    ck_assert_int_eq(gb_rank(g[1]), 1);
    ck_assert_int_eq(gb_dim(g[1], 0), 3);
    ASSERT_VALUES(g[0], 0, 1, 1, 1, 10, 10, 10);
    ASSERT_VALUES(g[1], 0, 11, 11, 11);
    gb_scope_end();
}
END_TEST

/* d/d(a, b) of the gradient of sum(w * f(a, b)): differentiates the
 * binary ops' gradient functions (second order). */
typedef gb_tensor *(*binop)(gb_tensor *, gb_tensor *);

static gb_tensor *grad_sum(binop op, gb_tensor *a, gb_tensor *b) {
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, a);
    gb_tape_watch(t, b);
    gb_tensor *y = gb_reduce_sum(gb_square(op(a, b)), GB_ALL_AXES, false);
    gb_tape_end(t);
    gb_tensor *g[2];
    gb_tape_gradients(t, y, (gb_tensor *const[]){a, b}, 2, g);
    /* One output covering both gradients. */
    return gb_add(gb_reduce_sum(g[0], GB_ALL_AXES, false),
                  gb_mul_scalar(gb_reduce_sum(g[1], GB_ALL_AXES, false), 0.5));
}

#define GRAD2_F(name, op)                                                                     \
    static gb_tensor *name(gb_tensor *const *x, int n, void *u) {                            \
        (void)n;                                                                              \
        (void)u;                                                                              \
        return grad_sum(op, x[0], x[1]);                                                      \
    }
GRAD2_F(g2_add, gb_add)
GRAD2_F(g2_sub, gb_sub)
GRAD2_F(g2_mul, gb_mul)
GRAD2_F(g2_div, gb_div)
GRAD2_F(g2_pow, gb_pow)
GRAD2_F(g2_maximum, gb_maximum)
GRAD2_F(g2_minimum, gb_minimum)

START_TEST(test_gradcheck_second_order) {
    gb_scope_begin();
    gb_tensor *xs[2] = {GC_INPUT(0.5, 2, 41, 2, 3), GC_INPUT(0.3, 1.7, 42, 3)};
    GC_ASSERT(g2_add, xs, 2, NULL);
    GC_ASSERT(g2_sub, xs, 2, NULL);
    GC_ASSERT(g2_mul, xs, 2, NULL);
    GC_ASSERT(g2_div, xs, 2, NULL);
    GC_ASSERT(g2_pow, xs, 2, NULL);
    GC_ASSERT(g2_maximum, xs, 2, NULL);
    GC_ASSERT(g2_minimum, xs, 2, NULL);
    gb_scope_end();
}
END_TEST

/* ---- suite ----------------------------------------------------------------------------- */

static Suite *binary_suite(void) {
    Suite *s = suite_create("ops_binary");
    TCase *fwd = tcase_create("forward");
    tcase_add_test(fwd, test_arith_same_shape_float);
    tcase_add_test(fwd, test_arith_integers);
    tcase_add_test(fwd, test_integer_division_by_zero);
    tcase_add_test(fwd, test_maximum_minimum_nan);
    tcase_add_test(fwd, test_broadcast_scalar_sides);
    tcase_add_test(fwd, test_broadcast_rows_and_columns);
    tcase_add_test(fwd, test_broadcast_general_nd);
    tcase_add_test(fwd, test_comparisons);
    tcase_add_test(fwd, test_select);
    tcase_add_test(fwd, test_scalar_composites);
    tcase_add_test(fwd, test_sub_div_pow_scalar);
    suite_add_tcase(s, fwd);
    TCase *err = tcase_create("errors");
    tcase_add_test(err, test_shape_and_dtype_errors);
    tcase_add_test(err, test_null_inputs_keep_first_error);
    tcase_add_test(err, test_scalar_must_fit_the_dtype);
    suite_add_tcase(s, err);
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_gradcheck_same_shape);
    tcase_add_test(grad, test_gradcheck_broadcasting);
    tcase_add_test(grad, test_gradcheck_select);
    tcase_add_test(grad, test_select_gradient_values);
    tcase_add_test(grad, test_maximum_minimum_ties_go_first);
    tcase_add_test(grad, test_pow_x_to_the_x);
    tcase_add_test(grad, test_pow_gradient_at_nonpositive_base);
    tcase_add_test(grad, test_broadcast_gradient_shapes);
    tcase_add_test(grad, test_gradcheck_second_order);
    suite_add_tcase(s, grad);
    return s;
}

int main(void) { return run_suite(binary_suite()); }
