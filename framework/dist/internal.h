/* dist/internal.h — what the data-parallel layer's files share.
 *
 * dist.c        the job: options, init/finalize, collectives on tensors,
 *               broadcasting variables
 * buckets.c     the bucket plan (which gradients travel together) and
 *               packing them; no communication, so unit-testable alone
 * reducer.c     gradient averaging: the tape hook that packs each gradient
 *               as backward makes it and starts its bucket's allreduce
 * timing.c      per-step timings, gathered to rank 0 as scalar events
 * profile_gather.c  every rank's profiler capture merged on rank 0
 * metrics.c     metric results over all ranks
 * comm_mpi.c    the transport over MPI (built when CMake finds MPI) ...
 * wait_mpi.c    ... its deadline waits and the diagnosis of a lost rank,
 * progress_mpi.c ... and the thread that moves collectives along while
 *               the training thread computes
 * comm_single.c the transport of a job of one (built without MPI)
 *
 * The transport is a handful of nonblocking collectives named by tickets
 * and one wait with a deadline; everything above it is the same with or
 * without MPI. Only the thread that called gb_dist_init starts and waits
 * for collectives (the MPI transport's progress thread only tests them).
 */
#ifndef GB_DIST_INTERNAL_H
#define GB_DIST_INTERNAL_H

#include "gb_dist.h"
#include "nn/internal.h"

/* ---- the job's state (dist.c) -------------------------------------------------------- */

typedef struct gb__dist {
    bool initialized;
    bool launched;            /* under an MPI launcher: the transport talks */
    int rank, size;
    int local_size;           /* ranks on this machine */
    gb_dist_options opt;      /* with the defaults filled in */
} gb__dist;
extern gb__dist gb__dist_state;

/* Divides n floats (float32 or float64) in place by the number of ranks:
 * a sum over the ranks into their mean. */
void gb__divide_by_size(void *data, int64_t n, gb_dtype dt);

/* The job, initialized as a job of one if nobody called gb_dist_init. */
static inline const gb__dist *gb__dist_job(void) { return &gb__dist_state; }

/* profile_gather.c: makes gb_profiler_stop gather every rank's capture
 * to rank 0 (a job of several ranks; captures started with all_ranks). */
void gb__dist_profile_gather_install(void);

/* ---- the transport (comm_mpi.c or comm_single.c) ------------------------------------- */

/* Starts the transport when launched; fills rank, size, local_size.
 * false after an error (recorded). */
bool gb__comm_init(int *argc, char ***argv, gb__dist *job);
/* Leaves the job; skips the goodbye when a rank was lost. */
void gb__comm_finalize(void);
bool gb__comm_available(void);
void gb__comm_abort(int code);

/* Collectives in flight are named by tickets (>= 0); -1 after an error.
 * Buffers must stay put until the ticket is waited for. `what` describes
 * it for errors ("allreduce of gradient bucket 2 of 3"); kept as a pointer. */
int gb__comm_iallreduce(void *buf, int64_t count, gb_dtype dt, gb_dist_reduce op,
                        const char *what);
int gb__comm_ibcast(void *buf, size_t bytes, int root, const char *what);
/* Rank root receives every rank's `bytes` bytes, rank by rank, in recv. */
int gb__comm_igather(const void *send, size_t bytes, void *recv, int root, const char *what);
/* Moves collectives in flight along (between the ops of a backward pass:
 * MPI progresses nonblocking collectives only inside its calls). */
void gb__comm_progress(void);
/* Waits for the tickets until all complete; false, with a GB_ERR_UNAVAILABLE
 * error naming the lost ranks, at the deadline or when the job is being
 * ended. The tickets are free again either way. */
bool gb__comm_wait(const int *tickets, int n);
/* Whether a collective failed before (later ones fail at once). */
bool gb__comm_broken(void);

/* A blocking collective: start, then wait. */
static inline bool gb__comm_done(int ticket) { return ticket >= 0 && gb__comm_wait(&ticket, 1); }

/* ---- buckets (buckets.c) ---------------------------------------------------------------- */

/* Which gradients travel together: variables are taken in reverse order
 * (the order backward finishes them) and packed into buckets of at most
 * bucket_bytes (a bigger variable gets one of its own); a bucket holds
 * one dtype. A plan is made once per list of variables. */
typedef struct gb__bucket {
    int first, count;         /* members: order[first .. first+count) */
    gb_dtype dtype;
    int64_t elements;         /* sum of the members' sizes */
    int pending;              /* members not packed yet this step */
    int ticket;               /* the allreduce in flight, or -1 */
    gb_buffer *buf;           /* heap: the packed gradients; averaged in place */
} gb__bucket;

typedef struct gb__buckets {
    int64_t bucket_bytes;     /* the cap it was made with */
    int nvars;
    gb_variable **vars;       /* copied: the list the plan is for */
    int *order;               /* bucket member order -> variable index */
    int *bucket_of;           /* variable index -> bucket */
    int64_t *offset;          /* variable index -> element offset in its bucket */
    int nbuckets;
    gb__bucket *buckets;
    char (*what)[64];         /* per bucket: its name for errors */
} gb__buckets;

/* A plan for vars[n] with buckets of at most bucket_bytes; NULL after an
 * error. Buffers are made on first use. */
gb__buckets *gb__buckets_new(gb_variable *const *vars, int n, int64_t bucket_bytes);
void gb__buckets_free(gb__buckets *p);
/* Whether p was made for exactly vars[n] and bucket_bytes. */
bool gb__buckets_fits(const gb__buckets *p, gb_variable *const *vars, int n, int64_t bucket_bytes);
/* Readies every bucket for a step: all members pending, a buffer that no
 * tensor of an earlier step still views. false after a memory error. */
bool gb__buckets_begin_step(gb__buckets *p);
/* Copies variable v's gradient (NULL: zeros) into its bucket; returns the
 * bucket when that was its last pending member, else -1 (-2 after an
 * error: a gradient of the wrong dtype or size). */
int gb__buckets_pack(gb__buckets *p, int v, const gb_tensor *grad);
/* The averaged gradient of variable v: a tensor in the current scope that
 * views its bucket's buffer (no copy). */
gb_tensor *gb__buckets_view(gb__buckets *p, int v);

/* ---- timings (timing.c) ------------------------------------------------------------------- */

/* A step's gradient averaging begins (after the user's step so far) and
 * ends: begin applies GB_DIST_SLOW_RANK; end records the step time and the
 * wait, and every timing_every steps gathers them to rank 0. */
void gb__timing_step_begin(void);
void gb__timing_wait_begin(void);
bool gb__timing_step_end(void);
/* Gathers what is left (finalize). */
bool gb__timing_flush(void);
double gb__now_ms(void);

#endif
