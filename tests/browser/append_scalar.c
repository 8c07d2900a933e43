/* append_scalar.c — writes scalars to a store and exits: the browser tests
 * use it to check that values written while the page is open show up
 * within 2 s, and to grow a series long enough to be downsampled.
 *   append_scalar DB RUN TAG STEP VALUE [COUNT]
 * COUNT > 1 writes steps STEP.. STEP+COUNT-1 with a wave around VALUE. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: append_scalar DB RUN TAG STEP VALUE [COUNT]\n");
        return 2;
    }
    long long step = strtoll(argv[4], NULL, 10), count = argc == 7 ? strtoll(argv[6], NULL, 10) : 1;
    double value = atof(argv[5]);
    gb_summary_writer *w = NULL;
    bool ok = gb_summary_writer_open(argv[1], argv[2], NULL, &w) == GB_OK;
    for (long long i = 0; ok && i < count && i < 10000000; i++)
        ok = gb_summary_scalar(w, argv[3], count > 1 ? value + sin((double)i / 50.0) : value,
                               step + i) == GB_OK;
    if (w && gb_summary_writer_close(w) != GB_OK) ok = false;
    if (!ok) fprintf(stderr, "append_scalar: %s\n", gb_summary_last_error());
    return ok ? 0 : 1;
}
