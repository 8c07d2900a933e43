/* fuzz_summary_reader_store.c — the store's reader API (gb_reader.h) on
 * damaged stores: opening one, and every query on what it lists.
 *
 * The input becomes a store file (store_edit.h: edits of a small store the
 * writer made, or a whole SQLite file), opened read-only as the CLI and
 * the server open stores. Then every query runs with parameters taken
 * from what the store lists: runs and their hyperparameters, the tags of
 * every kind, each tag through every tag query (scalars raw, streamed and
 * downsampled over several ranges, histograms, distributions, image lists
 * with and without PNGs, each listed PNG, text, graphs, precision-recall
 * curves), each run's traces, numerics alerts (their details parsed), op
 * timings, messages and training-health alerts, whole and paged, the
 * health counts and heat map, and the experiment's table. This
 * links the store library alone.
 *
 * What must hold: no crash, leak or undefined behaviour; each call either
 * succeeds with a well-formed result (strings and arrays where the counts
 * say, rows within the step range and row budget asked for, PNGs with
 * their signature, parsed details within their bounds) or fails with a
 * status that fits (never MEMORY on a store this small) and a message,
 * leaving *out NULL.
 */
#include <ftw.h>
#include <math.h>
#include <unistd.h>

#include "detail_check.h"
#include "fuzz_target.h"
#include "gb_reader.h"
#include "store_edit.h"

/* Bounds on the work per input: a damaged store can list many names. */
#define MAX_RUNS 6
#define MAX_TAGS 24
#define MAX_PNGS 8

static char dir[64], path[96];

/* ---- set-up -------------------------------------------------------------------- */

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(void) { nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "%s", "/tmp/gb_fuzz_store_XXXXXX");
    FUZZ_CHECK(mkdtemp(dir) != NULL, "cannot make a temporary directory");
    atexit(remove_dir);
    snprintf(path, sizeof path, "%s/store.sqlite", dir);
    edit_load_base(GB_FUZZ_DIR "/stores/every_kind.sqlite");
    /* A base store of an older schema would test the past: say so. */
    gb_store *s = NULL;
    FUZZ_CHECK(gb_store_open(GB_FUZZ_DIR "/stores/every_kind.sqlite", &s) == GB_STORE_OK &&
                   gb_store_schema_version(s) == GB_STORE_SCHEMA_VERSION,
               "tests/fuzz/stores/every_kind.sqlite is not a current store (%s): write it again "
               "with make_fuzz_store",
               gb_store_last_error());
    gb_store_close(s);
    return 0;
}

/* The store and whatever side files SQLite made beside it. */
static void remove_store(void) {
    static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
    char p[128];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

/* ---- checks --------------------------------------------------------------------- */

#define BIT(st) (1u << (st))
/* What a query may fail with on a damaged store: names that no longer
 * resolve (a name cut at a NUL byte, a kind out of range), SQLite's
 * corruption errors, damaged rows. */
#define QUERY_FAILURES \
    (BIT(GB_STORE_ERR_NO_RUN) | BIT(GB_STORE_ERR_NO_TAG) | BIT(GB_STORE_ERR_IO) | BIT(GB_STORE_ERR_DATA))

/* A failed call: a status it may fail with, a message, no result. */
static void check_failure(const char *call, gb_store_status st, unsigned allowed,
                          const void *out) {
    FUZZ_CHECK(st != GB_STORE_OK && (BIT(st) & allowed), "%s: %s: %s", call,
               gb_store_status_name(st), gb_store_last_error());
    FUZZ_CHECK(gb_store_last_error()[0] != '\0', "%s: %s without a message", call,
               gb_store_status_name(st));
    FUZZ_CHECK(out == NULL, "%s failed but left a result", call);
}

/* Reads a whole string, so ASan sees it is one. */
static size_t text_len(const char *what, const char *s) {
    FUZZ_CHECK(s != NULL, "%s is NULL", what);
    return strlen(s);
}

/* rows is an array of count rows (NULL only when empty). */
static void check_rows(const char *what, size_t count, const void *rows) {
    FUZZ_CHECK((count == 0) == (rows == NULL), "%s: %zu rows at %p", what, count, rows);
}

/* ---- runs, tags, events ------------------------------------------------------------- */

static void check_runs(const gb_runs *r) {
    check_rows("runs", r->count, r->rows);
    for (size_t i = 0; i < r->count; i++) {
        const gb_run_row *run = &r->rows[i];
        text_len("run name", run->name);
        text_len("run host", run->host);
        text_len("run command line", run->command_line);
        text_len("run status", run->status);
        check_rows("hparams", run->hparam_count, run->hparams);
        for (size_t k = 0; k < run->hparam_count; k++) {
            text_len("hparam key", run->hparams[k].key);
            text_len("hparam value", run->hparams[k].value);
        }
    }
}

static void check_tags(const gb_tags *t) {
    check_rows("tags", t->count, t->rows);
    for (size_t i = 0; i < t->count; i++) {
        text_len("tag run", t->rows[i].run);
        text_len("tag name", t->rows[i].tag);
    }
}

/* Event rows: ids after q->after_id, at most q->limit of them. */
static void check_event_page(const char *what, size_t count, const gb_event_query *q,
                             int64_t first_id, int64_t last_id) {
    FUZZ_CHECK(!q->limit || count <= q->limit, "%s: %zu rows, limit %zu", what, count, q->limit);
    FUZZ_CHECK(!count || (first_id > q->after_id && last_id > q->after_id),
               "%s: id %lld not after %lld", what, (long long)first_id, (long long)q->after_id);
}

static void query_traces(gb_store *s, const char *run, const char *function,
                         const gb_event_query *q) {
    gb_traces *t = NULL;
    gb_store_status st = gb_store_traces(s, run, function, q, &t);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_traces", st, QUERY_FAILURES, t);
        return;
    }
    check_rows("traces", t->count, t->rows);
    for (size_t i = 0; i < t->count; i++) {
        const gb_trace_row *r = &t->rows[i];
        text_len("function", r->function);
        text_len("reason", r->reason);
        text_len("signature", r->signature);
        text_len("detail", r->detail);
        FUZZ_CHECK(!function || !strcmp(function, r->function), "trace of another function");
    }
    if (t->count) check_event_page("traces", t->count, q, t->rows[0].id, t->rows[t->count - 1].id);
    /* Each trace's graphs, read apart from it. */
    for (size_t i = 0; i < t->count && i < 4; i++) {
        for (int traced = 0; traced < 2; traced++) {
            gb_trace_graph *g = NULL;
            st = gb_store_trace_graph(s, run, t->rows[i].id, traced, &g);
            if (st != GB_STORE_OK) {
                check_failure("gb_store_trace_graph", st, QUERY_FAILURES | BIT(GB_STORE_ERR_NO_ROW), g);
                continue;
            }
            FUZZ_CHECK(!g->json || strlen(g->json) == g->len, "a graph's length is not its text's");
            gb_store_free(g);
        }
    }
    gb_store_free(t);
}

/* Returns the id of the page's first row (0 when none), to page from. */
static int64_t query_numerics(gb_store *s, const char *run, const gb_event_query *q) {
    gb_numerics *n = NULL;
    gb_store_status st = gb_store_numerics(s, run, q, &n);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_numerics", st, QUERY_FAILURES, n);
        return 0;
    }
    check_rows("numerics", n->count, n->rows);
    for (size_t i = 0; i < n->count; i++) {
        const gb_numerics_row *r = &n->rows[i];
        text_len("op_type", r->op_type);
        text_len("op_name", r->op_name);
        text_len("function", r->function);
        text_len("scope_path", r->scope_path);
        text_len("forward_op", r->forward_op);
        text_len("message", r->message);
        check_detail(r->detail);
    }
    int64_t first = n->count ? n->rows[0].id : 0;
    if (n->count) check_event_page("numerics", n->count, q, first, n->rows[n->count - 1].id);
    gb_store_free(n);
    return first;
}

static void query_messages(gb_store *s, const char *run, const gb_event_query *q) {
    gb_messages *m = NULL;
    gb_store_status st = gb_store_messages(s, run, q, &m);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_messages", st, QUERY_FAILURES, m);
        return;
    }
    check_rows("messages", m->count, m->rows);
    for (size_t i = 0; i < m->count; i++) {
        const gb_message_row *r = &m->rows[i];
        text_len("kind", r->kind);
        text_len("op_type", r->op_type);
        text_len("op_name", r->op_name);
        text_len("device", r->device);
        text_len("message", r->message);
    }
    if (m->count) check_event_page("messages", m->count, q, m->rows[0].id, m->rows[m->count - 1].id);
    gb_store_free(m);
}

static void query_function_stats(gb_store *s, const char *run) {
    gb_function_stats_list *f = NULL;
    gb_store_status st = gb_store_function_stats(s, run, &f);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_function_stats", st, QUERY_FAILURES, f);
        return;
    }
    check_rows("function counters", f->count, f->rows);
    for (size_t i = 0; i < f->count; i++) text_len("function", f->rows[i].function);
    gb_store_free(f);
}

static void query_op_timings(gb_store *s, const char *run, const char *function) {
    gb_op_timings *o = NULL;
    gb_store_status st = function ? gb_store_function_op_timings(s, run, function, &o)
                                  : gb_store_op_timings(s, run, &o);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_op_timings", st, QUERY_FAILURES, o);
        return;
    }
    check_rows("op timings", o->count, o->rows);
    for (size_t i = 0; i < o->count; i++) {
        text_len("op_name", o->rows[i].op_name);
        text_len("op_type", o->rows[i].op_type);
        text_len("device", o->rows[i].device);
    }
    gb_store_free(o);
}

/* Training health: the alerts (a page at a time), their counts, and the
 * heat map of a figure, whole and in two columns. */
static void query_health(gb_store *s, const char *run, const gb_event_query *q) {
    gb_health_alerts *a = NULL;
    gb_store_status st = gb_store_health_alerts(s, run, q, &a);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_health_alerts", st, QUERY_FAILURES, a);
    } else {
        check_rows("health", a->count, a->rows);
        FUZZ_CHECK(!q->limit || a->count <= q->limit, "health: %zu rows, limit %zu", a->count,
                   q->limit);
        for (size_t i = 0; i < a->count; i++) {
            const gb_health_row *r = &a->rows[i];
            FUZZ_CHECK(r->id > q->after_id, "health: id %lld", (long long)r->id);
            text_len("kind", r->kind);
            text_len("layer", r->layer);
            text_len("variable", r->variable);
            text_len("figures", r->figures);
            text_len("message", r->message);
            text_len("advice", r->advice);
            text_len("severity name", gb_health_severity_name(r->severity));
        }
        gb_store_free(a);
    }
    gb_health_counts *c = NULL;
    st = gb_store_health_counts(s, run, &c);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_health_counts", st, QUERY_FAILURES, c);
    } else {
        int64_t sum = 0;
        for (int k = 0; k < 4; k++) sum += c->by_severity[k];
        FUZZ_CHECK(sum == c->total, "health counts: %lld by severity, %lld in all", (long long)sum,
                   (long long)c->total);
        gb_store_free(c);
    }
    for (size_t columns = 0; columns <= 2; columns += 2) {
        gb_health_heatmap *m = NULL;
        gb_query hq = {GB_STEP_MIN, GB_STEP_MAX, columns};
        st = gb_store_health_heatmap(s, run, "grad_norm", &hq, &m);
        if (st != GB_STORE_OK) {
            check_failure("gb_store_health_heatmap", st, QUERY_FAILURES, m);
            continue;
        }
        FUZZ_CHECK(!columns || m->column_count <= columns, "heat map: %zu columns of %zu",
                   m->column_count, columns);
        check_rows("health figures", m->figure_count, m->figures);
        for (size_t i = 0; i < m->figure_count; i++) text_len("figure", m->figures[i]);
        for (size_t i = 0; i < m->layer_count; i++) text_len("layer", m->layers[i]);
        for (size_t k = 0; k < m->column_count; k++) {
            FUZZ_CHECK(m->steps[k] <= m->steps_last[k] && (!k || m->steps[k] > m->steps_last[k - 1]),
                       "heat map: column %zu is steps %lld..%lld", k, (long long)m->steps[k],
                       (long long)m->steps_last[k]);
            for (size_t l = 0; l < m->layer_count; l++)
                FUZZ_CHECK(m->cells[l * m->column_count + k].count >= 0, "heat map: a count below 0");
        }
        gb_store_free(m);
    }
}

/* Every event table of a run, whole and a page at a time. */
static void query_events(gb_store *s, const char *run) {
    const gb_event_query all = GB_EVENT_QUERY_ALL, one = {0, 1};
    int64_t first = query_numerics(s, run, &all);
    query_numerics(s, run, &one);
    query_numerics(s, run, &(gb_event_query){first, 2});
    query_traces(s, run, NULL, &all);
    query_traces(s, run, "train_step", &one);
    query_messages(s, run, &all);
    query_messages(s, run, &(gb_event_query){1, 1});
    query_op_timings(s, run, NULL);
    query_op_timings(s, run, "train_step");
    query_function_stats(s, run);
    query_health(s, run, &all);
    query_health(s, run, &(gb_event_query){1, 1});
}

/* ---- tag queries ---------------------------------------------------------------------- */

static bool in_range(int64_t step, const gb_query *q) {
    return step >= q->step_min && step <= q->step_max;
}

/* At most q->max_rows rows (or steps), each within the range. */
static void check_budget(const char *what, size_t rows, const gb_query *q) {
    FUZZ_CHECK(!q->max_rows || rows <= q->max_rows, "%s: %zu rows for a budget of %zu", what, rows,
               q->max_rows);
}

static void query_scalars(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    gb_scalar_series *r = NULL;
    gb_store_status st = gb_store_scalars(s, run, tag, q, &r);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_scalars", st, QUERY_FAILURES, r);
        return;
    }
    check_rows("scalars", r->count, r->rows);
    check_budget("scalars", r->count, q);
    if (!r->downsampled) {
        FUZZ_CHECK(r->total_points == (int64_t)r->count, "raw series: %lld points, %zu rows",
                   (long long)r->total_points, r->count);
        for (size_t i = 0; i < r->count; i++)
            FUZZ_CHECK(in_range(r->rows[i].step, q), "scalar step %lld out of range",
                       (long long)r->rows[i].step);
    }
    gb_store_free(r);
}

typedef struct point_count {
    const gb_query *q;
    int seen, stop_after;
} point_count;

static bool count_point(void *user, int64_t step, double wall_time, double value) {
    (void)wall_time, (void)value;
    point_count *c = user;
    FUZZ_CHECK(in_range(step, c->q), "streamed step %lld out of range", (long long)step);
    return ++c->seen < c->stop_after;
}

static void query_points(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    point_count c = {q, 0, 3};
    gb_store_status st = gb_store_scalar_points(s, run, tag, q->step_min, q->step_max,
                                                count_point, &c);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_scalar_points", st, QUERY_FAILURES, NULL);
        return;
    }
    FUZZ_CHECK(c.seen <= c.stop_after, "streaming went on after the sink said stop");
}

/* Sums what the rows point to, so ASan sees every value is there. */
static double touch(const double *v, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    return sum;
}

static void query_histograms(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    gb_histograms *h = NULL;
    gb_store_status st = gb_store_histograms(s, run, tag, q, &h);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_histograms", st, QUERY_FAILURES, h);
        return;
    }
    check_rows("histograms", h->count, h->rows);
    check_budget("histograms", h->count, q);
    for (size_t i = 0; i < h->count; i++) {
        const gb_histogram_row *r = &h->rows[i];
        FUZZ_CHECK(in_range(r->step, q), "histogram step %lld out of range", (long long)r->step);
        FUZZ_CHECK(!r->bucket_count || (r->edges && r->counts), "buckets without arrays");
        touch(r->edges, r->bucket_count ? r->bucket_count + 1 : 0);
        touch(r->counts, r->bucket_count);
    }
    gb_distributions *d = NULL;
    st = gb_store_distributions(s, run, tag, q, &d);
    FUZZ_CHECK(st == GB_STORE_OK, "distributions fail where histograms did not: %s",
               gb_store_last_error());
    FUZZ_CHECK(d->count == h->count, "%zu distributions of %zu histograms", d->count, h->count);
    check_rows("distributions", d->count, d->rows);
    for (size_t i = 0; i < d->count; i++) touch(d->rows[i].values, GB_DISTRIBUTION_POINTS);
    gb_store_free(d);
    gb_store_free(h);
}

static void check_png(const char *what, const unsigned char *png, size_t size) {
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    FUZZ_CHECK(png && size >= 8 && !memcmp(png, signature, 8), "%s: not a PNG", what);
    volatile unsigned char last = png[size - 1];
    (void)last;
}

static void query_png(gb_store *s, const char *run, const char *tag, const gb_image_row *im) {
    gb_blob *b = NULL;
    gb_store_status st = gb_store_image_png(s, run, tag, im->step, im->index, &b);
    /* NO_ROW: a step or index stored as a REAL lists truncated, and is
     * then not found under that number. */
    if (st != GB_STORE_OK) {
        check_failure("gb_store_image_png", st, QUERY_FAILURES | BIT(GB_STORE_ERR_NO_ROW), b);
        return;
    }
    check_png("gb_store_image_png", b->data, b->size);
    gb_store_free(b);
}

/* Rows of one step are adjacent (ordered by step): count the steps. */
static size_t count_steps(const gb_images *im) {
    size_t steps = 0;
    for (size_t i = 0; i < im->count; i++) steps += !i || im->rows[i].step != im->rows[i - 1].step;
    return steps;
}

/* Lists images (with their PNGs or not); `fetch`: each listed one's PNG
 * is read on its own too. */
static void query_images(gb_store *s, const char *run, const char *tag, const gb_query *q,
                         bool with_png, bool fetch) {
    gb_images *im = NULL;
    gb_store_status st = gb_store_images(s, run, tag, q, with_png, &im);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_images", st, QUERY_FAILURES, im);
        return;
    }
    check_rows("images", im->count, im->rows);
    check_budget("image steps", count_steps(im), q);
    for (size_t i = 0; i < im->count; i++) {
        const gb_image_row *r = &im->rows[i];
        FUZZ_CHECK(in_range(r->step, q), "image step %lld out of range", (long long)r->step);
        if (with_png) check_png("gb_store_images", r->png, r->png_size);
        else FUZZ_CHECK(r->png == NULL, "a PNG not asked for");
        if (fetch && i < MAX_PNGS) query_png(s, run, tag, r);
    }
    gb_store_free(im);
}

static void query_texts(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    gb_texts *t = NULL;
    gb_store_status st = gb_store_texts(s, run, tag, q, &t);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_texts", st, QUERY_FAILURES, t);
        return;
    }
    check_rows("texts", t->count, t->rows);
    check_budget("texts", t->count, q);
    for (size_t i = 0; i < t->count; i++) {
        FUZZ_CHECK(in_range(t->rows[i].step, q), "text step out of range");
        text_len("text", t->rows[i].text);
    }
    gb_store_free(t);
}

static void query_graphs(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    gb_graphs *g = NULL;
    gb_store_status st = gb_store_graphs(s, run, tag, q, &g);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_graphs", st, QUERY_FAILURES, g);
        return;
    }
    check_rows("graphs", g->count, g->rows);
    check_budget("graphs", g->count, q);
    for (size_t i = 0; i < g->count; i++) {
        FUZZ_CHECK(in_range(g->rows[i].step, q), "graph step out of range");
        text_len("format", g->rows[i].format);
        text_len("content", g->rows[i].content);
    }
    gb_store_free(g);
}

static void query_pr_curves(gb_store *s, const char *run, const char *tag, const gb_query *q) {
    gb_pr_curves *p = NULL;
    gb_store_status st = gb_store_pr_curves(s, run, tag, q, &p);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_pr_curves", st, QUERY_FAILURES, p);
        return;
    }
    check_rows("pr_curves", p->count, p->rows);
    check_budget("pr_curves", p->count, q);
    for (size_t i = 0; i < p->count; i++) {
        const gb_pr_curve_row *r = &p->rows[i];
        FUZZ_CHECK(in_range(r->step, q), "pr curve step out of range");
        FUZZ_CHECK(r->num_thresholds >= 2, "a curve of %zu thresholds", r->num_thresholds);
        /* Every value is read (damaged counts may be any doubles: nothing
         * holds of them but that the arrays are whole). */
        volatile double sink = 0;
        for (size_t k = 0; k < r->num_thresholds; k++)
            sink += r->tp[k] + r->fp[k] + r->tn[k] + r->fn[k] + r->precision[k] + r->recall[k];
        (void)sink;
    }
    gb_store_free(p);
}

/* Embeddings: each listed step's parts read whole; a damaged part fails
 * as damage, a part the step lacks (the sprite) as NO_ROW. */
static void query_embeddings(gb_store *s, const char *run, const char *tag, const gb_query *q, bool fetch) {
    gb_embeddings *e = NULL;
    gb_store_status st = gb_store_embeddings(s, run, tag, q, &e);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_embeddings", st, QUERY_FAILURES, e);
        return;
    }
    check_rows("embeddings", e->count, e->rows);
    check_budget("embeddings", e->count, q);
    for (size_t i = 0; i < e->count; i++) {
        const gb_embedding_row *r = &e->rows[i];
        FUZZ_CHECK(in_range(r->step, q), "embedding step out of range");
        FUZZ_CHECK(r->n > 0 && r->dim > 0, "an embedding of %lld x %lld", (long long)r->n, (long long)r->dim);
        for (int part = 0; fetch && i < MAX_PNGS && part <= GB_EMBEDDING_SPRITE; part++) {
            gb_blob *b = NULL;
            st = gb_store_embedding_part(s, run, tag, r->step, (gb_embedding_part)part, &b);
            if (st != GB_STORE_OK) {
                check_failure("gb_store_embedding_part", st, QUERY_FAILURES | BIT(GB_STORE_ERR_NO_ROW), b);
                continue;
            }
            if (part == GB_EMBEDDING_VECTORS)
                FUZZ_CHECK(b->size % 4 == 0 && b->size / 4 % (size_t)r->dim == 0, "vectors of %zu bytes", b->size);
            if (part == GB_EMBEDDING_SPRITE) check_png("gb_store_embedding_part", b->data, b->size);
            if (b->size) {
                volatile unsigned char last = b->data[b->size - 1];
                (void)last;
            }
            gb_store_free(b);
        }
    }
    gb_store_free(e);
}

/* Audio clips: listed by step, each listed clip's WAV read whole. */
static void query_audio(gb_store *s, const char *run, const char *tag, const gb_query *q, bool fetch) {
    gb_audio_clips *a = NULL;
    gb_store_status st = gb_store_audio(s, run, tag, q, &a);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_audio", st, QUERY_FAILURES, a);
        return;
    }
    check_rows("audio", a->count, a->rows);
    for (size_t i = 0; i < a->count; i++) {
        const gb_audio_row *r = &a->rows[i];
        FUZZ_CHECK(in_range(r->step, q), "audio step out of range");
        if (!fetch || i >= MAX_PNGS) continue;
        gb_blob *b = NULL;
        st = gb_store_audio_wav(s, run, tag, r->step, r->index, &b);
        if (st != GB_STORE_OK) {
            check_failure("gb_store_audio_wav", st, QUERY_FAILURES | BIT(GB_STORE_ERR_NO_ROW), b);
            continue;
        }
        FUZZ_CHECK(b->size >= 44 && !memcmp(b->data, "RIFF", 4), "gb_store_audio_wav: not a WAV");
        gb_store_free(b);
    }
    gb_store_free(a);
}

/* The experiment's table: declared or inferred, every string readable. */
static void query_experiment(gb_store *s) {
    gb_experiment *e = NULL;
    gb_store_status st = gb_store_experiment(s, &e);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_experiment", st, BIT(GB_STORE_ERR_IO) | BIT(GB_STORE_ERR_DATA), e);
        return;
    }
    check_rows("experiment hparams", e->hparam_count, e->hparams);
    check_rows("experiment metrics", e->metric_count, e->metrics);
    check_rows("experiment runs", e->run_count, e->runs);
    for (size_t i = 0; i < e->hparam_count; i++) {
        text_len("hparam name", e->hparams[i].name);
        text_len("hparam values", e->hparams[i].values_json);
        FUZZ_CHECK(gb_json_is_value(e->hparams[i].values_json), "hparam values are not JSON");
    }
    for (size_t i = 0; i < e->metric_count; i++) text_len("metric tag", e->metrics[i].tag);
    for (size_t i = 0; i < e->run_count; i++) {
        text_len("experiment run", e->runs[i].run->name);
        for (size_t m = 0; m < e->metric_count; m++)
            FUZZ_CHECK(e->runs[i].metrics[m].count >= 0, "a negative point count");
    }
    gb_store_free(e);
}

/* The step ranges and budgets each tag is read with, from what the tag
 * listing says of it: everything raw, a few rows, a later half, any
 * range, a live page's "since the last step". */
static size_t tag_queries(const gb_tag_row *t, gb_query q[6]) {
    int64_t mid = t->min_step / 2 + t->max_step / 2;
    q[0] = GB_QUERY_ALL;
    q[1] = (gb_query){t->min_step, t->max_step, 1};
    q[2] = (gb_query){t->min_step, t->max_step, 5};
    q[3] = (gb_query){mid, t->max_step, 2};
    q[4] = (gb_query){GB_STEP_MIN, GB_STEP_MAX, 3};
    q[5] = (gb_query){t->max_step, GB_STEP_MAX, 0};
    return 6;
}

/* Every tag query on one tag (the ones of other kinds fail with NO_TAG). */
static void query_tag(gb_store *s, const gb_tag_row *t) {
    gb_query q[6];
    size_t n = tag_queries(t, q);
    for (size_t i = 0; i < n; i++) {
        switch (t->kind) {
        case GB_KIND_SCALAR:
            query_scalars(s, t->run, t->tag, &q[i]);
            if (i % 2) query_points(s, t->run, t->tag, &q[i]);
            break;
        case GB_KIND_HISTOGRAM: query_histograms(s, t->run, t->tag, &q[i]); break;
        case GB_KIND_IMAGE: query_images(s, t->run, t->tag, &q[i], i % 2, i == 0); break;
        case GB_KIND_TEXT: query_texts(s, t->run, t->tag, &q[i]); break;
        case GB_KIND_GRAPH: query_graphs(s, t->run, t->tag, &q[i]); break;
        case GB_KIND_PR_CURVE: query_pr_curves(s, t->run, t->tag, &q[i]); break;
        case GB_KIND_EMBEDDING: query_embeddings(s, t->run, t->tag, &q[i], i == 0); break;
        case GB_KIND_AUDIO: query_audio(s, t->run, t->tag, &q[i], i == 0); break;
        default:   /* a kind no writer writes: every query says there is no such tag */
            query_scalars(s, t->run, t->tag, &q[i]);
            query_histograms(s, t->run, t->tag, &q[i]);
            break;
        }
    }
}

/* ---- the store ---------------------------------------------------------------------------- */

/* The tags of run (NULL: of every run), of every kind and of each kind;
 * `deep`: each one read through every tag query too. */
static void query_tags(gb_store *s, const char *run, bool deep) {
    gb_tags *t = NULL;
    gb_store_status st = gb_store_tags(s, run, GB_KIND_ANY, &t);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_tags", st, QUERY_FAILURES, t);
        return;
    }
    check_tags(t);
    for (size_t i = 0; deep && i < t->count && i < MAX_TAGS; i++) query_tag(s, &t->rows[i]);
    gb_store_free(t);
    for (int kind = GB_KIND_SCALAR; kind <= GB_KIND_PR_CURVE; kind++) {
        st = gb_store_tags(s, run, (gb_summary_kind)kind, &t);
        if (st != GB_STORE_OK) {
            check_failure("gb_store_tags", st, QUERY_FAILURES, t);
            return;
        }
        check_tags(t);
        for (size_t i = 0; i < t->count; i++)
            FUZZ_CHECK((int)t->rows[i].kind == kind, "a tag of kind %d listed as %d",
                       (int)t->rows[i].kind, kind);
        gb_store_free(t);
    }
}

/* Names no store has, and NULL arguments: clear refusals. */
static void query_unknown(gb_store *s) {
    gb_scalar_series *r = NULL;
    gb_store_status st = gb_store_scalars(s, "\xff no such run", "loss", NULL, &r);
    check_failure("gb_store_scalars", st, BIT(GB_STORE_ERR_NO_RUN) | BIT(GB_STORE_ERR_IO), r);
    st = gb_store_scalars(s, NULL, "loss", NULL, &r);
    check_failure("gb_store_scalars", st, BIT(GB_STORE_ERR_ARG), r);
}

static void query_store(gb_store *s) {
    uint64_t version;
    gb_store_status st = gb_store_data_version(s, &version);
    if (st != GB_STORE_OK) check_failure("gb_store_data_version", st, BIT(GB_STORE_ERR_IO), NULL);
    gb_runs *runs = NULL;
    st = gb_store_runs(s, &runs);
    if (st != GB_STORE_OK) {
        check_failure("gb_store_runs", st, BIT(GB_STORE_ERR_IO) | BIT(GB_STORE_ERR_DATA), runs);
    } else {
        check_runs(runs);
        for (size_t i = 0; i < runs->count && i < MAX_RUNS; i++) {
            query_events(s, runs->rows[i].name);
            query_tags(s, runs->rows[i].name, true);
        }
        gb_store_free(runs);
    }
    query_tags(s, NULL, false);
    query_experiment(s);
    query_unknown(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    remove_store();
    edit_write_store(data, size, path);
    gb_store *s = NULL;
    gb_store_status st = gb_store_open(path, &s);
    if (st == GB_STORE_OK) {
        FUZZ_CHECK(gb_store_schema_version(s) >= 1 &&
                       gb_store_schema_version(s) <= GB_STORE_SCHEMA_VERSION,
                   "opened a store of schema version %d", gb_store_schema_version(s));
        query_store(s);
        gb_store_close(s);
    } else {
        check_failure("gb_store_open", st,
                      BIT(GB_STORE_ERR_NOT_STORE) | BIT(GB_STORE_ERR_NEWER) | BIT(GB_STORE_ERR_IO),
                      s);
    }
    remove_store();
    return 0;
}
