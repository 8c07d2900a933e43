/* test_nn_regularizers.c — L1/L2 penalties with exact values: weight
 * penalties summed over a model (a shared layer once), activity penalties
 * divided by the batch, a custom layer's add_loss, and fit / evaluate
 * training on the data loss plus all of them (traced and eager), as
 * Keras' compute_loss does. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

static double sum_of(gb_tensor *t, double (*f)(double)) {
    double s = 0;
    for (int64_t i = 0; i < gb_size(t); i++) s += f(gb_get(t, i));
    return s;
}
static double sq(double v) { return v * v; }

START_TEST(test_penalty_values) {
    gb_tensor *t = gb_from_f32((float[]){1, -2, 3}, GB_SHAPE(3));
    ck_assert_double_eq_tol(gb_item(gb_regularizer_apply((gb_regularizer){.l1 = 0.1, .l2 = 0.01}, t)),
                            0.1 * 6 + 0.01 * 14, 1e-6);
    ck_assert_ptr_null(gb_regularizer_apply((gb_regularizer){0}, t));
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_regularizer_apply((gb_regularizer){.l1 = -1}, t));
    assert_error(GB_ERR_VALUE, "l1 and l2 must be finite and >= 0, got -1 and 0");
    ck_assert_ptr_null(gb_dense_new(2, &(gb_dense_options){.activity_regularizer = {.l2 = NAN}}));
    assert_error(GB_ERR_VALUE, "must be finite");
}
END_TEST

/* Kernel L2 and bias L1 of a Dense layer applied twice in a functional
 * model: the model's regularization loss counts the layer once. */
START_TEST(test_weight_penalties_once_per_variable) {
    gb_module *shared = gb_dense_new(3, &(gb_dense_options){.kernel_regularizer = {.l2 = 0.01},
                                                            .bias_regularizer = {.l1 = 0.5},
                                                            .bias_initializer = {.kind = GB_INIT_CONSTANT, .a = -0.2}});
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(4), "a"), *b = gb_input(GB_F32, GB_SHAPE(4), "b");
    gb_sym *s = gb_apply_n(gb_add_layer_new(NULL), 2, (gb_sym *[]){gb_apply(shared, a), gb_apply(shared, b)});
    gb_module *m = gb_functional_new(2, (gb_sym *[]){a, b}, 1, &s, NULL);
    gb_tensor *k = gb_variable_value(gb_module_variable(shared, "kernel"));
    double want = 0.01 * sum_of(k, sq) + 0.5 * 3 * 0.2;
    ck_assert_double_eq_tol(gb_item(gb_module_regularization_loss(m)), want, 1e-6);
    ck_assert_double_eq_tol(gb_item(gb_module_regularization_loss(shared)), want, 1e-6);
    gb_module *plain = gb_dense_new(2, NULL);
    gb_module_build(plain, GB_F32, GB_SHAPE(-1, 3));
    ck_assert_ptr_null(gb_module_regularization_loss(plain));
    ck_assert(gb_ok());
    gb_module_free(plain);
    gb_module_free(m);
}
END_TEST

/* A layer that adds 0.25 * mean(x) as a loss and returns x. */
static gb_tensor *adds_loss_call(gb_module *m, gb_tensor *x, bool training) {
    (void)m, (void)training;
    gb_add_loss(gb_mul_scalar(gb_reduce_mean(x, GB_ALL_AXES, false), 0.25));
    return x;
}
static const gb_module_type adds_loss_type = {.class_name = "AddsLoss", .default_name = "adds_loss",
                                              .call = adds_loss_call};

START_TEST(test_activity_penalty_and_add_loss_are_collected) {
    gb_module *d = gb_dense_new(2, &(gb_dense_options){.activity_regularizer = {.l1 = 0.5}, .seed = 3});
    gb_module *extra = gb_module_new(&adds_loss_type, NULL, 0);
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(4, 3), -1, 1, 9);
    gb_losses_begin();
    gb_tensor *y = gb_module_call(d, x, false);
    gb_module_call(extra, y, false);
    gb_tensor *sum = gb_losses_end();
    double mean = 0;
    for (int64_t i = 0; i < gb_size(y); i++) mean += gb_get(y, i) / (double)gb_size(y);
    ck_assert_double_eq_tol(gb_item(sum), 0.5 * sum_of(y, fabs) / 4 + 0.25 * mean, 1e-6);
    /* Outside a collection nothing is kept; ending none is an error. */
    ck_assert_ptr_nonnull(gb_module_call(d, x, false));
    ck_assert_ptr_null(gb_losses_end());
    assert_error(GB_ERR_STATE, "no collection is open");
    ck_assert(!gb_add_loss(x));
    assert_error(GB_ERR_SHAPE, "gb_add_loss: a loss is a scalar, got [4,3]");
    gb_module_free(d);
    gb_module_free(extra);
}
END_TEST

/* evaluate's loss is the data loss plus every penalty, traced or not. */
static void check_compiled_loss(bool eager) {
    gb_nn_clear_session();
    gb_module *m = gb_sequential_new(NULL);
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.kernel_regularizer = {.l2 = 0.05},
                                                             .activity_regularizer = {.l1 = 0.1},
                                                             .seed = 4}));
    gb_optimizer *opt = gb_sgd(0.1);
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                                        .loss = {.kind = GB_LOSS_MEAN_SQUARED_ERROR},
                                                        .run_eagerly = eager}));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(6, 3), -1, 1, 1);
    gb_tensor *y = gb_random_uniform(GB_F32, GB_SHAPE(6, 2), -1, 1, 2);
    gb_tensor *p = gb_model_predict(m, x, 6);
    double mse = 0;
    for (int64_t i = 0; i < 12; i++) mse += sq(gb_get(p, i) - gb_get(y, i)) / 12;
    double kernel = 0.05 * sum_of(gb_variable_value(gb_module_variable(gb_sequential_layer(m, 0), "kernel")), sq);
    double activity = 0.1 * sum_of(p, fabs) / 6;
    gb_logs logs;
    ck_assert(gb_model_evaluate(m, x, y, NULL, 6, &logs));
    ck_assert_double_eq_tol(gb_logs_get(&logs, "loss"), mse + kernel + activity, 1e-6);
    /* One step trains on the same total: the fitted loss of epoch 1. */
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = 6;
    o.verbose = 0;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_double_eq_tol(gb_history_value(h, "loss", 0), mse + kernel + activity, 1e-6);
    gb_history_free(h);
    gb_module_free(m);
    gb_optimizer_free(opt);
}

START_TEST(test_compiled_loss_adds_penalties_traced) { check_compiled_loss(false); }
END_TEST
START_TEST(test_compiled_loss_adds_penalties_eager) { check_compiled_loss(true); }
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_regularizers");
    TCase *tc = tcase_create("regularizers");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_penalty_values);
    tcase_add_test(tc, test_weight_penalties_once_per_variable);
    tcase_add_test(tc, test_activity_penalty_and_add_loss_are_collected);
    tcase_add_test(tc, test_compiled_loss_adds_penalties_traced);
    tcase_add_test(tc, test_compiled_loss_adds_penalties_eager);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
