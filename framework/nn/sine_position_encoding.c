/* nn/sine_position_encoding.c — SinePositionEncoding, as Keras-NLP's
 * layer: the fixed sinusoidal position signal of "Attention Is All You
 * Need", for transformers that should not learn one table per position
 * (PositionEmbedding) or must run on sequences longer than they saw.
 *
 * Called on x [..., T, d] it returns, broadcast to x's shape, the [T, d]
 * table whose entry (p, i) is sin(p * w_i) for even i and cos(p * w_i)
 * for odd i, with w_i = (1 / max_wavelength)^(2 floor(i/2) / d): Keras-NLP's
 * formula, so a model moved between the two sees the same signal. The
 * table is computed in float64 and rounded once to x's dtype; it does not
 * depend on x's values, so no gradient flows through it to x (the caller
 * adds it to the token embeddings, whose gradient is the Add's). No
 * weights.
 */
#include <math.h>
#include <stdlib.h>

#include "nn/internal.h"

typedef struct sine_state {
    double max_wavelength;
} sine_state;

static bool sine_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank, int64_t *out) {
    char b[128];
    if (rank < 2 || in[rank - 1] <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "expected [..., time, features] with known features, got %s",
                     gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    memcpy(out, in, (size_t)rank * sizeof *out);
    *out_rank = rank;
    return true;
}

static bool sine_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    int out_rank;
    int64_t out[GB_MAX_RANK];
    return gb__nn_require_float(m, dt) && sine_output_shape(m, rank, shape, &out_rank, out);
}

/* The [t, d] table in float64. */
static gb_tensor *table(gb_module *m, double max_wavelength, int64_t t, int64_t d) {
    double *v = t && d <= INT64_MAX / t ? malloc((size_t)(t * d) * sizeof *v) : NULL;
    if (!v) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory for a [%lld, %lld] table", (long long)t, (long long)d);
        return NULL;
    }
    for (int64_t i = 0; i < d; i++) {
        const double w = pow(1.0 / max_wavelength, (double)(2 * (i / 2)) / (double)d);
        for (int64_t p = 0; p < t; p++) v[p * d + i] = i % 2 ? cos((double)p * w) : sin((double)p * w);
    }
    gb_tensor *tab = gb_tensor_from(GB_F64, v, 2, (int64_t[]){t, d});
    free(v);
    return tab;
}

static gb_tensor *sine_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const sine_state *s = gb_module_state(m);
    int64_t t = gb_dim(x, -2), d = gb_dim(x, -1);
    if (t < 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "needs a known number of positions (the time axis), got -1");
        return NULL;
    }
    /* A batch dim unknown while tracing comes from x when the graph runs. */
    gb_tensor *tab = table(m, s->max_wavelength, t, d);
    return tab ? gb__broadcast_like(gb_cast(tab, gb_tensor_dtype(x)), x) : NULL;
}

static bool sine_get_config(gb_module *m, gb_config *c) {
    const sine_state *s = gb_module_state(m);
    return gb_config_put_number(c, "max_wavelength", s->max_wavelength) != NULL;
}

static gb_module *sine_from_config(const gb_config *c) {
    static const char who[] = "SinePositionEncoding";
    gb_sine_position_encoding_options o = {.name = gb__config_name(c, who)};
    if (!gb_config_read_number(c, who, "max_wavelength", 10000, &o.max_wavelength)) return NULL;
    return gb_sine_position_encoding_new(&o);
}

const gb_module_type gb__sine_position_encoding_type = {
    .class_name = "SinePositionEncoding",
    .default_name = "sine_position_encoding",
    .state_size = sizeof(sine_state),
    .build = sine_build,
    .output_shape = sine_output_shape,
    .call = sine_call,
    .get_config = sine_get_config,
    .from_config = sine_from_config,
};

gb_module *gb_sine_position_encoding_new(const gb_sine_position_encoding_options *opts) {
    static const gb_sine_position_encoding_options defaults;
    if (!opts) opts = &defaults;
    const double wl = opts->max_wavelength ? opts->max_wavelength : 10000;
    if (!(wl > 1) || isinf(wl)) {
        gb__error(GB_ERR_VALUE, "SinePositionEncoding",
                  "SinePositionEncoding: max_wavelength must be a finite number above 1, got %g", wl);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__sine_position_encoding_type, opts->name, 0);
    if (!m) return NULL;
    ((sine_state *)gb_module_state(m))->max_wavelength = wl;
    return m;
}
