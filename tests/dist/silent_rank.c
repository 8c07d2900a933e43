/* silent_rank.c — a rank that hangs outside any collective: the others'
 * collective fails at its deadline, naming it as alive but silent, and
 * every later collective fails at once (tests/dist.cmake).
 *
 *   GB_DIST_TIMEOUT=2 mpirun -np 2 silent_rank
 * Rank 1 joins one allreduce, then sleeps. Rank 0 checks its second
 * allreduce's error and timing, prints "silent rank test: OK" when all is
 * as it should be (else what is not), and ends the job.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "glassbox.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check(bool ok, const char *what) {
    if (!ok) printf("silent rank test: FAILED: %s\n", what);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    if (!gb_dist_init(&argc, &argv) || gb_dist_size() != 2) {
        printf("silent rank test: needs 2 ranks under mpirun (%s)\n", gb_error_string());
        return 1;
    }
    double v = 1, timeout = gb_dist_get_options().timeout_seconds;
    if (!gb_dist_allreduce_doubles(&v, 1, GB_DIST_SUM) || v != 2) return 1;
    if (gb_dist_rank() == 1) {
        sleep(60);   /* hangs, outside glassbox's collectives; the job ends first */
        return 1;
    }
    double t0 = now();
    bool ok = gb_dist_allreduce_doubles(&v, 1, GB_DIST_SUM);
    double waited = now() - t0;
    const gb_error *e = gb_last_error();
    char want[128];
    snprintf(want, sizeof want, "rank 1 (pid ");
    printf("after %.2f s: %s\n", waited, gb_error_string());
    int bad = check(!ok && e && e->code == GB_ERR_UNAVAILABLE, "the collective did not fail");
    bad += check(e && strstr(e->message, "rank 0: gb_dist_allreduce_doubles (collective #3) did "
                                         "not complete within"),
                 "the message does not name the collective and the deadline");
    bad += check(e && strstr(e->message, "rank 1 (pid ") &&
                     strstr(e->message, "does not answer: it died or hangs outside"),
                 "the message does not name rank 1 as silent");
    bad += check(waited >= timeout && waited < timeout + 3, "the wait was not bounded by the timeout");
    gb_clear_error();
    t0 = now();
    ok = gb_dist_barrier();
    bad += check(!ok && now() - t0 < 0.1 && gb_last_error()->code == GB_ERR_UNAVAILABLE,
                 "a later collective did not fail at once");
    gb_dist_finalize();   /* after a lost rank: returns without waiting for it */
    if (!bad) printf("silent rank test: OK\n");
    fflush(stdout);
    gb_dist_abort(bad ? 1 : 0);   /* rank 1 still sleeps: end the job */
}
