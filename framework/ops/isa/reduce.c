/* ops/isa/reduce.c — the kernels of Sum, Mean, Max, Min, Prod, ArgMax and
 * ArgMin for every dtype (ops/reduce.c has the ops, the plans and the
 * rules they follow), compiled once per ISA level (core/isa.h). The
 * accumulator lanes are eight at every level, so the order of the sums,
 * and with it every result, is the same whatever the vector width.
 */
#include <math.h>

#include "ops/reduce_kernels.h"

/* A minimal odometer over some axes with element strides. */
typedef struct odometer {
    int n;
    int64_t dim[GB_MAX_RANK], stride[GB_MAX_RANK], idx[GB_MAX_RANK], off;
} odometer;

static void odo_next(odometer *o) {
    for (int k = o->n - 1; k >= 0; k--) {
        o->off += o->stride[k];
        if (++o->idx[k] < o->dim[k]) return;
        o->off -= o->stride[k] * o->dim[k];
        o->idx[k] = 0;
    }
}

/* Splits the merged axes of a general plan into the kept odometer, the
 * outer reduced odometer and the innermost reduced run (length, stride). */
static void general_iterators(const gb_rplan *p, odometer *kept, odometer *red, int64_t *run,
                              int64_t *run_stride) {
    int64_t stride[GB_MAX_RANK], s = 1;
    for (int i = p->rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= p->dims[i];
    }
    *kept = (odometer){0};
    *red = (odometer){0};
    int last = -1;
    for (int i = 0; i < p->rank; i++)
        if (p->reduced[i]) last = i;
    for (int i = 0; i < p->rank; i++) {
        odometer *o = p->reduced[i] ? red : kept;
        if (i == last) continue;
        o->dim[o->n] = p->dims[i];
        o->stride[o->n] = stride[i];
        o->n++;
    }
    *run = p->dims[last];
    *run_stride = stride[last];
}

/* ---- typed kernels, generated per (reducer, dtype) ----------------------------------- */

/* Each reducer kind K provides
 *   K_STEP(a, v)      fold v into a with the NaN rule (the columns path);
 *   K_FAST(a, v)      the same fold without it, so the lanes vectorize;
 *   K_POISON(bad, v)  notes in `bad` that v forces a NaN result;
 *   K_RESULT(a, bad)  the lanes' result once `bad` is known.
 * Bitwise | and & keep the NaN tests branch-free. */
#define SUM_STEP(a, v) ((a) += (v))
#define SUM_FAST SUM_STEP
#define SUM_POISON(bad, v) ((void)0)
#define SUM_RESULT(a, bad) ((void)(bad), (a))
#define PROD_STEP(a, v) ((a) *= (v))
#define PROD_FAST PROD_STEP
#define PROD_POISON SUM_POISON
#define PROD_RESULT SUM_RESULT
#define MAXI_STEP(a, v) ((a) = (v) > (a) ? (v) : (a))
#define MAXI_FAST MAXI_STEP
#define MAXI_POISON SUM_POISON
#define MAXI_RESULT SUM_RESULT
#define MINI_STEP(a, v) ((a) = (v) < (a) ? (v) : (a))
#define MINI_FAST MINI_STEP
#define MINI_POISON SUM_POISON
#define MINI_RESULT SUM_RESULT
#define MAXF_STEP(a, v) ((a) = (((v) > (a)) | ((v) != (v))) ? (v) : (a))
#define MAXF_FAST MAXI_STEP
#define MAXF_POISON(bad, v) ((bad) |= ((v) != (v)))
#define MAXF_RESULT(a, bad) ((bad) ? (a) + NAN : (a))
#define MINF_STEP(a, v) ((a) = (((v) < (a)) | ((v) != (v))) ? (v) : (a))
#define MINF_FAST MINI_STEP
#define MINF_POISON MAXF_POISON
#define MINF_RESULT MAXF_RESULT

#define FIN_PLAIN(a, p) (a)
#define FIN_MEANF(a, p) ((a) / (double)(p)->count)
#define FIN_MEANI(a, p) ((p)->count ? (int64_t)(a) / (p)->count : 0)

/* Folds q[0], q[s], ... q[(n-1)s] into 8 accumulator lanes: independent
 * lanes break the dependency chain, so a contiguous run vectorizes. */
#define FOLD_LANES(K, lane, bad, q, n, s)                                                     \
    do {                                                                                      \
        int64_t i_ = 0;                                                                       \
        if ((s) == 1)                                                                         \
            for (; i_ + 8 <= (n); i_ += 8)                                                    \
                for (int j_ = 0; j_ < 8; j_++) {                                              \
                    K##_FAST(lane[j_], (q)[i_ + j_]);                                         \
                    K##_POISON(bad, (q)[i_ + j_]);                                            \
                }                                                                             \
        for (; i_ < (n); i_++) {                                                              \
            K##_FAST(lane[i_ & 7], (q)[i_ * (s)]);                                            \
            K##_POISON(bad, (q)[i_ * (s)]);                                                   \
        }                                                                                     \
    } while (0)

/* The lanes folded into one value. */
#define COMBINE_LANES(K, lane, bad, out)                                                      \
    do {                                                                                      \
        out = lane[0];                                                                        \
        for (int j_ = 1; j_ < 8; j_++) K##_FAST(out, lane[j_]);                               \
        out = K##_RESULT(out, bad);                                                           \
    } while (0)

/* fn(x, y, plan, scratch) for reducer kind K; scratch holds plan->inner
 * accumulators (the columns path). */
#define DEFINE_REDUCER(fn, T, ACC, INIT, K, FIN)                                              \
    static void fn(const void *xv, void *yv, const gb_rplan *p, void *scratch) {                 \
        const T *x = xv;                                                                      \
        T *y = yv;                                                                            \
        ACC lane[8], a;                                                                       \
        int bad;                                                                              \
        if (p->general) {                                                                     \
            odometer kept, red;                                                               \
            int64_t run, rs;                                                                  \
            general_iterators(p, &kept, &red, &run, &rs);                                     \
            for (int64_t o = 0; o < p->nout; o++, odo_next(&kept)) {                          \
                for (int j = 0; j < 8; j++) lane[j] = INIT;                                   \
                bad = 0;                                                                      \
                for (int64_t b = 0; b < p->count / run; b++, odo_next(&red))                  \
                    FOLD_LANES(K, lane, bad, x + kept.off + red.off, run, rs);                \
                COMBINE_LANES(K, lane, bad, a);                                               \
                y[o] = (T)FIN(a, p);                                                          \
            }                                                                                 \
        } else if (p->inner == 1) {                                                           \
            for (int64_t o = 0; o < p->outer; o++) {                                          \
                for (int j = 0; j < 8; j++) lane[j] = INIT;                                   \
                bad = 0;                                                                      \
                FOLD_LANES(K, lane, bad, x + o * p->red, p->red, 1);                          \
                COMBINE_LANES(K, lane, bad, a);                                               \
                y[o] = (T)FIN(a, p);                                                          \
            }                                                                                 \
        } else {                                                                              \
            ACC *acc = scratch;                                                               \
            for (int64_t o = 0; o < p->outer; o++) {                                          \
                const T *blk = x + o * p->red * p->inner;                                     \
                for (int64_t i = 0; i < p->inner; i++) acc[i] = INIT;                          \
                for (int64_t r = 0; r < p->red; r++) {                                        \
                    const T *row = blk + r * p->inner;                                        \
                    for (int64_t i = 0; i < p->inner; i++) K##_STEP(acc[i], row[i]);          \
                }                                                                             \
                for (int64_t i = 0; i < p->inner; i++) y[o * p->inner + i] = (T)FIN(acc[i], p); \
            }                                                                                 \
        }                                                                                     \
    }

/* The first index of row r[0..n) holding `best` (SAME), searched eight at a
 * time so the comparisons vectorize. */
#define FIRST_INDEX(SAME, r, n, best, at)                                                     \
    do {                                                                                      \
        at = 0;                                                                               \
        for (; at + 8 <= (n); at += 8) {                                                      \
            int hit_ = 0;                                                                     \
            for (int j_ = 0; j_ < 8; j_++) hit_ |= SAME((r)[at + j_], best);                  \
            if (hit_) break;                                                                  \
        }                                                                                     \
        while (at < (n) - 1 && !SAME((r)[at], best)) at++;                                    \
    } while (0)

/* ArgMax/ArgMin over [outer, red, inner] with reducer kind K (Max or Min).
 * Rows: the extreme first (K's vectorized lanes), then the first index
 * holding it. Columns: BETTER(v, best) says v replaces the running extreme
 * of its column; scratch holds plan->inner of them. */
#define DEFINE_ARG(fn, T, INIT, K, SAME, BETTER)                                              \
    static void fn(const void *xv, int64_t *y, const gb_rplan *p, void *scratch) {               \
        const T *x = xv;                                                                      \
        if (p->inner == 1) {                                                                  \
            for (int64_t o = 0; o < p->outer; o++) {                                          \
                const T *r = x + o * p->red;                                                  \
                T lane[8], best;                                                              \
                int bad = 0;                                                                  \
                int64_t at;                                                                   \
                for (int j = 0; j < 8; j++) lane[j] = INIT;                                   \
                FOLD_LANES(K, lane, bad, r, p->red, 1);                                       \
                COMBINE_LANES(K, lane, bad, best);                                            \
                FIRST_INDEX(SAME, r, p->red, best, at);                                       \
                y[o] = at;                                                                    \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        T *best = scratch;                                                                    \
        for (int64_t o = 0; o < p->outer; o++) {                                              \
            const T *blk = x + o * p->red * p->inner;                                         \
            int64_t *yo = y + o * p->inner;                                                   \
            for (int64_t i = 0; i < p->inner; i++) {                                          \
                best[i] = blk[i];                                                             \
                yo[i] = 0;                                                                    \
            }                                                                                 \
            for (int64_t r = 1; r < p->red; r++) {                                            \
                const T *row = blk + r * p->inner;                                            \
                for (int64_t i = 0; i < p->inner; i++)                                        \
                    if (BETTER(row[i], best[i])) {                                            \
                        best[i] = row[i];                                                     \
                        yo[i] = r;                                                            \
                    }                                                                         \
            }                                                                                 \
        }                                                                                     \
    }

#define SAME_F(v, b) (((v) == (b)) | (((v) != (v)) & ((b) != (b))))
#define SAME_I(v, b) ((v) == (b))
#define BETTER_MAXF(v, b) ((v) > (b) || ((v) != (v) && (b) == (b)))
#define BETTER_MINF(v, b) ((v) < (b) || ((v) != (v) && (b) == (b)))
#define BETTER_MAXI(v, b) ((v) > (b))
#define BETTER_MINI(v, b) ((v) < (b))

#define FLOAT_FAMILY(S, T)                                                                    \
    DEFINE_REDUCER(sum_##S, T, double, 0, SUM, FIN_PLAIN)                                     \
    DEFINE_REDUCER(mean_##S, T, double, 0, SUM, FIN_MEANF)                                    \
    DEFINE_REDUCER(prod_##S, T, double, 1, PROD, FIN_PLAIN)                                   \
    DEFINE_REDUCER(max_##S, T, T, -INFINITY, MAXF, FIN_PLAIN)                                 \
    DEFINE_REDUCER(min_##S, T, T, INFINITY, MINF, FIN_PLAIN)                                  \
    DEFINE_ARG(argmax_##S, T, -INFINITY, MAXF, SAME_F, BETTER_MAXF)                           \
    DEFINE_ARG(argmin_##S, T, INFINITY, MINF, SAME_F, BETTER_MINF)

#define INT_FAMILY(S, T, LO, HI)                                                              \
    DEFINE_REDUCER(sum_##S, T, uint64_t, 0, SUM, FIN_PLAIN)                                   \
    DEFINE_REDUCER(mean_##S, T, uint64_t, 0, SUM, FIN_MEANI)                                  \
    DEFINE_REDUCER(prod_##S, T, uint64_t, 1, PROD, FIN_PLAIN)                                 \
    DEFINE_REDUCER(max_##S, T, T, LO, MAXI, FIN_PLAIN)                                        \
    DEFINE_REDUCER(min_##S, T, T, HI, MINI, FIN_PLAIN)                                        \
    DEFINE_ARG(argmax_##S, T, LO, MAXI, SAME_I, BETTER_MAXI)                                  \
    DEFINE_ARG(argmin_##S, T, HI, MINI, SAME_I, BETTER_MINI)

FLOAT_FAMILY(f32, float)
FLOAT_FAMILY(f64, double)
INT_FAMILY(i32, int32_t, INT32_MIN, INT32_MAX)
INT_FAMILY(i64, int64_t, INT64_MIN, INT64_MAX)
INT_FAMILY(u8, uint8_t, 0, UINT8_MAX)

#define BY_DTYPE(prefix)                                                                      \
    {[GB_F32] = prefix##_f32, [GB_F64] = prefix##_f64, [GB_I32] = prefix##_i32,               \
     [GB_I64] = prefix##_i64, [GB_U8] = prefix##_u8}

const gb_reduce_table GB_ISA_SYM(gb__reduce_kernels) = {
    .reduce = {[GB_RED_SUM] = BY_DTYPE(sum), [GB_RED_MEAN] = BY_DTYPE(mean),
               [GB_RED_MAX] = BY_DTYPE(max), [GB_RED_MIN] = BY_DTYPE(min),
               [GB_RED_PROD] = BY_DTYPE(prod)},
    .argmax = BY_DTYPE(argmax),
    .argmin = BY_DTYPE(argmin),
};
