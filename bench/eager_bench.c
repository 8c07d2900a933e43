/* eager_bench.c — the cost of eager execution for tiny tensors.
 *
 * Two figures against PyTorch in the same run (bench/eager_peer.py):
 *   eager_add      µs per one-element add through the dispatcher;
 *   tiny_mlp_step  µs per SGD step of a 10-10-1 MLP at batch 1: forward,
 *                  tape, gradient and update — all overhead, no math.
 * Each training step runs in its own scope, as a real loop would. The
 * model and step are bench/tiny_mlp.h's, which traced_bench.c also runs
 * as a traced function.
 */
#include "bench_util.h"
#include "glassbox.h"
#include "tiny_mlp.h"

enum { REPEATS = 7 };

static double add_us(int iters) {
    gb_scope_begin();
    gb_tensor *a = gb_fill(GB_F32, GB_SHAPE(1), 1.0);
    gb_tensor *b = gb_fill(GB_F32, GB_SHAPE(1), 2.0);
    double t0 = bench_now();
    for (int i = 0; i < iters; i += 1000) {
        gb_scope_begin();
        for (int j = 0; j < 1000; j++) gb_add(a, b);
        gb_scope_end();
    }
    double us = (bench_now() - t0) / iters * 1e6;
    gb_scope_end();
    return us;
}

int main(void) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    char peer[4096] = "";
    if (!bench_run_peer("/usr/bin/python3 " GB_SOURCE_DIR "/bench/eager_peer.py 2>/dev/null", peer,
                        sizeof peer))
        fprintf(stderr, "eager_bench: PyTorch peer unavailable; figures without ratio\n");

    double add[REPEATS], step[REPEATS];
    add_us(100000); /* warm up */
    for (int r = 0; r < REPEATS; r++) add[r] = add_us(1000000);
    bench_line_time("eager_add", bench_median(add, REPEATS), "pytorch",
                    bench_peer_value(peer, "eager_add_us"), "us");

    gb_scope_begin();
    tiny_mlp m;
    tiny_mlp_init(&m);
    tiny_mlp_eager_us(&m, 2000); /* warm up */
    for (int r = 0; r < REPEATS; r++) step[r] = tiny_mlp_eager_us(&m, 20000);
    bench_line_time("tiny_mlp_step", bench_median(step, REPEATS), "pytorch",
                    bench_peer_value(peer, "tiny_mlp_step_us"), "us");
    tiny_mlp_free(&m);
    gb_scope_end();
    return 0;
}
