/* examples/support/run_store.h — how the example programs open their run
 * in a store (run_store.c). */
#ifndef EXAMPLE_RUN_STORE_H
#define EXAMPLE_RUN_STORE_H

#include <stdbool.h>

#include "gb_summary.h"

/* Opens the summary writer of a run in db, as a new run: when a run of
 * that name is already there (the program ran before into this store) the
 * run is "<run>_2" (or _3 ...), and a line on stdout says so. false after
 * printing the writer's message. */
bool example_open_writer(const char *program, const char *db, const char *run,
                         gb_summary_writer **w);

#endif
