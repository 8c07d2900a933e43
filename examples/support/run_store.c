/* examples/support/run_store.c — how an example opens its run in a
 * store: always as a new run, so running a program twice into one store
 * gives two runs side by side instead of one series with every step
 * twice; the name it took is said when it is not the one asked for. */
#include <stdio.h>
#include <string.h>

#include "run_store.h"

bool example_open_writer(const char *program, const char *db, const char *run,
                         gb_summary_writer **w) {
    if (gb_summary_writer_open(db, run, &(gb_summary_options){.new_run = true}, w) != GB_OK) {
        fprintf(stderr, "%s: %s\n", program, gb_summary_last_error());
        return false;
    }
    const char *taken = gb_summary_writer_run(*w);
    if (strcmp(taken, run)) {
        printf("%s: %s already has a run '%s'; this one is '%s'\n", program, db, run, taken);
        fflush(stdout);
    }
    return true;
}
