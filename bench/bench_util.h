/* bench_util.h — timing, medians and the one output format of benchmarks.
 *
 * Every figure is one line, `bench <name> glassbox=<v> <peer>=<v> ratio=<r>
 * unit=<u>`, ratio > 1 meaning glassbox is better; medians of repeats
 * because the machine is noisy. Peers are measured in the same run by
 * running their script and reading `name value` lines from its output.
 *
 * Run with GB_ISA=v2|v3|v4 (scripts/bench.sh does, for the benchmarks
 * whose kernels have a version per instruction-set level), every name
 * carries the level the kernels ran at (`fused_elementwise@x86-64-v3`),
 * and a level this CPU cannot run skips the program instead of measuring
 * the fallback twice.
 */
#ifndef GB_BENCH_UTIL_H
#define GB_BENCH_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_base.h"

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs `cmd` and returns the value on its output line starting with `key `,
 * or -1 when the peer could not be measured. */
static inline double bench_peer_value(const char *output, const char *key) {
    size_t k = strlen(key);
    for (const char *p = output; p && *p;) {
        if (strncmp(p, key, k) == 0 && p[k] == ' ') return atof(p + k + 1);
        p = strchr(p, '\n');
        if (p) p++;
    }
    return -1;
}

/* Runs a shell command and captures up to n-1 bytes of its stdout. */
static inline bool bench_run_peer(const char *cmd, char *out, size_t n) {
    FILE *f = popen(cmd, "r");
    if (!f) return false;
    size_t len = fread(out, 1, n - 1, f);
    out[len] = '\0';
    return pclose(f) == 0;
}

/* Under GB_ISA: the level asked for is the one in force, or the program
 * ends here (the engine chose its level in a constructor of its own, which
 * runs before this one). */
__attribute__((constructor)) static void bench_isa_guard(void) {
    const char *want = getenv("GB_ISA"), *have = gb_cpu_isa();
    size_t wl = want ? strlen(want) : 0, hl = strlen(have);
    if (!want || !*want || (hl >= wl && strcmp(have + hl - wl, want) == 0)) return;
    fprintf(stderr, "bench: skipped at GB_ISA=%s: this CPU runs the kernels at %s\n", want, have);
    exit(0);
}

/* Prints one figure; ratio > 1 means glassbox is better whichever way the
 * unit points. theirs <= 0: the peer could not be measured, no ratio. */
static inline void bench_line(const char *figure, double ours, const char *peer, double theirs,
                              const char *unit, bool higher_is_better) {
    char name[160];
    const char *isa = getenv("GB_ISA");
    snprintf(name, sizeof name, "%s%s%s", figure, isa && *isa ? "@" : "",
             isa && *isa ? gb_cpu_isa() : "");
    if (theirs > 0)
        printf("bench %s glassbox=%.4g %s=%.4g ratio=%.2f unit=%s\n", name, ours, peer, theirs,
               higher_is_better ? ours / theirs : theirs / ours, unit);
    else
        printf("bench %s glassbox=%.4g unit=%s\n", name, ours, unit);
    fflush(stdout);
}

/* Times: smaller is better. */
static inline void bench_line_time(const char *name, double ours, const char *peer,
                                   double theirs, const char *unit) {
    bench_line(name, ours, peer, theirs, unit, false);
}

/* Rates: larger is better. */
static inline void bench_line_rate(const char *name, double ours, const char *peer,
                                   double theirs, const char *unit) {
    bench_line(name, ours, peer, theirs, unit, true);
}

#endif
