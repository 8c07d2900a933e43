/* char_lm_bench.c — `bench char_lm_step`: tokens/s of the character-level
 * transformer's traced train step (examples/char_lm: 4 blocks, 4 heads,
 * d_model 128, context 128, batch 32, AdamW with clipping) against the
 * same model, batch and optimizer in PyTorch (bench/char_lm_peer.py).
 *
 * Ours is the rate char_lm prints for the steps after the first (which
 * traces), as a user runs it: fit, no store. PyTorch runs in the
 * configurations the peer notes name as its strongest — one thread, and
 * two with passive OpenMP waiting, both with the tuned allocator — eager
 * and torch.jit.trace; the best of them counts. Runs alternate, so the
 * machine's load falls on both alike; medians of REPEATS.
 */
#include "bench_util.h"

enum { REPEATS = 3, STEPS = 12 };

#define TUNED_MALLOC                                                                         \
    "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=268435456 "                             \
    "MALLOC_TRIM_THRESHOLD_=17179869184 "

/* tokens/s of char_lm's steady train steps; -1 on failure. */
static double ours(void) {
    char cmd[512], out[16384];
    snprintf(cmd, sizeof cmd, "%s/examples/char_lm --epochs 1 --steps %d --val-windows 1 --verbose 0 2>&1",
             GB_BUILD_DIR, STEPS);
    if (!bench_run_peer(cmd, out, sizeof out)) {
        fprintf(stderr, "char_lm failed:\n%s\n", out);
        return -1;
    }
    const char *p = strstr(out, "train: ");
    return p ? atof(p + 7) : -1;
}

/* PyTorch's best tokens/s over its strong configurations; -1 when absent. */
static double peer(void) {
    static const char *const configs[] = {TUNED_MALLOC "OMP_WAIT_POLICY=PASSIVE :--threads 1",
                                          TUNED_MALLOC "OMP_WAIT_POLICY=PASSIVE :--threads 2"};
    double best = -1;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char cmd[1024], out[4096];
        const char *colon = strchr(configs[i], ':');
        snprintf(cmd, sizeof cmd, "env %.*s /usr/bin/python3 %s/bench/char_lm_peer.py --bench --steps %d --warmup 2 --repeats 1 %s",
                 (int)(colon - configs[i]), configs[i], GB_SOURCE_DIR, STEPS, colon + 1);
        if (!bench_run_peer(cmd, out, sizeof out)) continue;
        double v = bench_peer_value(out, "tokens_per_s");
        if (v > best) best = v;
    }
    return best;
}

int main(void) {
    double g[REPEATS], t[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        g[r] = ours();
        t[r] = peer();
    }
    double torch = bench_median(t, REPEATS);
    bench_line_rate("char_lm_step", bench_median(g, REPEATS), "pytorch", torch, "tokens/s");
    return 0;
}
