/* test_io_checkpoint_kill.c — checkpoints survive SIGKILL mid-write.
 *
 * A forked child writes checkpoints of a 3 MB model in a loop, each with
 * new values (every weight and a step variable hold the step number); the
 * parent SIGKILLs it after a random delay, 20 times, delays spread over a
 * few write times so kills land before, during and after writes. After
 * each kill a restore must succeed and be whole: every element of every
 * tensor carries the step the step variable says, never older than the
 * previous round's (the last complete checkpoint always restores, a torn
 * one is never accepted). A kill mid-write leaves "<path>.tmp"; the next
 * write reuses that name, so at most one is ever there and a last clean
 * write leaves none.
 *
 * The same through the CheckpointManager (max_to_keep 2): after each kill
 * a new manager opens the directory — its state file always parses and
 * lists only whole checkpoints that exist, leftover temporary files are
 * removed — and restore_or_initialize restores a whole checkpoint.
 *
 * Delays come from a fixed seed; what the kills hit still varies with the
 * machine's timing, so the test also counts the kills that landed
 * mid-write (a temporary file was there) and the rounds that wrote
 * something, and requires both, so it cannot pass by killing only idle
 * children; while either is missing it runs more rounds (at most 60),
 * with longer delays. Each test is bounded to 20 s (it takes about 1 s).
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

enum { KILLS = 20, MAX_ROUNDS = 60, WIDTH = 512, LAYERS = 3 };

/* What both sides hold: the model (3 Dense layers of 512x512, 3 MB), a
 * step variable, the checkpoint tracking both. */
typedef struct rig {
    gb_module *model;
    gb_variable *step;
    gb_checkpoint *ck;
} rig;

static rig rig_new(void) {
    rig r = {.model = gb_sequential_new("big")};
    for (int i = 0; i < LAYERS; i++) gb_sequential_add(r.model, gb_dense_new(WIDTH, NULL));
    ck_assert(gb_module_build(r.model, GB_F32, GB_SHAPE(-1, WIDTH)));
    r.step = gb_variable_new("step", gb_scalar(GB_I64, 0), false);
    r.ck = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(r.ck, "model", r.model));
    ck_assert(gb_checkpoint_track_variable(r.ck, "step", r.step));
    return r;
}

static void rig_free(rig *r) {
    gb_checkpoint_free(r->ck);
    gb_variable_free(r->step);
    gb_module_free(r->model);
}

/* Every weight and the step variable set to step. */
static bool set_step(rig *r, int64_t step) {
    int n = 0;
    gb_variable *const *vars = gb_module_variables(r->model, &n);
    bool ok = true;
    for (int i = 0; ok && i < n; i++)
        ok = gb_variable_assign(vars[i], gb_fill(GB_F32, gb_variable_rank(vars[i]),
                                                 gb_variable_shape(vars[i]), (double)step));
    return ok && gb_variable_assign(r->step, gb_scalar(GB_I64, (double)step));
}

/* The step the restored values carry; fails the test unless every element
 * of every weight carries it too. */
static int64_t consistent_step(rig *r, int round) {
    int64_t step = (int64_t)gb_item(gb_variable_value(r->step));
    int n = 0;
    gb_variable *const *vars = gb_module_variables(r->model, &n);
    for (int i = 0; i < n; i++) {
        gb_tensor *v = gb_variable_value(vars[i]);
        const float *d = gb_data(v);
        int64_t k = 0, size = gb_size(v);
        while (k < size && d[k] == (float)step) k++;   /* (a ck_assert per element is slow) */
        ck_assert_msg(k == size, "round %d: %s[%lld] is %g, the step is %lld (torn)", round,
                      gb_variable_name(vars[i]), (long long)k, d[k < size ? k : 0], (long long)step);
    }
    return step;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* How a child saves one step: straight to ckpt_path(), or through a manager. */
typedef bool (*save_fn)(rig *r, gb_checkpoint_manager *mgr, int64_t step);

static bool save_to_path(rig *r, gb_checkpoint_manager *mgr, int64_t step) {
    (void)mgr, (void)step;
    return gb_checkpoint_write(r->ck, ckpt_path());
}

static bool save_with_manager(rig *r, gb_checkpoint_manager *mgr, int64_t step) {
    (void)r;
    return gb_checkpoint_manager_save(mgr, step) != NULL;
}

static const gb_checkpoint_manager_options manager_options = {.max_to_keep = 2};

/* The child: saves steps first, first + 1, ... until killed. Dies with
 * its parent; exits 3 if a save fails (never expected). */
static void writer_child(rig *r, save_fn save, int64_t first) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    gb_checkpoint_manager *mgr = save == save_with_manager
                                     ? gb_checkpoint_manager_new(r->ck, test_dir(), &manager_options)
                                     : NULL;
    for (int64_t step = first;; step++) {
        gb_scope_begin();
        bool ok = set_step(r, step) && save(r, mgr, step);
        gb_scope_end();
        if (!ok) {
            fprintf(stderr, "writer child: %s\n", gb_error_string());
            _exit(3);
        }
    }
}

/* Forks a writer from step first, SIGKILLs it after delay_us. */
static void kill_a_writer(rig *r, save_fn save, int64_t first, long delay_us) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) writer_child(r, save, first);
    struct timespec d = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    nanosleep(&d, NULL);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the writer ended by itself (status %d) instead of being killed", status);
}

/* How many names in the test directory end with ".tmp". */
static int temp_files(void) {
    DIR *d = opendir(test_dir());
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0;
    }
    closedir(d);
    return n;
}

/* The parent's side of one round after the kill: the restored step
 * (checked whole), through a fresh manager when with_manager. */
static int64_t restore_after_kill(rig *r, bool with_manager, int round) {
    gb_restore_status st;
    if (!with_manager) {
        ck_assert_msg(gb_checkpoint_restore(r->ck, ckpt_path(), &st), "round %d: %s", round,
                      gb_error_string());
    } else {
        gb_checkpoint_manager *mgr = gb_checkpoint_manager_new(r->ck, test_dir(), &manager_options);
        ck_assert_msg(mgr != NULL, "round %d: %s", round, gb_error_string());
        ck_assert_int_eq(gb_checkpoint_manager_missing(mgr, NULL, 0), 0);
        ck_assert_int_eq(temp_files(), 0);   /* removed by the manager */
        ck_assert_int_eq(gb_checkpoint_manager_restore_or_initialize(mgr, &st), GB_CKPT_RESTORED);
        gb_checkpoint_manager_free(mgr);
    }
    ck_assert(gb_restore_assert_consumed(&st));
    return consistent_step(r, round);
}

static void kill_writers(save_fn save) {
    bool with_manager = save == save_with_manager;
    rig r = rig_new();
    gb_checkpoint_manager *mgr = with_manager ? gb_checkpoint_manager_new(r.ck, test_dir(), &manager_options) : NULL;
    double t = seconds();
    ck_assert(set_step(&r, 0) && save(&r, mgr, 0));   /* what the first round restores at worst */
    long write_us = (long)((seconds() - t) * 1e6);
    gb_checkpoint_manager_free(mgr);

    unsigned seed = 12345;
    int64_t last = 0;
    int mid_write = 0, advanced = 0;
    /* KILLS rounds, and more while no kill has yet landed mid-write or no
     * round completed a write (a loaded machine writes slower than the
     * first write measured), the delays' spread doubling every KILLS
     * rounds (twice at most). */
    for (int round = 0; round < KILLS || ((!mid_write || !advanced) && round < MAX_ROUNDS);
         round++) {
        /* Up to three write times: some kills before the first write ends,
         * some during a later one, some between writes. */
        unsigned spread = (unsigned)(3 * write_us + 1000) << (round < 2 * KILLS ? round / KILLS : 2);
        long delay_us = 200 + (long)(rand_r(&seed) % spread);
        kill_a_writer(&r, save, last + 1, delay_us);
        int temps = temp_files();
        ck_assert_int_le(temps, 1);   /* the file being written: a checkpoint or the state */
        mid_write += temps > 0;
        int64_t step = restore_after_kill(&r, with_manager, round);
        ck_assert_msg(step >= last, "round %d restored step %lld, older than %lld", round,
                      (long long)step, (long long)last);
        advanced += step > last;
        last = step;
    }
    ck_assert_msg(mid_write > 0, "no kill landed mid-write (write %ld us)", write_us);
    ck_assert_msg(advanced > 0, "no round completed a write (write %ld us)", write_us);
    /* A clean write after all that leaves no temporary file. */
    mgr = with_manager ? gb_checkpoint_manager_new(r.ck, test_dir(), &manager_options) : NULL;
    ck_assert(save(&r, mgr, last + 1));
    ck_assert_int_eq(temp_files(), 0);
    gb_checkpoint_manager_free(mgr);
    rig_free(&r);
}

START_TEST(test_sigkill_during_checkpoint_writes) { kill_writers(save_to_path); }
END_TEST

START_TEST(test_sigkill_during_manager_saves) { kill_writers(save_with_manager); }
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("io_checkpoint_kill");
    TCase *tc = tcase_create("kill");
    tcase_add_checked_fixture(tc, ckpt_dir_setup, ckpt_dir_teardown);
    tcase_set_timeout(tc, 20);   /* each: a hang fails, a slow machine does not */
    tcase_add_test(tc, test_sigkill_during_checkpoint_writes);
    tcase_add_test(tc, test_sigkill_during_manager_saves);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
