/* ops/isa/ew_unary.c — the kernels of the elementwise unary ops (Neg ...
 * Softplus) and of the fused gradient helpers (ReluGrad, SigmoidGrad,
 * TanhGrad, GeluGrad), compiled once per ISA level (core/isa.h); ops/unary.c holds
 * the ops themselves and picks the table of the level in force.
 *
 * Every math op is an expression over the element type, stamped out per
 * dtype (ops/elementwise_types.h) into one tight loop; <tgmath.h> makes
 * exp() on a float call expf(). Tanh on float (Tanh, and Gelu's tanh form)
 * is ops/fast_math.h's, which
 * vectorizes (libm's tanhf is a call per element) at every level: the
 * build lets the compiler assume no floating-point traps, without which it
 * would not compute both sides of tanh's select unmasked, and on AVX2
 * (no mask registers) kept the whole loop scalar.
 */
#include <tgmath.h>

#include "ops/elementwise_types.h"
#include "ops/fast_math.h"

/* Element expressions E_<op>(T, U, CLASS, x); `alpha` and `mode` come
 * from the attributes (LeakyRelu's slope, Gelu's variant). */
#define E_neg(T, U, CL, x) (-(U)(x))
#define E_abs(T, U, CL, x) ABS_##CL(T, U, x)
#define ABS_F(T, U, x) fabs(x)
#define ABS_S(T, U, x) ((x) < 0 ? (T)((U)0 - (U)(x)) : (x))
#define ABS_U(T, U, x) (x)
#define E_sign(T, U, CL, x) SIGN_##CL(T, x)
/* Floats keep x itself at zero and NaN (signed zero and NaN pass). */
#define SIGN_F(T, x) ((x) > 0 ? (T)1 : (x) < 0 ? (T)-1 : (x))
#define SIGN_S(T, x) ((T)(((x) > 0) - ((x) < 0)))
#define SIGN_U(T, x) ((T)((x) > 0))
#define E_square(T, U, CL, x) ((U)(x) * (U)(x))
#define E_exp(T, U, CL, x) exp(x)
#define E_log(T, U, CL, x) log(x)
#define E_log1p(T, U, CL, x) log1p(x)
#define E_sqrt(T, U, CL, x) sqrt(x)
#define E_rsqrt(T, U, CL, x) ((T)1 / sqrt(x))
#define E_reciprocal(T, U, CL, x) ((T)1 / (x))
#define E_sin(T, U, CL, x) sin(x)
#define E_cos(T, U, CL, x) cos(x)
#define E_tanh(T, U, CL, x) GB_TANH(x)
#define E_sigmoid(T, U, CL, x) ((T)1 / ((T)1 + exp(-(x))))
#define E_relu(T, U, CL, x) ((x) > 0 ? (x) : (T)0)
#define E_leaky_relu(T, U, CL, x) ((x) > 0 ? (x) : (T)alpha * (x))
#define E_elu(T, U, CL, x) ((x) > 0 ? (x) : expm1(x))
/* log(1 + e^x) without overflow for large x. */
#define E_softplus(T, U, CL, x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
/* Phi(x), the standard normal CDF; exact Gelu is x * Phi(x). */
#define NORMAL_CDF(T, x) ((T)0.5 * ((T)1 + GB_ERF((x) * (T)M_SQRT1_2)))
#define GEN_MAP(op, DT, sfx, T, U, CL)                                                        \
    static void op##_##sfx(int64_t n, const void *px, void *pr, const gb_attrs *at) {         \
        const T *restrict x_ = px;                                                            \
        T *restrict r_ = pr;                                                                  \
        const double alpha = at->f[0];                                                        \
        (void)alpha;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const T x = x_[i];                                                                \
            r_[i] = (T)(E_##op(T, U, CL, x));                                                 \
        }                                                                                     \
    }

GB_EW_NUMERIC_TYPES(GEN_MAP, neg)
GB_EW_NUMERIC_TYPES(GEN_MAP, abs)
GB_EW_NUMERIC_TYPES(GEN_MAP, sign)
GB_EW_NUMERIC_TYPES(GEN_MAP, square)
GB_EW_FLOAT_TYPES(GEN_MAP, exp)
GB_EW_FLOAT_TYPES(GEN_MAP, log)
GB_EW_FLOAT_TYPES(GEN_MAP, log1p)
GB_EW_FLOAT_TYPES(GEN_MAP, sqrt)
GB_EW_FLOAT_TYPES(GEN_MAP, rsqrt)
GB_EW_FLOAT_TYPES(GEN_MAP, reciprocal)
GB_EW_FLOAT_TYPES(GEN_MAP, sin)
GB_EW_FLOAT_TYPES(GEN_MAP, cos)
GB_EW_FLOAT_TYPES(GEN_MAP, tanh)
GB_EW_FLOAT_TYPES(GEN_MAP, sigmoid)
GB_EW_FLOAT_TYPES(GEN_MAP, relu)
GB_EW_FLOAT_TYPES(GEN_MAP, leaky_relu)
GB_EW_FLOAT_TYPES(GEN_MAP, elu)
/* Gelu's mode picks one of three loops: a select inside one loop would
 * make the vector code compute all three formulas for every element. */
#define GELU_LOOP(T, formula)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                         \
        const T x = x_[i];                                                                    \
        r_[i] = (T)(formula);                                                                 \
    }
#define GEN_GELU(op, DT, sfx, T, U, CL)                                                       \
    static void gelu_##sfx(int64_t n, const void *px, void *pr, const gb_attrs *at) {         \
        const T *restrict x_ = px;                                                            \
        T *restrict r_ = pr;                                                                  \
        switch (gb__gelu_mode(at)) {                                                          \
        case GB_GELU_EXACT: GELU_LOOP(T, (x) * NORMAL_CDF(T, x)) break;                        \
        case GB_GELU_CDF: GELU_LOOP(T, NORMAL_CDF(T, x)) break;                                \
        default:                                                                              \
            GELU_LOOP(T, (T)0.5 * (x) *                                                       \
                             ((T)1 + GB_TANH((T)GB_GELU_TANH_C *                                \
                                             ((x) + (T)GB_GELU_TANH_K * (x) * (x) * (x)))))   \
            break;                                                                            \
        }                                                                                     \
    }
GB_EW_FLOAT_TYPES(GEN_GELU, gelu)
GB_EW_FLOAT_TYPES(GEN_MAP, softplus)

#define ENTRY(op, DT, sfx, T, U, CL) [DT] = op##_##sfx,
const gb_ew_map_table GB_ISA_SYM(gb__ew_map_kernels) = {{
    [GB_OP_NEG] = {GB_EW_NUMERIC_TYPES(ENTRY, neg)},
    [GB_OP_ABS] = {GB_EW_NUMERIC_TYPES(ENTRY, abs)},
    [GB_OP_SIGN] = {GB_EW_NUMERIC_TYPES(ENTRY, sign)},
    [GB_OP_SQUARE] = {GB_EW_NUMERIC_TYPES(ENTRY, square)},
    [GB_OP_EXP] = {GB_EW_FLOAT_TYPES(ENTRY, exp)},
    [GB_OP_LOG] = {GB_EW_FLOAT_TYPES(ENTRY, log)},
    [GB_OP_LOG1P] = {GB_EW_FLOAT_TYPES(ENTRY, log1p)},
    [GB_OP_SQRT] = {GB_EW_FLOAT_TYPES(ENTRY, sqrt)},
    [GB_OP_RSQRT] = {GB_EW_FLOAT_TYPES(ENTRY, rsqrt)},
    [GB_OP_RECIPROCAL] = {GB_EW_FLOAT_TYPES(ENTRY, reciprocal)},
    [GB_OP_SIN] = {GB_EW_FLOAT_TYPES(ENTRY, sin)},
    [GB_OP_COS] = {GB_EW_FLOAT_TYPES(ENTRY, cos)},
    [GB_OP_TANH] = {GB_EW_FLOAT_TYPES(ENTRY, tanh)},
    [GB_OP_SIGMOID] = {GB_EW_FLOAT_TYPES(ENTRY, sigmoid)},
    [GB_OP_RELU] = {GB_EW_FLOAT_TYPES(ENTRY, relu)},
    [GB_OP_LEAKY_RELU] = {GB_EW_FLOAT_TYPES(ENTRY, leaky_relu)},
    [GB_OP_ELU] = {GB_EW_FLOAT_TYPES(ENTRY, elu)},
    [GB_OP_GELU] = {GB_EW_FLOAT_TYPES(ENTRY, gelu)},
    [GB_OP_SOFTPLUS] = {GB_EW_FLOAT_TYPES(ENTRY, softplus)},
}};

/* ---- fused gradient helpers: ReluGrad(dy, x), SigmoidGrad(y, dy), TanhGrad(y, dy),
 * GeluGrad(dy, x) ---- */

#define E_relu_grad(T, a, b) ((b) > 0 ? (a) : (T)0)
#define E_sigmoid_grad(T, a, b) ((b) * (a) * ((T)1 - (a)))
#define E_tanh_grad(T, a, b) ((b) * ((T)1 - (a) * (a)))
/* exact GELU's derivative Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi);
 * float's exp the vectorizing one of ops/fast_math.h (0 below -87) */
#define GELU_EXP(x) _Generic((x), float: gb__expf_fast((float)(x)), default: exp(x))
#define E_gelu_grad(T, a, b)                                                                  \
    ((a) * (NORMAL_CDF(T, b) + (b) * (T)0.3989422804014327 * GELU_EXP((T)-0.5 * (b) * (b))))

#define GEN_PAIR(op, DT, sfx, T, U, CL)                                                       \
    static void op##_##sfx(int64_t n, const void *pa, const void *pb, void *pr) {             \
        const T *restrict a_ = pa, *restrict b_ = pb;                                         \
        T *restrict r_ = pr;                                                                  \
        for (int64_t i = 0; i < n; i++) r_[i] = E_##op(T, a_[i], b_[i]);                      \
    }
GB_EW_FLOAT_TYPES(GEN_PAIR, relu_grad)
GB_EW_FLOAT_TYPES(GEN_PAIR, sigmoid_grad)
GB_EW_FLOAT_TYPES(GEN_PAIR, tanh_grad)
GB_EW_FLOAT_TYPES(GEN_PAIR, gelu_grad)

const gb_ew_pair_table GB_ISA_SYM(gb__ew_pair_kernels) = {{
    [GB_OP_RELU_GRAD] = {GB_EW_FLOAT_TYPES(ENTRY, relu_grad)},
    [GB_OP_SIGMOID_GRAD] = {GB_EW_FLOAT_TYPES(ENTRY, sigmoid_grad)},
    [GB_OP_TANH_GRAD] = {GB_EW_FLOAT_TYPES(ENTRY, tanh_grad)},
    [GB_OP_GELU_GRAD] = {GB_EW_FLOAT_TYPES(ENTRY, gelu_grad)},
}};
#undef ENTRY
