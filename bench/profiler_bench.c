/* profiler_bench.c — what the profiler costs a training step.
 *
 *   bench profiler_overhead            the Fashion-MNIST MLP's eager step
 *                                      (batch 128: forward, tape, gradients,
 *                                      Adam) profiled, against the same step
 *                                      unprofiled: extra time in percent
 *                                      (goal <= 5)
 *   bench profiler_overhead_traced     the same step as a traced function
 *   bench profiler_overhead_tiny_ops   the tiny MLP's step (ops of about a
 *                                      microsecond): the cost per op shows
 *                                      when the ops are smallest
 *
 * Each round times a block of steps off, then on (the capture's records
 * are dropped at each block's end: nobody observes them), alternating so
 * the machine's drift hits both alike; the figure is the median round's.
 * No peer: PyTorch's profiler is not comparable without its CUDA side.
 */
#include "bench_util.h"
#include "glassbox.h"
#include "mnist_mlp.h"
#include "tiny_mlp.h"

enum { ROUNDS = 15 };

typedef void (*step_fn)(void *ctx);

/* Seconds for `steps` calls of fn, optionally profiled. */
static double block(step_fn fn, void *ctx, int steps, bool profiled) {
    if (profiled) gb_profiler_start(NULL);
    double t0 = bench_now();
    for (int i = 0; i < steps; i++) {
        gb_set_step(i);
        fn(ctx);
    }
    double t = bench_now() - t0;
    if (profiled) gb_profiler_stop();
    return t;
}

static double overhead_percent(step_fn fn, void *ctx, int steps) {
    double ratio[ROUNDS];
    block(fn, ctx, steps, false);   /* warm: weights, slots, arenas */
    block(fn, ctx, steps, true);
    for (int r = 0; r < ROUNDS; r++) {
        double off = block(fn, ctx, steps, false);
        double on = block(fn, ctx, steps, true);
        ratio[r] = on / off;
    }
    return 100.0 * (bench_median(ratio, ROUNDS) - 1.0);
}

typedef struct mlp_ctx {
    mnist_mlp m;
    gb_tensor *in[2];
    gb_function *traced;
} mlp_ctx;

static void eager_step(void *p) {
    mlp_ctx *c = p;
    gb_tensor *out[1];
    gb_scope_begin();
    mnist_step_fn(&c->m, c->in, 2, NULL, 0, out);
    gb_scope_end();
}

static void traced_step(void *p) {
    mlp_ctx *c = p;
    gb_tensor *loss;
    gb_scope_begin();
    gb_function_call(c->traced, c->in, 2, NULL, 0, &loss);
    gb_scope_end();
}

typedef struct tiny_ctx {
    tiny_mlp m;
} tiny_ctx;

static void tiny_step(void *p) {
    tiny_ctx *c = p;
    gb_scope_begin();
    tiny_mlp_sgd_step(&c->m, c->m.x, c->m.y);
    gb_scope_end();
}

int main(void) {
    gb_nn_set_seed(1);
    mlp_ctx c = {.m = mnist_mlp_new()};
    c.in[0] = gb_random_uniform(GB_F32, GB_SHAPE(128, 784), 0, 1, 7);
    int64_t labels[128];
    for (int i = 0; i < 128; i++) labels[i] = i % 10;
    c.in[1] = gb_tensor_from(GB_I64, labels, GB_SHAPE(128));
    printf("bench profiler_overhead glassbox=%.2f unit=%%\n", overhead_percent(eager_step, &c, 20));
    c.traced = gb_function_new("train_step", mnist_step_fn, &(gb_function_options){.user = &c.m});
    printf("bench profiler_overhead_traced glassbox=%.2f unit=%%\n",
           overhead_percent(traced_step, &c, 20));
    gb_function_free(c.traced);
    mnist_mlp_free(&c.m);
    tiny_ctx t;
    tiny_mlp_init(&t.m);
    printf("bench profiler_overhead_tiny_ops glassbox=%.2f unit=%%\n",
           overhead_percent(tiny_step, &t, 200));
    tiny_mlp_free(&t.m);
    if (!gb_ok()) {
        fprintf(stderr, "profiler_bench: %s\n", gb_error_string());
        return 1;
    }
    return 0;
}
