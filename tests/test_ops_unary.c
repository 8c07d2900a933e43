/* test_ops_unary.c — elementwise unary ops, Cast, Identity, StopGradient
 * and the fused gradient helpers (ReluGrad, SigmoidGrad, TanhGrad).
 *
 * Forward values against hand-computed numbers for every op and dtype
 * class, the errors (unsupported dtypes, bad Cast targets, NULL inputs),
 * finite-difference gradient checks for every differentiable op, checks
 * that Relu/Sigmoid/Tanh backpropagate with one fused op, and second
 * derivatives through nested tapes (which exercise the helpers' own
 * gradients).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

#define F64(shape, ...) gb_from_f64((const double[]){__VA_ARGS__}, GB_SHAPE shape)
#define F32(shape, ...) gb_from_f32((const float[]){__VA_ARGS__}, GB_SHAPE shape)
#define I32(shape, ...) gb_tensor_from(GB_I32, (const int32_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define I64(shape, ...) gb_tensor_from(GB_I64, (const int64_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define U8(shape, ...) gb_tensor_from(GB_U8, (const uint8_t[]){__VA_ARGS__}, GB_SHAPE shape)
#define BOOL(shape, ...) gb_tensor_from(GB_BOOL, (const uint8_t[]){__VA_ARGS__}, GB_SHAPE shape)

/* The current error has this code and its message contains `part`. */
/* ---- forward -------------------------------------------------------------------------- */

START_TEST(test_sign_family_all_dtypes) {
    gb_scope_begin();
    gb_tensor *x = F64((3), 1, -2.5, 0);
    ASSERT_VALUES(gb_neg(x), 0, -1, 2.5, 0);
    ck_assert(signbit(gb_get(gb_neg(x), 2)));
    ASSERT_VALUES(gb_abs(F64((3), -1.5, 2, 0)), 0, 1.5, 2, 0);
    ASSERT_VALUES(gb_sign(F64((3), -3, 0, 2)), 0, -1, 0, 1);
    ck_assert(isnan(gb_get(gb_sign(F64((1), NAN)), 0)));
    ASSERT_VALUES(gb_square(F32((2), 3, -0.5f)), 0, 9, 0.25);
    ck_assert_int_eq(gb_tensor_dtype(gb_square(F32((1), 1))), GB_F32);

    gb_tensor *i = I32((3), -5, 0, 7);
    ck_assert_int_eq(gb_tensor_dtype(gb_neg(i)), GB_I32);
    ASSERT_VALUES(gb_neg(i), 0, 5, 0, -7);
    ASSERT_VALUES(gb_abs(i), 0, 5, 0, 7);
    ASSERT_VALUES(gb_sign(i), 0, -1, 0, 1);
    ASSERT_VALUES(gb_square(i), 0, 25, 0, 49);
    ASSERT_VALUES(gb_neg(I64((2), 1LL << 40, -3)), 0, -(double)(1LL << 40), 3);
    ASSERT_VALUES(gb_abs(I64((1), -(1LL << 40))), 0, (double)(1LL << 40));
    ASSERT_VALUES(gb_sign(I64((2), -9, 9)), 0, -1, 1);
    ASSERT_VALUES(gb_square(I64((1), -3000000)), 0, 9e12);
    /* uint8 wraps, as in TensorFlow. */
    ASSERT_VALUES(gb_neg(U8((2), 1, 0)), 0, 255, 0);
    ASSERT_VALUES(gb_abs(U8((1), 200)), 0, 200);
    ASSERT_VALUES(gb_sign(U8((2), 0, 5)), 0, 0, 1);
    ASSERT_VALUES(gb_square(U8((2), 3, 16)), 0, 9, 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_math_float64) {
    gb_scope_begin();
    const double e = exp(1.0);
    ASSERT_VALUES(gb_exp(F64((2), 0, 1)), 1e-15, 1, e);
    ASSERT_VALUES(gb_log(F64((2), 1, e)), 1e-15, 0, 1);
    ASSERT_VALUES(gb_log1p(F64((2), 0, e - 1)), 1e-15, 0, 1);
    ASSERT_VALUES(gb_sqrt(F64((2), 4, 2)), 1e-15, 2, sqrt(2.0));
    ASSERT_VALUES(gb_rsqrt(F64((2), 4, 0.25)), 1e-15, 0.5, 2);
    ASSERT_VALUES(gb_reciprocal(F64((2), 4, -0.5)), 0, 0.25, -2);
    ASSERT_VALUES(gb_sin(F64((2), 0, M_PI / 2)), 1e-15, 0, 1);
    ASSERT_VALUES(gb_cos(F64((2), 0, M_PI)), 1e-15, 1, -1);
    ASSERT_VALUES(gb_tanh(F64((2), 0, 1)), 1e-15, 0, 0.7615941559557649);
    ASSERT_VALUES(gb_sigmoid(F64((4), 0, 2, -1000, 1000)), 1e-15, 0.5, 0.8807970779778823, 0, 1);
    ASSERT_VALUES(gb_relu(F64((3), -1, 0, 2)), 0, 0, 0, 2);
    ASSERT_VALUES(gb_leaky_relu(F64((2), -1, 3), 0.2), 1e-15, -0.2, 3);
    ASSERT_VALUES(gb_elu(F64((2), -1, 2)), 1e-15, -0.6321205588285577, 2);
    ASSERT_VALUES(gb_gelu(F64((2), 1, -1), false), 1e-15, 0.8413447460685429,
                  -0.15865525393145707);
    ASSERT_VALUES(gb_gelu(F64((2), 1, -1), true), 1e-15, 0.8411919906082768,
                  -0.15880800939172324);
    /* Stable at both ends: no overflow to inf, no underflow to 0 of log(1+tiny). */
    ASSERT_VALUES(gb_softplus(F64((3), 0, 100, -100)), 1e-15, 0.6931471805599453, 100,
                  3.720075976020836e-44);
    ck_assert(gb_get(gb_softplus(F64((1), -100)), 0) > 0);
    ASSERT_VALUES(gb_softplus(F64((1), 1000)), 0, 1000);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_math_float32) {
    gb_scope_begin();
    gb_tensor *x = F32((3), 0.5f, 1, 2);
    gb_tensor *y = gb_exp(x);
    ck_assert_int_eq(gb_tensor_dtype(y), GB_F32);
    ASSERT_VALUES(y, 1e-6, exp(0.5), exp(1.0), exp(2.0));
    ASSERT_VALUES(gb_log(x), 1e-6, log(0.5), 0, log(2.0));
    ASSERT_VALUES(gb_log1p(x), 1e-6, log1p(0.5), log1p(1.0), log1p(2.0));
    ASSERT_VALUES(gb_sqrt(x), 1e-6, sqrt(0.5), 1, sqrt(2.0));
    ASSERT_VALUES(gb_rsqrt(x), 1e-6, 1 / sqrt(0.5), 1, 1 / sqrt(2.0));
    ASSERT_VALUES(gb_reciprocal(x), 1e-6, 2, 1, 0.5);
    ASSERT_VALUES(gb_sin(x), 1e-6, sin(0.5), sin(1.0), sin(2.0));
    ASSERT_VALUES(gb_cos(x), 1e-6, cos(0.5), cos(1.0), cos(2.0));
    ASSERT_VALUES(gb_tanh(x), 1e-6, tanh(0.5), tanh(1.0), tanh(2.0));
    ASSERT_VALUES(gb_sigmoid(F32((2), 0, -200)), 1e-7, 0.5, 0);
    ASSERT_VALUES(gb_relu(F32((2), -3, 3)), 0, 0, 3);
    ASSERT_VALUES(gb_leaky_relu(F32((2), -2, 2), 0.1), 1e-7, -0.2, 2);
    ASSERT_VALUES(gb_elu(F32((2), -1, 1)), 1e-6, -0.6321205588285577, 1);
    ASSERT_VALUES(gb_gelu(F32((1), 1), false), 1e-6, 0.8413447460685429);
    ASSERT_VALUES(gb_gelu(F32((1), 1), true), 1e-6, 0.8411919906082768);
    ASSERT_VALUES(gb_softplus(F32((3), 0, 100, -100)), 1e-6, 0.6931471805599453, 100, 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_cast) {
    gb_scope_begin();
    gb_tensor *x = F64((4), 1.7, -2.7, 0, 250);
    gb_tensor *i = gb_cast(x, GB_I32);
    ck_assert_int_eq(gb_tensor_dtype(i), GB_I32);
    ASSERT_VALUES(i, 0, 1, -2, 0, 250);
    ASSERT_VALUES(gb_cast(x, GB_I64), 0, 1, -2, 0, 250);
    ASSERT_VALUES(gb_cast(F64((2), 3.9, 250), GB_U8), 0, 3, 250);
    gb_tensor *b = gb_cast(x, GB_BOOL);
    ck_assert_int_eq(gb_tensor_dtype(b), GB_BOOL);
    ASSERT_VALUES(b, 0, 1, 1, 0, 1);
    ASSERT_VALUES(gb_cast(BOOL((2), 1, 0), GB_F32), 0, 1, 0);
    ASSERT_VALUES(gb_cast(I32((2), -3, 7), GB_F64), 0, -3, 7);
    ASSERT_VALUES(gb_cast(U8((2), 255, 1), GB_I32), 0, 255, 1);
    ASSERT_VALUES(gb_cast(I64((2), 0, -4), GB_BOOL), 0, 0, 1);
    gb_tensor *f = gb_cast(F64((1), 0.1), GB_F32);
    ck_assert_int_eq(gb_tensor_dtype(f), GB_F32);
    ck_assert_float_eq(((const float *)gb_data(f))[0], 0.1f);
    /* The same dtype is a copy. */
    gb_tensor *same = gb_cast(x, GB_F64);
    ck_assert_ptr_ne(gb_data(same), gb_data(x));
    ASSERT_VALUES(same, 0, 1.7, -2.7, 0, 250);
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_cast(x, (gb_dtype)99));
    assert_error(GB_ERR_DTYPE, "Cast: invalid target dtype 99");
    gb_scope_end();
}
END_TEST

START_TEST(test_identity_copies) {
    gb_scope_begin();
    gb_tensor *x = F32((2, 2), 1, 2, 3, 4);
    gb_tensor *y = gb_copy(x);
    ck_assert_ptr_ne(y, x);
    ck_assert_ptr_ne(gb_data(y), gb_data(x));
    ck_assert(gb_same_shape(x, y));
    ck_assert_int_eq(gb_tensor_dtype(y), GB_F32);
    ASSERT_VALUES(y, 0, 1, 2, 3, 4);
    ASSERT_VALUES(gb_copy(BOOL((2), 1, 0)), 0, 1, 0);
    ASSERT_VALUES(gb_copy(I64((1), -5)), 0, -5);
    ck_assert_int_eq(gb_rank(gb_copy(gb_scalar(GB_F64, 2))), 0);
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_stop_gradient_shares_memory) {
    gb_scope_begin();
    gb_tensor *x = F64((2), 1, 2);
    gb_tensor *s = gb_stop_gradient(x);
    ck_assert_ptr_ne(s, x);
    ck_assert_ptr_eq(gb_data(s), gb_data(x));
    ASSERT_VALUES(s, 0, 1, 2);
    /* A view of a variable's value keeps that value alive and unchanged
     * through an assignment and even the variable's end. */
    gb_variable *v = gb_variable_new("v", F64((2), 5, 6), true);
    gb_scope_begin();
    gb_tensor *sv = gb_stop_gradient(gb_variable_value(v));
    gb_variable_assign(v, F64((2), 7, 8));
    gb_variable_free(v);
    ASSERT_VALUES(sv, 0, 5, 6);
    gb_scope_end();
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* ---- errors ---------------------------------------------------------------------------- */

START_TEST(test_dtype_errors) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_exp(BOOL((1), 1)));
    ck_assert_str_eq(gb_last_error()->op_type, "Exp");
    assert_error(GB_ERR_DTYPE, "Exp: unsupported dtype bool");
    ck_assert_ptr_null(gb_log(I32((1), 1)));
    assert_error(GB_ERR_DTYPE, "Log: unsupported dtype int32");
    ck_assert_ptr_null(gb_sigmoid(I64((1), 1)));
    assert_error(GB_ERR_DTYPE, "Sigmoid: unsupported dtype int64");
    ck_assert_ptr_null(gb_relu(U8((1), 1)));
    assert_error(GB_ERR_DTYPE, "Relu: unsupported dtype uint8");
    ck_assert_ptr_null(gb_neg(BOOL((1), 1)));
    assert_error(GB_ERR_DTYPE, "Neg: unsupported dtype bool");
    ck_assert_ptr_null(gb_gelu(I32((1), 1), false));
    assert_error(GB_ERR_DTYPE, "Gelu: unsupported dtype int32");
    ck_assert_ptr_null(gb_leaky_relu(I32((1), 1), 0.2));
    assert_error(GB_ERR_DTYPE, "LeakyRelu: unsupported dtype int32");
    gb_scope_end();
}
END_TEST

/* float32 Tanh is a vectorized approximation (ops/fast_math.h): within
 * 1e-7 of float64 tanh over [-20, 20] in steps of 1/1024, within 3e-7
 * relative near zero (where a form from e^2x would cancel), odd (-0 stays
 * -0), saturating to ±1, NaN kept. */
START_TEST(test_tanh_float32_accuracy) {
    gb_scope_begin();
    enum { N = 40 * 1024 + 1 };
    float *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++) v[i] = (float)(-20.0 + i / 1024.0);
    int64_t dims[1] = {N};
    gb_tensor *y = gb_tanh(gb_tensor_from(GB_F32, v, 1, dims));
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double err = fabs(gb_get(y, i) - tanh((double)v[i]));
        worst = err > worst ? err : worst;
    }
    ck_assert_msg(worst < 1e-7, "worst error %g", worst);
    gb_tensor *edge = gb_tanh(F32((5), NAN, INFINITY, -INFINITY, 0, -1e-30f));
    ck_assert(isnan(gb_get(edge, 0)));
    ck_assert(gb_get(edge, 1) == 1 && gb_get(edge, 2) == -1 && gb_get(edge, 3) == 0);
    ck_assert(gb_get(edge, 4) == (double)-1e-30f);
    ck_assert(signbit(gb_get(gb_tanh(F32((1), -0.0f)), 0)));
    const float small[] = {1e-3f, -2.5e-4f, 1.5e-5f, 3e-7f, -7e-12f, 1e-38f};
    gb_tensor *ys = gb_tanh(gb_tensor_from(GB_F32, small, 1, (int64_t[]){6}));
    for (int i = 0; i < 6; i++) {
        double ref = tanh((double)small[i]);
        ck_assert_msg(fabs(gb_get(ys, i) - ref) <= 3e-7 * fabs(ref), "tanh(%g) = %.9g, not %.9g",
                      small[i], gb_get(ys, i), ref);
    }
    free(v);
    gb_scope_end();
}
END_TEST

/* float32 exact Gelu uses a vectorized erf (ops/fast_math.h): x Phi(x)
 * within 3e-7 (absolute, plus 3e-7 relative for large |x|) of float64
 * over [-10, 10] in steps of 1/1024; NaN kept; +-inf give inf and 0. */
START_TEST(test_gelu_float32_accuracy) {
    gb_scope_begin();
    enum { N = 20 * 1024 + 1 };
    float *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++) v[i] = (float)(-10.0 + i / 1024.0);
    gb_tensor *y = gb_gelu(gb_tensor_from(GB_F32, v, 1, (int64_t[]){N}), false);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double x = v[i], ref = x * 0.5 * (1 + erf(x / sqrt(2.0)));
        double err = fabs(gb_get(y, i) - ref) / (1 + fabs(ref));
        worst = err > worst ? err : worst;
    }
    ck_assert_msg(worst < 3e-7, "worst error %g", worst);
    gb_tensor *edge = gb_gelu(F32((3), NAN, INFINITY, -INFINITY), false);
    ck_assert(isnan(gb_get(edge, 0)) && gb_get(edge, 1) == INFINITY);
    free(v);
    gb_scope_end();
}
END_TEST

START_TEST(test_null_inputs_keep_first_error) {
    gb_scope_begin();
    ck_assert_ptr_null(gb_exp(NULL));
    assert_error(GB_ERR_VALUE, "Exp: input 0 is NULL");
    ck_assert_ptr_null(gb_cast(NULL, GB_F32));
    assert_error(GB_ERR_VALUE, "Cast: input 0 is NULL");
    gb_tensor *bad = gb_log(BOOL((1), 1));
    gb_tensor *r = gb_tanh(gb_copy(gb_stop_gradient(gb_sqrt(gb_cast(bad, GB_F32)))));
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(gb_gelu(r, true));
    ck_assert_str_eq(gb_last_error()->op_type, "Log");
    assert_error(GB_ERR_DTYPE, "Log: unsupported dtype bool");
    gb_scope_end();
}
END_TEST

/* ---- gradients -------------------------------------------------------------------------- */

#define UNARY_F(name, expr)                                                                  \
    static gb_tensor *name(gb_tensor *const *x, int n, void *u) {                           \
        (void)n;                                                                             \
        (void)u;                                                                             \
        return (expr);                                                                       \
    }
UNARY_F(f_neg, gb_neg(x[0]))
UNARY_F(f_abs, gb_abs(x[0]))
UNARY_F(f_sign, gb_mul(gb_sign(x[0]), x[0]))
UNARY_F(f_exp, gb_exp(x[0]))
UNARY_F(f_log, gb_log(x[0]))
UNARY_F(f_log1p, gb_log1p(x[0]))
UNARY_F(f_sqrt, gb_sqrt(x[0]))
UNARY_F(f_rsqrt, gb_rsqrt(x[0]))
UNARY_F(f_square, gb_square(x[0]))
UNARY_F(f_reciprocal, gb_reciprocal(x[0]))
UNARY_F(f_sin, gb_sin(x[0]))
UNARY_F(f_cos, gb_cos(x[0]))
UNARY_F(f_tanh, gb_tanh(x[0]))
UNARY_F(f_sigmoid, gb_sigmoid(x[0]))
UNARY_F(f_relu, gb_relu(x[0]))
UNARY_F(f_leaky_relu, gb_leaky_relu(x[0], 0.2))
UNARY_F(f_elu, gb_elu(x[0]))
UNARY_F(f_gelu_exact, gb_gelu(x[0], false))
UNARY_F(f_gelu_tanh, gb_gelu(x[0], true))
UNARY_F(f_softplus, gb_softplus(x[0]))
UNARY_F(f_identity, gb_copy(x[0]))
UNARY_F(f_cast_roundtrip, gb_cast(gb_cast(x[0], GB_F64), GB_F64))

/* Inputs in [lo, hi) with a sign flip on every other element, staying
 * |x| >= lo away from the kinks at zero. */
static gb_tensor *away_from_zero(double lo, double hi, uint64_t seed) {
    gb_tensor *m = GC_INPUT(lo, hi, seed, 2, 3);
    return gb_mul(m, F64((2, 3), 1, -1, 1, -1, 1, -1));
}

START_TEST(test_gradcheck_unary) {
    gb_scope_begin();
    gb_tensor *any = GC_INPUT(-2, 2, 1, 2, 3);
    gb_tensor *pos = GC_INPUT(0.2, 3, 2, 2, 3);
    gb_tensor *kinked = away_from_zero(0.1, 2, 3);
    gb_tensor *xs[1];
    xs[0] = kinked;
    GC_ASSERT(f_neg, xs, 1, NULL);
    GC_ASSERT(f_abs, xs, 1, NULL);
    GC_ASSERT(f_sign, xs, 1, NULL);
    GC_ASSERT(f_relu, xs, 1, NULL);
    GC_ASSERT(f_leaky_relu, xs, 1, NULL);
    GC_ASSERT(f_elu, xs, 1, NULL);
    GC_ASSERT(f_reciprocal, xs, 1, NULL);
    xs[0] = any;
    GC_ASSERT(f_exp, xs, 1, NULL);
    GC_ASSERT(f_square, xs, 1, NULL);
    GC_ASSERT(f_sin, xs, 1, NULL);
    GC_ASSERT(f_cos, xs, 1, NULL);
    GC_ASSERT(f_tanh, xs, 1, NULL);
    GC_ASSERT(f_sigmoid, xs, 1, NULL);
    GC_ASSERT(f_gelu_exact, xs, 1, NULL);
    GC_ASSERT(f_gelu_tanh, xs, 1, NULL);
    GC_ASSERT(f_softplus, xs, 1, NULL);
    GC_ASSERT(f_identity, xs, 1, NULL);
    GC_ASSERT(f_cast_roundtrip, xs, 1, NULL);
    xs[0] = pos;
    GC_ASSERT(f_log, xs, 1, NULL);
    GC_ASSERT(f_log1p, xs, 1, NULL);
    GC_ASSERT(f_sqrt, xs, 1, NULL);
    GC_ASSERT(f_rsqrt, xs, 1, NULL);
    gb_scope_end();
}
END_TEST

START_TEST(test_sign_gradient_is_zero) {
    gb_scope_begin();
    gb_tensor *x = F64((2), -1.5, 2);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *y = gb_sign(x);
    gb_tape_end(t);
    gb_tensor *g = gb_tape_gradient(t, y, x);
    ASSERT_VALUES(g, 0, 0, 0);
    gb_scope_end();
}
END_TEST

/* Floats to integers saturate at the type's ends and NaN becomes 0: a
 * plain cast of NaN or of a value past the range is undefined behaviour. */
START_TEST(test_cast_saturates) {
    gb_scope_begin();
    gb_tensor *x = F32((6), NAN, -5, 300, 1e20f, -1e20f, 7.9f);
    gb_tensor *u8 = gb_cast(x, GB_U8), *i32 = gb_cast(x, GB_I32), *i64 = gb_cast(x, GB_I64);
    const double want_u8[] = {0, 0, 255, 255, 0, 7};
    const double want_i32[] = {0, -5, 300, INT32_MAX, INT32_MIN, 7};
    for (int i = 0; i < 6; i++) {
        ck_assert_double_eq(gb_get(u8, i), want_u8[i]);
        ck_assert_double_eq(gb_get(i32, i), want_i32[i]);
    }
    ck_assert(((const int64_t *)gb_data(i64))[3] == (int64_t)1e20f);
    ck_assert(((const int64_t *)gb_data(i64))[0] == 0);
    ck_assert(((const int64_t *)gb_data(gb_cast(F64((1), 1e300), GB_I64)))[0] == INT64_MAX);
    gb_scope_end();
}
END_TEST

START_TEST(test_cast_gradient) {
    gb_scope_begin();
    gb_tensor *x = F64((2), 1.5, -2);
    gb_tape *t = gb_tape_begin_ex(true, true);
    gb_tape_watch(t, x);
    gb_tensor *y = gb_mul(gb_cast(x, GB_F32), F32((2), 3, 4));
    gb_tensor *z = gb_cast(gb_cast(x, GB_I32), GB_F64);
    gb_tape_end(t);
    gb_tensor *g = gb_tape_gradient(t, y, x);
    ck_assert_int_eq(gb_tensor_dtype(g), GB_F64);
    ASSERT_VALUES(g, 0, 3, 4);
    /* Through an integer no gradient flows. */
    ck_assert_ptr_null(gb_tape_gradient(t, z, x));
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

START_TEST(test_stop_gradient_blocks) {
    gb_scope_begin();
    gb_tensor *x = F64((2), 3, -2);
    gb_tape *t = gb_tape_begin_ex(true, true);
    gb_tape_watch(t, x);
    gb_tensor *y = gb_mul(x, gb_stop_gradient(x));
    gb_tensor *z = gb_stop_gradient(gb_square(x));
    gb_tape_end(t);
    /* d(x * c)/dx with c = x held constant: c. */
    ASSERT_VALUES(gb_tape_gradient(t, y, x), 0, 3, -2);
    ck_assert_ptr_null(gb_tape_gradient(t, z, x));
    ck_assert(gb_ok());
    gb_scope_end();
}
END_TEST

/* Counts the ops that ran, by type, while op timing is on. */
typedef struct op_log {
    int n;
    char types[16][32];
} op_log;

static void log_op(const gb_event *ev, void *user) {
    op_log *l = user;
    if (l->n < 16) snprintf(l->types[l->n], sizeof l->types[0], "%s", ev->op_type);
    l->n++;
}

/* The backward pass of op(x) alone, as a list of op types. */
static void backward_ops(gb_tensor *(*op)(gb_tensor *), op_log *l) {
    gb_tensor *x = F64((3), -0.5, 0.5, 2);
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *y = op(x);
    gb_tape_end(t);
    memset(l, 0, sizeof *l);
    int id = gb_observer_add(log_op, l, GB_EVENT_OP);
    gb_set_op_timing(true);
    gb_tensor *g = gb_tape_gradient(t, y, x);
    gb_set_op_timing(false);
    gb_observer_remove(id);
    ck_assert_ptr_nonnull(g);
}

START_TEST(test_fused_backward_is_one_op) {
    gb_scope_begin();
    op_log l;
    backward_ops(gb_relu, &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert_str_eq(l.types[0], "ReluGrad");
    backward_ops(gb_sigmoid, &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert_str_eq(l.types[0], "SigmoidGrad");
    backward_ops(gb_tanh, &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert_str_eq(l.types[0], "TanhGrad");
    gb_scope_end();
}
END_TEST

START_TEST(test_fused_helper_values) {
    gb_scope_begin();
    gb_tensor *x = F64((3), -0.5, 0.5, 2), *w = F64((3), 2, 3, 5);
    gb_tensor *(*ops[3])(gb_tensor *) = {gb_relu, gb_sigmoid, gb_tanh};
    double expect[3][3];
    for (int i = 0; i < 3; i++) {
        double v = gb_get(x, i), s = 1 / (1 + exp(-v)), th = tanh(v), wi = gb_get(w, i);
        expect[0][i] = v > 0 ? wi : 0;
        expect[1][i] = wi * s * (1 - s);
        expect[2][i] = wi * (1 - th * th);
    }
    for (int k = 0; k < 3; k++) {
        gb_tape *t = gb_tape_begin();
        gb_tape_watch(t, x);
        gb_tensor *y = ops[k](x);
        gb_tape_end(t);
        gb_tensor *g = NULL;
        gb_source src = GB_SRC(x);
        gb_tape_gradient_ex(t, &y, 1, &w, &src, 1, GB_UNCONNECTED_NONE, &g);
        ASSERT_VALUES(g, 1e-15, expect[k][0], expect[k][1], expect[k][2]);
    }
    gb_scope_end();
}
END_TEST

/* The first derivative of an op with upstream gradient d, computed by an
 * inner tape: gradient-checking it differentiates the backward pass (the
 * fused helpers) with respect to both x and d. */
static gb_tensor *first_derivative(gb_tensor *(*op)(gb_tensor *), gb_tensor *x, gb_tensor *d) {
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, x);
    gb_tensor *y = op(x);
    gb_tape_end(t);
    gb_tensor *g = NULL;
    gb_source src = GB_SRC(x);
    gb_tape_gradient_ex(t, &y, 1, &d, &src, 1, GB_UNCONNECTED_NONE, &g);
    return g;
}

static gb_tensor *gelu_exact(gb_tensor *x) { return gb_gelu(x, false); }
static gb_tensor *gelu_tanh(gb_tensor *x) { return gb_gelu(x, true); }
static gb_tensor *leaky(gb_tensor *x) { return gb_leaky_relu(x, 0.3); }

#define DERIV_F(name, op)                                                                     \
    static gb_tensor *name(gb_tensor *const *x, int n, void *u) {                            \
        (void)n;                                                                              \
        (void)u;                                                                              \
        return first_derivative(op, x[0], x[1]);                                              \
    }
DERIV_F(d_relu, gb_relu)
DERIV_F(d_sigmoid, gb_sigmoid)
DERIV_F(d_tanh, gb_tanh)
DERIV_F(d_gelu_exact, gelu_exact)
DERIV_F(d_gelu_tanh, gelu_tanh)
DERIV_F(d_elu, gb_elu)
DERIV_F(d_leaky, leaky)
DERIV_F(d_softplus, gb_softplus)
DERIV_F(d_sqrt, gb_sqrt)
DERIV_F(d_rsqrt, gb_rsqrt)
DERIV_F(d_reciprocal, gb_reciprocal)
DERIV_F(d_abs, gb_abs)
DERIV_F(d_log, gb_log)

START_TEST(test_gradcheck_of_gradients) {
    gb_scope_begin();
    gb_tensor *xs[2] = {GC_INPUT(-2, 2, 11, 2, 3), GC_INPUT(-1, 1, 12, 2, 3)};
    GC_ASSERT(d_sigmoid, xs, 2, NULL);
    GC_ASSERT(d_tanh, xs, 2, NULL);
    GC_ASSERT(d_gelu_exact, xs, 2, NULL);
    GC_ASSERT(d_gelu_tanh, xs, 2, NULL);
    GC_ASSERT(d_softplus, xs, 2, NULL);
    xs[0] = away_from_zero(0.1, 2, 13);
    GC_ASSERT(d_relu, xs, 2, NULL);
    GC_ASSERT(d_elu, xs, 2, NULL);
    GC_ASSERT(d_leaky, xs, 2, NULL);
    GC_ASSERT(d_reciprocal, xs, 2, NULL);
    GC_ASSERT(d_abs, xs, 2, NULL);
    xs[0] = GC_INPUT(0.3, 3, 14, 2, 3);
    GC_ASSERT(d_sqrt, xs, 2, NULL);
    GC_ASSERT(d_rsqrt, xs, 2, NULL);
    GC_ASSERT(d_log, xs, 2, NULL);
    gb_scope_end();
}
END_TEST

static gb_tensor *tanh_of(gb_tensor *x) { return gb_tanh(x); }
static gb_tensor *gelu_of(gb_tensor *x) { return gb_gelu(x, false); }

START_TEST(test_second_derivative_tanh) {
    gb_scope_begin();
    gb_tensor *dy, *d2y;
    gc_derivatives(tanh_of, gb_scalar(GB_F64, 0.5), &dy, &d2y);
    double t = tanh(0.5);
    ASSERT_VALUES(dy, 1e-15, 1 - t * t);
    ASSERT_VALUES(d2y, 1e-15, -0.7268619813835873);
    gb_scope_end();
}
END_TEST

START_TEST(test_second_derivative_gelu_exact) {
    gb_scope_begin();
    /* gelu''(x) = phi(x) (2 - x^2). */
    gb_tensor *dy, *d2y;
    gc_derivatives(gelu_of, gb_scalar(GB_F64, 0.5), &dy, &d2y);
    const double phi = 0.3520653267642995, Phi = 0.6914624612740131;
    ASSERT_VALUES(dy, 1e-15, Phi + 0.5 * phi);
    ASSERT_VALUES(d2y, 1e-15, phi * (2 - 0.25));
    gb_scope_end();
}
END_TEST

/* ---- suite -------------------------------------------------------------------------------- */

static Suite *unary_suite(void) {
    Suite *s = suite_create("ops_unary");
    TCase *fwd = tcase_create("forward");
    tcase_add_test(fwd, test_sign_family_all_dtypes);
    tcase_add_test(fwd, test_math_float64);
    tcase_add_test(fwd, test_math_float32);
    tcase_add_test(fwd, test_tanh_float32_accuracy);
    tcase_add_test(fwd, test_gelu_float32_accuracy);
    tcase_add_test(fwd, test_cast);
    tcase_add_test(fwd, test_identity_copies);
    tcase_add_test(fwd, test_stop_gradient_shares_memory);
    suite_add_tcase(s, fwd);
    TCase *err = tcase_create("errors");
    tcase_add_test(err, test_dtype_errors);
    tcase_add_test(err, test_null_inputs_keep_first_error);
    suite_add_tcase(s, err);
    TCase *grad = tcase_create("gradients");
    tcase_add_test(grad, test_gradcheck_unary);
    tcase_add_test(grad, test_sign_gradient_is_zero);
    tcase_add_test(grad, test_cast_gradient);
    tcase_add_test(grad, test_cast_saturates);
    tcase_add_test(grad, test_stop_gradient_blocks);
    tcase_add_test(grad, test_fused_backward_is_one_op);
    tcase_add_test(grad, test_fused_helper_values);
    tcase_add_test(grad, test_gradcheck_of_gradients);
    tcase_add_test(grad, test_second_derivative_tanh);
    tcase_add_test(grad, test_second_derivative_gelu_exact);
    suite_add_tcase(s, grad);
    return s;
}

int main(void) { return run_suite(unary_suite()); }
