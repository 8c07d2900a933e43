/* resume_test_util.h — what the resume tests share (test_train_model_file.c,
 * test_train_backup.c): a Fashion-MNIST-like MLP (784 -> 64 relu -> 10
 * logits) on 2,000 deterministic random samples, compiled with Adam and
 * sparse cross-entropy; a run of fit with shuffling and a fixed seed;
 * running this test program again as a child process (the test binary
 * re-executes itself with "--child ..." arguments, which its main()
 * hands to the child's role instead of running the suite); and exact
 * comparisons of two models' variables and optimizer states.
 *
 * Everything a run depends on is seeded (layer seeds, data seeds, the
 * shuffle's seed), so a child process builds the same model and data as
 * the test that started it. */
#ifndef GB_TEST_RESUME_UTIL_H
#define GB_TEST_RESUME_UTIL_H

#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "glassbox.h"

enum { RT_SAMPLES = 2000, RT_FEATURES = 784, RT_CLASSES = 10, RT_BATCH = 32 };
static const uint64_t RT_SHUFFLE_SEED = 42;

/* The global naming and seed state every run starts from. */
static inline void rt_fresh_session(void) {
    gb_clear_error();
    gb_nn_clear_session();
    gb_nn_set_seed(0);
}

static inline gb_module *rt_mlp(void) {
    gb_module *m = gb_sequential_new("fmnist_mlp");
    gb_sequential_add(m, gb_dense_new(64, &(gb_dense_options){.name = "hidden",
                                                              .activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(RT_CLASSES, &(gb_dense_options){.name = "logits", .seed = 2}));
    gb_module_build(m, GB_F32, 2, (const int64_t[]){-1, RT_FEATURES});
    return m;
}

/* Compiled as every run of these tests is (opt stays the caller's).
 * No Check assertion here or in the other rt_ helpers a child calls: a
 * child process is not a test, and Check refuses to report from it. */
static inline bool rt_compile(gb_module *m, gb_optimizer *opt) {
    return gb_model_compile(m, &(gb_compile_options){
        .optimizer = opt,
        .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
        .metrics = (const char *[]){"accuracy"}, .nmetrics = 1});
}

/* The samples and labels, the same in every process; in the current scope. */
static inline void rt_data(gb_tensor **x, gb_tensor **y) {
    *x = gb_random_uniform(GB_F32, 2, (const int64_t[]){RT_SAMPLES, RT_FEATURES}, 0, 1, 7);
    *y = gb_random_uniform(GB_I32, 1, (const int64_t[]){RT_SAMPLES}, 0, RT_CLASSES, 8);
}

/* fit from initial_epoch to epochs with the given callbacks. */
static inline gb_history *rt_fit(gb_module *m, int initial_epoch, int epochs,
                                 gb_callback *const *cbs, int ncbs) {
    gb_tensor *x, *y;
    rt_data(&x, &y);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.initial_epoch = initial_epoch;
    o.batch_size = RT_BATCH;
    o.seed = RT_SHUFFLE_SEED;
    o.shuffle = true;
    o.verbose = 0;
    o.callbacks = cbs;
    o.ncallbacks = ncbs;
    return gb_model_fit(m, x, y, &o);
}

/* ---- comparisons ----------------------------------------------------------------------- */

/* a and b hold the same bytes in every variable (n of each). */
static inline void rt_assert_same_vars(gb_variable *const *a, gb_variable *const *b, int n) {
    for (int i = 0; i < n; i++) {
        gb_tensor *x = gb_variable_value(a[i]), *y = gb_variable_value(b[i]);
        ck_assert_str_eq(gb_variable_name(a[i]), gb_variable_name(b[i]));
        ck_assert_int_eq(gb_nbytes(x), gb_nbytes(y));
        ck_assert_msg(memcmp(gb_data(x), gb_data(y), gb_nbytes(x)) == 0, "%s differs",
                      gb_variable_name(a[i]));
    }
}

/* Two models with bit-identical weights, optimizer slots and iteration
 * counts; returns how many tensors were compared. */
static inline int rt_assert_same_training_state(gb_module *a, gb_module *b) {
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    gb_variable *const *vb = gb_module_variables(b, &nb);
    ck_assert_int_eq(na, nb);
    rt_assert_same_vars(va, vb, na);
    gb_optimizer *oa = gb_model_optimizer(a), *ob = gb_model_optimizer(b);
    ck_assert_int_eq(gb_optimizer_iterations(oa), gb_optimizer_iterations(ob));
    gb_variable *sa[32], *sb[32];
    int ns = gb_optimizer_slot_variables(oa, sa, 32);
    ck_assert_int_eq(ns, gb_optimizer_slot_variables(ob, sb, 32));
    ck_assert_int_le(ns, 32);
    rt_assert_same_vars(sa, sb, ns);
    return na + ns;
}

/* ---- child processes ------------------------------------------------------------------------ */

/* Starts this program again as "<self> --child <args...>" (NULL-ended),
 * its stdout into out_path (NULL: ours); returns its pid. */
static inline pid_t rt_spawn(const char *const *args, const char *out_path) {
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (out_path && !freopen(out_path, "w", stdout)) _exit(99);
        char *argv[16] = {self, "--child"};
        for (int i = 0; args[i] && i < 13; i++) argv[i + 2] = (char *)args[i];
        execv(self, argv);
        _exit(98);
    }
    return pid;
}

/* Waits for a child; its exit status, or 128 + the signal that ended it. */
static inline int rt_wait(pid_t pid) {
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a child to its end, failing the test unless it exits 0. */
static inline void rt_run_child(const char *const *args, const char *out_path) {
    int code = rt_wait(rt_spawn(args, out_path));
    ck_assert_msg(code == 0, "the child %s exited with %d", args[0], code);
}

/* Waits up to `seconds` for path to exist. */
static inline bool rt_wait_for_file(const char *path, double seconds) {
    struct timespec tick = {0, 5 * 1000 * 1000};
    for (double waited = 0; waited < seconds; waited += 0.005) {
        if (access(path, F_OK) == 0) return true;
        nanosleep(&tick, NULL);
    }
    return false;
}

/* The value written as "<key> <%a>" in a child's output, bit-exact. */
static inline double rt_read_value(const char *out_path, const char *key) {
    FILE *f = fopen(out_path, "r");
    ck_assert_ptr_nonnull(f);
    char k[64], v[64];
    double found = NAN;
    while (fscanf(f, "%63s %63s", k, v) == 2)
        if (strcmp(k, key) == 0) found = strtod(v, NULL);
    fclose(f);
    ck_assert_msg(!isnan(found), "%s: no '%s'", out_path, key);
    return found;
}

/* Prints each epoch's loss and accuracy as "<key>_<epoch> <%a>" for the parent. */
static inline void rt_print_history(const gb_history *h) {
    for (int i = 0; i < gb_history_epochs(h); i++) {
        int e = gb_history_epoch(h, i);
        printf("loss_%d %a\naccuracy_%d %a\n", e, gb_history_value(h, "loss", i), e,
               gb_history_value(h, "accuracy", i));
    }
}

/* The entry at `key` of a history, by epoch number. */
static inline double rt_history_at(const gb_history *h, const char *key, int epoch) {
    for (int i = 0; i < gb_history_epochs(h); i++)
        if (gb_history_epoch(h, i) == epoch) return gb_history_value(h, key, i);
    return NAN;
}

/* Bit-equal doubles (NaN never is). */
static inline bool rt_same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#endif
