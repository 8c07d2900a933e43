/* cli/main.c — the `glassbox` program: a table of subcommands.
 *
 *   glassbox inspect --db FILE
 *   glassbox export --db FILE --run RUN --tag TAG [--format csv|json]
 *   glassbox serve --db FILE [--host 127.0.0.1] [--port 6006] [--threads 4]
 *
 * Each subcommand is a gb__cli_command (its own file); this file finds
 * it, parses its arguments with the one parser (args.c) and runs it.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const gb__cli_command *const commands[] = {&gb__cli_inspect, &gb__cli_export,
                                                  &gb__cli_serve};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static int usage(FILE *out) {
    fprintf(out, "usage: glassbox <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\nOptions take a value as --name VALUE or --name=VALUE.\n"
                 "'glassbox <command> --help' describes a command's options.\n");
    return out == stdout ? 0 : GB__CLI_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help"))
        return usage(stdout);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i]->name)) continue;
        const char *values[GB__CLI_MAX_OPTIONS];
        int rc = gb__cli_parse(commands[i], argc - 2, argv + 2, values);
        return rc == GB__CLI_RUN ? commands[i]->run(commands[i], values) : rc;
    }
    gb__cli_print(stderr, "glassbox: unknown command '%s'", name);
    fputc('\n', stderr);
    return usage(stderr);
}
