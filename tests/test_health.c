/* test_health.c — the training-health checks, against figures computed by
 * hand on tiny models: a ReLU layer and a linear one with set weights on
 * a known batch (gradient norms, update ratios after one SGD step, the
 * dead fraction, the weights' norms), a sigmoid layer's saturated share,
 * the loss-spike detector on a given sequence; each rule firing when it
 * should and not otherwise, once per onset; the same figures from a
 * traced fit as from an eager one; the check steps' variant of the train
 * function traced once, never reported as a retrace; nothing at all after
 * gb_health_disable.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug/health_internal.h"
#include "glassbox.h"
#include "test_util.h"

/* ---- what the checks emit, caught by an observer ------------------------------------- */

enum { MAX_SEEN = 512 };

typedef struct seen_scalar {
    char tag[128];
    int64_t step;
    double value;
} seen_scalar;

typedef struct seen_alert {
    char kind[32], layer[64], variable[64], message[512], figures[512];
    gb_health_severity severity;
    int64_t step;
    double value, threshold;
} seen_alert;

static seen_scalar scalars[MAX_SEEN];
static seen_alert alerts[MAX_SEEN];
static int nscalars, nalerts, observer_id;

static void on_event(const gb_event *ev, void *user) {
    (void)user;
    if (ev->kind == GB_EVENT_SCALAR) {
        const gb_scalar_event *s = ev->detail;
        if (strncmp(s->tag, "health/", 7) || nscalars == MAX_SEEN) return;
        seen_scalar *o = &scalars[nscalars++];
        snprintf(o->tag, sizeof o->tag, "%s", s->tag);
        o->step = s->step, o->value = s->value;
    } else if (ev->kind == GB_EVENT_HEALTH && nalerts < MAX_SEEN) {
        const gb_health_alert *a = ev->detail;
        seen_alert *o = &alerts[nalerts++];
        snprintf(o->kind, sizeof o->kind, "%s", a->kind);
        snprintf(o->layer, sizeof o->layer, "%s", a->layer ? a->layer : "");
        snprintf(o->variable, sizeof o->variable, "%s", a->variable ? a->variable : "");
        snprintf(o->message, sizeof o->message, "%s", ev->message);
        snprintf(o->figures, sizeof o->figures, "%s", a->figures);
        o->severity = a->severity, o->step = a->step, o->value = a->value, o->threshold = a->threshold;
        ck_assert_ptr_nonnull(a->advice);
    }
}

static void setup(void) {
    nn_seeded_setup();
    nscalars = nalerts = 0;
    observer_id = gb_observer_add(on_event, NULL, GB_EVENT_SCALAR | GB_EVENT_HEALTH);
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1}));
}

static void teardown(void) {
    gb_observer_remove(observer_id);
    ck_assert(gb_health_enable(NULL));
    scope_teardown();
}

static const seen_scalar *scalar(const char *tag, int64_t step) {
    for (int i = 0; i < nscalars; i++)
        if (!strcmp(scalars[i].tag, tag) && scalars[i].step == step) return &scalars[i];
    ck_abort_msg("no scalar %s at step %lld", tag, (long long)step);
    return NULL;
}

static int count_kind(const char *kind) {
    int n = 0;
    for (int i = 0; i < nalerts; i++) n += !strcmp(alerts[i].kind, kind);
    return n;
}

#define EQ(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-6 * fmax(1, fabs(b)), "%.9g != %.9g", (a), (b))

/* ---- a 2-layer model with set weights ---------------------------------------------------
 *
 * x = [[1], [2]], y = [[0], [0]]; hidden = relu(x W1 + b1), W1 = [[1, -1]],
 * b1 = 0: [[1, 0], [2, 0]] — its second unit is zero on both samples;
 * out = hidden W2 + b2, W2 = [[2], [1]], b2 = 0: [[2], [4]]. MSE: the
 * loss (4 + 16) / 2 = 10, dL/dout = out - y = [2, 4].
 *   dW2 = hidden^T [2, 4] = [[10], [0]], db2 = 6: ||g_out|| = sqrt(136)
 *   dhidden = [2, 4]^T W2^T = [[4, 2], [8, 4]], masked by the ReLU:
 *   [[4, 0], [8, 0]]; dW1 = x^T that = [[20, 0]], db1 = [12, 0]:
 *   ||g_hidden|| = sqrt(544)
 * One SGD step at lr 0.01: dW1 = [[-0.2, 0]], db1 = [-0.12, 0],
 * dW2 = [[-0.1], [0]], db2 = -0.06.
 *   hidden/kernel's ratio 0.2 / sqrt(2) = 0.141421356 (> 0.1: large_update)
 *   out/kernel's 0.1 / sqrt(5) = 0.0447213595
 *   hidden's update ratio sqrt(0.04 + 0.0144) / sqrt(2) = 0.164924225
 *   out's sqrt(0.01 + 0.0036) / sqrt(5) = 0.0521536192
 *   weight norms after: sqrt(0.64 + 1 + 0.0144) = 1.28623482,
 *   sqrt(3.61 + 1 + 0.0036) = 2.14792924
 * hidden's second unit is zero on the whole batch: one of two units
 * dead, 0.5. */
static gb_module *two_layers(bool eager, double lr) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.name = "hidden", .activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(1, &(gb_dense_options){.name = "out"}));
    ck_assert(gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 1}));
    float w1[] = {1, -1}, w2[] = {2, 1};
    ck_assert(gb_variable_assign(gb_module_variable(gb_module_find(m, "hidden"), "kernel"), gb_from_f32(w1, GB_SHAPE(1, 2))));
    ck_assert(gb_variable_assign(gb_module_variable(gb_module_find(m, "out"), "kernel"), gb_from_f32(w2, GB_SHAPE(2, 1))));
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = gb_sgd(lr),
                                                         .loss = {GB_LOSS_MEAN_SQUARED_ERROR},
                                                         .run_eagerly = eager}));
    return m;
}

static void fit(gb_module *m, gb_tensor *x, gb_tensor *y, int epochs) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.batch_size = gb_dim(x, 0);
    o.verbose = 0;
    o.shuffle = false;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_msg(h != NULL, "%s", gb_last_error()->message);
    gb_history_free(h);
}

static void fit_two_layers(bool eager) {
    float xs[] = {1, 2}, ys[] = {0, 0};
    gb_module *m = two_layers(eager, 0.01);
    fit(m, gb_from_f32(xs, GB_SHAPE(2, 1)), gb_from_f32(ys, GB_SHAPE(2, 1)), 1);
    gb_optimizer *opt = gb_model_optimizer(m);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

static void check_two_layer_figures(void) {
    EQ(scalar("health/hidden/grad_norm", 1)->value, sqrt(544));
    EQ(scalar("health/out/grad_norm", 1)->value, sqrt(136));
    EQ(scalar("health/hidden/update_ratio", 1)->value, 0.164924225);
    EQ(scalar("health/out/update_ratio", 1)->value, 0.0521536192);
    EQ(scalar("health/hidden/weight_norm", 1)->value, 1.28623482);
    EQ(scalar("health/out/weight_norm", 1)->value, 2.14792924);
    EQ(scalar("health/hidden/dead_fraction", 1)->value, 0.5);
    /* In the model's order, input side first; no dead fraction for a linear layer. */
    const char *order[] = {"health/hidden/grad_norm", "health/hidden/update_ratio",
                           "health/hidden/weight_norm", "health/hidden/dead_fraction",
                           "health/out/grad_norm", "health/out/update_ratio", "health/out/weight_norm"};
    ck_assert_int_eq(nscalars, 7);
    for (int i = 0; i < 7; i++) ck_assert_str_eq(scalars[i].tag, order[i]);
}

START_TEST(test_figures_of_a_two_layer_model_eager) {
    fit_two_layers(true);
    check_two_layer_figures();
}
END_TEST

START_TEST(test_figures_of_a_two_layer_model_traced) {
    fit_two_layers(false);
    check_two_layer_figures();
}
END_TEST

/* An optimizer that clips (clipnorm 1, per variable) updates with other
 * gradients than backward made: the grad norms are still backward's,
 * sqrt(544) and sqrt(136), while the updates are the clipped ones: each
 * gradient scaled to norm 1, so at lr 0.01 dW1 = [[-0.01, 0]], db1 =
 * [-0.01, 0], dW2 = [[-0.01], [0]], db2 = -0.01; update ratios
 * sqrt(2e-4) / sqrt(2) = 0.01 and sqrt(2e-4) / sqrt(5) = 0.00632455532. */
static void fit_two_layers_clipped(bool eager) {
    float xs[] = {1, 2}, ys[] = {0, 0};
    gb_module *m = two_layers(eager, 0.01);
    gb_optimizer *opt = gb_model_optimizer(m);
    ck_assert(gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.clipnorm = 1}));
    fit(m, gb_from_f32(xs, GB_SHAPE(2, 1)), gb_from_f32(ys, GB_SHAPE(2, 1)), 1);
    EQ(scalar("health/hidden/grad_norm", 1)->value, sqrt(544));
    EQ(scalar("health/out/grad_norm", 1)->value, sqrt(136));
    EQ(scalar("health/hidden/update_ratio", 1)->value, 0.01);
    EQ(scalar("health/out/update_ratio", 1)->value, 0.00632455532);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

START_TEST(test_a_clipping_optimizer_shows_the_gradients_backward_made) {
    fit_two_layers_clipped(true);
    nscalars = 0;
    fit_two_layers_clipped(false);
}
END_TEST

START_TEST(test_large_update_and_dead_units_alerts_word_for_word) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1, .max_dead_fraction = 0.4}));
    fit_two_layers(false);
    ck_assert_int_eq(nalerts, 2);
    ck_assert_str_eq(alerts[0].kind, "large_update");
    ck_assert_str_eq(alerts[0].layer, "hidden");
    ck_assert_str_eq(alerts[0].variable, "model/hidden/kernel");
    ck_assert_int_eq(alerts[0].severity, GB_HEALTH_WARNING);
    ck_assert_int_eq(alerts[0].step, 1);
    EQ(alerts[0].value, 0.141421356);
    EQ(alerts[0].threshold, 0.1);
    ck_assert_str_eq(alerts[0].message,
                     "large update: variable 'model/hidden/kernel' of layer 'hidden' at step 1: "
                     "update-to-weight ratio 0.141 (above 0.1)");
    /* In float32 the kernel's 1 - 0.2 is 0.800000012: its move 0.199999988. */
    ck_assert_str_eq(alerts[0].figures,
                     "{\"update_norm\":0.199999988,\"weight_norm\":1.41421356,\"ratio\":0.141421348}");
    ck_assert_str_eq(alerts[1].kind, "dead_units");
    ck_assert_str_eq(alerts[1].variable, "");
    ck_assert_str_eq(alerts[1].message,
                     "dead units in layer 'hidden' at step 1: 1 of 2 units (50.0%) were zero for "
                     "the whole batch (above 40%)");
    ck_assert_str_eq(alerts[1].figures, "{\"dead_units\":1,\"units\":2,\"fraction\":0.5}");
}
END_TEST

START_TEST(test_not_learning_at_a_tiny_learning_rate) {
    float xs[] = {1, 2}, ys[] = {0, 0};
    gb_module *m = two_layers(true, 1e-7);
    fit(m, gb_from_f32(xs, GB_SHAPE(2, 1)), gb_from_f32(ys, GB_SHAPE(2, 1)), 1);
    /* hidden/kernel moves by 20e-7 from 1, out/kernel by 10e-7 from 2: in
     * float32, whose spacing there is 2^-24 and 2^-23, the moves round to
     * 34 * 2^-24 = 2.027e-6 and 8 * 2^-23 = 9.537e-7; over sqrt(2) and
     * sqrt(5), ratios of 1.43e-6 and 4.26e-7, both below 1e-5. */
    ck_assert_int_eq(nalerts, 2);
    ck_assert_str_eq(alerts[0].message,
                     "not learning: variable 'model/hidden/kernel' of layer 'hidden' at step 1: "
                     "update-to-weight ratio 1.43e-06 (below 1e-05)");
    ck_assert_str_eq(alerts[1].message,
                     "not learning: variable 'model/out/kernel' of layer 'out' at step 1: "
                     "update-to-weight ratio 4.26e-07 (below 1e-05)");
    gb_optimizer *opt = gb_model_optimizer(m);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* Sigmoid(x W), W = [[10, 0]], x = [[1], [2]]: outputs sigmoid(10),
 * sigmoid(20) (above 0.99) and 0.5 twice: half saturated. */
START_TEST(test_saturated_fraction_of_a_sigmoid_layer) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1, .max_saturated_fraction = 0.4}));
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.name = "sig", .activation = GB_ACT_SIGMOID}));
    ck_assert(gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 1}));
    float w[] = {10, 0}, xs[] = {1, 2}, ys[] = {1, 0.5f, 1, 0.5f};
    ck_assert(gb_variable_assign(gb_module_variable(gb_module_find(m, "sig"), "kernel"), gb_from_f32(w, GB_SHAPE(1, 2))));
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = gb_sgd(1e-3),
                                                         .loss = {GB_LOSS_MEAN_SQUARED_ERROR}}));
    fit(m, gb_from_f32(xs, GB_SHAPE(2, 1)), gb_from_f32(ys, GB_SHAPE(2, 2)), 1);
    EQ(scalar("health/sig/saturated_fraction", 1)->value, 0.5);
    ck_assert_int_eq(count_kind("saturated_units"), 1);
    ck_assert_str_eq(alerts[nalerts - 1].message,
                     "saturated units in layer 'sig' at step 1: 50.0% of its outputs are within "
                     "0.01 of an asymptote (above 40%)");
    gb_optimizer *opt = gb_model_optimizer(m);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* MultiHeadAttention's query, key and value biases are [heads, key_dim]:
 * rank 2, yet biases. They start at 0, where an update-to-weight ratio
 * says nothing (the char_lm example warned "large update" on a key bias
 * of norm 6e-7), so the ratio rules leave them to bias drift, as they do
 * a Dense layer's. The kernels, at lr 0.5, still raise large_update. */
START_TEST(test_a_bias_of_rank_2_gets_no_update_ratio_alert) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_multi_head_attention_new(1, 2, &(gb_mha_options){.name = "attention", .seed = 3}));
    ck_assert(gb_module_build(m, GB_F32, 3, (int64_t[]){-1, 3, 2}));
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = gb_sgd(0.5),
                                                         .loss = {GB_LOSS_MEAN_SQUARED_ERROR}}));
    float xs[12], ys[12];
    for (int i = 0; i < 12; i++) xs[i] = (float)((i * 7) % 5) - 2, ys[i] = (float)(i % 3);
    fit(m, gb_from_f32(xs, GB_SHAPE(2, 3, 2)), gb_from_f32(ys, GB_SHAPE(2, 3, 2)), 3);
    int kernel_alerts = 0;
    for (int i = 0; i < nalerts; i++) {
        bool ratio = !strcmp(alerts[i].kind, "large_update") || !strcmp(alerts[i].kind, "not_learning");
        size_t n = strlen(alerts[i].variable);
        ck_assert_msg(!ratio || n < 4 || strcmp(alerts[i].variable + n - 4, "bias"), "%s", alerts[i].message);
        kernel_alerts += ratio;
    }
    ck_assert_int_gt(kernel_alerts, 0);
    gb_optimizer *opt = gb_model_optimizer(m);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* A model deeper than a traced function's old 64 outputs: 70 ReLU layers
 * and a linear one, traced. Every layer has its figures: 71 gradient
 * norms (from the optimizer's measure, not from returned gradients) and
 * 70 dead fractions (one tensor of figures out of the step). */
START_TEST(test_every_layer_of_a_deep_traced_model_is_measured) {
    gb_module *m = gb_sequential_new("deep");
    for (int i = 0; i < 70; i++)
        gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(1, NULL));
    ck_assert(gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 1}));
    gb_optimizer *opt = gb_sgd(1e-3);
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                                         .loss = {GB_LOSS_MEAN_SQUARED_ERROR}}));
    float xs[] = {1, 2, 3, 4}, ys[] = {0, 1, 0, 1};
    fit(m, gb_from_f32(xs, GB_SHAPE(4, 1)), gb_from_f32(ys, GB_SHAPE(4, 1)), 1);
    int grads = 0, dead = 0;
    for (int i = 0; i < nscalars; i++) {
        const char *slash = strrchr(scalars[i].tag, '/');
        grads += !strcmp(slash, "/grad_norm");
        dead += !strcmp(slash, "/dead_fraction");
    }
    ck_assert_int_eq(grads, 71);
    ck_assert_int_eq(dead, 70);
    ck_assert_ptr_nonnull(scalar("health/dense_69/dead_fraction", 1));
    ck_assert_ptr_nonnull(scalar("health/dense_70/grad_norm", 1));
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- traced == eager ----------------------------------------------------------------- */

static void fit_mlp(bool eager, seen_scalar *out, int *n) {
    nscalars = nalerts = 0;
    gb_nn_clear_session();
    gb_nn_set_seed(0);
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 2}));
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 3}));
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = gb_sgd_momentum(0.1, 0.9, false),
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .run_eagerly = eager}));
    float xs[24 * 4];
    for (int i = 0; i < 24 * 4; i++) xs[i] = (float)sin(0.7 * i + 0.3);
    gb_tensor *x = gb_from_f32(xs, GB_SHAPE(24, 4));
    int32_t ys[24];
    for (int i = 0; i < 24; i++) ys[i] = i % 3;
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3, o.batch_size = 8, o.verbose = 0, o.shuffle = false;
    gb_history *h = gb_model_fit(m, x, gb_tensor_from(GB_I32, ys, GB_SHAPE(24)), &o);
    ck_assert_ptr_nonnull(h);
    gb_history_free(h);
    memcpy(out, scalars, (size_t)nscalars * sizeof *out);
    *n = nscalars;
    gb_optimizer *opt = gb_model_optimizer(m);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

START_TEST(test_traced_and_eager_give_the_same_figures) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 2}));
    static seen_scalar eager[MAX_SEEN], traced[MAX_SEEN];
    int ne, nt;
    fit_mlp(true, eager, &ne);
    fit_mlp(false, traced, &nt);
    /* 9 steps, checks at 2, 4, 6, 8; 3 layers of 3 figures and one dead and
     * one saturated fraction. */
    ck_assert_int_eq(ne, 4 * 11);
    ck_assert_int_eq(nt, ne);
    for (int i = 0; i < ne; i++) {
        ck_assert_str_eq(traced[i].tag, eager[i].tag);
        ck_assert_int_eq(traced[i].step, eager[i].step);
        ck_assert_msg(fabs(traced[i].value - eager[i].value) <= 1e-5 * fmax(1e-3, fabs(eager[i].value)),
                      "%s at %lld: traced %.9g, eager %.9g", eager[i].tag, (long long)eager[i].step,
                      traced[i].value, eager[i].value);
    }
}
END_TEST

/* ---- the check steps' variant is no retrace --------------------------------------------- */

enum { MAX_TRACES = 16 };
static char trace_reasons[MAX_TRACES][256];
static int trace_numbers[MAX_TRACES], ntraces, nwarnings;
static bool trace_retraces[MAX_TRACES];

static void on_trace(const gb_event *ev, void *user) {
    (void)user;
    if (ev->kind == GB_EVENT_WARNING) {
        nwarnings++;
        return;
    }
    const gb_trace_event *t = ev->detail;
    ck_assert_str_eq(t->function, "train_function");
    ck_assert(!t->warning);
    if (ntraces == MAX_TRACES) return;
    snprintf(trace_reasons[ntraces], sizeof trace_reasons[0], "%s", t->reason);
    trace_retraces[ntraces] = t->retrace;
    trace_numbers[ntraces++] = t->trace_number;
}

/* Two models fitted one after another, checks every 2 steps: steps 1 (the
 * first), 2 and 4 run the check variant, 3 and 5 the plain step. Each
 * model's train function traces its two programs once each, both first
 * calls; the second model (whose compiled state may sit where the first
 * one's did) is not taken for the same function wrapped again, no trace
 * is marked a retrace (the Traces page's badge) and no excessive-retracing
 * warning comes. */
START_TEST(test_fitting_models_one_after_another_retraces_nothing) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 2}));
    ntraces = nwarnings = 0;
    int id = gb_observer_add(on_trace, NULL, GB_EVENT_TRACE | GB_EVENT_WARNING);
    float xs[] = {1, 2}, ys[] = {0, 0};
    for (int k = 0; k < 2; k++) {
        gb_module *m = two_layers(false, 0.01);
        gb_fit_options o = gb_fit_defaults();
        o.epochs = 5, o.batch_size = 2, o.verbose = 0, o.shuffle = false;
        gb_history *h = gb_model_fit(m, gb_from_f32(xs, GB_SHAPE(2, 1)), gb_from_f32(ys, GB_SHAPE(2, 1)), &o);
        ck_assert_msg(h != NULL, "%s", gb_last_error()->message);
        gb_history_free(h);
        gb_optimizer *opt = gb_model_optimizer(m);
        gb_module_free(m);
        gb_optimizer_free(opt);
    }
    gb_observer_remove(id);
    ck_assert_int_eq(nwarnings, 0);
    ck_assert_int_eq(ntraces, 4);
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(trace_numbers[2 * k], 1);
        ck_assert_int_eq(trace_numbers[2 * k + 1], 2);
        ck_assert(!trace_retraces[2 * k] && !trace_retraces[2 * k + 1]); /* the store's is_retrace */
        ck_assert_msg(!strncmp(trace_reasons[2 * k], "first call at test_health.c:", 28), "%s",
                      trace_reasons[2 * k]);
        const char *variant = "first call of the variant with_grads=false, health_checks=0 at test_health.c:";
        ck_assert_msg(!strncmp(trace_reasons[2 * k + 1], variant, strlen(variant)), "%s",
                      trace_reasons[2 * k + 1]);
    }
    /* Each model's checks at steps 1, 2 and 4: three layers' figures each. */
    ck_assert_int_eq(nscalars, 2 * 3 * 7);
}
END_TEST

/* ---- off by one call ------------------------------------------------------------------- */

START_TEST(test_disable_means_nothing_is_emitted) {
    gb_health_disable();
    ck_assert(!gb_health_active());
    fit_two_layers(false);
    ck_assert_int_eq(nscalars, 0);
    ck_assert_int_eq(nalerts, 0);
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1}));
    ck_assert(gb_health_active());
    fit_two_layers(false);
    ck_assert_int_eq(nscalars, 7);
}
END_TEST

START_TEST(test_nobody_listening_means_nothing_is_measured) {
    gb_observer_remove(observer_id);
    ck_assert(!gb_health_active());
    observer_id = gb_observer_add(on_event, NULL, GB_EVENT_HEALTH);
    ck_assert(gb_health_active());
}
END_TEST

START_TEST(test_bad_options_are_refused_by_name) {
    ck_assert(!gb_health_enable(&(gb_health_options){.interval = -3}));
    ck_assert_str_eq(gb_last_error()->message, "gb_health_enable: interval must be >= 1");
    gb_clear_error();
    ck_assert(!gb_health_enable(&(gb_health_options){.min_update_ratio = 0.5}));
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_health_enable: min_update_ratio must be > 0 and below max_update_ratio");
    gb_clear_error();
    /* The options in force stay those of before. */
    ck_assert_int_eq(gb_health_get_options().interval, 1);
    ck_assert_double_eq(gb_health_get_options().spike_k, 6);
}
END_TEST

/* ---- the rules on given figures ----------------------------------------------------------- */

static gb__health_var weight(const char *name, double grad_norm) {
    return (gb__health_var){.name = name, .role = GB__HEALTH_WEIGHT, .size = 4, .has_grad = true,
                            .grad_sumsq = grad_norm * grad_norm, .has_update = true,
                            .before_sumsq = 1, .update_sumsq = 1e-6, .weight_sumsq = 1};
}

/* Three layers, input side first, with these gradient norms. */
static void check_gradients(gb__health *h, int64_t step, double g0, double g1, double g2) {
    gb__health_var v[3] = {weight("a/kernel", g0), weight("b/kernel", g1), weight("c/kernel", g2)};
    gb__health_layer l[3] = {{.name = "a", .vars = &v[0], .nvars = 1},
                             {.name = "b", .vars = &v[1], .nvars = 1},
                             {.name = "c", .vars = &v[2], .nvars = 1}};
    gb__health_check(h, step, l, 3);
}

START_TEST(test_vanishing_gradient_against_the_layers_above_once_per_onset) {
    gb__health *h = gb__health_new();
    check_gradients(h, 10, 1e-4, 0.5, 1.0);   /* a: 1e-4 of c's */
    ck_assert_int_eq(nalerts, 1);
    ck_assert_str_eq(alerts[0].message,
                     "vanishing gradient in layer 'a' at step 10: gradient norm 0.0001 is 0.0001 "
                     "times that of layer 'c' above it (below 0.001)");
    ck_assert_str_eq(alerts[0].figures, "{\"grad_norm\":0.0001,\"above_grad_norm\":1,\"ratio\":0.0001}");
    check_gradients(h, 20, 1e-4, 0.5, 1.0);   /* still vanishing: no new alert */
    ck_assert_int_eq(nalerts, 1);
    check_gradients(h, 30, 0.1, 0.5, 1.0);    /* healthy: the finding ends */
    check_gradients(h, 40, 1e-5, 0.5, 1.0);   /* a new onset */
    ck_assert_int_eq(nalerts, 2);
    ck_assert_int_eq(alerts[1].step, 40);
    ck_assert_int_eq(count_kind("vanishing_gradient"), 2);
    gb__health_free(h);
}
END_TEST

START_TEST(test_exploding_gradient_and_gradient_jump) {
    gb__health *h = gb__health_new();
    check_gradients(h, 10, 1.0, 1.0, 1.0);
    ck_assert_int_eq(nalerts, 0);
    check_gradients(h, 20, 5e3, 1.0, 2.0);   /* a: 5e3 times b's; global sqrt(3) -> ~5e3 */
    ck_assert_int_eq(count_kind("exploding_gradient"), 1);
    ck_assert_int_eq(count_kind("gradient_jump"), 1);
    ck_assert_int_eq(nalerts, 2);
    ck_assert_str_eq(alerts[0].message,
                     "exploding gradient in layer 'a' at step 20: gradient norm 5e+03 is 5e+03 "
                     "times that of layer 'b' above it (above 1000)");
    ck_assert_int_eq(alerts[0].severity, GB_HEALTH_CRITICAL);
    ck_assert_str_eq(alerts[1].message,
                     "gradient jump at step 20: the global gradient norm grew from 1.73 to 5e+03, "
                     "2.89e+03 times (above 10)");
    gb__health_free(h);
}
END_TEST

static void check_one(gb__health *h, int64_t step, gb__health_var v) {
    gb__health_layer l = {.name = "layer", .vars = &v, .nvars = 1};
    gb__health_check(h, step, &l, 1);
}

START_TEST(test_weight_growth_bias_drift_and_variance_collapse) {
    gb__health *h = gb__health_new();
    /* A weight whose norm rises 1, 1.5, 2, 2.5, 3, 3.5: five rises, 3.5x. */
    for (int i = 0; i < 6; i++) {
        gb__health_var v = weight("layer/kernel", 1);
        v.weight_sumsq = pow(1 + 0.5 * i, 2);
        check_one(h, 10 * (i + 1), v);
        ck_assert_int_eq(count_kind("weight_growth"), i == 5);
    }
    ck_assert_str_eq(alerts[nalerts - 1].message,
                     "weight growth: variable 'layer/kernel' of layer 'layer' at step 60: its norm "
                     "rose 5 checks in a row, from 1 to 3.5 (more than 3x)");
    /* A bias of 4 elements, RMS 0.5 then 3: moved 2.5. */
    gb__health_var b = {.name = "layer/bias", .role = GB__HEALTH_BIAS, .size = 4, .weight_sumsq = 1};
    check_one(h, 10, b);
    b.weight_sumsq = 4 * 2.4 * 2.4;   /* RMS 2.4: moved 1.9, under 2 */
    check_one(h, 20, b);
    ck_assert_int_eq(count_kind("bias_drift"), 0);
    b.weight_sumsq = 4 * 3.0 * 3.0;
    check_one(h, 30, b);
    ck_assert_int_eq(count_kind("bias_drift"), 1);
    ck_assert_str_eq(alerts[nalerts - 1].message,
                     "bias drift: variable 'layer/bias' of layer 'layer' at step 30: its RMS moved "
                     "from 0.5 to 3 (by more than 2)");
    gb__health_var mv = {.name = "layer/moving_variance", .role = GB__HEALTH_MOVING_VARIANCE,
                         .size = 4, .weight_sumsq = 1, .min_value = 1e-3};
    check_one(h, 10, mv);
    ck_assert_int_eq(count_kind("variance_collapse"), 0);
    mv.min_value = 1e-8;
    check_one(h, 20, mv);
    ck_assert_int_eq(count_kind("variance_collapse"), 1);
    ck_assert_str_eq(alerts[nalerts - 1].message,
                     "variance collapse: variable 'layer/moving_variance' of layer 'layer' at step "
                     "20: smallest moving variance 1e-08 (below 1e-06)");
    gb__health_free(h);
}
END_TEST

/* Causes before consequences: layer b is dead (3 of 4 units), so a's
 * gradient, which b stops, is no vanishing gradient and a's and c's still
 * weights are not "not learning" — the dead units are reported, alone.
 * Without the dead layer the same figures are a vanishing gradient at a,
 * and c, above it, does not learn. */
START_TEST(test_dead_units_are_reported_as_the_cause_alone) {
    gb__health *h = gb__health_new();
    for (int dead = 1; dead >= 0; dead--) {
        gb__health_var v[3] = {weight("a/kernel", 1e-6), weight("b/kernel", 0.5), weight("c/kernel", 1)};
        v[0].update_sumsq = v[2].update_sumsq = 1e-14;   /* ratio 1e-7 */
        gb__health_layer l[3] = {
            {.name = "a", .vars = &v[0], .nvars = 1},
            {.name = "b", .vars = &v[1], .nvars = 1, .act = GB__HEALTH_ACT_RELU, .has_output = true,
             .units = 4, .dead_units = dead ? 3 : 0},
            {.name = "c", .vars = &v[2], .nvars = 1}};
        nalerts = 0;
        gb__health_check(h, 10, l, 3);
        if (dead) {
            ck_assert_int_eq(nalerts, 1);
            ck_assert_str_eq(alerts[0].kind, "dead_units");
            ck_assert_str_eq(alerts[0].layer, "b");
        } else {
            ck_assert_int_eq(nalerts, 2);
            ck_assert_str_eq(alerts[0].kind, "vanishing_gradient");
            ck_assert_str_eq(alerts[0].layer, "a");
            ck_assert_str_eq(alerts[1].kind, "not_learning");
            ck_assert_str_eq(alerts[1].layer, "c");
        }
    }
    gb__health_free(h);
}
END_TEST

/* ---- the loss-spike detector ------------------------------------------------------------ */

START_TEST(test_median_and_mad) {
    double x[] = {3, 1, 10, 2, 4}, tmp[5], med, mad;
    gb__median_mad(x, 5, tmp, &med, &mad);
    ck_assert_double_eq(med, 3);   /* deviations 0, 2, 7, 1, 1 */
    ck_assert_double_eq(mad, 1);
    gb__median_mad(x, 4, tmp, &med, &mad);
    ck_assert_double_eq(med, 2.5);   /* 1 2 3 10; deviations 0.5 1.5 7.5 0.5 */
    ck_assert_double_eq(mad, 1);
}
END_TEST

/* Window 4, k 3: 1, 2 fill half the window; 3 against [1, 2] (median
 * 1.5, MAD 0.5, threshold 1.5 + 3 * 0.7413 = 3.724) and 4 against
 * [1, 2, 3] (2 + 3 * 1.4826 = 6.448) pass; 10 against [1, 2, 3, 4]
 * (median 2.5, MAD 1, threshold 6.948) is a spike, 5.06 sigmas up; 8
 * (above the band still) is the same spike; 2 is back under 6.948. */
START_TEST(test_loss_spike_and_recovery_on_a_given_sequence) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1, .loss_window = 4, .spike_k = 3}));
    gb__health *h = gb__health_new();
    double losses[] = {1, 2, 3, 4, 10, 8, 2, 3};
    for (int i = 0; i < 8; i++) gb__health_loss(h, i + 1, losses[i]);
    ck_assert_int_eq(nalerts, 2);
    ck_assert_str_eq(alerts[0].kind, "loss_spike");
    ck_assert_int_eq(alerts[0].step, 5);
    ck_assert_int_eq(alerts[0].severity, GB_HEALTH_WARNING);
    EQ(alerts[0].threshold, 2.5 + 3 * 1.4826);
    ck_assert_str_eq(alerts[0].message,
                     "loss spike at step 5: loss 10 is 5.1 robust standard deviations above the "
                     "median 2.5 of the last 4 losses (threshold 6.948)");
    ck_assert_str_eq(alerts[0].figures,
                     "{\"loss\":10,\"median\":2.5,\"mad\":1,\"sigma\":1.4826,\"k\":3,"
                     "\"threshold\":6.9478,\"window\":4}");
    ck_assert_str_eq(alerts[1].kind, "loss_recovered");
    ck_assert_int_eq(alerts[1].severity, GB_HEALTH_INFO);
    ck_assert_str_eq(alerts[1].message,
                     "loss recovered at step 7: 2 is back under 6.948, 2 steps after the spike to "
                     "10 at step 5");
    gb__health_free(h);
}
END_TEST

START_TEST(test_a_flat_loss_is_no_spike) {
    ck_assert(gb_health_enable(&(gb_health_options){.interval = 1, .loss_window = 8}));
    gb__health *h = gb__health_new();
    for (int i = 0; i < 40; i++) gb__health_loss(h, i + 1, 0.5 + 1e-9 * (i % 3));
    for (int i = 0; i < 40; i++) gb__health_loss(h, i + 41, 2.0 - 0.01 * i);   /* falling */
    ck_assert_int_eq(count_kind("loss_spike"), 1);   /* the jump from 0.5 to 2 only */
    gb__health_free(h);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("health");
    TCase *tc = tcase_create("health");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_figures_of_a_two_layer_model_eager);
    tcase_add_test(tc, test_figures_of_a_two_layer_model_traced);
    tcase_add_test(tc, test_a_clipping_optimizer_shows_the_gradients_backward_made);
    tcase_add_test(tc, test_every_layer_of_a_deep_traced_model_is_measured);
    tcase_add_test(tc, test_large_update_and_dead_units_alerts_word_for_word);
    tcase_add_test(tc, test_not_learning_at_a_tiny_learning_rate);
    tcase_add_test(tc, test_saturated_fraction_of_a_sigmoid_layer);
    tcase_add_test(tc, test_a_bias_of_rank_2_gets_no_update_ratio_alert);
    tcase_add_test(tc, test_traced_and_eager_give_the_same_figures);
    tcase_add_test(tc, test_fitting_models_one_after_another_retraces_nothing);
    tcase_add_test(tc, test_disable_means_nothing_is_emitted);
    tcase_add_test(tc, test_nobody_listening_means_nothing_is_measured);
    tcase_add_test(tc, test_bad_options_are_refused_by_name);
    tcase_add_test(tc, test_vanishing_gradient_against_the_layers_above_once_per_onset);
    tcase_add_test(tc, test_exploding_gradient_and_gradient_jump);
    tcase_add_test(tc, test_weight_growth_bias_drift_and_variance_collapse);
    tcase_add_test(tc, test_dead_units_are_reported_as_the_cause_alone);
    tcase_add_test(tc, test_median_and_mad);
    tcase_add_test(tc, test_loss_spike_and_recovery_on_a_given_sequence);
    tcase_add_test(tc, test_a_flat_loss_is_no_spike);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
