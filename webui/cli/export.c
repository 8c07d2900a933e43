/* cli/export.c — `glassbox export --db FILE --run RUN --tag TAG
 * [--format csv|json]`: one scalar series at full resolution on stdout;
 * `glassbox export --db FILE --hparams`: the HParams table as CSV
 * (export_hparams.c); with --profile, a profiler capture instead
 * (export_profile.c); with --format tfevents --out DIR, the run as a
 * TensorBoard event file (export_tfevents.c).
 *
 * The points are streamed from the reader API (gb_store_scalar_points),
 * so memory stays bounded whatever the series length. A store problem
 * (missing file, not a store, unknown run or tag) is a message on stderr,
 * nothing on stdout, and exit code 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

const char *gb__cli_format_value(double v, bool json, char *buf, size_t n) {
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
    const char *v = gb__cli_format_value(value, e->json, buf, sizeof buf);
    if (e->json)
        printf("%s\n  {\"step\": %lld, \"wall_time\": %.6f, \"value\": %s}", e->count ? "," : "",
               (long long)step, wall_time, v);
    else
        printf("%lld,%.6f,%s\n", (long long)step, wall_time, v);
    e->count++;
    return true;
}

enum { DB, RUN, TAG, FORMAT, HPARAMS, PROFILE, ID, OUT };   /* options[] and values[] */

static int export_profile(const gb__cli_command *cmd, const char *const *values) {
    if (values[TAG] || values[HPARAMS])
        return gb__cli_usage_error(cmd, "--profile exports a capture: no --tag or --hparams");
    if (!values[RUN]) return gb__cli_usage_error(cmd, "--profile needs --run");
    gb_store *s = gb__cli_open_store(cmd, values[DB]);
    if (!s) return 1;
    const char *format = values[FORMAT] ? values[FORMAT] : "chrome-trace";
    int rc = gb__cli_export_profile(cmd, s, values[RUN], values[ID], format);
    gb_store_close(s);
    return rc;
}

static int export_series(const gb__cli_command *cmd, const char *const *values) {
    if (values[PROFILE]) return export_profile(cmd, values);
    if (values[ID]) return gb__cli_usage_error(cmd, "--id names a profile: it needs --profile");
    const char *db = values[DB], *run = values[RUN], *tag = values[TAG];
    const char *format = values[FORMAT] ? values[FORMAT] : "csv";
    if (!strcmp(format, "tfevents")) {
        if (!run || !values[OUT] || tag || values[HPARAMS])
            return gb__cli_usage_error(cmd, "--format tfevents writes a run: --run and --out DIR, no --tag");
        return gb__cli_export_tfevents(cmd, db, run, values[OUT]);
    }
    if (values[OUT]) return gb__cli_usage_error(cmd, "--out is for --format tfevents");
    if (strcmp(format, "csv") && strcmp(format, "json"))
        return gb__cli_usage_error(cmd, "unknown format '%s' (use csv, json or tfevents)", format);
    if (values[HPARAMS]) {
        if (run || tag) return gb__cli_usage_error(cmd, "--hparams exports every run: no --run or --tag");
        if (strcmp(format, "csv")) return gb__cli_usage_error(cmd, "--hparams writes CSV only");
        return gb__cli_export_hparams(cmd, db);
    }
    if (!run || !tag)
        return gb__cli_usage_error(cmd, "--run and --tag are required (or --hparams, or --profile)");
    gb_store *s = gb__cli_open_store(cmd, db);
    if (!s) return 1;
    /* Check the names first so a bad one prints nothing on stdout. */
    gb_scalar_series *probe;
    gb_query none = {1, 0, 0};   /* an empty range: only the name lookup */
    int rc = 0;
    if (gb_store_scalars(s, run, tag, &none, &probe) != GB_STORE_OK) {
        rc = gb__cli_store_failed(cmd);
    } else {
        gb_store_free(probe);
        exporter e = {.json = !strcmp(format, "json")};
        printf(e.json ? "[" : "step,wall_time,value\n");
        if (gb_store_scalar_points(s, run, tag, GB_STEP_MIN, GB_STEP_MAX, export_point, &e) !=
            GB_STORE_OK)
            rc = gb__cli_store_failed(cmd);
        printf(e.json ? "\n]\n" : "");
        fflush(stdout);
    }
    gb_store_close(s);
    return rc;
}

static const gb__cli_option options[] = {
    [DB] = {"--db", "FILE", "the store to read", .required = true},
    [RUN] = {"--run", "RUN", "the run (required unless --hparams)"},
    [TAG] = {"--tag", "TAG", "the scalar tag (a series)"},
    [FORMAT] = {"--format", "FORMAT",
                "csv or json (a series; csv when absent), chrome-trace (a profile), "
                "tfevents (a run, as a TensorBoard event file in --out)"},
    [HPARAMS] = {"--hparams", NULL, "the HParams table instead: a row per run, as CSV"},
    [PROFILE] = {"--profile", NULL, "a profiler capture of the run instead of a series"},
    [ID] = {"--id", "ID", "the capture to export (the run's last when absent)"},
    [OUT] = {"--out", "DIR", "with --format tfevents: the directory of the event file"},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_export = {
    .name = "export",
    .summary = "Writes one scalar series, the HParams table or a profile to stdout",
    .details = "Every point is written, streamed whatever the series length. Values read\n"
               "back exactly; NaN and infinities are nan/inf/-inf in CSV and the strings\n"
               "\"NaN\", \"Infinity\", \"-Infinity\" in JSON.\n"
               "With --hparams: the HParams dashboard's table as CSV, a row per run that\n"
               "recorded hparams: run, status, each hparam, then each metric's final value\n"
               "and its best (the highest, or the lowest where lower is better).\n"
               "With --profile, a profiler capture as Chrome trace-event JSON, which\n"
               "Perfetto and chrome://tracing open: a process per rank, a thread per\n"
               "recorded thread, each op and wait as a complete event.\n"
               "With --format tfevents --out DIR, the run's scalars, histograms, images\n"
               "and text as a TensorBoard event file in DIR (every value's bits kept),\n"
               "which TensorBoard, or 'glassbox import --tfevents DIR', reads.\n",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = export_series,
};
