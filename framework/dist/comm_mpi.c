/* dist/comm_mpi.c — the transport over MPI: joining the job and the
 * nonblocking collectives the layer above waits for (wait_mpi.c).
 *
 * Built when CMake finds MPI. A program started without an MPI launcher
 * (no mpirun, srun, ...) never calls MPI_Init: it is a job of one, as in
 * the build without MPI, and costs nothing. Under a launcher, glassbox
 * works on duplicates of MPI_COMM_WORLD — its own collectives, and a
 * control communicator for the pings that name a lost rank — with errors
 * returned, not fatal, so a failure becomes a glassbox error.
 *
 * Collectives are nonblocking (MPI_Iallreduce, MPI_Ibcast, MPI_Igather):
 * a blocking one could wait forever for a dead rank, which Open MPI does
 * not detect on shared memory. Each is a ticket in a small table until
 * gb__comm_wait sees it complete or its deadline pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dist/comm_mpi.h"

gb__mpi gb__mpi_state = {.comm = MPI_COMM_NULL, .ctrl = MPI_COMM_NULL};
#define M gb__mpi_state

bool gb__comm_available(void) { return true; }
bool gb__comm_broken(void) { return M.broken; }

/* Launched by mpirun (Open MPI), mpiexec.hydra (MPICH), srun (Slurm) or
 * another PMI launcher: the variables they give every process. */
static bool launched(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                       "PMI_RANK", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return true;
    return false;
}

/* An MPI error code as text, into buf. */
static const char *mpi_text(int rc, char *buf) {
    int len = 0;
    if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) snprintf(buf, 64, "MPI error %d", rc);
    return buf;
}

/* Records that a call failed before anything was in flight. */
static bool call_failed(const char *call, int rc) {
    char text[MPI_MAX_ERROR_STRING];
    gb__error(GB_ERR_UNAVAILABLE, NULL, "%s failed: %s", call, mpi_text(rc, text));
    return false;
}

/* ---- tickets -------------------------------------------------------------------------- */

/* A free ticket for a collective about to start, or -1 (error recorded).
 * A ticket returned holds gb__mpi_lock until started() lets it go. */
static int take_ticket(const char *what) {
    if (M.broken) {
        gb__error(GB_ERR_UNAVAILABLE, NULL, "%s", M.broken_why);
        return -1;
    }
    pthread_mutex_lock(&gb__mpi_lock);
    for (int t = 0; t < GB__MAX_TICKETS; t++)
        if (!M.used[t]) {
            M.used[t] = true;
            M.what[t] = what;
            M.seq[t] = ++M.started;
            M.req[t] = MPI_REQUEST_NULL;
            return t;
        }
    pthread_mutex_unlock(&gb__mpi_lock);
    gb__error(GB_ERR_INTERNAL, NULL, "more than %d collectives in flight", GB__MAX_TICKETS);
    return -1;
}

/* The ticket after its MPI call: kept when the call started (the progress
 * thread then watches it), else freed with the transport marked broken. */
static int started(int t, int rc) {
    pthread_mutex_unlock(&gb__mpi_lock);
    if (rc == MPI_SUCCESS) {
        gb__mpi_progress_kick();
        return t;
    }
    char text[MPI_MAX_ERROR_STRING];
    M.used[t] = false;
    gb__mpi_fail(M.what[t], M.seq[t], mpi_text(rc, text));
    return -1;
}

static MPI_Datatype mpi_type(gb_dtype dt) {
    switch (dt) {
    case GB_F32: return MPI_FLOAT;
    case GB_F64: return MPI_DOUBLE;
    case GB_I32: return MPI_INT32_T;
    case GB_I64: return MPI_INT64_T;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op mpi_op(gb_dist_reduce op) {
    return op == GB_DIST_MAX ? MPI_MAX : op == GB_DIST_MIN ? MPI_MIN : MPI_SUM;
}

/* A job of one: the collective's result is its input; ticket 0 waits for
 * nothing. */
enum { LOCAL_TICKET = 0 };

int gb__comm_iallreduce(void *buf, int64_t count, gb_dtype dt, gb_dist_reduce op,
                        const char *what) {
    if (!M.active) return LOCAL_TICKET;
    if (mpi_type(dt) == MPI_DATATYPE_NULL || count > INT32_MAX) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", what,
                  count > INT32_MAX ? "more than 2^31-1 elements" : "an unsupported dtype");
        return -1;
    }
    int t = take_ticket(what);
    if (t < 0) return -1;
    if (atomic_load_explicit(&gb__prof_on, memory_order_relaxed)) {
        gb_profile_record r = {.start_us = gb__now_us(), .name = what,
                               .kind = GB_PROFILE_COLLECTIVE,
                               .bytes = count * (int64_t)gb_dtype_size(dt)};
        gb__prof_add(&r);
    }
    return started(t, MPI_Iallreduce(MPI_IN_PLACE, buf, (int)count, mpi_type(dt), mpi_op(op),
                                     M.comm, &M.req[t]));
}

int gb__comm_ibcast(void *buf, size_t bytes, int root, const char *what) {
    if (!M.active) return LOCAL_TICKET;
    int t = bytes <= INT32_MAX ? take_ticket(what) : -1;
    if (t < 0) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: more than 2^31-1 bytes", what);
        return -1;
    }
    return started(t, MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, M.comm, &M.req[t]));
}

int gb__comm_igather(const void *send, size_t bytes, void *recv, int root, const char *what) {
    if (!M.active) {
        memmove(recv, send, bytes);
        return LOCAL_TICKET;
    }
    int t = take_ticket(what);
    if (t < 0) return -1;
    return started(t, MPI_Igather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, root,
                                  M.comm, &M.req[t]));
}

void gb__comm_progress(void) {
    if (!M.active || M.broken || pthread_mutex_trylock(&gb__mpi_lock) != 0) return;
    for (int t = 0; t < GB__MAX_TICKETS; t++) {
        if (!M.used[t] || M.req[t] == MPI_REQUEST_NULL) continue;
        int done = 0;
        MPI_Test(&M.req[t], &done, MPI_STATUS_IGNORE);   /* errors: the wait reports them */
        break;   /* one test drives all of MPI's progress */
    }
    pthread_mutex_unlock(&gb__mpi_lock);
}

/* ---- joining and leaving ---------------------------------------------------------------- */

/* Every rank's pid and host, for naming the lost ones later. */
static bool exchange_peers(void) {
    M.peers = calloc((size_t)M.size, sizeof *M.peers);
    gb__peer me = {.pid = (int64_t)getpid()};
    gethostname(me.host, sizeof me.host - 1);
    if (!M.peers) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_dist_init: out of memory");
        return false;
    }
    int t = take_ticket("the exchange of process ids at gb_dist_init");
    if (t < 0) return false;
    t = started(t, MPI_Iallgather(&me, sizeof me, MPI_BYTE, M.peers, sizeof me, MPI_BYTE, M.comm,
                                  &M.req[t]));
    return gb__comm_done(t);
}

/* Ranks on this machine (they share its cores). */
static int local_size(void) {
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(M.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

bool gb__comm_init(int *argc, char ***argv, gb__dist *job) {
    *job = (gb__dist){.rank = 0, .size = 1, .local_size = 1, .opt = job->opt};
    if (!launched()) return true;
    int inited = 0, provided, rc;
    MPI_Initialized(&inited);
    if (!inited) {
        /* Serialized: the training thread and the progress thread call
         * MPI, one at a time (gb__mpi_lock). */
        rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
        if (rc != MPI_SUCCESS) return call_failed("MPI_Init_thread", rc);
        M.we_initialized = true;
    } else {
        MPI_Query_thread(&provided);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &M.comm)) != MPI_SUCCESS ||
        (rc = MPI_Comm_dup(MPI_COMM_WORLD, &M.ctrl)) != MPI_SUCCESS)
        return call_failed("MPI_Comm_dup", rc);
    MPI_Comm_set_errhandler(M.comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(M.ctrl, MPI_ERRORS_RETURN);
    MPI_Comm_rank(M.comm, &M.rank);
    MPI_Comm_size(M.comm, &M.size);
    M.active = true;
    gb__mpi_signals_install();
    if (!exchange_peers()) return false;
    job->launched = true;
    job->rank = M.rank;
    job->size = M.size;
    job->local_size = local_size();
    if (M.size > 1 && provided >= MPI_THREAD_SERIALIZED && !job->opt.no_progress_thread)
        gb__mpi_progress_start();
    return true;
}

void gb__comm_finalize(void) {
    if (!M.active) return;
    gb__mpi_progress_stop();
    gb__mpi_signals_restore();
    M.active = false;
    free(M.peers);
    M.peers = NULL;
    /* After a lost rank, MPI_Finalize could wait for it forever. */
    if (M.broken || !M.we_initialized) return;
    MPI_Comm_free(&M.comm);
    MPI_Comm_free(&M.ctrl);
    MPI_Finalize();
}

void gb__comm_abort(int code) {
    if (M.active) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
