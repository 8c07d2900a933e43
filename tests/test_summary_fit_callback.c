/* test_summary_fit_callback.c — the summary callback of fit writes what a
 * person watches: per-batch scalars at the optimizer's step (every
 * update_freq batches) with the learning rate, per-epoch scalars with the
 * validation ones, weight and gradient histograms every histogram_freq
 * epochs, and the traced train step's graph under "train_function";
 * the profiler capture of the first profile_batches batches with their
 * step marks;
 * the run's hparams from the compile and fit arguments and the model's
 * config without a line of the user's, and by option each class's
 * precision-recall counts on validation data, checked against the
 * model's own predictions counted by hand; and every embeddings_freq
 * epochs a layer's activations on a fixed sample (the projector), equal to
 * the layers called by hand, or an Embedding's weights.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gb_reader.h"
#include "gb_summary_callback.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"

static int64_t count_of(const gb_tags *t, const char *tag) {
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->rows[i].tag, tag)) return t->rows[i].count;
    return -1;
}

START_TEST(test_callback_writes_scalars_histograms_and_the_graph) {
    char dir[64], db[128];
    SUMMARY_TEMP_STORE(dir, db, "fit_callback");
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "fit", NULL, &w), GB_OK);
    gb_summary_set_default(w);
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(3, NULL));
    gb_optimizer *opt = gb_adam(1e-2);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                      .metrics = (const char *[]){"accuracy"}, .nmetrics = 1}));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(120, 5), -1, 1, 1);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(120), 0, 3, 2), GB_I32);
    gb_callback *cb = gb_summary_callback(NULL, &(gb_summary_callback_options){
                                                    .update_freq = 2, .histogram_freq = 2,
                                                    .profile_batches = 3});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.batch_size = 20; /* 100 training samples: 5 batches an epoch */
    o.validation_split = 1.0 / 6;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_msg(h, "%s", gb_error_string());
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, "fit", GB_KIND_ANY, &t), GB_STORE_OK);
    ck_assert_int_eq(count_of(t, "batch/loss"), 7);      /* batches 2, 4, ... 14 of 15 */
    ck_assert_int_eq(count_of(t, "batch/accuracy"), 7);
    ck_assert_int_eq(count_of(t, "learning_rate"), 7);
    ck_assert_int_eq(count_of(t, "epoch/loss"), 3);
    ck_assert_int_eq(count_of(t, "epoch/val_loss"), 3);
    ck_assert_int_eq(count_of(t, "epoch/val_accuracy"), 3);
    /* histograms at epochs 0 and 2, for each of the four weights */
    ck_assert_int_eq(count_of(t, "weights/model/dense/kernel"), 2);
    ck_assert_int_eq(count_of(t, "gradients/model/dense/kernel"), 2);
    ck_assert_int_eq(count_of(t, "gradients/model/dense_1/bias"), 2);
    ck_assert_int_eq(count_of(t, "train_function"), 1);
    gb_store_free(t);
    /* The per-batch points sit at the optimizer's step: 2, 4, ... */
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "fit", "batch/loss", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->rows[0].step, 2);
    ck_assert_int_eq(ser->rows[6].step, 14);
    ck_assert_double_eq(ser->rows[6].value, ser->rows[6].value); /* finite, not NaN */
    gb_store_free(ser);
    ck_assert_int_eq(gb_store_scalars(s, "fit", "epoch/val_loss", NULL, &ser), GB_STORE_OK);
    ck_assert_double_eq_tol(ser->rows[2].value, gb_history_value(h, "val_loss", 2), 1e-6);
    gb_store_free(ser);
    /* The profiler's capture of the first 3 batches has their step marks
     * (the batches are the global steps 1, 2, 3): the Profile page's steps. */
    gb_profile_list *caps;
    ck_assert_int_eq(gb_store_profiles(s, "fit", &caps), GB_STORE_OK);
    ck_assert_int_eq(caps->count, 1);
    gb_profile_events *ev;
    ck_assert_int_eq(gb_store_profile_events(s, "fit", caps->rows[0].id, 0, 0, &ev), GB_STORE_OK);
    gb_profile_steps *steps;
    ck_assert_int_eq(gb_profile_steps_of(ev, &steps), GB_STORE_OK);
    ck_assert_int_eq(steps->count, 3);
    for (size_t i = 0; i < steps->count; i++) ck_assert_int_eq(steps->rows[i].step, (int64_t)i + 1);
    gb_store_free(steps);
    gb_store_free(ev);
    gb_store_free(caps);
    gb_store_close(s);
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(m);
    gb_optimizer_free(opt);
    summary_remove_dir(dir);
}
END_TEST

static const gb_hparam *hparam(const gb_run_row *r, const char *key) {
    for (size_t i = 0; i < r->hparam_count; i++)
        if (!strcmp(r->hparams[i].key, key)) return &r->hparams[i];
    ck_abort_msg("no hparam '%s'", key);
    return NULL;
}

START_TEST(test_callback_records_hparams_and_pr_curves) {
    char dir[64], db[128];
    SUMMARY_TEMP_STORE(dir, db, "fit_callback_hp");
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "fit", NULL, &w), GB_OK);
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dropout_new(0.25, 3, NULL));
    gb_sequential_add(m, gb_dense_new(3, NULL));
    gb_optimizer *opt = gb_sgd_momentum(0.05, 0.9, false);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}}));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(100, 5), -1, 1, 1);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(100), 0, 3, 2), GB_I32);
    gb_tensor *vx = gb_random_uniform(GB_F32, GB_SHAPE(30, 5), -1, 1, 3);
    gb_tensor *vy = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(30), 0, 3, 4), GB_I32);
    const char *const names[] = {"a", "b", "c"};
    gb_callback *cb = gb_summary_callback(w, &(gb_summary_callback_options){
                                                 .update_freq = -1, .no_graph = true, .pr_x = vx,
                                                 .pr_y = vy, .pr_from_logits = true,
                                                 .pr_num_thresholds = 11, .pr_class_names = names});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 2;
    o.batch_size = 20;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_msg(h, "%s", gb_error_string());
    /* The last epoch's curves are of the model as it is now. */
    gb_tensor *probs = gb_softmax(gb_model_predict(m, vx, 256), -1);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    const gb_run_row *r = &runs->rows[0];
    ck_assert_str_eq(hparam(r, "optimizer")->value, "SGD");
    ck_assert(hparam(r, "optimizer.learning_rate")->number == 0.05);
    ck_assert(hparam(r, "optimizer.momentum")->number == 0.9);
    ck_assert_str_eq(hparam(r, "loss")->value, "sparse_categorical_crossentropy");
    ck_assert(hparam(r, "batch_size")->number == 20 && hparam(r, "epochs")->number == 2);
    ck_assert(hparam(r, "dense0.units")->number == 8 && hparam(r, "dense1.units")->number == 3);
    ck_assert(hparam(r, "dropout0.rate")->number == 0.25);
    gb_store_free(runs);
    for (int c = 0; c < 3; c++) {
        char tag[16];
        snprintf(tag, sizeof tag, "pr/%s", names[c]);
        gb_pr_curves *pr;
        ck_assert_int_eq(gb_store_pr_curves(s, "fit", tag, NULL, &pr), GB_STORE_OK);
        ck_assert_uint_eq(pr->count, 2);   /* epochs 0 and 1 */
        ck_assert(pr->rows[0].step == 0 && pr->rows[1].step == 1 && pr->rows[1].num_thresholds == 11);
        for (int i = 0; i < 11; i++) {
            double tp = 0, fp = 0, fn = 0, tn = 0;
            for (int64_t k = 0; k < 30; k++) {
                bool positive = (int)gb_get(vy, k) == c;
                bool predicted = floor(gb_get(probs, k * 3 + c) * 10) >= i;
                tp += positive && predicted, fp += !positive && predicted;
                fn += positive && !predicted, tn += !positive && !predicted;
            }
            const gb_pr_curve_row *row = &pr->rows[1];
            ck_assert_msg(row->tp[i] == tp && row->fp[i] == fp && row->fn[i] == fn && row->tn[i] == tn,
                          "%s threshold %d: %g %g %g %g, by hand %g %g %g %g", tag, i, row->tp[i],
                          row->fp[i], row->fn[i], row->tn[i], tp, fp, fn, tn);
        }
        gb_store_free(pr);
    }
    gb_store_close(s);
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(m);
    gb_optimizer_free(opt);
    summary_remove_dir(dir);
}
END_TEST

START_TEST(test_callback_records_embeddings) {
    char dir[64], db[128];
    SUMMARY_TEMP_STORE(dir, db, "fit_callback_emb");
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "fit", NULL, &w), GB_OK);
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(6, &(gb_dense_options){.activation = GB_ACT_RELU, .name = "hidden"}));
    gb_sequential_add(m, gb_dense_new(3, NULL));
    gb_optimizer *opt = gb_adam(1e-2);
    ck_assert(gb_model_compile(m, &(gb_compile_options){
                                      .optimizer = opt,
                                      .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}}));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(60, 5), -1, 1, 1);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(60), 0, 3, 2), GB_I32);
    gb_tensor *sample = gb_random_uniform(GB_F32, GB_SHAPE(300, 5), -1, 1, 3);   /* two batches of 256 */
    const char *cells[300];
    for (int i = 0; i < 300; i++) cells[i] = i % 2 ? "odd" : "even";
    gb_tensor *meta = gb_strings(cells, 1, (int64_t[]){300});
    /* the model's first layer must exist before its kernel is named */
    ck_assert_ptr_nonnull(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(1, 5)), false));
    int nvars = 0;
    gb_variable *kernel = gb_module_trainable_variables(m, &nvars)[0];   /* [5, 6] */
    gb_callback *cbs[2] = {
        gb_summary_callback(w, &(gb_summary_callback_options){
                                   .update_freq = -1, .no_graph = true, .no_hparams = true,
                                   .embeddings_freq = 2, .embeddings_x = sample,
                                   .embeddings_layer = -2, .embeddings_metadata = meta}),
        gb_summary_callback(w, &(gb_summary_callback_options){
                                   .update_freq = -1, .no_graph = true, .no_hparams = true,
                                   .embeddings_freq = 3, .embeddings_variable = kernel})};
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.batch_size = 20;
    o.verbose = 0;
    o.callbacks = cbs;
    o.ncallbacks = 2;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_msg(h, "%s", gb_error_string());
    gb_tensor *hidden = gb_module_call(gb_sequential_layer(m, 0), sample, false);
    char kernel_tag[256];
    snprintf(kernel_tag, sizeof kernel_tag, "embeddings/%s", gb_variable_name(kernel));
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s;
    ck_assert_int_eq(gb_store_open(db, &s), GB_STORE_OK);
    gb_embeddings *e;
    ck_assert_int_eq(gb_store_embeddings(s, "fit", "embeddings/hidden", NULL, &e), GB_STORE_OK);
    ck_assert_uint_eq(e->count, 2);   /* epochs 0 and 2 */
    ck_assert(e->rows[0].step == 0 && e->rows[1].step == 2 && e->rows[1].n == 300 && e->rows[1].dim == 6);
    gb_store_free(e);
    gb_blob *b;
    ck_assert_int_eq(gb_store_embedding_part(s, "fit", "embeddings/hidden", 2, GB_EMBEDDING_VECTORS, &b),
                     GB_STORE_OK);
    ck_assert_uint_eq(b->size, 300 * 6 * 4);
    for (int64_t i = 0; i < 300 * 6; i++) {
        float v;
        memcpy(&v, b->data + 4 * i, 4);
        ck_assert_msg(v == (float)gb_get(hidden, i), "activation %lld: %g, by hand %g", (long long)i, v,
                      gb_get(hidden, i));
    }
    gb_store_free(b);
    ck_assert_int_eq(gb_store_embedding_part(s, "fit", "embeddings/hidden", 2, GB_EMBEDDING_METADATA, &b),
                     GB_STORE_OK);
    ck_assert(b->size > 16 && !memcmp(b->data, "label\neven\nodd\n", 15));
    gb_store_free(b);
    /* the kernel, every 3 epochs: epoch 0 only, [5, 6] */
    ck_assert_int_eq(gb_store_embeddings(s, "fit", kernel_tag, NULL, &e), GB_STORE_OK);
    ck_assert(e->count == 1 && e->rows[0].step == 0 && e->rows[0].n == 5 && e->rows[0].dim == 6);
    gb_store_free(e);
    gb_store_close(s);
    gb_history_free(h);
    gb_callback_free(cbs[0]);
    gb_callback_free(cbs[1]);
    gb_optimizer_free(opt);
    gb_module_free(m);
    summary_remove_dir(dir);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("summary_fit_callback");
    TCase *tc = tcase_create("callback");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_callback_writes_scalars_histograms_and_the_graph);
    tcase_add_test(tc, test_callback_records_hparams_and_pr_curves);
    tcase_add_test(tc, test_callback_records_embeddings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
