/* fashion_mnist_mlp.c — a 784-256-128-10 ReLU MLP on Fashion-MNIST.
 *
 * Adam 1e-3, batch 128, as the PyTorch peer in bench/. With --db the run
 * is recorded (loss per step, accuracies, histograms, sample predictions)
 * and with --serve PORT the dashboard shows it live:
 *
 *     build/examples/fashion_mnist_mlp --epochs 5 --db runs.db --serve 6006
 */
#include "fmnist_common.h"

int main(int argc, char **argv) {
    fmnist_config cfg = {
        .model_name = "mlp", .epochs = 5, .batch = 128, .lr = 1e-3, .seed = 42,
        .data_dir = GB_FASHION_MNIST_DIR, .serve_port = -1,
    };
    if (!gb_dist_init(&argc, &argv)) return fmnist_fail("joining the MPI job"), 1;  /* mpirun -np N */
    int rc = fmnist_parse("fashion_mnist_mlp", argc, argv, &cfg);
    if (rc != EXAMPLE_RUN) return rc;
    gb_nn_set_seed(cfg.seed);
    gb_module *model = gb_sequential_new("mlp");
    gb_sequential_add(model, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(GB_MNIST_CLASSES, NULL)); /* logits */
    return fmnist_main(&cfg, model, GB_IMAGES_FLAT);
}
