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
 * line (checked by test_ops_unary); NaN stays NaN, ±inf gives ±1.
 */
#ifndef GB_OPS_FAST_MATH_H
#define GB_OPS_FAST_MATH_H

#include <stdint.h>

/* e^x for x in [-87, 88] (clamped outside; NaN clamps too, callers that
 * care select it back): x = n ln2 + r with |r| <= ln2/2, e^r by its Taylor
 * polynomial to r^7 (relative error < 2e-8 on that interval), 2^n by
 * building the float's exponent bits. */
static inline float gb__expf_fast(float x) {
    x = x > -87.0f ? x : -87.0f; /* also maps NaN: no UB in the int conversion */
    x = x < 88.0f ? x : 88.0f;
    /* Round to nearest by the 1.5 * 2^23 trick: no call to rintf. */
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    /* ln2 in two parts, so n * ln2_hi is exact and r keeps its low bits. */
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    union {
        int32_t i;
        float f;
    } scale = {.i = ((int32_t)n + 127) * (1 << 23)};
    return p * scale.f;
}

/* tanh(x): near zero an odd polynomial (1 - 2/(e^2x + 1) would cancel
 * there), elsewhere from e^(2|x|) with the sign put back. */
static inline float gb__tanhf_fast(float x) {
    const float ax = x < 0 ? -x : x;
    const float z = x * x;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    const float near0 = x + x * z * q;
    const float far = 1.0f - 2.0f / (gb__expf_fast(2.0f * ax) + 1.0f);
    const float r = ax < 0.625f ? near0 : (x < 0 ? -far : far);
    return x != x ? x : r;
}

/* tanh for the kernels' element type: the fast form for float, libm's
 * (through <tgmath.h> in the including file) for double. */
#define GB_TANH(x) _Generic((x), float: gb__tanhf_fast((float)(x)), default: tanh(x))

#endif
