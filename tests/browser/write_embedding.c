/* write_embedding.c — a synthetic embedding for the Projector's benchmark
 * (bench/projector.bench.mjs) and any page test that needs one of a given
 * size: N points of dimension D in K Gaussian clusters (seeded), with a
 * metadata column "cluster" naming each point's cluster, at steps 0 and 1
 * (the clusters drift between the two), run "synthetic", tag "points".
 *
 *   write_embedding DB N D K
 *
 * Exit 0 on success; 1 with the writer's message; 2 for bad arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"
#include "glassbox.h"

static uint64_t state = 88172645463325252ULL;
static double uniform(void) {   /* xorshift64 */
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}
static double normal(void) { return sqrt(-2 * log(uniform() + 1e-300)) * cos(6.283185307179586 * uniform()); }

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: write_embedding DB N D K\n");
        return 2;
    }
    int64_t n = atoll(argv[2]), d = atoll(argv[3]), k = atoll(argv[4]);
    if (n < 1 || d < 1 || k < 1 || k > 1000) {
        fprintf(stderr, "write_embedding: N, D >= 1 and K in 1..1000\n");
        return 2;
    }
    float *centres = malloc((size_t)(k * d) * sizeof *centres), *v = malloc((size_t)(n * d) * sizeof *v);
    char (*names)[32] = malloc((size_t)k * sizeof *names);
    const char **cells = malloc((size_t)n * sizeof *cells);
    if (!centres || !v || !names || !cells) return 1;
    for (int64_t i = 0; i < k * d; i++) centres[i] = (float)(4 * normal());
    for (int64_t c = 0; c < k; c++) snprintf(names[c], sizeof names[c], "cluster %lld", (long long)c);
    gb_summary_writer *w;
    if (gb_summary_writer_open(argv[1], "synthetic", NULL, &w) != GB_OK) {
        fprintf(stderr, "write_embedding: %s\n", gb_summary_last_error());
        return 1;
    }
    gb_status st = GB_OK;
    for (int64_t step = 0; step < 2 && st == GB_OK; step++) {
        for (int64_t i = 0; i < n; i++) {
            int64_t c = i % k;
            cells[i] = names[c];
            for (int64_t j = 0; j < d; j++)
                v[i * d + j] = centres[c * d + j] * (float)(1 + 0.5 * (double)step) + (float)normal();
        }
        gb_scope_begin();
        st = gb_summary_embedding(w, "points", gb_tensor_from(GB_F32, v, 2, (int64_t[]){n, d}),
                                  gb_strings(cells, 1, (int64_t[]){n}), (const char *[]){"cluster"}, NULL, step);
        gb_scope_end();
    }
    if (st != GB_OK) fprintf(stderr, "write_embedding: %s\n", gb_summary_last_error());
    if (gb_summary_writer_close(w) != GB_OK) st = GB_ERR_IO;
    free(centres);
    free(v);
    free(names);
    free(cells);
    return st == GB_OK ? 0 : 1;
}
