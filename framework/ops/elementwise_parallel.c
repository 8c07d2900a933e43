/* ops/elementwise_parallel.c — one elementwise run split across the
 * worker pool.
 *
 * A Tanh or an Add over a million elements is one loop; on a machine with
 * several cores it is several loops over contiguous parts, as PyTorch's
 * TensorIterator and Eigen's thread-pool device do. Below the grain (32K
 * elements, PyTorch's too) the split costs more than it saves and the run
 * stays on the calling thread. The kernels are the single-run kernels of
 * ops/unary.c and ops/binary.c; parts never overlap.
 */
#include "core/parallel.h"
#include "ops/elementwise_types.h"

enum { GRAIN = GB_EW_PARALLEL_MIN / 2 };

typedef struct ew_job {
    gb_ew_map_fn map;
    gb_ew_pair_fn pair;
    gb_ew_run_fn run;
    int layout;
    const char *a, *b;
    char *r;
    size_t es, ers;              /* bytes per element of the operands, of the result */
    const gb_attrs *attrs;
} ew_job;

static void part(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const ew_job *j = ctx;
    int64_t n = end - begin;
    const char *a = j->a + (j->layout == GB_EW_RUN_SV ? 0 : (size_t)begin * j->es);
    const char *b = j->b ? j->b + (j->layout == GB_EW_RUN_VS ? 0 : (size_t)begin * j->es) : NULL;
    char *r = j->r + (size_t)begin * j->ers;
    if (j->map) j->map(n, a, r, j->attrs);
    else if (j->pair) j->pair(n, a, b, r);
    else j->run(j->layout, n, a, b, r);
}

static void go(ew_job *j, int64_t n) {
    if (n < GB_EW_PARALLEL_MIN)
        part(j, 0, n, 0);
    else
        gb__parallel_for(n, GRAIN, part, j);
}

void gb__ew_map_parallel(gb_ew_map_fn fn, int64_t n, const void *x, void *r, size_t es,
                         const gb_attrs *at) {
    ew_job j = {.map = fn, .a = x, .r = r, .es = es, .ers = es, .attrs = at};
    go(&j, n);
}

void gb__ew_pair_parallel(gb_ew_pair_fn fn, int64_t n, const void *a, const void *b, void *r,
                          size_t es) {
    ew_job j = {.pair = fn, .a = a, .b = b, .r = r, .es = es, .ers = es};
    go(&j, n);
}

void gb__ew_run_parallel(gb_ew_run_fn fn, int layout, int64_t n, const void *a, const void *b,
                         void *r, size_t es, size_t ers) {
    ew_job j = {.run = fn, .layout = layout, .a = a, .b = b, .r = r, .es = es, .ers = ers};
    go(&j, n);
}
