/* cli/args.c — the one argument parser of the `glassbox` program.
 *
 * Every subcommand declares its options (gb__cli_option) and this file
 * turns argv into their values, prints usage and --help from the same
 * table, and words every mistake the same way, so the subcommands agree
 * on syntax and messages without each carrying a parser of its own.
 *
 * Syntax: `--name VALUE` or `--name=VALUE`, or `--name` alone for a flag,
 * each option at most once, no positional arguments. A separate word starting with "--" is never taken
 * as a value (`--db --port 1` says --db needs a value rather than opening
 * a file called "--port"); `--db=--odd` still passes such a value.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* ---- texts --------------------------------------------------------------------------- */

/* The one-line usage: "usage: glassbox serve --db FILE [--host HOST] ...". */
static void print_usage_line(const gb__cli_command *cmd, FILE *out) {
    fprintf(out, "usage: glassbox %s", cmd->name);
    for (size_t i = 0; i < cmd->noptions; i++) {
        const gb__cli_option *o = &cmd->options[i];
        if (!o->metavar) fprintf(out, " [%s]", o->name);
        else fprintf(out, o->required ? " %s %s" : " [%s %s]", o->name, o->metavar);
    }
    fputc('\n', out);
}

static void print_help(const gb__cli_command *cmd) {
    print_usage_line(cmd, stdout);
    printf("\n%s.\n", cmd->summary);
    if (cmd->details) printf("\n%s", cmd->details);
    printf("\noptions (--name VALUE or --name=VALUE):\n");
    for (size_t i = 0; i < cmd->noptions; i++) {
        const gb__cli_option *o = &cmd->options[i];
        char left[64];
        snprintf(left, sizeof left, "%s %s", o->name, o->metavar ? o->metavar : "");
        printf("  %-18s %s", left, o->help);
        if (o->required) printf(" (required)");
        if (o->fallback) printf(" (default %s)", o->fallback);
        putchar('\n');
    }
    printf("  %-18s %s\n", "-h, --help", "show this help");
}

int gb__cli_usage_error(const gb__cli_command *cmd, const char *fmt, ...) {
    /* The message quotes the arguments: escaped like every printed line. */
    char *message = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&message, fmt, ap) < 0) message = NULL;
    va_end(ap);
    gb__cli_print(stderr, "glassbox %s: %s", cmd->name, message ? message : "out of memory");
    free(message);
    print_usage_line(cmd, stderr);
    fprintf(stderr, "'glassbox %s --help' describes the options.\n", cmd->name);
    return GB__CLI_USAGE;
}

/* ---- parsing --------------------------------------------------------------------------- */

static bool is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

/* Options a command may have: the values array holds no more. */
static size_t option_count(const gb__cli_command *cmd) {
    return cmd->noptions < GB__CLI_MAX_OPTIONS ? cmd->noptions : GB__CLI_MAX_OPTIONS;
}

/* The option `arg` names (`--db` or `--db=...`), or -1. */
static int find_option(const gb__cli_command *cmd, const char *arg) {
    size_t len = strcspn(arg, "=");
    for (size_t i = 0; i < option_count(cmd); i++)
        if (strlen(cmd->options[i].name) == len && !strncmp(arg, cmd->options[i].name, len))
            return (int)i;
    return -1;
}

/* One option starting at argv[*i]: its value into values[k]; *i moves past it. */
static int take_option(const gb__cli_command *cmd, int argc, char **argv, int *i, int k,
                       bool *seen, const char **values) {
    const gb__cli_option *o = &cmd->options[k];
    const char *eq = strchr(argv[*i], '=');
    if (!o->metavar) { /* a flag */
        if (eq) return gb__cli_usage_error(cmd, "%s takes no value", o->name);
        if (seen[k]) return gb__cli_usage_error(cmd, "%s is given more than once", o->name);
        seen[k] = true;
        values[k] = "yes";
        *i += 1;
        return GB__CLI_RUN;
    }
    const char *value = eq ? eq + 1 : *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!eq && value && !strncmp(value, "--", 2)) value = NULL;
    if (!value || !*value) return gb__cli_usage_error(cmd, "%s needs a value (%s)", o->name, o->metavar);
    if (seen[k]) return gb__cli_usage_error(cmd, "%s is given more than once", o->name);
    seen[k] = true;
    values[k] = value;
    *i += eq ? 1 : 2;
    return GB__CLI_RUN;
}

int gb__cli_parse(const gb__cli_command *cmd, int argc, char **argv,
                  const char *values[GB__CLI_MAX_OPTIONS]) {
    bool seen[GB__CLI_MAX_OPTIONS] = {0};
    for (size_t k = 0; k < option_count(cmd); k++) values[k] = cmd->options[k].fallback;
    /* --help wins wherever it stands, even after a mistake. */
    for (int i = 0; i < argc; i++)
        if (is_help(argv[i])) {
            print_help(cmd);
            return 0;
        }
    for (int i = 0; i < argc;) {
        int k = find_option(cmd, argv[i]);
        if (k < 0 && !strncmp(argv[i], "-", 1))
            return gb__cli_usage_error(cmd, "unknown option '%s'", argv[i]);
        if (k < 0)
            return gb__cli_usage_error(cmd, "unexpected argument '%s' (options are --name VALUE)",
                                       argv[i]);
        int rc = take_option(cmd, argc, argv, &i, k, seen, values);
        if (rc != GB__CLI_RUN) return rc;
    }
    for (size_t k = 0; k < option_count(cmd); k++)
        if (cmd->options[k].required && !seen[k])
            return gb__cli_usage_error(cmd, "%s %s is required", cmd->options[k].name,
                                       cmd->options[k].metavar);
    return GB__CLI_RUN;
}

bool gb__cli_int(const gb__cli_command *cmd, const char *const *values, size_t option, int lo,
                 int hi, int *out) {
    const char *text = values[option];
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*text && !*end && !errno && v >= lo && v <= hi) {
        *out = (int)v;
        return true;
    }
    gb__cli_usage_error(cmd, "%s needs an integer in %d..%d, not '%s'", cmd->options[option].name,
                        lo, hi, text);
    return false;
}
