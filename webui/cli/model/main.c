/* cli/model/main.c — the `glassbox-model` program (see model.h): finds
 * the two-word subcommand ("saved-model show"), parses its options with
 * the one parser and runs it. `glassbox saved-model ...` execs it.
 */
#include <stdio.h>
#include <string.h>

#include "cli/model/model.h"

static const gb__cli_command *const commands[] = {&gb__cli_saved_model_show, &gb__cli_saved_model_run,
                                                  &gb__cli_checkpoint_ls, &gb__cli_import};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static int usage(FILE *out) {
    fprintf(out, "usage: glassbox <command> <action> [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-18s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n'glassbox <command> <action> --help' describes its options.\n");
    return out == stdout ? 0 : GB__CLI_USAGE;
}

const char *gb__cli_spec_text(gb_dtype dt, int rank, const int64_t *shape, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s[", gb_dtype_name(dt));
    for (int d = 0; d < rank && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

int gb__cli_engine_failed(const gb__cli_command *cmd) {
    const gb_error *e = gb_last_error();
    gb__cli_print(stderr, "glassbox %s: %s", cmd->name, e ? e->message : "failed");
    gb_clear_error();
    return 1;
}

/* The actions of command (its commands' second words), "show, run". */
static void actions_of(const char *command, char *out, size_t n) {
    size_t len = strlen(command), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const char *name = commands[i]->name;
        if (!strncmp(name, command, len) && name[len] == ' ')
            used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s%s", used ? ", " : "", name + len + 1);
    }
}

/* A command without its action, an unknown action, or an unknown command:
 * said as such, then the usage. */
static int unknown(int argc, char **argv) {
    char actions[128];
    actions_of(argv[1], actions, sizeof actions);
    if (actions[0] && argc < 3)
        gb__cli_print(stderr, "glassbox %s: which action? (%s)", argv[1], actions);
    else if (actions[0])
        gb__cli_print(stderr, "glassbox %s: unknown action '%s' (%s)", argv[1], argv[2], actions);
    else
        gb__cli_print(stderr, "glassbox: unknown command '%s'", argv[1]);
    fputc('\n', stderr);
    return usage(stderr);
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    /* "glassbox saved-model --help" (or alone) lists the actions. */
    const char *last = argv[argc - 1];
    bool one_word_command = !strcmp(argv[1], gb__cli_import.name);   /* its own --help */
    if (argc <= 3 && !one_word_command && (!strcmp(last, "-h") || !strcmp(last, "--help")))
        return usage(stdout);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        size_t len = strlen(argv[1]);
        const char *name = commands[i]->name;
        bool one_word = !strchr(name, ' ');   /* "import" takes no action word */
        if (one_word ? strcmp(name, argv[1])
                     : argc < 3 || strncmp(name, argv[1], len) || name[len] != ' ' ||
                           strcmp(name + len + 1, argv[2]))
            continue;
        const char *values[GB__CLI_MAX_OPTIONS];
        int skip = one_word ? 2 : 3;
        int rc = gb__cli_parse(commands[i], argc - skip, argv + skip, values);
        return rc == GB__CLI_RUN ? commands[i]->run(commands[i], values) : rc;
    }
    return unknown(argc, argv);
}
