/* host.h — which Host headers the dashboard answers (no DNS rebinding).
 *
 * A page on evil.example can make a visitor's browser send requests to the
 * dashboard by pointing evil.example's DNS at the dashboard's address (DNS
 * rebinding); the browser still says "Host: evil.example". So a request is
 * answered only if its Host names the server: a loopback name, the address
 * it was asked to bind (as given, and as bound), or a name it was told to
 * allow (gb_board_options.allow_hosts, `glassbox serve --allow-host`). This
 * holds whatever address is bound, 0.0.0.0 included.
 *
 * Host is parsed strictly as a browser sends it: host[:port], the host a
 * name (letters, digits, '-', '.', '_'), an IPv4 address, or an IPv6
 * address in brackets; the port 1 to 5 digits, at most 65535; nothing else
 * (no user@, no path, no spaces). Names compare without regard to case,
 * IPv6 addresses in their canonical form. HTTP/1.1 requires exactly one
 * Host header; an HTTP/1.0 request may have none.
 */
#ifndef GB_HOST_H
#define GB_HOST_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#define GB__MAX_ALLOWED_HOSTS 32   /* names given to allow */
#define GB__MAX_HOST_NAME 255      /* bytes, brackets of an IPv6 address included */

typedef struct gb__hosts {
    size_t n;
    /* normalized: the 3 loopback names, the bound address (as asked for
     * and as bound), then the allowed names */
    char name[3 + 2 + GB__MAX_ALLOWED_HOSTS][GB__MAX_HOST_NAME + 1];
} gb__hosts;

/* Fills the list: the loopback names, `bound` (the address asked for, as
 * given) and the comma-separated names of `extra` (NULL or "" for none;
 * spaces around names are ignored). False, with the reason in err, when
 * `extra` holds something that is not a host name or address, or more
 * than GB__MAX_ALLOWED_HOSTS names. */
bool gb__hosts_init(gb__hosts *h, const char *bound, const char *extra, char *err,
                    size_t err_size);
/* Whether an address to bind is loopback only: localhost, ::1 or
 * 127.0.0.0/8. */
bool gb__host_is_loopback(const char *host);

/* Adds the address actually bound, numeric (as getnameinfo gives it). */
void gb__hosts_add_bound(gb__hosts *h, const char *numeric);

/* The Host header fields of a request whose head is in: how many, and
 * the first one's value (NULL when none). */
void gb__host_fields(struct MHD_Connection *connection, size_t *count, const char **first);

/* Checks a request's Host header fields (count of them, the first one's
 * value) for its HTTP version. Returns 0 when they name an allowed host;
 * otherwise 400 (missing in HTTP/1.1, given more than once, malformed) or
 * 403 (another host), with the message in msg. */
int gb__check_host(const gb__hosts *h, size_t count, const char *value, const char *version,
                   char *msg, size_t msg_size);

#endif
