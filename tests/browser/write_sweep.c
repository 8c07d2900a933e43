/* write_sweep.c — a synthetic hyperparameter sweep for the HParams page's
 * browser test and bench: an experiment of H hparams and M metrics and R
 * runs, each with deterministic values, written in a few seconds.
 *
 *   write_sweep DB RUNS HPARAMS METRICS [FIRST]
 *
 * hparams: lr (1e-4 .. 1e-2, log-spaced, discrete), batch_size (32, 64,
 * 128), optimizer (adam, sgd, rmsprop), dropout (0 .. 0.5), then x4, x5 ...
 * (reals in 0 .. 1); metrics: val_accuracy (higher is better), val_loss,
 * then m2, m3 ... Each run writes its metrics at steps 0..4. val_accuracy
 * is highest near lr 1e-3 and low dropout, so sorting has a clear winner.
 * Runs are named run_000 ... from FIRST (default 0); with FIRST 0 the
 * experiment is declared, and run_002 is a process killed by SIGKILL in
 * the middle of its run (its status stays "running"; readers see it
 * killed, never finished).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_summary.h"

#define MAX_H 16
#define MAX_M 16

static const double lrs[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2};
static const double batches[] = {32, 64, 128};
static const char *const optimizers[] = {"adam", "sgd", "rmsprop"};

static double noise(unsigned k) {   /* deterministic in [0, 1) */
    k = (k ^ 61u) ^ (k >> 16);
    k *= 9u;
    k ^= k >> 4;
    k *= 0x27d4eb2du;
    k ^= k >> 15;
    return (double)(k % 10007u) / 10007.0;
}

static bool declare(gb_summary_writer *w, int nh, int nm) {
    gb_hparam_domain hp[MAX_H] = {
        {.name = "lr", .display_name = "learning rate", .type = GB_HPARAM_REAL,
         .domain = GB_DOMAIN_DISCRETE, .value_count = 5, .values = lrs},
        {.name = "batch_size", .type = GB_HPARAM_INT, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 3, .values = batches},
        {.name = "optimizer", .type = GB_HPARAM_STRING, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 3, .strings = optimizers},
        {.name = "dropout", .type = GB_HPARAM_REAL, .domain = GB_DOMAIN_INTERVAL, .min = 0,
         .max = 0.5}};
    char hnames[MAX_H][16], mnames[MAX_M][16];
    for (int i = 4; i < nh; i++) {
        snprintf(hnames[i], sizeof hnames[i], "x%d", i);
        hp[i] = (gb_hparam_domain){.name = hnames[i], .type = GB_HPARAM_REAL,
                                   .domain = GB_DOMAIN_INTERVAL, .min = 0, .max = 1};
    }
    gb_hparam_metric m[MAX_M] = {{.tag = "val_accuracy", .higher_is_better = true},
                                 {.tag = "val_loss"}};
    for (int i = 2; i < nm; i++) {
        snprintf(mnames[i], sizeof mnames[i], "m%d", i);
        m[i] = (gb_hparam_metric){.tag = mnames[i]};
    }
    return gb_summary_hparams_config(w, hp, (size_t)nh, m, (size_t)nm) == GB_OK;
}

/* One run's hparams and metrics; kill: die by SIGKILL halfway. */
static bool write_run(const char *db, int r, int nh, int nm, bool first, bool kill) {
    char name[32];
    snprintf(name, sizeof name, "run_%03d", r);
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(db, name, NULL, &w) != GB_OK) return false;
    bool ok = !first || declare(w, nh, nm);
    double lr = lrs[r % 5], dropout = 0.5 * noise((unsigned)r * 7u + 1u);
    ok = ok && gb_summary_hparam_num(w, "lr", lr) == GB_OK &&
         gb_summary_hparam_num(w, "batch_size", batches[(r / 5) % 3]) == GB_OK &&
         gb_summary_hparam_str(w, "optimizer", optimizers[(r / 3) % 3]) == GB_OK &&
         gb_summary_hparam_num(w, "dropout", dropout) == GB_OK;
    for (int i = 4; ok && i < nh; i++) {
        char key[16];
        snprintf(key, sizeof key, "x%d", i);
        ok = gb_summary_hparam_num(w, key, noise((unsigned)(r * 31 + i))) == GB_OK;
    }
    double d = log10(lr) + 3;   /* 0 at lr 1e-3 */
    double best = 0.9 - 0.08 * d * d - 0.2 * dropout + 0.02 * noise((unsigned)r * 13u);
    for (int step = 0; ok && step < 5; step++) {
        double acc = best * (1 - 0.5 * exp(-step));
        ok = gb_summary_scalar(w, "val_accuracy", acc, step) == GB_OK &&
             gb_summary_scalar(w, "val_loss", 2.3 * (1 - acc), step) == GB_OK;
        for (int i = 2; ok && i < nm; i++) {
            char tag[16];
            snprintf(tag, sizeof tag, "m%d", i);
            ok = gb_summary_scalar(w, tag, noise((unsigned)(r * 97 + i * 5 + step)), step) == GB_OK;
        }
        if (kill && step == 2) {
            gb_summary_flush(w);
            raise(SIGKILL);
        }
    }
    if (r % 11 == 7) ok = ok && gb_summary_run_status(w, GB_RUN_FAILED) == GB_OK;
    if (gb_summary_writer_close(w) != GB_OK) ok = false;
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: write_sweep DB RUNS HPARAMS METRICS [FIRST]\n");
        return 2;
    }
    int runs = atoi(argv[2]), nh = atoi(argv[3]), nm = atoi(argv[4]);
    int first = argc == 6 ? atoi(argv[5]) : 0;
    if (runs < 1 || nh < 4 || nh > MAX_H || nm < 2 || nm > MAX_M || first < 0) {
        fprintf(stderr, "write_sweep: RUNS >= 1, HPARAMS 4..%d, METRICS 2..%d\n", MAX_H, MAX_M);
        return 2;
    }
    for (int r = first; r < first + runs; r++) {
        if (first == 0 && r == 2) {   /* killed by SIGKILL in a process of its own */
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0) _exit(write_run(argv[1], r, nh, nm, false, true) ? 0 : 1);
            int status = 0;
            if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) {
                fprintf(stderr, "write_sweep: the run to kill did not die by its signal\n");
                return 1;
            }
            continue;
        }
        if (!write_run(argv[1], r, nh, nm, r == first && first == 0, false)) {
            fprintf(stderr, "write_sweep: %s\n", gb_summary_last_error());
            return 1;
        }
    }
    return 0;
}
