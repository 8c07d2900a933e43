/* test_train_many_variables.c — fit on a model with more trainable
 * variables than a traced step once returned (62): a Sequential of 80
 * Dense layers, 160 variables. A callback that asks for each batch's
 * gradients gets all 160 from the traced step, equal to the eager fit's
 * at the same weights, and the traced fit trains every variable as the
 * eager one does. Beyond what a function returns (a layer of 4095
 * scalar weights: their gradients, the loss and the prediction are 4097
 * outputs), the traced step that would return them fails, saying so.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "glassbox.h"
#include "test_util.h"

enum { N = 10, D = 4, C = 3, LAYERS = 80, NVARS = 2 * LAYERS, BATCH = 5, BATCHES = N / BATCH };

static const float XS[N * D] = {
    0.1f, -0.4f, 0.9f, 0.3f,  -1.2f, 0.5f,  0.0f, 0.7f,  0.8f,  0.8f, -0.3f, -0.6f, 0.2f, 0.1f,
    -0.9f, 1.1f, -0.5f, -0.7f, 0.6f, 0.4f,  1.0f, -1.0f, 0.3f,  0.2f, -0.2f, 0.9f,  0.5f, -1.1f,
    0.4f, 0.0f,  -0.8f, 0.6f,  0.7f, -0.3f, 0.1f, -0.5f, -0.6f, 0.2f, 1.2f,  0.8f};
static const int32_t YS[N] = {0, 1, 2, 1, 0, 2, 2, 0, 1, 1};

/* 79 tanh layers of 4 units and a last one of C, the same weights each
 * time (one seed, a fresh session). */
static gb_module *deep_model(void) {
    gb_nn_clear_session();
    gb_nn_set_seed(7);
    gb_module *m = gb_sequential_new("deep");
    for (int i = 0; i < LAYERS - 1; i++)
        gb_sequential_add(m, gb_dense_new(D, &(gb_dense_options){.activation = GB_ACT_TANH}));
    gb_sequential_add(m, gb_dense_new(C, NULL));
    return m;
}

/* What the callback saw: every batch's gradient count and values. */
typedef struct seen {
    int ngradients[BATCHES];
    float *values[BATCHES][NVARS];    /* malloc'd copies */
    int64_t sizes[BATCHES][NVARS];
} seen;

static void ask_gradients(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)cb, (void)batch, (void)logs;
    s->want_gradients = true;
}

static void copy_gradients(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)logs;
    seen *w = *(seen **)gb_callback_state(cb);
    w->ngradients[batch] = s->ngradients;
    for (int i = 0; i < s->ngradients && i < NVARS; i++) {
        gb_tensor *g = s->gradients[i];
        if (!g) continue;
        w->sizes[batch][i] = gb_size(g);
        w->values[batch][i] = malloc((size_t)gb_size(g) * sizeof(float));
        for (int64_t e = 0; e < gb_size(g); e++) w->values[batch][i][e] = (float)gb_get(g, e);
    }
}

static const gb_callback_type gradient_taker = {
    .name = "GradientTaker",
    .state_size = sizeof(seen *),
    .on_batch_begin = ask_gradients,
    .on_batch_end = copy_gradients,
};

/* One epoch of fit at batch 5 (two batches), traced or eager; the
 * gradients the callback saw go to w, the final weights to weights. */
static void fit_deep(bool eager, seen *w, float **weights) {
    gb_module *m = deep_model();
    gb_optimizer *opt = gb_sgd(0.5);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .run_eagerly = eager}));
    gb_callback *cb = gb_callback_new(&gradient_taker);
    *(seen **)gb_callback_state(cb) = w;
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1;
    o.batch_size = BATCH;
    o.verbose = 0;
    o.shuffle = false;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, gb_from_f32(XS, GB_SHAPE(N, D)),
                                 gb_tensor_from(GB_I32, YS, GB_SHAPE(N)), &o);
    ck_assert_msg(h != NULL, "%s fit: %s", eager ? "eager" : "traced", gb_error_string());
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m, &n);
    ck_assert_int_eq(n, NVARS);
    for (int i = 0; i < n; i++) {
        gb_tensor *v = gb_variable_value(vars[i]);
        weights[i] = malloc((size_t)gb_size(v) * sizeof(float));
        for (int64_t e = 0; e < gb_size(v); e++) weights[i][e] = (float)gb_get(v, e);
    }
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

START_TEST(test_traced_fit_gives_every_gradient_like_eager) {
    seen traced = {0}, eager = {0};
    float *w_traced[NVARS], *w_eager[NVARS], *w_init[NVARS];
    fit_deep(false, &traced, w_traced);
    fit_deep(true, &eager, w_eager);
    /* The weights both started from. */
    gb_module *m = deep_model();
    ck_assert(gb_module_build(m, GB_F32, 2, (int64_t[]){-1, D}));
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m, &n);
    for (int i = 0; i < n; i++) {
        gb_tensor *v = gb_variable_value(vars[i]);
        w_init[i] = malloc((size_t)gb_size(v) * sizeof(float));
        for (int64_t e = 0; e < gb_size(v); e++) w_init[i][e] = (float)gb_get(v, e);
    }
    for (int b = 0; b < BATCHES; b++) {
        ck_assert_int_eq(traced.ngradients[b], NVARS);
        ck_assert_int_eq(eager.ngradients[b], NVARS);
        for (int i = 0; i < NVARS; i++) {
            ck_assert_msg(traced.values[b][i] && eager.values[b][i], "batch %d: no gradient %d", b, i);
            ck_assert_int_eq(traced.sizes[b][i], eager.sizes[b][i]);
            for (int64_t e = 0; e < traced.sizes[b][i]; e++)
                ck_assert_msg(fabsf(traced.values[b][i][e] - eager.values[b][i][e]) <= 1e-6f,
                              "batch %d, gradient %d [%lld]: %.9g traced, %.9g eager", b, i, (long long)e,
                              traced.values[b][i][e], eager.values[b][i][e]);
        }
    }
    /* Both fits moved every variable, to the same place. */
    for (int i = 0; i < NVARS; i++) {
        bool moved = false;
        for (int64_t e = 0; e < traced.sizes[0][i]; e++) {
            moved |= w_traced[i][e] != w_init[i][e];
            ck_assert_msg(fabsf(w_traced[i][e] - w_eager[i][e]) <= 1e-6f, "variable %d [%lld]: %.9g traced, %.9g eager",
                          i, (long long)e, w_traced[i][e], w_eager[i][e]);
        }
        ck_assert_msg(moved, "the traced fit left variable %d where it started", i);
    }
    for (int i = 0; i < NVARS; i++) {
        free(w_traced[i]), free(w_eager[i]), free(w_init[i]);
        for (int b = 0; b < BATCHES; b++) free(traced.values[b][i]), free(eager.values[b][i]);
    }
    gb_module_free(m);
}
END_TEST

/* y = x + the sum of its NBIAS scalar weights: as many trainable
 * variables as a layer may have, with little to trace per variable. */
enum { NBIAS = GB_FUNCTION_MAX_OUTPUTS - 1 };

static bool biases_build(gb_module *m, gb_dtype dtype, int rank, const int64_t *shape) {
    (void)rank, (void)shape;
    for (int i = 0; i < NBIAS; i++) {
        char name[16];
        snprintf(name, sizeof name, "b%d", i);
        if (!gb_module_add_weight(m, name, dtype, 0, NULL, (gb_initializer){.kind = GB_INIT_ZEROS}, true))
            return false;
    }
    return true;
}

static gb_tensor *biases_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m, &n);
    for (int i = 0; i < n; i++) x = gb_add(x, gb_variable_value(vars[i]));
    return x;
}

static const gb_module_type biases_type = {.class_name = "Biases", .default_name = "biases",
                                           .build = biases_build, .call = biases_call};

START_TEST(test_gradients_beyond_a_function_outputs_are_refused) {
    gb_module *m = gb_sequential_new("wide");
    gb_sequential_add(m, gb_module_new(&biases_type, NULL, 0));
    gb_optimizer *opt = gb_sgd(0.1);
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = opt, .loss = {GB_LOSS_MEAN_SQUARED_ERROR}}));
    seen w = {0};
    gb_callback *cb = gb_callback_new(&gradient_taker);
    *(seen **)gb_callback_state(cb) = &w;
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = N;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    int line = __LINE__ + 1;
    gb_history *h = gb_model_fit(m, gb_from_f32(XS, GB_SHAPE(N, D)), gb_from_f32(XS, GB_SHAPE(N, D)), &o);
    ck_assert_ptr_null(h);
    assert_error_text(GB_ERR_VALUE,
                      "while tracing function 'train_function' (called at test_train_many_variables.c:%d): "
                      "the gradients of 4095 trainable variables and 2 other outputs are more than a "
                      "function returns (4096); compile the model with run_eagerly",
                      line);
    gb_callback_free(cb);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_many_variables");
    TCase *tc = tcase_create("deep");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_traced_fit_gives_every_gradient_like_eager);
    tcase_add_test(tc, test_gradients_beyond_a_function_outputs_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
