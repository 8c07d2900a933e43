/* auth.h — the dashboard's token, for a server that leaves loopback
 * (Jupyter's scheme).
 *
 * Bound beyond loopback, the board requires a secret token on every
 * request, static files and the live stream included: given once in the
 * address (`/?token=...`, as `glassbox serve` prints it), it is answered
 * with a redirect to the same address without it and a cookie holding it
 * (HttpOnly: no script reads it; SameSite=Strict: no other site's page
 * sends it), which the browser then sends with every request. Scripts
 * may send `Authorization: Bearer <token>` instead. Tokens are compared
 * in time that does not depend on where they first differ.
 */
#ifndef GB_WEBUI_AUTH_H
#define GB_WEBUI_AUTH_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#define GB__TOKEN_MAX 128            /* bytes of a token given */
#define GB__TOKEN_COOKIE "gb_token"

/* Whether the token is fit to be one: 8 to GB__TOKEN_MAX bytes of
 * letters, digits, '-', '_' or '.' (it travels in a URL and a cookie
 * unescaped). */
bool gb__token_valid(const char *token);

/* A fresh random token (48 hex digits from the kernel's generator) into
 * out (at least 49 bytes); false when no randomness could be had. */
bool gb__token_generate(char *out, size_t size);

/* given (NULL: none) equals want, in time independent of their contents. */
bool gb__token_equal(const char *given, const char *want);

/* The token a request carries in its cookie or Authorization header
 * (NULL when neither). */
const char *gb__request_token(struct MHD_Connection *connection);

#endif
