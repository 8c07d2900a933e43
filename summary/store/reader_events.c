/* store/reader_events.c — histograms, distributions, images, text, graphs,
 * precision-recall curves, embeddings and audio clips (with the one stored
 * file of a row: a PNG, an embedding's parts, a WAV), and the engine's event tables (traces, numerics
 * alerts, op timings, messages, training-health alerts).
 *
 * Every query is the same loop: resolve names, bind, step, fill one row
 * struct per result row with a kind-specific `fill` function. Tag kinds
 * honour gb_query's step range and row budget (rows evenly spread, the
 * last included; images count steps); event tables page by id.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store/internal.h"

/* Fills one row from the statement's current result. Returns NULL, or why
 * the stored row cannot be read (gb__out_of_memory when memory ran out). */
typedef const char *(*fill_fn)(sqlite3_stmt *st, gb__arena *a, void *row);

static const char *filled(bool ok) { return ok ? NULL : gb__out_of_memory; }

/* ---- evenly spread selection ---------------------------------------------------------- */

/* Chooses m of n items (indices round(k (n-1) / (m-1)), so the first and
 * the last are kept); m == 0 or m >= n keeps everything. */
typedef struct picker {
    size_t n, m, k, next;
} picker;

static size_t pick_index(const picker *p) {
    if (p->m == 1) return p->n - 1;
    return (size_t)floor((double)p->k * (double)(p->n - 1) / (double)(p->m - 1) + 0.5);
}

static picker picker_new(size_t n, size_t m) {
    picker p = {n, m >= n ? 0 : m, 0, 0};
    if (p.m) p.next = pick_index(&p);
    return p;
}

static bool picker_take(picker *p, size_t i) {
    if (!p->m) return true;
    if (p->k >= p->m || i != p->next) return false;
    p->k++;
    if (p->k < p->m) p->next = pick_index(p);
    return true;
}

/* ---- the row loop ------------------------------------------------------------------------- */

typedef struct row_set {
    gb__rows rows;
    picker pick;
    int step_col;          /* >= 0: pick by distinct step in this column, else by row */
    /* What a damaged row is called: its table, run and tag (NULL for event
     * tables); column 0 holds its step (tag kinds) or id (event tables). */
    const char *table, *run, *tag;
    int sample_col;        /* >= 0: the column of an image's sample index */
    const gb_query *range; /* tag kinds: the steps asked for (column 0 must be in it) */
} row_set;

/* Why a row a step-range query returned is not in that range, or NULL. A
 * damaged index can hand back rows its WHERE clause never matched: SQLite
 * filters on the index's copy of the step, the reader reads the row's. */
static const char *step_damage(const row_set *rs, sqlite3_stmt *st) {
    if (!rs->range) return NULL;
    int64_t step = sqlite3_column_int64(st, 0);
    if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || step < rs->range->step_min ||
        step > rs->range->step_max)
        return "its step is not the integer in the range its index gave (a damaged index)";
    return NULL;
}

/* Records the current row of st as damaged, named by run, tag, step (and
 * sample), or run and id. */
static gb_store_status row_damaged(gb_store *s, const row_set *rs, sqlite3_stmt *st,
                                   const char *why) {
    char where[1200];
    long long key = (long long)sqlite3_column_int64(st, 0);
    if (!rs->tag)
        snprintf(where, sizeof where, "run '%s', id %lld", rs->run, key);
    else if (rs->sample_col < 0)
        snprintf(where, sizeof where, "run '%s', tag '%s', step %lld", rs->run, rs->tag, key);
    else
        snprintf(where, sizeof where, "run '%s', tag '%s', step %lld, sample %d", rs->run,
                 rs->tag, key, sqlite3_column_int(st, rs->sample_col));
    return gb__store_damaged(s, rs->table, where, why);
}

/* Steps st to the end, filling the picked rows. */
static gb_store_status collect(gb_store *s, sqlite3_stmt *st, row_set *rs, fill_fn fill,
                               gb__arena *a, const char *what) {
    gb_store_status damage = GB_STORE_OK;
    int rc;
    size_t index = 0;
    bool first = true, step_taken = false;
    int64_t last_step = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bool take;
        if (rs->step_col >= 0) {   /* every row of a picked step */
            int64_t step = sqlite3_column_int64(st, rs->step_col);
            if (first || step != last_step) {
                if (!first) index++;
                first = false;
                last_step = step;
                step_taken = picker_take(&rs->pick, index);
            }
            take = step_taken;
        } else {
            take = picker_take(&rs->pick, index++);
        }
        if (!take) continue;
        void *row = gb__rows_push(&rs->rows);
        const char *why = step_damage(rs, st);
        if (!why) why = row ? fill(st, a, row) : gb__out_of_memory;
        if (why == gb__out_of_memory) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (why) {
            damage = row_damaged(s, rs, st, why);
            break;
        }
    }
    sqlite3_reset(st);
    return damage != GB_STORE_OK ? damage : gb__store_done(s, rc, what);
}

/* One integer from a statement bound by the caller. */
static gb_store_status count_rows(gb_store *s, sqlite3_stmt *st, size_t *n) {
    int rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return gb__store_done(s, rc == SQLITE_ROW ? SQLITE_DONE : rc, "counting rows");
}

/* What a tag-kind query needs: its kind, SQL and row filler. */
typedef struct tag_query {
    gb_summary_kind kind;
    const char *table;       /* for messages about damaged rows */
    const char *count_sql;   /* ?1 tag, ?2..?3 steps: rows (or distinct steps) */
    const char *rows_sql;    /* ?1 tag, ?2..?3 steps, ordered by step (column 0) */
    int step_col;            /* >= 0: budget counts steps (images) */
    int sample_col;          /* >= 0: images' sample index */
    size_t elem;
    fill_fn fill;
    const char *what;
} tag_query;

/* Moves the collected rows into the arena. */
static gb_store_status adopt(gb_store *s, gb__arena *a, row_set *rs, gb_store_status st,
                             const char *what, size_t *count, void **rows) {
    *count = rs->rows.count;
    *rows = gb__rows_into(a, &rs->rows);
    if (rs->rows.data) {   /* the arena could not take them */
        gb__rows_release(&rs->rows);
        *count = 0;
        if (st == GB_STORE_OK) st = gb__store_done(s, SQLITE_NOMEM, what);
    }
    return st;
}

/* Runs a tag-kind query; rows and count go into the caller's result. */
static gb_store_status tag_rows(gb_store *s, const tag_query *tq, const char *run, const char *tag,
                                const gb_query *q, gb__arena *a, size_t *count, void **rows) {
    int64_t run_id, tag_id;
    size_t n = 0;
    row_set rs = {.rows = {.elem = tq->elem}, .step_col = tq->step_col, .table = tq->table,
                  .run = run, .tag = tag, .sample_col = tq->sample_col, .range = q};
    gb__store_read_begin(s);
    gb_store_status st = gb__store_resolve(s, run, tag, tq->kind, &run_id, &tag_id);
    for (int pass = 0; st == GB_STORE_OK && pass < 2; pass++) {
        if (pass == 0 && !q->max_rows) continue;   /* no budget: no need to count */
        sqlite3_stmt *stmt = gb__store_stmt(s, pass == 0 ? tq->count_sql : tq->rows_sql);
        if (!stmt) {
            st = GB_STORE_ERR_IO;
            break;
        }
        sqlite3_bind_int64(stmt, 1, tag_id);
        sqlite3_bind_int64(stmt, 2, q->step_min);
        sqlite3_bind_int64(stmt, 3, q->step_max);
        if (pass == 0) {
            st = count_rows(s, stmt, &n);
            rs.pick = picker_new(n, q->max_rows);
        } else {
            st = collect(s, stmt, &rs, tq->fill, a, tq->what);
        }
    }
    gb__store_read_end(s);
    return adopt(s, a, &rs, st, tq->what, count, rows);
}

/* The body of every row query: a typed result {count, rows} filled by
 * `call` (which sees the arena as a_, the count as &res_->count and the
 * rows as &rows_) under the handle's lock. */
#define ROWS_RESULT(type, call)                                                   \
    do {                                                                          \
        gb__arena *a_;                                                            \
        type *res_ = gb__result_new(sizeof *res_, &a_);                           \
        if (!res_) return gb__store_done(s, SQLITE_NOMEM, "allocating a result"); \
        void *rows_ = NULL;                                                       \
        gb__store_lock(s);                                                        \
        gb_store_status st_ = (call);                                             \
        gb__store_unlock(s);                                                      \
        res_->rows = rows_;                                                       \
        if (st_ != GB_STORE_OK) {                                                 \
            gb_store_free(res_);                                                  \
            return st_;                                                           \
        }                                                                         \
        *out = res_;                                                              \
        return GB_STORE_OK;                                                       \
    } while (0)

static int64_t col_step(sqlite3_stmt *st, int col) {
    return sqlite3_column_type(st, col) == SQLITE_NULL ? GB_STEP_NONE
                                                        : sqlite3_column_int64(st, col);
}

static const char *col_text(sqlite3_stmt *st, gb__arena *a, int col) {
    return gb__arena_strdup(a, (const char *)sqlite3_column_text(st, col));
}

/* A text column the reader hands out as the row's content (a text
 * summary, a graph): checked, then copied. */
static const char *checked_text(sqlite3_stmt *st, gb__arena *a, int col, const char **out) {
    const char *why = gb__text_damage(st, col);
    if (!why && !(*out = col_text(st, a, col))) why = gb__out_of_memory;
    return why;
}

/* ---- histograms and distributions -------------------------------------------------------- */

/* Why the buckets (column col, bucket_count k) cannot be read, or NULL:
 * they are a BLOB of exactly 2k + 1 doubles (k + 1 edges, k counts). */
static const char *buckets_damage(sqlite3_stmt *st, int col, int64_t k) {
    if (sqlite3_column_type(st, col) != SQLITE_BLOB) return "the buckets are not a BLOB";
    int64_t bytes = sqlite3_column_bytes(st, col);
    if (bytes == 0) return "the buckets BLOB is empty";
    /* k <= bytes / 16 first: then 2k + 1 doubles cannot overflow. */
    if (k < 0 || k > bytes / 16 || bytes != (2 * k + 1) * (int64_t)sizeof(double))
        return "the buckets BLOB does not hold bucket_count + 1 edges and bucket_count counts";
    return NULL;
}

static const char *fill_histogram(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_histogram_row *h = row;
    h->step = sqlite3_column_int64(st, 0);
    h->wall_time = sqlite3_column_double(st, 1);
    h->min = gb__col_double(st, 2);
    h->max = gb__col_double(st, 3);
    h->count = sqlite3_column_double(st, 4);
    h->sum = sqlite3_column_double(st, 5);
    h->sum_squares = sqlite3_column_double(st, 6);
    h->nan_count = sqlite3_column_int64(st, 7);
    h->posinf_count = sqlite3_column_int64(st, 8);
    h->neginf_count = sqlite3_column_int64(st, 9);
    int64_t k = sqlite3_column_int64(st, 10);
    const char *why = buckets_damage(st, 11, k);
    if (why) return why;
    size_t bytes = (size_t)sqlite3_column_bytes(st, 11);
    double *b = gb__arena_alloc(a, bytes);
    if (!b) return gb__out_of_memory;
    memcpy(b, sqlite3_column_blob(st, 11), bytes);   /* never empty: checked above */
    h->bucket_count = (size_t)k;
    h->edges = b;
    h->counts = b + k + 1;
    return NULL;
}

static const tag_query histogram_query = {
    GB_KIND_HISTOGRAM, "histograms",
    "SELECT count(*) FROM histograms WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, min, max, count, sum, sum_squares, nan_count, posinf_count, "
    "neginf_count, bucket_count, buckets FROM histograms WHERE tag_id = ?1 AND step BETWEEN ?2 "
    "AND ?3 ORDER BY step, id",
    -1, -1, sizeof(gb_histogram_row), fill_histogram, "reading histograms"};

static gb_query query_or_all(const gb_query *q) { return q ? *q : GB_QUERY_ALL; }

gb_store_status gb_store_histograms(gb_store *s, const char *run, const char *tag,
                                    const gb_query *q, gb_histograms **out) {
    if (!s || !out) return gb__store_null_args("gb_store_histograms");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_histograms, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_histograms, tag_rows(s, &histogram_query, run, tag, &qq, a_, &res_->count, &rows_));
}

gb_store_status gb_store_distributions(gb_store *s, const char *run, const char *tag,
                                       const gb_query *q, gb_distributions **out) {
    if (!s || !out) return gb__store_null_args("gb_store_distributions");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_distributions, tag, q, out);
    gb_histograms *h;
    gb_store_status st = gb_store_histograms(s, run, tag, q, &h);
    if (st != GB_STORE_OK) return st;
    gb__arena *a;
    gb_distributions *res = gb__result_new(sizeof *res, &a);
    gb_distribution_row *rows =
        res && h->count ? gb__arena_alloc(a, h->count * sizeof *rows) : NULL;
    if (!res || (h->count && !rows)) {
        gb_store_free(h);
        gb_store_free(res);
        gb__store_fail("gb_store_distributions: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    for (size_t i = 0; i < h->count; i++) {
        const gb_histogram_row *r = &h->rows[i];
        rows[i].step = r->step;
        rows[i].wall_time = r->wall_time;
        gb_distribution_from_buckets(r->edges, r->counts, r->bucket_count, rows[i].values);
    }
    res->count = h->count;
    res->rows = rows;
    gb_store_free(h);
    *out = res;
    return GB_STORE_OK;
}

/* ---- images --------------------------------------------------------------------------------- */

/* Why column col cannot be a PNG file, or NULL: a BLOB starting with the
 * PNG signature. (The bytes past it are the browser's to decode.) */
static const char *png_damage(sqlite3_stmt *st, int col) {
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (sqlite3_column_type(st, col) != SQLITE_BLOB) return "the PNG is not a BLOB";
    const void *png = sqlite3_column_blob(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (n == 0) return "the PNG is empty (0 bytes)";
    if (!png) return gb__out_of_memory;
    if (n < (int)sizeof signature || memcmp(png, signature, sizeof signature))
        return "the BLOB is not a PNG file (no PNG signature)";
    return NULL;
}

/* A checked copy of the PNG in column col into the arena. */
static const char *copy_png(sqlite3_stmt *st, gb__arena *a, int col, gb_blob *out) {
    const char *why = png_damage(st, col);
    if (why) return why;
    size_t n = (size_t)sqlite3_column_bytes(st, col);
    unsigned char *data = gb__arena_alloc(a, n);
    if (!data) return gb__out_of_memory;
    memcpy(data, sqlite3_column_blob(st, col), n);
    *out = (gb_blob){n, data};
    return NULL;
}

static const char *fill_image(sqlite3_stmt *st, gb__arena *a, void *row, bool with_png) {
    gb_image_row *im = row;
    im->step = sqlite3_column_int64(st, 0);
    im->wall_time = sqlite3_column_double(st, 1);
    im->index = sqlite3_column_int(st, 2);
    im->width = sqlite3_column_int(st, 3);
    im->height = sqlite3_column_int(st, 4);
    im->channels = sqlite3_column_int(st, 5);
    im->png_size = (size_t)sqlite3_column_int64(st, 6);
    if (!with_png) return NULL;
    gb_blob png;
    const char *why = copy_png(st, a, 7, &png);
    if (why) return why;
    im->png_size = png.size;
    im->png = png.data;
    return NULL;
}

static const char *fill_image_meta(sqlite3_stmt *st, gb__arena *a, void *row) {
    return fill_image(st, a, row, false);
}

static const char *fill_image_png(sqlite3_stmt *st, gb__arena *a, void *row) {
    return fill_image(st, a, row, true);
}

#define IMAGE_COUNT_SQL \
    "SELECT count(DISTINCT step) FROM images WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3"
#define IMAGE_ROWS_SQL(png)                                                                     \
    "SELECT step, wall_time, sample_index, width, height, channels, length(png)" png " FROM " \
    "images WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3 ORDER BY step, sample_index, id"

static const tag_query image_queries[2] = {
    {GB_KIND_IMAGE, "images", IMAGE_COUNT_SQL, IMAGE_ROWS_SQL(""), 0, 2, sizeof(gb_image_row),
     fill_image_meta, "reading images"},
    {GB_KIND_IMAGE, "images", IMAGE_COUNT_SQL, IMAGE_ROWS_SQL(", png"), 0, 2,
     sizeof(gb_image_row), fill_image_png, "reading images"},
};

gb_store_status gb_store_images(gb_store *s, const char *run, const char *tag, const gb_query *q,
                                bool with_png, gb_images **out) {
    if (!s || !out) return gb__store_null_args("gb_store_images");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_images, tag, q, with_png, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_images, tag_rows(s, &image_queries[with_png], run, tag, &qq, a_, &res_->count,
                                    &rows_));
}

/* One stored file of one row: its query (?1 tag, ?2 step, ?3 sample;
 * columns step, sample index, the BLOB), what makes the BLOB unreadable,
 * and how a missing row is named. */
typedef struct blob_query {
    gb_summary_kind kind;
    const char *table, *sql, *noun, *what;
    const char *(*damage)(sqlite3_stmt *st, int col);
    bool has_sample;   /* the row is named by step and sample index */
} blob_query;

/* The BLOB of q's current row (step, sample_index, blob) as a result object. */
static gb_store_status blob_result(gb_store *s, sqlite3_stmt *q, const blob_query *bq,
                                   const row_set *names, gb_blob **out) {
    gb__arena *a;
    gb_blob *b = gb__result_new(sizeof *b, &a);
    const char *why = b ? bq->damage(q, 2) : gb__out_of_memory;
    size_t n = why ? 0 : (size_t)sqlite3_column_bytes(q, 2);
    unsigned char *data = why ? NULL : gb__arena_alloc(a, n ? n : 1);
    if (!why && !data) why = gb__out_of_memory;
    if (!why) {
        if (n) memcpy(data, sqlite3_column_blob(q, 2), n);
        *b = (gb_blob){n, data};
        *out = b;
        return GB_STORE_OK;
    }
    gb_store_free(b);
    if (why == gb__out_of_memory) return gb__store_done(s, SQLITE_NOMEM, bq->what);
    return row_damaged(s, names, q, why);
}

static gb_store_status row_blob(gb_store *s, const blob_query *bq, const char *run,
                                const char *tag, int64_t step, int index, gb_blob **out) {
    int64_t run_id, tag_id;
    gb__store_read_begin(s);
    gb_store_status st = gb__store_resolve(s, run, tag, bq->kind, &run_id, &tag_id);
    sqlite3_stmt *q = st == GB_STORE_OK ? gb__store_stmt(s, bq->sql) : NULL;
    if (st == GB_STORE_OK && !q) st = GB_STORE_ERR_IO;
    if (q) {
        sqlite3_bind_int64(q, 1, tag_id);
        sqlite3_bind_int64(q, 2, step);
        sqlite3_bind_int(q, 3, index);
        int rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            row_set names = {.table = bq->table, .run = run, .tag = tag,
                             .sample_col = bq->has_sample ? 1 : -1};
            st = blob_result(s, q, bq, &names, out);
        } else if (rc == SQLITE_DONE && bq->has_sample) {
            gb__store_fail("store '%s': run '%s' %s tag '%s' has no %s %d at step %lld",
                           gb__store_path(s), run, gb_kind_name(bq->kind), tag, bq->noun, index,
                           (long long)step);
            st = GB_STORE_ERR_NO_ROW;
        } else if (rc == SQLITE_DONE) {
            gb__store_fail("store '%s': run '%s' %s tag '%s' has no %s at step %lld",
                           gb__store_path(s), run, gb_kind_name(bq->kind), tag, bq->noun,
                           (long long)step);
            st = GB_STORE_ERR_NO_ROW;
        } else {
            st = gb__store_done(s, rc, bq->what);
        }
        sqlite3_reset(q);
    }
    gb__store_read_end(s);
    return st;
}

static const blob_query image_png_query = {
    GB_KIND_IMAGE, "images",
    "SELECT step, sample_index, png FROM images WHERE tag_id = ?1 AND step = ?2 AND "
    "sample_index = ?3 ORDER BY id DESC",
    "image", "reading an image", png_damage, true};

gb_store_status gb_store_image_png(gb_store *s, const char *run, const char *tag, int64_t step,
                                   int index, gb_blob **out) {
    if (!s || !out) return gb__store_null_args("gb_store_image_png");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_image_png, tag, step, index, out);
    GB__LOCKED(s, row_blob(s, &image_png_query, run, tag, step, index, out));
}

/* ---- embeddings and audio -------------------------------------------------------------------- */

/* bytes hold exactly n * dim float32 values (n, dim > 0; no overflow). */
static bool vectors_fit(int64_t n, int64_t dim, int64_t bytes) {
    return n > 0 && dim > 0 && n <= bytes / 4 / dim && bytes == n * dim * 4;
}

static const char *fill_embedding(sqlite3_stmt *st, gb__arena *a, void *row) {
    (void)a;
    gb_embedding_row *e = row;
    e->step = sqlite3_column_int64(st, 0);
    e->wall_time = sqlite3_column_double(st, 1);
    e->n = sqlite3_column_int64(st, 2);
    e->dim = sqlite3_column_int64(st, 3);
    if (!vectors_fit(e->n, e->dim, sqlite3_column_int64(st, 4)))
        return "the vectors BLOB does not hold n * dim float32 values";
    e->metadata_bytes = (size_t)sqlite3_column_int64(st, 5);
    e->sprite_bytes = (size_t)sqlite3_column_int64(st, 6);
    e->sprite_width = e->sprite_bytes ? sqlite3_column_int(st, 7) : 0;
    e->sprite_height = e->sprite_bytes ? sqlite3_column_int(st, 8) : 0;
    return NULL;
}

static const tag_query embedding_query = {
    GB_KIND_EMBEDDING, "embeddings",
    "SELECT count(*) FROM embeddings WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, n, dim, length(vectors), length(metadata), "
    "coalesce(length(sprite), 0), sprite_width, sprite_height FROM embeddings "
    "WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3 ORDER BY step, id",
    -1, -1, sizeof(gb_embedding_row), fill_embedding, "reading embeddings"};

gb_store_status gb_store_embeddings(gb_store *s, const char *run, const char *tag,
                                    const gb_query *q, gb_embeddings **out) {
    if (!s || !out) return gb__store_null_args("gb_store_embeddings");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_embeddings, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_embeddings,
                tag_rows(s, &embedding_query, run, tag, &qq, a_, &res_->count, &rows_));
}

/* vectors: n * dim float32 (the row's n and dim in columns 3 and 4). */
static const char *vectors_damage(sqlite3_stmt *st, int col) {
    if (sqlite3_column_type(st, col) != SQLITE_BLOB) return "the vectors are not a BLOB";
    if (!vectors_fit(sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), sqlite3_column_bytes(st, col)))
        return "the vectors BLOB does not hold n * dim float32 values";
    return NULL;
}

static const char *metadata_damage(sqlite3_stmt *st, int col) {
    return gb__text_damage(st, col);
}

/* The parts' query; a step stored without a sprite has no sprite row. */
#define EMBEDDING_PART_SQL(col)                                                              \
    "SELECT step, 0, " col ", n, dim FROM embeddings WHERE tag_id = ?1 AND step = ?2 AND " \
    "?3 = 0 AND " col " IS NOT NULL ORDER BY id DESC"

static const blob_query embedding_parts[3] = {
    [GB_EMBEDDING_VECTORS] = {GB_KIND_EMBEDDING, "embeddings", EMBEDDING_PART_SQL("vectors"),
                              "embedding", "reading an embedding", vectors_damage, false},
    [GB_EMBEDDING_METADATA] = {GB_KIND_EMBEDDING, "embeddings", EMBEDDING_PART_SQL("metadata"),
                               "embedding", "reading an embedding", metadata_damage, false},
    [GB_EMBEDDING_SPRITE] = {GB_KIND_EMBEDDING, "embeddings", EMBEDDING_PART_SQL("sprite"),
                             "sprite", "reading an embedding", png_damage, false},
};

gb_store_status gb_store_embedding_part(gb_store *s, const char *run, const char *tag,
                                        int64_t step, gb_embedding_part part, gb_blob **out) {
    if (!s || !out) return gb__store_null_args("gb_store_embedding_part");
    *out = NULL;
    if ((unsigned)part > GB_EMBEDDING_SPRITE) {
        gb__store_fail("gb_store_embedding_part: unknown part %d", (int)part);
        return GB_STORE_ERR_ARG;
    }
    GB__VIA_MEMBER(s, run, gb_store_embedding_part, tag, step, part, out);
    GB__LOCKED(s, row_blob(s, &embedding_parts[part], run, tag, step, 0, out));
}

static const char *fill_audio(sqlite3_stmt *st, gb__arena *a, void *row) {
    (void)a;
    gb_audio_row *r = row;
    r->step = sqlite3_column_int64(st, 0);
    r->wall_time = sqlite3_column_double(st, 1);
    r->index = sqlite3_column_int(st, 2);
    r->sample_rate = sqlite3_column_int(st, 3);
    r->channels = sqlite3_column_int(st, 4);
    r->frames = sqlite3_column_int64(st, 5);
    r->clipped = sqlite3_column_int64(st, 6);
    r->wav_size = (size_t)sqlite3_column_int64(st, 7);
    return NULL;
}

static const tag_query audio_query = {
    GB_KIND_AUDIO, "audio",
    "SELECT count(DISTINCT step) FROM audio WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, sample_index, sample_rate, channels, frames, clipped, length(wav) "
    "FROM audio WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3 ORDER BY step, sample_index, id",
    0, 2, sizeof(gb_audio_row), fill_audio, "reading audio"};

gb_store_status gb_store_audio(gb_store *s, const char *run, const char *tag, const gb_query *q,
                               gb_audio_clips **out) {
    if (!s || !out) return gb__store_null_args("gb_store_audio");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_audio, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_audio_clips, tag_rows(s, &audio_query, run, tag, &qq, a_, &res_->count, &rows_));
}

/* A RIFF/WAVE file (the browser decodes the rest). */
static const char *wav_damage(sqlite3_stmt *st, int col) {
    if (sqlite3_column_type(st, col) != SQLITE_BLOB) return "the WAV is not a BLOB";
    const unsigned char *w = sqlite3_column_blob(st, col);
    int n = sqlite3_column_bytes(st, col);
    if (n < 44 || !w || memcmp(w, "RIFF", 4) || memcmp(w + 8, "WAVE", 4))
        return "the BLOB is not a WAV file (no RIFF/WAVE header)";
    return NULL;
}

static const blob_query audio_wav_query = {
    GB_KIND_AUDIO, "audio",
    "SELECT step, sample_index, wav FROM audio WHERE tag_id = ?1 AND step = ?2 AND "
    "sample_index = ?3 ORDER BY id DESC",
    "clip", "reading audio", wav_damage, true};

gb_store_status gb_store_audio_wav(gb_store *s, const char *run, const char *tag, int64_t step,
                                   int index, gb_blob **out) {
    if (!s || !out) return gb__store_null_args("gb_store_audio_wav");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_audio_wav, tag, step, index, out);
    GB__LOCKED(s, row_blob(s, &audio_wav_query, run, tag, step, index, out));
}

/* ---- text and graphs --------------------------------------------------------------------------- */

static const char *fill_text(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_text_row *t = row;
    t->step = sqlite3_column_int64(st, 0);
    t->wall_time = sqlite3_column_double(st, 1);
    return checked_text(st, a, 2, &t->text);
}

static const char *fill_graph(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_graph_row *g = row;
    g->step = sqlite3_column_int64(st, 0);
    g->wall_time = sqlite3_column_double(st, 1);
    const char *why = checked_text(st, a, 2, &g->format);
    return why ? why : checked_text(st, a, 3, &g->content);
}

static const tag_query text_query = {
    GB_KIND_TEXT, "texts",
    "SELECT count(*) FROM texts WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, value FROM texts WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3 "
    "ORDER BY step, id",
    -1, -1, sizeof(gb_text_row), fill_text, "reading text"};

static const tag_query graph_query = {
    GB_KIND_GRAPH, "graphs",
    "SELECT count(*) FROM graphs WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, format, content FROM graphs WHERE tag_id = ?1 AND step BETWEEN ?2 "
    "AND ?3 ORDER BY step, id",
    -1, -1, sizeof(gb_graph_row), fill_graph, "reading graphs"};

gb_store_status gb_store_texts(gb_store *s, const char *run, const char *tag, const gb_query *q,
                               gb_texts **out) {
    if (!s || !out) return gb__store_null_args("gb_store_texts");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_texts, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_texts, tag_rows(s, &text_query, run, tag, &qq, a_, &res_->count, &rows_));
}

gb_store_status gb_store_graphs(gb_store *s, const char *run, const char *tag, const gb_query *q,
                                gb_graphs **out) {
    if (!s || !out) return gb__store_null_args("gb_store_graphs");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_graphs, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_graphs, tag_rows(s, &graph_query, run, tag, &qq, a_, &res_->count, &rows_));
}

/* ---- precision-recall curves --------------------------------------------------------------- */

/* Why the counts (column col, num_thresholds t) cannot be read, or NULL:
 * a BLOB of exactly 4t doubles, t >= 2. */
static const char *pr_counts_damage(sqlite3_stmt *st, int col, int64_t t) {
    if (sqlite3_column_type(st, col) != SQLITE_BLOB) return "the counts are not a BLOB";
    int64_t bytes = sqlite3_column_bytes(st, col);
    if (t < 2 || t > bytes / 32 || bytes != 4 * t * (int64_t)sizeof(double))
        return "the counts BLOB does not hold 4 * num_thresholds doubles";
    return NULL;
}

static const char *fill_pr_curve(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_pr_curve_row *r = row;
    r->step = sqlite3_column_int64(st, 0);
    r->wall_time = sqlite3_column_double(st, 1);
    int64_t t = sqlite3_column_int64(st, 2);
    const char *why = pr_counts_damage(st, 3, t);
    if (why) return why;
    size_t n = (size_t)t;
    double *v = gb__arena_alloc(a, 6 * n * sizeof(double));
    if (!v) return gb__out_of_memory;
    memcpy(v, sqlite3_column_blob(st, 3), 4 * n * sizeof(double));
    r->num_thresholds = n;
    r->tp = v, r->fp = v + n, r->tn = v + 2 * n, r->fn = v + 3 * n;
    double *precision = v + 4 * n, *recall = v + 5 * n;
    for (size_t i = 0; i < n; i++) {
        double tp = r->tp[i], predicted = tp + r->fp[i], actual = tp + r->fn[i];
        precision[i] = predicted > 0 ? tp / predicted : 0;
        recall[i] = actual > 0 ? tp / actual : 0;
    }
    r->precision = precision, r->recall = recall;
    return NULL;
}

static const tag_query pr_curve_query = {
    GB_KIND_PR_CURVE, "pr_curves",
    "SELECT count(*) FROM pr_curves WHERE tag_id = ?1 AND step BETWEEN ?2 AND ?3",
    "SELECT step, wall_time, num_thresholds, counts FROM pr_curves WHERE tag_id = ?1 AND step "
    "BETWEEN ?2 AND ?3 ORDER BY step, id",
    -1, -1, sizeof(gb_pr_curve_row), fill_pr_curve, "reading precision-recall curves"};

gb_store_status gb_store_pr_curves(gb_store *s, const char *run, const char *tag,
                                   const gb_query *q, gb_pr_curves **out) {
    if (!s || !out) return gb__store_null_args("gb_store_pr_curves");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_pr_curves, tag, q, out);
    gb_query qq = query_or_all(q);
    ROWS_RESULT(gb_pr_curves, tag_rows(s, &pr_curve_query, run, tag, &qq, a_, &res_->count, &rows_));
}

/* ---- engine events ---------------------------------------------------------------------------- */

/* What an event-table query needs. SQL: ?1 run id, ?2 after id, ?3 limit,
 * ?4 an optional text filter. */
typedef struct event_query {
    const char *table;       /* for messages about damaged rows */
    const char *sql;
    size_t elem;
    fill_fn fill;
    const char *what;
} event_query;

static gb_store_status event_rows(gb_store *s, const event_query *eq, const char *run,
                                  const char *filter, const gb_event_query *q, gb__arena *a,
                                  size_t *count, void **rows) {
    row_set rs = {.rows = {.elem = eq->elem}, .step_col = -1, .table = eq->table, .run = run,
                  .sample_col = -1};
    int64_t run_id;
    gb__store_read_begin(s);
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    sqlite3_stmt *stmt = st == GB_STORE_OK ? gb__store_stmt(s, eq->sql) : NULL;
    if (st == GB_STORE_OK && !stmt) st = GB_STORE_ERR_IO;
    if (stmt) {
        sqlite3_bind_int64(stmt, 1, run_id);
        sqlite3_bind_int64(stmt, 2, q ? q->after_id : 0);
        sqlite3_bind_int64(stmt, 3, q && q->limit ? (int64_t)q->limit : -1);
        if (filter) sqlite3_bind_text(stmt, 4, filter, -1, SQLITE_STATIC);
        st = collect(s, stmt, &rs, eq->fill, a, eq->what);
    }
    gb__store_read_end(s);
    return adopt(s, a, &rs, st, eq->what, count, rows);
}

static const char *fill_trace(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_trace_row *t = row;
    t->id = sqlite3_column_int64(st, 0);
    t->step = col_step(st, 1);
    t->wall_time = sqlite3_column_double(st, 2);
    t->function = col_text(st, a, 3);
    t->is_retrace = sqlite3_column_int(st, 4) != 0;
    t->reason = col_text(st, a, 5);
    t->signature = col_text(st, a, 6);
    t->duration_us = gb__col_double(st, 7);
    t->nodes_before = sqlite3_column_int64(st, 8);
    t->nodes_after = sqlite3_column_int64(st, 9);
    t->detail = col_text(st, a, 10);
    return filled(t->function && t->reason && t->signature && t->detail);
}

gb_store_status gb_store_traces(gb_store *s, const char *run, const char *function,
                                const gb_event_query *q, gb_traces **out) {
    if (!s || !out) return gb__store_null_args("gb_store_traces");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_traces, function, q, out);
    static const event_query eq = {
        "traces",
        "SELECT id, step, wall_time, function, is_retrace, reason, signature, duration_us, "
        "nodes_before, nodes_after, detail FROM traces WHERE run_id = ?1 AND id > ?2 AND "
        "(?4 IS NULL OR function = ?4) ORDER BY id LIMIT ?3",
        sizeof(gb_trace_row), fill_trace, "reading traces"};
    ROWS_RESULT(gb_traces, event_rows(s, &eq, run, function, q, a_, &res_->count, &rows_));
}

static const char *fill_numerics(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_numerics_row *n = row;
    n->id = sqlite3_column_int64(st, 0);
    n->step = col_step(st, 1);
    n->wall_time = sqlite3_column_double(st, 2);
    n->op_type = col_text(st, a, 3);
    n->op_name = col_text(st, a, 4);
    n->function = col_text(st, a, 5);
    n->scope_path = col_text(st, a, 6);
    n->forward_op = col_text(st, a, 7);
    n->nan_count = sqlite3_column_int64(st, 8);
    n->posinf_count = sqlite3_column_int64(st, 9);
    n->neginf_count = sqlite3_column_int64(st, 10);
    n->message = col_text(st, a, 11);
    n->detail = col_text(st, a, 12);
    return filled(n->op_type && n->op_name && n->function && n->scope_path && n->forward_op &&
                  n->message && n->detail);
}

gb_store_status gb_store_numerics(gb_store *s, const char *run, const gb_event_query *q,
                                  gb_numerics **out) {
    if (!s || !out) return gb__store_null_args("gb_store_numerics");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_numerics, q, out);
    static const event_query eq = {
        "numerics",
        "SELECT id, step, wall_time, op_type, op_name, function, scope_path, forward_op, "
        "nan_count, posinf_count, neginf_count, message, detail FROM numerics "
        "WHERE run_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        sizeof(gb_numerics_row), fill_numerics, "reading numerics alerts"};
    ROWS_RESULT(gb_numerics, event_rows(s, &eq, run, NULL, q, a_, &res_->count, &rows_));
}

static const char *fill_message(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_message_row *m = row;
    m->id = sqlite3_column_int64(st, 0);
    m->step = col_step(st, 1);
    m->wall_time = sqlite3_column_double(st, 2);
    m->kind = col_text(st, a, 3);
    m->op_type = col_text(st, a, 4);
    m->op_name = col_text(st, a, 5);
    m->device = col_text(st, a, 6);
    m->message = col_text(st, a, 7);
    return filled(m->kind && m->op_type && m->op_name && m->device && m->message);
}

gb_store_status gb_store_messages(gb_store *s, const char *run, const gb_event_query *q,
                                  gb_messages **out) {
    if (!s || !out) return gb__store_null_args("gb_store_messages");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_messages, q, out);
    static const event_query eq = {
        "messages",
        "SELECT id, step, wall_time, kind, op_type, op_name, device, message FROM messages "
        "WHERE run_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        sizeof(gb_message_row), fill_message, "reading messages"};
    ROWS_RESULT(gb_messages, event_rows(s, &eq, run, NULL, q, a_, &res_->count, &rows_));
}

static const char *fill_op_timing(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_op_timing_row *o = row;
    o->op_name = col_text(st, a, 0);
    o->op_type = col_text(st, a, 1);
    o->device = col_text(st, a, 2);
    o->calls = sqlite3_column_int64(st, 3);
    o->total_us = sqlite3_column_double(st, 4);
    o->max_us = sqlite3_column_double(st, 5);
    return filled(o->op_name && o->op_type && o->device);
}

gb_store_status gb_store_op_timings(gb_store *s, const char *run, gb_op_timings **out) {
    if (!s || !out) return gb__store_null_args("gb_store_op_timings");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_op_timings, out);
    static const event_query eq = {
        "op_timings",
        "SELECT op_name, op_type, device, count(*), sum(duration_us), max(duration_us) "
        "FROM op_timings WHERE run_id = ?1 AND id > ?2 GROUP BY op_name, op_type, device "
        "ORDER BY 5 DESC, 1 LIMIT ?3",
        sizeof(gb_op_timing_row), fill_op_timing, "reading op timings"};
    ROWS_RESULT(gb_op_timings, event_rows(s, &eq, run, NULL, NULL, a_, &res_->count, &rows_));
}

gb_store_status gb_store_function_op_timings(gb_store *s, const char *run, const char *function,
                                             gb_op_timings **out) {
    if (!s || !out || !function) return gb__store_null_args("gb_store_function_op_timings");
    GB__VIA_MEMBER(s, run, gb_store_function_op_timings, function, out);
    if (gb_store_schema_version(s) < 3) return gb_store_op_timings(s, run, out);
    *out = NULL;
    static const event_query eq = {
        "op_timings",
        "SELECT op_name, op_type, device, count(*), sum(duration_us), max(duration_us) "
        "FROM op_timings WHERE run_id = ?1 AND id > ?2 AND function = ?4 "
        "GROUP BY op_name, op_type, device ORDER BY 5 DESC, 1 LIMIT ?3",
        sizeof(gb_op_timing_row), fill_op_timing, "reading op timings"};
    ROWS_RESULT(gb_op_timings, event_rows(s, &eq, run, function, NULL, a_, &res_->count, &rows_));
}

static const char *fill_function_stats(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_function_stats_row *f = row;
    f->function = col_text(st, a, 0);
    f->wall_time = sqlite3_column_double(st, 1);
    f->calls = sqlite3_column_int64(st, 2);
    f->cache_hits = sqlite3_column_int64(st, 3);
    f->traces = sqlite3_column_int64(st, 4);
    f->concrete = sqlite3_column_int64(st, 5);
    f->trace_ms = sqlite3_column_double(st, 6);
    return filled(f->function != NULL);
}

gb_store_status gb_store_function_stats(gb_store *s, const char *run,
                                        gb_function_stats_list **out) {
    if (!s || !out) return gb__store_null_args("gb_store_function_stats");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_function_stats, out);
    static const event_query eq = {
        "function_stats",
        "SELECT function, wall_time, calls, cache_hits, traces, concrete, trace_ms "
        "FROM function_stats WHERE run_id = ?1 AND id > ?2 ORDER BY function LIMIT ?3",
        sizeof(gb_function_stats_row), fill_function_stats, "reading function counters"};
    /* A version-1 store (read without migrating it) has no counters yet. */
    if (gb_store_schema_version(s) < 2) {
        gb__arena *a;
        *out = gb__result_new(sizeof **out, &a);
        return *out ? GB_STORE_OK : gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    }
    ROWS_RESULT(gb_function_stats_list,
                event_rows(s, &eq, run, NULL, NULL, a_, &res_->count, &rows_));
}

/* ---- training-health alerts (schema 7) --------------------------------------------------------- */

static const char *fill_health(sqlite3_stmt *st, gb__arena *a, void *row) {
    gb_health_row *h = row;
    h->id = sqlite3_column_int64(st, 0);
    h->step = col_step(st, 1);
    h->wall_time = sqlite3_column_double(st, 2);
    h->kind = col_text(st, a, 3);
    h->severity = sqlite3_column_int(st, 4);
    h->layer = col_text(st, a, 5);
    h->variable = col_text(st, a, 6);
    h->value = gb__col_double(st, 7);
    h->threshold = gb__col_double(st, 8);
    h->figures = col_text(st, a, 9);
    h->message = col_text(st, a, 10);
    h->advice = col_text(st, a, 11);
    return filled(h->kind && h->layer && h->variable && h->figures && h->message && h->advice);
}

gb_store_status gb_store_health_alerts(gb_store *s, const char *run, const gb_event_query *q,
                                       gb_health_alerts **out) {
    if (!s || !out) return gb__store_null_args("gb_store_health_alerts");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_health_alerts, q, out);
    /* The order the Health page shows, which the index health_by_severity holds. */
    static const event_query eq = {
        "health",
        "SELECT id, step, wall_time, kind, severity, layer, variable, value, threshold, figures, "
        "message, advice FROM health WHERE run_id = ?1 AND id > ?2 "
        "ORDER BY severity DESC, step, id LIMIT ?3",
        sizeof(gb_health_row), fill_health, "reading health alerts"};
    if (gb_store_schema_version(s) < 7) {   /* read without migrating: no alerts yet */
        int64_t run_id;
        gb__store_lock(s);
        gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
        gb__store_unlock(s);
        if (st != GB_STORE_OK) return st;
        gb__arena *a;
        *out = gb__result_new(sizeof **out, &a);
        return *out ? GB_STORE_OK : gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    }
    ROWS_RESULT(gb_health_alerts, event_rows(s, &eq, run, NULL, q, a_, &res_->count, &rows_));
}
