/* plugin_text.c — the Text dashboard's API.
 *
 *   GET /api/text/tags?run=
 *   GET /api/text/series?run=&tag=&points=&since=&min_step=&max_step=
 *       {"rows": [{step, wall, text}]}; the page renders text as plain text.
 */
#include "board_internal.h"

static int text_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_TEXT); }

static int text_series(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_texts *t = NULL;
    gb_store_status st = gb_store_texts(req->store, gb__param_text(req, "run"),
                                        gb__param_text(req, "tag"), &q, &t);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "rows");
    gb__json_arr(j);
    for (size_t i = 0; i < t->count; i++) {
        gb__json_obj(j);
        GB__JSON_KV(j, "step", int, t->rows[i].step);
        GB__JSON_KV(j, "wall", time, t->rows[i].wall_time);
        GB__JSON_KV(j, "text", str, t->rows[i].text);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(t);
    return 200;
}

static const gb__route routes[] = {
    {"tags", text_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"series", text_series,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(1000, 100), GB__P_STEP_RANGE, GB__P_END}},
};

static bool has_text(gb_store *store) { return gb__has_kind(store, GB_KIND_TEXT); }

const gb__plugin gb__plugin_text = {
    .name = "text",
    .title = "Text",
    .order = 50,
    .is_active = has_text,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
