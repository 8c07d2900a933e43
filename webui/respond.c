/* respond.c — the server's responses (respond.h). One list of common
 * headers serves both the responses queued through libmicrohttpd and the
 * raw refusals, so the two never drift apart. */
#include "respond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board_internal.h"

/* Sent with every response: no content sniffing, no Referer leaking the
 * dashboard's URLs (run names) to other sites. */
static const char *const common[][2] = {
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
};

void gb__common_headers(struct MHD_Response *r, const char *content_type) {
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        MHD_add_response_header(r, common[i][0], common[i][1]);
}

enum MHD_Result gb__send_buffer(struct MHD_Connection *c, unsigned status, void *data, size_t len,
                                enum MHD_ResponseMemoryMode mode, const char *content_type,
                                const char *cache) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE) free(data);
        return MHD_NO;
    }
    gb__common_headers(r, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

char *gb__error_body(unsigned status, const char *msg, size_t *len) {
    gb__json j;
    gb__json_init(&j, 4096);
    gb__json_obj(&j);
    GB__JSON_KV(&j, "error", str, msg);
    GB__JSON_KV(&j, "status", int, status);
    gb__json_obj_end(&j);
    return gb__json_finish(&j, len);
}

enum MHD_Result gb__send_error(struct MHD_Connection *c, unsigned status, const char *msg) {
    size_t len;
    char *body = gb__error_body(status, msg, &len);
    if (!body) return MHD_NO;
    return gb__send_buffer(c, status, body, len, MHD_RESPMEM_MUST_FREE, GB__JSON_TYPE, "no-store");
}

char *gb__raw_error(unsigned status, const char *msg, size_t *len) {
    size_t body_len;
    char *body = gb__error_body(status, msg, &body_len);
    if (!body) return NULL;
    char date[64];
    struct tm tm;
    time_t now = time(NULL);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
    char head[512];
    size_t n = (size_t)snprintf(head, sizeof head,
                                "HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
                                "Content-Type: " GB__JSON_TYPE "\r\n",
                                status, MHD_get_reason_phrase_for(status), date);
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        n += (size_t)snprintf(head + n, sizeof head - n, "%s: %s\r\n", common[i][0], common[i][1]);
    n += (size_t)snprintf(head + n, sizeof head - n,
                          "Cache-Control: no-store\r\nContent-Length: %zu\r\n\r\n", body_len);
    char *out = malloc(n + body_len);
    if (out) {
        memcpy(out, head, n);
        memcpy(out + n, body, body_len);
        *len = n + body_len;
    }
    free(body);
    return out;
}
