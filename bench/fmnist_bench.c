/* fmnist_bench.c — Fashion-MNIST training throughput against PyTorch.
 *
 * glassbox's side runs the real examples (build/examples/fashion_mnist_*)
 * and reads the samples/s they print per epoch, so the benchmark measures
 * exactly what a user runs. PyTorch (bench/fmnist_peer.py) trains the same
 * models in the same run, once plain and once in its strongest measured
 * configuration (tuned allocator; for the MLP passive OpenMP waiting and
 * 2 threads, for the CNN one OpenBLAS thread and channels_last); the ratio
 * is against the faster of the two.
 */
#include "bench_util.h"
#include "example_rate.h"
#include "fmnist_peer.h"

enum { REPEATS = 3 };

typedef struct workload {
    const char *name;         /* bench line name */
    const char *example;      /* program under build/examples */
    long images;              /* training images per timed epoch */
    const char *peer_plain;   /* environment + flags for PyTorch, plain */
    const char *peer_tuned;   /* ... and in its strongest configuration */
} workload;

static const workload workloads[] = {
    {"fmnist_mlp", "fashion_mnist_mlp", 60000, "--threads 2",
     FMNIST_PEER_MLP_TUNED},
    {"fmnist_cnn", "fashion_mnist_cnn", 12800, "--threads 2",
     TUNED_MALLOC "OPENBLAS_NUM_THREADS=1 :--threads 2 --channels-last"},
};

int main(void) {
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
        const workload *w = &workloads[i];
        double ours[REPEATS];
        for (int r = 0; r < REPEATS; r++) ours[r] = bench_example_rate(w->example, w->images, "");
        double plain = fmnist_peer_rate(w->name, w->images, w->peer_plain);
        double tuned = fmnist_peer_rate(w->name, w->images, w->peer_tuned);
        fprintf(stderr, "%s: pytorch plain %.0f, tuned %.0f samples/s\n", w->name, plain, tuned);
        bench_line_rate(w->name, bench_median(ours, REPEATS), "pytorch",
                        plain > tuned ? plain : tuned, "samples/s");
    }
    return 0;
}
