/* plugin_audio.c — the Audio dashboard's API.
 *
 *   GET /api/audio/tags?run=
 *   GET /api/audio/list?run=&tag=&points=&since=&min_step=&max_step=
 *       {"run", "tag", "steps": [{step, wall, clips: [{index, sample_rate,
 *        channels, frames, clipped}]}]}: the steps (at most points, evenly
 *       spread, the last kept), each with its clips
 *   GET /api/audio/wav?run=&tag=&step=&index=     the WAV file
 */
#include <stddef.h>

#include "board_internal.h"

static int audio_tags(gb__request *req) { return gb__respond_tags(req, GB_KIND_AUDIO); }

static void audio_item(gb__json *j, const void *row) {
    const gb_audio_row *r = row;
    GB__JSON_KV(j, "index", int, r->index);
    GB__JSON_KV(j, "sample_rate", int, r->sample_rate);
    GB__JSON_KV(j, "channels", int, r->channels);
    GB__JSON_KV(j, "frames", int, r->frames);
    GB__JSON_KV(j, "clipped", int, r->clipped);
}

static int audio_list(gb__request *req) {
    gb_query q = gb__query_of(req);
    gb_audio_clips *au = NULL;
    gb_store_status st = gb_store_audio(req->store, gb__param_text(req, "run"),
                                        gb__param_text(req, "tag"), &q, &au);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    /* Rows come by step then index: the clips of each step together. */
    int status = gb__reply_step_rows(
        req, &(gb__step_rows){au->rows, au->count, sizeof *au->rows, offsetof(gb_audio_row, step),
                              offsetof(gb_audio_row, wall_time), "clips", audio_item});
    gb_store_free(au);
    return status;
}

static int audio_wav(gb__request *req) {
    gb_blob *wav = NULL;
    gb_store_status st = gb_store_audio_wav(req->store, gb__param_text(req, "run"),
                                            gb__param_text(req, "tag"), gb__param_int(req, "step"),
                                            (int)gb__param_int(req, "index"), &wav);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    return gb__reply_blob(req, wav, "audio/wav", (size_t)GB_SUMMARY_AUDIO_MAX_BYTES + 44);
}

static const gb__route routes[] = {
    {"tags", audio_tags, {GB__P_RUN_OPT, GB__P_END}},
    {"list", audio_list,
     {GB__P_RUN, GB__P_TAG, GB__P_POINTS_UPTO(1000, 100), GB__P_STEP_RANGE, GB__P_END}},
    {"wav", audio_wav,
     {GB__P_RUN, GB__P_TAG, {"step", GB__PARAM_INT, true, GB__P_INT64_MIN, GB__P_INT64_MAX, 0},
      {"index", GB__PARAM_INT, false, 0, 4096, 0}, GB__P_END}},
};

static bool has_audio(gb_store *store) { return gb__has_kind(store, GB_KIND_AUDIO); }

const gb__plugin gb__plugin_audio = {
    .name = "audio",
    .title = "Audio",
    .order = 45,
    .is_active = has_audio,
    .routes = routes,
    .n_routes = sizeof routes / sizeof routes[0],
};
