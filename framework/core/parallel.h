/* core/parallel.h — a small fork-join pool for the compute kernels (internal).
 *
 * gb__parallel_for(n, grain, fn, ctx) splits [0, n) into contiguous parts
 * that the workers (the calling thread is worker 0) claim dynamically,
 * and returns when all are done. Kernels partition by independent units
 * (images of a batch, rows of a product) so parts never write the same
 * memory.
 *
 * The pool owns the machine's threads: it sets OpenBLAS to one thread
 * once, so BLAS calls made inside parts do not start (and leave spinning)
 * threads of their own. Big products split their rows across the pool
 * instead. GB_NUM_THREADS in the environment sets the worker count
 * (default: the online CPUs, at most 16; 1 turns threading off).
 *
 * Parts run on other threads: they must not allocate from scopes, record
 * errors or call ops; the caller prepares scratch per worker beforehand.
 */
#ifndef GB_PARALLEL_H
#define GB_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Runs part [begin, end) as worker `worker` (0 .. gb__parallel_workers()-1). */
typedef void (*gb__range_fn)(void *ctx, int64_t begin, int64_t end, int worker);

/* The number of workers parts may be numbered by (>= 1); also makes sure
 * the pool is set up (and OpenBLAS single-threaded) before a BLAS call. */
int gb__parallel_workers(void);

/* The worker count to use when GB_NUM_THREADS does not say (gb_dist_init:
 * the cores shared among the ranks of a machine). false when the pool has
 * started already (the count is then fixed). */
bool gb__parallel_suggest_workers(int n);

/* Splits [0, n) into parts of at least `grain` units (up to four per
 * worker) that the workers claim one after another, the calling thread
 * among them; fn may thus run several times on one worker, which must
 * accumulate rather than overwrite anything it keeps per worker. Runs
 * inline when one part suffices or the pool is busy (another thread is
 * inside a parallel region). Returns how many workers may have run parts:
 * those are numbered 0 .. return value - 1. */
int gb__parallel_for(int64_t n, int64_t grain, gb__range_fn fn, void *ctx);

#endif
