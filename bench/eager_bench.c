/* eager_bench.c — the cost of eager execution for tiny tensors.
 *
 * Two figures against PyTorch in the same run (bench/eager_peer.py):
 *   eager_add      µs per one-element add through the dispatcher;
 *   tiny_mlp_step  µs per SGD step of a 10-10-1 MLP at batch 1: forward,
 *                  tape, gradient and update — all overhead, no math.
 * Each training step runs in its own scope, as a real loop would.
 */
#include "bench_util.h"
#include "glassbox.h"

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

typedef struct mlp {
    gb_variable *vars[4]; /* w1 [10,10], b1 [10], w2 [10,1], b2 [1] */
    gb_tensor *x, *y, *lr;
} mlp;

static void mlp_init(mlp *m) {
    m->vars[0] = gb_variable_new("w1", gb_random_normal(GB_F32, GB_SHAPE(10, 10), 0, 0.3, 1), true);
    m->vars[1] = gb_variable_new("b1", gb_zeros(GB_F32, GB_SHAPE(10)), true);
    m->vars[2] = gb_variable_new("w2", gb_random_normal(GB_F32, GB_SHAPE(10, 1), 0, 0.3, 2), true);
    m->vars[3] = gb_variable_new("b2", gb_zeros(GB_F32, GB_SHAPE(1)), true);
    m->x = gb_random_normal(GB_F32, GB_SHAPE(1, 10), 0, 1, 3);
    m->y = gb_random_normal(GB_F32, GB_SHAPE(1, 1), 0, 1, 4);
    m->lr = gb_scalar(GB_F32, 0.01);
}

static void mlp_step(mlp *m) {
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *h = gb_relu(gb_add(gb_matmul(m->x, gb_variable_value(m->vars[0])),
                                  gb_variable_value(m->vars[1])));
    gb_tensor *out = gb_add(gb_matmul(h, gb_variable_value(m->vars[2])),
                            gb_variable_value(m->vars[3]));
    gb_tensor *loss = gb_reduce_mean(gb_square(gb_sub(out, m->y)), GB_ALL_AXES, false);
    gb_tape_end(tape);
    gb_tensor *grads[4];
    gb_tape_gradient_vars(tape, loss, m->vars, 4, grads);
    for (int i = 0; i < 4; i++) gb_variable_assign_sub(m->vars[i], gb_mul(grads[i], m->lr));
    gb_scope_end();
}

static double mlp_us(mlp *m, int iters) {
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) mlp_step(m);
    return (bench_now() - t0) / iters * 1e6;
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
    mlp m;
    mlp_init(&m);
    mlp_us(&m, 2000);
    for (int r = 0; r < REPEATS; r++) step[r] = mlp_us(&m, 20000);
    bench_line_time("tiny_mlp_step", bench_median(step, REPEATS), "pytorch",
                    bench_peer_value(peer, "tiny_mlp_step_us"), "us");
    for (int i = 0; i < 4; i++) gb_variable_free(m.vars[i]);
    gb_scope_end();
    return 0;
}
