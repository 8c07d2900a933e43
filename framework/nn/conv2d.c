/* nn/conv2d.c — the Conv2D layer on NHWC inputs.
 *
 * y = activation(conv2d(x, kernel) + bias) with kernel [kh, kw, in, filters]
 * built from the channels of the first input. Strides, dilation and
 * valid/same padding as Keras; the output size follows TensorFlow's rule
 * (valid: floor((in - eff_k) / s) + 1, same: ceil(in / s)).
 */
#include <stdio.h>

#include "nn/internal.h"

typedef struct conv2d_state {
    int64_t filters;
    int64_t ksize[2], strides[2], dilation[2];
    gb_padding padding;
    gb_activation activation;
    bool use_bias;
    gb_initializer kernel_init, bias_init;
    gb_regularizer kernel_reg, bias_reg;
    int64_t in_channels;   /* 0 until built */
    gb_variable *kernel, *bias;
} conv2d_state;

static bool conv2d_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                int64_t *out) {
    const conv2d_state *s = gb_module_state(m);
    char buf[128];
    if (rank != 4) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "expected a rank-4 NHWC input [batch, height, width, channels], got shape "
                     "%s (rank %d); reshape it first, e.g. to [batch, 28, 28, 1]",
                     gb__shape_fmt(rank, in, buf, sizeof buf), rank);
        return false;
    }
    int64_t channels = in[3];
    if (s->in_channels && channels >= 0 && channels != s->in_channels) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "input has %lld channels (shape %s) but the layer was built for %lld",
                     (long long)channels, gb__shape_fmt(rank, in, buf, sizeof buf),
                     (long long)s->in_channels);
        return false;
    }
    if (!s->in_channels && channels <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "the channel dimension must be known and positive to build the kernel, got "
                     "shape %s",
                     gb__shape_fmt(rank, in, buf, sizeof buf));
        return false;
    }
    out[0] = in[0];
    for (int i = 0; i < 2; i++) {
        out[1 + i] = gb__nn_window_out(in[1 + i], s->ksize[i], s->strides[i], s->dilation[i],
                                       s->padding);
        if (out[1 + i] == 0) {
            gb__nn_error(m, GB_ERR_SHAPE,
                         "input %s is smaller than the %lldx%lld kernel (dilation %lldx%lld) with "
                         "valid padding",
                         gb__shape_fmt(rank, in, buf, sizeof buf), (long long)s->ksize[0],
                         (long long)s->ksize[1], (long long)s->dilation[0],
                         (long long)s->dilation[1]);
            return false;
        }
    }
    out[3] = s->filters;
    *out_rank = 4;
    return true;
}

static bool conv2d_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    (void)rank;
    conv2d_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    int64_t kshape[4] = {s->ksize[0], s->ksize[1], shape[3], s->filters};
    s->kernel = gb_module_add_weight(m, "kernel", dt, 4, kshape, s->kernel_init, true);
    if (s->use_bias)
        s->bias = gb_module_add_weight(m, "bias", dt, 1, &s->filters, s->bias_init, true);
    if (!s->kernel || (s->use_bias && !s->bias)) return false;
    if (!gb__nn_regularize(m, s->kernel, s->kernel_reg, s->bias, s->bias_reg)) return false;
    s->in_channels = shape[3];
    return true;
}

static gb_tensor *conv2d_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const conv2d_state *s = gb_module_state(m);
    gb_tensor *y =
        gb_conv2d(x, gb_variable_value(s->kernel), s->strides, 2, s->padding, s->dilation, 2);
    if (s->use_bias) y = gb_add(y, gb_variable_value(s->bias));
    return gb_activation_apply(s->activation, y);
}

static bool conv2d_get_config(gb_module *m, gb_config *c) {
    const conv2d_state *s = gb_module_state(m);
    gb__weighted_config w = {s->activation, s->use_bias, s->kernel_init, s->bias_init,
                             s->kernel_reg, s->bias_reg, gb__module_activity(m), gb_module_seed(m)};
    return gb_config_put_int(c, "filters", s->filters) &&
           gb_config_put_ints(c, "kernel_size", 2, s->ksize) &&
           gb_config_put_ints(c, "strides", 2, s->strides) && gb__config_put_padding(c, s->padding) &&
           gb_config_put_ints(c, "dilation_rate", 2, s->dilation) && gb__config_put_weighted(c, &w);
}

static gb_module *conv2d_from_config(const gb_config *c) {
    static const char *const who = "Conv2D";
    gb__weighted_config w = {0};
    int64_t filters = 0, k[2], strides[2], dilation[2];
    gb_padding padding = GB_PADDING_VALID;
    if (!gb_config_read_int(c, who, "filters", 0, &filters) ||
        !gb__config_read_pair(c, who, "kernel_size", 0, k) ||
        !gb__config_read_pair(c, who, "strides", 1, strides) ||
        !gb__config_read_pair(c, who, "dilation_rate", 1, dilation) ||
        !gb__config_read_padding(c, who, &padding) || !gb__config_read_weighted(c, who, &w))
        return NULL;
    return gb_conv2d_new(filters, k[0], k[1], &(gb_conv2d_options){
                             .name = gb__config_name(c, who), .strides = {strides[0], strides[1]},
                             .padding = padding, .dilation = {dilation[0], dilation[1]},
                             .activation = w.activation, .no_bias = !w.use_bias,
                             .kernel_initializer = w.kernel_init, .bias_initializer = w.bias_init,
                             .kernel_regularizer = w.kernel_reg, .bias_regularizer = w.bias_reg,
                             .activity_regularizer = w.activity_reg, .seed = w.seed});
}

const gb_module_type gb__conv2d_type = {
    .class_name = "Conv2D",
    .default_name = "conv2d",
    .state_size = sizeof(conv2d_state),
    .build = conv2d_build,
    .output_shape = conv2d_output_shape,
    .call = conv2d_call,
    .get_config = conv2d_get_config,
    .from_config = conv2d_from_config,
};

gb_module *gb_conv2d_new(int64_t filters, int64_t kh, int64_t kw, const gb_conv2d_options *opts) {
    static const gb_conv2d_options defaults;
    if (!opts) opts = &defaults;
    int64_t strides[2], dilation[2];
    if (filters <= 0 || kh <= 0 || kw <= 0) {
        gb__error(GB_ERR_VALUE, "Conv2D",
                  "Conv2D: filters and kernel size must be positive, got filters %lld, kernel "
                  "%lldx%lld",
                  (long long)filters, (long long)kh, (long long)kw);
        return NULL;
    }
    if (!gb__nn_pair(opts->strides, 1, strides) || !gb__nn_pair(opts->dilation, 1, dilation)) {
        gb__error(GB_ERR_VALUE, "Conv2D", "Conv2D: strides and dilation must be positive");
        return NULL;
    }
    if ((strides[0] > 1 || strides[1] > 1) && (dilation[0] > 1 || dilation[1] > 1)) {
        gb__error(GB_ERR_VALUE, "Conv2D",
                  "Conv2D: strides > 1 together with dilation > 1 is not supported (as Keras)");
        return NULL;
    }
    if ((unsigned)opts->activation >= GB_ACT_COUNT ||
        (opts->padding != GB_PADDING_VALID && opts->padding != GB_PADDING_SAME)) {
        gb__error(GB_ERR_VALUE, "Conv2D", "Conv2D: activation %d or padding %d is out of range",
                  (int)opts->activation, (int)opts->padding);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__conv2d_type, opts->name, opts->seed);
    if (!m) return NULL;
    conv2d_state *s = gb_module_state(m);
    s->filters = filters;
    s->ksize[0] = kh;
    s->ksize[1] = kw;
    memcpy(s->strides, strides, sizeof strides);
    memcpy(s->dilation, dilation, sizeof dilation);
    s->padding = opts->padding;
    s->activation = opts->activation;
    s->use_bias = !opts->no_bias;
    s->kernel_init = gb__nn_init_or(opts->kernel_initializer, GB_INIT_GLOROT_UNIFORM);
    s->bias_init = gb__nn_init_or(opts->bias_initializer, GB_INIT_ZEROS);
    s->kernel_reg = opts->kernel_regularizer;
    s->bias_reg = opts->bias_regularizer;
    return gb__nn_with_activity(m, opts->activity_regularizer);
}
