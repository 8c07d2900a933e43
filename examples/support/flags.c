/* examples/support/flags.c — the examples' flag parser (flags.h): one
 * table per program gives its usage, its --help and the wording of every
 * mistake. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

/* ---- texts --------------------------------------------------------------------------- */

/* The value a flag holds now (its default before parsing), or "" for none. */
static void current_value(const example_flag *f, char *out, size_t n) {
    out[0] = '\0';
    switch (f->kind) {
    case EXAMPLE_SWITCH: break;
    case EXAMPLE_INT: snprintf(out, n, "%d", *(int *)f->value); break;
    case EXAMPLE_INT64: snprintf(out, n, "%" PRId64, *(int64_t *)f->value); break;
    case EXAMPLE_UINT64: snprintf(out, n, "%" PRIu64, *(uint64_t *)f->value); break;
    case EXAMPLE_DOUBLE: snprintf(out, n, "%g", *(double *)f->value); break;
    case EXAMPLE_STRING:
    case EXAMPLE_OPTIONAL:
        if (*(const char **)f->value) snprintf(out, n, "%s", *(const char **)f->value);
        break;
    }
}

static void print_help(const example_program *p) {
    printf("usage: %s [options]\n\n%s\n\noptions (--name VALUE or --name=VALUE):\n", p->name,
           p->summary);
    for (size_t i = 0; i < p->nflags; i++) {
        const example_flag *f = &p->flags[i];
        char left[64], def[128];
        if (f->kind == EXAMPLE_SWITCH) snprintf(left, sizeof left, "%s", f->name);
        else if (f->kind == EXAMPLE_OPTIONAL) snprintf(left, sizeof left, "%s[=%s]", f->name, f->metavar);
        else snprintf(left, sizeof left, "%s %s", f->name, f->metavar);
        current_value(f, def, sizeof def);
        printf("  %-26s %s", left, f->help);
        if (def[0] && f->kind != EXAMPLE_OPTIONAL) printf(" (default %s)", def);
        putchar('\n');
    }
    printf("  %-26s %s\n", "-h, --help", "show this help");
}

int example_usage_error(const example_program *p, const char *fmt, ...) {
    fprintf(stderr, "%s: ", p->name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n'%s --help' lists the flags.\n", p->name);
    return 2;
}

/* ---- values ------------------------------------------------------------------------------ */

/* Stores text into f's value; false when it is not a whole number of the
 * flag's kind. */
static bool store_value(const example_flag *f, const char *text) {
    char *end = NULL;
    errno = 0;
    switch (f->kind) {
    case EXAMPLE_INT: {
        long v = strtol(text, &end, 10);
        if (v < -2147483647L - 1 || v > 2147483647L) errno = ERANGE;
        *(int *)f->value = (int)v;
        break;
    }
    case EXAMPLE_INT64: *(int64_t *)f->value = strtoll(text, &end, 10); break;
    case EXAMPLE_UINT64:
        if (text[0] == '-') return false;
        *(uint64_t *)f->value = strtoull(text, &end, 10);
        break;
    case EXAMPLE_DOUBLE: *(double *)f->value = strtod(text, &end); break;
    case EXAMPLE_STRING:
    case EXAMPLE_OPTIONAL: *(const char **)f->value = text; return true;
    case EXAMPLE_SWITCH: return false;
    }
    return *text && end && !*end && !errno;
}

static const char *kind_name(example_flag_kind k) {
    return k == EXAMPLE_DOUBLE ? "a number" : k == EXAMPLE_UINT64 ? "a whole number >= 0" : "a whole number";
}

/* ---- parsing --------------------------------------------------------------------------- */

static bool is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* The flag `arg` names (`--db` or `--db=...`), or NULL. */
static const example_flag *find_flag(const example_program *p, const char *arg) {
    size_t len = strcspn(arg, "=");
    for (size_t i = 0; i < p->nflags; i++)
        if (strlen(p->flags[i].name) == len && !strncmp(arg, p->flags[i].name, len)) return &p->flags[i];
    return NULL;
}

static int unknown_flag(const example_program *p, const char *arg) {
    size_t len = strcspn(arg, "=");
    for (size_t i = 0; i < p->nforeign; i++)
        if (strlen(p->foreign[i].name) == len && !strncmp(arg, p->foreign[i].name, len))
            return example_usage_error(p, "%.*s is not a flag of %s: %s", (int)len, arg, p->name,
                                       p->foreign[i].why);
    return example_usage_error(p, "unknown flag '%s'", arg);
}

/* The flag at argv[*i] (and its value); *i moves past them. */
static int take_flag(const example_program *p, const example_flag *f, int argc, char **argv, int *i) {
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    (*i)++;
    if (f->kind == EXAMPLE_SWITCH) {
        if (eq) return example_usage_error(p, "%s takes no value (given '%s')", f->name, eq + 1);
        *(bool *)f->value = true;
        return EXAMPLE_RUN;
    }
    if (f->kind == EXAMPLE_OPTIONAL) {   /* a value only after '=': a bare flag gives "" */
        *(const char **)f->value = eq ? eq + 1 : "";
        return EXAMPLE_RUN;
    }
    const char *value = eq ? eq + 1 : NULL;
    if (!value && *i < argc && strncmp(argv[*i], "--", 2)) value = argv[(*i)++];
    if (!value || !*value) return example_usage_error(p, "%s needs a value (%s)", f->name, f->metavar);
    if (!store_value(f, value))
        return example_usage_error(p, "%s needs %s, not '%s'", f->name, kind_name(f->kind), value);
    return EXAMPLE_RUN;
}

int example_parse_flags(const example_program *p, int argc, char **argv) {
    /* --help wins wherever it stands, even after a mistake. */
    for (int i = 1; i < argc; i++)
        if (is_help(argv[i])) {
            print_help(p);
            return 0;
        }
    for (int i = 1; i < argc;) {
        const example_flag *f = find_flag(p, argv[i]);
        if (!f && argv[i][0] == '-') return unknown_flag(p, argv[i]);
        if (!f) return example_usage_error(p, "unexpected argument '%s' (flags are --name VALUE)", argv[i]);
        int rc = take_flag(p, f, argc, argv, &i);
        if (rc != EXAMPLE_RUN) return rc;
    }
    return EXAMPLE_RUN;
}
