/* host.c — the allowed hosts and the strict Host header check (host.h). */
#include "host.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const loopback_names[] = {"localhost", "127.0.0.1", "[::1]"};

static bool name_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_';
}

/* An IPv6 address, s[0..n) without brackets, as "[canonical]" in out. */
static bool normalize_ipv6(const char *s, size_t n, char out[GB__MAX_HOST_NAME + 1]) {
    char text[INET6_ADDRSTRLEN];
    struct in6_addr a;
    if (n >= sizeof text) return false;
    memcpy(text, s, n);
    text[n] = '\0';
    if (inet_pton(AF_INET6, text, &a) != 1) return false;
    out[0] = '[';
    inet_ntop(AF_INET6, &a, out + 1, INET6_ADDRSTRLEN);
    strcat(out, "]");
    return true;
}

/* The host s[0..n) in the form the list holds: a name or IPv4 address in
 * lower case; an IPv6 address in brackets, canonical. `bare_ipv6` also
 * takes an IPv6 address without brackets (as --host and --allow-host
 * do; a Host header always brackets it). False if s is neither. */
static bool normalize_host(const char *s, size_t n, bool bare_ipv6,
                           char out[GB__MAX_HOST_NAME + 1]) {
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') return normalize_ipv6(s + 1, n - 2, out);
    if (bare_ipv6 && memchr(s, ':', n)) return normalize_ipv6(s, n, out);
    if (n == 0 || n > 253) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!name_char(c)) return false;
        out[i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    }
    out[n] = '\0';
    return true;
}

/* 1 to 5 digits, at most 65535, and nothing after. */
static bool valid_port(const char *p) {
    size_t n = strlen(p);
    return n >= 1 && n <= 5 && strspn(p, "0123456789") == n && atol(p) <= 65535;
}

/* A Host value, host[:port], into its normalized host; false if it is
 * anything else. */
static bool parse_host_header(const char *v, char out[GB__MAX_HOST_NAME + 1]) {
    const char *end;   /* just past the host */
    if (v[0] == '[') {
        const char *close = strchr(v, ']');
        if (!close) return false;
        end = close + 1;
    } else {
        end = v + strcspn(v, ":");
    }
    if (*end && (*end != ':' || !valid_port(end + 1))) return false;
    return normalize_host(v, (size_t)(end - v), false, out);
}

static bool listed(const gb__hosts *h, const char *name) {
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->name[i], name)) return true;
    return false;
}

/* Adds s[0..n) to the list (once); false if it is not a host. */
static bool add(gb__hosts *h, const char *s, size_t n) {
    char name[GB__MAX_HOST_NAME + 1];
    if (!normalize_host(s, n, true, name)) return false;
    if (!listed(h, name) && h->n < sizeof h->name / sizeof h->name[0])
        memcpy(h->name[h->n++], name, sizeof name);
    return true;
}

static bool init_failed(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool init_failed(char *err, size_t err_size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return false;
}

bool gb__host_is_loopback(const char *host) {
    struct in_addr a4;
    if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    return !strcmp(host, "localhost") || !strcmp(host, "::1") || !strcmp(host, "[::1]");
}

void gb__hosts_add_bound(gb__hosts *h, const char *numeric) { add(h, numeric, strlen(numeric)); }

bool gb__hosts_init(gb__hosts *h, const char *bound, const char *extra, char *err,
                    size_t err_size) {
    h->n = 0;
    for (size_t i = 0; i < sizeof loopback_names / sizeof loopback_names[0]; i++)
        add(h, loopback_names[i], strlen(loopback_names[i]));
    /* A name the resolver takes may still not be one a browser sends: then
     * only its numeric form (gb__hosts_add_bound) is listed. */
    add(h, bound, strlen(bound));
    if (!extra || !*extra) return true;
    const char *p = extra;
    for (int count = 1;; count++, p++) {
        size_t n = strcspn(p, ",");
        const char *s = p + strspn(p, " \t");
        size_t len = n > (size_t)(s - p) ? n - (size_t)(s - p) : 0;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
        if (!len) return init_failed(err, err_size, "allowed hosts: an empty name in '%s'", extra);
        if (count > GB__MAX_ALLOWED_HOSTS)
            return init_failed(err, err_size, "allowed hosts: more than %d names",
                               GB__MAX_ALLOWED_HOSTS);
        if (!add(h, s, len))
            return init_failed(err, err_size,
                               "allowed host '%.*s' is not a host name or address (a name has "
                               "letters, digits, '-', '.' and '_'; no port)",
                               (int)len, s);
        p += n;
        if (!*p) return true;
    }
}

typedef struct host_fields {
    size_t count;
    const char *value;   /* the first */
} host_fields;

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value) {
    (void)kind;
    host_fields *f = cls;
    if (!strcasecmp(key, MHD_HTTP_HEADER_HOST) && !f->count++) f->value = value;
    return MHD_YES;
}

void gb__host_fields(struct MHD_Connection *connection, size_t *count, const char **first) {
    host_fields f = {0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, count_host, &f);
    *count = f.count;
    *first = f.value;
}

int gb__check_host(const gb__hosts *h, size_t count, const char *value, const char *version,
                   char *msg, size_t msg_size) {
    char host[GB__MAX_HOST_NAME + 1];
    if (!count) {
        if (!strcmp(version, MHD_HTTP_VERSION_1_0)) return 0;
        snprintf(msg, msg_size, "missing Host header (HTTP/1.1 requires one)");
        return 400;
    }
    if (count > 1) {
        snprintf(msg, msg_size, "more than one Host header");
        return 400;
    }
    if (!parse_host_header(value ? value : "", host)) {
        snprintf(msg, msg_size, "malformed Host header (expected host or host:port)");
        return 400;
    }
    if (listed(h, host)) return 0;
    snprintf(msg, msg_size, "host not allowed: '%s' (see --allow-host)", host);
    return 403;
}
