/* ops/conv/isa/winograd.c — the kernels of Winograd F(2x2, 3x3)
 * convolution (ops/conv/winograd.h) for float32 and float64
 * (ops/conv/isa/winograd_impl.h, included once per type), compiled once
 * per ISA level (core/isa.h).
 */
/* Let GCC fuse multiply-adds (ISO C mode forbids contracting otherwise):
 * at v3 and v4 the transforms use FMA, so their last bits may differ from
 * v2's; the tests compare the levels within float rounding. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include <cblas.h>
#include <string.h>

#include "ops/conv/winograd.h"

#define T float
#define SFX(name) GB_ISA_SYM(name##_f32)
#define GEMM cblas_sgemm
#include "ops/conv/isa/winograd_impl.h"
#undef T
#undef SFX
#undef GEMM

#define T double
#define SFX(name) GB_ISA_SYM(name##_f64)
#define GEMM cblas_dgemm
#include "ops/conv/isa/winograd_impl.h"
#undef T
#undef SFX
#undef GEMM
