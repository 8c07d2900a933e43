/* examples/support/flags.h — the one command-line parser of the example
 * programs.
 *
 * Each example declares its flags in a table (name, value's name, help,
 * kind, where the value goes) and example_parse_flags reads argv against
 * it, so every example takes `--name VALUE` and `--name=VALUE` alike,
 * answers -h / --help with its usage on stdout (exit 0), and words every
 * mistake the same way on stderr (exit 2): an unknown flag, a missing or
 * malformed value, a stray argument. A flag that another example takes
 * but this one does not can be listed with the reason, so
 * `fashion_mnist_fit --traced` says why instead of printing a bare usage.
 *
 * The defaults shown by --help are the values the targets hold before
 * parsing, so they cannot drift from the program's own.
 */
#ifndef EXAMPLE_FLAGS_H
#define EXAMPLE_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXAMPLE_RUN (-1)   /* example_parse_flags: go on and run */

typedef enum example_flag_kind {
    EXAMPLE_SWITCH,     /* bool: present or not, takes no value */
    EXAMPLE_INT,        /* int */
    EXAMPLE_INT64,      /* int64_t */
    EXAMPLE_UINT64,     /* uint64_t */
    EXAMPLE_DOUBLE,     /* double */
    EXAMPLE_STRING,     /* const char *, pointing into argv */
    EXAMPLE_OPTIONAL,   /* const char *: the bare flag gives "", --flag=VALUE the value */
} example_flag_kind;

typedef struct example_flag {
    const char *name;       /* "--epochs" */
    const char *metavar;    /* "N": the value's name in the usage (unused by a switch) */
    const char *help;       /* one line for --help */
    example_flag_kind kind;
    void *value;            /* where the value goes, of the kind's C type */
} example_flag;

/* A flag of another example that this one refuses, and why. */
typedef struct example_foreign_flag {
    const char *name, *why;
} example_foreign_flag;

typedef struct example_program {
    const char *name;       /* "fashion_mnist_fit" */
    const char *summary;    /* one line, for --help */
    const example_flag *flags;
    size_t nflags;
    const example_foreign_flag *foreign;
    size_t nforeign;
} example_program;

/* Reads argv[1..argc-1] into the flags' values. Returns EXAMPLE_RUN when
 * the program should run; otherwise the exit code, after printing: 0 for
 * -h / --help (usage on stdout), 2 for a mistake (message on stderr). */
int example_parse_flags(const example_program *p, int argc, char **argv);

/* Prints "<program>: <message>" and where to find the usage to stderr;
 * returns 2. For values the program itself judges (ranges, choices). */
int example_usage_error(const example_program *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
