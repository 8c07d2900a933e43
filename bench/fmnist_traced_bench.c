/* fmnist_traced_bench.c — Fashion-MNIST training, train step traced vs eager.
 *
 *   fmnist_mlp_traced  samples/s of examples/fashion_mnist_mlp --traced (the
 *                      train step one traced graph) against the same example
 *                      eager, one epoch each, runs alternating in one
 *                      benchmark so the machine's load falls on both alike.
 * PyTorch's figure for the same model is fmnist_bench.c's fmnist_mlp.
 */
#include "bench_util.h"
#include "example_rate.h"

enum { REPEATS = 3, IMAGES = 60000 };

int main(void) {
    double traced[REPEATS], eager[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        eager[r] = bench_example_rate("fashion_mnist_mlp", IMAGES, "");
        traced[r] = bench_example_rate("fashion_mnist_mlp", IMAGES, "--traced");
    }
    bench_line_rate("fmnist_mlp_traced", bench_median(traced, REPEATS), "eager",
                    bench_median(eager, REPEATS), "samples/s");
    return 0;
}
