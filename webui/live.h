/* live.h — live updates: a server-sent event stream at /api/events.
 *
 * A watcher thread checks the store's change counter every poll_ms
 * (default 100 ms) on its own read-only reader. Each browser holds one
 * EventSource connection; between events the connection is suspended (it
 * costs no worker thread), and the watcher resumes every stream when the
 * store changed, so a flushed event reaches the page within about
 * poll_ms + one fetch. A comment line every 10 s keeps proxies from
 * closing an idle stream.
 */
#ifndef GB_LIVE_H
#define GB_LIVE_H

#include <microhttpd.h>
#include <stddef.h>

#include "gb_reader.h"

typedef struct gb__live gb__live;

/* Starts the watcher on its own reader of db_path, or, when shared is not
 * NULL (a logdir's handle, which answers from several threads), on that one,
 * which it does not close. NULL + err on failure. */
gb__live *gb__live_start(const char *db_path, gb_store *shared, int poll_ms, char *err,
                         size_t err_size);
/* Answers GET /api/events with an endless event stream. */
enum MHD_Result gb__live_respond(gb__live *live, struct MHD_Connection *connection);
/* Stops the watcher and ends every stream, waiting (at most 1 s) until
 * each has sent its last chunk; call before MHD_stop_daemon. */
void gb__live_shutdown(gb__live *live);
/* Frees what is left; call after MHD_stop_daemon. */
void gb__live_free(gb__live *live);

#endif
