/* plugin_runs.c — GET /api/runs: every run of the store with its start
 * and last write times, where it ran, its status, and its hyperparameters (numbers as
 * JSON numbers, everything else as strings). The run selector of every
 * page is built from it. */
#include "board_internal.h"

static void write_run(gb__json *j, const gb_run_row *r) {
    gb__json_obj(j);
    GB__JSON_KV(j, "name", str, r->name);
    GB__JSON_KV(j, "id", int, r->id);
    GB__JSON_KV(j, "start_time", time, r->start_time);
    GB__JSON_KV(j, "last_write_time", time, r->last_write_time);
    GB__JSON_KV(j, "host", str, r->host);
    GB__JSON_KV(j, "pid", int, r->pid);
    GB__JSON_KV(j, "command_line", str, r->command_line);
    GB__JSON_KV(j, "status", str, r->status);
    gb__json_key(j, "hparams");
    gb__json_obj(j);
    for (size_t k = 0; k < r->hparam_count; k++) {
        gb__json_key(j, r->hparams[k].key);
        if (r->hparams[k].is_number) gb__json_num(j, r->hparams[k].number);
        else gb__json_str(j, r->hparams[k].value);
    }
    gb__json_obj_end(j);
    gb__json_obj_end(j);
}

static int list_runs(gb__request *req) {
    gb_runs *runs = NULL;
    gb_store_status st = gb_store_runs(req->store, &runs);
    if (st != GB_STORE_OK) return gb__reply_store_error(req, st);
    gb__json *j = &req->json;
    gb__json_obj(j);
    gb__json_key(j, "runs");
    gb__json_arr(j);
    for (size_t i = 0; i < runs->count; i++) write_run(j, &runs->rows[i]);
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    gb_store_free(runs);
    return 200;
}

static const gb__route routes[] = {
    {"", list_runs, {GB__P_END}},
};

const gb__plugin gb__plugin_runs = {
    .name = "runs", .routes = routes, .n_routes = sizeof routes / sizeof routes[0],
};
