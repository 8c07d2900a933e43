/* example_rate.h — the training throughput of an example program.
 *
 * Benchmarks of whole training runs measure exactly what a user runs: the
 * program under build/examples/, one epoch, and the samples/s it prints.
 */
#ifndef GB_BENCH_EXAMPLE_RATE_H
#define GB_BENCH_EXAMPLE_RATE_H

#include "bench_util.h"

/* samples/s of one epoch of build/examples/<example> on `images` training
 * images with extra `flags`, read from its progress line; -1 on failure. */
static inline double bench_example_rate(const char *example, long images, const char *flags) {
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "%s/examples/%s --epochs 1 --limit %ld %s 2>&1", GB_BUILD_DIR,
             example, images, flags);
    if (!bench_run_peer(cmd, out, sizeof out)) {
        fprintf(stderr, "%s failed:\n%s\n", example, out);
        return -1;
    }
    const char *p = strstr(out, "samples/s");
    if (!p) return -1;
    while (p > out && p[-1] == ' ') p--;
    while (p > out && (p[-1] == '.' || (p[-1] >= '0' && p[-1] <= '9'))) p--;
    return atof(p);
}

#endif
