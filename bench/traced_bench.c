/* traced_bench.c — what tracing a train step into a graph buys, and costs.
 *
 *   traced_tiny_mlp_step       µs per SGD step of bench/tiny_mlp.h's 10-10-1
 *                              MLP at batch 1 as a traced gb_function, against
 *                              PyTorch's faster of eager and TorchScript
 *                              (bench/eager_peer.py --traced);
 *   traced_vs_eager_tiny_step  the same traced step against glassbox's eager
 *                              step, repeats interleaved in one run;
 *   trace_cost                 ms to trace the Fashion-MNIST MLP's train step
 *                              (784-256-128-10, Adam; forward, tape,
 *                              gradients, update): the whole of
 *                              gb_function_get_concrete on a fresh function —
 *                              graph, passes, plan, the reason and the trace
 *                              event — the median over fresh functions. No
 *                              peer.
 * Each step runs in its own scope, as a real loop would.
 */
#include "bench_util.h"
#include "glassbox.h"
#include "mnist_mlp.h"
#include "tiny_mlp.h"

enum { REPEATS = 7, STEPS = 20000, TRACES = 9 };

/* ---- the tiny step, traced --------------------------------------------------------- */

static int tiny_step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = tiny_mlp_sgd_step(user, in[0], in[1]);
    return 1;
}

static double traced_us(gb_function *step, tiny_mlp *m, int iters) {
    gb_tensor *in[2] = {m->x, m->y}, *loss;
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        gb_scope_begin();
        gb_function_call(step, in, 2, NULL, 0, &loss);
        gb_scope_end();
    }
    return (bench_now() - t0) / iters * 1e6;
}

/* Both figures of the tiny step: eager and traced repeats alternate, so
 * the machine's load falls on both alike. */
static void tiny_step_figures(const char *peer) {
    gb_scope_begin();
    tiny_mlp m;
    tiny_mlp_init(&m);
    gb_function *step = gb_function_new("tiny_step", tiny_step_fn,
                                        &(gb_function_options){.user = &m});
    double eager[REPEATS], traced[REPEATS];
    tiny_mlp_eager_us(&m, STEPS / 10); /* warm up; the first call traces */
    traced_us(step, &m, STEPS / 10);
    for (int r = 0; r < REPEATS; r++) {
        eager[r] = tiny_mlp_eager_us(&m, STEPS);
        traced[r] = traced_us(step, &m, STEPS);
    }
    double ours = bench_median(traced, REPEATS);
    double torch_eager = bench_peer_value(peer, "tiny_mlp_step_us");
    double torch_script = bench_peer_value(peer, "tiny_mlp_step_script_us");
    fprintf(stderr, "traced_bench: pytorch eager %.1f us, TorchScript %.1f us\n", torch_eager,
            torch_script);
    double best = torch_eager > 0 && (torch_script <= 0 || torch_eager < torch_script)
                      ? torch_eager
                      : torch_script;
    bench_line_time("traced_tiny_mlp_step", ours, "pytorch", best, "us");
    bench_line_time("traced_vs_eager_tiny_step", ours, "eager", bench_median(eager, REPEATS), "us");
    gb_function_free(step);
    tiny_mlp_free(&m);
    gb_scope_end();
}

/* ---- the cost of a trace ------------------------------------------------------------- */

/* Each trace is a fresh gb_function for the step, signature [-1,784] and
 * [-1]; the model and Adam's slots exist already (one eager step), so
 * every trace does the same work, none builds variables. Two calls after
 * each trace check it runs and keep the excessive-retracing rule quiet. */
static void trace_cost_figure(void) {
    gb_scope_begin();
    mnist_mlp m = mnist_mlp_new();
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(32, 784), 0, 1, 5);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(32), 0, 10, 6), GB_I32);
    gb_tensor *in[2] = {x, y}, *loss;
    mnist_step_fn(&m, in, 2, NULL, 0, &loss);
    gb_tensor_spec specs[2] = {GB_SPEC("images", GB_F32, -1, 784), GB_SPEC("labels", GB_I32, -1)};
    double ms[TRACES];
    for (int t = 0; t < TRACES; t++) {
        gb_function *step = gb_function_new("train_step", mnist_step_fn,
                                            &(gb_function_options){.user = &m});
        double t0 = bench_now();
        gb_function_get_concrete(step, specs, 2, NULL, 0);
        ms[t] = (bench_now() - t0) * 1e3;
        for (int k = 0; k < 2; k++) gb_function_call(step, in, 2, NULL, 0, &loss);
        gb_function_free(step);
    }
    bench_line_time("trace_cost", bench_median(ms, TRACES), NULL, -1, "ms");
    mnist_mlp_free(&m);
    gb_scope_end();
}

int main(void) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    char peer[4096] = "";
    if (!bench_run_peer("/usr/bin/python3 " GB_SOURCE_DIR "/bench/eager_peer.py --traced "
                        "2>/dev/null",
                        peer, sizeof peer))
        fprintf(stderr, "traced_bench: PyTorch peer unavailable; figures without ratio\n");
    tiny_step_figures(peer);
    trace_cost_figure();
    return 0;
}
