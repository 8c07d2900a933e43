/* request_head.c — the limits on a request's head, and NUL bytes in it,
 * encoded (%00 in the path) or raw (request_head.h).
 *
 * The target is checked on the raw request line, from libmicrohttpd's
 * MHD_OPTION_URI_LOG_CALLBACK, which runs before libmicrohttpd splits the
 * query into parameters: libmicrohttpd 0.9.75 keeps one record per
 * parameter in the connection's memory, and when a query has more than
 * that memory holds (some 900 parameters in 64 KiB) it queues its own 431
 * and then loses it: the request-line parser ignores the failure, its
 * caller moves the connection on to reading headers with its input
 * discarded, and the client waits for the connection timeout to get
 * nothing. Refusing such a request before that point is the only way to
 * answer it; board.c writes that answer itself (gb__conn_refuse).
 */
#include "request_head.h"

#include <stdio.h>
#include <string.h>

#include "board_internal.h"

/* Parameters as libmicrohttpd splits them: one per '&'-separated piece,
 * empty pieces included, except an empty last one. */
static size_t count_params(const char *query) {
    if (!*query) return 0;
    size_t n = 0;
    for (const char *p = query; *p; p++) n += *p == '&';
    return n + (query[strlen(query) - 1] != '&');
}

int gb__check_target(const char *target, bool *nul_in_path, char *msg, size_t msg_size) {
    size_t len = strlen(target), path_len = strcspn(target, "?");
    const char *nul = strstr(target, "%00");
    *nul_in_path = nul && nul < target + path_len;
    if (len > GB__MAX_TARGET) {
        snprintf(msg, msg_size, "request target longer than %d bytes", GB__MAX_TARGET);
        return 414;
    }
    if (target[path_len] && count_params(target + path_len + 1) > GB__MAX_QUERY_PARAMS) {
        snprintf(msg, msg_size, "more than %d query parameters", GB__MAX_QUERY_PARAMS);
        return 400;
    }
    return 0;
}

static enum MHD_Result count_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
    (void)kind, (void)key, (void)value;
    (*(size_t *)cls)++;
    return MHD_YES;
}

int gb__check_header_fields(struct MHD_Connection *connection, char *msg, size_t msg_size) {
    size_t fields = 0;
    MHD_get_connection_values(connection, MHD_HEADER_KIND, count_field, &fields);
    const union MHD_ConnectionInfo *size =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (fields > GB__MAX_HEADER_FIELDS) {
        snprintf(msg, msg_size, "more than %d header fields", GB__MAX_HEADER_FIELDS);
        return 431;
    }
    if (size && size->header_size > GB__MAX_HEAD) {
        snprintf(msg, msg_size, "request head larger than %d bytes", GB__MAX_HEAD);
        return 431;
    }
    return 0;
}

/* ---- raw NUL bytes (request_head.h) ------------------------------------------------- */

bool gb__target_hides_nul(const char *target) {
    /* libmicrohttpd ends the target at the request line's last space; the
     * version follows (spaces may repeat). Anything else after the
     * terminator was cut off by a NUL the client sent. */
    const char *p = target + strlen(target) + 1;
    while (*p == ' ' || *p == '\t') p++;
    return *p && *p != '\r' && *p != '\n' && strncmp(p, "HTTP/", 5) != 0;
}

enum { MAX_FIELDS_SEEN = GB__MAX_HEADER_FIELDS + 1 };

typedef struct fields_seen {
    const char *name[MAX_FIELDS_SEEN], *value[MAX_FIELDS_SEEN];
    size_t n;
} fields_seen;

static enum MHD_Result note_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value) {
    (void)kind;
    fields_seen *f = cls;
    if (f->n == MAX_FIELDS_SEEN) return MHD_NO;
    f->name[f->n] = key;
    f->value[f->n] = value ? value : key + strlen(key);
    f->n++;
    return MHD_YES;
}

/* Whether [from, to) holds only bytes of the set: what libmicrohttpd
 * overwrote or skipped between two pieces of the head. */
static bool only(const char *from, const char *to, const char *set) {
    for (const char *p = from; p < to; p++)
        if (*p && !strchr(set, *p)) return false;
    return true;
}

int gb__check_head_nul(struct MHD_Connection *connection, const char *method, char *msg,
                       size_t msg_size) {
    const union MHD_ConnectionInfo *size =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    fields_seen f = {.n = 0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, note_field, &f);
    if (!size || !f.n || f.n == MAX_FIELDS_SEEN) return 0;
    const char *end = method + size->header_size;
    const char *at = method;
    for (size_t i = 0; i < f.n; i++) /* laid out as described, or no verdict */
        if (f.name[i] <= at || f.value[i] < f.name[i] || f.value[i] >= end) return 0;
        else at = f.value[i];
    for (size_t i = 0; i < f.n; i++) {
        const char *name_end = f.name[i] + strlen(f.name[i]);
        const char *value_end = f.value[i] + strlen(f.value[i]);
        const char *next = i + 1 < f.n ? f.name[i + 1] : end;
        if (!only(name_end, f.value[i], ": \t") || !only(value_end, next, " \t\r\n")) {
            snprintf(msg, msg_size, "NUL byte in header field '%.64s'", f.name[i]);
            return 400;
        }
    }
    return 0;
}
