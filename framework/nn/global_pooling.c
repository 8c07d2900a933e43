/* nn/global_pooling.c — GlobalAveragePooling2D: NHWC [B, H, W, C] to the
 * mean over H and W, [B, C] (keras.layers.GlobalAveragePooling2D), the
 * usual bridge from convolutions to a classifier without Flatten's
 * spatial weights; GlobalAveragePooling1D: [B, T, C] to the mean over T,
 * the bridge from embedded tokens to a classifier.
 *
 * GlobalAveragePooling1D takes a mask (Embedding's mask_zero): the mean
 * over the steps it keeps, sum(x * mask) / count, so padding does not
 * dilute a short text's average. A row that keeps no step averages to
 * zeros (the count is at least 1), where Keras divides 0 by 0.
 */
#include <stdio.h>

#include "nn/internal.h"

static bool gap_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                             int64_t *out) {
    if (rank != 4) {
        char b[128];
        gb__nn_error(m, GB_ERR_SHAPE, "expected a rank-4 NHWC input, got shape %s",
                     gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    out[0] = in[0];
    out[1] = in[3];
    *out_rank = 2;
    return true;
}

static gb_tensor *gap_call(gb_module *m, gb_tensor *x, bool training) {
    (void)m, (void)training;
    return gb_reduce_mean(x, (int64_t[]){1, 2}, 2, false);
}

static bool gap1d_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                               int64_t *out) {
    if (rank != 3) {
        char b[128];
        gb__nn_error(m, GB_ERR_SHAPE, "expected a rank-3 input [batch, steps, features], got "
                     "shape %s", gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    out[0] = in[0];
    out[1] = in[2];
    *out_rank = 2;
    return true;
}

static gb_tensor *gap1d_call(gb_module *m, gb_tensor *x, bool training) {
    (void)m, (void)training;
    return gb_reduce_mean(x, (int64_t[]){1}, 1, false);
}

static gb_tensor *gap1d_call_masked(gb_module *m, gb_tensor *x, gb_tensor *mask, bool training) {
    (void)training;
    if (gb_rank(mask) != 2 || gb_dim(mask, 0) != gb_dim(x, 0) || gb_dim(mask, 1) != gb_dim(x, 1)) {
        char a[64], b[64];
        gb__nn_error(m, GB_ERR_SHAPE, "the mask %s does not fit the input %s (it must be "
                     "[batch, steps])", gb_shape_str(mask, a, sizeof a), gb_shape_str(x, b, sizeof b));
        return NULL;
    }
    gb_tensor *keep = gb_cast(mask, gb_tensor_dtype(x));   /* [B, T] */
    gb_tensor *sum = gb_reduce_sum(gb_mul(x, gb_expand_dims(keep, 2)), (int64_t[]){1}, 1, false);
    gb_tensor *count = gb_reduce_sum(keep, (int64_t[]){1}, 1, true); /* [B, 1] */
    return gb_div(sum, gb_maximum(count, gb_scalar(gb_tensor_dtype(x), 1)));
}

static gb_module *gap1d_from_config(const gb_config *c) {
    return gb_global_avg_pool1d_new(gb__config_name(c, "GlobalAveragePooling1D"));
}

const gb_module_type gb__global_avg_pool1d_type = {
    .class_name = "GlobalAveragePooling1D",
    .default_name = "global_average_pooling1d",
    .output_shape = gap1d_output_shape,
    .call = gap1d_call,
    .call_masked = gap1d_call_masked,
    .from_config = gap1d_from_config,
};

gb_module *gb_global_avg_pool1d_new(const char *name) {
    return gb_module_new(&gb__global_avg_pool1d_type, name, 0);
}

static gb_module *gap_from_config(const gb_config *c) {
    return gb_global_avg_pool2d_new(gb__config_name(c, "GlobalAveragePooling2D"));
}

const gb_module_type gb__global_avg_pool_type = {
    .class_name = "GlobalAveragePooling2D",
    .default_name = "global_average_pooling2d",
    .output_shape = gap_output_shape,
    .call = gap_call,
    .from_config = gap_from_config,
};

gb_module *gb_global_avg_pool2d_new(const char *name) {
    return gb_module_new(&gb__global_avg_pool_type, name, 0);
}
