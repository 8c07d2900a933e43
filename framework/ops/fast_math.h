/* ops/fast_math.h — float32 transcendental functions the compiler can
 * vectorize.
 *
 * glibc's tanhf is a scalar call per element (about 20 ns here), so a Tanh
 * on a million floats cost 20 ms while a Mul cost 0.1 ms: one activation
 * was worth two hundred arithmetic ops, and no graph rewrite could win
 * anything around it. These are branch-free (both sides of every choice are
 * computed and one selected), with no calls, so the loops that use them
 * compile to vector code, as Eigen's and Sleef's do for TensorFlow and
 * PyTorch. float64 keeps libm: it is the precision tests and gradient
 * checks rely on.
 *
 * Accuracy: tanh within 1e-7 absolute of the float64 result over the whole
 * line (checked by test_ops_unary); NaN stays NaN, ±inf gives ±1, -0 is -0.
 */
#ifndef GB_OPS_FAST_MATH_H
#define GB_OPS_FAST_MATH_H

#include <stdint.h>

/* a * b + c, in one rounding where the CPU level has FMA (the kernels of
 * x86-64-v3 and v4; ops/isa/), else two: the only place where levels
 * differ, within the tolerance test_ops_isa documents for tanh. A kernel
 * file that defines GB_FAST_MATH_SAME_AT_EVERY_LEVEL before including this
 * rounds twice at every level, so its results are the same bits on every
 * machine. */
#if defined(__FMA__) && !defined(GB_FAST_MATH_SAME_AT_EVERY_LEVEL)
#define GB_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define GB_FMAF(a, b, c) ((a) * (b) + (c))
#endif

/* The core the functions below share: y = n ln2 + r with |r| <= ln2/2
 * (ln2 in two parts, so n * ln2_hi is exact and r keeps its low bits;
 * rounding by the 1.5 * 2^23 trick, no call to rintf), e^r - 1 by its
 * Taylor polynomial to r^7 without the constant term (so it keeps its
 * relative precision near 0), and 2^n built from the float's exponent
 * bits. e^y = scale * (1 + em1). y must keep 2^n a normal float
 * (|y| <= 87); the callers clamp it. */
typedef struct gb__exp_parts {
    float em1, scale;
} gb__exp_parts;

static inline gb__exp_parts gb__exp_split(float y) {
    const float n = (y * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    const float r = (y - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.0f / 5040.0f;
    p = GB_FMAF(p, r, 1.0f / 720.0f);
    p = GB_FMAF(p, r, 1.0f / 120.0f);
    p = GB_FMAF(p, r, 1.0f / 24.0f);
    p = GB_FMAF(p, r, 1.0f / 6.0f);
    p = GB_FMAF(p, r, 0.5f);
    p = GB_FMAF(p, r, 1.0f);
    union {
        int32_t i;
        float f;
    } scale = {.i = ((int32_t)n + 127) * (1 << 23)};
    return (gb__exp_parts){p * r, scale.f};
}

/* tanh(x) = t / (t + 2) with t = e^(2|x|) - 1, the sign put back. One
 * range reduction and one division serve the whole line (gb__exp_split
 * above): t = 2^n (e^r - 1) + (2^n - 1) keeps its relative precision near
 * zero, where 1 - 2/(e^2x+1) would cancel. An earlier form computed a
 * separate polynomial near zero and selected between two results: twice
 * the work per element in vector code, which computes both sides of
 * every select.
 * Max error over every float: 8.9e-8 absolute, 2.4e-7 relative (with FMA
 * or without). */
static inline float gb__tanhf_fast(float x) {
    const float ax = __builtin_fabsf(x);
    /* y = min(2|x|, 20) compared as bits: non-negative floats (and NaN,
     * above every one of them) order as their bit patterns do, and an
     * integer min keeps the compiler from pushing a float select through
     * the exp below (it did: three blends a vector). tanh(10) rounds to 1;
     * NaN becomes 20: no UB in the conversion below. */
    union {
        float f;
        int32_t i;
    } y = {.f = 2.0f * ax};
    y.i = y.i < 0x41a00000 ? y.i : 0x41a00000; /* 20.0f */
    const gb__exp_parts e = gb__exp_split(y.f);
    const float t = GB_FMAF(e.scale, e.em1, e.scale - 1.0f); /* e^y - 1 */
    const float th = t / (t + 2.0f);
    /* NaN stays NaN, and ±0 stay ±0 (tanh is odd): neither is > 0. */
    return ax > 0 ? __builtin_copysignf(th, x) : x;
}

/* tanh for the kernels' element type: the fast form for float, libm's
 * (through <tgmath.h> in the including file) for double. */
#define GB_TANH(x) _Generic((x), float: gb__tanhf_fast((float)(x)), default: tanh(x))

/* e^y for y in [-16, 0] (what erf below needs): y = n ln2 + r, |r| <=
 * ln2/2, e^r by its Taylor polynomial to r^7, 2^n from the exponent bits
 * (n >= -24: always a normal float). Relative error below 2e-7. */
static inline float gb__exp_neg16f_fast(float y) {
    y = y > -16.0f ? y : -16.0f;
    const gb__exp_parts e = gb__exp_split(y);
    return GB_FMAF(e.scale, e.em1, e.scale);
}

/* erf(x) by Abramowitz and Stegun 7.1.26: 1 - t (a1 + t (a2 + ... a5)) e^(-x^2)
 * with t = 1 / (1 + p |x|), the sign put back; beyond |x| = 4 erf is 1 in
 * float. No calls and no branches, so GELU's loop vectorizes (libm's erff
 * is a scalar call per element, a tenth of a transformer's train step).
 * Max error 1.5e-7 absolute (the formula's, checked by test_ops_unary);
 * NaN stays NaN. */
static inline float gb__erff_fast(float x) {
    const float ax0 = x < 0 ? -x : x, ax = ax0 < 4.0f ? ax0 : 4.0f;
    const float t = 1.0f / GB_FMAF(0.3275911f, ax, 1.0f);
    float p = 1.061405429f;
    p = GB_FMAF(p, t, -1.453152027f);
    p = GB_FMAF(p, t, 1.421413741f);
    p = GB_FMAF(p, t, -0.284496736f);
    p = GB_FMAF(p, t, 0.254829592f);
    const float e = 1.0f - p * t * gb__exp_neg16f_fast(-ax * ax);
    const float r = x < 0 ? -e : e;
    return x != x ? x : r;
}

/* e^y for softmax rows (y <= 0 there, after the row's maximum): the same
 * reduction and polynomial as above over the whole float range, NaN kept,
 * results below 2^-126 flushed to 0 (a masked entry's exp is exactly 0),
 * above 88.7 infinite. Relative error below 2e-7; no calls, so a row's
 * loop vectorizes where libm's expf is a scalar call per element. */
static inline float gb__expf_fast(float y) {
    /* Below -87 the result is 0 whatever is computed, so compute on 0: at
     * -87 itself the scale is 2^-126 and scale * em1 is subnormal, which
     * costs a microcode assist per element on x86 — every masked entry of
     * a causal attention row. Also maps NaN: no UB in the conversion below. */
    float yc = y >= -87.0f ? y : 0.0f;
    yc = yc < 88.0f ? yc : 88.0f;
    const gb__exp_parts p = gb__exp_split(yc);
    const float e = y < -87.0f ? 0.0f : (y > 88.7f ? (float)INFINITY : GB_FMAF(p.scale, p.em1, p.scale));
    return y != y ? y : e;
}

/* The logistic sigmoid 1 / (1 + e^-x), e^-x from gb__expf_fast above: no
 * calls, so the loops of fused kernels (the LSTM cell) vectorize. It is
 * exactly 0 below x = -88.7 (e^-x infinite) and exactly 1 above x = 87
 * (e^-x flushed to 0); NaN stays NaN. Relative error below 3e-7. */
static inline float gb__sigmoidf_fast(float x) { return 1.0f / (1.0f + gb__expf_fast(-x)); }

/* sigmoid for the kernels' element type, as GB_TANH: float64 keeps libm's
 * exp, in the Sigmoid op's expression. */
#define GB_SIGMOID(x) _Generic((x), float: gb__sigmoidf_fast((float)(x)), default: 1.0 / (1.0 + exp(-(x))))

/* erf for the kernels' element type, as GB_TANH. */
#define GB_ERF(x) _Generic((x), float: gb__erff_fast((float)(x)), default: erf(x))

#endif
