/* test_nn_metrics_classification.c — Precision, Recall, AUC and custom
 * metrics, with values computed by hand (the confusion counts are in the
 * comments): thresholds, sample weights per sample and per element, the
 * AUC curves and summation methods, a user-written metric (the Keras
 * guide's CategoricalTruePositives), the errors, and the same metrics
 * compiled into a model by name and as objects.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

static gb_tensor *f32(const float *v, int64_t n) { return gb_from_f32(v, GB_SHAPE(n)); }

/* A constructor refused its arguments with this error. */
static void expect_refused(const void *made, gb_status code, const char *part) {
    ck_assert_ptr_null(made);
    assert_error(code, part);
}

/* ---- Precision and Recall -------------------------------------------------------------------- */

START_TEST(test_precision_recall_binary) {
    /* Keras' docs: y_true 0 1 1 1, y_pred 1 0 1 1: tp 2, fp 1, fn 1. */
    gb_metric *p = gb_metric_precision_new(NULL, 0.5), *r = gb_metric_recall_new(NULL, 0.5);
    ck_assert_str_eq(gb_metric_name(p), "precision");
    ck_assert_str_eq(gb_metric_name(r), "recall");
    ck_assert_double_eq(gb_metric_result(p), 0.0); /* nothing predicted positive yet */
    gb_tensor *t = f32((const float[]){0, 1, 1, 1}, 4), *y = f32((const float[]){1, 0, 1, 1}, 4);
    ck_assert(gb_metric_update_state(p, t, y));
    ck_assert(gb_metric_update_state(r, t, y));
    ck_assert_double_eq_tol(gb_metric_result(p), 2.0 / 3, 1e-15);
    ck_assert_double_eq_tol(gb_metric_result(r), 2.0 / 3, 1e-15);
    /* Weights 0 0 1 0 keep only the true positive at index 2. */
    gb_metric_reset_state(p);
    gb_metric_reset_state(r);
    gb_tensor *w = f32((const float[]){0, 0, 1, 0}, 4);
    ck_assert(gb_metric_update_state_weighted(p, t, y, w));
    ck_assert(gb_metric_update_state_weighted(r, t, y, w));
    ck_assert_double_eq(gb_metric_result(p), 1.0);
    ck_assert_double_eq(gb_metric_result(r), 1.0);
    gb_metric_free(p);
    gb_metric_free(r);
}
END_TEST

START_TEST(test_precision_recall_probabilities) {
    /* > 0.5: 0.6 (label 0: fp), 0.9 (tp); 0.5 is not above it (fn), nor
     * 0.4 (fn): precision 1/2, recall 1/3. */
    gb_tensor *t = gb_tensor_from(GB_I32, (const int32_t[]){0, 1, 1, 0, 1}, GB_SHAPE(5, 1));
    gb_tensor *y = gb_from_f32((const float[]){0.6f, 0.4f, 0.9f, 0.2f, 0.5f}, GB_SHAPE(5, 1));
    gb_metric *p = gb_metric_precision_new("p", 0.5), *r = gb_metric_recall_new("r", 0.5);
    ck_assert(gb_metric_update_state(p, t, y) && gb_metric_update_state(r, t, y));
    ck_assert_double_eq(gb_metric_result(p), 0.5);
    ck_assert_double_eq_tol(gb_metric_result(r), 1.0 / 3, 1e-15);
    /* Threshold 0.3: 0.6 fp; 0.4, 0.9, 0.5 tp; 0.2 tn: precision 3/4, recall 1. */
    gb_metric *p3 = gb_metric_precision_new(NULL, 0.3), *r3 = gb_metric_recall_new(NULL, 0.3);
    ck_assert(gb_metric_update_state(p3, t, y) && gb_metric_update_state(r3, t, y));
    ck_assert_double_eq(gb_metric_result(p3), 0.75);
    ck_assert_double_eq(gb_metric_result(r3), 1.0);
    /* Updates accumulate; a scalar weight scales everything alike. */
    ck_assert(gb_metric_update_state_weighted(p, t, y, gb_scalar(GB_F32, 3)));
    ck_assert_double_eq(gb_metric_result(p), 0.5);
    gb_metric_free(p);
    gb_metric_free(r);
    gb_metric_free(p3);
    gb_metric_free(r3);
}
END_TEST

START_TEST(test_weights_per_sample_of_rows) {
    /* [2, 2] predictions, one weight per sample spread over its row:
     * row 0 (w 2): labels 1 0, preds 0.9 0.8 -> tp 2, fp 2;
     * row 1 (w 1): labels 1 1, preds 0.1 0.7 -> fn 1, tp 1.
     * precision 3 / 5, recall 3 / 4. */
    gb_tensor *t = gb_from_f32((const float[]){1, 0, 1, 1}, GB_SHAPE(2, 2));
    gb_tensor *y = gb_from_f32((const float[]){0.9f, 0.8f, 0.1f, 0.7f}, GB_SHAPE(2, 2));
    gb_tensor *w = f32((const float[]){2, 1}, 2);
    gb_metric *p = gb_metric_precision_new(NULL, 0.5), *r = gb_metric_recall_new(NULL, 0.5);
    ck_assert(gb_metric_update_state_weighted(p, t, y, w));
    ck_assert(gb_metric_update_state_weighted(r, t, y, w));
    ck_assert_double_eq_tol(gb_metric_result(p), 0.6, 1e-15);
    ck_assert_double_eq(gb_metric_result(r), 0.75);
    /* One weight per element: only the fp at [0,1] weighs: precision 0. */
    gb_metric_reset_state(p);
    ck_assert(gb_metric_update_state_weighted(p, t, y, gb_from_f32((const float[]){0, 1, 0, 0},
                                                                      GB_SHAPE(2, 2))));
    ck_assert_double_eq(gb_metric_result(p), 0.0);
    gb_metric_free(p);
    gb_metric_free(r);
}
END_TEST

/* ---- AUC -------------------------------------------------------------------------------- */

/* Keras' docs: thresholds -1e-7, 0.5, 1 + 1e-7 over y_true 0 0 1 1 and
 * y_pred 0 0.5 0.3 0.9: tp 2 1 0, fp 2 0 0, fn 0 1 2, tn 0 2 2. */
static gb_tensor *docs_true(void) { return f32((const float[]){0, 0, 1, 1}, 4); }
static gb_tensor *docs_pred(void) { return f32((const float[]){0, 0.5f, 0.3f, 0.9f}, 4); }

static double auc_of(const gb_auc_options *o, gb_tensor *w) {
    gb_metric *m = gb_metric_auc_new(NULL, o);
    ck_assert_ptr_nonnull(m);
    ck_assert(gb_metric_update_state_weighted(m, docs_true(), docs_pred(), w));
    double v = gb_metric_result(m);
    gb_metric_free(m);
    return v;
}

START_TEST(test_auc_roc) {
    gb_metric *m = gb_metric_auc_new(NULL, NULL);
    ck_assert_str_eq(gb_metric_name(m), "auc");
    ck_assert_double_eq(gb_metric_result(m), 0.0);
    gb_metric_free(m);
    /* recall 1 0.5 0, fp rate 1 0 0: trapezoids (1 - 0) * 0.75 + 0 * 0.25. */
    ck_assert_double_eq(auc_of(&(gb_auc_options){.num_thresholds = 3}, NULL), 0.75);
    /* Weights 1 0 0 1: only 0 (negative) and 0.9 (positive): separable. */
    ck_assert_double_eq(auc_of(&(gb_auc_options){.num_thresholds = 3},
                               f32((const float[]){1, 0, 0, 1}, 4)),
                        1.0);
    /* Minoring takes the lower end of each step, majoring the higher. */
    ck_assert_double_eq(
        auc_of(&(gb_auc_options){.num_thresholds = 3, .summation = GB_AUC_MINORING}, NULL), 0.5);
    ck_assert_double_eq(
        auc_of(&(gb_auc_options){.num_thresholds = 3, .summation = GB_AUC_MAJORING}, NULL), 1.0);
    /* The default 200 thresholds separate 0.1, 0.35, 0.4 and 0.8, so the
     * area is the exact ROC AUC: 3 of the 4 (positive, negative) pairs
     * are ordered right. */
    gb_metric *d = gb_metric_auc_new("roc", NULL);
    ck_assert(gb_metric_update_state(d, f32((const float[]){0, 0, 1, 1}, 4),
                                     f32((const float[]){0.1f, 0.4f, 0.35f, 0.8f}, 4)));
    ck_assert_double_eq(gb_metric_result(d), 0.75);
    gb_metric_reset_state(d);
    ck_assert_double_eq(gb_metric_result(d), 0.0);
    gb_metric_free(d);
}
END_TEST

START_TEST(test_auc_pr_and_logits) {
    /* Davis-Goadrich between thresholds 0 and 1: dtp 1, p 4 -> 1, slope
     * 1/3, intercept 2/3, ratio 4, over tp + fn = 2; between 1 and 2: dtp
     * 1, p 1 -> 0, slope 1, intercept 0, over 2. */
    double expect = (1.0 / 3) * (1 + (2.0 / 3) * log(4.0)) / 2 + 0.5;
    ck_assert_double_eq_tol(auc_of(&(gb_auc_options){.num_thresholds = 3, .curve = GB_AUC_PR}, NULL),
                            expect, 1e-12);
    /* PR majoring: recall 1 0.5 0, precision 0.5 1 0 (0 / 0 is 0): the
     * higher end of each step, (1 - 0.5) * 1 + (0.5 - 0) * 1. */
    ck_assert_double_eq(auc_of(&(gb_auc_options){.num_thresholds = 3, .curve = GB_AUC_PR,
                                                  .summation = GB_AUC_MAJORING},
                               NULL),
                        0.5 * 1 + 0.5 * 1);
    /* Logits through a sigmoid: logit 0 is 0.5, -inf-ish 0, +2.2 0.9. */
    gb_metric *m = gb_metric_auc_new(NULL, &(gb_auc_options){.num_thresholds = 3,
                                                              .from_logits = true});
    ck_assert(gb_metric_update_state(m, docs_true(),
                                     f32((const float[]){-30, 0, -0.8473f, 2.1972f}, 4)));
    ck_assert_double_eq(gb_metric_result(m), 0.75);
    gb_metric_free(m);
}
END_TEST

/* ---- custom metrics --------------------------------------------------------------------- */

/* The Keras guide's CategoricalTruePositives: how many samples the
 * argmax classifies right, weighted. */
typedef struct ctp_state {
    double true_positives;
} ctp_state;

static bool ctp_update(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
                       gb_tensor *w) {
    int64_t rows = gb_dim(y_pred, 0), classes = gb_dim(y_pred, 1);
    if (gb_rank(y_pred) != 2 || gb_size(y_true) != rows) {
        gb_metric_error(m, GB_ERR_SHAPE, "need [batch] labels and [batch, classes] predictions");
        return false;
    }
    ctp_state *s = state;
    for (int64_t r = 0; r < rows; r++) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (gb_get(y_pred, r * classes + c) > gb_get(y_pred, r * classes + best)) best = c;
        if ((double)best == gb_get(y_true, r)) s->true_positives += w ? gb_get(w, r) : 1.0;
    }
    return true;
}

static double ctp_result(const gb_metric *m, const void *state) {
    (void)m;
    return ((const ctp_state *)state)->true_positives;
}

static const gb_metric_type CTP = {
    .class_name = "CategoricalTruePositives",
    .default_name = "categorical_true_positives",
    .state_size = sizeof(ctp_state),
    .update_state = ctp_update,
    .result = ctp_result,
};

/* Counts its calls through the user pointer; fails when told to. */
static bool flaky_update(gb_metric *m, void *state, gb_tensor *a, gb_tensor *b, gb_tensor *w) {
    (void)a, (void)b, (void)w;
    int *calls = gb_metric_user(m);
    *(double *)state += 1;
    return ++*calls != 2;   /* the second call fails, without an error of its own */
}

static double first_double(const gb_metric *m, const void *state) {
    (void)m;
    return *(const double *)state;
}

static void set_seven(gb_metric *m, void *state) {
    (void)m;
    *(double *)state = 7;
}

START_TEST(test_custom_metric) {
    gb_metric *m = gb_metric_new(&CTP, NULL, NULL);
    ck_assert_str_eq(gb_metric_name(m), "categorical_true_positives");
    ck_assert_ptr_eq(gb_metric_get_type(m), &CTP);
    gb_tensor *pred = gb_from_f32((const float[]){0.1f, 0.9f, 0.8f, 0.2f, 0.3f, 0.7f}, GB_SHAPE(3, 2));
    gb_tensor *labels = gb_tensor_from(GB_I32, (const int32_t[]){1, 0, 0}, GB_SHAPE(3));
    ck_assert(gb_metric_update_state(m, labels, pred));
    ck_assert_double_eq(gb_metric_result(m), 2.0);
    ck_assert(gb_metric_update_state_weighted(m, labels, pred, f32((const float[]){0.5f, 2, 9}, 3)));
    ck_assert_double_eq(gb_metric_result(m), 4.5);
    /* Its error names it; the state stays as it was. */
    ck_assert(!gb_metric_update_state(m, labels, gb_reshape(pred, GB_SHAPE(6))));
    assert_error(GB_ERR_SHAPE, "CategoricalTruePositives metric 'categorical_true_positives': "
                               "need [batch] labels");
    ck_assert_double_eq(gb_metric_result(m), 4.5);
    gb_metric_reset_state(m);
    ck_assert_double_eq(gb_metric_result(m), 0.0);
    gb_metric_free(m);

    /* A failed update is dropped even though it changed its state. */
    int calls = 0;
    const gb_metric_type flaky = {.default_name = "flaky", .state_size = sizeof(double),
                                  .update_state = flaky_update, .result = first_double,
                                  .reset_state = set_seven};
    gb_metric *f = gb_metric_new(&flaky, "mine", &calls);
    gb_tensor *one = gb_scalar(GB_F32, 1);
    ck_assert(gb_metric_update_state(f, one, one));
    ck_assert(!gb_metric_update_state(f, one, one));
    assert_error(GB_ERR_VALUE, "flaky metric 'mine': update_state failed without saying why");
    ck_assert_double_eq(gb_metric_result(f), 1.0);
    ck_assert(gb_metric_update_state(f, one, one));
    ck_assert_double_eq(gb_metric_result(f), 2.0);
    gb_metric_reset_state(f);   /* the type's own reset */
    ck_assert_double_eq(gb_metric_result(f), 7.0);
    gb_metric_free(f);
}
END_TEST

START_TEST(test_errors) {
    expect_refused(gb_metric_precision_new(NULL, 1.5), GB_ERR_VALUE,
                 "Precision: the threshold must be in [0, 1], got 1.5");
    expect_refused(gb_metric_recall_new(NULL, NAN), GB_ERR_VALUE,
                 "Recall: the threshold must be in [0, 1]");
    expect_refused(gb_metric_auc_new(NULL, &(gb_auc_options){.num_thresholds = 1}),
                 GB_ERR_VALUE, "num_thresholds must be 2 to 100000 (got num_thresholds 1)");
    expect_refused(gb_metric_new(NULL, NULL, NULL), GB_ERR_VALUE,
                 "gb_metric_new: the type is NULL");
    expect_refused(gb_metric_new(&(gb_metric_type){.state_size = 8}, NULL, NULL),
                 GB_ERR_VALUE, "the type needs update_state and result functions");

    gb_metric *p = gb_metric_precision_new(NULL, 0.5);
    gb_tensor *y = f32((const float[]){0.9f, 0.1f}, 2);
    ck_assert(gb_metric_update_state(p, f32((const float[]){1, 0}, 2), y));
    ck_assert(!gb_metric_update_state(p, f32((const float[]){1, 0, 1}, 3), y));
    assert_error(GB_ERR_SHAPE, "Precision metric 'precision': y_true shape [3] does not match "
                               "predictions shape [2]");
    ck_assert(!gb_metric_update_state_weighted(p, f32((const float[]){0, 0}, 2), y,
                                               f32((const float[]){1, 1, 1}, 3)));
    assert_error(GB_ERR_SHAPE, "sample_weight shape [3] fits neither one weight per sample nor "
                               "one per element of predictions shape [2]");
    ck_assert(!gb_metric_update_state(p, NULL, y));
    assert_error(GB_ERR_VALUE, "update_state: the first input is NULL");
    ck_assert_double_eq(gb_metric_result(p), 1.0);   /* untouched by the failures */
    gb_metric_free(p);
}
END_TEST

/* ---- in compile ------------------------------------------------------------------------------ */

START_TEST(test_compiled_by_name_and_object) {
    enum { N = 8 };
    const float xv[N] = {-2, -1, -0.5f, 0, 0.25f, 0.5f, 1, 2};
    const float yv[N] = {0, 0, 1, 0, 1, 0, 1, 1};
    gb_tensor *x = gb_from_f32(xv, GB_SHAPE(N, 1)), *y = gb_from_f32(yv, GB_SHAPE(N, 1));
    gb_module *model = gb_sequential_new("clf");
    gb_sequential_add(model, gb_dense_new(1, &(gb_dense_options){.activation = GB_ACT_SIGMOID,
                                                                .seed = 5}));
    gb_optimizer *opt = gb_sgd(0.1);
    gb_metric *pr_auc = gb_metric_auc_new("pr_auc", &(gb_auc_options){.curve = GB_AUC_PR});
    ck_assert(gb_model_compile(model, &(gb_compile_options){
                                          .optimizer = opt,
                                          .loss = {GB_LOSS_BINARY_CROSSENTROPY},
                                          .metrics = (const char *[]){"precision", "recall", "auc"},
                                          .nmetrics = 3,
                                          .metric_objects = (gb_metric *[]){pr_auc},
                                          .nmetric_objects = 1}));
    gb_logs logs = {0};
    ck_assert(gb_model_evaluate(model, x, y, NULL, 3, &logs));
    /* The same metrics fed the model's predictions by hand agree exactly. */
    gb_tensor *pred = gb_model_predict(model, x, N);
    gb_metric *m[4] = {gb_metric_precision_new(NULL, 0.5), gb_metric_recall_new(NULL, 0.5),
                       gb_metric_auc_new(NULL, NULL),
                       gb_metric_auc_new(NULL, &(gb_auc_options){.curve = GB_AUC_PR})};
    const char *keys[4] = {"precision", "recall", "auc", "pr_auc"};
    for (int i = 0; i < 4; i++) {
        ck_assert(gb_metric_update_state(m[i], y, pred));
        ck_assert_msg(gb_logs_has(&logs, keys[i]), "no %s in the logs", keys[i]);
        ck_assert_double_eq_tol(gb_logs_get(&logs, keys[i]), gb_metric_result(m[i]), 1e-12);
        gb_metric_free(m[i]);
    }
    /* Names sorted as Keras logs them: auc, loss, pr_auc, precision, recall. */
    ck_assert_str_eq(logs.key[0], "auc");
    ck_assert_str_eq(logs.key[2], "pr_auc");
    /* fit resets the borrowed object each epoch and logs it under its name. */
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 2;
    o.verbose = 0;
    o.batch_size = 4;
    gb_history *h = gb_model_fit(model, x, y, &o);
    ck_assert_ptr_nonnull(h);
    double v = gb_history_value(h, "pr_auc", 1);
    ck_assert(v >= 0 && v <= 1);
    gb_history_free(h);
    gb_module_free(model);   /* the object is still the caller's */
    ck_assert_str_eq(gb_metric_name(pr_auc), "pr_auc");
    gb_metric_free(pr_auc);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_compile_errors) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_dense_new(1, NULL));
    gb_optimizer *opt = gb_sgd(0.1);
    ck_assert(!gb_model_compile(model, &(gb_compile_options){
                                           .optimizer = opt, .loss = {GB_LOSS_BINARY_CROSSENTROPY},
                                           .metric_objects = (gb_metric *[]){NULL},
                                           .nmetric_objects = 1}));
    assert_error(GB_ERR_VALUE, "gb_model_compile: metric object 0 is NULL");
    gb_metric *many[16] = {0};
    ck_assert(!gb_model_compile(model, &(gb_compile_options){
                                           .optimizer = opt, .loss = {GB_LOSS_BINARY_CROSSENTROPY},
                                           .metrics = (const char *[]){"auc"}, .nmetrics = 1,
                                           .metric_objects = many, .nmetric_objects = 16}));
    assert_error(GB_ERR_VALUE, "at most 16 metrics, names and objects together");
    gb_module_free(model);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_metrics_classification");
    TCase *tc = tcase_create("metrics");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_precision_recall_binary);
    tcase_add_test(tc, test_precision_recall_probabilities);
    tcase_add_test(tc, test_weights_per_sample_of_rows);
    tcase_add_test(tc, test_auc_roc);
    tcase_add_test(tc, test_auc_pr_and_logits);
    tcase_add_test(tc, test_custom_metric);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_compiled_by_name_and_object);
    tcase_add_test(tc, test_compile_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
