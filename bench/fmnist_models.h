/* fmnist_models.h — the Fashion-MNIST examples' two Keras models as
 * layers, for the benchmarks that fit them (dist_bench, health_bench):
 * the MLP 784-256-128-10 and the CNN (two 3x3 convolutions of 32 and 64
 * with 2x2 max pooling, Dense 128, Dense 10), built for their input
 * ([-1, 784] or [-1, 28, 28, 1]).
 */
#ifndef GB_BENCH_FMNIST_MODELS_H
#define GB_BENCH_FMNIST_MODELS_H

#include "glassbox.h"

static inline gb_module *fmnist_conv(int64_t filters) {
    return gb_conv2d_new(filters, 3, 3,
                         &(gb_conv2d_options){.padding = GB_PADDING_SAME, .activation = GB_ACT_RELU});
}

static inline gb_module *fmnist_model(bool cnn) {
    gb_module *m = gb_sequential_new(cnn ? "cnn" : "mlp");
    if (cnn) {
        gb_sequential_add(m, fmnist_conv(32));
        gb_sequential_add(m, gb_max_pool2d_new(NULL));
        gb_sequential_add(m, fmnist_conv(64));
        gb_sequential_add(m, gb_max_pool2d_new(NULL));
        gb_sequential_add(m, gb_flatten_new(NULL));
    } else {
        gb_sequential_add(m, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    }
    gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(10, NULL));
    if (cnn)
        gb_module_build(m, GB_F32, 4, (int64_t[]){-1, 28, 28, 1});
    else
        gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 784});
    return m;
}

#endif
