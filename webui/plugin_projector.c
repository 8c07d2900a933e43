/* plugin_projector.c — the Projector dashboard's API (embeddings).
 *
 *   GET /api/projector/tags?run=
 *   GET /api/projector/list?run=&tag=&points=&since=&min_step=&max_step=
 *       {"run", "tag", "steps": [{step, wall, n, dim, metadata_bytes,
 *        sprite: null | {width, height}}]}: the steps (at most points,
 *       evenly spread, the last kept) and each one's shape
 *   GET /api/projector/vectors?run=&tag=&step=    n * dim float32 (LE)
 *   GET /api/projector/metadata?run=&tag=&step=   the metadata text (TSV)
 *   GET /api/projector/sprite?run=&tag=&step=     the sprite atlas (PNG)
 *
 * The points are sent as raw float32, not JSON: 50,000 x 128 values are
 * 25.6 MB as they are and several times that as text, and the page's
 * workers compute on a Float32Array of them directly. The writer bounds
 * every part (gb_summary.h); a larger one is refused (413).
 */
#include "board_internal.h"

static int projector_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_EMBEDDING); }

static int projector_list(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_embeddings *em = NULL;
    gb_store_status st = gb_store_embeddings(req->store, gb__param_text(req, "run"),
                                             gb__param_text(req, "tag"), &q, &em);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "steps");
    gb__json_arr(j);
    for (size_t i = 0; i < em->count; i++) {
        const gb_embedding_row *r = &em->rows[i];
        gb__json_obj(j);
        GB__JSON_KV(j, "step", int, r->step);
        GB__JSON_KV(j, "wall", time, r->wall_time);
        GB__JSON_KV(j, "n", int, r->n);
        GB__JSON_KV(j, "dim", int, r->dim);
        GB__JSON_KV(j, "metadata_bytes", int, (int64_t)r->metadata_bytes);
        gb__json_key(j, "sprite");
        if (r->sprite_bytes) {
            gb__json_obj(j);
            GB__JSON_KV(j, "width", int, r->sprite_width);
            GB__JSON_KV(j, "height", int, r->sprite_height);
            gb__json_obj_end(j);
        } else {
            gb__json_null(j);
        }
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(em);
    return 200;
}

/* One part of a step's embedding, as the file it is. */
static int reply_part(gb__request *req, gb_embedding_part part, const char *type, size_t max) {
    gb_blob *b = NULL;
    gb_store_status st = gb_store_embedding_part(req->store, gb__param_text(req, "run"),
                                                 gb__param_text(req, "tag"),
                                                 gb__param_int(req, "step"), part, &b);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    return gb__reply_blob(req, b, type, max);
}

static int projector_vectors(gb__request *req) {
    return reply_part(req, GB_EMBEDDING_VECTORS, "application/octet-stream",
                      (size_t)GB_SUMMARY_EMBEDDING_MAX_BYTES);
}

static int projector_metadata(gb__request *req) {
    return reply_part(req, GB_EMBEDDING_METADATA, "text/tab-separated-values; charset=utf-8",
                      (size_t)GB_SUMMARY_METADATA_MAX_BYTES);
}

static int projector_sprite(gb__request *req) {
    return reply_part(req, GB_EMBEDDING_SPRITE, "image/png", (size_t)GB_SUMMARY_SPRITE_MAX_BYTES);
}

#define P_STEP {"step", GB__PARAM_INT, true, GB__P_INT64_MIN, GB__P_INT64_MAX, 0}

static const gb__route routes[] = {
    {"tags", projector_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"list", projector_list,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(1000, 1000), GB__P_STEP_RANGE, GB__P_END}},
    {"vectors", projector_vectors, {GB__P_RUN, GB__P_TAG, P_STEP, GB__P_END}},
    {"metadata", projector_metadata, {GB__P_RUN, GB__P_TAG, P_STEP, GB__P_END}},
    {"sprite", projector_sprite, {GB__P_RUN, GB__P_TAG, P_STEP, GB__P_END}},
};

static bool has_embeddings(gb_store *store) { return gb__has_kind(store, GB_KIND_EMBEDDING); }

const gb__plugin gb__plugin_projector = {
    .name = "projector",
    .title = "Projector",
    .order = 85,
    .is_active = has_embeddings,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
