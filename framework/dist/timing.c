/* dist/timing.c — every rank's step time and allreduce wait, as events on
 * rank 0, so the dashboard shows a straggler.
 *
 * In synchronous data parallelism every rank's step lasts as long as the
 * slowest rank's: the step times alone look alike. What differs is how a
 * step splits: a straggler computes longer and hardly waits; the others
 * wait for it in the allreduce. So each step records its wall time (from
 * the end of the previous averaging to the end of this one), the time
 * spent waiting for the allreduce after backward, and their difference,
 * the compute. Every timing_every steps the ranks gather their records to
 * rank 0 (one small gather), which emits them as GB_EVENT_SCALAR events
 * under the run "rank_<r>": the summary writer there stores them beside
 * its own run, one run per rank, overlaid on the Scalars page. A job of
 * one emits none: a single process has no straggler to show, and a lone
 * "<run>/rank_0" run would only clutter the run list.
 *
 * GB_DIST_SLOW_RANK=r (GB_DIST_SLOW_MS=m, default 20) makes rank r sleep
 * m ms at the start of each averaging: a straggler on purpose.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dist/internal.h"

static const char *const TAGS[3] = {"dist/step_time_ms", "dist/allreduce_ms", "dist/compute_ms"};

/* Each record: step, step_ms, allreduce_ms, the wall time it ended. */
enum { FIELDS = 4 };

static struct {
    double last_end;          /* ms; 0 before the first step ends */
    double wait_start;
    int64_t steps;
    gb_dist_stats stats;
    double *records;          /* [1 + FIELDS * every]: the count, then records */
    int every;
    double *gathered;         /* rank 0: every rank's block */
} T;

double gb__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gb__timing_step_begin(void) {
    static int slow_rank = -2;
    static double slow_ms;
    if (slow_rank == -2) {
        const char *r = getenv("GB_DIST_SLOW_RANK"), *ms = getenv("GB_DIST_SLOW_MS");
        slow_rank = r && *r ? atoi(r) : -1;
        slow_ms = ms && *ms ? atof(ms) : 20;
    }
    if (slow_rank != gb__dist_job()->rank || !(slow_ms > 0)) return;
    double s = slow_ms * 1e-3;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

void gb__timing_wait_begin(void) { T.wait_start = gb__now_ms(); }

gb_dist_stats gb_dist_get_stats(void) { return T.stats; }

void gb_dist_reset_stats(void) {
    int64_t steps = T.stats.steps;
    T.stats = (gb_dist_stats){.steps = steps};
}

/* The record buffers for blocks of `every` steps; false after an error. */
static bool ensure_buffers(int every, int size) {
    if (T.records && T.every == every) return true;
    free(T.records);
    free(T.gathered);
    size_t block = 1 + (size_t)FIELDS * (size_t)every;
    T.records = calloc(block, sizeof *T.records);
    T.gathered = calloc(block * (size_t)size, sizeof *T.gathered);
    T.every = every;
    if (T.records && T.gathered) return true;
    gb__error(GB_ERR_MEMORY, NULL, "step timings: out of memory");
    return false;
}

/* Rank 0: each rank's records as three scalar events each. */
static void emit(const double *blocks, int size, size_t block) {
    if (!gb_observer_wants(GB_EVENT_SCALAR)) return;
    for (int r = 0; r < size; r++) {
        const double *b = blocks + (size_t)r * block;
        char run[32];
        snprintf(run, sizeof run, "rank_%d", r);
        for (int i = 0; i < (int)b[0] && i < T.every; i++) {
            const double *rec = b + 1 + FIELDS * i;
            double values[3] = {rec[1], rec[2], rec[1] - rec[2]};
            for (int k = 0; k < 3; k++) {
                gb_scalar_event s = {.tag = TAGS[k], .value = values[k], .step = (int64_t)rec[0],
                                     .run = run};
                gb_event ev = {.kind = GB_EVENT_SCALAR, .wall_time = rec[3],
                               .message = TAGS[k], .detail = &s};
                gb_observer_emit(&ev);
            }
        }
    }
}

bool gb__timing_flush(void) {
    const gb__dist *job = gb__dist_job();
    if (!T.records || T.records[0] == 0) return true;
    size_t block = 1 + (size_t)FIELDS * (size_t)T.every;
    int t = gb__comm_igather(T.records, block * sizeof *T.records, T.gathered, 0,
                             "the gather of step timings to rank 0");
    bool ok = gb__comm_done(t);
    if (ok && job->rank == 0) emit(T.gathered, job->size, block);
    T.records[0] = 0;
    return ok;
}

bool gb_dist_flush_timings(void) { return gb_ok() && gb__timing_flush(); }

bool gb__timing_step_end(void) {
    const gb__dist *job = gb__dist_job();
    double now = gb__now_ms(), step_ms = now - T.last_end, wait_ms = now - T.wait_start;
    bool first = T.last_end == 0;
    T.last_end = now;
    int64_t step = T.steps++;
    T.stats.steps = T.steps;
    if (first) return true;   /* no previous end to measure from */
    T.stats.step_ms = step_ms;
    T.stats.allreduce_ms = wait_ms;
    T.stats.total_step_ms += step_ms;
    T.stats.total_allreduce_ms += wait_ms;
    T.stats.timed_steps++;
    /* A job of one has no ranks to compare: its stats are kept (above),
     * but no per-rank run is written beside the training's own. */
    if (job->size == 1) return true;
    if (!ensure_buffers(job->opt.timing_every, job->size)) return false;
    double *rec = T.records + 1 + FIELDS * (int)T.records[0];
    rec[0] = (double)step, rec[1] = step_ms, rec[2] = wait_ms, rec[3] = wall_now();
    return ++T.records[0] < T.every || gb__timing_flush();
}
