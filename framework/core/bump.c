/* core/bump.c — a growing bump allocator for things freed all at once.
 *
 * A tape's records and a graph's strings, edges and constants live as
 * long as their owner and die with it: chunks of at least `min_chunk`
 * bytes, handed out in max_align_t steps, freed together. (Memory scopes
 * are the same idea bound to the thread's scope stack; this one belongs to
 * an object.)
 */
#include <stdlib.h>

#include "core/internal.h"

struct gb_bump_chunk {
    struct gb_bump_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *gb__bump_alloc(gb_bump *a, size_t n, const char *what) {
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    struct gb_bump_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > a->min_chunk ? n : a->min_chunk;
        c = malloc(sizeof *c + cap);
        if (!c) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory %s", what);
            return NULL;
        }
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

void gb__bump_free(gb_bump *a) {
    while (a->head) {
        struct gb_bump_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}
