/* test_nn_training.c — layers under a tape: a finite-difference gradient
 * check through Dense -> relu -> Dense (wrt the input and wrt every
 * weight), and small training loops with plain gradient descent
 * (assign_sub) that must reach a low loss: linear regression, XOR, and a
 * tiny CNN with pooling, dropout and flatten. */
#include <check.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

static gb_module *mlp_3_4_2(void) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1,
                                                                 .bias_initializer = {.kind = GB_INIT_RANDOM_NORMAL, .b = 0.5}}));
    gb_sequential_add(model, gb_dense_new(2, &(gb_dense_options){.seed = 2}));
    return model;
}

static gb_tensor *f_model(gb_tensor *const *x, int n, void *user) {
    (void)n;
    return gb_module_call((gb_module *)user, x[0], false);
}

START_TEST(test_gradcheck_wrt_input) {
    gb_module *model = mlp_3_4_2();
    gb_tensor *x = GC_INPUT(-1, 1, 3, 5, 3);
    GC_ASSERT(f_model, ((gb_tensor *[]){x}), 1, model);
    ck_assert_int_eq(gb_module_dtype(model), GB_F64);
    gb_module_free(model);
}
END_TEST

/* Loss of the model on (x, t), computed with the weights as they are now. */
static double mse_now(gb_module *model, gb_tensor *x, gb_tensor *t) {
    gb_scope_begin();
    double v = gb_item(gb_loss_mean_squared_error(t, gb_module_call(model, x, false), GB_REDUCTION_MEAN));
    gb_scope_end();
    return v;
}

START_TEST(test_weight_gradients_match_finite_differences) {
    gb_module *model = mlp_3_4_2();
    gb_tensor *x = GC_INPUT(-1, 1, 4, 6, 3);
    gb_tensor *t = GC_INPUT(-1, 1, 5, 6, 2);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_loss_mean_squared_error(t, gb_module_call(model, x, false), GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    ck_assert_int_eq(n, 4);
    gb_tensor *grads[4] = {0};
    ck_assert_msg(gb_tape_gradient_vars(tape, loss, vars, n, grads), "%s", gb_error_string());
    /* The tape watched exactly the model's weights, in read order. */
    gb_variable *watched[8];
    ck_assert_int_eq(gb_tape_watched_variables(tape, watched, 8), 4);
    for (int i = 0; i < 4; i++) ck_assert_ptr_eq(watched[i], vars[i]);
    for (int v = 0; v < n; v++) {
        for (int64_t j = 0; j < gb_variable_size(vars[v]); j++) {
            double h[2];
            for (int s = 0; s < 2; s++) {
                gb_scope_begin();
                gb_tensor *w = gb_variable_value(vars[v]);
                gb_tensor *nudged = gb_tensor_from(GB_F64, gb_data(w), gb_rank(w), gb_shape(w));
                ((double *)gb_data(nudged))[j] += s ? -GC_EPS : GC_EPS;
                gb_tensor *orig = gb_copy(w);
                gb_variable_assign(vars[v], nudged);
                h[s] = mse_now(model, x, t);
                gb_variable_assign(vars[v], orig);
                gb_scope_end();
            }
            double numeric = (h[0] - h[1]) / (2 * GC_EPS), analytic = gb_get(grads[v], j);
            ck_assert_msg(fabs(analytic - numeric) <= GC_ATOL + GC_RTOL * fabs(numeric),
                          "%s[%lld]: analytic %.9g vs numeric %.9g", gb_variable_name(vars[v]),
                          (long long)j, analytic, numeric);
        }
    }
    gb_module_free(model);
}
END_TEST

/* ---- training loops ------------------------------------------------------------------------ */

typedef gb_tensor *(*loss_fn)(gb_tensor *y, gb_tensor *out);

/* One step of gradient descent; returns the loss before the update. */
static double sgd_step(gb_module *model, gb_tensor *x, gb_tensor *y, loss_fn loss_of, double lr,
                       bool training) {
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = loss_of(y, gb_module_call(model, x, training));
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    gb_tensor *grads[16] = {0};
    ck_assert_int_le(n, 16);
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    for (int i = 0; i < n; i++) gb_variable_assign_sub(vars[i], gb_mul_scalar(grads[i], lr));
    double value = gb_item(loss);
    gb_scope_end();
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
    return value;
}

static gb_tensor *mse(gb_tensor *y, gb_tensor *out) {
    return gb_loss_mean_squared_error(y, out, GB_REDUCTION_MEAN);
}
static gb_tensor *bce_logits(gb_tensor *y, gb_tensor *out) {
    return gb_loss_binary_crossentropy(y, out, true, GB_REDUCTION_MEAN);
}
static gb_tensor *sparse_ce_logits(gb_tensor *y, gb_tensor *out) {
    return gb_loss_sparse_categorical_crossentropy(y, out, true, GB_REDUCTION_MEAN);
}

START_TEST(test_linear_regression) {
    /* y = 3 x0 - 2 x1 + 0.5 */
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(64, 2), -1, 1, 21);
    float ys[64];
    for (int i = 0; i < 64; i++) ys[i] = 3 * (float)gb_get(x, 2 * i) - 2 * (float)gb_get(x, 2 * i + 1) + 0.5f;
    gb_tensor *y = gb_from_f32(ys, GB_SHAPE(64, 1));
    gb_module *lin = gb_dense_new(1, &(gb_dense_options){.seed = 4});
    double first = sgd_step(lin, x, y, mse, 0.3, true), last = first;
    for (int step = 0; step < 150; step++) last = sgd_step(lin, x, y, mse, 0.3, true);
    ck_assert_msg(last < 1e-6 && first > 1, "loss %g -> %g", first, last);
    gb_tensor *k = gb_variable_value(gb_module_variable(lin, "kernel"));
    gb_tensor *b = gb_variable_value(gb_module_variable(lin, "bias"));
    ASSERT_VALUES(k, 1e-3, 3, -2);
    ASSERT_VALUES(b, 1e-3, 0.5);
    gb_module_free(lin);
}
END_TEST

START_TEST(test_xor) {
    gb_tensor *x = gb_from_f32((const float[]){0, 0, 0, 1, 1, 0, 1, 1}, GB_SHAPE(4, 2));
    gb_tensor *y = gb_from_f32((const float[]){0, 1, 1, 0}, GB_SHAPE(4, 1));
    gb_module *model = gb_sequential_new("xor");
    gb_sequential_add(model, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 3}));
    gb_sequential_add(model, gb_dense_new(1, &(gb_dense_options){.seed = 4}));
    double first = sgd_step(model, x, y, bce_logits, 1.0, true), last = first;
    for (int step = 0; step < 400; step++) last = sgd_step(model, x, y, bce_logits, 1.0, true);
    ck_assert_msg(last < 0.05, "XOR loss %g -> %g", first, last);
    gb_tensor *logits = gb_module_call(model, x, false);
    for (int i = 0; i < 4; i++)
        ck_assert_msg((gb_get(logits, i) > 0) == (gb_get(y, i) > 0.5), "sample %d: logit %g", i,
                      gb_get(logits, i));
    gb_module_free(model);
}
END_TEST

START_TEST(test_tiny_cnn_learns) {
    /* 16 images 6x6: class 1 has a bright top half, class 0 a bright bottom. */
    enum { N = 16 };
    float img[N * 36];
    int32_t labels[N];
    gb_tensor *noise = gb_random_uniform(GB_F32, GB_SHAPE(N * 36), 0, 0.3, 8);
    for (int n = 0; n < N; n++) {
        labels[n] = n % 2;
        for (int i = 0; i < 36; i++) {
            bool top = i < 18;
            img[n * 36 + i] = (float)gb_get(noise, n * 36 + i) + ((top == (labels[n] == 1)) ? 0.7f : 0.0f);
        }
    }
    gb_tensor *x = gb_from_f32(img, GB_SHAPE(N, 6, 6, 1));
    gb_tensor *y = gb_tensor_from(GB_I32, labels, GB_SHAPE(N));
    gb_module *model = gb_sequential_new("cnn");
    gb_sequential_add(model, gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.activation = GB_ACT_RELU,
                                                                         .padding = GB_PADDING_SAME,
                                                                         .kernel_initializer = {.kind = GB_INIT_HE_NORMAL},
                                                                         .seed = 5}));
    gb_sequential_add(model, gb_max_pool2d_new(NULL));
    gb_sequential_add(model, gb_avg_pool2d_new(&(gb_pool2d_options){.pool_size = {1, 3}}));
    gb_sequential_add(model, gb_flatten_new(NULL));
    gb_sequential_add(model, gb_dropout_new(0.1, 6, NULL));
    gb_sequential_add(model, gb_dense_new(2, &(gb_dense_options){.seed = 7}));
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new(NULL);
    double first = sgd_step(model, x, y, sparse_ce_logits, 0.5, true), last = first;
    for (int step = 0; step < 60; step++) last = sgd_step(model, x, y, sparse_ce_logits, 0.5, true);
    ck_assert_msg(last < 0.25 * first, "CNN loss %g -> %g", first, last);
    ck_assert(gb_metric_update_state(acc, y, gb_module_call(model, x, false)));
    ck_assert_msg(gb_metric_result(acc) == 1.0, "accuracy %g", gb_metric_result(acc));
    int n = 0;
    gb_module_trainable_variables(model, &n);
    ck_assert_int_eq(n, 4);
    gb_metric_free(acc);
    gb_module_free(model);
}
END_TEST

/* Forward and backward through the layers, no update. */
static void forward_backward(gb_module *model, gb_tensor *x, gb_tensor *y) {
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = mse(y, gb_module_call(model, x, true));
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    gb_tensor *grads[4];
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    gb_scope_end();
}

START_TEST(test_steps_do_not_grow_memory) {
    gb_module *model = mlp_3_4_2();
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(8, 3), -1, 1, 1);
    gb_tensor *y = gb_random_uniform(GB_F32, GB_SHAPE(8, 2), -1, 1, 2);
    for (int i = 0; i < 5; i++) sgd_step(model, x, y, mse, 0.1, true); /* warm up */
    size_t before = gb_scope_bytes_in_use();
    for (int i = 0; i < 100; i++) sgd_step(model, x, y, mse, 0.1, true);
    ck_assert_uint_eq(gb_scope_bytes_in_use(), before);
    /* Layer calls and collecting variables allocate nothing on the heap
     * once warm (updates are left out: a variable written while a read of
     * it is alive gets a fresh buffer, by design of variables). */
    size_t heap_before = mallinfo2().uordblks;
    for (int i = 0; i < 100; i++) forward_backward(model, x, y);
    ck_assert_uint_eq(mallinfo2().uordblks, heap_before);
    gb_module_free(model);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_training");
    TCase *tc = tcase_create("training");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_gradcheck_wrt_input);
    tcase_add_test(tc, test_weight_gradients_match_finite_differences);
    tcase_add_test(tc, test_linear_regression);
    tcase_add_test(tc, test_xor);
    tcase_add_test(tc, test_tiny_cnn_learns);
    tcase_add_test(tc, test_steps_do_not_grow_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
