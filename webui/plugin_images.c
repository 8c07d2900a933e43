/* plugin_images.c — the Images dashboard's API.
 *
 *   GET /api/images/tags?run=
 *   GET /api/images/list?run=&tag=&points=&since=&min_step=&max_step=
 *       steps (at most `points`, evenly spread, last kept), each with its
 *       samples: index, width, height, channels
 *   GET /api/images/png?run=&tag=&step=&index=     the PNG bytes
 */
#include <stddef.h>

#include "board_internal.h"

static int image_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_IMAGE); }

static void image_item(gb__json *j, const void *row) {
    const gb_image_row *r = row;
    GB__JSON_KV(j, "index", int, r->index);
    GB__JSON_KV(j, "width", int, r->width);
    GB__JSON_KV(j, "height", int, r->height);
    GB__JSON_KV(j, "channels", int, r->channels);
}

static int image_list(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_images *im = NULL;
    gb_store_status st = gb_store_images(req->store, gb__param_text(req, "run"),
                                         gb__param_text(req, "tag"), &q, false, &im);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    /* Rows come by step then index: the samples of each step together. */
    int status = gb__reply_step_rows(
        req, &(gb__step_rows){im->rows, im->count, sizeof *im->rows, offsetof(gb_image_row, step),
                              offsetof(gb_image_row, wall_time), "samples", image_item});
    gb_store_free(im);
    return status;
}

static int image_png(gb__request *req) {
    gb_blob *png = NULL;
    gb_store_status st = gb_store_image_png(req->store, gb__param_text(req, "run"),
                                            gb__param_text(req, "tag"), gb__param_int(req, "step"),
                                            (int)gb__param_int(req, "index"), &png);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    return gb__reply_blob(req, png, "image/png", GB__MAX_RESPONSE);
}

static const gb__route routes[] = {
    {"tags", image_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"list", image_list,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(1000, 100), GB__P_STEP_RANGE, GB__P_END}},
    {"png", image_png,
     {GB__P_RUN, GB__P_TAG, {"step", GB__PARAM_INT, true, (double)INT64_MIN, (double)INT64_MAX, 0},
      {"index", GB__PARAM_INT, false, 0, 4096, 0}, GB__P_END}},
};

static bool has_images(gb_store *store) { return gb__has_kind(store, GB_KIND_IMAGE); }

const gb__plugin gb__plugin_images = {
    .name = "images",
    .title = "Images",
    .order = 40,
    .is_active = has_images,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
