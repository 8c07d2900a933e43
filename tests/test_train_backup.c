/* test_train_backup.c — BackupAndRestore (keras.callbacks.BackupAndRestore).
 *
 * - A child process trains the MLP with a backup every 5 batches and is
 *   killed with SIGKILL in the middle of epoch 2 (it stops itself at a
 *   known batch and waits; the test reads the backup, then kills it). A
 *   second process runs the same fit with the same backup folder: it
 *   resumes at the saved epoch and batch, and its final weights, Adam's
 *   state and the logs of the epochs it trained equal an uninterrupted
 *   run's bit for bit; the backup is deleted at the end. Bounded in time.
 * - Backups at each epoch's end resume at the next epoch, with the
 *   learning rate a callback had set.
 * - fit on a shuffled dataset resumes part way through an epoch on the
 *   same batches, bit for bit.
 * - A backup of another run (batch size), another model, or a damaged one
 *   is an error naming it, and the model and optimizer are left as they
 *   were.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/internal.h"
#include "resume_test_util.h"
#include "test_util.h"

/* ---- a callback that stops a run at a known batch --------------------------------------------- */

typedef struct stopper {
    int epoch, at_epoch;
    int64_t at_batch;
    const char *marker;   /* set: write it and wait to be killed; NULL: stop_training */
} stopper;

static void note_epoch(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    (void)s, (void)logs;
    ((stopper *)user)->epoch = epoch;
}

static void stop_at(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)logs;
    stopper *k = user;
    if (k->epoch != k->at_epoch || batch != k->at_batch) return;
    if (!k->marker) {
        s->stop_training = true;
        return;
    }
    FILE *f = fopen(k->marker, "w");
    if (f) fclose(f);
    for (;;) pause();   /* the test kills this process here */
}

static gb_callback *stopper_callback(stopper *k) {
    return gb_lambda(&(gb_lambda_callback){.on_epoch_begin = note_epoch, .on_batch_end = stop_at,
                                           .user = k});
}

/* The int64 entry `path` of the backup file. */
static int64_t backup_value(const char *file, const char *path) {
    gb__ckpt_file f;
    ck_assert_msg(gb__ckpt_read(file, &f), "%s", gb_error_string());
    int64_t v = -1;
    for (int i = 0; i < f.count; i++)
        if (strcmp(f.entries[i].path, path) == 0) memcpy(&v, gb__ckpt_data(&f, &f.entries[i]), 8);
    gb__ckpt_close(&f);
    return v;
}

/* ---- 4b: killed with SIGKILL, run again ------------------------------------------------------ */

/* The child: the MLP's fit of 3 epochs with a backup every 5 batches in
 * dir; with a marker, it stops at (epoch, batch) to be killed. */
static int child_backup(const char *dir, const char *out, int epoch, int64_t batch, const char *marker) {
    rt_fresh_session();
    gb_scope_begin();
    gb_module *m = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    bool compiled = rt_compile(m, opt);
    stopper k = {.epoch = -1, .at_epoch = epoch, .at_batch = batch, .marker = marker};
    gb_callback *cbs[2] = {gb_backup_and_restore(&(gb_backup_and_restore_options){.backup_dir = dir,
                                                                                  .save_freq = 5}),
                           stopper_callback(&k)};
    gb_history *h = compiled ? rt_fit(m, 0, 3, cbs, 2) : NULL;
    bool ok = h && gb_model_save(m, out);
    if (ok) {
        rt_print_history(h);
        printf("epochs %d\n", gb_history_epochs(h));
    } else {
        fprintf(stderr, "child backup: %s\n", gb_error_string());
    }
    gb_history_free(h);
    gb_callback_free(cbs[0]), gb_callback_free(cbs[1]);
    gb_module_free(m);
    gb_optimizer_free(opt);
    gb_scope_end();
    return ok ? 0 : 1;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

START_TEST(test_killed_mid_epoch_resumes_bit_for_bit) {
    double start = seconds();
    const char *dir = in_test_dir("backup"), *marker = in_test_dir("stopped"), *out = in_test_dir("out.txt");
    const char *killed_out = in_test_dir("killed.txt"), *final = in_test_dir("final.gbm"), *unused = in_test_dir("never.gbm");
    char backup[300];
    snprintf(backup, sizeof backup, "%s/backup.ckpt", dir);
    /* Epoch 2 (index 1), batch 44: 63 + 45 batches trained; the last
     * backup was after batch 41 (the 105th batch, a multiple of 5). */
    pid_t pid = rt_spawn((const char *[]){"backup", dir, unused, "1", "44", marker, NULL}, killed_out);
    ck_assert_msg(rt_wait_for_file(marker, 20), "the child never reached epoch 2, batch 44");
    ck_assert_int_eq(backup_value(backup, "fit/epoch"), 1);
    ck_assert_int_eq(backup_value(backup, "fit/batch"), 42);
    ck_assert_int_eq(backup_value(backup, "optimizer/iterations"), 63 + 42);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(rt_wait(pid), 128 + SIGKILL);
    ck_assert_int_eq(access(backup, F_OK), 0);
    ck_assert_int_ne(access(unused, F_OK), 0);

    rt_run_child((const char *[]){"backup", dir, final, "-1", "-1", "", NULL}, out);
    ck_assert_msg(access(backup, F_OK) != 0 && access(dir, F_OK) != 0, "the backup was not deleted");
    ck_assert_int_eq((int)rt_read_value(out, "epochs"), 2);   /* epochs 2 and 3: resumed, not restarted */

    rt_fresh_session();
    gb_module *straight = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(straight, opt), "%s", gb_error_string());
    gb_history *h = rt_fit(straight, 0, 3, NULL, 0);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    gb_module *back = gb_model_load(final);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    int n = rt_assert_same_training_state(straight, back);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 3 * 63);
    for (int e = 1; e <= 2; e++) {
        char key[32];
        for (int k = 0; k < 2; k++) {
            const char *what = k ? "accuracy" : "loss";
            snprintf(key, sizeof key, "%s_%d", what, e);
            double resumed = rt_read_value(out, key), want = rt_history_at(h, what, e);
            ck_assert_msg(rt_same_double(resumed, want), "%s: %a resumed, %a straight", key, resumed, want);
        }
    }
    double took = seconds() - start;
    ck_assert_msg(took < 30, "took %.1f s", took);
    fprintf(stderr,
            "SIGKILL at epoch 2 batch 45, backup at batch 42: %d tensors bit-identical after "
            "epoch 3; epoch-2 loss %.9g accuracy %.9g, epoch-3 loss %.9g; %.2f s in all\n",
            n, rt_history_at(h, "loss", 1), rt_history_at(h, "accuracy", 1),
            rt_history_at(h, "loss", 2), took);
    gb_history_free(h);
    gb_module_free(straight), gb_module_free(back);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- in one process: stop_training stands for the interruption ---------------------------- */

/* The MLP trained from scratch with the callbacks; its history. */
static gb_history *train(gb_module **m, gb_optimizer **opt, gb_callback *const *cbs, int ncbs) {
    rt_fresh_session();
    *m = rt_mlp();
    *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(*m, *opt), "%s", gb_error_string());
    gb_history *h = rt_fit(*m, 0, 3, cbs, ncbs);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    return h;
}

/* A schedule by hand, as ReduceLROnPlateau's: the rate halves after the
 * first epoch. A run resumed later never sees that epoch end: the rate
 * must come from the backup. */
static void halve_after_first(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    (void)logs, (void)user;
    if (epoch == 0) gb_optimizer_set_learning_rate(s->optimizer, gb_optimizer_learning_rate(s->optimizer) / 2);
}

START_TEST(test_epoch_backups_resume_at_the_next_epoch) {
    const char *dir = in_test_dir("epochs");
    gb_callback *keep = gb_backup_and_restore(&(gb_backup_and_restore_options){.backup_dir = dir,
                                                                               .keep_checkpoint = true});
    gb_callback *once = gb_backup_and_restore(&(gb_backup_and_restore_options){.backup_dir = dir});
    stopper k = {.at_epoch = 1, .at_batch = 62};   /* the epoch's last batch: it ends, saved */
    gb_callback *stop = stopper_callback(&k);
    gb_callback *halve = gb_lambda(&(gb_lambda_callback){.on_epoch_end = halve_after_first});
    gb_module *a, *b, *c;
    gb_optimizer *oa, *ob, *oc;
    gb_history *ha = train(&a, &oa, (gb_callback *[]){halve, keep, stop}, 3);
    ck_assert_int_eq(gb_history_epochs(ha), 2);
    ck_assert_str_eq(gb_backup_and_restore_path(keep), in_test_dir("epochs/backup.ckpt"));
    ck_assert_int_eq(backup_value(gb_backup_and_restore_path(keep), "fit/epoch"), 2);
    ck_assert_int_eq(backup_value(gb_backup_and_restore_path(keep), "fit/batch"), 0);
    gb_history *hb = train(&b, &ob, (gb_callback *[]){halve, once}, 2);
    ck_assert_int_eq(gb_history_epochs(hb), 1);
    ck_assert_int_eq(gb_history_epoch(hb, 0), 2);
    ck_assert_int_ne(access(dir, F_OK), 0);
    ck_assert_double_eq(gb_optimizer_learning_rate(ob), 5e-4);
    gb_history *hc = train(&c, &oc, &halve, 1);
    rt_assert_same_training_state(c, b);
    ck_assert(rt_same_double(gb_history_value(hb, "loss", 0), rt_history_at(hc, "loss", 2)));
    gb_history_free(ha), gb_history_free(hb), gb_history_free(hc);
    gb_callback_free(keep), gb_callback_free(once), gb_callback_free(stop), gb_callback_free(halve);
    gb_module_free(a), gb_module_free(b), gb_module_free(c);
    gb_optimizer_free(oa), gb_optimizer_free(ob), gb_optimizer_free(oc);
}
END_TEST

/* A shuffled dataset of the MLP's data, made anew (its own iterator count). */
static gb_dataset *shuffled(void) {
    gb_tensor *x, *y;
    rt_data(&x, &y);
    gb_dataset *ds = gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, y});
    return gb_dataset_batch(gb_dataset_shuffle(ds, 500, 77), RT_BATCH, false);
}

static gb_history *train_dataset(gb_module **m, gb_optimizer **opt, gb_callback *const *cbs, int ncbs) {
    rt_fresh_session();
    *m = rt_mlp();
    *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(*m, *opt), "%s", gb_error_string());
    gb_dataset *ds = shuffled();
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.verbose = 0;
    o.callbacks = cbs;
    o.ncallbacks = ncbs;
    gb_history *h = gb_model_fit_dataset(*m, ds, &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    gb_dataset_free(ds);
    return h;
}

START_TEST(test_dataset_resumes_mid_epoch_on_the_same_batches) {
    const char *dir = in_test_dir("ds");
    gb_callback *keep = gb_backup_and_restore(&(gb_backup_and_restore_options){
        .backup_dir = dir, .save_freq = 4, .keep_checkpoint = true});
    stopper k = {.at_epoch = 1, .at_batch = 10};   /* saved after batch 8 (the 72nd) */
    gb_callback *stop = stopper_callback(&k);
    gb_module *a, *b, *c;
    gb_optimizer *oa, *ob, *oc;
    gb_history *ha = train_dataset(&a, &oa, (gb_callback *[]){keep, stop}, 2);
    ck_assert_int_eq(backup_value(gb_backup_and_restore_path(keep), "fit/batch"), 9);
    ck_assert_int_eq(backup_value(gb_backup_and_restore_path(keep), "fit/pass"), 2);
    ck_assert_int_eq(backup_value(gb_backup_and_restore_path(keep), "fit/position"), 9);
    gb_history *hb = train_dataset(&b, &ob, &keep, 1);
    gb_history *hc = train_dataset(&c, &oc, NULL, 0);
    rt_assert_same_training_state(c, b);
    for (int e = 1; e <= 2; e++) {
        ck_assert(rt_same_double(rt_history_at(hb, "loss", e), rt_history_at(hc, "loss", e)));
        ck_assert(rt_same_double(rt_history_at(hb, "accuracy", e), rt_history_at(hc, "accuracy", e)));
    }
    gb_history_free(ha), gb_history_free(hb), gb_history_free(hc);
    gb_callback_free(keep), gb_callback_free(stop);
    gb_module_free(a), gb_module_free(b), gb_module_free(c);
    gb_optimizer_free(oa), gb_optimizer_free(ob), gb_optimizer_free(oc);
}
END_TEST

/* ---- backups that do not fit ----------------------------------------------------------------- */

/* fit with the backup callback fails with `part` in its error and leaves
 * the model's weights and the optimizer untouched. */
static void assert_refused(gb_module *m, gb_optimizer *opt, gb_callback *cb, int64_t batch_size,
                           gb_status code, const char *part) {
    int n = 0;
    gb_variable *const *vars = gb_module_variables(m, &n);
    gb_tensor *before[8];
    for (int i = 0; i < n; i++) before[i] = gb_variable_value(vars[i]);
    gb_tensor *x, *y;
    rt_data(&x, &y);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.batch_size = batch_size;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    ck_assert_ptr_null(gb_model_fit(m, x, y, &o));
    const gb_error *e = check_error(code, part);
    ck_assert_msg(strstr(e->message, gb_backup_and_restore_path(cb)), "unnamed backup: %s", e->message);
    fprintf(stderr, "refused backup: %s\n", e->message);
    gb_clear_error();
    vars = gb_module_variables(m, &n);
    for (int i = 0; i < n; i++)
        ck_assert(memcmp(gb_data(before[i]), gb_data(gb_variable_value(vars[i])), gb_nbytes(before[i])) == 0);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 0);
    ck_assert_int_eq(access(gb_backup_and_restore_path(cb), F_OK), 0);   /* kept for a next try */
}

START_TEST(test_backups_that_do_not_fit_change_nothing) {
    const char *dir = in_test_dir("other");
    gb_callback *keep = gb_backup_and_restore(&(gb_backup_and_restore_options){
        .backup_dir = dir, .save_freq = 7, .keep_checkpoint = true});
    stopper k = {.at_epoch = 0, .at_batch = 20};
    gb_callback *stop = stopper_callback(&k);
    gb_module *a;
    gb_optimizer *oa;
    gb_history *ha = train(&a, &oa, (gb_callback *[]){keep, stop}, 2);

    rt_fresh_session();
    gb_module *m = rt_mlp();
    gb_optimizer *opt = gb_adam(1e-3);
    ck_assert_msg(rt_compile(m, opt), "%s", gb_error_string());
    assert_refused(m, opt, keep, 16, GB_ERR_VALUE, "the saved training state is of another run (batch size: 32 there, 16 here)");

    gb_module *wide = gb_sequential_new("fmnist_mlp");
    gb_sequential_add(wide, gb_dense_new(65, &(gb_dense_options){.name = "hidden", .seed = 1}));
    gb_sequential_add(wide, gb_dense_new(RT_CLASSES, &(gb_dense_options){.name = "logits", .seed = 2}));
    gb_module_build(wide, GB_F32, GB_SHAPE(-1, RT_FEATURES));
    gb_optimizer *ow = gb_adam(1e-3);
    ck_assert_msg(rt_compile(wide, ow), "%s", gb_error_string());
    assert_refused(wide, ow, keep, RT_BATCH, GB_ERR_SHAPE, "tensor 'model/fmnist_mlp/hidden/kernel' is float32[784,64] "
                                             "in the file but float32[784,65] in the program");

    /* A flipped byte in Adam's first slot. */
    const char *path = gb_backup_and_restore_path(keep);
    gb__ckpt_file f;
    ck_assert(gb__ckpt_read(path, &f));
    long at = -1;
    for (int i = 0; i < f.count; i++)
        if (strstr(f.entries[i].path, "hidden/kernel/m")) at = (long)f.entries[i].offset;
    gb__ckpt_close(&f);
    ck_assert_int_ge(at, 0);
    FILE *fp = fopen(path, "r+b");
    fseek(fp, at + 8, SEEK_SET);
    int byte = fgetc(fp);
    fseek(fp, at + 8, SEEK_SET);
    fputc(byte ^ 0xff, fp);
    fclose(fp);
    assert_refused(m, opt, keep, RT_BATCH, GB_ERR_IO, "/hidden/kernel/m' is corrupt (CRC mismatch)");

    ck_assert_ptr_null(gb_backup_and_restore(&(gb_backup_and_restore_options){0}));
    assert_error(GB_ERR_VALUE, "gb_backup_and_restore: a backup_dir is required");
    ck_assert_ptr_null(gb_backup_and_restore(&(gb_backup_and_restore_options){.backup_dir = dir, .save_freq = -2}));
    assert_error(GB_ERR_VALUE, "save_freq must be 0 (each epoch) or a number of batches");
    gb_history_free(ha);
    gb_callback_free(keep), gb_callback_free(stop);
    gb_module_free(a), gb_module_free(m), gb_module_free(wide);
    gb_optimizer_free(oa), gb_optimizer_free(opt), gb_optimizer_free(ow);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_backup");
    TCase *tc = tcase_create("backup");
    tcase_add_checked_fixture(tc, nn_dir_setup, nn_dir_teardown);
    tcase_add_test(tc, test_killed_mid_epoch_resumes_bit_for_bit);
    tcase_add_test(tc, test_epoch_backups_resume_at_the_next_epoch);
    tcase_add_test(tc, test_dataset_resumes_mid_epoch_on_the_same_batches);
    tcase_add_test(tc, test_backups_that_do_not_fit_change_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv) {
    if (argc == 8 && strcmp(argv[1], "--child") == 0 && strcmp(argv[2], "backup") == 0)
        return child_backup(argv[3], argv[4], atoi(argv[5]), atoll(argv[6]), argv[7][0] ? argv[7] : NULL);
    return run_suite(suite());
}
