/* respond.h — how the server's responses are made: the headers every one
 * carries, the JSON error body every refusal has, and the same refusal as
 * raw bytes for a request refused before libmicrohttpd has parsed it. */
#ifndef GB_RESPOND_H
#define GB_RESPOND_H

#include <microhttpd.h>
#include <stddef.h>

#define GB__JSON_TYPE "application/json; charset=utf-8"

/* {"error": msg, "status": status}, malloc'ed (*len bytes); NULL when
 * out of memory. Every refusal's body. */
char *gb__error_body(unsigned status, const char *msg, size_t *len);

/* Content-Type and the headers every response carries. */
void gb__common_headers(struct MHD_Response *r, const char *content_type);

/* Queues a response of len bytes at data (mode as for
 * MHD_create_response_from_buffer; MUST_FREE data is freed even on
 * failure) with the common headers and Cache-Control: cache. */
enum MHD_Result gb__send_buffer(struct MHD_Connection *c, unsigned status, void *data, size_t len,
                                enum MHD_ResponseMemoryMode mode, const char *content_type,
                                const char *cache);

/* Queues {"error": msg, "status": status}. */
enum MHD_Result gb__send_error(struct MHD_Connection *c, unsigned status, const char *msg);

/* The whole HTTP/1.1 response gb__send_error would send, ending the
 * connection (Connection: close), as bytes to write to the socket
 * (malloc'ed, *len bytes; NULL when out of memory). */
char *gb__raw_error(unsigned status, const char *msg, size_t *len);

#endif
