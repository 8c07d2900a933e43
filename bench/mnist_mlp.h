/* mnist_mlp.h — the Fashion-MNIST example's MLP (784-256-128-10, Adam)
 * and its train step as a function body, for the benchmarks that trace it
 * (trace cost, the memory plan).
 */
#ifndef GB_BENCH_MNIST_MLP_H
#define GB_BENCH_MNIST_MLP_H

#include "glassbox.h"

typedef struct mnist_mlp {
    gb_module *model;
    gb_optimizer *opt;
} mnist_mlp;

/* The Fashion-MNIST example's step: forward, tape, gradients, Adam. */
static inline int mnist_step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    mnist_mlp *m = user;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *logits = gb_module_call(m->model, in[0], true);
    out[0] = gb_loss_sparse_categorical_crossentropy(in[1], logits, true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m->model, &n);
    gb_tensor *grads[8];
    gb_tape_gradient_vars(tape, out[0], vars, n, grads);
    gb_optimizer_apply_gradients(m->opt, grads, n, vars, n);
    return 1;
}

static inline mnist_mlp mnist_mlp_new(void) {
    mnist_mlp m = {gb_sequential_new("mlp"), gb_adam(1e-3)};
    gb_sequential_add(m.model, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m.model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m.model, gb_dense_new(10, NULL));
    return m;
}

static inline void mnist_mlp_free(mnist_mlp *m) {
    gb_module_free(m->model);
    gb_optimizer_free(m->opt);
}

#endif
