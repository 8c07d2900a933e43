/* plugin_plugins.c — GET /api/plugins: the dashboards this server has, in
 * tab order, each with whether the store holds anything for it (the page
 * shows a tab per active dashboard, as TensorBoard does). */
#include "board_internal.h"

static int list_plugins(gb__request *req) {
    gb__json *j = &req->json;
    /* Tab order: sort indices by `order` (a handful of plugins). */
    size_t idx[64], n = 0;
    for (size_t i = 0; i < gb__plugin_count && n < 64; i++)
        if (gb__plugins[i]->title) idx[n++] = i;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && gb__plugins[idx[b]]->order < gb__plugins[idx[b - 1]]->order; b--) {
            size_t t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    gb__json_obj(j);
    gb__json_key(j, "plugins");
    gb__json_arr(j);
    for (size_t k = 0; k < n; k++) {
        const gb__plugin *p = gb__plugins[idx[k]];
        gb__json_obj(j);
        GB__JSON_KV(j, "name", str, p->name);
        GB__JSON_KV(j, "title", str, p->title);
        GB__JSON_KV(j, "active", bool, !p->is_active || p->is_active(req->store));
        gb__json_obj_end(j);
    }
    gb__json_arr_end(j);
    gb__json_obj_end(j);
    return 200;
}

static const gb__route routes[] = {
    {"", list_plugins, {GB__P_END}},
};

const gb__plugin gb__plugin_plugins = {
    .name = "plugins", .routes = routes, .n_routes = sizeof routes / sizeof routes[0],
};
