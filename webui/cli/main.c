/* cli/main.c — the `glassbox` program: a table of subcommands.
 *
 *   glassbox inspect --db FILE
 *   glassbox export --db FILE --run RUN --tag TAG [--format csv|json]
 *   glassbox serve --db FILE [--host 127.0.0.1] [--port 6006] [--threads 4]
 *   glassbox saved-model show|run ...    glassbox checkpoint ls ...
 *   glassbox import --tfevents DIR --db FILE
 *
 * Each subcommand is a gb__cli_command (its own file); this file finds
 * it, parses its arguments with the one parser (args.c) and runs it. The
 * commands on models need the engine, which this program does not link:
 * they run in glassbox-model, found beside this program (cli/model/).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const gb__cli_command *const commands[] = {&gb__cli_inspect, &gb__cli_export,
                                                  &gb__cli_serve};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

/* Commands glassbox-model runs. */
static const struct {
    const char *name, *summary;
} engine_commands[] = {
    {"saved-model", "Shows a SavedModel directory or runs one of its signatures (show, run)"},
    {"checkpoint", "Lists the tensors of a checkpoint file (ls)"},
    {"import", "Reads TensorBoard event files (--tfevents DIR) into a store"},
};
enum { NENGINE = sizeof engine_commands / sizeof engine_commands[0] };

/* Runs glassbox-model from this program's directory with the same
 * arguments; returns only when it cannot. */
void gb__cli_engine_program(char *path, size_t size) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) n = 0;
    self[n] = '\0';
    snprintf(path, size, "%s/glassbox-model", n ? dirname(self) : ".");
}

static int exec_engine_program(char **argv) {
    char path[PATH_MAX + 32];
    gb__cli_engine_program(path, sizeof path);
    argv[0] = path;
    execv(path, argv);
    gb__cli_print(stderr, "glassbox: '%s' runs in %s, which cannot be started: %s", argv[1], path,
                  strerror(errno));
    return 1;
}

static int usage(FILE *out) {
    fprintf(out, "usage: glassbox <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
    for (size_t i = 0; i < NENGINE; i++)
        fprintf(out, "  %-12s %s\n", engine_commands[i].name, engine_commands[i].summary);
    fprintf(out, "\nOptions take a value as --name VALUE or --name=VALUE.\n"
                 "'glassbox <command> --help' describes a command's options.\n");
    return out == stdout ? 0 : GB__CLI_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help"))
        return usage(stdout);
    for (size_t i = 0; i < NENGINE; i++)
        if (!strcmp(name, engine_commands[i].name)) return exec_engine_program(argv);
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
