/* live.c — the /api/events server-sent event stream (live.h).
 *
 * Each stream is an MHD callback response. When it has nothing to send,
 * its callback suspends the connection and returns 0; the watcher thread
 * resumes the suspended streams when the store's change counter moves (or
 * a keep-alive comment is due), and the callback then writes
 *     id: <generation>
 *     data: {"generation":<generation>}
 * Lock order everywhere: live->mu, then MHD's own locks (suspend/resume
 * are called with mu held, so a stream is never resumed unless suspended).
 */
#include "live.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "board_internal.h"
#include "respond.h"

#define KEEPALIVE_MS 10000
#define SHUTDOWN_WAIT_MS 1000

typedef struct stream {
    gb__live *live;
    struct MHD_Connection *connection;
    char out[128];          /* an event not yet fully handed to MHD */
    size_t out_len, out_off;
    uint64_t sent;          /* generation last sent */
    bool suspended;
    bool hello_sent;
    int64_t last_write_ms;
    struct stream *prev, *next;
} stream;

struct gb__live {
    pthread_mutex_t mu;
    pthread_cond_t wake;    /* signals the watcher to stop */
    pthread_cond_t ended;   /* signalled each time a stream closes */
    pthread_t thread;
    bool thread_started, stopping;
    int poll_ms;
    gb_store *store;       /* used by the watcher thread only (unless shared) */
    bool shared;           /* store is the board's logdir handle: not ours to close */
    uint64_t version;      /* the store's data_version last seen */
    uint64_t generation;    /* bumped on every observed store change */
    stream *streams;
};

/* Resumes every suspended stream; mu must be held. */
static void resume_all(gb__live *live) {
    for (stream *s = live->streams; s; s = s->next)
        if (s->suspended) {
            s->suspended = false;
            MHD_resume_connection(s->connection);
        }
}

/* The CLOCK_REALTIME instant ms from now, for pthread_cond_timedwait. */
static struct timespec deadline_in(int ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void *watch(void *arg) {
    gb__live *live = arg;
    int64_t last_wake = gb__now_ms();
    pthread_mutex_lock(&live->mu);
    while (!live->stopping) {
        struct timespec until = deadline_in(live->poll_ms);
        pthread_cond_timedwait(&live->wake, &live->mu, &until);
        if (live->stopping) break;
        /* The store check runs without mu: it may wait on SQLite. */
        pthread_mutex_unlock(&live->mu);
        uint64_t version = live->version;
        bool changed = gb_store_data_version(live->store, &version) == GB_STORE_OK &&
                       version != live->version;
        live->version = version;
        pthread_mutex_lock(&live->mu);
        if (changed) live->generation++;
        if (changed || gb__now_ms() - last_wake >= KEEPALIVE_MS) {
            resume_all(live);
            last_wake = gb__now_ms();
        }
    }
    pthread_mutex_unlock(&live->mu);
    return NULL;
}

gb__live *gb__live_start(const char *db_path, gb_store *shared, int poll_ms, char *err,
                         size_t err_size) {
    gb__live *live = calloc(1, sizeof *live);
    if (!live) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&live->mu, NULL);
    pthread_cond_init(&live->wake, NULL);
    pthread_cond_init(&live->ended, NULL);
    live->poll_ms = poll_ms;
    live->generation = 1;
    live->shared = shared != NULL;
    live->store = shared;
    if (!shared && gb_store_open(db_path, &live->store) != GB_STORE_OK) {
        snprintf(err, err_size, "cannot open store '%s': %s", db_path, gb_store_last_error());
        gb__live_free(live);
        return NULL;
    }
    gb_store_data_version(live->store, &live->version); /* the baseline */
    if (pthread_create(&live->thread, NULL, watch, live)) {
        snprintf(err, err_size, "cannot start the store watcher thread");
        gb__live_free(live);
        return NULL;
    }
    live->thread_started = true;
    return live;
}

/* Queues text and hands MHD as much of the queue as fits in max; the rest
 * goes out on the next call. */
static ssize_t emit(stream *s, char *buf, size_t max, const char *text) {
    if (text) {
        snprintf(s->out, sizeof s->out, "%s", text);
        s->out_len = strlen(s->out);
        s->out_off = 0;
        s->last_write_ms = gb__now_ms();
    }
    size_t n = s->out_len - s->out_off;
    if (n > max) n = max;
    memcpy(buf, s->out + s->out_off, n);
    s->out_off += n;
    return (ssize_t)n;
}

static ssize_t next_chunk(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    stream *s = cls;
    gb__live *live = s->live;
    char text[128];
    ssize_t n = 0;
    pthread_mutex_lock(&live->mu);
    if (live->stopping) {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    } else if (s->out_off < s->out_len) {
        n = emit(s, buf, max, NULL);
    } else if (!s->hello_sent || s->sent != live->generation) {
        /* retry: the browser reconnects after 1 s if the stream drops. */
        snprintf(text, sizeof text, "%sid: %llu\ndata: {\"generation\":%llu}\n\n",
                 s->hello_sent ? "" : "retry: 1000\n", (unsigned long long)live->generation,
                 (unsigned long long)live->generation);
        s->hello_sent = true;
        s->sent = live->generation;
        n = emit(s, buf, max, text);
    } else if (gb__now_ms() - s->last_write_ms >= KEEPALIVE_MS) {
        n = emit(s, buf, max, ": keep-alive\n\n");
    } else {
        s->suspended = true;
        MHD_suspend_connection(s->connection);
    }
    pthread_mutex_unlock(&live->mu);
    return n;
}

static void stream_closed(void *cls) {
    stream *s = cls;
    gb__live *live = s->live;
    pthread_mutex_lock(&live->mu);
    if (s->prev) s->prev->next = s->next;
    else live->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_cond_broadcast(&live->ended);
    pthread_mutex_unlock(&live->mu);
    free(s);
}

enum MHD_Result gb__live_respond(gb__live *live, struct MHD_Connection *connection) {
    stream *s = calloc(1, sizeof *s);
    if (!s) return MHD_NO;
    s->live = live;
    s->connection = connection;
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, next_chunk, s, stream_closed);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    pthread_mutex_lock(&live->mu);
    s->next = live->streams;
    if (s->next) s->next->prev = s;
    live->streams = s;
    pthread_mutex_unlock(&live->mu);
    gb__common_headers(r, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ok = MHD_queue_response(connection, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

void gb__live_shutdown(gb__live *live) {
    if (!live) return;
    pthread_mutex_lock(&live->mu);
    live->stopping = true;
    pthread_cond_signal(&live->wake);
    pthread_mutex_unlock(&live->mu);
    if (live->thread_started) pthread_join(live->thread, NULL);
    live->thread_started = false;
    pthread_mutex_lock(&live->mu);
    resume_all(live);
    /* Each resumed stream now writes its last chunk and closes. Waiting for
     * that before the daemon stops lets the browser see a stream that
     * ended, which it retries quietly, rather than one cut mid-chunk
     * (ERR_INCOMPLETE_CHUNKED_ENCODING in its console). Bounded, for a
     * client that stopped reading. */
    struct timespec until = deadline_in(SHUTDOWN_WAIT_MS);
    while (live->streams && pthread_cond_timedwait(&live->ended, &live->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&live->mu);
}

void gb__live_free(gb__live *live) {
    if (!live) return;
    gb__live_shutdown(live);
    if (!live->shared) gb_store_close(live->store);
    pthread_mutex_destroy(&live->mu);
    pthread_cond_destroy(&live->wake);
    pthread_cond_destroy(&live->ended);
    free(live);
}
