/* ops/isa/lstm_cell.c — the LSTM cell's elementwise half for one time
 * step (ops/lstm_kernels.h), compiled once per ISA level (core/isa.h).
 *
 * Keras' gate order: the four [units] quarters of a gates row are i, f,
 * g (the candidate) and o. Forward, per unit:
 *   i, f, o = sigmoid(xw + h_prev R),  g = tanh(xw + h_prev R)
 *   c = f c_prev + i g,                h = o tanh(c)
 * and backward, with dh and dc the gradients reaching h and c:
 *   dc += dh o (1 - tanh(c)^2)
 *   di = dc g i (1 - i)      df = dc c_prev f (1 - f)
 *   dg = dc i (1 - g^2)      do = dh tanh(c) o (1 - o)
 *   dc_prev = dc f
 * in the order of the ops the generic loop (nn/recurrent.c) runs, so in
 * float64 the two agree to the last bit. One pass per step reads each
 * value once; the loops have no calls (fast_math.h's sigmoid and tanh on
 * float) and no branches, so they compile to vector code.
 */
#include <tgmath.h>

#include "ops/fast_math.h"
#include "ops/lstm_kernels.h"

/* One row of the batch, units [j0, j1). Every array is a restrict
 * parameter, each gates quarter its own: GCC honours restrict on
 * parameters, while pointers derived inside a function (a row at offsets
 * u, 2u, 3u) leave it to check overlap at run time, and with this many
 * pointers it gives up and keeps the loop scalar. */
#define DEFINE_LSTM_CELL(T, SUFFIX)                                                                \
    static inline void forward_row_##SUFFIX(T *restrict zi, T *restrict zf, T *restrict zg,         \
                                            T *restrict zo, const T *restrict xi,                  \
                                            const T *restrict xf, const T *restrict xg,            \
                                            const T *restrict xo, const T *restrict cp,            \
                                            T *restrict c, T *restrict h, int64_t j0, int64_t j1) { \
        for (int64_t q = j0; q < j1; q++) {                                                        \
            T i = GB_SIGMOID(zi[q] + xi[q]), f = GB_SIGMOID(zf[q] + xf[q]);                        \
            T g = GB_TANH(zg[q] + xg[q]), o = GB_SIGMOID(zo[q] + xo[q]);                           \
            T cn = f * cp[q] + i * g;                                                              \
            zi[q] = i, zf[q] = f, zg[q] = g, zo[q] = o;                                            \
            c[q] = cn;                                                                             \
            h[q] = o * GB_TANH(cn);                                                                \
        }                                                                                          \
    }                                                                                              \
    static void forward_##SUFFIX(const gb_lstm_cell_job *j, int64_t j0, int64_t j1) {              \
        const int64_t u = j->units;                                                                \
        for (int64_t b = 0; b < j->batch; b++) {                                                   \
            T *z = (T *)j->gates + b * j->row_4u;                                                  \
            const T *x = (const T *)j->xw + b * j->row_4u;                                         \
            forward_row_##SUFFIX(z, z + u, z + 2 * u, z + 3 * u, x, x + u, x + 2 * u, x + 3 * u,    \
                                 (const T *)j->c_prev + b * j->c_prev_ld, (T *)j->c + b * j->row_u, \
                                 (T *)j->h + b * j->row_u, j0, j1);                                \
        }                                                                                          \
    }                                                                                              \
    static inline void backward_row_##SUFFIX(                                                      \
        const T *restrict ai, const T *restrict af, const T *restrict ag, const T *restrict ao,     \
        T *restrict dzi, T *restrict dzf, T *restrict dzg, T *restrict dzo, const T *restrict cs,   \
        const T *restrict cp, const T *restrict dhs, const T *restrict dcs,                        \
        const T *restrict dhn, T *restrict dcr, int64_t j0, int64_t j1) {                          \
        for (int64_t q = j0; q < j1; q++) {                                                        \
            T i = ai[q], f = af[q], g = ag[q], o = ao[q];                                          \
            T t = GB_TANH(cs[q]), dh = dhs[q] + dhn[q];                                            \
            T dc = dcs[q] + dcr[q];                                                                \
            dc = dc + (dh * o) * ((T)1 - t * t);                                                   \
            dzi[q] = (dc * g) * (i * ((T)1 - i));                                                  \
            dzf[q] = (dc * cp[q]) * (f * ((T)1 - f));                                              \
            dzg[q] = (dc * i) * ((T)1 - g * g);                                                    \
            dzo[q] = (dh * t) * (o * ((T)1 - o));                                                  \
            dcr[q] = dc * f;                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void backward_##SUFFIX(const gb_lstm_cell_job *j, int64_t j0, int64_t j1) {             \
        const int64_t u = j->units;                                                                \
        for (int64_t b = 0; b < j->batch; b++) {                                                   \
            const T *a = (const T *)j->gates + b * j->row_4u;                                      \
            T *dz = (T *)j->dxw + b * j->row_4u;                                                   \
            backward_row_##SUFFIX(a, a + u, a + 2 * u, a + 3 * u, dz, dz + u, dz + 2 * u, dz + 3 * u, \
                                  (const T *)j->c + b * j->row_u,                                  \
                                  (const T *)j->c_prev + b * j->c_prev_ld,                         \
                                  (const T *)j->dh_seq + b * j->row_u,                             \
                                  (const T *)j->dc_seq + b * j->row_u,                             \
                                  (const T *)j->dh_next + b * u, (T *)j->dc + b * u, j0, j1);       \
        }                                                                                          \
    }
DEFINE_LSTM_CELL(float, f32)
DEFINE_LSTM_CELL(double, f64)

const gb_lstm_cell_table GB_ISA_SYM(gb__lstm_cell_kernels) = {
    .forward = {forward_f32, forward_f64},
    .backward = {backward_f32, backward_f64},
};
