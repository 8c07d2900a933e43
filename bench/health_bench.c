/* health_bench.c — what the training-health checks cost a fit.
 *
 *   health_overhead_mlp   the Fashion-MNIST MLP (784-256-128-10, batch 128)
 *   health_overhead_cnn   the Fashion-MNIST CNN of fashion_mnist_fit (two
 *                         3x3 convolutions with max pooling, Dense 128;
 *                         batch 64)
 * Each figure is the median step time of fit with the checks on (their
 * defaults: every 20 steps; an observer listens, as the summary writer
 * does) over the median with them off (gb_health_disable), short runs
 * (60 MLP steps, 20 CNN steps: three checks, one) interleaved so the
 * machine's load falls on both alike; the goal is at most 1.03. Both modes run on one model, warmed up first, so neither pays
 * for tracing (the checks' step that returns the gradients is traced once).
 * No peer: no other framework checks training health.
 */
#include "bench_util.h"
#include "fmnist_models.h"
#include "glassbox.h"

enum { REPEATS = 21 };

static void listen(const gb_event *ev, void *user) {
    (void)ev;
    ++*(long *)user;
}

/* Seconds per step of a fit of `steps` steps. */
static double step_time(gb_module *model, gb_tensor *x, gb_tensor *y, int64_t batch, int steps,
                        bool checks) {
    if (checks)
        gb_health_enable(NULL);
    else
        gb_health_disable();
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1;
    o.batch_size = batch;
    o.steps_per_epoch = steps;
    o.verbose = 0;
    double t0 = bench_now();
    gb_history_free(gb_model_fit(model, x, y, &o));
    return (bench_now() - t0) / steps;
}

static void overhead(const char *name, gb_module *model, gb_tensor *x, gb_tensor *y, int64_t batch,
                     int steps) {
    gb_optimizer *opt = gb_adam(1e-3);
    gb_model_compile(model, &(gb_compile_options){
                                .optimizer = opt,
                                .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    step_time(model, x, y, batch, 21, true);   /* warm up: both traces, the checks' first */
    double off[REPEATS], on[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        off[r] = step_time(model, x, y, batch, steps, false);
        on[r] = step_time(model, x, y, batch, steps, true);
    }
    double m_off = bench_median(off, REPEATS), m_on = bench_median(on, REPEATS);
    fprintf(stderr, "%s: step %.3f ms with the checks off, %.3f ms on\n", name, m_off * 1e3, m_on * 1e3);
    printf("bench %s glassbox=%.4f unit=on/off\n", name, m_on / m_off);
    fflush(stdout);
    gb_module_free(model);
    gb_optimizer_free(opt);
}

int main(void) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    gb_scope_begin();
    long events = 0;
    gb_observer_add(listen, &events, GB_EVENT_HEALTH | GB_EVENT_SCALAR);
    gb_mnist m;
    gb_mnist_load(GB_FASHION_MNIST_DIR, GB_MNIST_CLASSES, &m);
    overhead("health_overhead_mlp", fmnist_model(false), gb_images_to_float(m.train_images, GB_IMAGES_FLAT),
             m.train_labels, 128, 60);
    overhead("health_overhead_cnn", fmnist_model(true), gb_images_to_float(m.train_images, GB_IMAGES_NHWC),
             m.train_labels, 64, 20);
    fprintf(stderr, "health: %ld events seen\n", events);
    gb_scope_end();
    return 0;
}
