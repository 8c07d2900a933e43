/* store/reader_scalars.c — scalar series: raw points and O(N) downsampling.
 *
 * Raw points live in chunks (a few hundred points per row, see schema.sql);
 * a step range is found with one index seek on (tag_id, first_step), going
 * back by the tag's widest chunk span so overlapping chunks (several
 * writers of one tag) are not missed, and chunks are merged back into step
 * order with a small buffer.
 *
 * Downsampling to N rows cuts the range into N equal intervals and reads
 * rollup level L, the coarsest whose blocks (U = 16^L steps) are no wider
 * than an interval. The range is covered like a segment tree: whole
 * level-L blocks from scalar_rollups, and the ragged ends from finer
 * levels down to raw points; each block joins the interval of its first
 * step. That reads at most ~16 N rollup rows plus a few edge rows,
 * whatever the length of the series (below the first stored level, 256
 * steps, raw points are aggregated instead: at most ~256 N of them, read
 * in chunks of hundreds), and every row is exact: its min,
 * max, mean, first, last and NaN/Inf counts are those of all the points
 * from its step to its step_last, so no spike is ever dropped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* Rounding divisions by b > 0, for any a: no intermediate overflows,
 * whatever a damaged store says the steps are. */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return a % b < 0 ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return a % b > 0 ? q + 1 : q;
}

static gb_store_status tag_info(gb_store *s, int64_t tag_id, gb__tag_info *ti) {
    sqlite3_stmt *st = gb__store_stmt(
        s, "SELECT count, min_step, max_step, max_chunk_span FROM tags WHERE id = ?1");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(st, 1, tag_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) return gb__store_done(s, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading a tag");
    *ti = (gb__tag_info){tag_id, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                         sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), NULL, NULL};
    sqlite3_reset(st);
    return GB_STORE_OK;
}

/* ---- raw points in step order ------------------------------------------------------ */

typedef bool (*point_sink)(void *user, const gb__point *p);

typedef struct seq_point {
    gb__point p;
    int64_t seq;   /* chunk id << 20 | index: ties of one step keep write order */
} seq_point;

typedef struct point_buffer {
    seq_point *v;
    size_t head, n, cap;
} point_buffer;

static int by_step(const void *x, const void *y) {
    const seq_point *a = x, *b = y;
    if (a->p.step != b->p.step) return a->p.step < b->p.step ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Emits buffered points with step < limit; false when the sink stops. */
static bool drain(point_buffer *b, int64_t limit, point_sink sink, void *user) {
    while (b->head < b->n && b->v[b->head].p.step < limit)
        if (!sink(user, &b->v[b->head++].p)) return false;
    if (b->head > 0 && b->head * 2 >= b->n) {
        memmove(b->v, b->v + b->head, (b->n - b->head) * sizeof *b->v);
        b->n -= b->head;
        b->head = 0;
    }
    return true;
}

/* Appends the chunk's points within [a, b], keeping the buffer sorted. */
static bool absorb(point_buffer *b, const unsigned char *blob, size_t count, int64_t a, int64_t bb,
                   int64_t chunk_id) {
    if (b->n + count > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + count) cap *= 2;
        seq_point *v = realloc(b->v, cap * sizeof *v);
        if (!v) return false;
        b->v = v;
        b->cap = cap;
    }
    bool sorted = true;
    for (size_t i = 0; i < count; i++) {
        /* Unsigned: a damaged id cannot overflow (it only misorders ties). */
        seq_point sp = {.seq = (int64_t)((uint64_t)chunk_id << 20 | i)};
        memcpy(&sp.p, blob + i * sizeof(gb__point), sizeof sp.p);   /* blobs are unaligned */
        if (sp.p.step < a || sp.p.step > bb) continue;
        if (b->n > b->head && sp.p.step < b->v[b->n - 1].p.step) sorted = false;
        b->v[b->n++] = sp;
    }
    if (!sorted) qsort(b->v + b->head, b->n - b->head, sizeof *b->v, by_step);
    return true;
}

/* The most points a chunk row may say it holds (the writer puts at most
 * GB__CHUNK_POINTS in one); below it, count * 24 cannot overflow. */
#define MAX_CHUNK_COUNT (1 << 20)

/* A chunk whose BLOB does not hold its `count` points of 24 bytes. */
static gb_store_status chunk_damaged(gb_store *s, const gb__tag_info *ti, sqlite3_stmt *st) {
    char where[700], why[160];
    long long count = (long long)sqlite3_column_int64(st, 1);
    snprintf(where, sizeof where, "run '%s', tag '%s', chunk from step %lld", ti->run, ti->tag,
             (long long)sqlite3_column_int64(st, 0));
    if (count < 0 || count >= MAX_CHUNK_COUNT)
        snprintf(why, sizeof why, "its count %lld is not a number of points (0 to %d)", count,
                 MAX_CHUNK_COUNT - 1);
    else
        snprintf(why, sizeof why, "%lld points need %lld bytes, the BLOB holds %d", count,
                 count * (long long)sizeof(gb__point), sqlite3_column_bytes(st, 2));
    return gb__store_damaged(s, "scalar_chunks", where, why);
}

/* Streams the tag's points with a <= step <= b, in step order, to sink. */
static gb_store_status each_point(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                  point_sink sink, void *user) {
    if (a < ti->min_step) a = ti->min_step;
    if (b > ti->max_step) b = ti->max_step;
    if (ti->count == 0 || a > b) return GB_STORE_OK;
    sqlite3_stmt *st = gb__store_stmt(
        s, "SELECT first_step, count, points, id FROM scalar_chunks WHERE tag_id = ?1 AND "
           "first_step BETWEEN ?2 AND ?3 AND last_step >= ?4 ORDER BY first_step, id");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(st, 1, ti->id);
    int64_t span = ti->max_chunk_span > 0 ? ti->max_chunk_span : 0;
    sqlite3_bind_int64(st, 2, a < INT64_MIN + span ? INT64_MIN : a - span);
    sqlite3_bind_int64(st, 3, b);
    sqlite3_bind_int64(st, 4, a);
    point_buffer buf = {0};
    bool going = true;
    gb_store_status damage = GB_STORE_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t count = sqlite3_column_int64(st, 1);
        const unsigned char *blob = sqlite3_column_blob(st, 2);
        /* count < MAX_CHUNK_COUNT first: then count * 24 cannot overflow. */
        if (count < 0 || count >= MAX_CHUNK_COUNT ||
            sqlite3_column_bytes(st, 2) != count * (int64_t)sizeof(gb__point)) {
            damage = chunk_damaged(s, ti, st);
            break;
        }
        going = drain(&buf, sqlite3_column_int64(st, 0), sink, user);
        if (!going) break;
        if (!absorb(&buf, blob, (size_t)count, a, b, sqlite3_column_int64(st, 3))) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    if (rc == SQLITE_DONE) drain(&buf, INT64_MAX, sink, user);
    sqlite3_reset(st);
    free(buf.v);
    if (damage != GB_STORE_OK) return damage;
    return gb__store_done(s, going ? rc : SQLITE_DONE, "reading scalar points");
}

/* ---- rows ----------------------------------------------------------------------------- */

static void row_from_rollup(gb_scalar_row *row, const gb__rollup *r) {
    int64_t finite = gb__rollup_finite(r);
    double mean = finite ? r->sum / (double)finite : NAN;
    *row = (gb_scalar_row){
        .step = r->first_step, .step_last = r->last_step, .wall_time = r->last_wall_time,
        .value = finite ? mean : r->last_value, .first = r->first_value, .last = r->last_value,
        .min = finite ? r->min : NAN, .max = finite ? r->max : NAN, .mean = mean,
        .count = r->count, .nan_count = r->nan_count, .posinf_count = r->posinf_count,
        .neginf_count = r->neginf_count};
}

typedef struct raw_rows {
    gb__rows rows;
    size_t limit;   /* 0, or the most points there may be (see downsampled) */
    bool failed, over;
} raw_rows;

static bool push_raw(void *user, const gb__point *p) {
    raw_rows *rr = user;
    if (rr->limit && rr->rows.count == rr->limit) return !(rr->over = true);
    gb_scalar_row *row = gb__rows_push(&rr->rows);
    if (!row) return !(rr->failed = true);
    gb__rollup r;
    gb__rollup_point(&r, p);
    row_from_rollup(row, &r);
    row->value = p->value;   /* exact, NaN and Inf included */
    return true;
}

/* The rollups said the range holds at most `limit` points; its chunks hold more. */
static gb_store_status rollups_disagree(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                        size_t limit) {
    char where[700], why[160];
    snprintf(where, sizeof where, "run '%s', tag '%s', steps %lld to %lld", ti->run, ti->tag,
             (long long)a, (long long)b);
    snprintf(why, sizeof why, "they count at most %zu points, the scalar_chunks rows hold more",
             limit);
    return gb__store_damaged(s, "scalar_rollups", where, why);
}

/* The raw points of [a, b] as rows. limit > 0: the rollups counted at
 * most that many, and more is a damaged store (not a reason to return
 * more rows than asked for). */
static gb_store_status raw_series(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                  size_t limit, gb__arena *arena, gb_scalar_series *res) {
    raw_rows rr = {.rows = {.elem = sizeof(gb_scalar_row)}, .limit = limit};
    gb_store_status st = each_point(s, ti, a, b, push_raw, &rr);
    if (st == GB_STORE_OK && rr.failed) st = gb__store_done(s, SQLITE_NOMEM, "reading scalars");
    if (st == GB_STORE_OK && rr.over) st = rollups_disagree(s, ti, a, b, limit);
    res->downsampled = false;
    res->total_points = (int64_t)rr.rows.count;
    res->count = rr.rows.count;
    res->rows = gb__rows_into(arena, &rr.rows);
    if (rr.rows.data) {   /* the arena could not adopt the rows */
        gb__rows_release(&rr.rows);
        if (st == GB_STORE_OK) st = gb__store_done(s, SQLITE_NOMEM, "reading scalars");
    }
    return st;
}

/* ---- downsampling ------------------------------------------------------------------------- */

typedef struct buckets {
    gb_store *s;
    const gb__tag_info *ti;
    int64_t width, base;   /* interval k: steps base + k*width .. base + (k+1)*width - 1 */
    gb__rollup *out;
    size_t n;
    int64_t total;
} buckets;

/* Adds an aggregate to the interval holding its first step. A block may
 * reach past its interval's end (by less than a block): rows stay exact,
 * disjoint and ordered, their edges just follow the blocks. */
static void add(buckets *bk, const gb__rollup *r) {
    /* Unsigned: a damaged rollup row cannot overflow (it lands in the last interval). */
    size_t k = (size_t)(((uint64_t)r->first_step - (uint64_t)bk->base) / (uint64_t)bk->width);
    if (k >= bk->n) k = bk->n - 1;   /* the clamped width above */
    gb__rollup_merge(&bk->out[k], r);
    bk->total += r->count;
}

static bool add_point(void *user, const gb__point *p) {
    gb__rollup r;
    gb__rollup_point(&r, p);
    add(user, &r);
    return true;
}

/* Why a rollup row (its level and bucket, r as read) cannot be what the
 * writer stores, or NULL: its steps lie in its bucket, first before last,
 * and its counts are whole and add up. Without this, counts near
 * INT64_MAX would overflow the sums, and steps outside the bucket would
 * make rows overlap. */
static const char *rollup_damage(int level, int64_t bucket, const gb__rollup *r) {
    /* More points than any run writes, few enough that no sum overflows. */
    const int64_t most = (int64_t)1 << 40;
    if (r->first_step > r->last_step || gb__rollup_bucket(r->first_step, level) != bucket ||
        gb__rollup_bucket(r->last_step, level) != bucket)
        return "its steps are not inside its bucket";
    if (r->count < 1 || r->count > most || r->nan_count < 0 || r->posinf_count < 0 ||
        r->neginf_count < 0 || r->nan_count > r->count || r->posinf_count > r->count ||
        r->neginf_count > r->count || gb__rollup_finite(r) < 0)
        return "its point counts do not add up";
    return NULL;
}

static gb_store_status rollup_damaged(buckets *bk, int level, int64_t bucket, const char *why) {
    char where[700];
    snprintf(where, sizeof where, "run '%s', tag '%s', level %d, bucket %lld", bk->ti->run,
             bk->ti->tag, level, (long long)bucket);
    return gb__store_damaged(bk->s, "scalar_rollups", where, why);
}

/* Adds the level-`level` rollup rows of buckets first..last. */
static gb_store_status add_blocks(buckets *bk, int level, int64_t first, int64_t last) {
    sqlite3_stmt *st = gb__store_stmt(
        bk->s, "SELECT first_step, last_step, first_value, last_value, min, max, sum, count, "
               "nan_count, posinf_count, neginf_count, last_wall_time, bucket FROM scalar_rollups "
               "WHERE tag_id = ?1 AND level = ?2 AND bucket BETWEEN ?3 AND ?4");
    if (!st) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(st, 1, bk->ti->id);
    sqlite3_bind_int(st, 2, level);
    sqlite3_bind_int64(st, 3, first);
    sqlite3_bind_int64(st, 4, last);
    gb_store_status damage = GB_STORE_OK;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gb__rollup r = {
            .first_step = sqlite3_column_int64(st, 0), .last_step = sqlite3_column_int64(st, 1),
            .first_value = gb__col_double(st, 2), .last_value = gb__col_double(st, 3),
            .min = gb__col_double(st, 4), .max = gb__col_double(st, 5),
            .sum = sqlite3_column_double(st, 6), .count = sqlite3_column_int64(st, 7),
            .nan_count = sqlite3_column_int64(st, 8), .posinf_count = sqlite3_column_int64(st, 9),
            .neginf_count = sqlite3_column_int64(st, 10),
            .last_wall_time = sqlite3_column_double(st, 11)};
        int64_t bucket = sqlite3_column_int64(st, 12);
        const char *why = rollup_damage(level, bucket, &r);
        if (why) {
            damage = rollup_damaged(bk, level, bucket, why);
            break;
        }
        add(bk, &r);
    }
    sqlite3_reset(st);
    return damage != GB_STORE_OK ? damage : gb__store_done(bk->s, rc, "reading scalar rollups");
}

/* Covers [lo, hi] with whole blocks of `level` and finer pieces at the
 * ends. Blocks first..last lie whole inside [lo, hi], and every bound is
 * computed without leaving int64, so ranges reaching INT64_MIN or
 * INT64_MAX (steps only a damaged store has) are covered too. */
static gb_store_status cover(buckets *bk, int level, int64_t lo, int64_t hi) {
    if (level < GB__ROLLUP_MIN_LEVEL) return each_point(bk->s, bk->ti, lo, hi, add_point, bk);
    int64_t u = (int64_t)1 << (GB__ROLLUP_SHIFT * level);
    int64_t first = ceil_div(lo, u), last = floor_div(hi, u);
    if (hi - last * u != u - 1) last--;   /* the block holding hi ends after it */
    if (first > last) return cover(bk, level - 1, lo, hi);
    int64_t start = first * u, end = last * u + (u - 1);   /* both within [lo, hi] */
    gb_store_status st = start > lo ? cover(bk, level - 1, lo, start - 1) : GB_STORE_OK;
    if (st == GB_STORE_OK) st = add_blocks(bk, level, first, last);
    if (st == GB_STORE_OK && end < hi) st = cover(bk, level - 1, end + 1, hi);
    return st;
}

/* Chooses the interval width for n rows and the rollup level to read:
 * the coarsest whose blocks are no wider than an interval. */
static int plan(buckets *bk, int64_t a, int64_t b, size_t n) {
    /* The range holds d + 1 steps, up to 2^64 when a damaged store's steps
     * reach both ends of int64: ceil((d + 1) / x) = d / x + 1 never overflows. */
    uint64_t d = (uint64_t)b - (uint64_t)a, w = d / n;
    w = w >= ((uint64_t)1 << 62) ? (uint64_t)1 << 62 : w + 1;   /* only for |steps| near 2^62 */
    int level = 0;
    while (level < GB__ROLLUP_LEVELS && ((uint64_t)1 << (GB__ROLLUP_SHIFT * (level + 1))) <= w)
        level++;
    bk->width = (int64_t)w;
    bk->base = a;
    uint64_t intervals = d / w + 1;
    bk->n = intervals < n ? (size_t)intervals : n;
    return level;
}

size_t gb__scalar_grid_size(int64_t a, int64_t b, size_t n) {
    buckets bk = {0};
    plan(&bk, a, b, n);
    return bk.n;
}

gb_store_status gb__scalar_grid(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                size_t n, gb__rollup *out, int64_t *total) {
    buckets bk = {.s = s, .ti = ti, .out = out};
    int level = plan(&bk, a, b, n);
    gb_store_status st = cover(&bk, level, a, b);
    *total = bk.total;
    return st;
}

static gb_store_status downsampled(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                   size_t n, gb__arena *arena, gb_scalar_series *res) {
    size_t intervals = gb__scalar_grid_size(a, b, n);
    gb__rollup *out = calloc(intervals, sizeof *out);
    if (!out) return gb__store_done(s, SQLITE_NOMEM, "downsampling");
    int64_t total = 0;
    gb_store_status st = gb__scalar_grid(s, ti, a, b, n, out, &total);
    if (st == GB_STORE_OK && total <= (int64_t)n) {   /* few points: give them all */
        free(out);
        return raw_series(s, ti, a, b, n, arena, res);
    }
    gb_scalar_row *rows = st == GB_STORE_OK ? gb__arena_alloc(arena, intervals * sizeof *rows) : NULL;
    if (st == GB_STORE_OK && !rows) st = gb__store_done(s, SQLITE_NOMEM, "downsampling");
    size_t count = 0;
    for (size_t k = 0; rows && k < intervals; k++)
        if (out[k].count) row_from_rollup(&rows[count++], &out[k]);
    free(out);
    res->downsampled = true;
    res->total_points = total;
    res->count = count;
    res->rows = rows;
    return st;
}

/* ---- public ---------------------------------------------------------------------------------- */

static gb_store_status find_scalar_tag(gb_store *s, const char *run, const char *tag,
                                       gb__tag_info *ti) {
    int64_t run_id, tag_id;
    gb_store_status st = gb__store_resolve(s, run, tag, GB_KIND_SCALAR, &run_id, &tag_id);
    if (st == GB_STORE_OK) st = tag_info(s, tag_id, ti);
    ti->run = run;
    ti->tag = tag;
    return st;
}

static gb_store_status scalars(gb_store *s, const char *run, const char *tag, const gb_query *q,
                               gb_scalar_series **out) {
    gb__arena *arena;
    gb_scalar_series *res = gb__result_new(sizeof *res, &arena);
    if (!res) return gb__store_done(s, SQLITE_NOMEM, "reading scalars");
    gb__tag_info ti;
    gb__store_read_begin(s);
    gb_store_status st = find_scalar_tag(s, run, tag, &ti);
    if (st == GB_STORE_OK) {
        int64_t a = q->step_min > ti.min_step ? q->step_min : ti.min_step;
        int64_t b = q->step_max < ti.max_step ? q->step_max : ti.max_step;
        if (ti.count > 0 && a <= b)
            st = q->max_rows ? downsampled(s, &ti, a, b, q->max_rows, arena, res)
                             : raw_series(s, &ti, a, b, 0, arena, res);
    }
    gb__store_read_end(s);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb_store_scalars(gb_store *s, const char *run, const char *tag, const gb_query *q,
                                 gb_scalar_series **out) {
    if (!s || !out) return gb__store_null_args("gb_store_scalars");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_scalars, tag, q, out);
    gb_query all = GB_QUERY_ALL;
    GB__LOCKED(s, scalars(s, run, tag, q ? q : &all, out));
}

typedef struct user_sink {
    gb_scalar_point_fn fn;
    void *user;
} user_sink;

static bool to_user(void *user, const gb__point *p) {
    const user_sink *u = user;
    return u->fn(u->user, p->step, p->wall_time, p->value);
}

static gb_store_status points(gb_store *s, const char *run, const char *tag, int64_t a, int64_t b,
                              user_sink *u) {
    gb__tag_info ti;
    gb__store_read_begin(s);
    gb_store_status st = find_scalar_tag(s, run, tag, &ti);
    if (st == GB_STORE_OK) st = each_point(s, &ti, a, b, to_user, u);
    gb__store_read_end(s);
    return st;
}

gb_store_status gb_store_scalar_points(gb_store *s, const char *run, const char *tag,
                                       int64_t step_min, int64_t step_max,
                                       gb_scalar_point_fn fn, void *user) {
    if (!s || !fn) return gb__store_null_args("gb_store_scalar_points");
    GB__VIA_MEMBER(s, run, gb_store_scalar_points, tag, step_min, step_max, fn, user);
    user_sink u = {fn, user};
    GB__LOCKED(s, points(s, run, tag, step_min, step_max, &u));
}
