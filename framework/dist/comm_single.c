/* dist/comm_single.c — the transport of a build without MPI: a job of one.
 *
 * Rank 0 of size 1: a reduction over one rank is its input, a broadcast
 * from it changes nothing, a gather copies. Every program written for
 * several ranks runs unchanged, and the layer above (buckets, timings,
 * metrics) runs the same code as with MPI.
 */
#include <stdlib.h>

#include "dist/internal.h"

bool gb__comm_init(int *argc, char ***argv, gb__dist *job) {
    (void)argc, (void)argv;
    job->launched = false;
    job->rank = 0;
    job->size = job->local_size = 1;
    return true;
}

void gb__comm_finalize(void) {}
bool gb__comm_available(void) { return false; }
bool gb__comm_broken(void) { return false; }
void gb__comm_abort(int code) { exit(code); }
void gb__comm_progress(void) {}

int gb__comm_iallreduce(void *buf, int64_t count, gb_dtype dt, gb_dist_reduce op,
                        const char *what) {
    (void)buf, (void)count, (void)dt, (void)op, (void)what;
    return 0;
}

int gb__comm_ibcast(void *buf, size_t bytes, int root, const char *what) {
    (void)buf, (void)bytes, (void)root, (void)what;
    return 0;
}

int gb__comm_igather(const void *send, size_t bytes, void *recv, int root, const char *what) {
    (void)root, (void)what;
    memmove(recv, send, bytes);
    return 0;
}

bool gb__comm_wait(const int *tickets, int n) {
    (void)tickets, (void)n;
    return true;
}
