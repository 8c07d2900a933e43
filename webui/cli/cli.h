/* cli/cli.h — what the files of the `glassbox` program share: the one
 * argument parser, the subcommand descriptor, and the store helpers of the
 * subcommands that read a store.
 *
 *   main.c     the program: finds the subcommand, parses, runs it
 *   args.c     the argument parser and the usage / --help texts
 *   store.c    opening a store and reporting the reader's errors
 *   terminal.c every printed line, its control characters escaped
 *   inspect.c  glassbox inspect   runs, tags, event counts
 *   export.c   glassbox export    a scalar series at full resolution
 *   serve.c    glassbox serve     the dashboard server
 *
 * A subcommand never sees argv: it declares its options in a table, and
 * main.c parses the arguments against it, so every subcommand takes
 * `--name VALUE` and `--name=VALUE` alike, answers -h / --help with its
 * usage on stdout (exit 0), and refuses unknown options, missing values
 * and missing required options the same way (a message and the usage on
 * stderr, exit 2). inspect and export use only the reader API (gb_reader.h);
 * serve uses the server (gb_board.h). Nothing here reaches the engine.
 */
#ifndef GB_CLI_CLI_H
#define GB_CLI_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gb_reader.h"

#define GB__CLI_MAX_OPTIONS 16   /* per subcommand (each asserts it has room) */
#define GB__CLI_RUN (-1)         /* gb__cli_parse: go on and run the command */
#define GB__CLI_USAGE 2          /* exit code of a usage error */

/* One option, given as `--name VALUE` or `--name=VALUE`; or a flag, given
 * as `--name` alone (metavar NULL; its value is "yes" when given, else
 * the fallback, NULL). */
typedef struct gb__cli_option {
    const char *name;        /* "--db" */
    const char *metavar;     /* "FILE": the value's name in the usage; NULL: a flag */
    const char *help;        /* one line for --help */
    bool required;
    const char *fallback;    /* the value when absent (NULL: none); shown in --help */
} gb__cli_option;

/* A subcommand: its interface and its body. run gets the options' values,
 * in the order of `options` (absent ones: their fallback), and returns the
 * exit code: 0 on success, 1 when the work failed (a message on stderr),
 * GB__CLI_USAGE for a value it refuses (gb__cli_usage_error). */
typedef struct gb__cli_command {
    const char *name;        /* "serve" */
    const char *summary;     /* one line, for `glassbox --help` */
    const char *details;     /* paragraphs after the usage in --help; NULL for none */
    const gb__cli_option *options;
    size_t noptions;
    int (*run)(const struct gb__cli_command *cmd, const char *const *values);
} gb__cli_command;

extern const gb__cli_command gb__cli_inspect;
extern const gb__cli_command gb__cli_export;
extern const gb__cli_command gb__cli_serve;

/* export_tfevents.c: run of the store at db as an event file in out_dir;
 * the exit code. */
int gb__cli_export_tfevents(const gb__cli_command *cmd, const char *db, const char *run,
                            const char *out_dir);
/* export_profile.c: capture id_text (NULL: the run's last) of run as Chrome
 * trace JSON on stdout; the exit code. */
int gb__cli_export_profile(const gb__cli_command *cmd, gb_store *s, const char *run,
                           const char *id_text, const char *format);

/* ---- args.c ---------------------------------------------------------------------- */

/* Parses the arguments after the subcommand's name into values[i] (the
 * value of cmd->options[i]). Returns GB__CLI_RUN when the command should
 * run; otherwise the exit code, after printing: 0 for -h / --help (usage
 * on stdout), GB__CLI_USAGE for bad arguments (message and usage line on
 * stderr). */
int gb__cli_parse(const gb__cli_command *cmd, int argc, char **argv,
                  const char *values[GB__CLI_MAX_OPTIONS]);

/* Prints "glassbox <cmd>: <message>" and the usage line to stderr;
 * returns GB__CLI_USAGE. For values the parser cannot judge. */
int gb__cli_usage_error(const gb__cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reads values[option], the value of cmd->options[option], as a whole
 * decimal integer in [lo, hi] into *out; false (after a usage error)
 * otherwise. */
bool gb__cli_int(const gb__cli_command *cmd, const char *const *values, size_t option, int lo,
                 int hi, int *out);

/* ---- terminal.c --------------------------------------------------------------------- */

/* Prints one line to f: the formatted text with its control characters
 * and bytes that are not UTF-8 escaped (ESC as \x1b, a newline as \n, a
 * backslash as \\; see terminal.c), then a newline. Every line of the
 * program's own output goes through here: it quotes stored names. */
void gb__cli_print(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The path of glassbox-model, beside this program (main.c). */
void gb__cli_engine_program(char *path, size_t size);
/* serve's converter of a directory's event files into a store
 * (gb_tfevents_converter): `glassbox-model import --run` (serve_tfevents.c). */
bool gb__cli_import_tfevents(const char *dir, const char *run, const char *db, char *why,
                             size_t why_size);
void gb__cli_vprint(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* ---- export.c, export_hparams.c ------------------------------------------------------ */

/* The shortest text that reads back as v; non-finite as `nan`/`inf`/`-inf`
 * (CSV) or the strings "NaN"/"Infinity"/"-Infinity" (JSON has no such
 * numbers). */
const char *gb__cli_format_value(double v, bool json, char *buf, size_t n);
/* `export --hparams`: the experiment's table of db as CSV on stdout; the
 * exit code. */
int gb__cli_export_hparams(const gb__cli_command *cmd, const char *db);

/* ---- store.c ------------------------------------------------------------------------ */

/* Opens the store at path read-only; NULL after printing the reader's
 * message ("glassbox <cmd>: store 'x.db' does not exist"). */
gb_store *gb__cli_open_store(const gb__cli_command *cmd, const char *path);
/* Prints the reader's last message for cmd; returns 1 (the exit code). */
int gb__cli_store_failed(const gb__cli_command *cmd);

#endif
