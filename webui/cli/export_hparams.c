/* cli/export_hparams.c — `glassbox export --db FILE --hparams`: the
 * HParams dashboard's table as CSV on stdout, for a spreadsheet or pandas.
 *
 * The same table the page shows (gb_store_experiment): a row per run that
 * recorded hparams; columns run, status, each hparam of the experiment in
 * its order, then per metric its final value and its best ("<tag>" and
 * "<tag> (best)": the highest, or the lowest where lower is better). An
 * absent value is an empty field; numbers read back exactly (nan, inf and
 * -inf as such); a field holding a comma, quote or line break is quoted
 * (RFC 4180), so a stored name cannot break the table.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void field(const char *s, bool first) {
    if (!first) fputc(',', stdout);
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, stdout);
        return;
    }
    fputc('"', stdout);
    for (; *s; s++) {
        if (*s == '"') fputc('"', stdout);
        fputc(*s, stdout);
    }
    fputc('"', stdout);
}

static void number(double v) {
    char buf[40];
    field(gb__cli_format_value(v, false, buf, sizeof buf), false);
}

static void header(const gb_experiment *e) {
    field("run", true);
    field("status", false);
    for (size_t i = 0; i < e->hparam_count; i++) field(e->hparams[i].name, false);
    for (size_t i = 0; i < e->metric_count; i++) {
        char best[600];
        field(e->metrics[i].tag, false);
        snprintf(best, sizeof best, "%s (best)", e->metrics[i].tag);
        field(best, false);
    }
    fputc('\n', stdout);
}

static void row(const gb_experiment *e, const gb_experiment_run *r) {
    field(r->run->name, true);
    field(r->run->status, false);
    for (size_t i = 0; i < e->hparam_count; i++) {
        const gb_hparam *h = NULL;
        for (size_t k = 0; k < r->run->hparam_count && !h; k++)
            if (!strcmp(r->run->hparams[k].key, e->hparams[i].name)) h = &r->run->hparams[k];
        if (!h) field("", false);
        else if (h->is_number) number(h->number);
        else field(h->value, false);
    }
    for (size_t i = 0; i < e->metric_count; i++) {
        const gb_scalar_summary_row *m = &r->metrics[i];
        if (!m->count) {
            field("", false);
            field("", false);
            continue;
        }
        number(m->last);
        number(e->metrics[i].higher_is_better ? m->max : m->min);
    }
    fputc('\n', stdout);
}

int gb__cli_export_hparams(const gb__cli_command *cmd, const char *db) {
    gb_store *s = gb__cli_open_store(cmd, db);
    if (!s) return 1;
    gb_experiment *e = NULL;
    int rc = 0;
    if (gb_store_experiment(s, &e) != GB_STORE_OK) {
        rc = gb__cli_store_failed(cmd);
    } else {
        header(e);
        for (size_t i = 0; i < e->run_count; i++) row(e, &e->runs[i]);
        fflush(stdout);
    }
    gb_store_free(e);
    gb_store_close(s);
    return rc;
}
