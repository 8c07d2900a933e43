/* dist/wait_mpi.c — waiting for collectives with a deadline, and naming
 * the rank that never came.
 *
 * Open MPI has no timeout on collectives, and on shared memory it does not
 * notice a peer that died: a blocking allreduce would wait forever. So
 * every wait polls its requests (MPI_Test) against a deadline
 * (timeout_seconds) and gives up with a GB_ERR_UNAVAILABLE error. Two
 * things end a wait early:
 *   - mpirun itself, which by default ends the whole job when a rank dies:
 *     it sends the others SIGTERM, then SIGKILL a little later. While a
 *     wait is under way our SIGTERM handler only raises a flag, so the
 *     survivor can say why it stops; outside a wait the signal does what
 *     it did before (the handler puts the old disposition back and raises
 *     it again).
 *   - an error MPI returns (a TCP peer that went away).
 * Then the survivor works out which ranks were lost: a peer on this
 * machine whose process (pid exchanged at init) has exited is named as
 * such; every other peer is pinged on a control communicator — ranks
 * waiting in any glassbox collective answer with the number of the
 * collective they wait in, so a silent rank is dead or stuck elsewhere,
 * and one waiting in another collective means the ranks' programs
 * diverged (e.g. different numbers of steps).
 *
 * Waiting spins at first (a step's allreduce takes tens of microseconds),
 * then yields the core, then sleeps briefly: on a machine with as many
 * ranks as cores, a waiting rank must not take the core its straggling
 * peer needs.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dist/comm_mpi.h"

#define M gb__mpi_state

enum { TAG_PING = 1, TAG_PONG = 2 };

volatile sig_atomic_t gb__mpi_in_wait, gb__mpi_got_term;

/* ---- SIGTERM ---------------------------------------------------------------------------- */

static struct sigaction old_term;
static bool term_installed;

static void on_term(int sig) {
    if (gb__mpi_in_wait) {
        gb__mpi_got_term = 1;
        return;
    }
    sigaction(SIGTERM, &old_term, NULL);   /* both async-signal-safe */
    raise(sig);
}

void gb__mpi_signals_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    term_installed = sigaction(SIGTERM, &sa, &old_term) == 0;
}

void gb__mpi_signals_restore(void) {
    if (term_installed) sigaction(SIGTERM, &old_term, NULL);
    term_installed = false;
}

/* ---- pings ---------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Send buffers of answers must outlive the (freed) requests: one per peer. */
static int64_t *pong_bufs;

void gb__mpi_answer_pings(int64_t seq) {
    int flag = 0;
    MPI_Status st;
    if (!pong_bufs && !(pong_bufs = calloc((size_t)M.size, sizeof *pong_bufs))) return;
    pthread_mutex_lock(&gb__mpi_lock);
    while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PING, M.ctrl, &flag, &st) == MPI_SUCCESS && flag) {
        int64_t theirs;
        MPI_Request r;
        MPI_Recv(&theirs, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_PING, M.ctrl, MPI_STATUS_IGNORE);
        pong_bufs[st.MPI_SOURCE] = seq;
        if (MPI_Isend(&pong_bufs[st.MPI_SOURCE], 1, MPI_INT64_T, st.MPI_SOURCE, TAG_PONG, M.ctrl,
                      &r) == MPI_SUCCESS)
            MPI_Request_free(&r);
    }
    pthread_mutex_unlock(&gb__mpi_lock);
}

/* ---- who was lost ---------------------------------------------------------------------------- */

/* Whether rank r runs on this machine and its process has exited (gone,
 * or a zombie its launcher has not reaped yet). */
static bool exited_here(int r) {
    if (strncmp(M.peers[r].host, M.peers[M.rank].host, GB__HOST_BYTES) != 0) return false;
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)M.peers[r].pid);
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');   /* "pid (comm) S ...": the state after the name */
    return paren && (paren[2] == 'Z' || paren[2] == 'X');
}

/* What each peer says: -1 exited, -2 silent, else the collective it waits in. */
enum { EXITED = -1, SILENT = -2 };

/* Pings every peer not known to have exited and collects the answers for
 * up to `patience` seconds, answering other ranks' pings meanwhile. */
static void ping_peers(int64_t *state, int64_t seq, double patience) {
    /* Sends to silent ranks may never complete: their buffers stay (once per job). */
    static int64_t *bufs;
    if (!bufs && !(bufs = calloc((size_t)M.size, sizeof *bufs))) return;
    int waiting = 0;
    pthread_mutex_lock(&gb__mpi_lock);
    for (int r = 0; r < M.size; r++) {
        MPI_Request q;
        if (r == M.rank || state[r] == EXITED) continue;
        bufs[r] = seq;
        if (MPI_Isend(&bufs[r], 1, MPI_INT64_T, r, TAG_PING, M.ctrl, &q) != MPI_SUCCESS) continue;
        MPI_Request_free(&q);
        waiting++;
    }
    pthread_mutex_unlock(&gb__mpi_lock);
    double until = now_s() + patience;
    while (waiting > 0 && now_s() < until) {
        int flag = 0;
        MPI_Status st;
        gb__mpi_answer_pings(seq);
        pthread_mutex_lock(&gb__mpi_lock);
        int rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG_PONG, M.ctrl, &flag, &st);
        int64_t theirs = 0;
        if (rc == MPI_SUCCESS && flag)
            MPI_Recv(&theirs, 1, MPI_INT64_T, st.MPI_SOURCE, TAG_PONG, M.ctrl, MPI_STATUS_IGNORE);
        pthread_mutex_unlock(&gb__mpi_lock);
        if (rc != MPI_SUCCESS) break;
        if (!flag) {
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            continue;
        }
        if (state[st.MPI_SOURCE] == SILENT) waiting--;
        state[st.MPI_SOURCE] = theirs;
    }
}

/* Appends "; rank r ..." for each lost or diverged peer to buf. Returns
 * how many were named. */
static int describe_peers(const int64_t *state, int64_t seq, char *buf, size_t cap) {
    size_t len = strlen(buf);
    int named = 0, more = 0;
    for (int r = 0; r < M.size; r++) {
        if (r == M.rank || state[r] == seq) continue;
        if (named == 6) {
            more++;
            continue;
        }
        const gb__peer *p = &M.peers[r];
        if (state[r] == EXITED)
            len += (size_t)snprintf(buf + len, cap - len, "; rank %d (pid %lld on %s) has exited",
                                    r, (long long)p->pid, p->host);
        else if (state[r] == SILENT)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "; rank %d (pid %lld on %s) does not answer: it died or "
                                    "hangs outside glassbox's collectives",
                                    r, (long long)p->pid, p->host);
        else
            len += (size_t)snprintf(buf + len, cap - len,
                                    "; rank %d is alive but waits in collective #%lld: the "
                                    "ranks ran different collectives (different numbers of "
                                    "steps?)",
                                    r, (long long)state[r]);
        if (len >= cap) len = cap - 1;
        named++;
    }
    if (more) snprintf(buf + len, cap - len, "; and %d more", more);
    return named + more;
}

void gb__mpi_fail(const char *what, int64_t seq, const char *reason) {
    double timeout = gb__dist_job()->opt.timeout_seconds;
    char *why = M.broken_why;
    size_t cap = sizeof M.broken_why;
    bool term = !strcmp(reason, "term"), deadline = !strcmp(reason, "deadline");
    if (term)
        snprintf(why, cap,
                 "rank %d: the launcher is ending the job (SIGTERM) while this rank waits for "
                 "%s (collective #%lld)",
                 M.rank, what, (long long)seq);
    else if (deadline)
        snprintf(why, cap, "rank %d: %s (collective #%lld) did not complete within %g s", M.rank,
                 what, (long long)seq, timeout);
    else
        snprintf(why, cap, "rank %d: %s (collective #%lld) failed: %s", M.rank, what,
                 (long long)seq, reason);
    M.broken = true;
    int64_t *state = malloc((size_t)M.size * sizeof *state);
    if (state) {
        for (int r = 0; r < M.size; r++) state[r] = r == M.rank ? seq : exited_here(r) ? EXITED : SILENT;
        /* Dying peers do not answer pings: when mpirun ends the job, ask nobody. */
        if (!term) ping_peers(state, seq, timeout / 4 < 2 ? timeout / 4 : 2);
        int named = describe_peers(state, seq, why, cap);
        if (!named)
            snprintf(why + strlen(why), cap - strlen(why), "%s",
                     term ? "; no rank on this machine has exited (a rank elsewhere failed, or "
                            "the job was interrupted)"
                          : "; every rank waits in this same collective: MPI delivers nothing");
        free(state);
    }
    gb__error(GB_ERR_UNAVAILABLE, NULL, "%s", why);
}

/* ---- the wait --------------------------------------------------------------------------------- */

/* Lets the core go to others once a wait is no longer short. */
static void back_off(double waited) {
    if (waited > 0.020)
        nanosleep(&(struct timespec){0, 50000}, NULL);
    else if (waited > 0.000005)
        sched_yield();
}

/* The first unfinished ticket of the list, or -1 when all are done;
 * an MPI error goes to *rc. */
static int first_pending(const int *tickets, int n, int *rc) {
    int pending = -1;
    pthread_mutex_lock(&gb__mpi_lock);
    for (int i = 0; i < n && pending < 0; i++) {
        int t = tickets[i], done = 0;
        if (M.req[t] == MPI_REQUEST_NULL) continue;
        if ((*rc = MPI_Test(&M.req[t], &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || !done)
            pending = t;
    }
    pthread_mutex_unlock(&gb__mpi_lock);
    return pending;
}

static void release(const int *tickets, int n) {
    pthread_mutex_lock(&gb__mpi_lock);
    for (int i = 0; i < n; i++)
        if (tickets[i] >= 0 && tickets[i] < GB__MAX_TICKETS) M.used[tickets[i]] = false;
    pthread_mutex_unlock(&gb__mpi_lock);
}

static bool wait_tickets(const int *tickets, int n);

/* The wait, as the profiler's comm_wait range while a capture runs. */
bool gb__comm_wait(const int *tickets, int n) {
    if (!M.active) return true;
    double t0 = gb__prof_clock();
    bool ok = wait_tickets(tickets, n);
    gb__prof_range(GB_PROFILE_COMM_WAIT, "allreduce wait", t0);
    return ok;
}

static bool wait_tickets(const int *tickets, int n) {
    if (M.broken) {
        release(tickets, n);
        gb__error(GB_ERR_UNAVAILABLE, NULL, "%s", M.broken_why);
        return false;
    }
    double start = now_s(), last_ping = start, timeout = gb__dist_job()->opt.timeout_seconds;
    int rc = MPI_SUCCESS, t;
    gb__mpi_in_wait = 1;
    while ((t = first_pending(tickets, n, &rc)) >= 0) {
        double now = now_s();
        const char *reason = rc != MPI_SUCCESS ? NULL
                             : gb__mpi_got_term ? "term"
                             : now - start > timeout ? "deadline"
                                                     : "";
        if (!reason || *reason) {
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            if (!reason && MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
                snprintf(text, sizeof text, "MPI error %d", rc);
            gb__mpi_fail(M.what[t], M.seq[t], reason ? reason : text);
            break;
        }
        if (now - last_ping > 0.001) {   /* peers diagnosing a timeout want an answer */
            gb__mpi_answer_pings(M.seq[t]);
            last_ping = now;
        }
        back_off(now - start);
    }
    gb__mpi_in_wait = 0;
    release(tickets, n);
    return !M.broken;
}
