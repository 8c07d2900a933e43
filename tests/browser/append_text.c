/* append_text.c — writes one text summary to a store and exits: the
 * browser tests use it to put markdown (and hostile markdown) on the Text
 * page.
 *   append_text DB RUN TAG STEP TEXT */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: append_text DB RUN TAG STEP TEXT\n");
        return 2;
    }
    gb_summary_writer *w = NULL;
    bool ok = gb_summary_writer_open(argv[1], argv[2], NULL, &w) == GB_OK &&
              gb_summary_text(w, argv[3], argv[5], strtoll(argv[4], NULL, 10)) == GB_OK;
    if (w && gb_summary_writer_close(w) != GB_OK) ok = false;
    if (!ok) fprintf(stderr, "append_text: %s\n", gb_summary_last_error());
    return ok ? 0 : 1;
}
