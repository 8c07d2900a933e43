/* request_head.h — the checks every request head goes through before any
 * route sees it: the limits of board_internal.h ("limits on what a client
 * sends") and NUL bytes in the path. The Host header has its own file
 * (host.h). */
#ifndef GB_REQUEST_HEAD_H
#define GB_REQUEST_HEAD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* Checks the raw request target (path and query, not yet decoded) as soon
 * as the request line is in: 414 if it is longer than GB__MAX_TARGET, 400
 * if it has more than GB__MAX_QUERY_PARAMS parameters, with the message in
 * msg; 0 if within both. *nul_in_path tells whether the path holds %00,
 * which decoding would turn into a NUL byte and silently end the path at. */
int gb__check_target(const char *target, bool *nul_in_path, char *msg, size_t msg_size);

/* Checks the header fields of a request whose head is in: 431 if there
 * are more than GB__MAX_HEADER_FIELDS or the head is longer than
 * GB__MAX_HEAD bytes (message in msg), else 0. */
int gb__check_header_fields(struct MHD_Connection *connection, char *msg, size_t msg_size);

#endif
