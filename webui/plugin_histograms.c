/* plugin_histograms.c — the Histograms dashboard's API.
 *
 *   GET /api/histograms/tags?run=
 *   GET /api/histograms/series?run=&tag=&points=&since=&min_step=&max_step=
 *
 * Each histogram: step, wall, the exact statistics (min, max, count, sum,
 * sum_squares, non-finite counts) and its buckets as edges (n + 1) and
 * counts (n). `points` is the number of steps, evenly spread, last kept.
 */
#include "board_internal.h"

static int histogram_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_HISTOGRAM); }

static void write_numbers(gb__json *j, const char *key, const double *v, size_t n) {
    gb__json_key(j, key);
    gb__json_arr(j);
    for (size_t i = 0; i < n; i++) gb__json_num(j, v[i]);
    gb__json_arr_end(j);
}

static void write_histogram(gb__json *j, const gb_histogram_row *h) {
    gb__json_obj(j);
    GB__JSON_KV(j, "step", int, h->step);
    GB__JSON_KV(j, "wall", time, h->wall_time);
    GB__JSON_KV(j, "min", num, h->min);
    GB__JSON_KV(j, "max", num, h->max);
    GB__JSON_KV(j, "count", num, h->count);
    GB__JSON_KV(j, "sum", num, h->sum);
    GB__JSON_KV(j, "sum_squares", num, h->sum_squares);
    GB__JSON_KV(j, "nan", int, h->nan_count);
    GB__JSON_KV(j, "posinf", int, h->posinf_count);
    GB__JSON_KV(j, "neginf", int, h->neginf_count);
    write_numbers(j, "edges", h->edges, h->bucket_count ? h->bucket_count + 1 : 0);
    write_numbers(j, "counts", h->counts, h->bucket_count);
    gb__json_obj_end(j);
}

static int histogram_series(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_histograms *hs = NULL;
    gb_store_status st = gb_store_histograms(req->store, gb__param_text(req, "run"),
                                             gb__param_text(req, "tag"), &q, &hs);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "histograms");
    gb__json_arr(j);
    for (size_t i = 0; i < hs->count; i++) write_histogram(j, &hs->rows[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(hs);
    return 200;
}

static const gb__route routes[] = {
    {"tags", histogram_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"series", histogram_series,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(2000, 100), GB__P_STEP_RANGE, GB__P_END}},
};

static bool has_histograms(gb_store *store) { return gb__has_kind(store, GB_KIND_HISTOGRAM); }

const gb__plugin gb__plugin_histograms = {
    .name = "histograms",
    .title = "Histograms",
    .order = 20,
    .is_active = has_histograms,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
