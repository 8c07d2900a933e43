/* store_pool.c — read-only store readers shared by the worker threads.
 *
 * A reader (one SQLite connection) must not be used by two threads at
 * once, and opening one per request would cost more than most requests.
 * So idle readers wait on a small stack; a request takes one and gives it
 * back. At most one reader exists per worker thread plus spares, opened
 * lazily: starting the server opens exactly one (to check the store),
 * which keeps start-up fast on any store size.
 *
 * A logdir board's pool holds one handle that every thread shares: a
 * logdir handle runs calls from several threads at once (each member
 * store's connection guards itself), and must be one so that its cache of
 * the members' runs and tags is one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"

struct gb__reader_pool {
    pthread_mutex_t mu;
    char *db_path;
    int cap, idle;
    gb_store **stack;   /* idle readers */
    gb_store *shared;   /* the one handle of a logdir board, or NULL */
};

gb__reader_pool *gb__pool_new(const char *db_path, int size, char *err, size_t err_size) {
    gb__reader_pool *p = calloc(1, sizeof *p);
    if (p) {
        p->cap = size + 2;
        p->db_path = strdup(db_path);
        p->stack = calloc((size_t)p->cap, sizeof *p->stack);
    }
    if (!p || !p->db_path || !p->stack) {
        snprintf(err, err_size, "out of memory");
        gb__pool_free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    gb_store *first = NULL;
    if (gb_store_open(db_path, &first) != GB_STORE_OK) {
        snprintf(err, err_size, "cannot open store '%s': %s", db_path, gb_store_last_error());
        gb__pool_free(p);
        return NULL;
    }
    p->stack[p->idle++] = first;
    return p;
}

gb__reader_pool *gb__pool_new_shared(gb_store *shared, char *err, size_t err_size) {
    gb__reader_pool *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, err_size, "out of memory");
        gb_store_close(shared);
        return NULL;
    }
    p->shared = shared;
    return p;
}

gb_store *gb__pool_acquire(gb__reader_pool *p) {
    if (p->shared) return p->shared;
    pthread_mutex_lock(&p->mu);
    gb_store *r = p->idle ? p->stack[--p->idle] : NULL;
    pthread_mutex_unlock(&p->mu);
    if (!r && gb_store_open(p->db_path, &r) != GB_STORE_OK) r = NULL;
    return r;
}

void gb__pool_release(gb__reader_pool *p, gb_store *r) {
    if (!r || r == p->shared) return;
    pthread_mutex_lock(&p->mu);
    if (p->idle < p->cap) {
        p->stack[p->idle++] = r;
        r = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    gb_store_close(r); /* more readers than the pool keeps */
}

void gb__pool_free(gb__reader_pool *p) {
    if (!p) return;
    gb_store_close(p->shared);
    for (int i = 0; i < p->idle; i++) gb_store_close(p->stack[i]);
    if (p->stack) pthread_mutex_destroy(&p->mu);
    free(p->stack);
    free(p->db_path);
    free(p);
}
