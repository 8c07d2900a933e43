/* fmnist_peer.h — PyTorch's Fashion-MNIST throughput (bench/fmnist_peer.py)
 * for the benchmarks that compare a training run against it.
 */
#ifndef GB_BENCH_FMNIST_PEER_H
#define GB_BENCH_FMNIST_PEER_H

#include "bench_util.h"

enum { FMNIST_PEER_REPEATS = 3 };

/* PyTorch's strongest measured configurations (../PEERS): a tuned
 * allocator; for the MLP passive OpenMP waiting, for the CNN one OpenBLAS
 * thread and channels_last. */
#define TUNED_MALLOC                                                                         \
    "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=268435456 "                             \
    "MALLOC_TRIM_THRESHOLD_=17179869184 "

#define FMNIST_PEER_MLP_TUNED TUNED_MALLOC "OMP_WAIT_POLICY=PASSIVE :--threads 2"

/* samples/s of the peer for a workload named like "fmnist_mlp..." or
 * "fmnist_cnn...", on `images` images; spec is "ENV... :FLAGS" (the colon
 * separates environment from flags). -1 when it cannot run. */
static inline double fmnist_peer_rate(const char *name, long images, const char *spec) {
    char env[256] = "", flags[256] = "", cmd[1024], out[4096];
    const char *colon = strchr(spec, ':');
    if (colon) {
        snprintf(env, sizeof env, "%.*s", (int)(colon - spec), spec);
        snprintf(flags, sizeof flags, "%s", colon + 1);
    } else {
        snprintf(flags, sizeof flags, "%s", spec);
    }
    snprintf(cmd, sizeof cmd,
             "env %s /usr/bin/python3 %s/bench/fmnist_peer.py --model %s --images %ld "
             "--repeats %d %s 2>/dev/null",
             env, GB_SOURCE_DIR, strstr(name, "mlp") ? "mlp" : "cnn", images, FMNIST_PEER_REPEATS,
             flags);
    if (!bench_run_peer(cmd, out, sizeof out)) return -1;
    return bench_peer_value(out, "samples_per_s");
}

#endif
