/* writer/commit.c — the writer's background thread: batched transactions.
 *
 * The thread sleeps until `flush_every_events` events are queued, the
 * oldest queued event is `flush_every_ms` old, a flush or close is asked
 * for, or a caller waits for queue space. It then takes the whole queue,
 * does the CPU work (histogram buckets, PNG encoding) outside any lock,
 * and writes the batch in one IMMEDIATE transaction with prepared
 * statements: scalar points as chunks of up to GB__CHUNK_POINTS, rollup
 * deltas per level (merged into the stored rows by an upsert), one row per
 * other event, and the tags' running statistics. A busy store (another
 * process writing) is waited for, never given up on; any other failure
 * becomes the writer's sticky error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "writer/internal.h"

static const char *const statements[GB__ST_COUNT] = {
    [GB__ST_CHUNK] = "INSERT INTO scalar_chunks(tag_id, first_step, last_step, count, points) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)",
    [GB__ST_ROLLUP] =
        "INSERT INTO scalar_rollups(tag_id, level, bucket, first_step, last_step, first_value, "
        "last_value, min, max, sum, count, nan_count, posinf_count, neginf_count, last_wall_time) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
        "ON CONFLICT (tag_id, level, bucket) DO UPDATE SET "
        "first_value = CASE WHEN excluded.first_step < first_step THEN excluded.first_value "
        "ELSE first_value END, "
        "first_step = min(first_step, excluded.first_step), "
        "last_value = CASE WHEN excluded.last_step >= last_step THEN excluded.last_value "
        "ELSE last_value END, "
        "last_step = max(last_step, excluded.last_step), "
        "min = CASE WHEN min IS NULL THEN excluded.min WHEN excluded.min IS NULL THEN min "
        "ELSE min(min, excluded.min) END, "
        "max = CASE WHEN max IS NULL THEN excluded.max WHEN excluded.max IS NULL THEN max "
        "ELSE max(max, excluded.max) END, "
        "sum = sum + excluded.sum, count = count + excluded.count, "
        "nan_count = nan_count + excluded.nan_count, "
        "posinf_count = posinf_count + excluded.posinf_count, "
        "neginf_count = neginf_count + excluded.neginf_count, "
        "last_wall_time = max(last_wall_time, excluded.last_wall_time)",
    [GB__ST_TAG_INSERT] = "INSERT OR IGNORE INTO tags(run_id, name, kind) VALUES (?1, ?2, ?3)",
    [GB__ST_TAG_SELECT] = "SELECT id FROM tags WHERE run_id = ?1 AND name = ?2 AND kind = ?3",
    [GB__ST_TAG_UPDATE] =
        "UPDATE tags SET count = count + ?2, "
        "min_step = CASE WHEN min_step IS NULL OR ?3 < min_step THEN ?3 ELSE min_step END, "
        "max_step = CASE WHEN max_step IS NULL OR ?4 > max_step THEN ?4 ELSE max_step END, "
        "last_wall_time = max(coalesce(last_wall_time, ?5), ?5), "
        "max_chunk_span = max(max_chunk_span, ?6) WHERE id = ?1",
    [GB__ST_HISTOGRAM] =
        "INSERT INTO histograms(tag_id, step, wall_time, min, max, count, sum, sum_squares, "
        "nan_count, posinf_count, neginf_count, bucket_count, buckets) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [GB__ST_IMAGE] = "INSERT INTO images(tag_id, step, wall_time, sample_index, width, height, "
                     "channels, png) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [GB__ST_TEXT] = "INSERT INTO texts(tag_id, step, wall_time, value) VALUES (?1, ?2, ?3, ?4)",
    [GB__ST_GRAPH] = "INSERT INTO graphs(tag_id, step, wall_time, format, content) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)",
    /* A detail's graphs go to trace_graphs (store/internal.h says why). */
    [GB__ST_TRACE] = "INSERT INTO traces(run_id, step, wall_time, function, is_retrace, reason, "
                     "signature, duration_us, nodes_before, nodes_after, detail) "
                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CASE WHEN "
                     GB__DETAIL_HAS_GRAPHS("?11") " THEN " GB__DETAIL_WITHOUT_GRAPHS("?11")
                     " ELSE ?11 END)",
    [GB__ST_TRACE_GRAPHS] = "INSERT INTO trace_graphs(trace_id, graph, graph_traced) SELECT ?1, "
                            GB__DETAIL_GRAPH("?2", "graph") ", "
                            GB__DETAIL_GRAPH("?2", "graph_traced")
                            " WHERE " GB__DETAIL_HAS_GRAPHS("?2"),
    [GB__ST_NUMERICS] = "INSERT INTO numerics(run_id, step, wall_time, op_type, op_name, "
                        "function, scope_path, forward_op, nan_count, posinf_count, "
                        "neginf_count, message, detail) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [GB__ST_OP_TIMING] = "INSERT INTO op_timings(run_id, step, wall_time, op_type, op_name, "
                         "device, function, duration_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [GB__ST_MESSAGE] = "INSERT INTO messages(run_id, step, wall_time, kind, op_type, op_name, "
                       "device, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [GB__ST_HPARAM] = "INSERT INTO hparams(run_id, key, value, is_number, number) "
                      "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id, key) DO UPDATE SET "
                      "value = excluded.value, is_number = excluded.is_number, "
                      "number = excluded.number",
    [GB__ST_FUNCTION] =
        "INSERT INTO function_stats(run_id, function, wall_time, calls, cache_hits, traces, "
        "trace_ms, concrete) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
        "ON CONFLICT (run_id, function) DO UPDATE SET wall_time = excluded.wall_time, "
        "calls = excluded.calls, cache_hits = excluded.cache_hits, traces = excluded.traces, "
        "trace_ms = excluded.trace_ms, concrete = excluded.concrete",
    [GB__ST_RUN_UPDATE] = "UPDATE runs SET last_write_time = max(last_write_time, ?2) WHERE id = ?1",
    [GB__ST_PR_CURVE] = "INSERT INTO pr_curves(tag_id, step, wall_time, num_thresholds, counts) "
                        "VALUES (?1, ?2, ?3, ?4, ?5)",
    /* The experiment arrives as one JSON text (experiment.c); each entry
     * replaces the one of its name, keeping the declaration order. */
    [GB__ST_HPARAM_DOMAINS] =
        "INSERT INTO hparam_domains(name, display_name, description, type, domain, min, max, "
        "\"values\", position) SELECT h ->> 'name', h ->> 'display_name', h ->> 'description', "
        "h ->> 'type', h ->> 'domain', h ->> 'min', h ->> 'max', h -> 'values', key "
        "FROM (SELECT key, value AS h FROM json_each(?1, '$.hparams')) WHERE 1 "
        "ON CONFLICT (name) DO UPDATE SET display_name = excluded.display_name, "
        "description = excluded.description, type = excluded.type, domain = excluded.domain, "
        "min = excluded.min, max = excluded.max, \"values\" = excluded.\"values\", "
        "position = excluded.position",
    [GB__ST_HPARAM_METRICS] =
        "INSERT INTO hparam_metrics(tag, display_name, higher_is_better, position) "
        "SELECT m ->> 'tag', m ->> 'display_name', m ->> 'higher_is_better', key "
        "FROM (SELECT key, value AS m FROM json_each(?1, '$.metrics')) WHERE 1 "
        "ON CONFLICT (tag) DO UPDATE SET display_name = excluded.display_name, "
        "higher_is_better = excluded.higher_is_better, position = excluded.position",
    [GB__ST_RUN_STATUS] = "UPDATE runs SET status = ?2 WHERE id = ?1",
    [GB__ST_PROFILE] = "INSERT INTO profiles(run_id, wall_time, duration_us, rank, threads, "
                       "record_count, dropped, gemm_peak) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [GB__ST_PROFILE_EVENT] =
        "INSERT INTO profile_events(profile_id, kind, thread, step, start_us, dur_us, name, "
        "op_type, function, backward, shapes, flops, bytes, live_bytes) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [GB__ST_EMBEDDING] = "INSERT INTO embeddings(tag_id, step, wall_time, n, dim, vectors, "
                         "metadata, sprite, sprite_width, sprite_height) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    [GB__ST_HEALTH] = "INSERT INTO health(run_id, step, wall_time, kind, severity, layer, "
                      "variable, value, threshold, figures, message, advice) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [GB__ST_AUDIO] = "INSERT INTO audio(tag_id, step, wall_time, sample_index, sample_rate, "
                     "channels, frames, clipped, wav) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [GB__ST_IMPORT_MARK] =
        "INSERT INTO imported_files(run_id, file, bytes_read, tail, wall_time) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id, file) DO UPDATE SET "
        "bytes_read = excluded.bytes_read, tail = excluded.tail, wall_time = excluded.wall_time",
};

int gb__writer_prepare_statements(gb_summary_writer *w) {
    for (int i = 0; i < GB__ST_COUNT; i++) {
        int rc = sqlite3_prepare_v3(w->db, statements[i], -1, SQLITE_PREPARE_PERSISTENT, &w->st[i],
                                    NULL);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

/* ---- statement helpers ------------------------------------------------------------ */

/* Runs a bound statement to completion and resets it. */
static int run(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static void bind_step(sqlite3_stmt *st, int i, int64_t step) {
    if (step == GB_STEP_NONE)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, step);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* "" -> NULL, for the optional JSON details. */
static void bind_detail(sqlite3_stmt *st, int i, const char *s) {
    if (*s)
        bind_text(st, i, s);
    else
        sqlite3_bind_null(st, i);
}

/* ---- tags ---------------------------------------------------------------------------- */

static int resolve_tag(gb_summary_writer *w, gb__tag_state *ts) {
    if (ts->db_id) return SQLITE_OK;
    for (int k = GB__ST_TAG_INSERT; k <= GB__ST_TAG_SELECT; k++) {
        sqlite3_stmt *st = w->st[k];
        sqlite3_bind_int64(st, 1, w->run_id);
        bind_text(st, 2, ts->tag->name);
        sqlite3_bind_int(st, 3, ts->tag->kind);
        if (k == GB__ST_TAG_SELECT) {
            int rc = sqlite3_step(st);
            if (rc == SQLITE_ROW) ts->db_id = sqlite3_column_int64(st, 0);
            sqlite3_reset(st);
            return rc == SQLITE_ROW ? SQLITE_OK : rc == SQLITE_DONE ? SQLITE_INTERNAL : rc;
        }
        int rc = run(st);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_INTERNAL;
}

/* Adds `count` events at `step` to the tag's running statistics. */
static void note(gb_summary_writer *w, gb__tag_state *ts, int64_t step, double wall, int count) {
    if (ts->d_count == 0) {
        ts->d_min_step = ts->d_max_step = step;
        ts->d_wall = wall;
    }
    ts->d_count += count;
    if (step < ts->d_min_step) ts->d_min_step = step;
    if (step > ts->d_max_step) ts->d_max_step = step;
    if (wall > ts->d_wall) ts->d_wall = wall;
    if (wall > w->batch_wall) w->batch_wall = wall;
}

static int update_tag_row(gb_summary_writer *w, gb__tag_state *ts) {
    sqlite3_stmt *st = w->st[GB__ST_TAG_UPDATE];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ts->d_count);
    sqlite3_bind_int64(st, 3, ts->d_min_step);
    sqlite3_bind_int64(st, 4, ts->d_max_step);
    sqlite3_bind_double(st, 5, ts->d_wall);
    sqlite3_bind_int64(st, 6, ts->d_span);
    ts->d_count = ts->d_span = 0;
    return run(st);
}

/* ---- scalars: chunks and rollups ----------------------------------------------------- */

static int write_chunk(gb_summary_writer *w, gb__tag_state *ts) {
    int64_t lo = ts->points[0].step, hi = lo;
    for (int i = 1; i < ts->npoints; i++) {
        if (ts->points[i].step < lo) lo = ts->points[i].step;
        if (ts->points[i].step > hi) hi = ts->points[i].step;
    }
    if (hi - lo > ts->d_span) ts->d_span = hi - lo;
    sqlite3_stmt *st = w->st[GB__ST_CHUNK];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
    sqlite3_bind_int(st, 4, ts->npoints);
    sqlite3_bind_blob(st, 5, ts->points, ts->npoints * (int)sizeof(gb__point), SQLITE_STATIC);
    ts->npoints = 0;
    return run(st);
}

static int upsert_rollup(gb_summary_writer *w, int64_t tag_id, int level, int64_t bucket,
                         const gb__rollup *r) {
    sqlite3_stmt *st = w->st[GB__ST_ROLLUP];
    sqlite3_bind_int64(st, 1, tag_id);
    sqlite3_bind_int(st, 2, level);
    sqlite3_bind_int64(st, 3, bucket);
    sqlite3_bind_int64(st, 4, r->first_step);
    sqlite3_bind_int64(st, 5, r->last_step);
    sqlite3_bind_double(st, 6, r->first_value);   /* NaN binds as NULL */
    sqlite3_bind_double(st, 7, r->last_value);
    sqlite3_bind_double(st, 8, gb__rollup_finite(r) ? r->min : NAN);
    sqlite3_bind_double(st, 9, gb__rollup_finite(r) ? r->max : NAN);
    sqlite3_bind_double(st, 10, r->sum);
    sqlite3_bind_int64(st, 11, r->count);
    sqlite3_bind_int64(st, 12, r->nan_count);
    sqlite3_bind_int64(st, 13, r->posinf_count);
    sqlite3_bind_int64(st, 14, r->neginf_count);
    sqlite3_bind_double(st, 15, r->last_wall_time);
    return run(st);
}

static int feed(gb_summary_writer *w, gb__tag_state *ts, int level, int64_t bucket,
                const gb__rollup *r);

/* Writes the open bucket of `level` as a delta and passes it one level up. */
static int close_level(gb_summary_writer *w, gb__tag_state *ts, int level) {
    gb__rollup r = ts->acc[level];
    ts->acc[level] = (gb__rollup){0};
    int rc = upsert_rollup(w, ts->db_id, level, ts->acc_bucket[level], &r);
    if (rc == SQLITE_OK && level < GB__ROLLUP_LEVELS)
        rc = feed(w, ts, level + 1, ts->acc_bucket[level] >> GB__ROLLUP_SHIFT, &r);
    return rc;
}

/* Merges r into the open bucket of `level`, closing it first if r belongs
 * to another bucket. Deltas merge additively, so order does not matter. */
static int feed(gb_summary_writer *w, gb__tag_state *ts, int level, int64_t bucket,
                const gb__rollup *r) {
    if (ts->acc[level].count && ts->acc_bucket[level] != bucket) {
        int rc = close_level(w, ts, level);
        if (rc != SQLITE_OK) return rc;
    }
    ts->acc_bucket[level] = bucket;
    gb__rollup_merge(&ts->acc[level], r);
    return SQLITE_OK;
}

static int add_scalar(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    gb__point p = {ev->step, ev->wall_time, ev->value};
    if (ts->npoints == ts->points_cap) {   /* small until a tag proves busy */
        int cap = ts->points_cap ? 2 * ts->points_cap : 16;
        gb__point *points = realloc(ts->points, (size_t)cap * sizeof *points);
        if (!points) return SQLITE_NOMEM;
        ts->points = points;
        ts->points_cap = cap;
    }
    ts->points[ts->npoints++] = p;
    int rc = ts->npoints == GB__CHUNK_POINTS ? write_chunk(w, ts) : SQLITE_OK;
    gb__rollup r;
    gb__rollup_point(&r, &p);
    if (rc == SQLITE_OK)
        rc = feed(w, ts, GB__ROLLUP_MIN_LEVEL, gb__rollup_bucket(p.step, GB__ROLLUP_MIN_LEVEL), &r);
    note(w, ts, p.step, p.wall_time, 1);
    return rc;
}

/* End of batch: the open chunk, every open rollup bucket, the tag row. */
static int finish_tag(gb_summary_writer *w, gb__tag_state *ts) {
    int rc = ts->npoints ? write_chunk(w, ts) : SQLITE_OK;
    for (int level = GB__ROLLUP_MIN_LEVEL; rc == SQLITE_OK && level <= GB__ROLLUP_LEVELS; level++)
        if (ts->acc[level].count) rc = close_level(w, ts, level);
    if (rc == SQLITE_OK && ts->d_count) rc = update_tag_row(w, ts);
    return rc;
}

/* ---- the other kinds ------------------------------------------------------------------ */

static int add_histogram(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    const gb__histogram *h = &((const gb__hist_payload *)ev->payload)->h;
    sqlite3_stmt *st = w->st[GB__ST_HISTOGRAM];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    sqlite3_bind_double(st, 4, h->min);
    sqlite3_bind_double(st, 5, h->max);
    sqlite3_bind_double(st, 6, h->count);
    sqlite3_bind_double(st, 7, h->sum);
    sqlite3_bind_double(st, 8, h->sum_squares);
    sqlite3_bind_int64(st, 9, h->nan_count);
    sqlite3_bind_int64(st, 10, h->posinf_count);
    sqlite3_bind_int64(st, 11, h->neginf_count);
    sqlite3_bind_int(st, 12, h->bucket_count);
    sqlite3_bind_blob(st, 13, h->edges, (2 * h->bucket_count + 1) * (int)sizeof(double),
                      SQLITE_STATIC);
    note(w, ts, ev->step, ev->wall_time, 1);
    return run(st);
}

static int add_images(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    const gb__image_payload *im = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_IMAGE];
    for (int i = 0; i < im->n; i++) {
        sqlite3_bind_int64(st, 1, ts->db_id);
        sqlite3_bind_int64(st, 2, ev->step);
        sqlite3_bind_double(st, 3, ev->wall_time);
        sqlite3_bind_int(st, 4, i);
        sqlite3_bind_int(st, 5, im->w);
        sqlite3_bind_int(st, 6, im->h);
        sqlite3_bind_int(st, 7, im->c);
        sqlite3_bind_blob64(st, 8, im->png[i], im->png_size[i], SQLITE_STATIC);
        int rc = run(st);
        if (rc != SQLITE_OK) return rc;
    }
    note(w, ts, ev->step, ev->wall_time, im->n);
    return SQLITE_OK;
}

static int add_text(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    bool graph = ev->type == GB__EV_GRAPH;
    sqlite3_stmt *st = w->st[graph ? GB__ST_GRAPH : GB__ST_TEXT];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    if (graph) {
        const gb__strings *s = ev->payload;
        bind_text(st, 4, s->s[0]);
        bind_text(st, 5, s->s[1]);
    } else {
        bind_text(st, 4, ev->payload);
    }
    note(w, ts, ev->step, ev->wall_time, 1);
    return run(st);
}

/* Binds run_id, step, wall_time: the first three columns of event rows. */
static sqlite3_stmt *event_statement(gb_summary_writer *w, int which, const gb__event *ev) {
    sqlite3_stmt *st = w->st[which];
    sqlite3_bind_int64(st, 1, w->run_id);
    bind_step(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    if (ev->wall_time > w->batch_wall) w->batch_wall = ev->wall_time;
    return st;
}

static int add_trace(gb_summary_writer *w, const gb__event *ev) {
    const gb__trace_payload *p = ev->payload;
    sqlite3_stmt *st = event_statement(w, GB__ST_TRACE, ev);
    bind_text(st, 4, p->text->s[0]);
    sqlite3_bind_int(st, 5, p->is_retrace);
    bind_text(st, 6, p->text->s[1]);
    bind_text(st, 7, p->text->s[2]);
    sqlite3_bind_double(st, 8, p->duration_us);
    sqlite3_bind_int64(st, 9, p->nodes_before);
    sqlite3_bind_int64(st, 10, p->nodes_after);
    bind_detail(st, 11, p->text->s[3]);
    int rc = run(st);
    if (rc != SQLITE_OK || !*p->text->s[3]) return rc;
    st = w->st[GB__ST_TRACE_GRAPHS];
    sqlite3_bind_int64(st, 1, sqlite3_last_insert_rowid(w->db));
    bind_text(st, 2, p->text->s[3]);
    return run(st);
}

static int add_numerics(gb_summary_writer *w, const gb__event *ev) {
    const gb__numerics_payload *p = ev->payload;
    sqlite3_stmt *st = event_statement(w, GB__ST_NUMERICS, ev);
    for (int i = 0; i < 5; i++) bind_text(st, 4 + i, p->text->s[i]);
    sqlite3_bind_int64(st, 9, p->nan_count);
    sqlite3_bind_int64(st, 10, p->posinf_count);
    sqlite3_bind_int64(st, 11, p->neginf_count);
    bind_text(st, 12, p->text->s[5]);
    bind_detail(st, 13, p->text->s[6]);
    return run(st);
}

static int add_health(gb_summary_writer *w, const gb__event *ev) {
    const gb__health_payload *p = ev->payload;
    const char *const *t = p->text->s;   /* kind, layer, variable, figures, message, advice */
    sqlite3_stmt *st = event_statement(w, GB__ST_HEALTH, ev);
    bind_text(st, 4, t[0]);
    sqlite3_bind_int(st, 5, p->severity);
    bind_text(st, 6, t[1]);
    bind_text(st, 7, t[2]);
    sqlite3_bind_double(st, 8, p->value);
    sqlite3_bind_double(st, 9, p->threshold);
    for (int i = 3; i < 6; i++) bind_text(st, 7 + i, t[i]);
    return run(st);
}

/* Op timings and messages: run_id, step, wall_time, then the strings. */
static int add_strings_event(gb_summary_writer *w, int which, const gb__event *ev) {
    const gb__strings *s = ev->payload;
    sqlite3_stmt *st = event_statement(w, which, ev);
    for (int i = 0; i < s->n; i++) bind_text(st, 4 + i, s->s[i]);
    if (which == GB__ST_OP_TIMING) sqlite3_bind_double(st, 4 + s->n, ev->value);
    return run(st);
}

static int add_hparam(gb_summary_writer *w, const gb__event *ev) {
    const gb__strings *s = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_HPARAM];
    sqlite3_bind_int64(st, 1, w->run_id);
    bind_text(st, 2, s->s[0]);
    bind_text(st, 3, s->s[1]);
    sqlite3_bind_int(st, 4, ev->tag);
    sqlite3_bind_double(st, 5, ev->value);
    return run(st);
}

static int add_pr_curve(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    const gb__pr_payload *p = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_PR_CURVE];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    sqlite3_bind_int(st, 4, p->num_thresholds);
    sqlite3_bind_blob(st, 5, p->counts, 4 * p->num_thresholds * (int)sizeof(double),
                      SQLITE_STATIC);
    note(w, ts, ev->step, ev->wall_time, 1);
    return run(st);
}

static int add_embedding(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    const gb__embedding_payload *p = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_EMBEDDING];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    sqlite3_bind_int64(st, 4, p->n);
    sqlite3_bind_int64(st, 5, p->dim);
    sqlite3_bind_blob64(st, 6, p->bytes, (sqlite3_uint64)(p->n * p->dim) * 4, SQLITE_STATIC);
    sqlite3_bind_text64(st, 7, p->metadata, p->metadata_len, SQLITE_STATIC, SQLITE_UTF8);
    if (p->sprite)
        sqlite3_bind_blob64(st, 8, p->sprite, p->sprite_len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 8);
    sqlite3_bind_int(st, 9, p->sprite_w);
    sqlite3_bind_int(st, 10, p->sprite_h);
    note(w, ts, ev->step, ev->wall_time, 1);
    return run(st);
}

static int add_audio(gb_summary_writer *w, gb__tag_state *ts, const gb__event *ev) {
    const gb__audio_payload *p = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_AUDIO];
    sqlite3_bind_int64(st, 1, ts->db_id);
    sqlite3_bind_int64(st, 2, ev->step);
    sqlite3_bind_double(st, 3, ev->wall_time);
    sqlite3_bind_int(st, 4, p->index);
    sqlite3_bind_int(st, 5, p->sample_rate);
    sqlite3_bind_int(st, 6, p->channels);
    sqlite3_bind_int64(st, 7, p->frames);
    sqlite3_bind_int64(st, 8, p->clipped);
    sqlite3_bind_blob64(st, 9, p->wav, p->wav_size, SQLITE_STATIC);
    note(w, ts, ev->step, ev->wall_time, 1);
    return run(st);
}

static int add_hparams_config(gb_summary_writer *w, const gb__event *ev) {
    int rc = SQLITE_OK;
    for (int k = GB__ST_HPARAM_DOMAINS; rc == SQLITE_OK && k <= GB__ST_HPARAM_METRICS; k++) {
        bind_text(w->st[k], 1, ev->payload);
        rc = run(w->st[k]);
    }
    return rc;
}

static int add_run_status(gb_summary_writer *w, const gb__event *ev) {
    sqlite3_stmt *st = w->st[GB__ST_RUN_STATUS];
    sqlite3_bind_int64(st, 1, w->run_id);
    bind_text(st, 2, ev->payload);
    return run(st);
}

static int add_function_stats(gb_summary_writer *w, const gb__event *ev) {
    const gb_function_record *r = &((const gb__function_payload *)ev->payload)->r;
    sqlite3_stmt *st = w->st[GB__ST_FUNCTION];
    sqlite3_bind_int64(st, 1, w->run_id);
    bind_text(st, 2, r->function);
    sqlite3_bind_double(st, 3, ev->wall_time);
    sqlite3_bind_int64(st, 4, r->calls);
    sqlite3_bind_int64(st, 5, r->cache_hits);
    sqlite3_bind_int64(st, 6, r->traces);
    sqlite3_bind_double(st, 7, r->trace_ms);
    sqlite3_bind_int64(st, 8, r->concrete);
    return run(st);
}

/* The batch's last mark: in the transaction that stores the values of
 * every record it covers, so an import killed midway never skips a
 * record whose values were not stored. It reads again at most the one
 * record whose values this batch took without its mark (the mark is
 * queued right behind them). */
static int add_import_mark(gb_summary_writer *w, const gb__event *ev) {
    const gb__import_mark *m = ev->payload;
    sqlite3_stmt *st = w->st[GB__ST_IMPORT_MARK];
    sqlite3_bind_int64(st, 1, w->run_id);
    bind_text(st, 2, m->file);
    sqlite3_bind_int64(st, 3, m->bytes_read);
    sqlite3_bind_int64(st, 4, m->tail);
    sqlite3_bind_double(st, 5, ev->wall_time);
    return run(st);
}

static int write_event(gb_summary_writer *w, const gb__event *ev) {
    gb__tag_state *ts = ev->type <= GB__EV_AUDIO ? w->bg[ev->tag] : NULL;
    int rc = ts ? resolve_tag(w, ts) : SQLITE_OK;
    if (rc != SQLITE_OK) return rc;
    switch ((gb__event_type)ev->type) {
    case GB__EV_SCALAR: return add_scalar(w, ts, ev);
    case GB__EV_HISTOGRAM: return add_histogram(w, ts, ev);
    case GB__EV_IMAGE: return add_images(w, ts, ev);
    case GB__EV_TEXT:
    case GB__EV_GRAPH: return add_text(w, ts, ev);
    case GB__EV_TRACE: return add_trace(w, ev);
    case GB__EV_NUMERICS: return add_numerics(w, ev);
    case GB__EV_OP_TIMING: return add_strings_event(w, GB__ST_OP_TIMING, ev);
    case GB__EV_MESSAGE: return add_strings_event(w, GB__ST_MESSAGE, ev);
    case GB__EV_HPARAM: return add_hparam(w, ev);
    case GB__EV_FUNCTION: return add_function_stats(w, ev);
    case GB__EV_PR_CURVE: return add_pr_curve(w, ts, ev);
    case GB__EV_EMBEDDING: return add_embedding(w, ts, ev);
    case GB__EV_AUDIO: return add_audio(w, ts, ev);
    case GB__EV_HPARAMS_CONFIG: return add_hparams_config(w, ev);
    case GB__EV_RUN_STATUS: return add_run_status(w, ev);
    case GB__EV_PROFILE: return gb__writer_add_profile(w, ev);
    case GB__EV_HEALTH: return add_health(w, ev);
    case GB__EV_IMPORT_MARK: w->batch_mark = ev; return SQLITE_OK;
    }
    return SQLITE_INTERNAL;
}

/* ---- batches ------------------------------------------------------------------------------ */

static void set_error(gb_summary_writer *w, gb_status st, const char *msg) {
    pthread_mutex_lock(&w->lock);
    if (w->error == GB_OK) {
        w->error = st;
        snprintf(w->error_message, sizeof w->error_message, "%s", msg);
    }
    pthread_cond_broadcast(&w->space);
    pthread_mutex_unlock(&w->lock);
}

/* Histogram buckets and PNGs, before the transaction so the store's write
 * lock is held only for writing. */
static bool compute_payloads(gb_summary_writer *w, gb__event *events, size_t n) {
    for (size_t i = 0; i < n; i++) {
        gb__event *ev = &events[i];
        if (ev->type == GB__EV_HISTOGRAM) {
            gb__hist_payload *p = ev->payload;
            if (!p->ready && !gb__histogram_compute(p->dtype, p->data, p->n, w->opt.histogram_buckets, &p->h))
                return false;
        } else if (ev->type == GB__EV_IMAGE && !((gb__image_payload *)ev->payload)->ready) {
            gb__image_payload *im = ev->payload;
            im->png = calloc((size_t)im->n, sizeof *im->png);
            im->png_size = calloc((size_t)im->n, sizeof *im->png_size);
            if (!im->png || !im->png_size) return false;
            size_t per = (size_t)im->h * (size_t)im->w * (size_t)im->c;
            for (int k = 0; k < im->n; k++)
                if (!gb__png_encode(im->pixels + k * per, im->w, im->h, im->c, &im->png[k],
                                    &im->png_size[k]))
                    return false;
        }
    }
    return true;
}

static int commit(sqlite3 *db) {
    for (;;) {
        int rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_BUSY) return rc;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void commit_batch(gb_summary_writer *w, gb__event *events, size_t n) {
    if (!compute_payloads(w, events, n)) {
        set_error(w, GB_ERR_MEMORY, "out of memory while preparing histograms or images");
        return;
    }
    int rc = gb__begin_immediate(w->db);
    w->batch_wall = 0;
    w->batch_mark = NULL;
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++) rc = write_event(w, &events[i]);
    if (rc == SQLITE_OK && w->batch_mark) rc = add_import_mark(w, w->batch_mark);
    for (int t = 0; rc == SQLITE_OK && t < w->nbg; t++) rc = finish_tag(w, w->bg[t]);
    if (rc == SQLITE_OK && w->batch_wall > 0) {
        sqlite3_stmt *st = w->st[GB__ST_RUN_UPDATE];
        sqlite3_bind_int64(st, 1, w->run_id);
        sqlite3_bind_double(st, 2, w->batch_wall);
        rc = run(st);
    }
    if (rc == SQLITE_OK) rc = commit(w->db);
    if (rc == SQLITE_OK) return;
    char msg[sizeof w->error_message];
    snprintf(msg, sizeof msg, "writing to store '%s' failed: %s", w->path, sqlite3_errmsg(w->db));
    sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    set_error(w, GB_ERR_IO, msg);
}

/* ---- the thread ------------------------------------------------------------------------------ */

static bool batch_due(const gb_summary_writer *w) {
    return w->closing || w->flush_requested ||
           w->queue_len >= (size_t)w->opt.flush_every_events ||
           (w->queue_len > 0 && gb__mono_ms() >= w->queue_since_ms + w->opt.flush_every_ms);
}

/* Sleeps (lock held) until a batch is due. */
static void wait_for_work(gb_summary_writer *w) {
    while (!batch_due(w)) {
        if (w->queue_len == 0) {
            pthread_cond_wait(&w->work, &w->lock);
            continue;
        }
        double deadline = w->queue_since_ms + w->opt.flush_every_ms;
        struct timespec ts = {(time_t)(deadline / 1000),
                              (long)(fmod(deadline, 1000.0) * 1e6)};
        pthread_cond_timedwait(&w->work, &w->lock, &ts);   /* CLOCK_MONOTONIC */
    }
}

/* Gives the background thread a state for every tag interned so far
 * (lock held); false when out of memory. */
static bool adopt_tags(gb_summary_writer *w) {
    if (w->nbg == w->ntags) return true;
    gb__tag_state **bg = realloc(w->bg, (size_t)w->ntags * sizeof *bg);
    if (!bg) return false;
    w->bg = bg;
    for (; w->nbg < w->ntags; w->nbg++) {
        bg[w->nbg] = calloc(1, sizeof **bg);
        if (!bg[w->nbg]) return false;
        bg[w->nbg]->tag = w->tags[w->nbg];
    }
    return true;
}

void *gb__writer_thread(void *arg) {
    gb_summary_writer *w = arg;
    gb__event *batch = NULL;
    size_t batch_cap = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        wait_for_work(w);
        uint64_t target = w->enqueued;
        w->flush_requested = false;
        if (w->queue_len == 0) {
            w->committed = target;
            pthread_cond_broadcast(&w->done);
            if (w->closing) break;
            continue;
        }
        gb__event *events = w->queue;
        size_t n = w->queue_len, cap = w->queue_cap;
        w->queue = batch;
        w->queue_cap = batch_cap;
        w->queue_len = w->queue_bytes = 0;
        batch = events;
        batch_cap = cap;
        bool adopted = adopt_tags(w);
        bool failed = w->error != GB_OK;
        pthread_cond_broadcast(&w->space);
        pthread_mutex_unlock(&w->lock);
        if (!adopted)
            set_error(w, GB_ERR_MEMORY, "out of memory for the writer's tag table");
        else if (!failed)
            commit_batch(w, batch, n);
        for (size_t i = 0; i < n; i++) gb__event_free(&batch[i]);
        pthread_mutex_lock(&w->lock);
        w->committed = target;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    free(batch);
    return NULL;
}
