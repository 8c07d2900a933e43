/* webui_http.h — a minimal blocking HTTP/1.1 client for the dashboard's
 * tests (unit, SSE and load tests): loopback only, Content-Length bodies,
 * keep-alive, bounded by a receive timeout. Header-only, static functions.
 */
#ifndef WEBUI_HTTP_H
#define WEBUI_HTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct http_response {
    int status;          /* 0 on a transport failure */
    char headers[4096];
    char *body;          /* malloc'ed, NUL-terminated */
    size_t body_len;
    bool closed;         /* the server will close (Connection: close) */
} http_response;

/* Connects to 127.0.0.1:port with a receive timeout; -1 on failure. */
static inline int http_connect(int port, int timeout_ms) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline bool http_send_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0) return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* Value of header `name` in r->headers into out ("" if absent). */
static inline void http_header(const http_response *r, const char *name, char *out, size_t size) {
    out[0] = '\0';
    size_t n = strlen(name);
    for (const char *p = strstr(r->headers, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        if (!strncasecmp(p + 2, name, n) && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ') v++;
            size_t len = strcspn(v, "\r\n");
            if (len >= size) len = size - 1;
            memcpy(out, v, len);
            out[len] = '\0';
            return;
        }
    }
}

/* Reads one response from fd (a HEAD response, or 1xx/204/304, has no
 * body). Bytes past it are not kept: one response per read, so pipelined
 * responses need a reader of their own. Returns false on transport
 * failure. */
static inline bool http_read_response(int fd, bool head, http_response *r) {
    memset(r, 0, sizeof *r);
    char buf[8192];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof buf - 1) return false;
        ssize_t n = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (n <= 0) return false;
        have += (size_t)n;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t hlen = (size_t)(end - buf) + 4;
    if (hlen >= sizeof r->headers) return false;
    memcpy(r->headers, buf, hlen);
    r->headers[hlen] = '\0';
    if (sscanf(buf, "HTTP/1.%*d %d", &r->status) != 1) return false;
    char v[64];
    http_header(r, "Connection", v, sizeof v);
    r->closed = !strcasecmp(v, "close");
    http_header(r, "Content-Length", v, sizeof v);
    size_t want = head || r->status == 304 || r->status == 204 ? 0 : (size_t)strtoull(v, NULL, 10);
    r->body = malloc(want + 1);
    if (!r->body) return false;
    size_t got = have - hlen < want ? have - hlen : want;
    memcpy(r->body, buf + hlen, got);
    while (got < want) {
        ssize_t n = recv(fd, r->body + got, want - got, 0);
        if (n <= 0) return false;
        got += (size_t)n;
    }
    r->body[want] = '\0';
    r->body_len = want;
    return true;
}

/* Sends a raw request on fd and reads one response. */
static inline bool http_exchange(int fd, const char *request, bool head, http_response *r) {
    memset(r, 0, sizeof *r);
    return http_send_all(fd, request, strlen(request)) && http_read_response(fd, head, r);
}

/* One request on a fresh connection: method, path, extra header lines
 * (each ending in \r\n, or NULL). */
static inline http_response http_request(int port, const char *method, const char *path,
                                  const char *extra_headers) {
    http_response r = {0};
    int fd = http_connect(port, 5000);
    if (fd < 0) return r;
    char req[4096];
    snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n",
             method, path, extra_headers ? extra_headers : "");
    if (!http_exchange(fd, req, !strcmp(method, "HEAD"), &r)) r.status = 0;
    close(fd);
    return r;
}

static inline http_response http_get(int port, const char *path) {
    return http_request(port, "GET", path, NULL);
}

static inline void http_free(http_response *r) {
    free(r->body);
    r->body = NULL;
}

#endif
