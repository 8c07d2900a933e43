/* writer/checkpoint.c — WAL checkpoints off the commit path.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses the
 * WAL size threshold, copying pages into the database file and fsyncing
 * it; on a busy disk that stalls the writer's commits (and then its
 * callers) for hundreds of milliseconds. Instead, the writer's WAL hook
 * only notes that the log has grown, and a checkpoint thread with its own
 * connection runs PASSIVE checkpoints, which never block writers or
 * readers. Commits stay short and the flush interval stays honest.
 */
#include <stdio.h>
#include <stdlib.h>

#include "writer/internal.h"

enum { CHECKPOINT_PAGES = 1000 };   /* SQLite's default auto-checkpoint size */

static int on_wal_commit(void *arg, sqlite3 *db, const char *name, int pages) {
    (void)db, (void)name;
    gb__checkpointer *c = arg;
    if (pages >= CHECKPOINT_PAGES) {
        pthread_mutex_lock(&c->lock);
        c->due = true;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
    }
    return SQLITE_OK;
}

static void *checkpoint_thread(void *arg) {
    gb__checkpointer *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        if (!c->due) {
            pthread_cond_wait(&c->wake, &c->lock);
            continue;
        }
        c->due = false;
        pthread_mutex_unlock(&c->lock);
        /* Failures (busy, I/O) only delay the checkpoint; the next commit retries. */
        sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int gb__checkpointer_start(gb__checkpointer *c, sqlite3 *writer_db, const char *path,
                           int busy_timeout_ms) {
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->initialized = true;
    int rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_busy_timeout(c->db, busy_timeout_ms);
    if (pthread_create(&c->thread, NULL, checkpoint_thread, c) != 0) return SQLITE_ERROR;
    c->started = true;
    sqlite3_wal_hook(writer_db, on_wal_commit, c);   /* replaces the automatic checkpoint */
    return SQLITE_OK;
}

void gb__checkpointer_stop(gb__checkpointer *c, sqlite3 *writer_db) {
    if (!c->initialized) return;
    if (writer_db) sqlite3_wal_hook(writer_db, NULL, NULL);
    if (c->started) {
        pthread_mutex_lock(&c->lock);
        c->stop = true;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
        c->started = false;
    }
    sqlite3_close(c->db);
    c->db = NULL;
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    c->initialized = false;
}
