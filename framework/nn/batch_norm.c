/* nn/batch_norm.c — BatchNormalization (keras.layers.BatchNormalization).
 *
 * Training: normalize with the batch's mean and (biased) variance over
 * every axis but the feature axis, then scale by gamma and shift by beta;
 * and move the running statistics, moving = moving * momentum + batch *
 * (1 - momentum), as Keras 3. Inference: normalize with the running
 * statistics. The statistics are non-trainable variables, so they are
 * saved with the model and never touched by an optimizer; their update
 * is a variable assignment through the op API, so inside a traced step
 * it is a stateful node of the graph, not a C-side read of values.
 * Gradients flow through the batch statistics by autodiff of the
 * composed ops (mean, variance, rsqrt), exactly as a fused kernel's
 * backward would compute them.
 */
#include <math.h>
#include <stdio.h>

#include "nn/internal.h"

typedef struct batch_norm_state {
    int64_t axis;             /* as given (-1: last) */
    double momentum, epsilon;
    bool center, scale;
    gb_initializer beta_init, gamma_init, mean_init, var_init;
    int feature;              /* the resolved axis, at build */
    int64_t channels;
    gb_variable *gamma, *beta, *moving_mean, *moving_var;
} batch_norm_state;

static int resolve_axis(gb_module *m, int rank) {
    const batch_norm_state *s = gb_module_state(m);
    int64_t a = s->axis < 0 ? s->axis + rank : s->axis;
    if (rank >= 2 && a >= 1 && a < rank) return (int)a;
    gb__nn_error(m, GB_ERR_SHAPE, "axis %lld does not name a feature axis of a rank-%d input",
                 (long long)s->axis, rank);
    return -1;
}

static bool batch_norm_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                    int64_t *out) {
    const batch_norm_state *s = gb_module_state(m);
    int a = resolve_axis(m, rank);
    if (a < 0) return false;
    if (s->channels && in[a] >= 0 && in[a] != s->channels) {
        char b[128];
        gb__nn_error(m, GB_ERR_SHAPE, "input %s has %lld features on axis %d, built for %lld",
                     gb__shape_fmt(rank, in, b, sizeof b), (long long)in[a], a,
                     (long long)s->channels);
        return false;
    }
    if (!s->channels && in[a] <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "the feature axis %d must be known to build", a);
        return false;
    }
    *out_rank = rank;
    memcpy(out, in, (size_t)rank * sizeof *out);
    return true;
}

static bool batch_norm_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    batch_norm_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    s->feature = resolve_axis(m, rank);
    int64_t c = shape[s->feature];
    if (s->scale) s->gamma = gb_module_add_weight(m, "gamma", dt, 1, &c, s->gamma_init, true);
    if (s->center) s->beta = gb_module_add_weight(m, "beta", dt, 1, &c, s->beta_init, true);
    s->moving_mean = gb_module_add_weight(m, "moving_mean", dt, 1, &c, s->mean_init, false);
    s->moving_var = gb_module_add_weight(m, "moving_variance", dt, 1, &c, s->var_init, false);
    s->channels = c;
    return gb_ok();
}

/* A [C] vector shaped to broadcast against the input ([1, .., C, .., 1]). */
static gb_tensor *along_feature(const batch_norm_state *s, gb_tensor *v, int rank) {
    if (s->feature == rank - 1) return v;
    int64_t dims[GB_MAX_RANK];
    for (int i = 0; i < rank; i++) dims[i] = i == s->feature ? s->channels : 1;
    return gb_reshape(v, rank, dims);
}

/* moving = moving * momentum + value * (1 - momentum). */
static bool move(gb_variable *moving, gb_tensor *value, double momentum) {
    gb_tensor *next = gb_add(gb_mul_scalar(gb_variable_value(moving), momentum),
                             gb_mul_scalar(value, 1.0 - momentum));
    return next && gb_variable_assign(moving, next);
}

static gb_tensor *batch_norm_call(gb_module *m, gb_tensor *x, bool training) {
    const batch_norm_state *s = gb_module_state(m);
    int rank = gb_rank(x);
    gb_tensor *mean, *var;
    if (training) {
        int64_t axes[GB_MAX_RANK];
        int n = 0;
        for (int i = 0; i < rank; i++)
            if (i != s->feature) axes[n++] = i;
        mean = gb_reduce_mean(x, axes, n, false);                                  /* [C] */
        var = gb_reduce_mean(gb_square(gb_sub(x, along_feature(s, mean, rank))), axes, n, false);
        if (!move(s->moving_mean, mean, s->momentum) || !move(s->moving_var, var, s->momentum))
            return NULL;
    } else {
        mean = gb_variable_value(s->moving_mean);
        var = gb_variable_value(s->moving_var);
    }
    /* y = (x - mean) * (gamma / sqrt(var + eps)) + beta, the scale folded first. */
    gb_tensor *inv = gb_rsqrt(gb_add_scalar(var, s->epsilon));
    if (s->scale) inv = gb_mul(inv, gb_variable_value(s->gamma));
    gb_tensor *y = gb_mul(gb_sub(x, along_feature(s, mean, rank)), along_feature(s, inv, rank));
    if (s->center) y = gb_add(y, along_feature(s, gb_variable_value(s->beta), rank));
    return y;
}

static bool batch_norm_get_config(gb_module *m, gb_config *c) {
    const batch_norm_state *s = gb_module_state(m);
    return gb_config_put_int(c, "axis", s->axis) && gb_config_put_number(c, "momentum", s->momentum) &&
           gb_config_put_number(c, "epsilon", s->epsilon) && gb_config_put_bool(c, "center", s->center) &&
           gb_config_put_bool(c, "scale", s->scale) &&
           gb__config_put_init(c, "beta_initializer", s->beta_init) &&
           gb__config_put_init(c, "gamma_initializer", s->gamma_init) &&
           gb__config_put_init(c, "moving_mean_initializer", s->mean_init) &&
           gb__config_put_init(c, "moving_variance_initializer", s->var_init);
}

static gb_module *batch_norm_from_config(const gb_config *c) {
    static const char *const who = "BatchNormalization";
    gb_batch_norm_options o = {.name = gb__config_name(c, who)};
    bool center = true, scale = true;
    if (!gb_config_read_int(c, who, "axis", -1, &o.axis) ||
        !gb_config_read_number(c, who, "momentum", 0.99, &o.momentum) ||
        !gb_config_read_number(c, who, "epsilon", 1e-3, &o.epsilon) ||
        !gb_config_read_bool(c, who, "center", true, &center) ||
        !gb_config_read_bool(c, who, "scale", true, &scale) ||
        !gb__config_read_init(c, who, "beta_initializer", &o.beta_initializer) ||
        !gb__config_read_init(c, who, "gamma_initializer", &o.gamma_initializer) ||
        !gb__config_read_init(c, who, "moving_mean_initializer", &o.moving_mean_initializer) ||
        !gb__config_read_init(c, who, "moving_variance_initializer", &o.moving_variance_initializer))
        return NULL;
    o.no_center = !center;
    o.no_scale = !scale;
    return gb_batch_norm_new(&o);
}

const gb_module_type gb__batch_norm_type = {
    .class_name = "BatchNormalization",
    .default_name = "batch_normalization",
    .state_size = sizeof(batch_norm_state),
    .build = batch_norm_build,
    .output_shape = batch_norm_output_shape,
    .call = batch_norm_call,
    .get_config = batch_norm_get_config,
    .from_config = batch_norm_from_config,
};

gb_module *gb_batch_norm_new(const gb_batch_norm_options *opts) {
    static const gb_batch_norm_options defaults;
    if (!opts) opts = &defaults;
    double momentum = opts->momentum ? opts->momentum : 0.99;
    double epsilon = opts->epsilon ? opts->epsilon : 1e-3;
    if (!(momentum >= 0 && momentum <= 1) || !(epsilon > 0) || !isfinite(epsilon)) {
        gb__error(GB_ERR_VALUE, "BatchNormalization",
                  "BatchNormalization: momentum must be in [0, 1] and epsilon > 0, got %g and %g",
                  momentum, epsilon);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__batch_norm_type, opts->name, 0);
    if (!m) return NULL;
    batch_norm_state *s = gb_module_state(m);
    s->axis = opts->axis ? opts->axis : -1;
    s->momentum = momentum;
    s->epsilon = epsilon;
    s->center = !opts->no_center;
    s->scale = !opts->no_scale;
    s->beta_init = gb__nn_init_or(opts->beta_initializer, GB_INIT_ZEROS);
    s->gamma_init = gb__nn_init_or(opts->gamma_initializer, GB_INIT_ONES);
    s->mean_init = gb__nn_init_or(opts->moving_mean_initializer, GB_INIT_ZEROS);
    s->var_init = gb__nn_init_or(opts->moving_variance_initializer, GB_INIT_ONES);
    return m;
}
