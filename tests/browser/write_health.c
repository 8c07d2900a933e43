/* write_health.c — two runs' training health, for the Health page's
 * browser test: written through the real writer as the engine writes it,
 * the default writer hearing GB_EVENT_HEALTH alerts and the
 * health/<layer>/<figure> scalars through gb_observer_emit, so what is
 * tested is the writer's subscription, not a shortcut around it.
 *
 *   write_health DB          runs sigmoid_deep and relu_dead
 *   write_health DB append   relu_dead goes on: an exploding gradient at
 *                            step 300 and the figures of that step
 *
 * sigmoid_deep: 8 layers, figures every 5 steps of 0..295: grad_norm of
 *   layer i = GRAD[i] * (1 + (s % 7) / 100.0) — vanishing towards the
 *   input; update_ratio UPDATE[i] * (1 + (s % 5) / 50.0); weight_norm
 *   4 + i / 2.0 + s / 1000.0; saturated_fraction SAT[i] (not the logits);
 *   eight alerts (not_learning at steps 100, 150 and 200). relu_dead: 6 layers (two under block/), every 10 steps of
 *   0..290: grad_norm 1e-2 * (i + 1) * (1 + (s % 3) / 10.0), update_ratio
 *   1e-3, dead_fraction 0.97 for dense_1 from step 60 (0.1 before), else
 *   (i % 3) / 20.0; two alerts; and its traced train step, whose dense
 *   layers are name scopes sequential/dense, sequential/dense_1, ...
 *   (the Graphs page's scope for an alert's layer). The browser test
 *   computes the same values.
 */
#include <stdio.h>
#include <string.h>

#include "gb_health.h"
#include "gb_observer.h"
#include "gb_summary.h"
#include "glassbox.h"

#define WALL0 1.7e9

static const char *const DEEP[8] = {"dense", "dense_1", "dense_2", "dense_3",
                                    "dense_4", "dense_5", "dense_6", "logits"};
static const double GRAD[8] = {2e-7, 1.5e-6, 1.1e-5, 8e-5, 6e-4, 4e-3, 3e-2, 2e-1};
static const double UPDATE[8] = {2e-8, 1e-7, 1e-6, 1e-5, 1e-4, 5e-4, 1e-3, 1.2e-3};
static const double SAT[7] = {0.91, 0.85, 0.7, 0.4, 0.2, 0.1, 0.05};
static const char *const RELU[6] = {"block/conv", "block/conv_1", "dense",
                                    "dense_1", "dense_2", "logits"};

static void figure(const char *layer, const char *name, int64_t step, double value) {
    char tag[128];
    snprintf(tag, sizeof tag, "health/%s/%s", layer, name);
    gb_scalar_event s = {tag, value, step, NULL};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .wall_time = WALL0 + (double)step,
                                 .message = tag, .detail = &s});
}

static void alert(const char *kind, gb_health_severity severity, const char *layer,
                  const char *variable, int64_t step, double value, double threshold,
                  const char *figures, const char *message, const char *advice) {
    gb_health_alert a = {kind, severity, layer, variable, step, value, threshold, figures, advice};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_HEALTH, .wall_time = WALL0 + (double)step,
                                 .message = message, .detail = &a});
}

static gb_summary_writer *open_run(const char *db, const char *run) {
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(db, run, NULL, &w) != GB_OK) {
        fprintf(stderr, "write_health: %s\n", gb_summary_last_error());
        return NULL;
    }
    gb_summary_set_default(w);
    return w;
}

static bool close_run(gb_summary_writer *w) {
    gb_summary_set_default(NULL);
    if (gb_summary_writer_close(w) == GB_OK) return true;
    fprintf(stderr, "write_health: %s\n", gb_summary_last_error());
    return false;
}

static bool write_sigmoid_deep(const char *db) {
    gb_summary_writer *w = open_run(db, "sigmoid_deep");
    if (!w) return false;
    for (int64_t s = 0; s < 300; s += 5) {
        gb_summary_scalar(w, "loss", 2.3 - (double)s / 1000.0 + (s == 140 ? 0.6 : 0), s);
        for (int i = 0; i < 8; i++) {
            figure(DEEP[i], "grad_norm", s, GRAD[i] * (1 + (double)(s % 7) / 100.0));
            figure(DEEP[i], "update_ratio", s, UPDATE[i] * (1 + (double)(s % 5) / 50.0));
            figure(DEEP[i], "weight_norm", s, 4 + i / 2.0 + (double)s / 1000.0);
            if (i < 7) figure(DEEP[i], "saturated_fraction", s, SAT[i]);
        }
        if (s == 20)
            alert("saturated_units", GB_HEALTH_WARNING, "dense", NULL, 20, 0.91, 0.5,
                  "{\"saturated_fraction\":0.91,\"units\":128,\"threshold_abs\":4}",
                  "dense: 91% of units saturated (|x| > 4) over the last interval",
                  "Saturated sigmoid/tanh units pass almost no gradient. Use ReLU-family "
                  "activations, normalize the inputs, or lower the initial weights.");
        if (s == 50) {
            alert("vanishing_gradient", GB_HEALTH_CRITICAL, "dense", "dense/kernel", 50, 2.1e-7,
                  1e-3, "{\"grad_norm\":2.1e-7,\"above\":1.575e-6,\"ratio_to_above\":0.1333}",
                  "dense/kernel: gradient norm 2.1e-07, 0.13x the layer above, 1e-4 of the last layer's",
                  "Gradients vanish on the way back to the input. Use ReLU instead of sigmoid, "
                  "He initialization, residual connections or batch normalization.");
            alert("vanishing_gradient", GB_HEALTH_CRITICAL, "dense_1", "dense_1/kernel", 50,
                  1.575e-6, 1e-3, "{\"grad_norm\":1.575e-6,\"above\":1.155e-5}",
                  "dense_1/kernel: gradient norm 1.6e-06, 0.14x the layer above",
                  "Gradients vanish on the way back to the input. Use ReLU instead of sigmoid, "
                  "He initialization, residual connections or batch normalization.");
        }
        if (s == 100 || s == 150 || s == 200)
            alert("not_learning", GB_HEALTH_WARNING, "dense", "dense/kernel", s, 2e-8, 1e-5,
                  "{\"update_ratio\":2e-8,\"healthy\":1e-3}",
                  "dense/kernel: updates are 2e-08 of the weights (healthy: about 1e-3)",
                  "This layer's weights barely move. Raise the learning rate or fix the "
                  "vanishing gradient that starves it.");
        if (s == 140)
            alert("loss_spike", GB_HEALTH_INFO, NULL, NULL, 140, 2.76, 2.21,
                  "{\"loss\":2.76,\"median\":2.16,\"robust_sd\":0.01,\"k\":5}",
                  "loss 2.76 at step 140, 60 robust SDs above its recent median 2.16",
                  "A single spike the loss recovers from is usually a hard batch; repeated "
                  "spikes mean the learning rate is too large.");
        if (s == 160)
            alert("loss_recovered", GB_HEALTH_INFO, NULL, NULL, 160, 2.14, 2.21,
                  "{\"loss\":2.14,\"median\":2.16}", "the loss is back below 2.21 at step 160",
                  "Nothing to do.");
    }
    return close_run(w);
}

static void relu_figures(int64_t s) {
    for (int i = 0; i < 6; i++) {
        figure(RELU[i], "grad_norm", s, 1e-2 * (i + 1) * (1 + (double)(s % 3) / 10.0));
        figure(RELU[i], "update_ratio", s, 1e-3);
        if (i < 5)
            figure(RELU[i], "dead_fraction", s,
                   i == 3 ? (s >= 60 ? 0.97 : 0.1) : (double)(i % 3) / 20.0);
    }
}

/* Three dense layers in name scopes, as a Sequential model's call names them. */
static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    static const char *const layers[] = {"dense", "dense_1", "dense_2"};
    gb_tensor *x = in[0];
    gb_name_scope_push("sequential");
    for (int i = 0; i < 3; i++) {
        gb_name_scope_push(layers[i]);
        x = gb_relu(gb_matmul(x, in[1]));
        gb_name_scope_pop();
    }
    gb_name_scope_pop();
    out[0] = gb_reduce_sum(x, NULL, 0, false);
    return 1;
}

/* The train step traced once: the trace event carries its graph. */
static bool trace_step(void) {
    gb_scope_begin();
    gb_function *f = gb_function_new("train_step", step_fn, NULL);
    gb_tensor *y, *in[2] = {gb_ones(GB_F32, GB_SHAPE(4, 4)), gb_ones(GB_F32, GB_SHAPE(4, 4))};
    gb_function_call(f, in, 2, NULL, 0, &y);
    bool ok = gb_ok();
    if (!ok) fprintf(stderr, "write_health: %s\n", gb_error_string());
    gb_function_free(f);
    gb_scope_end();
    return ok;
}

static bool write_relu_dead(const char *db) {
    gb_summary_writer *w = open_run(db, "relu_dead");
    if (!w || !trace_step()) return false;
    for (int64_t s = 0; s < 300; s += 10) {
        gb_summary_scalar(w, "loss", 2.3 - (double)s / 2000.0, s);
        relu_figures(s);
        if (s == 60)
            alert("dead_units", GB_HEALTH_CRITICAL, "dense_1", NULL, 60, 0.97, 0.5,
                  "{\"dead_fraction\":0.97,\"units\":256}",
                  "dense_1: 97% of units were 0 for the whole interval",
                  "Dead ReLUs never recover. Use LeakyReLU, a smaller learning rate, or a "
                  "bias initializer that is not negative.");
        if (s == 120)
            alert("dead_units", GB_HEALTH_WARNING, "block/conv_1", NULL, 120, 0.62, 0.5,
                  "{\"dead_fraction\":0.62,\"units\":32}",
                  "block/conv_1: 62% of units were 0 for the whole interval",
                  "Use LeakyReLU or a smaller learning rate.");
    }
    return close_run(w);
}

static bool append_relu_dead(const char *db) {
    gb_summary_writer *w = open_run(db, "relu_dead");
    if (!w) return false;
    relu_figures(300);
    alert("exploding_gradient", GB_HEALTH_CRITICAL, "logits", "logits/kernel", 300, 2.4e3, 1e3,
          "{\"grad_norm\":2400,\"below\":0.05}", "logits/kernel: gradient norm 2.4e+03",
          "Clip gradients or lower the learning rate.");
    return close_run(w);
}

int main(int argc, char **argv) {
    if (argc == 2) return write_sigmoid_deep(argv[1]) && write_relu_dead(argv[1]) ? 0 : 1;
    if (argc == 3 && !strcmp(argv[2], "append")) return append_relu_dead(argv[1]) ? 0 : 1;
    fprintf(stderr, "usage: write_health DB [append]\n");
    return 2;
}
