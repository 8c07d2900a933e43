/* dist/comm_mpi.h — the MPI transport's state, shared by comm_mpi.c (the
 * collectives) and wait_mpi.c (waiting with a deadline, and naming the
 * ranks that were lost). Included by the *_mpi.c files only: the build
 * without MPI never sees mpi.h.
 */
#ifndef GB_DIST_COMM_MPI_H
#define GB_DIST_COMM_MPI_H

#include <mpi.h>
#include <pthread.h>
#include <signal.h>

#include "dist/internal.h"

enum { GB__MAX_TICKETS = 256, GB__HOST_BYTES = 64 };

/* Where each rank runs, exchanged at init so that a survivor can tell
 * whether a silent peer of its own machine has exited. */
typedef struct gb__peer {
    int64_t pid;
    char host[GB__HOST_BYTES];
} gb__peer;

typedef struct gb__mpi {
    bool active;              /* launched: MPI is ours to use */
    bool we_initialized;      /* we called MPI_Init (so we finalize) */
    MPI_Comm comm;            /* our collectives (a duplicate of the world) */
    MPI_Comm ctrl;            /* pings between waiting ranks, apart from them */
    int rank, size;
    gb__peer *peers;          /* [size] */
    MPI_Request req[GB__MAX_TICKETS];
    bool used[GB__MAX_TICKETS];
    const char *what[GB__MAX_TICKETS];
    int64_t seq[GB__MAX_TICKETS];   /* the collective's number, counted per rank */
    int64_t started;          /* collectives started so far */
    bool broken;              /* a collective failed: no more communication */
    char broken_why[700];
} gb__mpi;
extern gb__mpi gb__mpi_state;

/* Held around every MPI call once the progress thread runs
 * (MPI_THREAD_SERIALIZED; progress_mpi.c). */
extern pthread_mutex_t gb__mpi_lock;
/* The helper thread that tests collectives in flight while the training
 * thread computes: started at init, woken by each collective started,
 * stopped before MPI_Finalize. */
void gb__mpi_progress_start(void);
void gb__mpi_progress_stop(void);
void gb__mpi_progress_kick(void);

/* Set by the SIGTERM handler while a wait is under way (wait_mpi.c). */
extern volatile sig_atomic_t gb__mpi_in_wait, gb__mpi_got_term;

/* Installs the SIGTERM handler (init) and restores the previous one. */
void gb__mpi_signals_install(void);
void gb__mpi_signals_restore(void);
/* Answers the pings of ranks diagnosing a timeout: "I wait in collective
 * #seq". Called from every wait loop. */
void gb__mpi_answer_pings(int64_t seq);
/* Marks the transport broken with a GB_ERR_UNAVAILABLE error: why the
 * collective `what` (number seq) failed, and which ranks were lost.
 * `reason`: "deadline", "term" or an MPI error string. */
void gb__mpi_fail(const char *what, int64_t seq, const char *reason);

#endif
