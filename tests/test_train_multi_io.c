/* test_train_multi_io.c — compile / fit / evaluate / predict on a
 * functional model of two inputs and two outputs: loss_weights give the
 * total loss sum(w_k * loss_k) (checked against predictions by hand),
 * one SGD step of fit equals the hand-written step on the weighted loss
 * (traced and eager), per-output losses and metrics in the logs, an
 * output compiled without a loss takes no target and is not trained, and
 * the errors for targets that do not fit.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

enum { N = 8 };

/* Two inputs (4 and 2 features), a shared trunk, two heads:
 * "score" (1 value, regression) and "kind" (3 logits). */
static gb_module *two_heads(void) {
    gb_nn_clear_session();
    gb_nn_set_seed(5);
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(4), "a");
    gb_sym *b = gb_input(GB_F32, GB_SHAPE(2), "b");
    gb_sym *ab = gb_apply_n(gb_concatenate_new(-1, NULL), 2, (gb_sym *[]){a, b});
    gb_sym *h = gb_apply(gb_dense_new(5, &(gb_dense_options){.activation = GB_ACT_TANH, .name = "trunk"}), ab);
    gb_sym *score = gb_apply(gb_dense_new(1, &(gb_dense_options){.name = "score"}), h);
    gb_sym *kind = gb_apply(gb_dense_new(3, &(gb_dense_options){.name = "kind"}), h);
    gb_module *m = gb_functional_new(2, (gb_sym *[]){a, b}, 2, (gb_sym *[]){score, kind}, "heads");
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    return m;
}

typedef struct data {
    gb_tensor *a, *b, *score, *kind;
} data;

static data make_data(void) {
    static const int32_t kinds[N] = {0, 2, 1, 1, 0, 2, 2, 1};
    return (data){gb_random_uniform(GB_F32, GB_SHAPE(N, 4), -1, 1, 71),
                  gb_random_uniform(GB_F32, GB_SHAPE(N, 2), -1, 1, 72),
                  gb_random_uniform(GB_F32, GB_SHAPE(N, 1), -1, 1, 73),
                  gb_tensor_from(GB_I32, kinds, GB_SHAPE(N))};
}

static const double WEIGHTS[2] = {0.3, 2.0};

static gb_optimizer *compile_two(gb_module *m, bool eager, const gb_loss_spec *losses, int nmetrics) {
    static const gb_loss_spec both[2] = {{.kind = GB_LOSS_MEAN_SQUARED_ERROR},
                                         {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}};
    gb_optimizer *opt = gb_sgd(0.1);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .losses = losses ? losses : both,
                                      .nlosses = 2,
                                      .loss_weights = WEIGHTS,
                                      .metrics = (const char *[]){"mae", "accuracy"},
                                      .nmetrics = nmetrics,
                                      .run_eagerly = eager}));
    return opt;
}

static gb_data_arrays arrays(const data *d, gb_tensor *kind_target) {
    static gb_tensor *x[2], *y[2];
    x[0] = d->a, x[1] = d->b, y[0] = d->score, y[1] = kind_target;
    return (gb_data_arrays){.nx = 2, .ny = 2, .x = x, .y = y};
}

/* Mean squared error and mean cross-entropy of predictions, by hand. */
static void losses_by_hand(gb_tensor *score, gb_tensor *logits, const data *d, double *mse,
                           double *ce) {
    *mse = *ce = 0;
    for (int i = 0; i < N; i++) {
        double e = gb_get(score, i) - gb_get(d->score, i);
        *mse += e * e / N;
        double mx = -INFINITY, s = 0;
        for (int k = 0; k < 3; k++) mx = fmax(mx, gb_get(logits, i * 3 + k));
        for (int k = 0; k < 3; k++) s += exp(gb_get(logits, i * 3 + k) - mx);
        *ce += (mx + log(s) - gb_get(logits, i * 3 + (int)gb_get(d->kind, i))) / N;
    }
}

START_TEST(test_loss_weights_in_evaluate) {
    gb_module *m = two_heads();
    gb_optimizer *opt = compile_two(m, false, NULL, 2);
    data d = make_data();
    gb_tensor *pred[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_model_predict_arrays(m, 2, (gb_tensor *[]){d.a, d.b}, 3, pred), 2);
    double mse, ce;
    losses_by_hand(pred[0], pred[1], &d, &mse, &ce);
    gb_logs logs;
    ck_assert(gb_model_evaluate_arrays(m, arrays(&d, d.kind), NULL, N, &logs));
    ck_assert_double_eq_tol(gb_logs_get(&logs, "score_loss"), mse, 1e-6);
    ck_assert_double_eq_tol(gb_logs_get(&logs, "kind_loss"), ce, 1e-6);
    ck_assert_double_eq_tol(gb_logs_get(&logs, "loss"), 0.3 * mse + 2.0 * ce, 1e-6);
    /* "accuracy" watches the cross-entropy output, "mae" the regression. */
    ck_assert(gb_logs_has(&logs, "kind_accuracy"));
    ck_assert(!gb_logs_has(&logs, "score_accuracy"));
    ck_assert(gb_logs_has(&logs, "score_mae"));
    ck_assert(!gb_logs_has(&logs, "kind_mae"));
    ck_assert_str_eq(logs.key[0], "kind_accuracy");        /* sorted, as Keras */
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

/* One SGD step of fit (one batch of everything) equals the step written
 * by hand on 0.3 * mse + 2.0 * ce. */
static void check_one_step(bool eager) {
    data d = make_data();
    gb_module *by_fit = two_heads(), *by_hand = two_heads();
    gb_optimizer *opt = compile_two(by_fit, eager, NULL, 2);
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = N;
    o.verbose = 0;
    o.shuffle = false;
    gb_history *h = gb_model_fit_arrays(by_fit, arrays(&d, d.kind), &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());

    gb_tape *tape = gb_tape_begin();
    gb_tensor *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(by_hand, 2, (gb_tensor *[]){d.a, d.b}, out, true), 2);
    gb_tensor *mse = gb_loss_mean_squared_error(d.score, out[0], GB_REDUCTION_MEAN);
    gb_tensor *ce = gb_loss_sparse_categorical_crossentropy(d.kind, out[1], true, GB_REDUCTION_MEAN);
    gb_tensor *loss = gb_add(gb_mul_scalar(mse, 0.3), gb_mul_scalar(ce, 2.0));
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(by_hand, &n);
    gb_tensor *grads[8] = {0};
    ck_assert(gb_tape_gradient_vars(tape, loss, vars, n, grads));
    for (int i = 0; i < n; i++) gb_variable_assign_sub(vars[i], gb_mul_scalar(grads[i], 0.1));
    ck_assert_double_eq_tol(gb_history_value(h, "loss", 0), gb_item(loss), 1e-6);

    int nf = 0;
    gb_variable *const *fitted = gb_module_trainable_variables(by_fit, &nf);
    ck_assert_int_eq(nf, n);
    for (int i = 0; i < n; i++) {
        gb_tensor *x = gb_variable_value(fitted[i]), *y = gb_variable_value(vars[i]);
        for (int64_t j = 0; j < gb_size(x); j++)
            ck_assert_msg(fabs(gb_get(x, j) - gb_get(y, j)) < 1e-6, "%s[%lld]: fit %.9g, hand %.9g",
                          gb_variable_name(fitted[i]), (long long)j, gb_get(x, j), gb_get(y, j));
    }
    gb_history_free(h);
    gb_module_free(by_fit);
    gb_module_free(by_hand);
    gb_optimizer_free(opt);
}

START_TEST(test_fit_step_equals_hand_step_traced) { check_one_step(false); }
END_TEST

START_TEST(test_fit_step_equals_hand_step_eager) { check_one_step(true); }
END_TEST

/* An output without a loss takes no target; its head does not train. */
START_TEST(test_output_without_loss) {
    static const gb_loss_spec score_only[2] = {{.kind = GB_LOSS_MEAN_SQUARED_ERROR}, {GB_LOSS_NONE}};
    gb_module *m = two_heads();
    gb_optimizer *opt = compile_two(m, false, score_only, 1);
    data d = make_data();
    gb_tensor *kind_kernel = gb_tensor_from(GB_F32, gb_data(gb_variable_value(gb_module_variable(
                                                         gb_module_find(m, "kind"), "kernel"))),
                                            GB_SHAPE(5, 3));
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 2;
    o.batch_size = 4;
    o.verbose = 0;
    o.validation_split = 0.25;
    gb_history *h = gb_model_fit_arrays(m, arrays(&d, NULL), &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    const gb_logs *logs = gb_history_logs(h, 1);
    ck_assert(gb_logs_has(logs, "score_loss") && gb_logs_has(logs, "val_score_loss"));
    ck_assert(!gb_logs_has(logs, "kind_loss") && !gb_logs_has(logs, "kind_accuracy"));
    ck_assert_double_eq_tol(gb_logs_get(logs, "loss"), 0.3 * gb_logs_get(logs, "score_loss"), 1e-6);
    gb_tensor *after = gb_variable_value(gb_module_variable(gb_module_find(m, "kind"), "kernel"));
    for (int64_t j = 0; j < 15; j++) ck_assert(gb_get(after, j) == gb_get(kind_kernel, j));
    /* A target for it, or none where a loss needs one, is a clear error. */
    ck_assert_ptr_null(gb_model_fit_arrays(m, arrays(&d, d.kind), &o));
    assert_error(GB_ERR_VALUE, "output 1 ('kind') was compiled without a loss; give NULL as its target");
    gb_history_free(h);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_multi_io_errors) {
    gb_module *m = two_heads();
    gb_optimizer *opt = compile_two(m, false, NULL, 2);
    data d = make_data();
    gb_fit_options o = gb_fit_defaults();
    o.verbose = 0;
    ck_assert_ptr_null(gb_model_fit(m, d.a, d.score, &o));
    assert_error(GB_ERR_VALUE, "gb_model_fit: the model has 2 inputs and 2 outputs; got 1 x");
    ck_assert_ptr_null(gb_model_fit_arrays(m, arrays(&d, NULL), &o));
    assert_error(GB_ERR_VALUE, "output 1 ('kind') has a loss but no target (y)");
    gb_data_arrays bad = arrays(&d, gb_zeros(GB_I32, GB_SHAPE(N - 1)));
    ck_assert_ptr_null(gb_model_fit_arrays(m, bad, &o));
    assert_error(GB_ERR_SHAPE, "x[0] has 8 samples but y[1] has 7");
    o.class_weight = (const double[]){1, 2, 3};
    o.nclass_weight = 3;
    ck_assert_ptr_null(gb_model_fit_arrays(m, arrays(&d, d.kind), &o));
    assert_error(GB_ERR_VALUE, "class_weight is only supported for models of one output");
    ck_assert_ptr_null(gb_model_predict(m, d.a, 4));
    assert_error(GB_ERR_VALUE, "the model has 2 inputs");
    gb_optimizer *opt2 = gb_sgd(0.1);
    ck_assert(!gb_model_compile(m, &(gb_compile_options){.optimizer = opt2,
                                                         .losses = (gb_loss_spec[]){{.kind = GB_LOSS_MEAN_SQUARED_ERROR}},
                                                         .nlosses = 1}));
    assert_error(GB_ERR_VALUE, "losses must give one loss per model output");
    gb_optimizer_free(opt2);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_multi_io");
    TCase *tc = tcase_create("multi_io");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_loss_weights_in_evaluate);
    tcase_add_test(tc, test_fit_step_equals_hand_step_traced);
    tcase_add_test(tc, test_fit_step_equals_hand_step_eager);
    tcase_add_test(tc, test_output_without_loss);
    tcase_add_test(tc, test_multi_io_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
