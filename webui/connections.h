/* connections.h — the board's register of open connections and the
 * header deadline.
 *
 * libmicrohttpd's CONNECTION_TIMEOUT only closes a connection that has
 * been silent that long: a client that trickles a header line every few
 * seconds keeps its connection, and a few hundred such clients hold every
 * connection the server has (slowloris). So every connection is registered
 * when libmicrohttpd accepts it (MHD_OPTION_NOTIFY_CONNECTION), with the
 * time the server began waiting for its next request head: when it opened,
 * then each time a response is complete (MHD_OPTION_NOTIFY_COMPLETED).
 * While a request is being answered (from the access handler's first call,
 * which libmicrohttpd makes once the head is in) the connection is exempt.
 * A sweeper thread shuts down (shutdown(2), SHUT_RDWR) every connection
 * that has waited longer than the deadline, whatever trickled in meanwhile;
 * libmicrohttpd sees the socket hang up and closes it its usual way.
 *
 * Why touching libmicrohttpd's socket is safe: shutdown() neither closes
 * nor frees anything, so the descriptor stays libmicrohttpd's to close;
 * libmicrohttpd 0.9.75 reports NOTIFY_CONNECTION's "closed" before it
 * closes the socket (daemon.c, MHD_cleanup_connections and the failure path
 * of internal_add_connection), and the record leaves the register in that
 * callback under the lock the sweeper holds while it calls shutdown(), so
 * the sweeper never touches a closed descriptor, nor one already reused by
 * another connection or file. In epoll mode a socket shut down both ways
 * reports EPOLLHUP, which libmicrohttpd handles as an error on the
 * connection (call_handlers with force_close) in whatever state it is.
 */
#ifndef GB_CONNECTIONS_H
#define GB_CONNECTIONS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gb__conns gb__conns;   /* the register and its sweeper */
typedef struct gb__conn gb__conn;     /* one connection's record */

/* Starts the sweeper with this deadline (ms). NULL + err on failure. */
gb__conns *gb__conns_start(int deadline_ms, char *err, size_t err_size);
/* Stops the sweeper; call before MHD_stop_daemon (which still reports
 * every connection closed). */
void gb__conns_stop(gb__conns *conns);
/* Shuts down every connection still waiting for a request head and waits,
 * at most timeout_ms, until those and the ones already shut down are
 * closed. Call once libmicrohttpd accepts no more connections
 * (the board's accept policy refuses them) and before MHD_stop_daemon: 0.9.75
 * crashes if it refuses a request head itself (414, 431...) while it stops
 * (MHD_queue_response returns MHD_YES without queueing once the daemon is
 * shutting down, and transmit_error_response_len then builds the headers
 * of a NULL response). Only a connection reading a head takes that path,
 * and a request refused at its request line (gb__conn_refuse) takes it
 * after its client already has the answer and may have asked the board to
 * stop; once none is left, stopping is safe. */
void gb__conns_drain(gb__conns *conns, int timeout_ms);
/* Frees the register; call after MHD_stop_daemon. */
void gb__conns_free(gb__conns *conns);

/* MHD_OPTION_NOTIFY_CONNECTION, with the register as cls: registers each
 * connection as it opens and removes it before its socket is closed. */
void gb__conns_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                      enum MHD_ConnectionNotificationCode code);

/* The record of a connection (NULL if registering it failed). */
gb__conn *gb__conn_of(struct MHD_Connection *connection);

/* The request's head is in and is about to be answered: the deadline no
 * longer applies. False when the connection was already shut down (by the
 * sweeper, or by gb__conn_refuse): the handler then answers nothing. */
bool gb__conn_answering(gb__conns *conns, gb__conn *conn);
/* The response is complete: the deadline runs again, for the next request. */
void gb__conn_waiting(gb__conns *conns, gb__conn *conn);

/* Answers the connection's request with `bytes` (a whole HTTP response)
 * and shuts the connection down, for a request refused before
 * libmicrohttpd has parsed it (see request_head.c). Called on the
 * connection's own thread, from a libmicrohttpd callback. */
void gb__conn_refuse(gb__conns *conns, gb__conn *conn, const char *bytes, size_t len);

/* What the check of the request line found for the access handler to
 * answer (see request_head.c): set and read on the connection's own
 * thread, once per request. */
void gb__conn_set_bad_path(gb__conn *conn, bool bad);
bool gb__conn_bad_path(const gb__conn *conn);

#endif
