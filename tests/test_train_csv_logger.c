/* test_train_csv_logger.c — CSVLogger's file, byte for byte: the header
 * of sorted keys, numbers as Python writes them, NA for a missing key,
 * append without a second header, the separator, a run through fit, and
 * a file that cannot be written.
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

static char dir[64];

static void dir_setup(void) {
    scope_setup();
    snprintf(dir, sizeof dir, "/tmp/gb_csv_logger_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    scope_teardown();
}

static const char *path_of(const char *name) {
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static char *slurp(const char *path) {
    static char buf[4096];
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* One run of the callback's hooks over the given epochs' logs, as fit
 * calls them. */
static void run(gb_callback *cb, int first_epoch, int n, const gb_logs *logs) {
    gb_train_state s = {0};
    gb_logs none = {0};
    cb->type->on_train_begin(cb, &s, &none);
    for (int i = 0; i < n; i++) {
        gb_logs l = logs[i];
        cb->type->on_epoch_end(cb, &s, first_epoch + i, &l);
    }
    cb->type->on_train_end(cb, &s, &none);
}

static gb_logs logs_of(int n, const char *const *keys, const double *values) {
    gb_logs l = {0};
    for (int i = 0; i < n; i++) ck_assert(gb_logs_set(&l, keys[i], values[i]));
    return l;
}

START_TEST(test_rows_and_append) {
    const char *p = path_of("training.log");
    gb_logs e[3] = {
        logs_of(3, (const char *[]){"loss", "accuracy", "val_loss"}, (const double[]){0.5, 0.75, 1.0 / 3}),
        logs_of(3, (const char *[]){"loss", "accuracy", "val_loss"}, (const double[]){0.25, 1, 1e-05}),
        /* accuracy missing; a new key is not a column */
        logs_of(3, (const char *[]){"loss", "learning_rate", "val_loss"}, (const double[]){2, 0.1, NAN}),
    };
    gb_callback *cb = gb_csv_logger(p, 0, false);
    run(cb, 0, 3, e);
    ck_assert_str_eq(slurp(p), "epoch,accuracy,loss,val_loss\n"
                               "0,0.75,0.5,0.3333333333333333\n"
                               "1,1.0,0.25,1e-05\n"
                               "2,NA,2.0,nan\n");
    gb_callback_free(cb);

    /* append: the run goes on below, with no second header. */
    cb = gb_csv_logger(p, ',', true);
    run(cb, 3, 1, e);
    ck_assert_str_eq(slurp(p), "epoch,accuracy,loss,val_loss\n"
                               "0,0.75,0.5,0.3333333333333333\n"
                               "1,1.0,0.25,1e-05\n"
                               "2,NA,2.0,nan\n"
                               "3,0.75,0.5,0.3333333333333333\n");
    gb_callback_free(cb);

    /* Without append the file starts over; the same callback may run twice. */
    cb = gb_csv_logger(p, ';', false);
    run(cb, 0, 1, e + 1);
    ck_assert_str_eq(slurp(p), "epoch;accuracy;loss;val_loss\n0;1.0;0.25;1e-05\n");
    run(cb, 0, 1, e + 2);
    ck_assert_str_eq(slurp(p), "epoch;learning_rate;loss;val_loss\n0;0.1;2.0;nan\n");
    gb_callback_free(cb);

    /* append to a file that is not there yet, or is empty: a header. */
    const char *q = path_of("new.log");
    cb = gb_csv_logger(q, 0, true);
    run(cb, 0, 1, e + 1);
    ck_assert_str_eq(slurp(q), "epoch,accuracy,loss,val_loss\n0,1.0,0.25,1e-05\n");
    gb_callback_free(cb);
    fclose(fopen(q, "w"));
    cb = gb_csv_logger(q, 0, true);
    run(cb, 5, 1, e + 1);
    ck_assert_str_eq(slurp(q), "epoch,accuracy,loss,val_loss\n5,1.0,0.25,1e-05\n");
    gb_callback_free(cb);
}
END_TEST

START_TEST(test_through_fit) {
    const char *p = path_of("fit.csv");
    gb_module *m = gb_sequential_new(NULL);
    gb_sequential_add(m, gb_dense_new(1, &(gb_dense_options){.seed = 1}));
    gb_optimizer *opt = gb_sgd(0.1);
    ck_assert(gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                                        .loss = {GB_LOSS_MEAN_SQUARED_ERROR},
                                                        .metrics = (const char *[]){"mae"},
                                                        .nmetrics = 1}));
    gb_tensor *x = gb_from_f32((const float[]){0, 1, 2, 3}, GB_SHAPE(4, 1));
    gb_tensor *y = gb_from_f32((const float[]){1, 3, 5, 7}, GB_SHAPE(4, 1));
    gb_callback *cb = gb_csv_logger(p, 0, false);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, x, y, &o);
    ck_assert_ptr_nonnull(h);
    /* Each row holds the history's values, read back exactly. */
    FILE *f = fopen(p, "r");
    char line[256];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "epoch,loss,mae\n");
    for (int e = 0; e < 3; e++) {
        int epoch;
        char loss[64], mae[64];
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(sscanf(line, "%d,%63[^,],%63s", &epoch, loss, mae), 3);
        ck_assert_int_eq(epoch, e);
        ck_assert_double_eq(strtod(loss, NULL), gb_history_value(h, "loss", e));
        ck_assert_double_eq(strtod(mae, NULL), gb_history_value(h, "mae", e));
    }
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_errors) {
    ck_assert_ptr_null(gb_csv_logger(NULL, 0, false));
    assert_error(GB_ERR_VALUE, "gb_csv_logger: the file name is empty");
    ck_assert_ptr_null(gb_csv_logger("x.csv", '"', false));
    assert_error(GB_ERR_VALUE, "the separator cannot be a quote or a line break");
    /* A directory that does not exist: fit stops with the file named. */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/no/such/dir.csv", dir);
    gb_callback *cb = gb_csv_logger(bad, 0, false);
    gb_train_state s = {0};
    gb_logs logs = {0};
    cb->type->on_train_begin(cb, &s, &logs);
    char want[260];
    snprintf(want, sizeof want, "CSVLogger: %s: cannot open for writing: No such file", bad);
    assert_error(GB_ERR_IO, want);
    gb_callback_free(cb);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_csv_logger");
    TCase *tc = tcase_create("csv_logger");
    tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
    tcase_add_test(tc, test_rows_and_append);
    tcase_add_test(tc, test_through_fit);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
