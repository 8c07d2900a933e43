/* store/reader_health.c — what the Health page reads of training health:
 * a run's alert counts, and the heat map of one figure (a row per layer,
 * a column per step or interval of steps). The alerts themselves are an
 * event table like the others (reader_events.c).
 *
 * The heat map is built from the scalar tags "health/<layer>/<figure>"
 * the engine writes: the layers are the figure's tags in the order the
 * store first saw them (tags.id), which is the model's order; the
 * columns come from the downsampling grid of reader_scalars.c laid over
 * the same steps for every layer, so cell k of every row covers the same
 * steps. Empty columns (steps nobody wrote) are left out, so a run that
 * measures every 10 steps has a column per measurement, not nine empty
 * ones between. A cell keeps its worst point, as the rollups keep their
 * minimum and maximum: no vanishing gradient or dead layer is averaged
 * away when a long run is squeezed into a few hundred columns.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

#define HEALTH_PREFIX "health/"

const char *gb_health_severity_name(int severity) {
    switch (severity) {
    case GB_HEALTH_SEVERITY_INFO: return "info";
    case GB_HEALTH_SEVERITY_WARNING: return "warning";
    case GB_HEALTH_SEVERITY_CRITICAL: return "critical";
    default: return "unknown";
    }
}

/* ---- counts ------------------------------------------------------------------------------ */

static gb_store_status counts(gb_store *s, const char *run, gb_health_counts *c) {
    *c = (gb_health_counts){.first_step = GB_STEP_NONE, .last_step = GB_STEP_NONE};
    int64_t run_id;
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    if (st != GB_STORE_OK || gb_store_schema_version(s) < 7) return st;
    sqlite3_stmt *q = gb__store_stmt(s, "SELECT severity, count(*), min(step), max(step), max(id) "
                                        "FROM health WHERE run_id = ?1 GROUP BY severity");
    if (!q) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(q, 1, run_id);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int severity = sqlite3_column_int(q, 0);
        int64_t n = sqlite3_column_int64(q, 1);
        c->total += n;
        c->by_severity[severity >= 1 && severity <= 3 ? severity : 0] += n;
        if (sqlite3_column_type(q, 2) != SQLITE_NULL) {
            int64_t lo = sqlite3_column_int64(q, 2), hi = sqlite3_column_int64(q, 3);
            if (c->first_step == GB_STEP_NONE || lo < c->first_step) c->first_step = lo;
            if (c->last_step == GB_STEP_NONE || hi > c->last_step) c->last_step = hi;
        }
        if (sqlite3_column_int64(q, 4) > c->last_id) c->last_id = sqlite3_column_int64(q, 4);
    }
    sqlite3_reset(q);
    return gb__store_done(s, rc, "counting health alerts");
}

gb_store_status gb_store_health_counts(gb_store *s, const char *run, gb_health_counts **out) {
    if (!s || !out) return gb__store_null_args("gb_store_health_counts");
    *out = NULL;
    GB__VIA_MEMBER(s, run, gb_store_health_counts, out);
    gb__arena *a;
    gb_health_counts *res = gb__result_new(sizeof *res, &a);
    if (!res) return gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    gb__store_lock(s);
    gb_store_status st = counts(s, run, res);
    gb__store_unlock(s);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}

/* ---- the worst point of a cell --------------------------------------------------------------- */

/* The step size a healthy update makes relative to its weights. */
#define HEALTHY_UPDATE_RATIO 1e-3

/* How far v is from `to` by ratio (log scale); infinite for v <= 0. */
static double ratio_distance(double v, double to) {
    return v > 0 && to > 0 ? fabs(log(v / to)) : INFINITY;
}

/* The worst of r's points for this figure (see gb_health_cell). */
static double worst(const char *figure, const gb__rollup *r) {
    if (r->nan_count) return NAN;
    if (r->posinf_count) return INFINITY;
    if (r->neginf_count) return -INFINITY;
    if (!strcmp(figure, "grad_norm")) {
        double mean = r->sum / (double)gb__rollup_finite(r);
        return ratio_distance(r->max, mean) > ratio_distance(r->min, mean) ? r->max : r->min;
    }
    if (!strcmp(figure, "update_ratio"))
        return ratio_distance(r->min, HEALTHY_UPDATE_RATIO) >
                       ratio_distance(r->max, HEALTHY_UPDATE_RATIO)
                   ? r->min
                   : r->max;
    return r->max;
}

static gb_health_cell cell_of(const char *figure, const gb__rollup *r) {
    if (!r->count) return (gb_health_cell){NAN, NAN, NAN, 0};
    bool finite = gb__rollup_finite(r) > 0;
    return (gb_health_cell){worst(figure, r), finite ? r->min : NAN, finite ? r->max : NAN,
                            r->count};
}

/* ---- the heat map ------------------------------------------------------------------------------ */

typedef struct layer_tag {
    gb__tag_info ti;
    const char *layer;
} layer_tag;

/* "health/<layer>/<figure>": the layer's length and the figure, or false
 * for a tag of another shape (an empty layer or figure). */
static bool split_tag(const char *name, size_t *layer_len, const char **figure) {
    const char *rest = name + strlen(HEALTH_PREFIX);
    const char *slash = strrchr(rest, '/');
    if (!slash || slash == rest || !slash[1]) return false;
    *layer_len = (size_t)(slash - rest);
    *figure = slash + 1;
    return true;
}

typedef struct heat_build {
    gb__arena *a;
    gb__rows figures;   /* const char * */
    gb__rows layers;    /* layer_tag */
} heat_build;

static bool add_figure(heat_build *b, const char *figure) {
    const char **have = b->figures.data;
    for (size_t i = 0; i < b->figures.count; i++)
        if (!strcmp(have[i], figure)) return true;
    const char **slot = gb__rows_push(&b->figures);
    return slot && (*slot = gb__arena_strdup(b->a, figure));
}

/* The run's figures, and the layers (with their tags) of `figure`. */
static gb_store_status read_layers(gb_store *s, int64_t run_id, const char *run,
                                   const char *figure, heat_build *b) {
    sqlite3_stmt *q = gb__store_stmt(
        s, "SELECT id, name, count, min_step, max_step, max_chunk_span FROM tags "
           "WHERE run_id = ?1 AND kind = 1 AND name >= 'health/' AND name < 'health0' ORDER BY id");
    if (!q) return GB_STORE_ERR_IO;
    sqlite3_bind_int64(q, 1, run_id);
    int rc;
    bool ok = true;
    while (ok && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 1), *fig;
        size_t len;
        if (!name || !split_tag(name, &len, &fig)) continue;
        ok = add_figure(b, fig);
        if (!ok || strcmp(fig, figure)) continue;
        layer_tag *l = gb__rows_push(&b->layers);
        char *layer = l ? gb__arena_alloc(b->a, len + 1) : NULL;
        const char *tag = layer ? gb__arena_strdup(b->a, name) : NULL;
        if (!tag) {
            ok = false;
            break;
        }
        memcpy(layer, name + strlen(HEALTH_PREFIX), len);
        l->layer = layer;
        l->ti = (gb__tag_info){sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 2),
                               sqlite3_column_int64(q, 3), sqlite3_column_int64(q, 4),
                               sqlite3_column_int64(q, 5), run, tag};
    }
    sqlite3_reset(q);
    return gb__store_done(s, ok ? rc : SQLITE_NOMEM, "reading health figures");
}

/* The steps every layer's figure spans, within q's range; false if none. */
static bool step_span(const heat_build *b, const gb_query *q, int64_t *lo, int64_t *hi) {
    const layer_tag *l = b->layers.data;
    bool any = false;
    for (size_t i = 0; i < b->layers.count; i++) {
        if (l[i].ti.count <= 0) continue;
        if (!any || l[i].ti.min_step < *lo) *lo = l[i].ti.min_step;
        if (!any || l[i].ti.max_step > *hi) *hi = l[i].ti.max_step;
        any = true;
    }
    if (q->step_min > *lo) *lo = q->step_min;
    if (q->step_max < *hi) *hi = q->step_max;
    return any && *lo <= *hi;
}

/* Fills res's columns and cells from grid (layers x intervals rollups),
 * leaving out the columns no layer has a point in. */
static bool fill_cells(gb__arena *a, const char *figure, const gb__rollup *grid, size_t layers,
                       size_t intervals, gb_health_heatmap *res) {
    size_t used = 0;
    for (size_t k = 0; k < intervals; k++)
        for (size_t l = 0; l < layers; l++)
            if (grid[l * intervals + k].count) {
                used++;
                break;
            }
    size_t ncells = layers * used;
    int64_t *steps = gb__arena_alloc(a, 2 * (used ? used : 1) * sizeof *steps);
    gb_health_cell *cells = gb__arena_alloc(a, (ncells ? ncells : 1) * sizeof *cells);
    if (!steps || !cells) return false;
    size_t c = 0;
    for (size_t k = 0; k < intervals; k++) {
        bool any = false;
        int64_t first = 0, last = 0;
        for (size_t l = 0; l < layers; l++) {
            const gb__rollup *r = &grid[l * intervals + k];
            if (!r->count) continue;
            if (!any || r->first_step < first) first = r->first_step;
            if (!any || r->last_step > last) last = r->last_step;
            any = true;
        }
        if (!any) continue;
        for (size_t l = 0; l < layers; l++)
            cells[l * used + c] = cell_of(figure, &grid[l * intervals + k]);
        steps[c] = first;
        steps[used + c] = last;
        if (first != last) res->downsampled = true;
        c++;
    }
    res->column_count = used;
    res->steps = steps;
    res->steps_last = steps + used;
    res->cells = cells;
    return true;
}

static gb_store_status heatmap(gb_store *s, const char *run, const char *figure,
                               const gb_query *q, gb__arena *a, gb_health_heatmap *res) {
    heat_build b = {.a = a, .figures = {.elem = sizeof(const char *)},
                    .layers = {.elem = sizeof(layer_tag)}};
    int64_t run_id, lo = 0, hi = 0;
    gb__rollup *grid = NULL;
    gb__store_read_begin(s);
    gb_store_status st = gb__store_resolve(s, run, NULL, GB_KIND_ANY, &run_id, NULL);
    if (st == GB_STORE_OK) st = read_layers(s, run_id, run, figure, &b);
    size_t n = q->max_rows && q->max_rows < GB_HEALTH_HEATMAP_MAX_COLUMNS
                   ? q->max_rows
                   : GB_HEALTH_HEATMAP_MAX_COLUMNS;
    if (st == GB_STORE_OK && step_span(&b, q, &lo, &hi)) {
        size_t intervals = gb__scalar_grid_size(lo, hi, n), layers = b.layers.count;
        grid = calloc(layers * intervals, sizeof *grid);
        if (!grid) st = gb__store_done(s, SQLITE_NOMEM, "reading a heat map");
        const layer_tag *l = b.layers.data;
        for (size_t i = 0; st == GB_STORE_OK && i < layers; i++) {
            int64_t total;
            if (l[i].ti.count > 0)
                st = gb__scalar_grid(s, &l[i].ti, lo, hi, n, grid + i * intervals, &total);
        }
        if (st == GB_STORE_OK && !fill_cells(a, figure, grid, layers, intervals, res))
            st = gb__store_done(s, SQLITE_NOMEM, "reading a heat map");
    }
    gb__store_read_end(s);
    free(grid);
    const char **layer_names = st == GB_STORE_OK && b.layers.count
                                   ? gb__arena_alloc(a, b.layers.count * sizeof *layer_names)
                                   : NULL;
    for (size_t i = 0; layer_names && i < b.layers.count; i++)
        layer_names[i] = ((const layer_tag *)b.layers.data)[i].layer;
    if (st == GB_STORE_OK && b.layers.count && !layer_names)
        st = gb__store_done(s, SQLITE_NOMEM, "reading a heat map");
    res->layer_count = layer_names ? b.layers.count : 0;
    res->layers = layer_names;
    gb__rows_release(&b.layers);
    res->figure_count = b.figures.count;
    res->figures = gb__rows_into(a, &b.figures);
    if (b.figures.data) {   /* the arena could not take them */
        gb__rows_release(&b.figures);
        res->figure_count = 0;
        if (st == GB_STORE_OK) st = gb__store_done(s, SQLITE_NOMEM, "reading a heat map");
    }
    return st;
}

static bool figure_name_ok(const char *figure) {
    size_t n = figure ? strlen(figure) : 0;
    return n >= 1 && n <= GB_HEALTH_FIGURE_MAX_BYTES && !strchr(figure, '/');
}

gb_store_status gb_store_health_heatmap(gb_store *s, const char *run, const char *figure,
                                        const gb_query *q, gb_health_heatmap **out) {
    if (!s || !out) return gb__store_null_args("gb_store_health_heatmap");
    *out = NULL;
    if (!figure_name_ok(figure)) {
        gb__store_fail("gb_store_health_heatmap: '%s' is not a figure's name (1 to %d bytes, "
                       "no '/')",
                       figure ? figure : "(null)", GB_HEALTH_FIGURE_MAX_BYTES);
        return GB_STORE_ERR_ARG;
    }
    GB__VIA_MEMBER(s, run, gb_store_health_heatmap, figure, q, out);
    gb_query all = GB_QUERY_ALL;
    gb__arena *a;
    gb_health_heatmap *res = gb__result_new(sizeof *res, &a);
    if (!res) return gb__store_done(s, SQLITE_NOMEM, "allocating a result");
    gb__store_lock(s);
    gb_store_status st = heatmap(s, run, figure, q ? q : &all, a, res);
    gb__store_unlock(s);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}
