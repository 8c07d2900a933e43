/* cli.c — `glassbox inspect` and `glassbox export`: the store from a shell.
 *
 *   glassbox inspect --db FILE
 *       runs (metadata, hyperparameters), their tags with event counts and
 *       step ranges, and counts of engine events
 *   glassbox export --db FILE --run RUN --tag TAG --format csv|json
 *       the full-resolution scalar series, streamed (any length)
 *
 * Both only read the store, through the reader API. Errors (missing file,
 * not a store, newer schema, unknown run or tag, bad arguments) go to
 * stderr with a non-zero exit: 1 for a store problem, 2 for usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../webui/gb_cli.h"
#include "gb_reader.h"

/* ---- arguments ---------------------------------------------------------------------- */

typedef struct option {
    const char *name;    /* "--db" */
    const char **value;
} option;

/* Parses `--name VALUE` and `--name=VALUE`; false (after a message) on
 * anything else. */
static bool parse(const char *cmd, int argc, char **argv, option *opts, int nopts) {
    for (int i = 0; i < argc; i++) {
        int k = 0;
        size_t len = 0;
        for (; k < nopts; k++) {
            len = strlen(opts[k].name);
            if (!strncmp(argv[i], opts[k].name, len) && (!argv[i][len] || argv[i][len] == '='))
                break;
        }
        if (k == nopts) {
            fprintf(stderr, "glassbox %s: unknown argument '%s'\n", cmd, argv[i]);
            return false;
        }
        if (argv[i][len] == '=') {
            *opts[k].value = argv[i] + len + 1;
        } else if (i + 1 < argc) {
            *opts[k].value = argv[++i];
        } else {
            fprintf(stderr, "glassbox %s: %s needs a value\n", cmd, opts[k].name);
            return false;
        }
    }
    return true;
}

static gb_store *open_store(const char *cmd, const char *path) {
    gb_store *s;
    if (gb_store_open(path, &s) == GB_STORE_OK) return s;
    fprintf(stderr, "glassbox %s: %s\n", cmd, gb_store_last_error());
    return NULL;
}

static int store_error(const char *cmd) {
    fprintf(stderr, "glassbox %s: %s\n", cmd, gb_store_last_error());
    return 1;
}

/* ---- inspect ---------------------------------------------------------------------------- */

static void print_time(const char *label, double t) {
    char buf[64];
    time_t secs = (time_t)t;
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    printf("%s%s", label, buf);
}

static void print_run(const gb_run_row *r) {
    printf("run '%s'\n", r->name);
    print_time("  started   ", r->start_time);
    print_time("   last write ", r->last_write_time);
    printf("\n  host      %s   pid %lld\n", r->host, (long long)r->pid);
    if (*r->command_line) printf("  command   %s\n", r->command_line);
    if (r->hparam_count) {
        printf("  hparams  ");
        for (size_t i = 0; i < r->hparam_count; i++)
            printf(" %s=%s", r->hparams[i].key, r->hparams[i].value);
        printf("\n");
    }
}

/* Rows in one of the run's event tables; -1 on error. */
#define EVENT_COUNT(name, type, call)                     \
    static long long name(gb_store *s, const char *run) { \
        type *rows;                                       \
        if ((call) != GB_STORE_OK) return -1;             \
        long long n = (long long)rows->count;             \
        gb_store_free(rows);                              \
        return n;                                         \
    }
EVENT_COUNT(trace_count, gb_traces, gb_store_traces(s, run, NULL, NULL, &rows))
EVENT_COUNT(numerics_count, gb_numerics, gb_store_numerics(s, run, NULL, &rows))
EVENT_COUNT(message_count, gb_messages, gb_store_messages(s, run, NULL, &rows))

static int inspect_run(gb_store *s, const gb_run_row *r) {
    print_run(r);
    gb_tags *tags;
    if (gb_store_tags(s, r->name, GB_KIND_ANY, &tags) != GB_STORE_OK) return store_error("inspect");
    if (tags->count) printf("  %-10s %-32s %10s  %s\n", "KIND", "TAG", "EVENTS", "STEPS");
    for (size_t i = 0; i < tags->count; i++) {
        const gb_tag_row *t = &tags->rows[i];
        printf("  %-10s %-32s %10lld  %lld..%lld\n", gb_kind_name(t->kind), t->tag,
               (long long)t->count, (long long)t->min_step, (long long)t->max_step);
    }
    if (!tags->count) printf("  (no tags)\n");
    gb_store_free(tags);
    long long traces = trace_count(s, r->name), alerts = numerics_count(s, r->name),
              messages = message_count(s, r->name);
    if (traces < 0 || alerts < 0 || messages < 0) return store_error("inspect");
    printf("  events    %lld traces, %lld numerics alerts, %lld messages\n\n", traces, alerts,
           messages);
    return 0;
}

int gb_cli_inspect(int argc, char **argv) {
    const char *db = NULL;
    option opts[] = {{"--db", &db}};
    if (!parse("inspect", argc, argv, opts, 1)) return 2;
    if (!db) {
        fprintf(stderr, "usage: glassbox inspect --db FILE\n");
        return 2;
    }
    gb_store *s = open_store("inspect", db);
    if (!s) return 1;
    gb_runs *runs;
    int rc = 0;
    if (gb_store_runs(s, &runs) != GB_STORE_OK) {
        rc = store_error("inspect");
    } else {
        printf("store %s (schema version %d): %zu run%s\n\n", db, gb_store_schema_version(s),
               runs->count, runs->count == 1 ? "" : "s");
        for (size_t i = 0; i < runs->count && rc == 0; i++) rc = inspect_run(s, &runs->rows[i]);
        gb_store_free(runs);
    }
    gb_store_close(s);
    return rc;
}

/* ---- export ------------------------------------------------------------------------------ */

/* The shortest text that reads back as v; non-finite as `nan`/`inf`/`-inf`
 * (CSV) or the strings "NaN"/"Infinity"/"-Infinity" (JSON has no such
 * numbers). */
static const char *format_value(double v, bool json, char *buf, size_t n) {
    if (isnan(v)) return json ? "\"NaN\"" : "nan";
    if (isinf(v)) return v > 0 ? (json ? "\"Infinity\"" : "inf") : (json ? "\"-Infinity\"" : "-inf");
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

typedef struct exporter {
    bool json;
    long long count;
} exporter;

static bool export_point(void *user, int64_t step, double wall_time, double value) {
    exporter *e = user;
    char buf[40];
    const char *v = format_value(value, e->json, buf, sizeof buf);
    if (e->json)
        printf("%s\n  {\"step\": %lld, \"wall_time\": %.6f, \"value\": %s}", e->count ? "," : "",
               (long long)step, wall_time, v);
    else
        printf("%lld,%.6f,%s\n", (long long)step, wall_time, v);
    e->count++;
    return true;
}

int gb_cli_export(int argc, char **argv) {
    const char *db = NULL, *run = NULL, *tag = NULL, *format = "csv";
    option opts[] = {{"--db", &db}, {"--run", &run}, {"--tag", &tag}, {"--format", &format}};
    if (!parse("export", argc, argv, opts, 4)) return 2;
    if (!db || !run || !tag) {
        fprintf(stderr, "usage: glassbox export --db FILE --run RUN --tag TAG --format csv|json\n");
        return 2;
    }
    if (strcmp(format, "csv") && strcmp(format, "json")) {
        fprintf(stderr, "glassbox export: unknown format '%s' (use csv or json)\n", format);
        return 2;
    }
    gb_store *s = open_store("export", db);
    if (!s) return 1;
    /* Check the names first so a bad one prints nothing on stdout. */
    gb_scalar_series *probe;
    gb_query none = {1, 0, 0};   /* an empty range: only the name lookup */
    int rc = 0;
    if (gb_store_scalars(s, run, tag, &none, &probe) != GB_STORE_OK) {
        rc = store_error("export");
    } else {
        gb_store_free(probe);
        exporter e = {.json = !strcmp(format, "json")};
        printf(e.json ? "[" : "step,wall_time,value\n");
        if (gb_store_scalar_points(s, run, tag, GB_STEP_MIN, GB_STEP_MAX, export_point, &e) !=
            GB_STORE_OK)
            rc = store_error("export");
        printf(e.json ? "\n]\n" : "");
        fflush(stdout);
    }
    gb_store_close(s);
    return rc;
}
