/* ops/isa/ew_binary.c — the kernels of the elementwise binary ops (Add,
 * Sub, Mul, Div, Pow, Maximum, Minimum) and comparisons, compiled once per
 * ISA level (core/isa.h); ops/binary.c holds the ops, their broadcasting
 * and gradients, and picks the table of the level in force.
 *
 * Each (op, dtype) pair has one kernel that computes a contiguous run in
 * one of three layouts: vector op vector, scalar op vector, vector op
 * scalar (ops/elementwise_types.h).
 */
#include <tgmath.h>

#include "ops/elementwise_types.h"
#include "ops/strings_internal.h"

/* Layout of one run's operands (ops/elementwise_types.h). */
enum { RUN_VV = GB_EW_RUN_VV, RUN_SV = GB_EW_RUN_SV, RUN_VS = GB_EW_RUN_VS };

/* The body of a run kernel: EXPR computes r[i] from x (from a) and y (from b).
 * Each layout is its own loop so the compiler vectorizes all three. */
#define RUN_LOOPS(T, R, EXPR)                                                                 \
    const T *restrict a_ = pa;                                                                \
    const T *restrict b_ = pb;                                                                \
    R *restrict r_ = pr;                                                                      \
    if (layout == RUN_VV) {                                                                   \
        _Pragma("GCC unroll 4")                                                               \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const T x = a_[i], y = b_[i];                                                     \
            r_[i] = (R)(EXPR);                                                                \
        }                                                                                     \
    } else if (layout == RUN_SV) {                                                            \
        const T x = a_[0];                                                                    \
        _Pragma("GCC unroll 4")                                                               \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const T y = b_[i];                                                                \
            r_[i] = (R)(EXPR);                                                                \
        }                                                                                     \
    } else {                                                                                  \
        const T y = b_[0];                                                                    \
        _Pragma("GCC unroll 4")                                                               \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const T x = a_[i];                                                                \
            r_[i] = (R)(EXPR);                                                                \
        }                                                                                     \
    }

/* Element expressions E_<op>(T, U, CLASS, x, y). Integer arithmetic goes
 * through the unsigned twin U so overflow wraps instead of being UB. */
#define E_add(T, U, CL, x, y) ((U)(x) + (U)(y))
#define E_sub(T, U, CL, x, y) ((U)(x) - (U)(y))
#define E_mul(T, U, CL, x, y) ((U)(x) * (U)(y))
#define E_div(T, U, CL, x, y) DIV_##CL(T, U, x, y)
#define DIV_F(T, U, x, y) ((x) / (y))
/* INT_MIN / -1 overflows; -1 as a divisor is negation (wrapping). */
#define DIV_S(T, U, x, y) ((y) == -1 ? (T)((U)0 - (U)(x)) : (T)((x) / (y)))
#define DIV_U(T, U, x, y) ((x) / (y))
#define E_pow(T, U, CL, x, y) pow(x, y)
/* Floats propagate NaN from either side; ties pick x (as the gradient). */
#define E_maximum(T, U, CL, x, y) MAX_##CL(x, y)
#define MAX_F(x, y) ((x) >= (y) || (x) != (x) ? (x) : (y))
#define MAX_S(x, y) ((x) >= (y) ? (x) : (y))
#define MAX_U MAX_S
#define E_minimum(T, U, CL, x, y) MIN_##CL(x, y)
#define MIN_F(x, y) ((x) <= (y) || (x) != (x) ? (x) : (y))
#define MIN_S(x, y) ((x) <= (y) ? (x) : (y))
#define MIN_U MIN_S
#define E_equal(T, U, CL, x, y) ((x) == (y))
#define E_not_equal(T, U, CL, x, y) ((x) != (y))
#define E_less(T, U, CL, x, y) ((x) < (y))
#define E_less_equal(T, U, CL, x, y) ((x) <= (y))
#define E_greater(T, U, CL, x, y) ((x) > (y))
#define E_greater_equal(T, U, CL, x, y) ((x) >= (y))

#define GEN_ARITH(op, DT, sfx, T, U, CL)                                                      \
    static void op##_##sfx(int layout, int64_t n, const void *pa, const void *pb, void *pr) { \
        RUN_LOOPS(T, T, E_##op(T, U, CL, x, y))                                               \
    }
#define GEN_COMPARE(op, DT, sfx, T, U, CL)                                                    \
    static void op##_##sfx(int layout, int64_t n, const void *pa, const void *pb, void *pr) { \
        RUN_LOOPS(T, uint8_t, E_##op(T, U, CL, x, y))                                         \
    }

GB_EW_NUMERIC_TYPES(GEN_ARITH, add)
GB_EW_NUMERIC_TYPES(GEN_ARITH, sub)
GB_EW_NUMERIC_TYPES(GEN_ARITH, mul)
GB_EW_NUMERIC_TYPES(GEN_ARITH, div)
GB_EW_FLOAT_TYPES(GEN_ARITH, pow)
GB_EW_NUMERIC_TYPES(GEN_ARITH, maximum)
GB_EW_NUMERIC_TYPES(GEN_ARITH, minimum)
GB_EW_ALL_TYPES(GEN_COMPARE, equal)
GB_EW_ALL_TYPES(GEN_COMPARE, not_equal)
GB_EW_NUMERIC_TYPES(GEN_COMPARE, less)
GB_EW_NUMERIC_TYPES(GEN_COMPARE, less_equal)
GB_EW_NUMERIC_TYPES(GEN_COMPARE, greater)
GB_EW_NUMERIC_TYPES(GEN_COMPARE, greater_equal)

/* The kernel table: a NULL entry means the dtype is not supported. */
#define ENTRY(op, DT, sfx, T, U, CL) [DT] = op##_##sfx,
const gb_ew_run_table GB_ISA_SYM(gb__ew_run_kernels) = {{
    [GB_OP_ADD] = {GB_EW_NUMERIC_TYPES(ENTRY, add) [GB_STRING] = gb__string_concat_run},
    [GB_OP_SUB] = {GB_EW_NUMERIC_TYPES(ENTRY, sub)},
    [GB_OP_MUL] = {GB_EW_NUMERIC_TYPES(ENTRY, mul)},
    [GB_OP_DIV] = {GB_EW_NUMERIC_TYPES(ENTRY, div)},
    [GB_OP_POW] = {GB_EW_FLOAT_TYPES(ENTRY, pow)},
    [GB_OP_MAXIMUM] = {GB_EW_NUMERIC_TYPES(ENTRY, maximum)},
    [GB_OP_MINIMUM] = {GB_EW_NUMERIC_TYPES(ENTRY, minimum)},
    [GB_OP_EQUAL] = {GB_EW_ALL_TYPES(ENTRY, equal) [GB_STRING] = gb__string_equal_run},
    [GB_OP_NOT_EQUAL] = {GB_EW_ALL_TYPES(ENTRY, not_equal) [GB_STRING] = gb__string_not_equal_run},
    [GB_OP_LESS] = {GB_EW_NUMERIC_TYPES(ENTRY, less)},
    [GB_OP_LESS_EQUAL] = {GB_EW_NUMERIC_TYPES(ENTRY, less_equal)},
    [GB_OP_GREATER] = {GB_EW_NUMERIC_TYPES(ENTRY, greater)},
    [GB_OP_GREATER_EQUAL] = {GB_EW_NUMERIC_TYPES(ENTRY, greater_equal)},
}};
#undef ENTRY
