/* gb_board.h — the glassbox dashboard server, embeddable in any program.
 *
 * `glassbox serve --db FILE` runs it as a program; a training process can
 * run the very same server on its own store while it trains:
 *
 *     gb_board *board = gb_board_start("runs.db", NULL, 6006, NULL);
 *     if (!board) fprintf(stderr, "dashboard: %s\n", gb_board_last_error());
 *     else printf("dashboard at %s\n", gb_board_url(board));
 *     ... train, writing summaries to runs.db ...
 *     gb_board_stop(board);
 *
 * The server only reads the store (read-only SQLite connections through
 * the summary reader API) and serves pages embedded in the binary at build
 * time: it needs no file beside it and never touches the file system
 * otherwise. It binds the loopback interface unless another host is asked
 * for explicitly, and whatever it binds it answers only requests whose Host
 * header names it (loopback names, the address bound, allow_hosts below).
 * Bound beyond loopback it also asks every request for a secret token
 * (Jupyter's scheme, `token` below), unless told not to (`no_auth`).
 * Every request is bounded (webui/http_api.md, "Limits"). Errors never exit
 * the process: gb_board_start returns NULL and gb_board_last_error() says
 * why (port in use, missing store...).
 */
#ifndef GB_BOARD_H
#define GB_BOARD_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_board gb_board;

/* Optional settings; a NULL options pointer or zero fields mean defaults. */
typedef struct gb_board_options {
    int threads;        /* HTTP worker threads (default 4) */
    int poll_ms;        /* how often the store is checked for new events
                           (default 100 ms; live updates reach the browser
                           within this plus one round trip) */
    int max_connections; /* connections open at once (default 1024, or
                            fewer if the process may not open that many
                            files: see `ulimit -n`); more are closed at
                            once */
    int header_timeout_ms; /* a request's head (request line and headers)
                              must be in within this of the connection
                              opening or of the previous response, however
                              it trickles in; slower connections are closed
                              (default 10000) */
    const char *allow_hosts; /* comma-separated host names or addresses
                                that Host headers may name besides the
                                loopback names and the address bound, e.g.
                                "dash.example.com,10.0.0.5" (default none):
                                other Host headers are refused (403), so a
                                page elsewhere cannot reach the dashboard
                                through DNS rebinding */
    const char *token;  /* a secret every request must carry (8 to 128
                           letters, digits, '-', '_', '.'): given once in
                           the address (/?token=...), answered with a
                           cookie (HttpOnly, SameSite=Strict) the browser
                           sends from then on; scripts may send
                           "Authorization: Bearer <token>". Default: none
                           on loopback; a fresh random one when bound
                           beyond it (gb_board_token) */
    bool no_auth;       /* bound beyond loopback, serve without a token:
                           anyone who reaches the port reads every run */
    const char *tls_cert; /* serve HTTPS with this certificate (a PEM file,
                             its chain after it) and tls_key, its private
                             key (PEM, unencrypted); both or neither. The
                             token's cookie is then Secure */
    const char *tls_key;
} gb_board_options;

/* Starts serving the store at db_path on host:port in background threads.
 * host NULL means "127.0.0.1"; port 0 picks a free port (see
 * gb_board_port). Returns NULL on failure; gb_board_last_error() then
 * holds the reason. */
gb_board *gb_board_start(const char *db_path, const char *host, int port,
                         const gb_board_options *options);

/* Starts serving every store under the `count` directories or glob
 * patterns of logdir as one board (gb_store_open_logdir in gb_reader.h
 * says how they are found and how runs are named): a sweep's or an MPI
 * job's stores, one per process. Stores that appear, grow or disappear
 * show within about a second; they are read only, opened when looked at
 * and closed when idle. A plain path must be a directory; a pattern may
 * match nothing yet. NULL on failure, as gb_board_start. */
gb_board *gb_board_start_logdir(const char *const *logdir, int count, const char *host, int port,
                                const gb_board_options *options);

/* The port actually bound (useful after asking for port 0). */
int gb_board_port(const gb_board *board);

/* "http://HOST:PORT/" of a running board. */
const char *gb_board_url(const gb_board *board);

/* The token its requests must carry ("" when none): open
 * gb_board_url() + "?token=" + this in a browser once. */
const char *gb_board_token(const gb_board *board);

/* Stops the server, closes every connection (live streams included) and
 * frees the board. NULL is accepted and ignored. */
void gb_board_stop(gb_board *board);

/* Why the last gb_board_start on this thread failed ("" if it did not). */
const char *gb_board_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
