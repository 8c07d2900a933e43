/* api_common.c — what every dashboard's routes share: mapping reader
 * errors to HTTP statuses, reading step ranges from parameters, the
 * per-kind tag listing, and stored files as responses. */
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"

int gb__reply_store_error(gb__request *req, gb_store_status st) {
    const char *msg = gb_store_last_error();
    /* "store 'path': unknown run 'x'" -> "unknown run 'x'": the client
     * needs the reason, not where the file lives. */
    const char *cut = strncmp(msg, "store '", 7) ? NULL : strstr(msg, "': ");
    if (cut) msg = cut + 3;
    /* A damaged row is the store's fault, not a passing condition: 500,
     * and only this request fails (the page's other requests answer). */
    int status = st == GB_STORE_ERR_NO_RUN || st == GB_STORE_ERR_NO_TAG ||
                         st == GB_STORE_ERR_NO_ROW
                     ? 404
                 : st == GB_STORE_ERR_ARG  ? 400
                 : st == GB_STORE_ERR_DATA ? 500
                                           : 503;
    return gb__fail(req, status, "%s", *msg ? msg : gb_store_status_name(st));
}

int gb__reply_blob(gb__request *req, gb_blob *blob, const char *content_type, size_t max) {
    size_t n = blob->size;
    if (n > max) {
        gb_store_free(blob);
        return gb__fail(req, 413, "the stored file is %zu bytes, more than the %zu this route "
                        "sends", n, max);
    }
    req->body = malloc(n ? n : 1);
    if (!req->body) {
        gb_store_free(blob);
        return gb__fail(req, 503, "out of memory");
    }
    if (n) memcpy(req->body, blob->data, n);
    req->body_len = n;
    req->content_type = content_type;
    gb_store_free(blob);
    return 200;
}

gb_query gb__query_of(const gb__request *req) {
    gb_query q = GB_QUERY_ALL;
    if (gb__param_present(req, "min_step")) q.step_min = gb__param_int(req, "min_step");
    if (gb__param_present(req, "max_step")) q.step_max = gb__param_int(req, "max_step");
    if (gb__param_present(req, "since")) {
        int64_t since = gb__param_int(req, "since");
        if (since >= q.step_min) q.step_min = since == INT64_MAX ? INT64_MAX : since + 1;
    }
    /* Routes without a points parameter get 0 here: "every row", which
     * only routes with naturally small results may use. */
    q.max_rows = (size_t)gb__param_int(req, "points");
    return q;
}

int gb__respond_tags(gb__request *req, gb_summary_kind kind) {
    gb_tags *tags = NULL;
    gb_store_status st = gb_store_tags(req->store, gb__param_text(req, "run"), kind, &tags);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "runs");
    gb__json_obj(j);
    /* Rows come sorted by run: open a new array at each run change. */
    const char *run = NULL;
    for (size_t i = 0; i < tags->count; i++) {
        const gb_tag_row *t = &tags->rows[i];
        if (!run || strcmp(run, t->run)) {
            if (run) gb__json_arr_end(j);
            run = t->run;
            gb__json_key(j, run);
            gb__json_arr(j);
        }
        gb__json_obj(j);
        GB__JSON_KV(j, "tag", str, t->tag);
        GB__JSON_KV(j, "count", int, t->count);
        GB__JSON_KV(j, "min_step", int, t->min_step);
        GB__JSON_KV(j, "max_step", int, t->max_step);
        GB__JSON_KV(j, "last_wall_time", time, t->last_wall_time);
        gb__json_obj_end(j);
    }
    if (run) gb__json_arr_end(j);
    else if (gb__param_text(req, "run")) { /* a known run without such tags */
        gb__json_key(j, gb__param_text(req, "run"));
        gb__json_arr(j);
        gb__json_arr_end(j);
    }
    gb__json_obj_end(j);
    gb__json_obj_end(j);
    gb_store_free(tags);
    return 200;
}

bool gb__has_kind(gb_store *store, gb_summary_kind kind) {
    gb_tags *tags = NULL;
    bool any = gb_store_tags(store, NULL, kind, &tags) == GB_STORE_OK && tags->count > 0;
    gb_store_free(tags);
    return any;
}

static int64_t step_of(const gb__step_rows *r, size_t i) {
    int64_t step;
    memcpy(&step, (const char *)r->rows + i * r->stride + r->step_at, sizeof step);
    return step;
}

int gb__reply_step_rows(gb__request *req, const gb__step_rows *r) {
    gb__json *j = &req->json;
    gb__json_obj(j);
    GB__JSON_KV(j, "run", str, gb__param_text(req, "run"));
    GB__JSON_KV(j, "tag", str, gb__param_text(req, "tag"));
    gb__json_key(j, "steps");
    gb__json_arr(j);
    for (size_t i = 0; i < r->count;) {
        const int64_t step = step_of(r, i);
        double wall;
        memcpy(&wall, (const char *)r->rows + i * r->stride + r->wall_at, sizeof wall);
        gb__json_obj(j);
        GB__JSON_KV(j, "step", int, step);
        GB__JSON_KV(j, "wall", time, wall);
        gb__json_key(j, r->key);
        gb__json_arr(j);
        for (; i < r->count && step_of(r, i) == step; i++) {
            gb__json_obj(j);
            r->item(j, (const char *)r->rows + i * r->stride);
            gb__json_obj_end(j);
        }
        gb__json_arr_end(j);
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    return 200;
}

int gb__reply_runs_where(gb__request *req, bool (*has)(gb_store *store, const char *run)) {
    gb_runs *runs = NULL;
    gb_store_status st = gb_store_runs(req->store, &runs);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "runs");
    gb__json_arr(j);
    for (size_t i = 0; i < runs->count; i++)
        if (has(req->store, runs->rows[i].name)) gb__json_str(j, runs->rows[i].name);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(runs);
    return 200;
}
