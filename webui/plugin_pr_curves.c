/* plugin_pr_curves.c — the PR Curves dashboard's API.
 *
 *   GET /api/pr_curves/tags?run=
 *   GET /api/pr_curves/series?run=&tag=&points=&since=&min_step=&max_step=
 *       {"run", "tag", "rows": [{step, wall, thresholds, tp: [...], fp,
 *        tn, fn, precision, recall}]}: per step the counts at each
 *       threshold i / (thresholds - 1) and the precision and recall the
 *       reader derives from them (0 where a denominator is 0). points
 *       bounds the steps (evenly spread, the last kept).
 */
#include "board_internal.h"

static int pr_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_PR_CURVE); }

static void write_array(gb__json *j, const char *key, const double *v, size_t n) {
    gb__json_key(j, key);
    gb__json_arr(j);
    for (size_t i = 0; i < n; i++) gb__json_num(j, v[i]);
    gb__json_arr_end(j);
}

static int pr_series(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_pr_curves *pr = NULL;
    gb_store_status st = gb_store_pr_curves(req->store, gb__param_text(req, "run"),
                                            gb__param_text(req, "tag"), &q, &pr);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "rows");
    gb__json_arr(j);
    for (size_t i = 0; i < pr->count; i++) {
        const gb_pr_curve_row *r = &pr->rows[i];
        gb__json_obj(j);
        GB__JSON_KV(j, "step", int, r->step);
        GB__JSON_KV(j, "wall", time, r->wall_time);
        GB__JSON_KV(j, "thresholds", int, (int64_t)r->num_thresholds);
        write_array(j, "tp", r->tp, r->num_thresholds);
        write_array(j, "fp", r->fp, r->num_thresholds);
        write_array(j, "tn", r->tn, r->num_thresholds);
        write_array(j, "fn", r->fn, r->num_thresholds);
        write_array(j, "precision", r->precision, r->num_thresholds);
        write_array(j, "recall", r->recall, r->num_thresholds);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(pr);
    return 200;
}

static const gb__route routes[] = {
    {"tags", pr_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"series", pr_series,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(1000, 100), GB__P_STEP_RANGE, GB__P_END}},
};

static bool has_pr_curves(gb_store *store) { return gb__has_kind(store, GB_KIND_PR_CURVE); }

const gb__plugin gb__plugin_pr_curves = {
    .name = "pr_curves",
    .title = "PR Curves",
    .order = 75,
    .is_active = has_pr_curves,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
