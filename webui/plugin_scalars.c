/* plugin_scalars.c — the Scalars dashboard's API.
 *
 *   GET /api/scalars/tags?run=              tags per run
 *   GET /api/scalars/series?run=&tag=&points=&since=&min_step=&max_step=
 *
 * A series comes as columns (what uPlot draws from): step, wall, value,
 * nan, posinf, neginf. With more points in the range than `points`, rows
 * are buckets (downsampled: true) and three more columns come: step_last,
 * and the min/max envelope that keeps every spike; value is the bucket
 * mean. Non-finite values
 * are the strings "NaN", "Infinity", "-Infinity" and are also counted per
 * row, so a NaN inside a bucket is never hidden. `since=s` returns only
 * steps after s (live updates); min_step/max_step select a zoomed range.
 */
#include "board_internal.h"

/* One column per field of gb_scalar_row that the page uses. */
#define SCALAR_COLUMNS(X)                  \
    X("step", int, step)                   \
    X("wall", time, wall_time)             \
    X("value", num, value)                 \
    X("nan", int, nan_count)               \
    X("posinf", int, posinf_count)         \
    X("neginf", int, neginf_count)
/* Only buckets carry these: for raw points they equal step and value, and
 * leaving them out halves the numbers to format and send. */
#define BUCKET_COLUMNS(X)                  \
    X("step_last", int, step_last)         \
    X("min", num, min)                     \
    X("max", num, max)

static int scalar_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_SCALAR); }

static int scalar_series(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_scalar_series *s = NULL;
    gb_store_status st =
        gb_store_scalars(req->store, gb__param_text(req, "run"), gb__param_text(req, "tag"), &q, &s);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    GB__JSON_KV(j, "downsampled", bool, s->downsampled);
    GB__JSON_KV(j, "total_points", int, s->total_points);
#define COLUMN(name, kind, field)                                                  \
    gb__json_key(j, name);                                                         \
    gb__json_arr(j);                                                               \
    for (size_t i = 0; i < s->count; i++) gb__json_##kind(j, s->rows[i].field);     \
    gb__json_arr_end(j);
    SCALAR_COLUMNS(COLUMN)
    if (s->downsampled) { BUCKET_COLUMNS(COLUMN) }
#undef COLUMN
    gb__json_obj_end(j);
    gb_store_free(s);
    return 200;
}

static const gb__route routes[] = {
    {"tags", scalar_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"series", scalar_series,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS, GB__P_STEP_RANGE, GB__P_END}},
};

static bool has_scalars(gb_store *store) { return gb__has_kind(store, GB_KIND_SCALAR); }

const gb__plugin gb__plugin_scalars = {
    .name = "scalars",
    .title = "Scalars",
    .order = 10,
    .is_active = has_scalars,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
