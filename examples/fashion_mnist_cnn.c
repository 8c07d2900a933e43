/* fashion_mnist_cnn.c — a small convolutional network on Fashion-MNIST.
 *
 * Conv(32, 3x3, same)+ReLU, MaxPool 2, Conv(64, 3x3, same)+ReLU,
 * MaxPool 2, Flatten, Dense(128)+ReLU, Dense(10); NHWC; Adam 1e-3,
 * batch 128 — the same model as the PyTorch peer in bench/.
 */
#include "fmnist_common.h"

static gb_module *conv(int64_t filters) {
    return gb_conv2d_new(filters, 3, 3,
                         &(gb_conv2d_options){.padding = GB_PADDING_SAME,
                                              .activation = GB_ACT_RELU});
}

int main(int argc, char **argv) {
    fmnist_config cfg = {
        .model_name = "cnn", .epochs = 3, .batch = 128, .lr = 1e-3, .seed = 42,
        .data_dir = GB_FASHION_MNIST_DIR, .serve_port = -1,
    };
    if (!gb_dist_init(&argc, &argv)) return fmnist_fail("joining the MPI job"), 1;  /* mpirun -np N */
    int rc = fmnist_parse("fashion_mnist_cnn", argc, argv, &cfg);
    if (rc != EXAMPLE_RUN) return rc;
    gb_nn_set_seed(cfg.seed);
    gb_pool2d_options pool = {.pool_size = {2, 2}};
    gb_module *model = gb_sequential_new("cnn");
    gb_sequential_add(model, conv(32));
    gb_sequential_add(model, gb_max_pool2d_new(&pool));
    gb_sequential_add(model, conv(64));
    gb_sequential_add(model, gb_max_pool2d_new(&pool));
    gb_sequential_add(model, gb_flatten_new(NULL));
    gb_sequential_add(model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return fmnist_main(&cfg, model, GB_IMAGES_NHWC);
}
