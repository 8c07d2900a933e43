/* glassbox_main.c — the `glassbox` program: a table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "gb_cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} command;

static const command commands[] = {
    {"inspect", gb_cli_inspect, "inspect --db FILE            runs, tags and event counts"},
    {"export", gb_cli_export,
     "export --db FILE --run RUN --tag TAG --format csv|json   a full-resolution series"},
    {"serve", gb_cli_serve, "serve --db FILE [--host 127.0.0.1] [--port 6006]   the dashboard"},
};

static int usage(FILE *out) {
    fprintf(out, "usage: glassbox <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %s\n", commands[i].help);
    return out == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
        return usage(stdout);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "glassbox: unknown command '%s'\n\n", argv[1]);
    return usage(stderr);
}
