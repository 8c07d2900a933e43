/* store/reader_arena.c — result objects that are freed with one call.
 *
 * Every reader query returns one object (counts, row arrays, strings,
 * blobs) owned by an arena whose header sits just before the object, so
 * gb_store_free(result) releases everything whatever the result's type.
 * Row arrays grow with realloc while a statement steps and are then
 * adopted by the arena as they are (no copy).
 */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

enum { ARENA_MAGIC = 0x47424152, CHUNK_BYTES = 64 * 1024 };

typedef struct chunk {
    struct chunk *next;
    void *adopted;          /* a block adopted as is, or NULL */
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

struct gb__arena {
    chunk *head;
    uint32_t magic;
};

typedef struct result_header {
    _Alignas(16) gb__arena arena;
} result_header;

void *gb__result_new(size_t size, gb__arena **arena) {
    result_header *h = calloc(1, sizeof *h + size);
    if (!h) return NULL;
    h->arena.magic = ARENA_MAGIC;
    *arena = &h->arena;
    return h + 1;
}

void gb_store_free(void *result) {
    if (!result) return;
    result_header *h = (result_header *)result - 1;
    if (h->arena.magic != ARENA_MAGIC) return;   /* not ours: leak rather than crash */
    h->arena.magic = 0;
    for (chunk *c = h->arena.head, *next; c; c = next) {
        next = c->next;
        free(c->adopted);
        free(c);
    }
    free(h);
}

static chunk *new_chunk(gb__arena *a, size_t cap) {
    chunk *c = malloc(sizeof *c + cap);
    if (!c) return NULL;
    *c = (chunk){a->head, NULL, 0, cap};
    a->head = c;
    return c;
}

void *gb__arena_alloc(gb__arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    chunk *c = a->head;
    if (!c || c->adopted || c->cap - c->used < n) {
        c = new_chunk(a, n > CHUNK_BYTES ? n : CHUNK_BYTES);
        if (!c) return NULL;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

bool gb__arena_adopt_result(gb__arena *a, void *result) {
    if (!result) return true;
    chunk *holder = malloc(sizeof *holder);
    if (!holder) return false;
    result_header *h = (result_header *)result - 1;
    for (chunk *c = h->arena.head, *next; c; c = next) {   /* its chunks join a's */
        next = c->next;
        c->next = a->head;
        a->head = c;
    }
    h->arena.head = NULL;
    h->arena.magic = 0;
    *holder = (chunk){a->head, h, 0, 0};   /* and its header block, freed as adopted */
    a->head = holder;
    return true;
}

const char *gb__arena_strdup(gb__arena *a, const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *p = gb__arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

void *gb__rows_push(gb__rows *r) {
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        void *data = realloc(r->data, cap * r->elem);
        if (!data) return NULL;
        r->data = data;
        r->cap = cap;
    }
    void *row = (char *)r->data + r->count++ * r->elem;
    memset(row, 0, r->elem);
    return row;
}

void gb__rows_release(gb__rows *r) {
    free(r->data);
    *r = (gb__rows){.elem = r->elem};
}

void *gb__rows_into(gb__arena *a, gb__rows *r) {
    if (!r->count) {
        gb__rows_release(r);
        return NULL;
    }
    chunk *c = new_chunk(a, 0);
    if (!c) return NULL;   /* the caller reports out of memory; rows stay with it */
    c->adopted = r->data;
    *r = (gb__rows){.elem = r->elem};
    return c->adopted;
}
