/* append_scalar.c — writes one scalar to a store and exits: the browser
 * tests use it to check that a value written while the page is open shows
 * up within 2 s.   append_scalar DB RUN TAG STEP VALUE */
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: append_scalar DB RUN TAG STEP VALUE\n");
        return 2;
    }
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(argv[1], argv[2], NULL, &w) != GB_OK ||
        gb_summary_scalar(w, argv[3], atof(argv[5]), strtoll(argv[4], NULL, 10)) != GB_OK ||
        gb_summary_writer_close(w) != GB_OK) {
        fprintf(stderr, "append_scalar: %s\n", gb_summary_last_error());
        return 1;
    }
    return 0;
}
