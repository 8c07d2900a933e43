/* nn/initializers.c — weight initializers (keras.initializers).
 *
 * Constants and plain random draws, orthogonal matrices, and the
 * variance-scaling family
 * (Glorot, He, LeCun) as one table of (scale, fan mode, distribution), as
 * Keras defines them. Fans: a matrix [in, out] has fan_in = in and
 * fan_out = out; a conv kernel [kh, kw, in, out] multiplies both by the
 * receptive field kh*kw. Normal variants draw a normal truncated at two
 * standard deviations and widen it by 1/0.8796 so that the variance of
 * what is drawn is exactly scale/n (Keras' VarianceScaling).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/internal.h"

typedef enum fan_mode { FAN_IN, FAN_AVG } fan_mode;

typedef struct variance_scaling {
    double scale;
    fan_mode mode;
    bool uniform;
} variance_scaling;

static const variance_scaling scaling_table[GB_INIT_KIND_COUNT] = {
    [GB_INIT_GLOROT_UNIFORM] = {1.0, FAN_AVG, true},
    [GB_INIT_GLOROT_NORMAL] = {1.0, FAN_AVG, false},
    [GB_INIT_HE_UNIFORM] = {2.0, FAN_IN, true},
    [GB_INIT_HE_NORMAL] = {2.0, FAN_IN, false},
    [GB_INIT_LECUN_UNIFORM] = {1.0, FAN_IN, true},
    [GB_INIT_LECUN_NORMAL] = {1.0, FAN_IN, false},
};

static const char *const init_names[GB_INIT_KIND_COUNT] = {
    [GB_INIT_DEFAULT] = "default",
    [GB_INIT_ZEROS] = "zeros",
    [GB_INIT_ONES] = "ones",
    [GB_INIT_CONSTANT] = "constant",
    [GB_INIT_RANDOM_UNIFORM] = "random_uniform",
    [GB_INIT_RANDOM_NORMAL] = "random_normal",
    [GB_INIT_TRUNCATED_NORMAL] = "truncated_normal",
    [GB_INIT_GLOROT_UNIFORM] = "glorot_uniform",
    [GB_INIT_GLOROT_NORMAL] = "glorot_normal",
    [GB_INIT_HE_UNIFORM] = "he_uniform",
    [GB_INIT_HE_NORMAL] = "he_normal",
    [GB_INIT_LECUN_UNIFORM] = "lecun_uniform",
    [GB_INIT_LECUN_NORMAL] = "lecun_normal",
    [GB_INIT_ORTHOGONAL] = "orthogonal",
};

/* The stddev of a unit normal truncated to [-2, 2]. */
#define TRUNCATED_UNIT_STDDEV 0.87962566103423978

const char *gb_initializer_name(gb_init_kind kind) {
    return (unsigned)kind < GB_INIT_KIND_COUNT ? init_names[kind] : "?";
}

/* Keras' _compute_fans. */
static void compute_fans(int rank, const int64_t *shape, double *fan_in, double *fan_out) {
    if (rank < 1) {
        *fan_in = *fan_out = 1;
    } else if (rank == 1) {
        *fan_in = *fan_out = (double)shape[0];
    } else if (rank == 2) {
        *fan_in = (double)shape[0];
        *fan_out = (double)shape[1];
    } else {
        double receptive = 1;
        for (int i = 0; i < rank - 2; i++) receptive *= (double)shape[i];
        *fan_in = (double)shape[rank - 2] * receptive;
        *fan_out = (double)shape[rank - 1] * receptive;
    }
}

static gb_tensor *make_scaled(gb_initializer init, gb_dtype dt, int rank, const int64_t *shape) {
    const variance_scaling *vs = &scaling_table[init.kind];
    double fan_in, fan_out;
    compute_fans(rank, shape, &fan_in, &fan_out);
    double n = vs->mode == FAN_IN ? fan_in : (fan_in + fan_out) / 2;
    double variance = vs->scale / (n > 1 ? n : 1);
    if (vs->uniform) {
        double limit = sqrt(3.0 * variance);
        return gb_random_uniform(dt, rank, shape, -limit, limit, init.seed);
    }
    return gb_truncated_normal(dt, rank, shape, 0.0, sqrt(variance) / TRUNCATED_UNIT_STDDEV,
                               init.seed);
}

/* Keras' Orthogonal: a normal matrix [max(r, c), min(r, c)] (r the
 * product of the leading dims, c the last), the Q of its QR decomposition
 * with R's diagonal made positive (modified Gram-Schmidt gives exactly
 * that), transposed when r < c, times the gain. Computed in float64. */
static gb_tensor *make_orthogonal(gb_initializer init, gb_dtype dt, int rank, const int64_t *shape) {
    int64_t rows = 1, cols = rank ? shape[rank - 1] : 1;
    for (int i = 0; i + 1 < rank; i++) rows *= shape[i];
    int64_t tall = rows > cols ? rows : cols, wide = rows > cols ? cols : rows;
    if (rank < 2) {
        gb__error(GB_ERR_VALUE, NULL, "initializer orthogonal: needs a shape of rank >= 2, got rank %d", rank);
        return NULL;
    }
    gb_tensor *a = gb_random_normal(GB_F64, 2, (int64_t[]){tall, wide}, 0.0, 1.0, init.seed);
    double *q = a ? malloc((size_t)(tall * wide) * sizeof *q) : NULL;
    if (!q) {
        if (a) gb__error(GB_ERR_MEMORY, NULL, "initializer orthogonal: out of memory");
        return NULL;
    }
    memcpy(q, gb_data(a), (size_t)(tall * wide) * sizeof *q);
    for (int64_t j = 0; j < wide; j++) {
        for (int64_t k = 0; k < j; k++) { /* remove the earlier columns */
            double dot = 0;
            for (int64_t i = 0; i < tall; i++) dot += q[i * wide + k] * q[i * wide + j];
            for (int64_t i = 0; i < tall; i++) q[i * wide + j] -= dot * q[i * wide + k];
        }
        double norm = 0;
        for (int64_t i = 0; i < tall; i++) norm += q[i * wide + j] * q[i * wide + j];
        norm = sqrt(norm);
        for (int64_t i = 0; i < tall; i++) q[i * wide + j] /= norm > 0 ? norm : 1;
    }
    a = gb_from_f64(q, 2, (int64_t[]){tall, wide});
    free(q);
    gb_tensor *m = rows < cols ? gb_transpose(a, NULL, 0) : a;
    double gain = init.a ? init.a : 1.0;
    return gb_cast(gb_reshape(gb_mul(m, gb_scalar(GB_F64, gain)), rank, shape), dt);
}

gb_tensor *gb_initializer_make(gb_initializer init, gb_dtype dt, int rank,
                               const int64_t *shape) {
    if (!gb_dtype_is_float(dt)) {
        gb__error(GB_ERR_DTYPE, NULL, "initializer %s: weights must be float32 or float64, not %s",
                  gb_initializer_name(init.kind), gb_dtype_name(dt));
        return NULL;
    }
    switch (init.kind) {
    case GB_INIT_ZEROS: return gb_zeros(dt, rank, shape);
    case GB_INIT_ONES: return gb_ones(dt, rank, shape);
    case GB_INIT_CONSTANT: return gb_fill(dt, rank, shape, init.a);
    case GB_INIT_RANDOM_UNIFORM: return gb_random_uniform(dt, rank, shape, init.a, init.b, init.seed);
    case GB_INIT_RANDOM_NORMAL: return gb_random_normal(dt, rank, shape, init.a, init.b, init.seed);
    case GB_INIT_TRUNCATED_NORMAL:
        return gb_truncated_normal(dt, rank, shape, init.a, init.b, init.seed);
    case GB_INIT_GLOROT_UNIFORM:
    case GB_INIT_GLOROT_NORMAL:
    case GB_INIT_HE_UNIFORM:
    case GB_INIT_HE_NORMAL:
    case GB_INIT_LECUN_UNIFORM:
    case GB_INIT_LECUN_NORMAL: return make_scaled(init, dt, rank, shape);
    case GB_INIT_ORTHOGONAL: return make_orthogonal(init, dt, rank, shape);
    case GB_INIT_DEFAULT:
    case GB_INIT_KIND_COUNT: break;
    }
    gb__error(GB_ERR_VALUE, NULL,
              "initializer kind %d is not a concrete initializer (GB_INIT_DEFAULT is resolved by "
              "layers; use e.g. GB_INIT_GLOROT_UNIFORM)",
              (int)init.kind);
    return NULL;
}
