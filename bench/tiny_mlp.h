/* tiny_mlp.h — the 10-10-1 MLP of the tiny-step benchmarks.
 *
 * One SGD step at batch 1 — forward, tape, gradient, update — is almost
 * all per-op overhead and no math: eager_bench.c runs it eagerly,
 * traced_bench.c as a traced gb_function, both against PyTorch's same
 * model in bench/eager_peer.py.
 */
#ifndef GB_BENCH_TINY_MLP_H
#define GB_BENCH_TINY_MLP_H

#include "bench_util.h"
#include "glassbox.h"

typedef struct tiny_mlp {
    gb_variable *vars[4]; /* w1 [10,10], b1 [10], w2 [10,1], b2 [1] */
    gb_tensor *x, *y, *lr; /* one sample, its target, the learning rate */
} tiny_mlp;

/* Fixed seeds: every run trains the same model on the same sample. The
 * tensors belong to the current scope. */
static inline void tiny_mlp_init(tiny_mlp *m) {
    m->vars[0] = gb_variable_new("w1", gb_random_normal(GB_F32, GB_SHAPE(10, 10), 0, 0.3, 1), true);
    m->vars[1] = gb_variable_new("b1", gb_zeros(GB_F32, GB_SHAPE(10)), true);
    m->vars[2] = gb_variable_new("w2", gb_random_normal(GB_F32, GB_SHAPE(10, 1), 0, 0.3, 2), true);
    m->vars[3] = gb_variable_new("b2", gb_zeros(GB_F32, GB_SHAPE(1)), true);
    m->x = gb_random_normal(GB_F32, GB_SHAPE(1, 10), 0, 1, 3);
    m->y = gb_random_normal(GB_F32, GB_SHAPE(1, 1), 0, 1, 4);
    m->lr = gb_scalar(GB_F32, 0.01);
}

static inline void tiny_mlp_free(tiny_mlp *m) {
    for (int i = 0; i < 4; i++) gb_variable_free(m->vars[i]);
}

/* One SGD step on (x, y); returns the loss (before the update). */
static inline gb_tensor *tiny_mlp_sgd_step(tiny_mlp *m, gb_tensor *x, gb_tensor *y) {
    gb_tape *tape = gb_tape_begin();
    gb_tensor *h = gb_relu(gb_add(gb_matmul(x, gb_variable_value(m->vars[0])),
                                  gb_variable_value(m->vars[1])));
    gb_tensor *out = gb_add(gb_matmul(h, gb_variable_value(m->vars[2])),
                            gb_variable_value(m->vars[3]));
    gb_tensor *loss = gb_reduce_mean(gb_square(gb_sub(out, y)), GB_ALL_AXES, false);
    gb_tape_end(tape);
    gb_tensor *grads[4];
    gb_tape_gradient_vars(tape, loss, m->vars, 4, grads);
    for (int i = 0; i < 4; i++) gb_variable_assign_sub(m->vars[i], gb_mul(grads[i], m->lr));
    return loss;
}

/* µs per eager step over `iters` steps, each in its own scope as a real
 * training loop runs it. */
static inline double tiny_mlp_eager_us(tiny_mlp *m, int iters) {
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        gb_scope_begin();
        tiny_mlp_sgd_step(m, m->x, m->y);
        gb_scope_end();
    }
    return (bench_now() - t0) / iters * 1e6;
}

#endif
