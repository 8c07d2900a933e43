/* fmnist_fit_bench.c — Keras-style fit against the hand-written loop and
 * against PyTorch, on the Fashion-MNIST MLP.
 *
 *   fit_overhead    samples/s of examples/fashion_mnist_fit (compile/fit,
 *                   traced steps, the progress bar's bookkeeping, metrics)
 *                   against examples/fashion_mnist_mlp --traced (the same
 *                   model, batches and traced step, written by hand): the
 *                   ratio is hand-loop time / fit time. Runs alternate so
 *                   the machine's load falls on both alike.
 *   fmnist_mlp_fit  the same fit against PyTorch in its strongest
 *                   configuration, in the same run.
 * Both sides train one epoch of 60,000 images without validation.
 */
#include "bench_util.h"
#include "example_rate.h"
#include "fmnist_peer.h"

enum { REPEATS = 5, IMAGES = 60000 };

int main(void) {
    double fit[REPEATS], hand[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        hand[r] = bench_example_rate("fashion_mnist_mlp", IMAGES, "--traced");
        fit[r] = bench_example_rate("fashion_mnist_fit", IMAGES, "--verbose 0 --no-validation");
    }
    double ours = bench_median(fit, REPEATS);
    bench_line_rate("fit_overhead", ours, "hand_loop", bench_median(hand, REPEATS), "samples/s");
    double torch = fmnist_peer_rate("fmnist_mlp", IMAGES, FMNIST_PEER_MLP_TUNED);
    bench_line_rate("fmnist_mlp_fit", ours, "pytorch", torch, "samples/s");
    return 0;
}
