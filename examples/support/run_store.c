/* examples/support/run_store.c — how an example opens its run in a
 * store: under its own name as a new run, so running a program twice into
 * one store gives two runs side by side instead of one series with every
 * step twice; under a name the person gave (--run), that run, continued.
 * Either way, what happened is said when the name was in the store. */
#include <stdio.h>
#include <string.h>

#include "gb_board.h"
#include "gb_reader.h"
#include "run_store.h"

bool example_open_writer(const char *program, const char *db, const char *run,
                         gb_summary_writer **w) {
    const char *name = run ? run : program;
    if (gb_summary_writer_open(db, name, &(gb_summary_options){.new_run = !run}, w) != GB_OK) {
        fprintf(stderr, "%s: %s\n", program, gb_summary_last_error());
        return false;
    }
    const char *taken = gb_summary_writer_run(*w);
    if (strcmp(taken, name))
        printf("%s: %s already has a run '%s'; this one is '%s' (--run NAME continues a run)\n", program,
               db, name, taken);
    else if (gb_summary_writer_continues(*w))
        printf("%s: continuing the run '%s' of %s (its steps are added to it)\n", program, name, db);
    fflush(stdout);
    return true;
}

bool example_serve(const char *program, const char *db, int port, gb_board **board) {
    bool created;
    if (gb_store_create(db, &created) != GB_STORE_OK ||
        !(*board = gb_board_start(db, "127.0.0.1", port, NULL))) {
        fprintf(stderr, "%s: dashboard: %s\n", program, gb_board_last_error());
        return false;
    }
    printf("dashboard: %s\n", gb_board_url(*board));
    fflush(stdout);
    return true;
}
