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

/* Raw NUL bytes. libmicrohttpd 0.9.75 reads the request line and each
 * header line as C strings, so a NUL byte sent in one silently ends it
 * there: "/api/runs<NUL>x" is served as /api/runs, "Host: a<NUL>.evil" as
 * Host a. Those bytes are still in its read buffer, where it parsed the
 * head in place: the request line's pieces and each field's name and
 * value lie in the order they arrived, separated only by the bytes it
 * overwrote with NULs (spaces, the colon, line ends). A NUL hid something
 * where that gap holds anything else. */

/* The raw target as MHD_OPTION_URI_LOG_CALLBACK gives it, still in
 * libmicrohttpd's buffer (the bytes after its terminator are the rest of
 * the request line): whether a NUL byte cut it short. */
bool gb__target_hides_nul(const char *target);

/* Once the head is in (method is the request line's first piece, at the
 * head's start): 400 with the field's name in msg if a NUL byte cut a
 * header field, else 0. When libmicrohttpd lays the head out otherwise
 * than described above, nothing can be told and 0 is returned. */
int gb__check_head_nul(struct MHD_Connection *connection, const char *method, char *msg,
                       size_t msg_size);

/* Checks the header fields of a request whose head is in: 431 if there
 * are more than GB__MAX_HEADER_FIELDS or the head is longer than
 * GB__MAX_HEAD bytes (message in msg), else 0. */
int gb__check_header_fields(struct MHD_Connection *connection, char *msg, size_t msg_size);

#endif
