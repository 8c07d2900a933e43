/* test_train_progbar.c — the progress bar's lines, exactly: the format
 * (count, bar, ETA or elapsed time, time per step, metrics) in Keras 3's
 * spelling, and what fit writes to a file (not a terminal) with a fake
 * clock: "Epoch k/N", then each epoch's last line only; verbose 2.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"
#include "train/internal.h"

static gb_logs logs2(double acc, double loss) {
    gb_logs l = {0};
    gb_logs_set(&l, "accuracy", acc);
    gb_logs_set(&l, "loss", loss);
    return l;
}

static void expect_line(int verbose, int64_t cur, int64_t target, double elapsed, double per,
                        bool fin, const gb_logs *l, bool colour, const char *want) {
    char buf[512];
    gb__progbar_format(buf, sizeof buf, verbose, cur, target, elapsed, per, fin, l, colour);
    ck_assert_str_eq(buf, want);
}

START_TEST(test_final_line) {
    gb_logs l = logs2(0.85123, 0.41234);
    expect_line(1, 469, 469, 3.2, 0.0061, true, &l, false,
                "469/469 ━━━━━━━━━━━━━━━━━━━━ 3s 6ms/step - accuracy: 0.8512 - loss: 0.4123");
    gb_logs_set(&l, "val_accuracy", 0.8);
    gb_logs_set(&l, "val_loss", 0.0004);
    expect_line(1, 469, 469, 3.2, 0.0061, true, &l, false,
                "469/469 ━━━━━━━━━━━━━━━━━━━━ 3s 6ms/step - accuracy: 0.8512 - loss: 0.4123 - "
                "val_accuracy: 0.8000 - val_loss: 4.0000e-04");
}
END_TEST

START_TEST(test_running_line_has_an_eta) {
    gb_logs l = logs2(0.5, 1.25);
    /* 10 of 469: int(20 * 10 / 469) = 0 steps of bar done; ETA 459 * 6 ms */
    expect_line(1, 10, 469, 0.1, 0.006, false, &l, false,
                " 10/469 ━━━━━━━━━━━━━━━━━━━━ 2s 6ms/step - accuracy: 0.5000 - loss: 1.2500");
    expect_line(1, 100, 469, 0, 0.3, false, NULL, false,
                "100/469 ━━━━━━━━━━━━━━━━━━━━ 1:50 300ms/step");
    expect_line(1, 5, 10, 0, 800, false, NULL, false, " 5/10 ━━━━━━━━━━━━━━━━━━━━ 1:06:40 800s/step");
    /* Colours on a terminal: bold count, green done, white to do. */
    expect_line(1, 5, 10, 0, 2.5e-5, false, NULL, true,
                "\x1b[1m 5/10\x1b[0m \x1b[32m━━━━━━━━━━\x1b[0m\x1b[37m━━━━━━━━━━\x1b[0m "
                "\x1b[1m0s\x1b[0m 25us/step");
}
END_TEST

/* A dataset of unknown length in its first epoch: no bar, no ETA. */
START_TEST(test_unknown_length_line) {
    gb_logs l = logs2(0.5, 1.25);
    expect_line(1, 12, -1, 0.4, 0.03, false, &l, false,
                "12/Unknown 30ms/step - accuracy: 0.5000 - loss: 1.2500");
    expect_line(1, 40, -1, 1.2, 0.03, true, NULL, false, "40/Unknown 1s 30ms/step");
}
END_TEST

START_TEST(test_verbose_2_line) {
    gb_logs l = logs2(0.9, 0.25);
    expect_line(2, 469, 469, 3.4, 0.0066, true, &l, false,
                "469/469 - 3s - 7ms/step - accuracy: 0.9000 - loss: 0.2500");
}
END_TEST

/* ---- what fit writes ------------------------------------------------------------------- */

static double fake_t;
static double fake_clock(void) { return fake_t += 0.25; }

/* 100 samples in batches of 25: 4 steps an epoch. With the clock moving
 * 0.25 s a call — the epoch's start, each step's end, the last line —
 * an epoch takes 1.25 s and a step (after the first) 1/3 s. */
static char *fit_output(int verbose, gb_history **h) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 1}));
    gb_optimizer *opt = gb_sgd(0.1);
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = opt,
                            .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                            .metrics = (const char *[]){"accuracy"}, .nmetrics = 1});
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(100, 4), -1, 1, 7);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(100), 0, 3, 8), GB_I32);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 2;
    o.batch_size = 25;
    o.verbose = verbose;
    o.out = out;
    fake_t = 0;
    gb__train_set_clock(fake_clock);
    *h = gb_model_fit(m, x, y, &o);
    gb__train_set_clock(NULL);
    fclose(out);
    ck_assert_msg(*h, "%s", gb_error_string());
    gb_module_free(m);
    gb_optimizer_free(opt);
    return text;
}

START_TEST(test_fit_writes_one_line_per_epoch_to_a_file) {
    gb_history *h;
    char *text = fit_output(1, &h);
    char want[1024];
    snprintf(want, sizeof want,
             "Epoch 1/2\n"
             "4/4 ━━━━━━━━━━━━━━━━━━━━ 1s 333ms/step - accuracy: %.4f - loss: %.4f\n"
             "Epoch 2/2\n"
             "4/4 ━━━━━━━━━━━━━━━━━━━━ 1s 333ms/step - accuracy: %.4f - loss: %.4f\n",
             gb_history_value(h, "accuracy", 0), gb_history_value(h, "loss", 0),
             gb_history_value(h, "accuracy", 1), gb_history_value(h, "loss", 1));
    ck_assert_str_eq(text, want);
    free(text);
    gb_history_free(h);
}
END_TEST

START_TEST(test_fit_verbose_2) {
    gb_history *h;
    char *text = fit_output(2, &h);
    char want[1024];
    snprintf(want, sizeof want,
             "Epoch 1/2\n4/4 - 1s - 333ms/step - accuracy: %.4f - loss: %.4f\n"
             "Epoch 2/2\n4/4 - 1s - 333ms/step - accuracy: %.4f - loss: %.4f\n",
             gb_history_value(h, "accuracy", 0), gb_history_value(h, "loss", 0),
             gb_history_value(h, "accuracy", 1), gb_history_value(h, "loss", 1));
    ck_assert_str_eq(text, want);
    free(text);
    gb_history_free(h);
}
END_TEST

/* ---- printing through the bar (gb_train_print) ----------------------------------------- */

/* What a terminal shows for text: '\r' returns to the line's start and
 * later characters overwrite, '\n' ends the line; a UTF-8 character takes
 * one cell and a colour code ("\x1b[...m") none. Rows into screen[],
 * each cell's bytes concatenated; returns the index of the last row. */
enum { CELLS = 200 };
static int render(const char *text, char screen[][CELLS * 4 + 1], int max) {
    static char cells[CELLS][5];
    int row = 0, col = 0, width = 0;
    for (const char *c = text;; ) {
        if (!*c || *c == '\n') {
            screen[row][0] = '\0';
            for (int k = 0; k < width; k++) strcat(screen[row], cells[k]);
            if (!*c || row + 1 == max) return row;
            row++, col = width = 0, c++;
        } else if (*c == '\r') {
            col = 0, c++;
        } else if (*c == '\x1b') {
            while (*c && *c != 'm') c++;
            if (*c) c++;
        } else {
            int n = 1;
            while (((unsigned char)c[n] & 0xC0) == 0x80) n++;
            if (col < CELLS) {
                memcpy(cells[col], c, (size_t)n);
                cells[col][n] = '\0';
                if (++col > width) width = col;
            }
            c += n;
        }
    }
}

static void say_at_batch_1(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)logs, (void)user;
    if (batch == 1) gb_train_print(s, "a note at batch %lld", (long long)batch);
}

/* A 4-3 model compiled with SGD, and 100 samples of 3 classes, for the
 * tests of what prints beside a live bar. */
static gb_module *small_model(gb_optimizer **opt, gb_tensor **x, gb_tensor **y) {
    gb_module *m = gb_sequential_new("model");
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 1}));
    *opt = gb_sgd(0.1);
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = *opt,
                            .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    *x = gb_random_uniform(GB_F32, GB_SHAPE(100, 4), -1, 1, 7);
    *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(100), 0, 3, 8), GB_I32);
    return m;
}

/* One epoch in batches of 25 on a terminal (forced) with the fake clock,
 * printing to out, with callback cb. */
static gb_history *fit_on_terminal(gb_module *m, gb_tensor *x, gb_tensor *y, FILE *out,
                                   gb_callback *cb) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1;
    o.batch_size = 25;
    o.out = out;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    fake_t = 0;
    gb__train_set_clock(fake_clock);
    gb__progbar_force_terminal(true);
    gb_history *h = gb_model_fit(m, x, y, &o);
    gb__progbar_force_terminal(false);
    gb__train_set_clock(NULL);
    return h;
}

/* On a terminal the bar is redrawn in place; a callback's line printed
 * mid-epoch stands on a line of its own, whole, and the bar goes on below
 * it (printf there would leave "2/4 ━━━...a note" on one line). */
START_TEST(test_print_goes_above_a_live_bar) {
    gb_optimizer *opt;
    gb_tensor *x, *y;
    gb_module *m = small_model(&opt, &x, &y);
    gb_callback *note = gb_lambda(&(gb_lambda_callback){.on_batch_end = say_at_batch_1});
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    gb_history *h = fit_on_terminal(m, x, y, out, note);
    fclose(out);
    ck_assert_msg(h, "%s", gb_error_string());
    char screen[8][CELLS * 4 + 1];
    int rows = render(text, screen, 8);
    ck_assert_int_eq(rows, 2);   /* the note, the bar's last line, and the empty line after it */
    size_t n = strlen(screen[0]);
    while (n && screen[0][n - 1] == ' ') screen[0][--n] = '\0';   /* the blanked bar's cells */
    ck_assert_str_eq(screen[0], "a note at batch 1");
    ck_assert_msg(!strncmp(screen[1], "4/4 ", 4), "'%s'", screen[1]);
    free(text);
    gb_history_free(h);
    gb_callback_free(note);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static void warn_at_batch_1(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)s, (void)logs, (void)user;
    if (batch == 1) gb__warn("a warning at batch %lld", (long long)batch);
}

/* The engine's warnings go to stderr, which shares the terminal with the
 * bar: while the bar is live they too stand on a line of their own above
 * it. (The bar's stream and stderr append to one file here, in order.) */
START_TEST(test_engine_warning_goes_above_a_live_bar) {
    gb_optimizer *opt;
    gb_tensor *x, *y;
    gb_module *m = small_model(&opt, &x, &y);
    gb_callback *warn = gb_lambda(&(gb_lambda_callback){.on_batch_end = warn_at_batch_1});
    char path[] = "/tmp/gb_progbar_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    int appending = open(path, O_WRONLY | O_APPEND), saved_stderr = dup(2);
    FILE *out = fdopen(appending, "a");
    dup2(appending, 2);
    gb_history *h = fit_on_terminal(m, x, y, out, warn);
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    fclose(out);
    ck_assert_msg(h, "%s", gb_error_string());
    char text[8192];
    FILE *f = fdopen(fd, "r");
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    char screen[8][CELLS * 4 + 1];
    ck_assert_int_eq(render(text, screen, 8), 2);
    size_t len = strlen(screen[0]);
    while (len && screen[0][len - 1] == ' ') screen[0][--len] = '\0';
    ck_assert_str_eq(screen[0], "glassbox warning: a warning at batch 1");
    ck_assert_msg(!strncmp(screen[1], "4/4 ", 4), "'%s'", screen[1]);
    gb_history_free(h);
    gb_callback_free(warn);
    gb_module_free(m);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("train_progbar");
    TCase *tc = tcase_create("progbar");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_final_line);
    tcase_add_test(tc, test_running_line_has_an_eta);
    tcase_add_test(tc, test_unknown_length_line);
    tcase_add_test(tc, test_verbose_2_line);
    tcase_add_test(tc, test_fit_writes_one_line_per_epoch_to_a_file);
    tcase_add_test(tc, test_fit_verbose_2);
    tcase_add_test(tc, test_print_goes_above_a_live_bar);
    tcase_add_test(tc, test_engine_warning_goes_above_a_live_bar);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
