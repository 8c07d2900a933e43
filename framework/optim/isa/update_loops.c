/* optim/isa/update_loops.c — the loops of the fused optimizer updates
 * (optim/update_ops.c), per dtype and variant, compiled once per ISA level
 * (core/isa.h). Each reads element i of every array once and writes it
 * once.
 */
#include <math.h>
#include <string.h>

#include "optim/update_loops.h"

/* The loops below read element i of every array before writing element i,
 * so running them in place (source == destination) is safe; this tells
 * the compiler to vectorize without proving the arrays disjoint. */
#if defined(__clang__)
#define GB_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define GB_IVDEP _Pragma("GCC ivdep")
#else
#define GB_IVDEP
#endif

/* ---- the loops, per dtype and variant ----------------------------------------------- */

/* Locals every loop starts with: gradient, old and new variable, and the
 * variable after weight decay (Keras decays before the update). */
#define LOOP_PROLOGUE(T)                                                                      \
    const T *g = (const T *)u->g;                                                             \
    const T *w0 = (const T *)u->src[0];                                                       \
    T *w1 = (T *)u->dst[0];                                                                   \
    const T lr = (T)u->lr, dec = (T)u->decay
#define DECAYED(i) (w0[i] - w0[i] * dec)

#define DEFINE_SGD(T, SUF)                                                                    \
    static void sgd_##SUF(const gb_update *u, int64_t begin, int64_t end) {                      \
        LOOP_PROLOGUE(T);                                                                     \
        GB_IVDEP for (int64_t i = begin; i < end; i++) w1[i] = DECAYED(i) - g[i] * lr;        \
    }

/* velocity = momentum * velocity - lr * g; var += velocity, or with
 * Nesterov var += momentum * velocity - lr * g. */
#define DEFINE_MOMENTUM(T, SUF, NAME, NESTEROV)                                               \
    static void NAME##_##SUF(const gb_update *u, int64_t begin, int64_t end) {                   \
        LOOP_PROLOGUE(T);                                                                     \
        const T *m0 = (const T *)u->src[1];                                                   \
        T *m1 = (T *)u->dst[1];                                                               \
        const T mom = (T)u->f[0];                                                             \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T m = m0[i] * mom - g[i] * lr;                                                    \
            m1[i] = m;                                                                        \
            w1[i] = DECAYED(i) + (NESTEROV ? m * mom - g[i] * lr : m);                        \
        }                                                                                     \
    }

/* m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
 * var -= alpha m / (sqrt(v) + epsilon), alpha carrying the bias correction. */
#define DEFINE_ADAM(T, SUF, SQRT)                                                             \
    static void adam_##SUF(const gb_update *u, int64_t begin, int64_t end) {                     \
        LOOP_PROLOGUE(T);                                                                     \
        const T *m0 = (const T *)u->src[1], *v0 = (const T *)u->src[2];                       \
        T *m1 = (T *)u->dst[1], *v1 = (T *)u->dst[2];                                         \
        const double b1 = u->f[0], b2 = u->f[1];                                              \
        const T alpha = (T)(u->lr * sqrt(1.0 - pow(b2, (double)u->t)) /                       \
                            (1.0 - pow(b1, (double)u->t)));                                   \
        const T c1 = (T)(1.0 - b1), c2 = (T)(1.0 - b2), eps = (T)u->f[2];                     \
        (void)lr;                                                                             \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T m = m0[i] + (g[i] - m0[i]) * c1;                                                \
            T v = v0[i] + (g[i] * g[i] - v0[i]) * c2;                                         \
            m1[i] = m;                                                                        \
            v1[i] = v;                                                                        \
            w1[i] = DECAYED(i) - m * alpha / (SQRT(v) + eps);                                 \
        }                                                                                     \
    }

/* velocity = rho velocity + (1 - rho) g^2; centered: average = rho average
 * + (1 - rho) g, denominator velocity - average^2 + epsilon (else velocity
 * + epsilon); increment = lr g / sqrt(denominator); with momentum
 * mom = momentum mom + increment, var -= mom; else var -= increment. */
#define DEFINE_RMSPROP(T, SUF, SQRT, NAME, CENTERED, MOMENTUM)                                \
    static void NAME##_##SUF(const gb_update *u, int64_t begin, int64_t end) {                   \
        LOOP_PROLOGUE(T);                                                                     \
        const T *v0 = (const T *)u->src[1], *p0 = (const T *)u->src[2],                       \
                *a0 = (const T *)u->src[3];                                                   \
        T *v1 = (T *)u->dst[1], *p1 = (T *)u->dst[2], *a1 = (T *)u->dst[3];                   \
        const T rho = (T)u->f[0], c = (T)(1.0 - u->f[0]), mom = (T)u->f[1];                   \
        const T eps = (T)u->f[2];                                                             \
        (void)p0, (void)p1, (void)a0, (void)a1, (void)mom;                                    \
        GB_IVDEP for (int64_t i = begin; i < end; i++) {                                      \
            T v = rho * v0[i] + c * (g[i] * g[i]);                                            \
            v1[i] = v;                                                                        \
            T den = v + eps;                                                                  \
            if (CENTERED) {                                                                   \
                T a = rho * a0[i] + c * g[i];                                                 \
                a1[i] = a;                                                                    \
                den = v - a * a + eps;                                                        \
            }                                                                                 \
            T inc = lr * g[i] / SQRT(den);                                                    \
            if (MOMENTUM) {                                                                   \
                inc = mom * p0[i] + inc;                                                      \
                p1[i] = inc;                                                                  \
            }                                                                                 \
            w1[i] = DECAYED(i) - inc;                                                         \
        }                                                                                     \
    }

/* The measure's sums: squares of g, old, new and new - old, in double,
 * eight elements at a time in vectors of eight doubles (GCC's vector
 * extension, as the convolution kernels use: written as eight scalar
 * lanes, GCC 12 assembled each load from single floats). Lane k always
 * takes the elements k mod 8, and there is no contraction, so every ISA
 * level gives the same bits. */
typedef double squares_vd __attribute__((vector_size(64)));
typedef float squares_vf __attribute__((vector_size(32), aligned(sizeof(float)), may_alias));
typedef double squares_ld __attribute__((vector_size(64), aligned(sizeof(double)), may_alias));
#define LOAD8_float(x) __builtin_convertvector(*(const squares_vf *)(x), squares_vd)
#define LOAD8_double(x) (*(const squares_ld *)(x))

#define DEFINE_SQUARES(T, SUF)                                                                \
    static void squares_##SUF(gb_update_squares *p, const void *gv, const void *ov,             \
                              const void *nv, int64_t n) {                                    \
        const T *g = gv, *old = ov, *now = nv;                                                \
        squares_vd gs, bs, as, us;                                                            \
        memcpy(&gs, p->grad, sizeof gs), memcpy(&bs, p->before, sizeof bs);                   \
        memcpy(&as, p->after, sizeof as), memcpy(&us, p->update, sizeof us);                  \
        int64_t i = 0;                                                                        \
        for (; i + 8 <= n; i += 8) {                                                          \
            squares_vd x = LOAD8_##T(g + i), b = LOAD8_##T(old + i), a = LOAD8_##T(now + i);  \
            gs += x * x, bs += b * b, as += a * a, us += (a - b) * (a - b);                   \
        }                                                                                     \
        memcpy(p->grad, &gs, sizeof gs), memcpy(p->before, &bs, sizeof bs);                   \
        memcpy(p->after, &as, sizeof as), memcpy(p->update, &us, sizeof us);                  \
        for (; i < n; i++) {                                                                  \
            double x = g[i], b = old[i], a = now[i];                                          \
            p->grad[0] += x * x, p->before[0] += b * b, p->after[0] += a * a;                 \
            p->update[0] += (a - b) * (a - b);                                                \
        }                                                                                     \
    }

#define DEFINE_LOOPS(T, SUF, SQRT)                                                            \
    DEFINE_SGD(T, SUF)                                                                        \
    DEFINE_MOMENTUM(T, SUF, momentum, 0)                                                      \
    DEFINE_MOMENTUM(T, SUF, nesterov, 1)                                                      \
    DEFINE_ADAM(T, SUF, SQRT)                                                                 \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop, 0, 0)                                               \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_mom, 0, 1)                                           \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_ctr, 1, 0)                                           \
    DEFINE_RMSPROP(T, SUF, SQRT, rmsprop_ctr_mom, 1, 1)                                       \
    DEFINE_SQUARES(T, SUF)

DEFINE_LOOPS(float, f32, sqrtf)
DEFINE_LOOPS(double, f64, sqrt)

const gb_update_loops GB_ISA_SYM(gb__update_loops) = {
    .sgd = {sgd_f32, sgd_f64},
    .momentum = {{momentum_f32, nesterov_f32}, {momentum_f64, nesterov_f64}},
    .adam = {adam_f32, adam_f64},
    .rmsprop = {
        {{rmsprop_f32, rmsprop_mom_f32}, {rmsprop_ctr_f32, rmsprop_ctr_mom_f32}},
        {{rmsprop_f64, rmsprop_mom_f64}, {rmsprop_ctr_f64, rmsprop_ctr_mom_f64}},
    },
    .squares = {squares_f32, squares_f64},
};
