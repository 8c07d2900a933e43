/* test_train_fit.c — compile / fit / evaluate / predict and the built-in
 * callbacks, with values computed by hand: the weighted loss under
 * class_weight and sample_weight (zeros mask samples), validation_split
 * taking the last samples, EarlyStopping on a scripted validation loss
 * (the epoch it stops at, the weights it restores), ReduceLROnPlateau's
 * schedule, TerminateOnNaN at the batch that went NaN, a replaced train
 * step, one trace for a whole run, and the errors.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"
#include "train/internal.h"

enum { N = 10, D = 4, C = 3 };

/* Ten samples of four features, labels 0..2. */
static const float XS[N * D] = {
    0.1f, -0.4f, 0.9f, 0.3f,  -1.2f, 0.5f,  0.0f, 0.7f,  0.8f,  0.8f, -0.3f, -0.6f, 0.2f, 0.1f,
    -0.9f, 1.1f, -0.5f, -0.7f, 0.6f, 0.4f,  1.0f, -1.0f, 0.3f,  0.2f, -0.2f, 0.9f,  0.5f, -1.1f,
    0.4f, 0.0f,  -0.8f, 0.6f,  0.7f, -0.3f, 0.1f, -0.5f, -0.6f, 0.2f, 1.2f,  0.8f};
static const int32_t YS[N] = {0, 1, 2, 1, 0, 2, 2, 0, 1, 1};

static gb_tensor *xs(void) { return gb_from_f32(XS, GB_SHAPE(N, D)); }
static gb_tensor *ys(void) { return gb_tensor_from(GB_I32, YS, GB_SHAPE(N)); }

static gb_module *linear_model(void) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(C, &(gb_dense_options){.seed = 3,
                                                            .bias_initializer = {.kind = GB_INIT_RANDOM_NORMAL, .b = 0.3}}));
    return m;
}

static gb_optimizer *compile_with(gb_module *m, gb_optimizer *opt, bool eager) {
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .metrics = (const char *[]){"accuracy"},
                                      .nmetrics = 1,
                                      .run_eagerly = eager}));
    return opt;
}

static gb_optimizer *compile_sparse(gb_module *m, double lr, bool eager) {
    return compile_with(m, gb_sgd(lr), eager);
}

static gb_fit_options quiet(int epochs, int64_t batch) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.batch_size = batch;
    o.verbose = 0;
    o.shuffle = false;
    return o;
}

/* Each sample's cross-entropy from the logits, in double: lse - logit[y]. */
static void cross_entropies(gb_tensor *logits, const int32_t *y, int64_t n, double *out) {
    for (int64_t i = 0; i < n; i++) {
        double mx = -INFINITY, s = 0;
        for (int k = 0; k < C; k++) mx = fmax(mx, gb_get(logits, i * C + k));
        for (int k = 0; k < C; k++) s += exp(gb_get(logits, i * C + k) - mx);
        out[i] = mx + log(s) - gb_get(logits, i * C + y[i]);
    }
}

/* Frees what a test made (any may be NULL). */
static void finish(gb_history *h, gb_callback *const *cbs, int ncbs, gb_module *m, gb_optimizer *opt) {
    gb_history_free(h);
    for (int i = 0; i < ncbs; i++) gb_callback_free(cbs[i]);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

/* ---- weights -------------------------------------------------------------------------- */

/* One batch of all samples: the epoch's loss is the loss before the
 * update, sum(w_i l_i) / N with w = class_weight[y] * sample_weight. */
static void check_weighted(bool eager) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, eager);
    double l[N], expect = 0;
    cross_entropies(gb_module_call(m, xs(), false), YS, N, l);
    const double cw[C] = {1.0, 2.5, 0.0}; /* class 2 masked */
    const float sw[N] = {1, 1, 0.5f, 2, 0, 1, 3, 1, 1, 0.25f};
    for (int i = 0; i < N; i++) expect += l[i] * cw[YS[i]] * sw[i];
    expect /= N;
    gb_fit_options o = quiet(1, N);
    o.class_weight = cw;
    o.nclass_weight = C;
    o.sample_weight = gb_from_f32(sw, GB_SHAPE(N));
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_double_eq_tol(gb_history_value(h, "loss", 0), expect, 1e-6 * expect);
    finish(h, NULL, 0, m, opt);
}

START_TEST(test_class_and_sample_weight_give_the_hand_weighted_loss) { check_weighted(false); }
END_TEST

START_TEST(test_weighted_loss_run_eagerly) { check_weighted(true); }
END_TEST

START_TEST(test_evaluate_weights_samples_and_zero_masks) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    double l[N], expect = 0, acc_w = 0, acc_hit = 0;
    gb_tensor *logits = gb_module_call(m, xs(), false);
    cross_entropies(logits, YS, N, l);
    const float sw[N] = {0, 1, 1, 0, 2, 1, 1, 0, 1, 1};
    for (int i = 0; i < N; i++) {
        expect += l[i] * sw[i];
        int64_t best = 0;
        for (int k = 1; k < C; k++)
            if (gb_get(logits, i * C + k) > gb_get(logits, i * C + best)) best = k;
        acc_w += sw[i];
        acc_hit += sw[i] * (best == YS[i]);
    }
    gb_logs logs;
    /* batch 4: three batches of 4, 4, 2; the loss still averages over samples */
    ck_assert_msg(gb_model_evaluate(m, xs(), ys(), gb_from_f32(sw, GB_SHAPE(N)), 4, &logs), "%s",
                  gb_error_string());
    ck_assert_double_eq_tol(gb_logs_get(&logs, "loss"), expect / N, 1e-6);
    ck_assert_double_eq_tol(gb_logs_get(&logs, "accuracy"), acc_hit / acc_w, 1e-6);
    ck_assert_str_eq(logs.key[0], "accuracy"); /* sorted, as Keras' logs */
    ck_assert_str_eq(logs.key[1], "loss");
    finish(NULL, NULL, 0, m, opt);
}
END_TEST

/* A sequence model's loss (one value per sample and time step, as a
 * language model's): each sample's loss is the mean over its steps, then
 * weighted and averaged over the samples; the traced step (a batch of -1
 * samples, the last one smaller) trains on it too. */
START_TEST(test_sequence_loss_averages_the_time_steps) {
    enum { S = N / 2, T = 2 };
    gb_module *m = linear_model();
    gb_optimizer *opt = gb_sgd(0.1);
    const gb_compile_options co = {.optimizer = opt,
                                   .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}};
    ck_assert(gb_model_compile(m, &co));
    gb_tensor *x = gb_reshape(xs(), 3, (int64_t[]){S, T, D}), *y = gb_reshape(ys(), 2, (int64_t[]){S, T});
    const float sw[S] = {1, 0, 2, 0.5f, 1};
    gb_tensor *logits = gb_module_call(m, xs(), false);
    double ce[N], expect = 0;
    cross_entropies(logits, YS, N, ce);
    for (int i = 0; i < S; i++) expect += sw[i] * (ce[2 * i] + ce[2 * i + 1]) / T;
    gb_logs logs;
    ck_assert_msg(gb_model_evaluate(m, x, y, gb_from_f32(sw, GB_SHAPE(S)), 2, &logs), "%s", gb_error_string());
    ck_assert_double_eq_tol(gb_logs_get(&logs, "loss"), expect / S, 1e-6);
    gb_module_free(m);
    m = linear_model();
    ck_assert(gb_model_compile(m, &co));
    gb_history *h = gb_model_fit(m, x, y, &(gb_fit_options){.epochs = 2, .batch_size = 2, .verbose = 0});
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert(gb_history_value(h, "loss", 1) < gb_history_value(h, "loss", 0));
    finish(h, NULL, 0, m, opt);
}
END_TEST

/* ---- validation_split, traces ---------------------------------------------------------- */

START_TEST(test_validation_split_takes_the_last_samples) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    gb_fit_options o = quiet(2, 3);
    o.shuffle = true;
    o.seed = 5;
    o.validation_split = 0.3; /* floor(10 * 0.7) = 7 train, the last 3 validate */
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_int_eq(gb_history_epochs(h), 2);
    gb_logs logs;
    gb_tensor *vx = gb_slice(xs(), GB_LIST(7, 0), GB_LIST(3, -1));
    gb_tensor *vy = gb_slice(ys(), GB_LIST(7), GB_LIST(3));
    ck_assert(gb_model_evaluate(m, vx, vy, NULL, 3, &logs));
    ck_assert_double_eq(gb_history_value(h, "val_loss", 1), gb_logs_get(&logs, "loss"));
    ck_assert_double_eq(gb_history_value(h, "val_accuracy", 1), gb_logs_get(&logs, "accuracy"));
    /* The train and test steps each traced once for the whole run: the
     * last, smaller batch (7 = 3 + 3 + 1) runs the same graph. */
    gb__compiled *c = gb__compiled_of(m, "test");
    ck_assert_int_eq(gb_function_get_stats(c->train_fn[0]).traces, 1);
    ck_assert_int_eq(gb_function_get_stats(c->train_fn[0]).calls, 6);
    ck_assert_int_eq(gb_function_get_stats(c->test_fn[0]).traces, 1);
    finish(h, NULL, 0, m, opt);
}
END_TEST

/* Every weight after three epochs, traced against eager, for optimizers
 * with and without a step count: Adam's bias correction reads it, and a
 * traced step whose last update (the one that advances the count) ran
 * before another variable's update corrected that one as a step later
 * (the first kernel moved 0.74 of Adam's first step). */
enum { H = 6, NW = D * H + H + H * C + C };

static gb_module *two_layers(void) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(H, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(C, &(gb_dense_options){.seed = 3}));
    return m;
}

static gb_optimizer *optimizer_for(int k) {
    return k == 0 ? gb_sgd(0.5) : k == 1 ? gb_adam(0.05) : gb_rmsprop(0.01);
}

START_TEST(test_traced_and_eager_fit_agree) {
    for (int k = 0; k < 3; k++) {
        double w[2][NW];
        for (int eager = 0; eager < 2; eager++) {
            gb_nn_clear_session();
            gb_module *m = two_layers();
            gb_optimizer *opt = compile_with(m, optimizer_for(k), eager);
            gb_fit_options o = quiet(3, 4);
            o.shuffle = true;
            o.seed = 11;
            gb_history *h = gb_model_fit(m, xs(), ys(), &o);
            ck_assert_msg(h, "%s", gb_error_string());
            int n = 0, j = 0;
            gb_variable *const *vars = gb_module_trainable_variables(m, &n);
            ck_assert_int_eq(n, 4);
            for (int v = 0; v < n; v++) {
                gb_tensor *value = gb_variable_value(vars[v]);
                for (int64_t e = 0; e < gb_size(value); e++) w[eager][j++] = gb_get(value, e);
            }
            ck_assert_int_eq(j, NW);
            gb_history_free(h);
            gb_module_free(m);
            gb_optimizer_free(opt);
        }
        for (int e = 0; e < NW; e++)
            ck_assert_msg(fabs(w[0][e] - w[1][e]) <= 1e-6, "optimizer %d, weight %d: traced %.9g, eager %.9g",
                          k, e, w[0][e], w[1][e]);
    }
}
END_TEST

/* ---- callbacks ------------------------------------------------------------------------- */

/* A scripted val_loss, written into the logs before the callbacks after
 * it see them; the first weight of every epoch's end, kept. */
typedef struct script {
    const double *val_loss;
    double kernel0[16];
    double lr[16];
    int epochs_seen;
} script;

static double kernel0(gb_module *m) {
    int n = 0;
    gb_variable *const *v = gb_module_trainable_variables(m, &n);
    gb_scope_begin();
    double k = gb_get(gb_variable_value(v[0]), 0);
    gb_scope_end();
    return k;
}

static void scripted_epoch_end(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    script *sc = user;
    gb_logs_set(logs, "val_loss", sc->val_loss[epoch]);
    sc->kernel0[epoch] = kernel0(s->model);
    sc->epochs_seen++;
}

START_TEST(test_early_stopping_stops_and_restores_the_best_weights) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    /* best at epoch 1 (0.8); 0.9, 0.85 do not beat it: stops at epoch 3 */
    static const double val[] = {1.0, 0.8, 0.9, 0.85, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2};
    script sc = {.val_loss = val};
    gb_callback *cbs[2] = {
        gb_lambda(&(gb_lambda_callback){.on_epoch_end = scripted_epoch_end, .user = &sc}),
        gb_early_stopping(&(gb_early_stopping_options){.patience = 2, .restore_best_weights = true}),
    };
    gb_fit_options o = quiet(10, 5);
    o.callbacks = cbs;
    o.ncallbacks = 2;
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_int_eq(gb_early_stopping_stopped_epoch(cbs[1]), 3);
    ck_assert_int_eq(gb_history_epochs(h), 4);
    ck_assert_double_eq(gb_history_value(h, "val_loss", 3), 0.85);
    ck_assert(sc.kernel0[3] != sc.kernel0[1]);          /* training moved on ... */
    ck_assert_double_eq(kernel0(m), sc.kernel0[1]);     /* ... and came back */
    finish(h, cbs, 2, m, opt);
}
END_TEST

START_TEST(test_early_stopping_min_delta_and_mode_max) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    /* mode max on "val_loss" as a stand-in score: 0.5 -> 0.55 is not more
     * than min_delta 0.1 better, nor is 0.59; patience 2 stops at epoch 2. */
    static const double val[] = {0.5, 0.55, 0.59, 0.9, 1.0};
    script sc = {.val_loss = val};
    gb_callback *cbs[2] = {
        gb_lambda(&(gb_lambda_callback){.on_epoch_end = scripted_epoch_end, .user = &sc}),
        gb_early_stopping(&(gb_early_stopping_options){.patience = 2, .min_delta = 0.1, .mode = "max"}),
    };
    gb_fit_options o = quiet(5, 5);
    o.callbacks = cbs;
    o.ncallbacks = 2;
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_int_eq(gb_early_stopping_stopped_epoch(cbs[1]), 2);
    ck_assert_int_eq(gb_history_epochs(h), 3);
    gb_history_free(h);
    for (int i = 0; i < 2; i++) gb_callback_free(cbs[i]);
    ck_assert_ptr_null(gb_early_stopping(&(gb_early_stopping_options){.mode = "sideways"}));
    assert_error(GB_ERR_VALUE, "mode 'sideways' is none of");
    finish(NULL, NULL, 0, m, opt);
}
END_TEST

START_TEST(test_reduce_lr_on_plateau_schedule) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    static const double val[] = {1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5};
    script sc = {.val_loss = val};
    gb_callback *cbs[2] = {
        gb_lambda(&(gb_lambda_callback){.on_epoch_end = scripted_epoch_end, .user = &sc}),
        gb_reduce_lr_on_plateau(&(gb_reduce_lr_options){.factor = 0.5, .patience = 2, .cooldown = 1}),
    };
    gb_fit_options o = quiet(8, 5);
    o.callbacks = cbs;
    o.ncallbacks = 2;
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    /* Keras' rules by hand: epoch 2 ends two epochs without improvement
     * -> 0.05, one epoch of cooldown (3), 4 improves, 5 and 6 do not ->
     * 0.025 at 6; each epoch logs the rate it trained with. */
    static const double lr[] = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025};
    for (int e = 0; e < 8; e++) ck_assert_double_eq(gb_history_value(h, "learning_rate", e), lr[e]);
    ck_assert_double_eq(gb_optimizer_learning_rate(opt), 0.025);
    finish(h, cbs, 2, m, opt);
}
END_TEST

static double halve_after_two(int epoch, double lr, void *user) {
    (void)user;
    return epoch < 2 ? lr : lr * 0.5;
}

START_TEST(test_learning_rate_scheduler) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    gb_callback *cb = gb_learning_rate_scheduler(halve_after_two, NULL);
    gb_fit_options o = quiet(4, 5);
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    static const double lr[] = {0.1, 0.1, 0.05, 0.025};
    for (int e = 0; e < 4; e++) ck_assert_double_eq(gb_history_value(h, "learning_rate", e), lr[e]);
    finish(h, &cb, 1, m, opt);
}
END_TEST

static void count_batch(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)s, (void)batch, (void)logs;
    ++*(int *)user;
}

START_TEST(test_terminate_on_nan_stops_at_the_bad_batch) {
    gb_module *m = linear_model();
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    float x[N * D];
    memcpy(x, XS, sizeof x);
    x[6 * D + 2] = NAN; /* sample 6: the batch of samples 6, 7 (batch 2 = the 4th) */
    int batches = 0;
    gb_callback *cbs[2] = {gb_terminate_on_nan(),
                           gb_lambda(&(gb_lambda_callback){.on_batch_end = count_batch, .user = &batches})};
    gb_fit_options o = quiet(3, 2);
    o.callbacks = cbs;
    o.ncallbacks = 2;
    gb_history *h = gb_model_fit(m, gb_from_f32(x, GB_SHAPE(N, D)), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_int_eq(batches, 4);               /* batches 0..3, then it stopped */
    ck_assert_int_eq(gb_history_epochs(h), 1);  /* the epoch still ends, as in Keras */
    ck_assert(isnan(gb_history_value(h, "loss", 0)));
    finish(h, cbs, 2, m, opt);
}
END_TEST

/* ---- a replaced train step --------------------------------------------------------------- */

typedef struct custom {
    int traces;
    bool saw_weights;
} custom;

/* The seeds' "customize what happens in fit": the compiled loss, the
 * tape, the update, written by the user. */
static gb_tensor *my_step(gb_train_state *s, gb_tensor *x, gb_tensor *y, gb_tensor *sw,
                          gb_tensor **y_pred, void *user) {
    custom *c = user;
    c->traces++; /* plain C: runs only while tracing */
    c->saw_weights = sw != NULL;
    gb_tape *tape = gb_tape_begin();
    *y_pred = gb_module_call(s->model, x, true);
    gb_tensor *loss = gb_train_compiled_loss(s, y, *y_pred, sw);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(s->model, &n);
    gb_tensor *grads[2];
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    gb_optimizer_apply_gradients(s->optimizer, grads, n, vars, n);
    return loss;
}

START_TEST(test_custom_train_step_gets_sample_weights_and_traces_once) {
    gb_module *m = linear_model();
    gb_optimizer *opt = gb_sgd(0.1);
    custom cu = {0};
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .train_step = my_step,
                                      .train_step_user = &cu}));
    double l[N], expect = 0;
    cross_entropies(gb_module_call(m, xs(), false), YS, N, l);
    const double cw[C] = {0.5, 1.0, 2.0};
    for (int i = 0; i < N; i++) expect += l[i] * cw[YS[i]];
    gb_fit_options o = quiet(3, N);
    o.class_weight = cw;
    o.nclass_weight = C;
    gb_history *h = gb_model_fit(m, xs(), ys(), &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_int_eq(cu.traces, 1);
    ck_assert(cu.saw_weights);
    ck_assert_double_eq_tol(gb_history_value(h, "loss", 0), expect / N, 1e-6);
    ck_assert(gb_history_value(h, "loss", 2) < gb_history_value(h, "loss", 0));
    finish(h, NULL, 0, m, opt);
}
END_TEST

/* ---- predict ------------------------------------------------------------------------------ */

START_TEST(test_predict_equals_the_model_call) {
    gb_module *m = linear_model();
    gb_tensor *direct = gb_module_call(m, xs(), false);
    gb_tensor *eager = gb_model_predict(m, xs(), 3); /* not compiled: eagerly */
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    gb_tensor *traced = gb_model_predict(m, xs(), 4);
    ck_assert_msg(eager && traced, "%s", gb_error_string());
    ck_assert(gb_same_shape(direct, traced));
    for (int64_t i = 0; i < N * C; i++) {
        ck_assert_double_eq(gb_get(eager, i), gb_get(direct, i));
        ck_assert_double_eq_tol(gb_get(traced, i), gb_get(direct, i), 1e-6);
    }
    finish(NULL, NULL, 0, m, opt);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------------- */

START_TEST(test_errors_are_clear) {
    gb_module *m = linear_model();
    gb_fit_options o = quiet(1, 4);
    ck_assert_ptr_null(gb_model_fit(m, xs(), ys(), &o));
    assert_error(GB_ERR_STATE, "the model 'model' is not compiled; call gb_model_compile first");
    gb_optimizer *opt = compile_sparse(m, 0.1, false);
    ck_assert_ptr_null(gb_model_fit(m, xs(), gb_slice(ys(), GB_LIST(0), GB_LIST(7)), &o));
    assert_error(GB_ERR_SHAPE, "x has 10 samples but y has 7");
    o.validation_split = 0.95;
    ck_assert_ptr_null(gb_model_fit(m, xs(), ys(), &o));
    assert_error(GB_ERR_VALUE, "10 samples are not enough to split off validation_split=0.95");
    o.validation_split = 0;
    o.class_weight = (const double[]){1, 1};
    o.nclass_weight = 2;
    ck_assert_ptr_null(gb_model_fit(m, xs(), ys(), &o));
    assert_error(GB_ERR_VALUE, "class_weight has 2 classes but sample 2 is labelled 2");
    o.class_weight = NULL;
    o.nclass_weight = 0;
    o.sample_weight = gb_from_f32((const float[]){1, 2}, GB_SHAPE(2));
    ck_assert_ptr_null(gb_model_fit(m, xs(), ys(), &o));
    assert_error(GB_ERR_SHAPE, "sample_weight has 2 values for 10 samples");
    ck_assert(!gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                                         .loss = {GB_LOSS_MEAN_SQUARED_ERROR},
                                                         .metrics = (const char *[]){"accuracy"},
                                                         .nmetrics = 1}));
    assert_error(GB_ERR_VALUE, "unknown metric 'accuracy' for this loss");
    gb_logs logs;
    ck_assert(!gb_model_evaluate(m, xs(), ys(), NULL, 0, &logs));
    assert_error(GB_ERR_VALUE, "gb_model_evaluate: batch_size must be >= 1");
    ck_assert(!gb_model_evaluate(m, xs(), ys(), gb_from_f32((const float[]){1}, GB_SHAPE(1)), 4, &logs));
    assert_error(GB_ERR_SHAPE, "x has 10 samples but sample_weight has 1");
    ck_assert_ptr_null(gb_model_predict(m, xs(), 0));
    assert_error(GB_ERR_VALUE, "gb_model_predict: batch_size must be >= 1");
    /* An empty test set is refused, not scored 0. */
    gb_tensor *none_x = gb_slice(xs(), GB_LIST(0, 0), GB_LIST(0, -1));
    gb_tensor *none_y = gb_slice(ys(), GB_LIST(0), GB_LIST(0));
    ck_assert(!gb_model_evaluate(m, none_x, none_y, NULL, 4, &logs));
    assert_error_text(GB_ERR_VALUE,
                      "gb_model_evaluate: x has no samples (rank 0 or an empty first axis)");
    gb_dataset *empty =
        gb_dataset_batch(gb_dataset_from_tensor_slices(2, (gb_tensor *[]){none_x, none_y}), 4, false);
    ck_assert(!gb_model_evaluate_dataset(m, empty, &logs));
    assert_error_text(GB_ERR_VALUE, "gb_model_evaluate: the dataset has no samples; the loss and "
                                    "metrics need at least one");
    gb_dataset_free(empty);
    finish(NULL, NULL, 0, m, opt);
}
END_TEST

/* Records what callbacks see of the job. */
static void rank_seen(gb_train_state *s, gb_logs *logs, void *user) {
    (void)logs;
    ((int *)user)[0] = s->rank;
    ((int *)user)[1] = s->num_ranks;
}

/* A distributed fit in a job of one (no mpirun) trains as a plain one:
 * the same history; callbacks see rank 0 of 1. The callbacks that write
 * files write on rank 0 only (several ranks: tests/dist.cmake). */
START_TEST(test_distributed_fit_in_a_job_of_one) {
    double loss[2];
    for (int d = 0; d < 2; d++) {
        gb_nn_clear_session();
        gb_module *m = linear_model();
        gb_optimizer *opt = compile_sparse(m, 0.1, false);
        int seen[2] = {-1, -1};
        gb_callback *cb = gb_lambda(&(gb_lambda_callback){.on_train_begin = rank_seen, .user = seen});
        gb_fit_options o = quiet(2, 4);
        o.distributed = d;
        o.callbacks = &cb;
        o.ncallbacks = 1;
        gb_history *h = gb_model_fit(m, xs(), ys(), &o);
        ck_assert_ptr_nonnull(h);
        loss[d] = gb_history_value(h, "loss", 1);
        ck_assert_int_eq(seen[0], 0);
        ck_assert_int_eq(seen[1], 1);
        gb_history_free(h);
        gb_callback_free(cb);
        finish(NULL, NULL, 0, m, opt);
    }
    ck_assert_double_eq(loss[0], loss[1]);
    /* A file-writing callback on a rank other than 0 writes nothing. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/gb-test-csv-%d.csv", (int)getpid());
    gb_callback *csv = gb_csv_logger(path, 0, false);
    gb_train_state s = {.rank = 1, .num_ranks = 2};
    gb_logs logs = {0};
    csv->type->on_train_begin(csv, &s, &logs);
    csv->type->on_epoch_end(csv, &s, 0, &logs);
    csv->type->on_train_end(csv, &s, &logs);
    ck_assert_int_ne(access(path, F_OK), 0);
    gb_callback_free(csv);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_fit");
    TCase *tc = tcase_create("fit");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_class_and_sample_weight_give_the_hand_weighted_loss);
    tcase_add_test(tc, test_weighted_loss_run_eagerly);
    tcase_add_test(tc, test_evaluate_weights_samples_and_zero_masks);
    tcase_add_test(tc, test_sequence_loss_averages_the_time_steps);
    tcase_add_test(tc, test_validation_split_takes_the_last_samples);
    tcase_add_test(tc, test_traced_and_eager_fit_agree);
    tcase_add_test(tc, test_early_stopping_stops_and_restores_the_best_weights);
    tcase_add_test(tc, test_early_stopping_min_delta_and_mode_max);
    tcase_add_test(tc, test_reduce_lr_on_plateau_schedule);
    tcase_add_test(tc, test_learning_rate_scheduler);
    tcase_add_test(tc, test_terminate_on_nan_stops_at_the_bad_batch);
    tcase_add_test(tc, test_custom_train_step_gets_sample_weights_and_traces_once);
    tcase_add_test(tc, test_predict_equals_the_model_call);
    tcase_add_test(tc, test_errors_are_clear);
    tcase_add_test(tc, test_distributed_fit_in_a_job_of_one);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
