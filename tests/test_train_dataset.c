/* test_train_dataset.c — fit and evaluate on datasets: the same batches
 * as arrays give bit-identical weights, sample weights from the elements,
 * a generator of unknown length counted in the first epoch, an infinite
 * stream cut by steps_per_epoch, a validation dataset, and the errors. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

enum { N = 12, D = 3 };

static gb_module *model_new(void) {
    gb_nn_clear_session();
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 2}));
    return m;
}

static gb_optimizer *compile(gb_module *m) {
    gb_optimizer *opt = gb_sgd(0.2);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .metrics = (const char *[]){"accuracy"}, .nmetrics = 1}));
    return opt;
}

static gb_tensor *xs(void) { return gb_random_uniform(GB_F32, GB_SHAPE(N, D), -1, 1, 3); }
static gb_tensor *ys(void) {
    static const int32_t y[N] = {0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0};
    return gb_tensor_from(GB_I32, y, GB_SHAPE(N));
}

static gb_fit_options quiet(int epochs) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.verbose = 0;
    o.shuffle = false;
    o.batch_size = 5;
    return o;
}

static void assert_same_weights(gb_module *a, gb_module *b) {
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    gb_variable *const *vb = gb_module_variables(b, &nb);
    ck_assert_int_eq(na, nb);
    for (int i = 0; i < na; i++) {
        gb_tensor *x = gb_variable_value(va[i]), *y = gb_variable_value(vb[i]);
        for (int64_t j = 0; j < gb_size(x); j++)
            ck_assert_msg(gb_get(x, j) == gb_get(y, j), "%s[%lld]", gb_variable_name(va[i]), (long long)j);
    }
}

START_TEST(test_dataset_equals_arrays) {
    gb_module *a = model_new(), *b = model_new();
    gb_optimizer *oa = compile(a), *ob = compile(b);
    gb_fit_options o = quiet(3);
    gb_history *ha = gb_model_fit(a, xs(), ys(), &o);
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_tensor_slices(2, (gb_tensor *[]){xs(), ys()}), 5, false);
    gb_history *hb = gb_model_fit_dataset(b, ds, &o);
    ck_assert_msg(hb != NULL, "%s", gb_error_string());
    assert_same_weights(a, b);
    for (int e = 0; e < 3; e++)
        ck_assert(gb_history_value(ha, "loss", e) == gb_history_value(hb, "loss", e));
    gb_logs la, lb;
    ck_assert(gb_model_evaluate(a, xs(), ys(), NULL, 5, &la));
    ck_assert(gb_model_evaluate_dataset(b, ds, &lb));
    ck_assert(gb_logs_get(&la, "loss") == gb_logs_get(&lb, "loss"));
    ck_assert(gb_logs_get(&la, "accuracy") == gb_logs_get(&lb, "accuracy"));
    gb_dataset_free(ds);
    gb_history_free(ha), gb_history_free(hb);
    gb_module_free(a), gb_module_free(b);
    gb_optimizer_free(oa), gb_optimizer_free(ob);
}
END_TEST

/* Sample weights as the elements' third component: the same as arrays
 * with sample_weight, and class_weight applies on top. */
START_TEST(test_sample_and_class_weights_from_elements) {
    float w[N];
    for (int i = 0; i < N; i++) w[i] = (float)(i % 3);   /* zeros mask samples */
    gb_tensor *sw = gb_from_f32(w, GB_SHAPE(N));
    gb_module *a = model_new(), *b = model_new();
    gb_optimizer *oa = compile(a), *ob = compile(b);
    gb_fit_options o = quiet(2);
    o.sample_weight = sw;
    o.class_weight = (const double[]){0.5, 2.0};
    o.nclass_weight = 2;
    gb_history *ha = gb_model_fit(a, xs(), ys(), &o);
    o.sample_weight = NULL;
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_tensor_slices(3, (gb_tensor *[]){xs(), ys(), sw}), 5, false);
    gb_history *hb = gb_model_fit_dataset(b, ds, &o);
    ck_assert_msg(hb != NULL, "%s", gb_error_string());
    assert_same_weights(a, b);
    gb_dataset_free(ds);
    gb_history_free(ha), gb_history_free(hb);
    gb_module_free(a), gb_module_free(b);
    gb_optimizer_free(oa), gb_optimizer_free(ob);
}
END_TEST

/* A generator of 4 batches of 3 (its length unknown to the dataset). */
static bool four_batches(void *ctx, int64_t i, gb_tensor **out) {
    (void)ctx;
    if (i >= 4) return false;
    out[0] = gb_random_uniform(GB_F32, GB_SHAPE(3, D), -1, 1, (uint64_t)(10 + i));
    out[1] = gb_tensor_from(GB_I32, (int32_t[]){0, 1, (int32_t)(i % 2)}, GB_SHAPE(3));
    return true;
}

static int64_t batches_seen;
static void count_batch(gb_train_state *s, int64_t b, gb_logs *l, void *u) {
    (void)s, (void)b, (void)l, (void)u;
    batches_seen++;
}

START_TEST(test_unknown_length_is_counted) {
    gb_module *m = model_new();
    gb_optimizer *opt = compile(m);
    gb_dataset *ds = gb_dataset_from_generator(four_batches, NULL, 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), GB_DATA_UNKNOWN);
    gb_callback *counter = gb_lambda(&(gb_lambda_callback){.on_batch_end = count_batch});
    gb_fit_options o = quiet(3);
    o.callbacks = &counter;
    o.ncallbacks = 1;
    batches_seen = 0;
    gb_history *h = gb_model_fit_dataset(m, ds, &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_history_epochs(h), 3);
    ck_assert_int_eq(batches_seen, 12);
    gb_history_free(h);
    gb_callback_free(counter);
    /* An infinite stream needs steps_per_epoch; then an epoch is that many. */
    gb_dataset *forever = gb_dataset_repeat(ds, -1);
    ck_assert_ptr_null(gb_model_fit_dataset(m, forever, &o));
    assert_error(GB_ERR_VALUE, "the dataset is infinite; give steps_per_epoch");
    o.steps_per_epoch = 6;
    batches_seen = 0;
    counter = gb_lambda(&(gb_lambda_callback){.on_batch_end = count_batch});
    o.callbacks = &counter;
    h = gb_model_fit_dataset(m, forever, &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert_int_eq(batches_seen, 18);
    gb_history_free(h);
    gb_callback_free(counter);
    gb_dataset_free(forever);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_validation_dataset_and_errors) {
    gb_module *m = model_new();
    gb_optimizer *opt = compile(m);
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_tensor_slices(2, (gb_tensor *[]){xs(), ys()}), 4, false);
    gb_fit_options o = quiet(1);
    o.val_dataset = ds;
    gb_history *h = gb_model_fit_dataset(m, ds, &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    gb_logs l;
    ck_assert(gb_model_evaluate_dataset(m, ds, &l));
    ck_assert(gb_history_value(h, "val_loss", 0) == gb_logs_get(&l, "loss"));
    gb_history_free(h);
    gb_dataset *one = gb_dataset_batch(gb_dataset_from_tensor_slices(1, (gb_tensor *[]){xs()}), 4, false);
    ck_assert_ptr_null(gb_model_fit_dataset(m, one, &o));
    assert_error(GB_ERR_VALUE, "the dataset gives elements of 1 components; the model needs 1 "
                               "input and 1 target (then, optionally, the sample weights)");
    o.validation_split = 0.2;
    ck_assert_ptr_null(gb_model_fit_dataset(m, ds, &o));
    assert_error(GB_ERR_VALUE, "validation_split needs arrays; give val_dataset");
    gb_dataset_free(one);
    gb_dataset_free(ds);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_dataset");
    TCase *tc = tcase_create("dataset");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_dataset_equals_arrays);
    tcase_add_test(tc, test_sample_and_class_weights_from_elements);
    tcase_add_test(tc, test_unknown_length_is_counted);
    tcase_add_test(tc, test_validation_dataset_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
