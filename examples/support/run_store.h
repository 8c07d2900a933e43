/* examples/support/run_store.h — how the example programs open their run
 * in a store (run_store.c). */
#ifndef EXAMPLE_RUN_STORE_H
#define EXAMPLE_RUN_STORE_H

#include <stdbool.h>

#include "gb_summary.h"

/* Opens the summary writer of the program's run in db. Without a name
 * given (--run; run NULL) the run is named after the program and is a new
 * run: when the program ran into this store before, it is "<program>_2"
 * (or _3 ...), and a line on stdout says so, so two runs never merge into
 * one series. A name given is the person's choice: that run is continued
 * when it exists (as a resumed training wants), and a line says that too.
 * false after printing the writer's message. */
bool example_open_writer(const char *program, const char *db, const char *run,
                         gb_summary_writer **w);

/* Serves db's live dashboard on 127.0.0.1:port (0: any free port),
 * creating the store first when it does not exist yet (a program that
 * opens its runs one after another serves them from the start), and
 * prints its address. false after printing why. */
typedef struct gb_board gb_board;
bool example_serve(const char *program, const char *db, int port, gb_board **board);

#endif
