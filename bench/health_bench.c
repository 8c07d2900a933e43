/* health_bench.c — what the training-health checks cost a fit.
 *
 *   health_overhead_mlp   the Fashion-MNIST MLP (784-256-128-10, batch 128)
 *   health_overhead_cnn   the Fashion-MNIST CNN of fashion_mnist_fit (two
 *                         3x3 convolutions with max pooling, Dense 128;
 *                         batch 64)
 * Each figure is the time of a typical fit with the checks on (their
 * defaults: every 20 steps; an observer listens, as the summary writer
 * does) over that with them off (gb_health_disable). Short fits (60 MLP
 * steps, 20 CNN steps: three checks, one) alternate on and off so the
 * machine's load falls on both alike; both modes run on one model, warmed
 * up first, so neither pays for tracing (the check steps' variant of the
 * train step is traced once). A fit's steps are timed one by one (from
 * on_batch_begin to on_batch_end, which holds the checks' work), and a
 * typical fit is the sum over its step positions of each position's
 * median over the repeats: a check step falls at the same position in
 * every fit (the optimizer's iterations go on from fit to fit), so it
 * counts as often as it runs, while a step that another process delayed
 * by tens of milliseconds — a loaded 2-core machine — counts for nothing.
 * The goal is at most 1.03. No peer: no other framework checks training
 * health.
 */
#include "bench_util.h"
#include "fmnist_models.h"
#include "glassbox.h"

enum { REPEATS = 21, MAX_STEPS = 60 };

static void listen(const gb_event *ev, void *user) {
    (void)ev;
    ++*(long *)user;
}

/* The step times of the fit under way. */
typedef struct step_clock {
    double began, took[MAX_STEPS];
    int n;
} step_clock;

static void on_begin(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)s, (void)batch, (void)logs;
    ((step_clock *)gb_callback_state(cb))->began = bench_now();
}

static void on_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)s, (void)batch, (void)logs;
    step_clock *c = gb_callback_state(cb);
    if (c->n < MAX_STEPS) c->took[c->n++] = bench_now() - c->began;
}

static const gb_callback_type clock_type = {
    .name = "StepClock", .state_size = sizeof(step_clock),
    .on_batch_begin = on_begin, .on_batch_end = on_end};

/* A fit of `steps` steps; each step's seconds into took[]. */
static void fit_steps(gb_module *model, gb_tensor *x, gb_tensor *y, int64_t batch, int steps,
                      bool checks, double *took) {
    if (checks)
        gb_health_enable(NULL);
    else
        gb_health_disable();
    gb_callback *clock = gb_callback_new(&clock_type);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1;
    o.batch_size = batch;
    o.steps_per_epoch = steps;
    o.verbose = 0;
    o.callbacks = &clock;
    o.ncallbacks = 1;
    gb_history_free(gb_model_fit(model, x, y, &o));
    const step_clock *c = gb_callback_state(clock);
    for (int i = 0; i < steps; i++) took[i] = i < c->n ? c->took[i] : 0;
    gb_callback_free(clock);
}

/* Sum over the step positions of the median over the repeats. */
static double typical_fit(double (*took)[MAX_STEPS], int steps) {
    double total = 0, at[REPEATS];
    for (int i = 0; i < steps; i++) {
        for (int r = 0; r < REPEATS; r++) at[r] = took[r][i];
        total += bench_median(at, REPEATS);
    }
    return total;
}

static void overhead(const char *name, gb_module *model, gb_tensor *x, gb_tensor *y, int64_t batch,
                     int steps) {
    gb_optimizer *opt = gb_adam(1e-3);
    gb_model_compile(model, &(gb_compile_options){
                                .optimizer = opt,
                                .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    static double off[REPEATS][MAX_STEPS], on[REPEATS][MAX_STEPS], warm[MAX_STEPS];
    /* Warm up: both variants traced, the checks' first run (21 steps put
     * the later fits' check steps at one position). */
    fit_steps(model, x, y, batch, 21, true, warm);
    for (int r = 0; r < REPEATS; r++) {
        fit_steps(model, x, y, batch, steps, false, off[r]);
        fit_steps(model, x, y, batch, steps, true, on[r]);
    }
    double t_off = typical_fit(off, steps), t_on = typical_fit(on, steps);
    fprintf(stderr, "%s: step %.3f ms with the checks off, %.3f ms on\n", name, t_off / steps * 1e3,
            t_on / steps * 1e3);
    printf("bench %s glassbox=%.4f unit=on/off\n", name, t_on / t_off);
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
