/* routes.c — maps request paths to plugin routes and embedded files.
 *
 * API paths are /api/<plugin> or /api/<plugin>/<route>; everything else is
 * looked up by exact name in the table of files embedded at build time,
 * so no request path is ever joined to a directory or opened.
 */
#include <string.h>

#include "board_internal.h"

const gb__route *gb__find_route(const char *path) {
    static const char prefix[] = "/api/";
    if (strncmp(path, prefix, sizeof prefix - 1)) return NULL;
    const char *rest = path + sizeof prefix - 1;
    for (size_t p = 0; p < gb__plugin_count; p++) {
        const gb__plugin *plugin = gb__plugins[p];
        size_t n = strlen(plugin->name);
        if (strncmp(rest, plugin->name, n) || (rest[n] != '\0' && rest[n] != '/')) continue;
        const char *sub = rest[n] == '/' ? rest + n + 1 : "";
        if (rest[n] == '/' && !*sub) return NULL; /* "/api/runs/" is not "/api/runs" */
        for (size_t r = 0; r < plugin->n_routes; r++)
            if (!strcmp(plugin->routes[r].path, sub)) return &plugin->routes[r];
    }
    return NULL;
}

const gb__static_file *gb__find_static(const char *path) {
    for (size_t i = 0; i < gb__static_file_count; i++)
        if (!strcmp(gb__static_files[i].path, path)) return &gb__static_files[i];
    return NULL;
}
