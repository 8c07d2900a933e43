/* nn/layer_norm.c — LayerNormalization (keras.layers.LayerNormalization).
 *
 * Each sample is normalized over its last axis with its own mean and
 * (biased) variance, then scaled by gamma and shifted by beta ([C] each):
 * no batch statistics, so training and inference compute the same thing.
 * The call is one LayerNorm op (ops/layer_norm.c), its gradient one
 * LayerNormGrad; without scale or center it gets ones or zeros for gamma
 * or beta, constants that take no gradient.
 */
#include <math.h>
#include <stdio.h>

#include "nn/internal.h"

typedef struct layer_norm_state {
    double epsilon;
    bool center, scale;
    gb_initializer beta_init, gamma_init;
    int64_t channels;
    gb_variable *gamma, *beta;
} layer_norm_state;

static bool layer_norm_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                    int64_t *out) {
    const layer_norm_state *s = gb_module_state(m);
    char b[128];
    int64_t c = rank > 0 ? in[rank - 1] : -1;
    if (rank < 1 || (!s->channels && c <= 0) || (s->channels && c >= 0 && c != s->channels)) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     s->channels ? "input %s has %lld features, built for %lld"
                                 : "input %s needs a known last axis to build",
                     gb__shape_fmt(rank, in, b, sizeof b), (long long)c, (long long)s->channels);
        return false;
    }
    *out_rank = rank;
    memcpy(out, in, (size_t)rank * sizeof *out);
    return true;
}

static bool layer_norm_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    layer_norm_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    int64_t c = shape[rank - 1];
    if (s->scale) s->gamma = gb_module_add_weight(m, "gamma", dt, 1, &c, s->gamma_init, true);
    if (s->center) s->beta = gb_module_add_weight(m, "beta", dt, 1, &c, s->beta_init, true);
    s->channels = c;
    return gb_ok();
}

static gb_tensor *layer_norm_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const layer_norm_state *s = gb_module_state(m);
    gb_dtype dt = gb_tensor_dtype(x);
    gb_tensor *gamma = s->scale ? gb_variable_value(s->gamma) : gb_ones(dt, 1, &s->channels);
    gb_tensor *beta = s->center ? gb_variable_value(s->beta) : gb_zeros(dt, 1, &s->channels);
    return gb__layer_norm(x, gamma, beta, s->epsilon);
}

static bool layer_norm_get_config(gb_module *m, gb_config *c) {
    const layer_norm_state *s = gb_module_state(m);
    return gb_config_put_int(c, "axis", -1) && gb_config_put_number(c, "epsilon", s->epsilon) &&
           gb_config_put_bool(c, "center", s->center) && gb_config_put_bool(c, "scale", s->scale) &&
           gb__config_put_init(c, "beta_initializer", s->beta_init) &&
           gb__config_put_init(c, "gamma_initializer", s->gamma_init);
}

static gb_module *layer_norm_from_config(const gb_config *c) {
    static const char *const who = "LayerNormalization";
    gb_layer_norm_options o = {.name = gb__config_name(c, who)};
    bool center = true, scale = true;
    int64_t axis = -1;
    if (!gb_config_read_int(c, who, "axis", -1, &axis) ||
        !gb_config_read_number(c, who, "epsilon", 1e-3, &o.epsilon) ||
        !gb_config_read_bool(c, who, "center", true, &center) ||
        !gb_config_read_bool(c, who, "scale", true, &scale) ||
        !gb__config_read_init(c, who, "beta_initializer", &o.beta_initializer) ||
        !gb__config_read_init(c, who, "gamma_initializer", &o.gamma_initializer))
        return NULL;
    if (axis != -1) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: only axis -1 is supported, got %lld", who,
                  (long long)axis);
        return NULL;
    }
    o.no_center = !center;
    o.no_scale = !scale;
    return gb_layer_norm_new(&o);
}

const gb_module_type gb__layer_norm_type = {
    .class_name = "LayerNormalization",
    .default_name = "layer_normalization",
    .state_size = sizeof(layer_norm_state),
    .build = layer_norm_build,
    .output_shape = layer_norm_output_shape,
    .call = layer_norm_call,
    .get_config = layer_norm_get_config,
    .from_config = layer_norm_from_config,
};

gb_module *gb_layer_norm_new(const gb_layer_norm_options *opts) {
    static const gb_layer_norm_options defaults;
    if (!opts) opts = &defaults;
    double epsilon = opts->epsilon ? opts->epsilon : 1e-3;
    if (!(epsilon > 0) || !isfinite(epsilon)) {
        gb__error(GB_ERR_VALUE, "LayerNormalization",
                  "LayerNormalization: epsilon must be > 0, got %g", epsilon);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__layer_norm_type, opts->name, 0);
    if (!m) return NULL;
    layer_norm_state *s = gb_module_state(m);
    s->epsilon = epsilon;
    s->center = !opts->no_center;
    s->scale = !opts->no_scale;
    s->beta_init = gb__nn_init_or(opts->beta_initializer, GB_INIT_ZEROS);
    s->gamma_init = gb__nn_init_or(opts->gamma_initializer, GB_INIT_ONES);
    return m;
}
