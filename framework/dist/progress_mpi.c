/* dist/progress_mpi.c — a helper thread that keeps MPI's nonblocking
 * collectives moving while the training thread computes.
 *
 * Open MPI moves a nonblocking collective (MPI_Iallreduce over shared
 * memory: a schedule of rounds, segment by segment) only inside MPI
 * calls. The tape's hook calls MPI_Test between the records of the
 * backward walk, but one record can be a convolution's backward lasting
 * milliseconds: a bucket started before it would sit there, and overlap
 * would be an illusion (measured: the CNN's wait share was the same with
 * and without overlap). So while a collective is in flight, this thread
 * tests it every few microseconds and sleeps in between; with nothing in
 * flight it waits on a condition variable and costs nothing.
 *
 * MPI is used at MPI_THREAD_SERIALIZED: every MPI call glassbox makes,
 * from either thread, holds gb__mpi_lock. The thread's timer slack is set
 * to 1 us so its short sleeps are short (the default is 50 us).
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include "dist/comm_mpi.h"

#define M gb__mpi_state

pthread_mutex_t gb__mpi_lock = PTHREAD_MUTEX_INITIALIZER;

static long poll_ns = 250000;   /* GB_DIST_PROGRESS_US overrides */

static struct {
    pthread_t thread;
    bool running, stop;
    uint64_t kicks;           /* collectives started, seen by the thread */
    pthread_mutex_t mu;       /* guards the fields above */
    pthread_cond_t wake;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* Tests every collective in flight once; whether one still is. */
static bool poll_once(void) {
    bool pending = false;
    pthread_mutex_lock(&gb__mpi_lock);
    for (int t = 0; t < GB__MAX_TICKETS && !M.broken; t++) {
        int done = 1;
        if (M.used[t] && M.req[t] != MPI_REQUEST_NULL)
            MPI_Test(&M.req[t], &done, MPI_STATUS_IGNORE);   /* errors: the wait reports them */
        pending |= !done;
    }
    pthread_mutex_unlock(&gb__mpi_lock);
    return pending;
}

static void *progress_main(void *arg) {
    (void)arg;
    gb__tl_thread_name = "MPI progress";
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    pthread_mutex_lock(&P.mu);
    uint64_t seen = P.kicks;
    for (;;) {
        while (!P.stop && P.kicks == seen) pthread_cond_wait(&P.wake, &P.mu);
        if (P.stop) break;
        uint64_t now = P.kicks;
        pthread_mutex_unlock(&P.mu);
        bool pending = poll_once();
        if (pending) nanosleep(&(struct timespec){0, poll_ns}, NULL);
        pthread_mutex_lock(&P.mu);
        if (!pending) seen = now;   /* idle until the next collective starts */
    }
    pthread_mutex_unlock(&P.mu);
    return NULL;
}

void gb__mpi_progress_start(void) {
    const char *us = getenv("GB_DIST_PROGRESS_US");
    if (us && atol(us) > 0 && atol(us) < 1000000) poll_ns = atol(us) * 1000;
    P.stop = false;
    P.running = pthread_create(&P.thread, NULL, progress_main, NULL) == 0;
}

void gb__mpi_progress_stop(void) {
    if (!P.running) return;
    pthread_mutex_lock(&P.mu);
    P.stop = true;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.mu);
    pthread_join(P.thread, NULL);
    P.running = false;
}

void gb__mpi_progress_kick(void) {
    if (!P.running) return;
    pthread_mutex_lock(&P.mu);
    P.kicks++;
    pthread_cond_signal(&P.wake);
    pthread_mutex_unlock(&P.mu);
}
