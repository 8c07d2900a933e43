/* store/reader_hparams.c — what the HParams dashboard reads: the
 * experiment's declared hyperparameters and metrics, and a metric summed
 * up per run (last value, extremes) for every run at once.
 *
 * The summary reads the top rollup level only: one row per run (two when
 * the run has negative steps), so a table of a thousand runs costs a
 * thousand index rows per metric, never the series themselves.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/internal.h"

static const char *const type_names[] = {
    [GB_HPARAM_REAL] = "real", [GB_HPARAM_INT] = "int", [GB_HPARAM_STRING] = "string",
    [GB_HPARAM_BOOL] = "bool"};
static const char *const domain_names[] = {
    [GB_DOMAIN_NONE] = "none", [GB_DOMAIN_INTERVAL] = "interval",
    [GB_DOMAIN_DISCRETE] = "discrete"};

const char *gb_hparam_type_name(gb_hparam_type t) {
    return (unsigned)t < sizeof type_names / sizeof *type_names ? type_names[t] : "unknown";
}

const char *gb_hparam_domain_name(gb_hparam_domain_kind d) {
    return (unsigned)d < sizeof domain_names / sizeof *domain_names ? domain_names[d] : "unknown";
}

/* The index of text in names (n of them), or -1. The store keeps a
 * domain-less hparam's domain as '' rather than 'none'. */
static int name_index(const char *text, const char *const *names, int n) {
    for (int i = 0; text && i < n; i++)
        if (!strcmp(text, names[i])) return i;
    return -1;
}

static const char *text_col(sqlite3_stmt *st, gb__arena *a, int col, const char **out,
                            const char *why) {
    if (why) return why;
    why = gb__text_damage(st, col);
    if (!why && !(*out = gb__arena_strdup(a, (const char *)sqlite3_column_text(st, col))))
        why = gb__out_of_memory;
    return why;
}

static const char *fill_domain(sqlite3_stmt *st, gb__arena *a, gb_hparam_info *h) {
    const char *why = text_col(st, a, 0, &h->name, NULL);
    why = text_col(st, a, 1, &h->display_name, why);
    why = text_col(st, a, 2, &h->description, why);
    why = text_col(st, a, 7, &h->values_json, why);
    if (why) return why;
    int type = name_index((const char *)sqlite3_column_text(st, 3), type_names, 4);
    const char *domain = (const char *)sqlite3_column_text(st, 4);
    int d = domain && !*domain ? GB_DOMAIN_NONE : name_index(domain, domain_names, 3);
    if (type < 0) return "the type is not real, int, string or bool";
    if (d < 0) return "the domain is not '', interval or discrete";
    if (!gb_json_is_value(h->values_json) || h->values_json[0] != '[')
        return "the values are not a JSON array";
    h->type = (gb_hparam_type)type;
    h->domain = (gb_hparam_domain_kind)d;
    h->min = gb__col_double(st, 5);
    h->max = gb__col_double(st, 6);
    return NULL;
}

static const char *fill_metric(sqlite3_stmt *st, gb__arena *a, gb_metric_info *m) {
    const char *why = text_col(st, a, 0, &m->tag, NULL);
    why = text_col(st, a, 1, &m->display_name, why);
    if (why) return why;
    if (sqlite3_column_type(st, 2) != SQLITE_INTEGER || (sqlite3_column_int64(st, 2) & ~1))
        return "higher_is_better is neither 0 nor 1";
    m->higher_is_better = sqlite3_column_int(st, 2) != 0;
    return NULL;
}

/* Steps st, filling one row per result with domains (else metrics). */
static gb_store_status collect(gb_store *s, sqlite3_stmt *st, gb__arena *a, gb__rows *rows,
                               bool domains) {
    const char *table = domains ? "hparam_domains" : "hparam_metrics";
    if (!st) return GB_STORE_ERR_IO;
    int rc;
    gb_store_status status = GB_STORE_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        void *row = gb__rows_push(rows);
        const char *why = !row ? gb__out_of_memory
                          : domains ? fill_domain(st, a, row)
                                    : fill_metric(st, a, row);
        if (why == gb__out_of_memory) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (why) {
            char where[300];
            const char *key = (const char *)sqlite3_column_text(st, 0);
            snprintf(where, sizeof where, "'%.256s'", key ? key : "");
            status = gb__store_damaged(s, table, where, why);
            break;
        }
    }
    sqlite3_reset(st);
    return status != GB_STORE_OK ? status : gb__store_done(s, rc, "reading the experiment");
}

static gb_store_status hparams_config(gb_store *s, gb_hparams_config **out) {
    gb__arena *a;
    gb_hparams_config *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    gb__rows domains = {.elem = sizeof(gb_hparam_info)};
    gb__rows metrics = {.elem = sizeof(gb_metric_info)};
    gb_store_status st = GB_STORE_OK;
    if (gb_store_schema_version(s) >= 4) {
        gb__store_read_begin(s);
        st = collect(s,
                     gb__store_stmt(s, "SELECT name, display_name, description, type, domain, "
                                       "min, max, \"values\" FROM hparam_domains "
                                       "ORDER BY position, name"),
                     a, &domains, true);
        if (st == GB_STORE_OK)
            st = collect(s,
                         gb__store_stmt(s, "SELECT tag, display_name, higher_is_better FROM "
                                           "hparam_metrics ORDER BY position, tag"),
                         a, &metrics, false);
        gb__store_read_end(s);
    }
    res->hparam_count = domains.count;
    res->hparams = gb__rows_into(a, &domains);
    res->metric_count = metrics.count;
    res->metrics = gb__rows_into(a, &metrics);
    if (st == GB_STORE_OK && (domains.data || metrics.data)) st = GB_STORE_ERR_MEMORY;
    gb__rows_release(&domains);
    gb__rows_release(&metrics);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb_store_hparams_config(gb_store *s, gb_hparams_config **out) {
    if (!s || !out) return gb__store_null_args("gb_store_hparams_config");
    *out = NULL;
    GB__LOCKED(s, hparams_config(s, out));
}

/* ---- a metric per run ---------------------------------------------------------------- */

static double fmin_finite(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmin(a, b); }
static double fmax_finite(double a, double b) { return isnan(a) ? b : isnan(b) ? a : fmax(a, b); }

_Static_assert(GB__ROLLUP_LEVELS == 15, "the query below reads the top level, 15");

static gb_store_status scalar_summaries(gb_store *s, const char *tag, gb_scalar_summaries **out) {
    gb__arena *a;
    gb_scalar_summaries *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    /* The top level's buckets hold every step: one for steps >= 0, one for
     * negative steps. */
    sqlite3_stmt *st = gb__store_stmt(
        s, "SELECT r.name, ro.last_step, ro.last_value, ro.min, ro.max, ro.count "
           "FROM tags t JOIN runs r ON r.id = t.run_id "
           "JOIN scalar_rollups ro ON ro.tag_id = t.id AND ro.level = 15 "
           "WHERE t.name = ?1 AND t.kind = 1 ORDER BY r.name, ro.bucket");
    gb__rows rows = {.elem = sizeof(gb_scalar_summary_row)};
    int rc = SQLITE_ERROR;
    if (st) {
        sqlite3_bind_text(st, 1, tag, -1, SQLITE_STATIC);
        gb_scalar_summary_row *prev = NULL;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *run = (const char *)sqlite3_column_text(st, 0);
            gb_scalar_summary_row b = {
                .last_step = sqlite3_column_int64(st, 1), .last = gb__col_double(st, 2),
                .min = gb__col_double(st, 3), .max = gb__col_double(st, 4),
                .count = sqlite3_column_int64(st, 5)};
            if (prev && run && !strcmp(prev->run, run)) {   /* the run's second bucket */
                if (b.last_step >= prev->last_step) prev->last_step = b.last_step, prev->last = b.last;
                prev->min = fmin_finite(prev->min, b.min);
                prev->max = fmax_finite(prev->max, b.max);
                prev->count += b.count;
                continue;
            }
            gb_scalar_summary_row *r = gb__rows_push(&rows);
            if (!r || !(b.run = gb__arena_strdup(a, run))) {
                rc = SQLITE_NOMEM;
                break;
            }
            *r = b;
            prev = r;
        }
        sqlite3_reset(st);
    }
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    gb_store_status status = gb__store_done(s, rc, "reading a metric's summaries");
    if (status == GB_STORE_OK && rows.data) status = GB_STORE_ERR_MEMORY;
    gb__rows_release(&rows);
    if (status != GB_STORE_OK) {
        gb_store_free(res);
        return status;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb_store_scalar_summaries(gb_store *s, const char *tag,
                                          gb_scalar_summaries **out) {
    if (!s || !out || !tag) return gb__store_null_args("gb_store_scalar_summaries");
    *out = NULL;
    GB__LOCKED(s, scalar_summaries(s, tag, out));
}
