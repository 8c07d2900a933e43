/* data/worker.c — the background threads that run prefetching pipelines.
 *
 * A worker runs one job at a time (a prefetch's producer loop, for one
 * epoch) and then waits for the next. Workers are reused rather than made
 * per epoch because each thread keeps scope memory of its own (arenas and
 * their free lists, used by map functions) for as long as it lives: a
 * thread per epoch would leave that memory behind at every exit, a reused
 * one keeps recycling it. There are as many workers as jobs ever ran at
 * once (one per live prefetching iterator); idle ones cost no CPU.
 *
 * Workers block all signals, so Ctrl-C and friends reach the main thread.
 */
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>

#include "data/internal.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_ready = PTHREAD_COND_INITIALIZER;
static gb__job *queue_head, *queue_tail;
static int queued, idle;

static void *worker_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&mu);
    for (;;) {
        idle++;
        while (!queue_head) pthread_cond_wait(&job_ready, &mu);
        idle--;
        gb__job *job = queue_head;
        queue_head = job->next;
        if (!queue_head) queue_tail = NULL;
        queued--;
        pthread_mutex_unlock(&mu);
        job->fn(job->arg);   /* the job's owner may free it once fn signals */
        pthread_mutex_lock(&mu);
    }
    return NULL;
}

/* Starts a detached worker with every signal blocked; 0 or an errno. */
static int spawn(void) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, worker_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

bool gb__worker_run(gb__job *job) {
    pthread_mutex_lock(&mu);
    job->next = NULL;
    if (queue_tail)
        queue_tail->next = job;
    else
        queue_head = job;
    queue_tail = job;
    queued++;
    /* Idle workers that have not yet taken a queued job still count as
     * idle: start a new one only if they cannot cover the queue. */
    int rc = queued > idle ? spawn() : 0;
    if (rc) {
        /* Unqueue it again: nobody will run it. */
        gb__job **p = &queue_head;
        while (*p != job) p = &(*p)->next;
        *p = job->next;
        queue_tail = NULL;
        for (gb__job *j = queue_head; j; j = j->next) queue_tail = j;
        queued--;
    } else {
        pthread_cond_signal(&job_ready);
    }
    pthread_mutex_unlock(&mu);
    if (rc) gb__error(GB_ERR_INTERNAL, NULL, "cannot start a background thread: %s", strerror(rc));
    return rc == 0;
}

/* Consumer thread: a worker's error, with its op type and name; the scope
 * path and call site become the consumer's. */
__attribute__((format(printf, 2, 3)))
static void raise_here(const gb_error *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gb__verror(e->code, e->op_type[0] ? e->op_type : NULL, e->op_name[0] ? e->op_name : NULL,
               fmt, ap);
    va_end(ap);
}

void gb__reraise(const gb_error *e) { raise_here(e, "%s", e->message); }
