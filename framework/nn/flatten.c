/* nn/flatten.c — the Flatten layer: [batch, d1, d2, ...] -> [batch, d1*d2*...].
 *
 * A reshape, which is a view sharing the input's memory: no copy. A rank-1
 * input becomes [batch, 1], as in Keras.
 */
#include <stdio.h>

#include "nn/internal.h"

static bool flatten_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                 int64_t *out) {
    char buf[128];
    if (rank < 1) {
        gb__nn_error(m, GB_ERR_SHAPE, "expected an input with a batch axis, got a scalar");
        return false;
    }
    int64_t features = 1;
    for (int i = 1; i < rank; i++) {
        if (in[i] < 0) {
            gb__nn_error(m, GB_ERR_SHAPE,
                         "all dimensions but the batch must be known, got shape %s",
                         gb__shape_fmt(rank, in, buf, sizeof buf));
            return false;
        }
        features *= in[i];
    }
    out[0] = in[0];
    out[1] = features;
    *out_rank = 2;
    return true;
}

static gb_tensor *flatten_call(gb_module *m, gb_tensor *x, bool training) {
    (void)m;
    (void)training;
    if (gb_rank(x) == 2) return x;
    int64_t dims[2];
    int rank;
    flatten_output_shape(m, gb_rank(x), gb_shape(x), &rank, dims);
    return gb_reshape(x, 2, dims);
}

static gb_module *flatten_from_config(const gb_config *c) {
    return gb_flatten_new(gb__config_name(c, "Flatten"));
}

const gb_module_type gb__flatten_type = {
    .from_config = flatten_from_config,
    .class_name = "Flatten",
    .default_name = "flatten",
    .output_shape = flatten_output_shape,
    .call = flatten_call,
};

gb_module *gb_flatten_new(const char *name) { return gb_module_new(&gb__flatten_type, name, 0); }
