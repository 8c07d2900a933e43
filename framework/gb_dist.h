/* gb_dist.h — data-parallel training on several processes, over MPI.
 *
 * The engine HPC training runs on (Open MPI), as Horovod uses it: every
 * process (rank) holds the whole model, trains on its own part of each
 * batch, and the ranks average their gradients before each update, so N
 * ranks at batch B train the weights one process would at batch N*B.
 *
 *   int main(int argc, char **argv) {
 *       gb_dist_init(&argc, &argv);                    // hvd.init(); size 1 outside mpirun
 *       ... make the model, gb_module_build() it, make the optimizer ...
 *       gb_dist_broadcast_model(model, NULL, 0);        // every rank starts from rank 0's weights
 *       ds = gb_dataset_shuffle(ds, n, seed);           // the same order on every rank...
 *       ds = gb_dataset_shard(ds, gb_dist_size(), gb_dist_rank());   // ...each its share
 *       ds = gb_dataset_batch(ds, 64, false);           // 64 per rank
 *       for each batch:
 *           gb_tape *tape = gb_tape_begin();
 *           gb_tensor *loss = ...;
 *           gb_tape_end(tape);
 *           gb_dist_tape_gradient(tape, loss, vars, n, grads);   // averaged over the ranks
 *           gb_optimizer_apply_gradients(opt, grads, n, vars, n);
 *       if (gb_dist_rank() == 0) ... summaries, checkpoints ...
 *       gb_dist_finalize();
 *   }
 *
 *   mpirun -np 2 build/examples/fashion_mnist_mlp
 *
 * gb_dist_tape_gradient is Horovod's DistributedGradientTape and PyTorch
 * DDP's reducer: gradients are packed into buckets (bucket_bytes, in the
 * reverse of the variables' order, as backward produces them) and each
 * bucket's allreduce starts as soon as its last gradient is final, while
 * backward goes on; the call returns when all are averaged. MPI moves a
 * nonblocking collective only inside MPI calls, so a helper thread tests
 * the collectives in flight every $GB_DIST_PROGRESS_US microseconds (250)
 * while the training thread computes, and sleeps when none is. A traced step
 * cannot talk to other processes from inside its graph: return its
 * gradients (fit does) and average them with gb_dist_average_gradients.
 *
 * Built without MPI (CMake did not find it), or run without an MPI
 * launcher, everything here works as one process of a job of one: rank 0,
 * size 1, collectives return their input. So every program runs unchanged,
 * and `mpirun -np N program` runs it data-parallel.
 *
 * Failures never hang: every collective waits at most timeout_seconds
 * ($GB_DIST_TIMEOUT, 60 by default), then fails with GB_ERR_UNAVAILABLE
 * naming the ranks that did not arrive and whether each has exited or
 * still runs elsewhere; when mpirun ends the job because a rank died (its
 * SIGTERM), the collective under way fails the same way at once. After
 * such an error every later collective fails too; the program decides —
 * gb_dist_abort() ends the whole job. The library never exits.
 *
 * Each rank's step time, the time it waited for the allreduce, and their
 * difference (compute) are gathered to rank 0 every timing_every steps and
 * emitted there as GB_EVENT_SCALAR events (gb_observer.h) under the run
 * "rank_<r>" beside the writer's own, tags "dist/step_time_ms",
 * "dist/allreduce_ms", "dist/compute_ms": the Scalars page overlays the
 * ranks, so a straggler's compute and the others' waiting stand out.
 * GB_DIST_SLOW_RANK=r with GB_DIST_SLOW_MS=m makes rank r sleep m ms in
 * each step, to see what a straggler looks like.
 */
#ifndef GB_DIST_H
#define GB_DIST_H

#include "gb_autodiff.h"
#include "gb_nn.h"
#include "gb_optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the job ------------------------------------------------------------------------ */

/* Zero fields take the defaults shown (the environment's, when set). */
typedef struct gb_dist_options {
    double timeout_seconds;   /* a collective's deadline ($GB_DIST_TIMEOUT, else 60) */
    int64_t bucket_bytes;     /* gradient bucket size ($GB_DIST_BUCKET_KB KiB, else 1 MiB) */
    bool no_overlap;          /* allreduce after backward, not during ($GB_DIST_OVERLAP=0) */
    int timing_every;         /* steps between gathers of the timings to rank 0 (10) */
    /* At init only: no helper thread moving collectives along while the
     * training thread computes ($GB_DIST_PROGRESS_THREAD=0). */
    bool no_progress_thread;
} gb_dist_options;

/* Joins the job (MPI_Init) when launched by mpirun (or another MPI
 * launcher); otherwise a job of one. Sets the compute threads per rank to
 * the cores divided among the ranks of this machine, unless
 * GB_NUM_THREADS says otherwise. argc/argv may be NULL. Calling it again
 * does nothing. false after an error (MPI could not start). */
bool gb_dist_init(int *argc, char ***argv);
bool gb_dist_init_ex(int *argc, char ***argv, const gb_dist_options *options);
/* Changes the options of a running job (the benchmark turns overlap off):
 * zero fields keep their value, no_overlap is always taken. Every rank
 * must set the same. */
bool gb_dist_set_options(const gb_dist_options *options);
gb_dist_options gb_dist_get_options(void);
/* Flushes the timings and leaves the job (MPI_Finalize), unless a rank
 * was lost: then it leaves without waiting for it. */
void gb_dist_finalize(void);
/* Whether this build has MPI (else every job is of one process). */
bool gb_dist_available(void);
int gb_dist_rank(void);   /* 0 .. size-1; 0 before init */
int gb_dist_size(void);   /* 1 before init and without a launcher */
/* Ends every rank of the job with this exit code (MPI_Abort); without MPI,
 * exit(code). For programs after an error: the library never calls it. */
void gb_dist_abort(int code);

/* ---- collectives (every rank calls them in the same order) ------------------------------ */

typedef enum gb_dist_reduce { GB_DIST_SUM, GB_DIST_MEAN, GB_DIST_MAX, GB_DIST_MIN } gb_dist_reduce;

/* The reduction of t over the ranks, the same on all, as a new tensor in
 * the current scope (float32, float64, int32 or int64; MEAN floats only). */
gb_tensor *gb_dist_allreduce(gb_tensor *t, gb_dist_reduce op);
/* Rank root's t, on every rank (same dtype and shape everywhere). */
gb_tensor *gb_dist_broadcast(gb_tensor *t, int root);
/* Plain numbers, reduced in place. */
bool gb_dist_allreduce_doubles(double *values, int n, gb_dist_reduce op);
bool gb_dist_barrier(void);

/* Assigns rank root's values to the variables on every rank: at the start,
 * so all ranks begin alike, and after a restore. */
bool gb_dist_broadcast_variables(gb_variable *const *vars, int n, int root);
/* Every variable of the model (trainable or not; build it first) and,
 * when given, the optimizer's slots and iteration count. */
bool gb_dist_broadcast_model(gb_module *model, gb_optimizer *optimizer, int root);
/* Each variable set to its mean over the ranks (BatchNorm's moving
 * statistics, which every rank updates from its own batches). */
bool gb_dist_average_variables(gb_variable *const *vars, int n);

/* ---- gradients -------------------------------------------------------------------------- */

/* d target / d vars on this rank's batch, averaged over the ranks, into
 * grads[n] (tensors in the current scope; a variable target does not
 * reach gets zeros, so every rank contributes alike). Overlaps the
 * allreduce with backward (see above); also timestamps the step. */
bool gb_dist_tape_gradient(gb_tape *tape, gb_tensor *target, gb_variable *const *vars, int n,
                           gb_tensor **grads);
/* Replaces each of grads[n] (computed already, e.g. by a traced step;
 * NULL: zeros of vars[i]) with its average over the ranks, in the same
 * buckets; vars give the shapes and the bucket order. */
bool gb_dist_average_gradients(gb_tensor **grads, gb_variable *const *vars, int n);

/* ---- metrics ----------------------------------------------------------------------------- */

/* The metric's result over all ranks' updates: its state summed over the
 * ranks (the metric keeps its own), as Keras reads a metric under a
 * distribution strategy. The type must declare its state summable
 * (gb_metric_type.state_is_sums; the built-in metrics do). */
double gb_dist_metric_result(gb_metric *m);
/* The same for n metrics in one allreduce. */
bool gb_dist_metric_results(gb_metric *const *metrics, int n, double *out);

/* ---- timings ------------------------------------------------------------------------------ */

typedef struct gb_dist_stats {
    int64_t steps;            /* gradient averagings (steps) so far */
    double step_ms;           /* the last step, from the end of the one before */
    double allreduce_ms;      /* of it, the wait for the allreduce after backward */
    double total_step_ms;     /* sums since gb_dist_reset_stats (the first step excluded) */
    double total_allreduce_ms;
    int64_t timed_steps;
} gb_dist_stats;
gb_dist_stats gb_dist_get_stats(void);
void gb_dist_reset_stats(void);
/* Sends the timings not gathered yet to rank 0 now (a collective), so its
 * writer gets them before it closes; fit does it at its end,
 * gb_dist_finalize too. */
bool gb_dist_flush_timings(void);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_dist_init(...) GB_AT(gb_dist_init, __VA_ARGS__)
#define gb_dist_init_ex(...) GB_AT(gb_dist_init_ex, __VA_ARGS__)
#define gb_dist_set_options(...) GB_AT(gb_dist_set_options, __VA_ARGS__)
#define gb_dist_finalize(...) GB_AT(gb_dist_finalize, __VA_ARGS__)
#define gb_dist_allreduce(...) GB_AT(gb_dist_allreduce, __VA_ARGS__)
#define gb_dist_broadcast(...) GB_AT(gb_dist_broadcast, __VA_ARGS__)
#define gb_dist_allreduce_doubles(...) GB_AT(gb_dist_allreduce_doubles, __VA_ARGS__)
#define gb_dist_barrier(...) GB_AT(gb_dist_barrier, __VA_ARGS__)
#define gb_dist_broadcast_variables(...) GB_AT(gb_dist_broadcast_variables, __VA_ARGS__)
#define gb_dist_broadcast_model(...) GB_AT(gb_dist_broadcast_model, __VA_ARGS__)
#define gb_dist_average_variables(...) GB_AT(gb_dist_average_variables, __VA_ARGS__)
#define gb_dist_tape_gradient(...) GB_AT(gb_dist_tape_gradient, __VA_ARGS__)
#define gb_dist_average_gradients(...) GB_AT(gb_dist_average_gradients, __VA_ARGS__)
#define gb_dist_metric_result(...) GB_AT(gb_dist_metric_result, __VA_ARGS__)
#define gb_dist_metric_results(...) GB_AT(gb_dist_metric_results, __VA_ARGS__)
#define gb_dist_flush_timings(...) GB_AT(gb_dist_flush_timings, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
