/* cli/inspect.c — `glassbox inspect --db FILE`: what a store holds.
 *
 * Runs (metadata, hyperparameters), their tags with event counts and step
 * ranges, and counts of engine events (traces, numerics alerts, messages).
 * It only reads the store, through the reader API. A store problem
 * (missing file, not a store, newer schema) is a message on stderr and
 * exit code 1.
 */
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"

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

static int inspect_run(const gb__cli_command *cmd, gb_store *s, const gb_run_row *r) {
    print_run(r);
    gb_tags *tags;
    if (gb_store_tags(s, r->name, GB_KIND_ANY, &tags) != GB_STORE_OK)
        return gb__cli_store_failed(cmd);
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
    if (traces < 0 || alerts < 0 || messages < 0) return gb__cli_store_failed(cmd);
    printf("  events    %lld traces, %lld numerics alerts, %lld messages\n\n", traces, alerts,
           messages);
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
        printf("store %s (schema version %d): %zu run%s\n\n", db, gb_store_schema_version(s),
               runs->count, runs->count == 1 ? "" : "s");
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
