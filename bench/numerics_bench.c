/* numerics_bench.c — what numerics checks cost a real training step.
 *
 * The Fashion-MNIST MLP step (784-256-128-10, batch 128, Adam, forward,
 * tape, gradient, update) timed with checks off and on (every float output
 * of every op scanned), interleaved so machine noise hits both alike.
 * Prints the overhead in percent (target < 10 %); there is no peer: no
 * other framework checks every op.
 */
#include "bench_util.h"
#include "glassbox.h"

enum { STEPS = 300, REPEATS = 9 };

typedef struct setup {
    gb_module *model;
    gb_optimizer *opt;
    gb_tensor *x, *y;
} setup;

static void step(setup *s) {
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *logits = gb_module_call(s->model, s->x, true);
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(s->y, logits, true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(s->model, &n);
    gb_tensor *grads[8];
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    gb_optimizer_apply_gradients(s->opt, grads, n, vars, n);
    gb_scope_end();
}

static double ms_per_step(setup *s, bool checks) {
    if (checks)
        gb_enable_check_numerics();
    else
        gb_disable_check_numerics();
    double t0 = bench_now();
    for (int i = 0; i < STEPS; i++) step(s);
    gb_disable_check_numerics();
    return (bench_now() - t0) / STEPS * 1e3;
}

int main(void) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    gb_scope_begin();
    setup s = {.model = gb_sequential_new("mlp"), .opt = gb_adam(1e-3)};
    gb_sequential_add(s.model, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(s.model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(s.model, gb_dense_new(10, NULL));
    s.x = gb_random_uniform(GB_F32, GB_SHAPE(128, 784), 0, 1, 1);
    s.y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(128), 0, 10, 2), GB_I32);
    ms_per_step(&s, false); /* warm up */
    double off[REPEATS], on[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        off[r] = ms_per_step(&s, false);
        on[r] = ms_per_step(&s, true);
    }
    /* The ratio of the medians: single pairs swing with the machine. */
    double m_off = bench_median(off, REPEATS), m_on = bench_median(on, REPEATS);
    fprintf(stderr, "numerics: step %.3f ms without checks, %.3f ms with\n", m_off, m_on);
    printf("bench numerics_overhead glassbox=%.2f unit=%%\n", (m_on / m_off - 1) * 100);
    gb_optimizer_free(s.opt);
    gb_module_free(s.model);
    gb_scope_end();
    return 0;
}
