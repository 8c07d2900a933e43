/* append_histogram.c — writes histograms to a store and exits: the browser
 * tests use it to add histogram tags below the first one, so that some
 * cards start below the fold and load only when scrolled to.
 *   append_histogram DB RUN TAG COUNT
 * writes COUNT histograms at steps 0, 10, 20, ... of values spreading out
 * step by step (a fixed pattern: no randomness to depend on). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"
#include "glassbox.h"

enum { VALUES = 256 };

static bool write_one(gb_summary_writer *w, const char *tag, long long i) {
    float v[VALUES];
    for (int k = 0; k < VALUES; k++)
        v[k] = (float)((k - VALUES / 2) * (0.01 + 0.002 * (double)i) * ((k % 7) + 1) / 7.0);
    gb_scope_begin();
    bool ok = gb_summary_histogram(w, tag, gb_from_f32(v, GB_SHAPE(VALUES)), i * 10) == GB_OK;
    gb_scope_end();
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: append_histogram DB RUN TAG COUNT\n");
        return 2;
    }
    long long count = strtoll(argv[4], NULL, 10);
    gb_summary_writer *w = NULL;
    bool ok = gb_summary_writer_open(argv[1], argv[2], NULL, &w) == GB_OK;
    for (long long i = 0; ok && i < count && i < 100000; i++) ok = write_one(w, argv[3], i);
    if (w && gb_summary_writer_close(w) != GB_OK) ok = false;
    if (!ok) fprintf(stderr, "append_histogram: %s\n", gb_summary_last_error());
    return ok ? 0 : 1;
}
