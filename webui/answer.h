/* answer.h — what the board answers to a request, decided without
 * libmicrohttpd: the checks of the request's head (method, Host, a NUL in
 * the path), then the live stream, an API route (its parameters checked,
 * its handler run on a pooled reader) or an embedded file.
 *
 * board.c reads each request out of libmicrohttpd into a gb__head — the
 * method, version and decoded path, the Host header fields, the query
 * parameters as libmicrohttpd split and decoded them — and sends the
 * gb__answer. The decision in between depends on the head and the store
 * alone, so it is tested and fuzzed without a socket
 * (tests/fuzz/fuzz_webui_router.c). What only libmicrohttpd can tell is
 * checked in board.c first: the raw request target as the request line
 * arrives (request_head.c), the number and size of the header fields.
 */
#ifndef GB_ANSWER_H
#define GB_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "board_internal.h"
#include "host.h"

/* Query parameters a head keeps: one more than a request may have, so
 * the validator sees any excess. */
#define GB__HEAD_PARAMS (GB__MAX_QUERY_PARAMS + 1)

typedef struct gb__head {
    const char *method;          /* "GET", "HEAD", ... as sent */
    const char *version;         /* "HTTP/1.1", "HTTP/1.0" */
    const char *path;            /* decoded, without the query */
    bool nul_in_path;            /* the raw path held %00 (gb__check_target) */
    size_t host_count;           /* Host header fields */
    const char *host;            /* the first one's value; NULL when none */
    size_t param_count;          /* query parameters, however many */
    bool param_nul;              /* a parameter's name or value held a NUL byte */
    const char *param_name[GB__HEAD_PARAMS];
    const char *param_value[GB__HEAD_PARAMS];   /* NULL: given without '=' */
    const char *token;           /* from its cookie or Authorization (auth.h); NULL: none */
} gb__head;

/* Adds a query parameter to head as libmicrohttpd reports it: decoded,
 * with its sizes, which tell a NUL byte inside it (value NULL: no '='). */
void gb__head_add_param(gb__head *head, const char *name, size_t name_size, const char *value,
                        size_t value_size);

typedef enum gb__answer_kind {
    GB__ANSWER_BODY,     /* status, body, content_type */
    GB__ANSWER_FILE,     /* 200 and an embedded file */
    GB__ANSWER_EVENTS,   /* 200 and the live stream (/api/events) */
    GB__ANSWER_LOGIN,    /* 302 to `body` (the address without its token), setting the
                            token's cookie */
} gb__answer_kind;

typedef struct gb__answer {
    gb__answer_kind kind;
    unsigned status;
    char *body;                    /* BODY: malloc'ed, len bytes; LOGIN: the location */
    size_t len;
    const char *content_type;      /* BODY and FILE */
    const gb__static_file *file;   /* FILE */
} gb__answer;

/* Decides the answer to head, reading the store through pool: a BODY is
 * the route's JSON (or PNG), or an error {"error": message, "status": n}
 * with the status of http_api.md. token: the board's (NULL or "": none),
 * which every request must then carry (auth.h). False when memory ran out
 * before any answer could be made: there is nothing to send. */
bool gb__answer_request(const gb__hosts *hosts, const char *token, gb__reader_pool *pool,
                        const gb__head *head, gb__answer *out);
/* Frees the body of an answer that was not sent. */
void gb__answer_free(gb__answer *a);

#endif
