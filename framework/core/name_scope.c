/* core/name_scope.c — the thread's name-scope path ("model/dense_1").
 *
 * Names ops and variables for errors, logs and graphs. A fixed buffer and
 * a stack of lengths: pushing appends "/name", popping truncates. A traced
 * function's graph names its nodes from the root, as tf.function's graphs
 * do, whatever scope the call sits in: tracing starts a new base.
 */
#include <stdio.h>

#include "core/internal.h"

enum { MAX_DEPTH = 64, PATH_BYTES = 512 };

static _Thread_local char tl_path[PATH_BYTES];
static _Thread_local size_t tl_len[MAX_DEPTH];
static _Thread_local int tl_depth;
static _Thread_local size_t tl_base;   /* the path starts here (a trace's root) */
static _Thread_local int tl_base_depth;

void gb_name_scope_push(const char *name) {
    if (tl_depth >= MAX_DEPTH) {
        gb__error(GB_ERR_STATE, NULL, "name scopes nested deeper than %d", MAX_DEPTH);
        return;
    }
    size_t len = strlen(tl_path);
    tl_len[tl_depth++] = len;
    snprintf(tl_path + len, PATH_BYTES - len, "%s%s", len ? "/" : "", name ? name : "");
}

void gb_name_scope_pop(void) {
    if (tl_depth == tl_base_depth) {
        gb__error(GB_ERR_STATE, NULL, "gb_name_scope_pop() without a matching push");
        return;
    }
    tl_path[tl_len[--tl_depth]] = '\0';
}

const char *gb_name_scope_path(void) {
    const char *p = tl_path + tl_base;
    return *p == '/' ? p + 1 : p;
}

gb_name_root gb__name_scope_root_begin(void) {
    gb_name_root r = {tl_base, tl_base_depth};
    tl_base = strlen(tl_path);
    tl_base_depth = tl_depth;
    return r;
}

void gb__name_scope_root_end(gb_name_root r) {
    /* Scopes the traced code left open are closed with it. */
    tl_depth = tl_base_depth;
    tl_path[tl_base] = '\0';
    tl_base = r.base;
    tl_base_depth = r.depth;
}
