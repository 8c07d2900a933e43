/* nn/dense.c — the Dense layer: y = activation(x @ kernel + bias).
 *
 * The kernel [in, units] is built from the last axis of the first input.
 * A call is two variable reads, MatMul, Add (broadcasting the bias) and
 * the activation: nothing else, so a small MLP pays for its arithmetic and
 * not for the layer. Inputs of rank > 2 multiply on their last axis
 * ([B, T, in] -> [B, T, units]), as Keras.
 */
#include <stdio.h>

#include "nn/internal.h"

typedef struct dense_state {
    int64_t units;
    int64_t in_features;      /* 0 until built */
    gb_activation activation;
    bool use_bias;
    gb_initializer kernel_init, bias_init;
    gb_regularizer kernel_reg, bias_reg;
    gb_variable *kernel, *bias;
} dense_state;

static bool dense_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                               int64_t *out) {
    const dense_state *s = gb_module_state(m);
    char buf[128];
    if (rank < 2) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "expected an input of rank >= 2 ([batch, features]), got shape %s",
                     gb__shape_fmt(rank, in, buf, sizeof buf));
        return false;
    }
    int64_t features = in[rank - 1];
    if (s->in_features && features >= 0 && features != s->in_features) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "input has %lld features (shape %s) but the layer was built for %lld "
                     "(kernel [%lld,%lld])",
                     (long long)features, gb__shape_fmt(rank, in, buf, sizeof buf),
                     (long long)s->in_features, (long long)s->in_features, (long long)s->units);
        return false;
    }
    if (!s->in_features && features <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "the last dimension of the input must be known and positive to build the "
                     "kernel, got shape %s",
                     gb__shape_fmt(rank, in, buf, sizeof buf));
        return false;
    }
    memcpy(out, in, (size_t)rank * sizeof *out);
    out[rank - 1] = s->units;
    *out_rank = rank;
    return true;
}

static bool dense_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    dense_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    int64_t in = shape[rank - 1];
    s->kernel = gb_module_add_weight(m, "kernel", dt, 2, (int64_t[]){in, s->units},
                                     s->kernel_init, true);
    if (s->use_bias)
        s->bias = gb_module_add_weight(m, "bias", dt, 1, &s->units, s->bias_init, true);
    if (!s->kernel || (s->use_bias && !s->bias)) return false;
    if (!gb__nn_regularize(m, s->kernel, s->kernel_reg, s->bias, s->bias_reg)) return false;
    s->in_features = in;
    return true;
}

static gb_tensor *dense_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const dense_state *s = gb_module_state(m);
    gb_tensor *y = gb_matmul(x, gb_variable_value(s->kernel));
    if (s->use_bias) y = gb_add(y, gb_variable_value(s->bias));
    return gb_activation_apply(s->activation, y);
}

static bool dense_get_config(gb_module *m, gb_config *c) {
    const dense_state *s = gb_module_state(m);
    gb__weighted_config w = {s->activation, s->use_bias, s->kernel_init, s->bias_init,
                             s->kernel_reg, s->bias_reg, gb__module_activity(m), gb_module_seed(m)};
    return gb_config_put_int(c, "units", s->units) && gb__config_put_weighted(c, &w);
}

static gb_module *dense_from_config(const gb_config *c) {
    gb__weighted_config w = {0};
    int64_t units = 0;
    if (!gb_config_read_int(c, "Dense", "units", 0, &units) || !gb__config_read_weighted(c, "Dense", &w))
        return NULL;
    return gb_dense_new(units, &(gb_dense_options){
                                   .name = gb__config_name(c, "Dense"), .activation = w.activation,
                                   .no_bias = !w.use_bias, .kernel_initializer = w.kernel_init,
                                   .bias_initializer = w.bias_init, .kernel_regularizer = w.kernel_reg,
                                   .bias_regularizer = w.bias_reg,
                                   .activity_regularizer = w.activity_reg, .seed = w.seed});
}

const gb_module_type gb__dense_type = {
    .class_name = "Dense",
    .default_name = "dense",
    .state_size = sizeof(dense_state),
    .build = dense_build,
    .output_shape = dense_output_shape,
    .call = dense_call,
    .get_config = dense_get_config,
    .from_config = dense_from_config,
};

gb_module *gb_dense_new(int64_t units, const gb_dense_options *opts) {
    static const gb_dense_options defaults;
    if (!opts) opts = &defaults;
    if (units <= 0) {
        gb__error(GB_ERR_VALUE, "Dense", "Dense: units must be positive, got %lld",
                  (long long)units);
        return NULL;
    }
    if ((unsigned)opts->activation >= GB_ACT_COUNT) {
        gb__error(GB_ERR_VALUE, "Dense", "Dense: activation %d is out of range",
                  (int)opts->activation);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__dense_type, opts->name, opts->seed);
    if (!m) return NULL;
    dense_state *s = gb_module_state(m);
    s->units = units;
    s->activation = opts->activation;
    s->use_bias = !opts->no_bias;
    s->kernel_init = gb__nn_init_or(opts->kernel_initializer, GB_INIT_GLOROT_UNIFORM);
    s->bias_init = gb__nn_init_or(opts->bias_initializer, GB_INIT_ZEROS);
    s->kernel_reg = opts->kernel_regularizer;
    s->bias_reg = opts->bias_regularizer;
    return gb__nn_with_activity(m, opts->activity_regularizer);
}
