/* write_logdir.c — a logdir at scale for the logdir bench
 * (bench/logdir_scale.bench.mjs): RUNS stores, one run each, TAGS scalar
 * tags per run (named after the run, r0042/m03, so RUNS * TAGS distinct
 * tags: the Scalars page's cards), POINTS scalar points in all, of which
 * the first run's first tag holds LONG (the series the chart is measured
 * on) and the other tags share the rest; histograms and images in proportion (one tag each
 * per run: a histogram every 1000 steps of a tag's length, two images).
 *
 *   write_logdir DIR RUNS TAGS POINTS LONG [WORKERS]
 *
 * Stores are DIR/<group>/run_<r>.db (groups of 100, as a sweep's trials
 * sit in folders). WORKERS processes (default 2) write disjoint runs at
 * once. Values are a deterministic wave with rare spikes, so envelopes
 * have something to keep. Prints the seconds it took on stdout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gb_summary.h"
#include "glassbox.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool write_run(const char *dir, int r, int tags, long long per_tag, long long first_len) {
    char group[600], path[700], tag[32];
    snprintf(group, sizeof group, "%s/group_%02d", dir, r / 100);
    mkdir(group, 0777);
    snprintf(path, sizeof path, "%s/run_%04d.db", group, r);
    gb_summary_options o = {.flush_every_events = 50000, .max_queue_events = 1000000};
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(path, "train", &o, &w) != GB_OK) return false;
    bool ok = true;
    long long longest = 0;
    for (int t = 0; ok && t < tags; t++) {
        long long n = r == 0 && t == 0 ? first_len : per_tag;
        if (n > longest) longest = n;
        snprintf(tag, sizeof tag, "r%04d/m%02d", r, t);   /* 10,000 distinct tags in all */
        for (long long s = 0; ok && s < n; s++) {
            double v = sin((double)s * 1e-3 + t) + (s % 99991 == 5 ? 10.0 : 0.0);
            ok = gb_summary_scalar(w, tag, v, s) == GB_OK;
        }
    }
    gb_scope_begin();
    double hv[64];
    for (int i = 0; i < 64; i++) hv[i] = sin(i + r);
    for (long long s = 0; ok && s < longest; s += 1000)
        ok = gb_summary_histogram(w, "weights", gb_from_f64(hv, GB_SHAPE(64)), s) == GB_OK;
    unsigned char px[2 * 16 * 16 * 3];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 7 + r);
    ok = ok && gb_summary_image(w, "samples", gb_tensor_from(GB_U8, px, GB_SHAPE(2, 16, 16, 3)), 2, 0) == GB_OK;
    gb_scope_end();
    return gb_summary_writer_close(w) == GB_OK && ok;
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: write_logdir DIR RUNS TAGS POINTS LONG [WORKERS]\n");
        return 2;
    }
    int runs = atoi(argv[2]), tags = atoi(argv[3]), workers = argc == 7 ? atoi(argv[6]) : 2;
    long long points = atoll(argv[4]), first_len = atoll(argv[5]);
    if (runs < 1 || tags < 1 || points < first_len || first_len < 1 || workers < 1) {
        fprintf(stderr, "write_logdir: RUNS, TAGS, LONG >= 1, POINTS >= LONG, WORKERS >= 1\n");
        return 2;
    }
    long long per_tag = (points - first_len) / ((long long)runs * tags - 1 > 0 ? (long long)runs * tags - 1 : 1);
    mkdir(argv[1], 0777);
    double t0 = now_s();
    for (int k = 0; k < workers; k++) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            for (int r = k; r < runs; r += workers)
                if (!write_run(argv[1], r, tags, per_tag, first_len)) {
                    fprintf(stderr, "write_logdir: run %d: %s\n", r, gb_summary_last_error());
                    _exit(1);
                }
            _exit(0);
        }
    }
    int failed = 0, status;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status);
    printf("%.1f\n", now_s() - t0);
    return failed;
}
