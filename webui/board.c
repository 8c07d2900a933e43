/* board.c — the dashboard server's life cycle and request dispatch
 * (gb_board.h): binds the listening socket itself (so "port in use" and
 * port 0 are reported exactly), runs libmicrohttpd with a thread pool,
 * and sends each request to the live stream, a plugin route, or an
 * embedded file. Only GET and HEAD exist; everything else is 405.
 */
#include "gb_board.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "board_internal.h"
#include "live.h"

struct gb_board {
    struct MHD_Daemon *mhd;
    gb__reader_pool *pool;
    gb__live *live;
    int port;
    bool loopback;   /* bound to loopback: only loopback Host headers pass */
    char url[320];
};

static _Thread_local char last_error[512];

const char *gb_board_last_error(void) { return last_error; }

static gb_board *start_failed(gb_board *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static gb_board *start_failed(gb_board *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    gb_board_stop(b);
    return NULL;
}

/* ---- responses --------------------------------------------------------------- */

/* Adds the headers every response carries. */
static void common_headers(struct MHD_Response *r, const char *content_type) {
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static enum MHD_Result send_buffer(struct MHD_Connection *c, unsigned status, void *data,
                                   size_t len, enum MHD_ResponseMemoryMode mode,
                                   const char *content_type, const char *cache) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE) free(data);
        return MHD_NO;
    }
    common_headers(r, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED) MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* {"error": message, "status": code} */
static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg) {
    gb__json j;
    gb__json_init(&j, 4096);
    gb__json_obj(&j);
    GB__JSON_KV(&j, "error", str, msg);
    GB__JSON_KV(&j, "status", int, status);
    gb__json_obj_end(&j);
    size_t len;
    char *body = gb__json_finish(&j, &len);
    if (!body) return MHD_NO;
    return send_buffer(c, status, body, len, MHD_RESPMEM_MUST_FREE,
                       "application/json; charset=utf-8", "no-store");
}

/* ---- API requests ------------------------------------------------------------- */

#define MAX_RAW_PARAMS (2 * GB__MAX_PARAMS + 1)

typedef struct raw_params {
    size_t n;
    bool bad;    /* a value held a NUL byte */
    const char *name[MAX_RAW_PARAMS], *value[MAX_RAW_PARAMS];
} raw_params;

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_size, const char *value, size_t value_size) {
    (void)kind;
    raw_params *p = cls;
    if (strlen(key) != key_size || (value && strlen(value) != value_size)) p->bad = true;
    if (p->n < MAX_RAW_PARAMS) {
        p->name[p->n] = key;
        p->value[p->n] = value;
    }
    p->n++;
    return MHD_YES;
}

static bool raw_param(void *ctx, size_t i, const char **name, const char **value) {
    raw_params *p = ctx;
    if (i >= p->n || i >= MAX_RAW_PARAMS) return false;
    *name = p->name[i];
    *value = p->value[i];
    return true;
}

static enum MHD_Result serve_api(gb_board *b, struct MHD_Connection *c, const char *url) {
    gb__request *req = calloc(1, sizeof *req);
    if (!req) return MHD_NO;
    req->route = gb__find_route(url);
    if (!req->route) {
        free(req);
        return send_error(c, MHD_HTTP_NOT_FOUND, "no such API route");
    }
    raw_params raw = {0};
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_param, &raw);
    int status = 400;
    if (raw.bad) gb__fail(req, 400, "a parameter contains a NUL byte");
    else if (gb__validate_params(req, raw_param, &raw)) {
        req->store = gb__pool_acquire(b->pool);
        gb__json_init(&req->json, GB__MAX_RESPONSE);
        status = req->store ? req->route->handle(req)
                            : gb__fail(req, 503, "cannot open the store");
        gb__pool_release(b->pool, req->store);
    }
    enum MHD_Result ok;
    if (status != 200) {
        ok = send_error(c, (unsigned)status, req->error[0] ? req->error : "error");
    } else if (req->body) {
        ok = send_buffer(c, 200, req->body, req->body_len, MHD_RESPMEM_MUST_FREE,
                         req->content_type, "no-store");
        req->body = NULL;
    } else {
        size_t len;
        char *body = gb__json_finish(&req->json, &len);
        ok = body ? send_buffer(c, 200, body, len, MHD_RESPMEM_MUST_FREE,
                                "application/json; charset=utf-8", "no-store")
                  : send_error(c, 500, "response too large; ask for fewer points");
    }
    gb__json_free(&req->json);
    free(req->body);
    free(req);
    return ok;
}

/* ---- static files --------------------------------------------------------------- */

static enum MHD_Result serve_static(struct MHD_Connection *c, const char *url) {
    const char *name = !strcmp(url, "/") ? "index.html"
                       : !strncmp(url, "/static/", 8) ? url + 8 : NULL;
    const gb__static_file *f = name ? gb__find_static(name) : NULL;
    if (!f) return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    struct MHD_Response *r =
        MHD_create_response_from_buffer(f->size, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    common_headers(r, f->content_type);
    /* The bundle changes with each build: revalidate cheaply, never stale. */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (strstr(f->content_type, "text/html"))
        MHD_add_response_header(r, "Content-Security-Policy",
                                "default-src 'self'; img-src 'self' blob: data:; "
                                "style-src 'self'; object-src 'none'; "
                                "frame-ancestors 'none'");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* ---- dispatch ------------------------------------------------------------------- */

/* When bound to loopback, only requests naming a loopback host pass: a web
 * page elsewhere cannot reach the dashboard through DNS rebinding. */
static bool host_allowed(const gb_board *b, struct MHD_Connection *c) {
    if (!b->loopback) return true;
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!host) return true; /* HTTP/1.0 clients send none */
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(host, names[i], n) && (host[n] == '\0' || host[n] == ':')) return true;
    }
    return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
    (void)version, (void)upload_data;
    gb_board *b = cls;
    /* A body (on a refused method) is drained before the reply. */
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    (void)req_cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
        return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are allowed");
    if (!host_allowed(b, c)) return send_error(c, MHD_HTTP_FORBIDDEN, "host not allowed");
    if (!strcmp(url, "/api/events")) return gb__live_respond(b->live, c);
    if (!strncmp(url, "/api/", 5) || !strcmp(url, "/api")) return serve_api(b, c, url);
    return serve_static(c, url);
}

/* ---- start and stop ----------------------------------------------------------------- */

static bool is_loopback(const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

/* Binds and listens on host:port; returns the socket or -1 (last_error set). */
static int listen_on(gb_board *b, const char *host, int port) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc) {
        snprintf(last_error, sizeof last_error, "cannot resolve host '%s': %s", host,
                 gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    int one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 128)) {
        int e = errno;
        snprintf(last_error, sizeof last_error, "cannot listen on %s:%d: %s%s", host, port,
                 strerror(e), e == EADDRINUSE ? " (port in use; try another --port, or 0)" : "");
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    b->loopback = is_loopback(res->ai_addr);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    b->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    bool v6 = res->ai_family == AF_INET6;
    snprintf(b->url, sizeof b->url, "http://%s%s%s:%d/", v6 ? "[" : "", host, v6 ? "]" : "",
             b->port);
    freeaddrinfo(res);
    return fd;
}

gb_board *gb_board_start(const char *db_path, const char *host, int port,
                         const gb_board_options *options) {
    last_error[0] = '\0';
    gb_board_options o = options ? *options : (gb_board_options){0};
    if (o.threads <= 0) o.threads = 4;
    if (o.poll_ms <= 0) o.poll_ms = 100;
    if (o.max_connections <= 0) o.max_connections = 256;
    if (!host) host = "127.0.0.1";
    if (!db_path || !*db_path) return start_failed(NULL, "no store given (db_path is empty)");
    if (port < 0 || port > 65535) return start_failed(NULL, "port %d is out of range 0..65535", port);
    if (o.threads > 64) return start_failed(NULL, "threads %d is more than 64", o.threads);
    struct stat st;
    if (stat(db_path, &st)) return start_failed(NULL, "cannot open store '%s': %s", db_path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return start_failed(NULL, "store '%s' is not a regular file", db_path);

    gb_board *b = calloc(1, sizeof *b);
    if (!b) return start_failed(NULL, "out of memory");
    char err[sizeof last_error];
    b->pool = gb__pool_new(db_path, o.threads, err, sizeof err);
    if (!b->pool) return start_failed(b, "%s", err);
    b->live = gb__live_start(db_path, o.poll_ms, err, sizeof err);
    if (!b->live) return start_failed(b, "%s", err);
    int fd = listen_on(b, host, port);
    if (fd < 0) {
        snprintf(err, sizeof err, "%s", last_error);
        return start_failed(b, "%s", err);
    }
    b->mhd = MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, on_request, b,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o.threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_END);
    if (!b->mhd) {
        close(fd);
        return start_failed(b, "cannot start the HTTP server on %s:%d", host, b->port);
    }
    return b;
}

int gb_board_port(const gb_board *board) { return board ? board->port : 0; }

const char *gb_board_url(const gb_board *board) { return board ? board->url : ""; }

void gb_board_stop(gb_board *b) {
    if (!b) return;
    if (b->live) gb__live_shutdown(b->live);
    if (b->mhd) {
        /* MHD closes the socket it was given when it stops. */
        MHD_stop_daemon(b->mhd);
    }
    gb__live_free(b->live);
    gb__pool_free(b->pool);
    free(b);
}
