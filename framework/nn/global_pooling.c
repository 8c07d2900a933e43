/* nn/global_pooling.c — GlobalAveragePooling2D: NHWC [B, H, W, C] to the
 * mean over H and W, [B, C] (keras.layers.GlobalAveragePooling2D), the
 * usual bridge from convolutions to a classifier without Flatten's
 * spatial weights.
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
