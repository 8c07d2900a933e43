/* auth.c — the dashboard's token (auth.h): checking, making and finding
 * it. answer.c decides what a request without it gets (401) and what one
 * with it in the address gets (the redirect that sets the cookie). */
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

bool gb__token_valid(const char *token) {
    size_t n = token ? strlen(token) : 0;
    if (n < 8 || n > GB__TOKEN_MAX) return false;
    return strspn(token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

bool gb__token_generate(char *out, size_t size) {
    unsigned char bytes[24];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += (size_t)n;
    }
    if (size < 2 * sizeof bytes + 1) return false;
    for (size_t i = 0; i < sizeof bytes; i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return true;
}

bool gb__token_equal(const char *given, const char *want) {
    if (!given) return false;
    size_t gl = strnlen(given, GB__TOKEN_MAX + 1), wl = strlen(want);
    unsigned char diff = gl != wl;
    /* Every byte of want is compared, whatever matched before. */
    for (size_t i = 0; i < wl; i++) diff |= (unsigned char)(want[i] ^ (i < gl ? given[i] : 0));
    return diff == 0;
}

const char *gb__request_token(struct MHD_Connection *c) {
    const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, GB__TOKEN_COOKIE);
    if (cookie) return cookie;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth && strncasecmp(auth, "Bearer ", 7) == 0) return auth + 7;
    return NULL;
}
