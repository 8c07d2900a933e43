/* data/buffer_pool.c — the recycled heap buffers an iterator fills with batches.
 *
 * Batches and map outputs are written into reference-counted heap buffers
 * that the consumer receives as tensor views. A buffer comes back to the
 * pool when its reference count falls to the pool's own (1): the scope of
 * the training step that used it has ended. So a steady loop reuses the
 * same few buffers and allocates nothing; a consumer that keeps batches
 * (gb_keep, no per-step scope) simply makes the pool allocate more.
 *
 * Reference counts are plain integers changed on the consumer's thread
 * (views, gb_keep, scope ends). Only that thread reads them (reclaim); the
 * free list, which the producing thread also uses, is under a mutex.
 */
#include <stdlib.h>

#include "data/internal.h"

enum { MAX_FREE = 32 };   /* more free buffers than a pipeline needs are freed */

void gb__pool_init(gb__pool *p) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
}

/* Appends b to a growable array; false when out of memory. */
static bool push(gb_buffer ***arr, int *n, int *cap, gb_buffer *b) {
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        gb_buffer **a = realloc(*arr, (size_t)ncap * sizeof *a);
        if (!a) return false;
        *arr = a;
        *cap = ncap;
    }
    (*arr)[(*n)++] = b;
    return true;
}

gb_buffer *gb__pool_get(gb__pool *p, size_t nbytes) {
    pthread_mutex_lock(&p->mu);
    /* Best fit among buffers not more than twice too big, so a label
     * buffer does not take an image-sized one. */
    int best = -1;
    for (int i = 0; i < p->nfree; i++) {
        size_t cap = p->free_bufs[i]->nbytes;
        if (cap >= nbytes && cap / 2 <= nbytes &&
            (best < 0 || cap < p->free_bufs[best]->nbytes))
            best = i;
    }
    gb_buffer *b = NULL;
    if (best >= 0) {
        b = p->free_bufs[best];
        p->free_bufs[best] = p->free_bufs[--p->nfree];
    }
    pthread_mutex_unlock(&p->mu);
    if (b) return b;

    b = gb__buffer_new_heap(nbytes);
    if (!b) return NULL;
    pthread_mutex_lock(&p->mu);
    p->allocated++;
    p->bytes_allocated += (int64_t)nbytes;
    pthread_mutex_unlock(&p->mu);
    return b;
}

void gb__pool_put(gb__pool *p, gb_buffer *b) {
    pthread_mutex_lock(&p->mu);
    bool kept = p->nfree < MAX_FREE && push(&p->free_bufs, &p->nfree, &p->capfree, b);
    pthread_mutex_unlock(&p->mu);
    if (!kept) gb__buffer_unref(b);
}

bool gb__pool_lend(gb__pool *p, gb_buffer *b) {
    if (push(&p->lent, &p->nlent, &p->caplent, b)) return true;
    gb__error(GB_ERR_MEMORY, NULL, "dataset iterator: out of memory");
    return false;
}

void gb__pool_reclaim(gb__pool *p) {
    for (int i = 0; i < p->nlent;) {
        gb_buffer *b = p->lent[i];
        if (b->refcount == 1) {
            p->lent[i] = p->lent[--p->nlent];
            gb__pool_put(p, b);
        } else {
            i++;
        }
    }
}

void gb__pool_destroy(gb__pool *p) {
    for (int i = 0; i < p->nfree; i++) gb__buffer_unref(p->free_bufs[i]);
    for (int i = 0; i < p->nlent; i++) gb__buffer_unref(p->lent[i]);
    free(p->free_bufs);
    free(p->lent);
    pthread_mutex_destroy(&p->mu);
}
