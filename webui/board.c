/* board.c — the dashboard server's life cycle and request dispatch
 * (gb_board.h): binds the listening socket itself (so "port in use" and
 * port 0 are reported exactly), runs libmicrohttpd with a pool of epoll
 * threads, reads each request out of libmicrohttpd and sends what
 * answer.c decides for it: the live stream, a plugin route's answer, an
 * embedded file, or an error. Only GET and HEAD exist; everything else is
 * 405.
 *
 * libmicrohttpd calls back at three points of a request, and each check
 * runs at the first point where what it reads is there:
 *   the request line (MHD_OPTION_URI_LOG_CALLBACK)  target length, the
 *       number of parameters (before libmicrohttpd splits them, see
 *       request_head.c), %00 in the path, a raw NUL in the target;
 *   the head is in (the access handler's first call)  the header deadline
 *       stops (connections.c); a request with a body is answered now;
 *   the request is in (its last call)  header fields (their number,
 *       size, raw NUL bytes), then answer.c:
 *       method, Host, %00 in the path, the route. Answering here, not
 *       earlier, is what keeps the connection open: libmicrohttpd closes
 *       a connection after a response queued on the first call (an
 *       "early" response, after which it will not read the rest of the
 *       request), so answering there made every response "Connection:
 *       close" and left pipelined requests unanswered.
 * Errors found at the request line are answered there, on the socket
 * (gb__conn_refuse; over HTTPS the connection is only closed); every
 * other answer goes through libmicrohttpd. A
 * board bound beyond loopback asks every request for its token (auth.h),
 * right after the Host check.
 */
#include "gb_board.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answer.h"
#include "auth.h"
#include "board_internal.h"
#include "connections.h"
#include "host.h"
#include "live.h"
#include "request_head.h"
#include "respond.h"
#include "tls.h"

struct gb_board {
    struct MHD_Daemon *mhd;
    gb__reader_pool *pool;
    gb__live *live;
    gb__conns *conns;
    gb__hosts hosts;   /* what Host headers may name */
    char token[GB__TOKEN_MAX + 1];   /* every request's, when set (auth.h) */
    gb__tls tls;       /* HTTPS when set */
    atomic_bool stopping; /* new connections are closed at once (accept_policy) */
    int port;
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

/* ---- answers ------------------------------------------------------------------- */

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t key_size, const char *value, size_t value_size) {
    (void)kind;
    gb__head_add_param(cls, key, key_size, value, value_size);
    return MHD_YES;
}

/* What answer.c decides on: the request as libmicrohttpd parsed it. */
static void read_head(struct MHD_Connection *c, const char *url, const char *method,
                      const char *version, gb__head *head) {
    *head = (gb__head){.method = method, .version = version, .path = url,
                       .nul_in_path = gb__conn_bad_path(gb__conn_of(c))};
    gb__host_fields(c, &head->host_count, &head->host);
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_param, head);
    head->token = gb__request_token(c);
}

static enum MHD_Result send_file(struct MHD_Connection *c, const gb__static_file *f) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(f->size, (void *)f->data, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    gb__common_headers(r, f->content_type);
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

/* The redirect that logs a browser in: to the address without its token,
 * with the token as a cookie no script reads and no other site sends. */
static enum MHD_Result send_login(gb_board *b, struct MHD_Connection *c, gb__answer *a) {
    char cookie[GB__TOKEN_MAX + 64];
    /* Over HTTPS the cookie is Secure: a browser never sends it in clear. */
    snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s", GB__TOKEN_COOKIE,
             b->token, b->tls.cert ? "; Secure" : "");
    struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok = MHD_NO;
    if (r) {
        gb__common_headers(r, "text/plain; charset=utf-8");
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, a->body);
        MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        ok = MHD_queue_response(c, MHD_HTTP_FOUND, r);
        MHD_destroy_response(r);
    }
    gb__answer_free(a);
    return ok;
}

static enum MHD_Result send_answer(gb_board *b, struct MHD_Connection *c, gb__answer *a) {
    switch (a->kind) {
    case GB__ANSWER_EVENTS: return gb__live_respond(b->live, c);
    case GB__ANSWER_FILE: return send_file(c, a->file);
    case GB__ANSWER_LOGIN: return send_login(b, c, a);
    case GB__ANSWER_BODY: break;
    }
    /* The body is libmicrohttpd's to free from here, even on failure. */
    char *body = a->body;
    a->body = NULL;
    return gb__send_buffer(c, a->status, body, a->len, MHD_RESPMEM_MUST_FREE, a->content_type,
                           "no-store");
}

/* ---- dispatch ------------------------------------------------------------------- */

/* Answers a request refused at its request line on its socket, and ends
 * the connection. */
static void refuse(gb_board *b, gb__conn *conn, unsigned status, const char *msg) {
    size_t len = 0;
    /* Over HTTPS the socket carries TLS records only libmicrohttpd can
     * write: such a request is just closed. */
    char *bytes = b->tls.cert ? NULL : gb__raw_error(status, msg, &len);
    gb__conn_refuse(b->conns, conn, bytes ? bytes : "", len);
    free(bytes);
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line is in, the query not yet
 * split into parameters. Returns the request's context: NULL, so the
 * access handler can tell its first call. */
static void *on_request_line(void *cls, const char *target, struct MHD_Connection *c) {
    gb_board *b = cls;
    gb__conn *conn = gb__conn_of(c);
    bool nul_in_path;
    char msg[128];
    int status = gb__check_target(target, &nul_in_path, msg, sizeof msg);
    if (!status && gb__target_hides_nul(target)) {
        snprintf(msg, sizeof msg, "NUL byte in the request target");
        status = 400;
    }
    gb__conn_set_bad_path(conn, nul_in_path);
    if (status) refuse(b, conn, (unsigned)status, msg);
    return NULL;
}

/* MHD_OPTION_NOTIFY_COMPLETED: the response is out; the next request's
 * head is held to the deadline again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode code) {
    (void)req_cls, (void)code;
    gb_board *b = cls;
    gb__conn_waiting(b->conns, gb__conn_of(c));
}

/* The request says a body follows: no route takes one, and such a request
 * is answered at once, without reading it. */
static bool has_body(struct MHD_Connection *c) {
    const char *length =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return (length && strcmp(length, "0")) ||
           MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* The header fields (only libmicrohttpd can count them), then what
 * answer.c decides. */
static enum MHD_Result answer(gb_board *b, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version) {
    char msg[320];
    int status = gb__check_header_fields(c, msg, sizeof msg);
    if (!status) status = gb__check_head_nul(c, method, msg, sizeof msg);
    if (status) return gb__send_error(c, (unsigned)status, msg);
    gb__head head;
    read_head(c, url, method, version, &head);
    gb__answer a;
    if (!gb__answer_request(&b->hosts, b->token, b->pool, &head, &a)) return MHD_NO;
    return send_answer(b, c, &a);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
    (void)upload_data;
    gb_board *b = cls;
    if (!*req_cls) {
        /* The head is in. A connection shut down meanwhile is not answered. */
        if (!gb__conn_answering(b->conns, gb__conn_of(c))) return MHD_NO;
        *req_cls = b;
        return has_body(c) ? answer(b, c, url, method, version) : MHD_YES;
    }
    if (*upload_data_size) { /* not announced by the head: dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return answer(b, c, url, method, version);
}

/* ---- start and stop ----------------------------------------------------------------- */

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
    /* A deep backlog: a burst of connections waits to be accepted rather
     * than being refused by the kernel. */
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, SOMAXCONN)) {
        int e = errno;
        snprintf(last_error, sizeof last_error, "cannot listen on %s:%d: %s%s", host, port,
                 strerror(e), e == EADDRINUSE ? " (port in use; try another --port, or 0)" : "");
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    char numeric[NI_MAXHOST];
    if (!getnameinfo(res->ai_addr, res->ai_addrlen, numeric, sizeof numeric, NULL, 0,
                     NI_NUMERICHOST))
        gb__hosts_add_bound(&b->hosts, numeric);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    b->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    bool v6 = res->ai_family == AF_INET6;
    snprintf(b->url, sizeof b->url, "%s://%s%s%s:%d/", b->tls.cert ? "https" : "http",
             v6 ? "[" : "", host, v6 ? "]" : "", b->port);
    freeaddrinfo(res);
    return fd;
}

/* Each connection is a file descriptor: so many are kept for the store's
 * readers, the threads' wake-up descriptors and the rest of the program. */
#define RESERVED_FDS 64

/* The connection limit: what was asked (if the process may open that
 * many files), else the default, lowered to what it may open. */
static bool connection_limit(int asked, int *limit) {
    struct rlimit rl;
    long room = 1L << 30;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
        room = (long)rl.rlim_cur - RESERVED_FDS;
    if (asked > 0) {
        if (asked > room) {
            snprintf(last_error, sizeof last_error,
                     "max_connections %d is more than this process may open (ulimit -n is %ld, "
                     "%d of which are kept for the rest)",
                     asked, room + RESERVED_FDS, RESERVED_FDS);
            return false;
        }
        *limit = asked;
    } else {
        *limit = room < GB__DEFAULT_MAX_CONNECTIONS ? (room > 16 ? (int)room : 16)
                                                    : GB__DEFAULT_MAX_CONNECTIONS;
    }
    return true;
}

/* The options with their defaults filled in; false (last_error set) for
 * a value out of range. */
static bool resolve_options(const gb_board_options *given, gb_board_options *o) {
    *o = given ? *given : (gb_board_options){0};
    if (o->threads <= 0) o->threads = 4;
    if (o->poll_ms <= 0) o->poll_ms = 100;
    if (o->header_timeout_ms <= 0) o->header_timeout_ms = GB__DEFAULT_HEADER_TIMEOUT_MS;
    if (o->threads > 64) {
        snprintf(last_error, sizeof last_error, "threads %d is more than 64", o->threads);
        return false;
    }
    if (o->header_timeout_ms < 100 || o->header_timeout_ms > 3600000) {
        snprintf(last_error, sizeof last_error,
                 "header_timeout_ms %d is out of range 100..3600000", o->header_timeout_ms);
        return false;
    }
    return connection_limit(o->max_connections, &o->max_connections);
}

/* Runs libmicrohttpd on the listening socket fd: epoll threads (no
 * select() ceiling on descriptors, and idle connections cost nothing),
 * each connection registered for the header deadline, each request line
 * and response end reported. */
/* MHD's accept policy: every connection while serving, none once stopping. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
    (void)addr, (void)addrlen;
    const gb_board *b = cls;
    return atomic_load(&b->stopping) ? MHD_NO : MHD_YES;
}

static struct MHD_Daemon *start_mhd(gb_board *b, int fd, const gb_board_options *o) {
    struct MHD_OptionItem tls[] = {{MHD_OPTION_HTTPS_MEM_KEY, 0, b->tls.key},
                                   {MHD_OPTION_HTTPS_MEM_CERT, 0, b->tls.cert},
                                   {MHD_OPTION_END, 0, NULL}};
    return MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | (b->tls.cert ? MHD_USE_TLS : 0),
        0, accept_policy, b, on_request, b, MHD_OPTION_ARRAY, b->tls.cert ? tls : tls + 2,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)o->threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
        /* Silence, e.g. a client that stops reading its response. */
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)GB__CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_CONNECTION, gb__conns_notify, b->conns,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, b,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, b, MHD_OPTION_END);
}

/* The token every request must carry: the one given, else a fresh one
 * when the board leaves loopback (unless told not to), else none. */
static bool choose_token(gb_board *b, const char *host, const gb_board_options *o) {
    if (o->token && *o->token) {
        if (!gb__token_valid(o->token)) {
            snprintf(last_error, sizeof last_error,
                     "the token must be 8 to %d letters, digits, '-', '_' or '.'", GB__TOKEN_MAX);
            return false;
        }
        snprintf(b->token, sizeof b->token, "%s", o->token);
        return true;
    }
    if (gb__host_is_loopback(host) || o->no_auth) return true;
    if (gb__token_generate(b->token, sizeof b->token)) return true;
    snprintf(last_error, sizeof last_error,
             "no randomness for a token to guard %s (give one with the token option)", host);
    return false;
}

/* The readers of what a board serves: the store at db_path, or the stores
 * under a logdir's patterns (db_path NULL) through one shared handle. */
static bool open_readers(gb_board *b, const char *db_path, const char *const *logdir,
                         size_t logdir_count, const gb_board_options *o, char *err,
                         size_t err_size) {
    gb_store *shared = NULL;
    if (!db_path && gb_store_open_logdir(logdir, logdir_count, &shared) != GB_STORE_OK) {
        snprintf(err, err_size, "%s", gb_store_last_error());
        return false;
    }
    b->pool = shared ? gb__pool_new_shared(shared, err, err_size)
                     : gb__pool_new(db_path, o->threads, err, err_size);
    if (!b->pool) return false;
    b->live = gb__live_start(db_path, shared, o->poll_ms, err, err_size);
    return b->live != NULL;
}

static gb_board *start(const char *db_path, const char *const *logdir, size_t logdir_count,
                       const char *host, int port, const gb_board_options *options) {
    last_error[0] = '\0';
    gb_board_options o;
    if (!host) host = "127.0.0.1";
    if (port < 0 || port > 65535) return start_failed(NULL, "port %d is out of range 0..65535", port);
    char err[sizeof last_error];
    if (!resolve_options(options, &o)) {
        snprintf(err, sizeof err, "%s", last_error);
        return start_failed(NULL, "%s", err);
    }
    struct stat st;
    if (db_path && stat(db_path, &st)) return start_failed(NULL, "cannot open store '%s': %s", db_path, strerror(errno));
    if (db_path && !S_ISREG(st.st_mode)) return start_failed(NULL, "store '%s' is not a regular file", db_path);

    gb_board *b = calloc(1, sizeof *b);
    if (!b) return start_failed(NULL, "out of memory");
    if (!gb__hosts_init(&b->hosts, host, o.allow_hosts, err, sizeof err))
        return start_failed(b, "%s", err);
    if (!choose_token(b, host, &o)) {
        snprintf(err, sizeof err, "%s", last_error);
        return start_failed(b, "%s", err);
    }
    if (!gb__tls_load(o.tls_cert, o.tls_key, &b->tls, err, sizeof err))
        return start_failed(b, "%s", err);
    if (!open_readers(b, db_path, logdir, logdir_count, &o, err, sizeof err))
        return start_failed(b, "%s", err);
    b->conns = gb__conns_start(o.header_timeout_ms, err, sizeof err);
    if (!b->conns) return start_failed(b, "%s", err);
    int fd = listen_on(b, host, port);
    if (fd < 0) {
        snprintf(err, sizeof err, "%s", last_error);
        return start_failed(b, "%s", err);
    }
    b->mhd = start_mhd(b, fd, &o);
    if (!b->mhd) {
        close(fd);
        return start_failed(b, "cannot start the HTTP%s server on %s:%d%s", b->tls.cert ? "S" : "",
                            host, b->port,
                            b->tls.cert ? " (does the key match the certificate?)" : "");
    }
    return b;
}

gb_board *gb_board_start(const char *db_path, const char *host, int port,
                         const gb_board_options *options) {
    if (!db_path || !*db_path) return start_failed(NULL, "no store given (db_path is empty)");
    return start(db_path, NULL, 0, host, port, options);
}

gb_board *gb_board_start_logdir(const char *const *logdir, int count, const char *host, int port,
                                const gb_board_options *options) {
    if (!logdir || count <= 0) return start_failed(NULL, "no logdir given (count is %d)", count);
    return start(NULL, logdir, (size_t)count, host, port, options);
}

int gb_board_port(const gb_board *board) { return board ? board->port : 0; }

const char *gb_board_url(const gb_board *board) { return board ? board->url : ""; }

const char *gb_board_token(const gb_board *board) { return board ? board->token : ""; }

/* How long stopping waits for connections reading a request head to close
 * (they close at once; the bound is for a libmicrohttpd that does not). */
#define STOP_DRAIN_MS 1000

void gb_board_stop(gb_board *b) {
    if (!b) return;
    /* No new connections: each is closed as it is accepted. Not
     * MHD_quiesce_daemon: in 0.9.75 with a pool of epoll threads it races
     * a worker that removes the listening socket from its epoll set on
     * seeing the daemon quiesced, and one of the two removals fails with
     * "Failed to remove listen FD from epoll set", which aborts the
     * process (seen under ThreadSanitizer's slower threads).
     * MHD_stop_daemon closes the listening socket. */
    atomic_store(&b->stopping, true);
    if (b->live) gb__live_shutdown(b->live);
    gb__conns_stop(b->conns);
    if (b->mhd) {
        gb__conns_drain(b->conns, STOP_DRAIN_MS);
        /* Reports every connection closed to the register. */
        MHD_stop_daemon(b->mhd);
    }
    gb__conns_free(b->conns);
    gb__live_free(b->live);
    gb__pool_free(b->pool);
    gb__tls_free(&b->tls);
    free(b);
}
