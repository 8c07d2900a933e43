/* cli/inspect.c — `glassbox inspect --db FILE`: what a store holds.
 *
 * Runs (metadata, hyperparameters), their tags with event counts and step
 * ranges, and counts of engine events (traces, numerics alerts, messages).
 * It only reads the store, through the reader API. A store problem
 * (missing file, not a store, newer schema) is a message on stderr and
 * exit code 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

/* "2024-05-01 12:00:00 UTC" */
static const char *format_time(double t, char *buf, size_t size) {
    time_t secs = (time_t)t;
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

/* "key=value key=value ..." into a malloc'ed string ("" when none);
 * NULL when out of memory. */
static char *join_hparams(const gb_run_row *r) {
    size_t n = 1;
    for (size_t i = 0; i < r->hparam_count; i++)
        n += strlen(r->hparams[i].key) + strlen(r->hparams[i].value) + 2;
    char *text = malloc(n), *p = text;
    for (size_t i = 0; text && i < r->hparam_count; i++)
        p += sprintf(p, "%s%s=%s", i ? " " : "", r->hparams[i].key, r->hparams[i].value);
    if (text) *p = '\0';
    return text;
}

/* Every line quotes stored strings: gb__cli_print escapes them. */
static void print_run(const gb_run_row *r) {
    char started[64], last[64];
    gb__cli_print(stdout, "run '%s'", r->name);
    gb__cli_print(stdout, "  started   %s   last write %s",
                  format_time(r->start_time, started, sizeof started),
                  format_time(r->last_write_time, last, sizeof last));
    gb__cli_print(stdout, "  host      %s   pid %lld", r->host, (long long)r->pid);
    if (*r->command_line) gb__cli_print(stdout, "  command   %s", r->command_line);
    if (!r->hparam_count) return;
    char *hparams = join_hparams(r);
    gb__cli_print(stdout, "  hparams   %s", hparams ? hparams : "(out of memory)");
    free(hparams);
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

static int inspect_run(const gb__cli_command *cmd, gb_store *s, const gb_run_row *r) {
    print_run(r);
    gb_tags *tags;
    if (gb_store_tags(s, r->name, GB_KIND_ANY, &tags) != GB_STORE_OK)
        return gb__cli_store_failed(cmd);
    if (tags->count)
        gb__cli_print(stdout, "  %-10s %-32s %10s  %s", "KIND", "TAG", "EVENTS", "STEPS");
    for (size_t i = 0; i < tags->count; i++) {
        const gb_tag_row *t = &tags->rows[i];
        gb__cli_print(stdout, "  %-10s %-32s %10lld  %lld..%lld", gb_kind_name(t->kind), t->tag,
                      (long long)t->count, (long long)t->min_step, (long long)t->max_step);
    }
    if (!tags->count) gb__cli_print(stdout, "  (no tags)");
    gb_store_free(tags);
    long long traces = trace_count(s, r->name), alerts = numerics_count(s, r->name),
              messages = message_count(s, r->name);
    if (traces < 0 || alerts < 0 || messages < 0) return gb__cli_store_failed(cmd);
    gb__cli_print(stdout, "  events    %lld traces, %lld numerics alerts, %lld messages", traces,
                  alerts, messages);
    gb__cli_print(stdout, "%s", "");
    return 0;
}

enum { DB };   /* options[] and values[] */

static int inspect(const gb__cli_command *cmd, const char *const *values) {
    const char *db = values[DB];
    gb_store *s = gb__cli_open_store(cmd, db);
    if (!s) return 1;
    gb_runs *runs;
    int rc = 0;
    if (gb_store_runs(s, &runs) != GB_STORE_OK) {
        rc = gb__cli_store_failed(cmd);
    } else {
        gb__cli_print(stdout, "store %s (schema version %d): %zu run%s", db,
                      gb_store_schema_version(s), runs->count, runs->count == 1 ? "" : "s");
        gb__cli_print(stdout, "%s", "");
        for (size_t i = 0; i < runs->count && rc == 0; i++)
            rc = inspect_run(cmd, s, &runs->rows[i]);
        gb_store_free(runs);
    }
    gb_store_close(s);
    return rc;
}

static const gb__cli_option options[] = {
    [DB] = {"--db", "FILE", "the store to read", .required = true},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_inspect = {
    .name = "inspect",
    .summary = "Lists the runs of a store, their tags and their event counts",
    .details = "For each run: its metadata and hyperparameters, each tag with its kind,\n"
               "event count and step range, and the counts of traces, numerics alerts\n"
               "and messages the engine recorded.\n",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = inspect,
};
