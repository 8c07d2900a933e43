/* connections.c — the register of open connections, the sweeper that
 * holds every request head to the header deadline, and the drain before
 * libmicrohttpd stops (see connections.h for why, and why touching
 * libmicrohttpd's sockets this way is safe).
 *
 * One lock guards the register: libmicrohttpd's threads take it briefly
 * when a connection opens or closes and when a request starts or ends its
 * answer; the sweeper takes it for one pass over the register every tenth
 * of the deadline (at most every second), so a connection is shut down
 * at most that late.
 */
#include "connections.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "board_internal.h"

typedef enum phase {
    WAITING,    /* for a request head, since waiting_since_ms */
    ANSWERING,  /* the head is in: the deadline does not apply */
    CLOSING,    /* shut down, by the sweeper or by a refusal */
} phase;

struct gb__conn {
    int fd;                    /* libmicrohttpd's socket; it closes it */
    phase phase;               /* under the register's lock */
    int64_t waiting_since_ms;  /* under the register's lock */
    bool bad_path;             /* the connection's thread only */
    gb__conn *prev, *next;     /* under the register's lock */
};

struct gb__conns {
    pthread_mutex_t mu;
    pthread_cond_t wake;       /* signals the sweeper to stop */
    pthread_cond_t gone;       /* signals a record left the register */
    pthread_t thread;
    bool thread_started, stopping;
    int deadline_ms, tick_ms;
    gb__conn *head;
};

/* Shuts a connection down both ways; mu held (so its socket is open). */
static void shut(gb__conn *c) {
    c->phase = CLOSING;
    if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR);
}

/* The monotonic time ms from now, for the timed waits. */
static struct timespec in_ms(int64_t ms) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    t.tv_sec += (time_t)(ms / 1000) + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void *sweep(void *arg) {
    gb__conns *cs = arg;
    pthread_mutex_lock(&cs->mu);
    while (!cs->stopping) {
        struct timespec until = in_ms(cs->tick_ms);
        pthread_cond_timedwait(&cs->wake, &cs->mu, &until);
        int64_t now = gb__now_ms();
        for (gb__conn *c = cs->head; c && !cs->stopping; c = c->next)
            if (c->phase == WAITING && now - c->waiting_since_ms >= cs->deadline_ms) shut(c);
    }
    pthread_mutex_unlock(&cs->mu);
    return NULL;
}

gb__conns *gb__conns_start(int deadline_ms, char *err, size_t err_size) {
    gb__conns *cs = calloc(1, sizeof *cs);
    if (!cs) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&cs->mu, NULL);
    /* The sweeper's waits are timed on the monotonic clock, which setting
     * the date does not move. */
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cs->wake, &attr);
    pthread_cond_init(&cs->gone, &attr);
    pthread_condattr_destroy(&attr);
    cs->deadline_ms = deadline_ms;
    /* deadline_ms >= 100 (gb_board_start checks), so a tick is >= 10 ms. */
    cs->tick_ms = deadline_ms / 10 > 1000 ? 1000 : deadline_ms / 10;
    if (pthread_create(&cs->thread, NULL, sweep, cs)) {
        snprintf(err, err_size, "cannot start the connection sweeper thread");
        gb__conns_free(cs);
        return NULL;
    }
    cs->thread_started = true;
    return cs;
}

void gb__conns_stop(gb__conns *cs) {
    if (!cs || !cs->thread_started) return;
    pthread_mutex_lock(&cs->mu);
    cs->stopping = true;
    pthread_cond_signal(&cs->wake);
    pthread_mutex_unlock(&cs->mu);
    pthread_join(cs->thread, NULL);
    cs->thread_started = false;
}

void gb__conns_drain(gb__conns *cs, int timeout_ms) {
    if (!cs) return;
    struct timespec until = in_ms(timeout_ms);
    pthread_mutex_lock(&cs->mu);
    for (;;) {
        bool closing = false;
        for (gb__conn *c = cs->head; c; c = c->next) {
            if (c->phase == WAITING) shut(c);
            closing |= c->phase == CLOSING;
        }
        if (!closing || pthread_cond_timedwait(&cs->gone, &cs->mu, &until)) break;
    }
    pthread_mutex_unlock(&cs->mu);
}

void gb__conns_free(gb__conns *cs) {
    if (!cs) return;
    gb__conns_stop(cs);
    /* libmicrohttpd has reported every connection closed by now. */
    pthread_mutex_destroy(&cs->mu);
    pthread_cond_destroy(&cs->wake);
    pthread_cond_destroy(&cs->gone);
    free(cs);
}

static void add(gb__conns *cs, gb__conn *c) {
    pthread_mutex_lock(&cs->mu);
    c->phase = WAITING;
    c->waiting_since_ms = gb__now_ms();
    c->next = cs->head;
    if (c->next) c->next->prev = c;
    cs->head = c;
    pthread_mutex_unlock(&cs->mu);
}

static void drop(gb__conns *cs, gb__conn *c) {
    pthread_mutex_lock(&cs->mu);
    if (c->prev) c->prev->next = c->next;
    else cs->head = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_cond_broadcast(&cs->gone);
    pthread_mutex_unlock(&cs->mu);
    free(c);
}

void gb__conns_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                      enum MHD_ConnectionNotificationCode code) {
    gb__conns *cs = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        /* Without a record the connection is never answered (see
         * gb__conn_answering): it cannot be held to the deadline. */
        gb__conn *c = calloc(1, sizeof *c);
        *socket_context = c;
        if (!c) return;
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        c->fd = info ? info->connect_fd : -1;
        add(cs, c);
    } else if (*socket_context) {
        drop(cs, *socket_context);
        *socket_context = NULL;
    }
}

gb__conn *gb__conn_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

bool gb__conn_answering(gb__conns *cs, gb__conn *c) {
    if (!c) return false;
    pthread_mutex_lock(&cs->mu);
    bool open = c->phase != CLOSING;
    if (open) c->phase = ANSWERING;
    pthread_mutex_unlock(&cs->mu);
    return open;
}

void gb__conn_waiting(gb__conns *cs, gb__conn *c) {
    if (!c) return;
    pthread_mutex_lock(&cs->mu);
    if (c->phase != CLOSING) {
        c->phase = WAITING;
        c->waiting_since_ms = gb__now_ms();
    }
    pthread_mutex_unlock(&cs->mu);
}

/* Reads and drops what the client has sent so far (at most 64 KiB): a
 * socket closed with unread input sends a reset, which can destroy the
 * answer before the client has read it. */
static void drain(int fd) {
    char buf[4096];
    int reads = 0;
    while (reads++ < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) continue;
}

void gb__conn_refuse(gb__conns *cs, gb__conn *c, const char *bytes, size_t len) {
    if (!c || c->fd < 0) return;
    pthread_mutex_lock(&cs->mu);
    bool open = c->phase != CLOSING;
    c->phase = CLOSING;
    pthread_mutex_unlock(&cs->mu);
    if (!open) return;
    /* Nothing else writes to the socket now: libmicrohttpd is inside the
     * request line's callback on this very thread, and only reads the next
     * request once the previous response is sent. The socket does not
     * block: what the kernel will not take now is dropped. */
    drain(c->fd);
    while (len) {
        ssize_t n = send(c->fd, bytes, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) break;
        bytes += n;
        len -= (size_t)n;
    }
    shutdown(c->fd, SHUT_RDWR);
}

void gb__conn_set_bad_path(gb__conn *c, bool bad) {
    if (c) c->bad_path = bad;
}

bool gb__conn_bad_path(const gb__conn *c) { return c && c->bad_path; }
