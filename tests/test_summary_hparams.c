/* test_summary_hparams.c — comparing runs: the experiment's declared
 * hyperparameters and metrics, a run's status (running, done, failed, and
 * killed by SIGKILL), a metric summed up per run, and precision-recall
 * counts against a case computed by hand, weighted and per class. Every
 * bad input fails with its exact message. The same counts against
 * scikit-learn: tests/pr_curve_sklearn.py.
 */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_summary_hparams")

#define ASSERT_MESSAGE(call, status, message)                                \
    do {                                                                     \
        ck_assert_int_eq((call), (status));                                  \
        ck_assert_str_eq(gb_summary_last_error(), (message));                \
    } while (0)

static gb_tensor *f32(const float *v, int64_t n) {
    return gb_tensor_from(GB_F32, v, 1, (int64_t[]){n});
}

/* ---- the experiment ------------------------------------------------------------------ */

static const double lrs[] = {1e-4, 1e-3, 1e-2};
static const char *const optimizers[] = {"adam", "sgd"};

START_TEST(test_config_round_trips_in_declaration_order) {
    gb_summary_writer *w = open_writer("a");
    gb_hparam_domain hp[] = {
        {.name = "lr", .display_name = "learning rate", .type = GB_HPARAM_REAL,
         .domain = GB_DOMAIN_DISCRETE, .value_count = 3, .values = lrs},
        {.name = "optimizer", .type = GB_HPARAM_STRING, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .strings = optimizers},
        {.name = "dropout", .description = "rate", .type = GB_HPARAM_REAL,
         .domain = GB_DOMAIN_INTERVAL, .min = 0, .max = 0.5},
        {.name = "batch_size", .type = GB_HPARAM_INT},
    };
    gb_hparam_metric m[] = {{.tag = "val_accuracy", .display_name = "val acc",
                             .higher_is_better = true},
                            {.tag = "val_loss"}};
    ck_assert_int_eq(gb_summary_hparams_config(w, hp, 4, m, 2), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_hparams_config *c;
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->hparam_count, 4);
    ck_assert_str_eq(c->hparams[0].name, "lr");
    ck_assert_str_eq(c->hparams[0].display_name, "learning rate");
    ck_assert_int_eq(c->hparams[0].type, GB_HPARAM_REAL);
    ck_assert_int_eq(c->hparams[0].domain, GB_DOMAIN_DISCRETE);
    ck_assert_str_eq(c->hparams[0].values_json, "[0.0001,0.001,0.01]");
    ck_assert_str_eq(c->hparams[1].name, "optimizer");
    ck_assert_str_eq(c->hparams[1].values_json, "[\"adam\",\"sgd\"]");
    ck_assert_str_eq(c->hparams[2].name, "dropout");
    ck_assert_str_eq(c->hparams[2].description, "rate");
    ck_assert_int_eq(c->hparams[2].domain, GB_DOMAIN_INTERVAL);
    ck_assert(c->hparams[2].min == 0 && c->hparams[2].max == 0.5);
    ck_assert_str_eq(c->hparams[3].name, "batch_size");
    ck_assert_int_eq(c->hparams[3].type, GB_HPARAM_INT);
    ck_assert_int_eq(c->hparams[3].domain, GB_DOMAIN_NONE);
    ck_assert(isnan(c->hparams[3].min));
    ck_assert_str_eq(c->hparams[3].values_json, "[]");
    ck_assert_uint_eq(c->metric_count, 2);
    ck_assert_str_eq(c->metrics[0].tag, "val_accuracy");
    ck_assert_str_eq(c->metrics[0].display_name, "val acc");
    ck_assert(c->metrics[0].higher_is_better && !c->metrics[1].higher_is_better);
    gb_store_free(c);
    gb_store_close(s);

    /* Declared again by another run: the name's entry is replaced. */
    w = open_writer("b");
    gb_hparam_domain again = {.name = "dropout", .type = GB_HPARAM_REAL,
                              .domain = GB_DOMAIN_INTERVAL, .min = 0.1, .max = 0.9};
    ck_assert_int_eq(gb_summary_hparams_config(w, &again, 1, NULL, 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    s = open_store();
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->hparam_count, 4);
    ck_assert_str_eq(c->hparams[0].name, "dropout");   /* position 0 of its declaration */
    ck_assert(c->hparams[0].min == 0.1 && c->hparams[0].max == 0.9);
    ck_assert_str_eq(c->hparams[0].description, "");
    gb_store_free(c);
    gb_store_close(s);
}
END_TEST

START_TEST(test_bad_configs_name_the_entry) {
    gb_summary_writer *w = open_writer("a");
    static const char what[] = "gb_summary_hparams_config: ";
    char want[256];
#define BAD_CONFIG(domain, msg)                                                          \
    do {                                                                                 \
        gb_hparam_domain d_ = domain;                                                    \
        snprintf(want, sizeof want, "%s%s", what, msg);                                  \
        ASSERT_MESSAGE(gb_summary_hparams_config(w, &d_, 1, NULL, 0), GB_ERR_VALUE, want); \
    } while (0)
    BAD_CONFIG(((gb_hparam_domain){.name = ""}), "an hparam's name is NULL or empty");
    BAD_CONFIG(((gb_hparam_domain){.name = "lr", .domain = GB_DOMAIN_INTERVAL, .min = 1,
                                   .max = 0}),
               "hparam 'lr': an interval needs finite min <= max");
    BAD_CONFIG(((gb_hparam_domain){.name = "lr", .domain = GB_DOMAIN_INTERVAL, .max = INFINITY}),
               "hparam 'lr': an interval needs finite min <= max");
    BAD_CONFIG(((gb_hparam_domain){.name = "opt", .type = GB_HPARAM_STRING,
                                   .domain = GB_DOMAIN_INTERVAL}),
               "hparam 'opt': an interval needs a real or int hparam");
    BAD_CONFIG(((gb_hparam_domain){.name = "lr", .domain = GB_DOMAIN_DISCRETE}),
               "hparam 'lr': a discrete domain needs at least one value");
    BAD_CONFIG(((gb_hparam_domain){.name = "bs", .type = GB_HPARAM_INT,
                                   .domain = GB_DOMAIN_DISCRETE, .value_count = 3,
                                   .values = lrs}),
               "hparam 'bs': a value of an int domain is not a whole number");
    BAD_CONFIG(((gb_hparam_domain){.name = "opt", .type = GB_HPARAM_STRING,
                                   .domain = GB_DOMAIN_DISCRETE, .value_count = 2}),
               "hparam 'opt': a discrete string domain needs strings");
    BAD_CONFIG(((gb_hparam_domain){.name = "x", .type = (gb_hparam_type)9}),
               "hparam 'x': unknown type");
    ASSERT_MESSAGE(gb_summary_hparams_config(w, NULL, 0, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_hparams_config: nothing to declare: no hparams and no metrics");
    ASSERT_MESSAGE(gb_summary_hparams_config(w, NULL, 2, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_hparams_config: hparams or metrics is NULL with a nonzero count");
    gb_hparam_metric m = {.tag = ""};
    ASSERT_MESSAGE(gb_summary_hparams_config(w, NULL, 0, &m, 1), GB_ERR_VALUE,
                   "gb_summary_hparams_config: a metric's tag is NULL or empty");
    ASSERT_MESSAGE(gb_summary_run_status(w, (gb_run_status)7), GB_ERR_VALUE,
                   "gb_summary_run_status: unknown status 7");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();   /* nothing of the refused calls was written */
    gb_hparams_config *c;
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert(c->hparam_count == 0 && c->metric_count == 0);
    gb_store_free(c);
    gb_store_close(s);
}
END_TEST

/* ---- a run's status ------------------------------------------------------------------- */

static const char *status_of(gb_store *s, const char *run) {
    static char out[32];
    gb_runs *r;
    ck_assert_int_eq(gb_store_runs(s, &r), GB_STORE_OK);
    out[0] = 0;
    for (size_t i = 0; i < r->count; i++)
        if (!strcmp(r->rows[i].name, run)) snprintf(out, sizeof out, "%s", r->rows[i].status);
    gb_store_free(r);
    return out;
}

START_TEST(test_status_running_done_failed_and_killed) {
    gb_summary_writer *w = open_writer("ok");
    gb_store *s = open_store();
    ck_assert_str_eq(status_of(s, "ok"), "running");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_str_eq(status_of(s, "ok"), "done");

    w = open_writer("bad");
    ck_assert_int_eq(gb_summary_run_status(w, GB_RUN_FAILED), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_str_eq(status_of(s, "bad"), "failed");   /* close keeps what the program said */
    w = open_writer("bad");                              /* resumed: running again */
    ck_assert_str_eq(status_of(s, "bad"), "running");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_str_eq(status_of(s, "bad"), "done");

    /* A process killed by SIGKILL says nothing: its run stays "running" in
     * the store, and a reader on this host sees its process gone. */
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        gb_summary_writer *cw = NULL;
        if (gb_summary_writer_open(db, "sigkilled", NULL, &cw) != GB_OK ||
            gb_summary_scalar(cw, "loss", 1, 0) != GB_OK || gb_summary_flush(cw) != GB_OK)
            _exit(3);
        raise(SIGKILL);
        _exit(4);
    }
    ck_assert_int_eq(summary_exit_code(pid), 128 + SIGKILL);
    ck_assert_str_eq(status_of(s, "sigkilled"), "killed");
    gb_store_close(s);
    sqlite3 *h;   /* what the store itself holds */
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT status, status_pid FROM runs WHERE name = "
                                           "'sigkilled'", -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "running");
    ck_assert_int_eq(sqlite3_column_int64(st, 1), pid);
    sqlite3_finalize(st);
    sqlite3_close(h);
}
END_TEST

/* ---- a metric per run ------------------------------------------------------------------ */

START_TEST(test_scalar_summaries_last_and_extremes_per_run) {
    gb_summary_writer *w = open_writer("r1");
    const double v[] = {0.5, 0.9, NAN, 0.7};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(gb_summary_scalar(w, "acc", v[i], i * 100000), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "acc", 0.1, -5), GB_OK);   /* a negative step */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    w = open_writer("r2");
    ck_assert_int_eq(gb_summary_scalar(w, "acc", NAN, 3), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", 2, 3), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    w = open_writer("r3");
    ck_assert_int_eq(gb_summary_scalar(w, "loss", 2, 3), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_scalar_summaries *m;
    ck_assert_int_eq(gb_store_scalar_summaries(s, "acc", &m), GB_STORE_OK);
    ck_assert_uint_eq(m->count, 2);   /* r3 has no acc */
    ck_assert_str_eq(m->rows[0].run, "r1");
    ck_assert_int_eq(m->rows[0].last_step, 300000);
    ck_assert(m->rows[0].last == 0.7 && m->rows[0].min == 0.1 && m->rows[0].max == 0.9);
    ck_assert_int_eq(m->rows[0].count, 5);
    ck_assert_str_eq(m->rows[1].run, "r2");
    ck_assert(isnan(m->rows[1].last) && isnan(m->rows[1].min) && isnan(m->rows[1].max));
    gb_store_free(m);
    ck_assert_int_eq(gb_store_scalar_summaries(s, "nope", &m), GB_STORE_OK);
    ck_assert_uint_eq(m->count, 0);
    gb_store_free(m);
    gb_store_close(s);
}
END_TEST

/* Nothing declared: the hparams are the runs' keys, numbers in them in
 * numeric order, and the metrics the runs' scalar tags but the
 * training-health figures, which every fit writes per layer. 40 of them
 * ("health/..." sorts before "loss" and "val_loss") used to fill the 32
 * places of the cap, and the run's own metrics were left out. */
START_TEST(test_inferred_metrics_leave_out_the_health_figures) {
    gb_summary_writer *w = open_writer("fit");
    ck_assert_int_eq(gb_summary_hparam_num(w, "lr", 0.01), GB_OK);
    /* fit's layer sizes: numbers in names sort as numbers (dense10 after
     * dense2, as the model has them; it came before) */
    const char *const keys[] = {"dense10.units", "dense2.units", "dense1.units", "dense0.units", "dense02.units"};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(gb_summary_hparam_num(w, keys[i], 8), GB_OK);
    char tag[64];
    for (int i = 0; i < 40; i++) {
        snprintf(tag, sizeof tag, "health/dense_%02d/grad_norm", i);
        ck_assert_int_eq(gb_summary_scalar(w, tag, 1, 1), GB_OK);
    }
    ck_assert_int_eq(gb_summary_scalar(w, "val_loss", 0.5, 1), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "accuracy", 0.75, 1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_experiment *e;
    ck_assert_int_eq(gb_store_experiment(s, &e), GB_STORE_OK);
    ck_assert(!e->declared);
    const char *const order[] = {"dense0.units", "dense1.units", "dense02.units", "dense2.units",
                                 "dense10.units", "lr"};
    ck_assert_uint_eq(e->hparam_count, 6);
    for (int i = 0; i < 6; i++) ck_assert_str_eq(e->hparams[i].name, order[i]);
    ck_assert_uint_eq(e->metric_count, 2);
    ck_assert_str_eq(e->metrics[0].tag, "accuracy");
    ck_assert(e->metrics[0].higher_is_better);
    ck_assert_str_eq(e->metrics[1].tag, "val_loss");
    ck_assert_uint_eq(e->run_count, 1);
    ck_assert(e->runs[0].metrics[1].last == 0.5);
    gb_store_free(e);
    gb_store_close(s);
}
END_TEST

/* ---- precision-recall curves ---------------------------------------------------------------- */

/* Six examples, five thresholds 0, .25, .5, .75, 1; buckets floor(4p):
 * positives at 0.9 (3), 0.5 (2), 0.2 (0); negatives at 0.6 (2), 0.1 (0),
 * 1.0 (4). TP at threshold i = positives in buckets >= i, and so on. */
static const float hand_labels[] = {1, 1, 0, 1, 0, 0};
static const float hand_preds[] = {0.9f, 0.5f, 0.6f, 0.2f, 0.1f, 1.0f};

static void assert_row(const double *got, const double *want, int n, const char *name) {
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s[%d] = %.17g, want %.17g", name, i, got[i], want[i]);
}

START_TEST(test_pr_counts_by_hand) {
    gb_summary_writer *w = open_writer("run");
    ck_assert_int_eq(gb_summary_pr_curve(w, "pr", f32(hand_labels, 6), f32(hand_preds, 6), 5,
                                         NULL, 7), GB_OK);
    const float weights[] = {2, 1, 1, 1, 1, 0.5f};
    ck_assert_int_eq(gb_summary_pr_curve(w, "pr", f32(hand_labels, 6), f32(hand_preds, 6), 5,
                                         f32(weights, 6), 8), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_pr_curves *pr;
    ck_assert_int_eq(gb_store_pr_curves(s, "run", "pr", NULL, &pr), GB_STORE_OK);
    ck_assert_uint_eq(pr->count, 2);
    const gb_pr_curve_row *r = &pr->rows[0];
    ck_assert(r->step == 7 && r->num_thresholds == 5);
    assert_row(r->tp, (double[]){3, 2, 2, 1, 0}, 5, "tp");
    assert_row(r->fp, (double[]){3, 2, 2, 1, 1}, 5, "fp");
    assert_row(r->tn, (double[]){0, 1, 1, 2, 2}, 5, "tn");
    assert_row(r->fn, (double[]){0, 1, 1, 2, 3}, 5, "fn");
    assert_row(r->precision, (double[]){0.5, 0.5, 0.5, 0.5, 0}, 5, "precision");
    assert_row(r->recall, (double[]){1, 2.0 / 3, 2.0 / 3, 1.0 / 3, 0}, 5, "recall");
    r = &pr->rows[1];   /* weighted: the 0.9 positive counts twice, the 1.0 negative half */
    assert_row(r->tp, (double[]){4, 3, 3, 2, 0}, 5, "weighted tp");
    assert_row(r->fp, (double[]){2.5, 1.5, 1.5, 0.5, 0.5}, 5, "weighted fp");
    assert_row(r->tn, (double[]){0, 1, 1, 2, 2}, 5, "weighted tn");
    assert_row(r->fn, (double[]){0, 1, 1, 2, 4}, 5, "weighted fn");
    gb_store_free(pr);
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, "run", GB_KIND_PR_CURVE, &t), GB_STORE_OK);
    ck_assert(t->count == 1 && t->rows[0].count == 2 && t->rows[0].max_step == 8);
    ck_assert_str_eq(gb_kind_name(t->rows[0].kind), "pr_curve");
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

START_TEST(test_pr_curves_per_class) {
    gb_summary_writer *w = open_writer("run");
    /* Three examples of classes 2, 0, 2 and their probabilities. */
    const float probs[] = {0.1f, 0.2f, 0.7f, 0.8f, 0.1f, 0.1f, 0.3f, 0.3f, 0.4f};
    const int32_t classes[] = {2, 0, 2};
    gb_tensor *p = gb_tensor_from(GB_F32, probs, 2, (int64_t[]){3, 3});
    const char *const names[] = {"cat", "dog", "bird"};
    ck_assert_int_eq(gb_summary_pr_curves(w, "val", gb_tensor_from(GB_I32, classes, 1,
                                                                   (int64_t[]){3}),
                                          p, 3, names, 1), GB_OK);
    const float onehot[] = {0, 0, 1, 1, 0, 0, 0, 0, 1};
    ck_assert_int_eq(gb_summary_pr_curves(w, "val", gb_tensor_from(GB_F32, onehot, 2,
                                                                   (int64_t[]){3, 3}),
                                          p, 3, NULL, 2), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_pr_curves *pr;
    /* bird: positives 0.7 (bucket 1), 0.4 (0); negative 0.1 (0). */
    ck_assert_int_eq(gb_store_pr_curves(s, "run", "val/bird", NULL, &pr), GB_STORE_OK);
    ck_assert_uint_eq(pr->count, 1);
    assert_row(pr->rows[0].tp, (double[]){2, 1, 0}, 3, "bird tp");
    assert_row(pr->rows[0].fp, (double[]){1, 0, 0}, 3, "bird fp");
    gb_store_free(pr);
    ck_assert_int_eq(gb_store_pr_curves(s, "run", "val/0", NULL, &pr), GB_STORE_OK);
    assert_row(pr->rows[0].tp, (double[]){1, 1, 0}, 3, "class 0 tp");   /* 0.8 */
    assert_row(pr->rows[0].fp, (double[]){2, 0, 0}, 3, "class 0 fp");   /* 0.1, 0.3 */
    gb_store_free(pr);
    gb_store_close(s);
}
END_TEST

START_TEST(test_pr_bad_inputs) {
    gb_summary_writer *w = open_writer("run");
    gb_tensor *l = f32(hand_labels, 6), *p = f32(hand_preds, 6);
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, p, 1, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curve 'pr': num_thresholds is 1; it must be in 2..10000");
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, f32(hand_preds, 5), 3, NULL, 0), GB_ERR_SHAPE,
                   "gb_summary_pr_curve 'pr': labels have 6 elements and predictions 5: they "
                   "must match and be > 0");
    const float bad[] = {0.5f, 1.5f, 0, 0, 0, 0};
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, f32(bad, 6), 3, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curve 'pr': prediction 1 is 1.5, outside [0, 1]");
    const float nan[] = {NAN, 0, 0, 0, 0, 0};
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, f32(nan, 6), 3, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curve 'pr': prediction 0 is nan, outside [0, 1]");
    const float neg[] = {-1};
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, p, 3, f32(neg, 1), 0), GB_ERR_VALUE,
                   "gb_summary_pr_curve 'pr': weight 0 is -1: weights must be finite and >= 0");
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, p, 3, f32(hand_preds, 2),
                                       0), GB_ERR_SHAPE,
                   "gb_summary_pr_curve 'pr': weights have 2 elements: give 1, or one per "
                   "prediction (6)");
    const int32_t ints[] = {0, 1, 0, 1, 0, 1};
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", l, gb_tensor_from(GB_I32, ints, 1, (int64_t[]){6}),
                                       3, NULL, 0), GB_ERR_DTYPE,
                   "gb_summary_pr_curve 'pr': predictions must be float32 or float64");
    ASSERT_MESSAGE(gb_summary_pr_curve(w, "pr", NULL, p, 3, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curve 'pr': tensor is NULL (did an earlier op fail?)");
    gb_tensor *probs = gb_tensor_from(GB_F32, hand_preds, 2, (int64_t[]){3, 2});
    const int32_t out_of_range[] = {0, 2, 1};
    ASSERT_MESSAGE(gb_summary_pr_curves(w, "val", gb_tensor_from(GB_I32, out_of_range, 1,
                                                                 (int64_t[]){3}),
                                        probs, 3, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curves 'val': label 1 is 2, not a class index in 0..1");
    const float two_ones[] = {1, 1, 0, 1, 1, 0};
    ASSERT_MESSAGE(gb_summary_pr_curves(w, "val", gb_tensor_from(GB_F32, two_ones, 2,
                                                                 (int64_t[]){3, 2}),
                                        probs, 3, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_pr_curves 'val': one-hot label row 0 does not hold exactly one 1");
    ASSERT_MESSAGE(gb_summary_pr_curves(w, "val", l, probs, 3, NULL, 0), GB_ERR_SHAPE,
                   "gb_summary_pr_curves 'val': labels [6] are neither [N] class indices nor "
                   "[N, C] one-hot for probabilities [3, 2]");
    ASSERT_MESSAGE(gb_summary_pr_curves(w, "val", l, p, 3, NULL, 0), GB_ERR_SHAPE,
                   "gb_summary_pr_curves 'val': probabilities must be [N, C] with N, C > 0, got [6]");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();   /* no curve was written */
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_PR_CURVE, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 0);
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_hparams");
    TCase *tc = tcase_create("hparams");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_config_round_trips_in_declaration_order);
    tcase_add_test(tc, test_bad_configs_name_the_entry);
    tcase_add_test(tc, test_status_running_done_failed_and_killed);
    tcase_add_test(tc, test_scalar_summaries_last_and_extremes_per_run);
    tcase_add_test(tc, test_inferred_metrics_leave_out_the_health_figures);
    tcase_add_test(tc, test_pr_counts_by_hand);
    tcase_add_test(tc, test_pr_curves_per_class);
    tcase_add_test(tc, test_pr_bad_inputs);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
