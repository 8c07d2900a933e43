/* store/reader_hparams.c — what the HParams dashboard reads: the
 * experiment's declared hyperparameters and metrics, a metric summed up
 * per run (last value, extremes) for every run at once, and the two put
 * together as the experiment's table (gb_store_experiment).
 *
 * The summary reads the top rollup level only: one row per run (two when
 * the run has negative steps), so a table of a thousand runs costs a
 * thousand index rows per metric, never the series themselves.
 */
#include <ctype.h>
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
    if (gb__store_logdir(s)) return gb__logdir_hparams_config(gb__store_logdir(s), out);
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

static gb_store_status scalar_summaries(gb_store *s, const char *tag,
                                        gb_scalar_summaries **out) {
    if (gb__store_logdir(s)) return gb__logdir_scalar_summaries(gb__store_logdir(s), tag, out);
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

/* ---- the experiment: declaration (or inference) and a row per run ------------------------ */

/* strcmp, but runs of digits compare as numbers: fit names its layers'
 * hparams by index, and dense2.units comes before dense10.units. Equal
 * numbers written apart ("01", "1") fall back to strcmp. */
static int natural_cmp(const char *a, const char *b) {
    const char *x = a, *y = b;
    while (*x && *y) {
        if (isdigit((unsigned char)*x) && isdigit((unsigned char)*y)) {
            while (*x == '0') x++;
            while (*y == '0') y++;
            size_t nx = strspn(x, "0123456789"), ny = strspn(y, "0123456789");
            int c = nx != ny ? (nx < ny ? -1 : 1) : memcmp(x, y, nx);
            if (c) return c;
            x += nx, y += ny;
        } else if (*x != *y) {
            return (unsigned char)*x - (unsigned char)*y;
        } else {
            x++, y++;
        }
    }
    return *x || *y ? (unsigned char)*x - (unsigned char)*y : strcmp(a, b);
}

/* hparams inferred from the runs: every key, real when every value is a
 * number. Runs' hparams are sorted by key; keys are merged in order. */
static gb_store_status infer_hparams(gb__arena *a, const gb_runs *runs, gb_experiment *e) {
    gb__rows rows = {.elem = sizeof(gb_hparam_info)};
    for (size_t i = 0; i < runs->count; i++)
        for (size_t k = 0; k < runs->rows[i].hparam_count; k++) {
            const gb_hparam *h = &runs->rows[i].hparams[k];
            gb_hparam_info *found = NULL;
            for (size_t j = 0; j < rows.count && !found; j++)
                if (!strcmp(((gb_hparam_info *)rows.data)[j].name, h->key))
                    found = &((gb_hparam_info *)rows.data)[j];
            if (!found) {
                if (!(found = gb__rows_push(&rows))) goto oom;
                *found = (gb_hparam_info){.name = h->key, .display_name = "", .description = "",
                                          .type = GB_HPARAM_REAL, .min = NAN, .max = NAN,
                                          .values_json = "[]"};
            }
            if (!h->is_number) found->type = GB_HPARAM_STRING;
        }
    /* by name, as a person scans a table of keys nobody ordered */
    for (size_t i = 1; i < rows.count; i++)
        for (size_t j = i; j > 0; j--) {
            gb_hparam_info *r = rows.data;
            if (natural_cmp(r[j - 1].name, r[j].name) <= 0) break;
            gb_hparam_info t = r[j - 1];
            r[j - 1] = r[j];
            r[j] = t;
        }
    e->hparam_count = rows.count;
    e->hparams = gb__rows_into(a, &rows);
    if (!rows.data) return GB_STORE_OK;
oom:
    gb__rows_release(&rows);
    return GB_STORE_ERR_MEMORY;
}

static bool has_hparams(const gb_runs *runs, const char *name) {
    for (size_t i = 0; i < runs->count; i++)
        if (runs->rows[i].hparam_count && !strcmp(runs->rows[i].name, name)) return true;
    return false;
}

/* Every scalar tag of the runs with hparams, by name, each once; but the
 * training-health figures (health/<layer>/<figure>, a few per layer of
 * every fit), which the Health page shows: a 28-layer model's 84 took the
 * cap's places before its losses and learning rate. */
static gb_store_status infer_metrics(gb_store *s, gb__arena *a, const gb_runs *runs,
                                     gb_experiment *e) {
    gb_tags *tags;
    gb_store_status st = gb__store_tags(s, NULL, GB_KIND_SCALAR, &tags);
    if (st != GB_STORE_OK) return st;
    if (!gb__arena_adopt_result(a, tags)) {
        gb_store_free(tags);
        return GB_STORE_ERR_MEMORY;
    }
    gb__rows rows = {.elem = sizeof(gb_metric_info)};
    for (size_t i = 0; i < tags->count; i++) {
        const char *tag = tags->rows[i].tag;
        bool seen = false;
        for (size_t j = 0; j < rows.count && !seen; j++)
            seen = !strcmp(((gb_metric_info *)rows.data)[j].tag, tag);
        if (seen || rows.count == GB_EXPERIMENT_MAX_INFERRED_METRICS ||
            !strncmp(tag, "health/", 7) || !has_hparams(runs, tags->rows[i].run))
            continue;
        gb_metric_info *m = gb__rows_push(&rows);
        if (!m) {
            gb__rows_release(&rows);
            return GB_STORE_ERR_MEMORY;
        }
        *m = (gb_metric_info){.tag = tag, .display_name = "",
                              .higher_is_better = strstr(tag, "acc") != NULL};
    }
    for (size_t i = 1; i < rows.count; i++)   /* tags come by run, then name */
        for (size_t j = i; j > 0; j--) {
            gb_metric_info *r = rows.data;
            if (strcmp(r[j - 1].tag, r[j].tag) <= 0) break;
            gb_metric_info t = r[j - 1];
            r[j - 1] = r[j];
            r[j] = t;
        }
    e->metric_count = rows.count;
    e->metrics = gb__rows_into(a, &rows);
    if (!rows.data) return GB_STORE_OK;
    gb__rows_release(&rows);
    return GB_STORE_ERR_MEMORY;
}

/* The rows: runs with hparams, each metric's summary found by run name
 * (both lists are sorted by name: one merge per metric). */
static gb_store_status fill_runs(gb_store *s, gb__arena *a, const gb_runs *runs, gb_experiment *e) {
    size_t n = 0;
    for (size_t i = 0; i < runs->count; i++) n += runs->rows[i].hparam_count > 0;
    size_t ncells = n * e->metric_count;
    gb_experiment_run *rows = gb__arena_alloc(a, (n ? n : 1) * sizeof *rows);
    gb_scalar_summary_row *cells = gb__arena_alloc(a, (ncells ? ncells : 1) * sizeof *cells);
    if (!rows || !cells) return GB_STORE_ERR_MEMORY;
    for (size_t i = 0, r = 0; i < runs->count; i++)
        if (runs->rows[i].hparam_count) {
            rows[r].run = &runs->rows[i];
            rows[r].metrics = cells + r * e->metric_count;
            for (size_t m = 0; m < e->metric_count; m++)
                cells[r * e->metric_count + m] = (gb_scalar_summary_row){
                    .run = runs->rows[i].name, .last = NAN, .min = NAN, .max = NAN};
            r++;
        }
    for (size_t m = 0; m < e->metric_count; m++) {
        gb_scalar_summaries *sum;
        gb_store_status st = scalar_summaries(s, e->metrics[m].tag, &sum);
        if (st != GB_STORE_OK) return st;
        size_t r = 0;
        for (size_t k = 0; k < sum->count && r < n; k++) {
            int c = 1;   /* set whenever r < n (GCC cannot tell) */
            while (r < n && (c = strcmp(rows[r].run->name, sum->rows[k].run)) < 0) r++;
            if (r < n && c == 0) cells[r * e->metric_count + m] = sum->rows[k],
                                 cells[r * e->metric_count + m].run = rows[r].run->name;
        }
        gb_store_free(sum);
    }
    e->run_count = n;
    e->runs = n ? rows : NULL;   /* as every reader: no rows, no array */
    return GB_STORE_OK;
}

static gb_store_status experiment(gb_store *s, gb_experiment **out) {
    gb__arena *a;
    gb_experiment *e = gb__result_new(sizeof *e, &a);
    if (!e) return GB_STORE_ERR_MEMORY;
    gb_runs *runs = NULL;
    gb_hparams_config *c = NULL;
    gb_store_status st = gb__store_runs(s, &runs);
    if (st == GB_STORE_OK && !gb__arena_adopt_result(a, runs)) st = GB_STORE_ERR_MEMORY;
    if (st == GB_STORE_OK) st = hparams_config(s, &c);
    if (st == GB_STORE_OK && !gb__arena_adopt_result(a, c)) st = GB_STORE_ERR_MEMORY;
    if (st == GB_STORE_OK) {
        e->declared = c->hparam_count || c->metric_count;
        e->hparam_count = c->hparam_count, e->hparams = c->hparams;
        e->metric_count = c->metric_count, e->metrics = c->metrics;
        if (!c->hparam_count) st = infer_hparams(a, runs, e);
        if (st == GB_STORE_OK && !c->metric_count) st = infer_metrics(s, a, runs, e);
    }
    if (st == GB_STORE_OK) st = fill_runs(s, a, runs, e);
    if (st != GB_STORE_OK) {
        gb_store_free(e);
        return st;
    }
    *out = e;
    return GB_STORE_OK;
}

gb_store_status gb_store_experiment(gb_store *s, gb_experiment **out) {
    if (!s || !out) return gb__store_null_args("gb_store_experiment");
    *out = NULL;
    GB__LOCKED(s, experiment(s, out));
}
