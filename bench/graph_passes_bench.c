/* graph_passes_bench.c — what the graph passes buy.
 *
 *   fused_elementwise  µs for GELU written from primitives (x^3, scale,
 *                      add, tanh, add, two products: nine ops) on a
 *                      1M-element float32 tensor: traced, so the fusion
 *                      pass makes it one FusedElementwise node, against
 *                      the same code run eagerly (nine passes over memory),
 *                      repeats interleaved in one run;
 *   gelu_kernel        the same traced GELU against PyTorch's own fused
 *                      kernel, gelu(x, approximate='tanh'), on the same
 *                      1M floats (bench/gelu_peer.py, same run, the
 *                      faster of its 1- and 2-thread runs): fusion has to
 *                      make primitives as fast as a hand-written kernel;
 *   graph_memory_plan  bytes of the planned arena of the Fashion-MNIST MLP's
 *                      train step (784-256-128-10, Adam, batch 128: forward,
 *                      tape, gradients, update) against the naive plan, every
 *                      value in its own buffer (lower is better; ratio =
 *                      naive / planned).
 */
#include "bench_util.h"
#include "glassbox.h"
#include "mnist_mlp.h"

enum { REPEATS = 9, CALLS = 20, N = 1 << 20 };

/* ---- fused elementwise --------------------------------------------------------------- */

static gb_tensor *gelu_from_primitives(gb_tensor *x) {
    gb_tensor *cube = gb_mul(gb_mul(x, x), x);
    gb_tensor *inner = gb_mul_scalar(gb_add(x, gb_mul_scalar(cube, 0.044715)), 0.7978845608028654);
    return gb_mul(gb_mul_scalar(x, 0.5), gb_add_scalar(gb_tanh(inner), 1.0));
}

static int gelu_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gelu_from_primitives(in[0]);
    return 1;
}

static double eager_us(gb_tensor *x) {
    double t0 = bench_now();
    for (int i = 0; i < CALLS; i++) {
        gb_scope_begin();
        gelu_from_primitives(x);
        gb_scope_end();
    }
    return (bench_now() - t0) / CALLS * 1e6;
}

static double traced_us(gb_function *f, gb_tensor *x) {
    gb_tensor *y;
    double t0 = bench_now();
    for (int i = 0; i < CALLS; i++) {
        gb_scope_begin();
        gb_function_call(f, &x, 1, NULL, 0, &y);
        gb_scope_end();
    }
    return (bench_now() - t0) / CALLS * 1e6;
}

/* Prints fused_elementwise and returns the traced median (µs). */
static double fused_elementwise_figure(void) {
    gb_scope_begin();
    gb_tensor *x = gb_random_normal(GB_F32, 1, (int64_t[]){N}, 0, 1, 7);
    gb_function *f = gb_function_new("gelu", gelu_fn, NULL);
    eager_us(x); /* warm up; the first call traces */
    traced_us(f, x);
    double eager[REPEATS], traced[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        eager[r] = eager_us(x);
        traced[r] = traced_us(f, x);
    }
    gb_graph_stats st = gb_function_graph_stats(f);
    fprintf(stderr, "graph_passes_bench: gelu graph %d nodes traced, %d after the passes\n",
            st.nodes_traced, st.passes[st.npasses - 1].nodes);
    double fused = bench_median(traced, REPEATS);
    bench_line_time("fused_elementwise", fused, "eager", bench_median(eager, REPEATS), "us");
    gb_function_free(f);
    gb_scope_end();
    return fused;
}

static void gelu_kernel_figure(double fused_us) {
    char peer[256] = "";
    if (!bench_run_peer("/usr/bin/python3 " GB_SOURCE_DIR "/bench/gelu_peer.py 2>/dev/null", peer,
                        sizeof peer))
        fprintf(stderr, "graph_passes_bench: PyTorch peer unavailable; gelu_kernel without ratio\n");
    bench_line_time("gelu_kernel", fused_us, "pytorch", bench_peer_value(peer, "gelu_us"), "us");
}

/* ---- the memory plan ------------------------------------------------------------------- */

static void memory_plan_figure(void) {
    gb_scope_begin();
    mnist_mlp m = mnist_mlp_new();
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(128, 784), 0, 1, 5);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(128), 0, 10, 6), GB_I32);
    gb_tensor *in[2] = {x, y}, *loss;
    mnist_step_fn(&m, in, 2, NULL, 0, &loss); /* variables and Adam's slots */
    gb_function *step = gb_function_new("train_step", mnist_step_fn,
                                        &(gb_function_options){.user = &m});
    gb_tensor_spec specs[2] = {GB_SPEC("images", GB_F32, 128, 784), GB_SPEC("labels", GB_I32, 128)};
    gb_graph_stats st = gb_concrete_graph_stats(gb_function_get_concrete(step, specs, 2, NULL, 0));
    fprintf(stderr, "graph_passes_bench: train step %d nodes traced, %d after the passes, "
            "%d outputs in place\n", st.nodes_traced, st.passes[st.npasses - 1].nodes, st.inplace);
    bench_line_time("graph_memory_plan", (double)st.arena_bytes, "naive", (double)st.naive_bytes,
                    "bytes");
    gb_function_free(step);
    mnist_mlp_free(&m);
    gb_scope_end();
}

int main(void) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    gelu_kernel_figure(fused_elementwise_figure());
    memory_plan_figure();
    return 0;
}
