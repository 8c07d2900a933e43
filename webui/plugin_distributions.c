/* plugin_distributions.c — the Distributions dashboard's API: the
 * histograms of a tag seen as percentile bands over steps (TensorBoard's
 * compressed histograms).
 *
 *   GET /api/distributions/tags?run=        (the histogram tags)
 *   GET /api/distributions/series?run=&tag=&points=&since=&min_step=&max_step=
 *
 * Columns: step, wall, and values[k] = the k-th percentile of each step,
 * for the percentiles listed in "percentiles" (in percent).
 */
#include "board_internal.h"

static int distribution_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_HISTOGRAM); }

static int distribution_series(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_distributions *d = NULL;
    gb_store_status st = gb_store_distributions(req->store, gb__param_text(req, "run"),
                                                gb__param_text(req, "tag"), &q, &d);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "percentiles");
    gb__json_arr(j);
    for (int k = 0; k < GB_DISTRIBUTION_POINTS; k++) gb__json_num(j, gb_distribution_percentiles[k]);
    gb__json_arr_end(j);
    gb__json_key(j, "step");
    gb__json_arr(j);
    for (size_t i = 0; i < d->count; i++) gb__json_int(j, d->rows[i].step);
    gb__json_arr_end(j);
    gb__json_key(j, "wall");
    gb__json_arr(j);
    for (size_t i = 0; i < d->count; i++) gb__json_time(j, d->rows[i].wall_time);
    gb__json_arr_end(j);
    gb__json_key(j, "values");
    gb__json_arr(j);
    for (int k = 0; k < GB_DISTRIBUTION_POINTS; k++) {
        gb__json_arr(j);
        for (size_t i = 0; i < d->count; i++) gb__json_num(j, d->rows[i].values[k]);
        gb__json_arr_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(d);
    return 200;
}

static const gb__route routes[] = {
    {"tags", distribution_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"series", distribution_series,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS, GB__P_STEP_RANGE, GB__P_END}},
};

static bool has_histograms(gb_store *store) { return gb__has_kind(store, GB_KIND_HISTOGRAM); }

const gb__plugin gb__plugin_distributions = {
    .name = "distributions",
    .title = "Distributions",
    .order = 30,
    .is_active = has_histograms,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
