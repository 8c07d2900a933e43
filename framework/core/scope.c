/* core/scope.c — memory scopes: arenas that own every tensor made inside them.
 *
 * A training step runs in one scope; ending it releases all intermediates
 * at once, so user code never frees a tensor. Each scope bump-allocates
 * from 64 KiB chunks; large tensors get a block of their own. Chunks and
 * blocks go back to per-thread free lists (by power-of-two size class)
 * when a scope ends, so a steady training loop calls malloc only while it
 * warms up and its resident memory stays flat.
 *
 * Scopes also run deferred actions when they end (releasing references to
 * variable buffers, freeing tapes' records), newest first.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/internal.h"

enum {
    CHUNK_BYTES = 64 * 1024,
    ALIGN = 64,
    MIN_CLASS = 16,         /* 2^16 = 64 KiB */
    MAX_CLASS = 40,
};

/* Freed blocks wait in per-thread caches for the next step. The cap is in
 * bytes, not blocks: a convolution step frees dozens of large blocks of
 * one size class, and a count cap would hand them back to the kernel
 * (and page-fault them in again) every step. */
#define CACHE_BYTES ((size_t)256 << 20)

typedef struct block {
    struct block *next;
    size_t cap;   /* usable bytes after the header */
    size_t used;
    int cls;
} block;

#define BLOCK_HEADER (((sizeof(block) + ALIGN - 1) / ALIGN) * ALIGN)

typedef struct deferred {
    gb_defer_fn fn;
    void *arg;
} deferred;

typedef struct gb_scope {
    struct gb_scope *parent;
    int depth;
    block *chunk;       /* current bump chunk; older chunks follow via next */
    block *big;         /* blocks holding one large allocation each */
    deferred *defers;
    int ndefers, capdefers;
} gb_scope;

typedef struct thread_mem {
    gb_scope root;
    gb_scope *current;
    gb_scope *free_scopes;   /* recycled scope structs, linked by parent */
    block *cache[MAX_CLASS + 1];
    size_t bytes_in_use;
    size_t bytes_cached;
    bool ready;
} thread_mem;

static _Thread_local thread_mem tm;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg);
static void make_exit_key(void) { pthread_key_create(&exit_key, thread_exit); }

static thread_mem *mem(void) {
    if (!tm.ready) {
        tm.ready = true;
        tm.current = &tm.root;
        /* Threads that made tensors (pipelines, servers) give their memory
         * back when they exit. */
        pthread_once(&exit_key_once, make_exit_key);
        pthread_setspecific(exit_key, &tm);
    }
    return &tm;
}

gb_scope *gb__scope_current(void) { return mem()->current; }

int gb_scope_depth(void) { return mem()->current->depth; }

size_t gb_scope_bytes_in_use(void) { return mem()->bytes_in_use; }

static int size_class(size_t n) {
    int cls = MIN_CLASS;
    while (cls < MAX_CLASS && ((size_t)1 << cls) < n) cls++;
    return cls;
}

static block *block_get(size_t need) {
    thread_mem *m = mem();
    int cls = size_class(need + BLOCK_HEADER);
    block *b = m->cache[cls];
    if (b) {
        m->cache[cls] = b->next;
        m->bytes_cached -= (size_t)1 << cls;
    } else {
        size_t total = (size_t)1 << cls;
        if (total < need + BLOCK_HEADER) return NULL; /* beyond 1 TiB */
        b = aligned_alloc(ALIGN, total);
        if (!b) return NULL;
        b->cap = total - BLOCK_HEADER;
        b->cls = cls;
    }
    b->next = NULL;
    b->used = 0;
    m->bytes_in_use += b->cap + BLOCK_HEADER;
    return b;
}

static void block_put(block *b) {
    thread_mem *m = mem();
    m->bytes_in_use -= b->cap + BLOCK_HEADER;
    size_t size = (size_t)1 << b->cls;
    if (m->bytes_cached + size <= CACHE_BYTES) {
        b->next = m->cache[b->cls];
        m->cache[b->cls] = b;
        m->bytes_cached += size;
    } else {
        free(b);
    }
}

static void *block_data(block *b) { return (char *)b + BLOCK_HEADER; }

void *gb__scope_alloc_in(gb_scope *s, size_t n) {
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (n == 0) n = ALIGN;
    block *c = s->chunk;
    if (c && c->cap - c->used >= n) {
        void *p = (char *)block_data(c) + c->used;
        c->used += n;
        return p;
    }
    /* Large requests get their own block so chunks stay dense. */
    bool big = n > CHUNK_BYTES / 4;
    block *b = block_get(big ? n : CHUNK_BYTES - BLOCK_HEADER);
    if (!b) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory allocating %zu bytes", n);
        return NULL;
    }
    if (big) {
        b->next = s->big;
        s->big = b;
    } else {
        b->next = s->chunk;
        s->chunk = b;
    }
    b->used = n;
    return block_data(b);
}

void *gb__scope_alloc(size_t n) { return gb__scope_alloc_in(mem()->current, n); }

bool gb__scope_defer_in(gb_scope *s, gb_defer_fn fn, void *arg) {
    if (s->ndefers == s->capdefers) {
        int cap = s->capdefers ? 2 * s->capdefers : 16;
        deferred *d = realloc(s->defers, (size_t)cap * sizeof *d);
        if (!d) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory in scope bookkeeping");
            return false;
        }
        s->defers = d;
        s->capdefers = cap;
    }
    s->defers[s->ndefers++] = (deferred){fn, arg};
    return true;
}

bool gb__scope_defer(gb_defer_fn fn, void *arg) {
    return gb__scope_defer_in(mem()->current, fn, arg);
}

void gb_scope_begin(void) {
    thread_mem *m = mem();
    gb_scope *s = m->free_scopes;
    if (s) {
        m->free_scopes = s->parent;
    } else {
        s = calloc(1, sizeof *s);
        if (!s) {
            /* Keep allocating into the current scope rather than fail every
             * later op; the error says what happened. */
            gb__error(GB_ERR_MEMORY, NULL, "out of memory opening a scope");
            return;
        }
    }
    s->parent = m->current;
    s->depth = m->current->depth + 1;
    s->chunk = s->big = NULL;
    s->ndefers = 0;
    m->current = s;
}

static void release_blocks(block *b) {
    while (b) {
        block *next = b->next;
        block_put(b);
        b = next;
    }
}

void gb_scope_end(void) {
    thread_mem *m = mem();
    gb_scope *s = m->current;
    if (s == &m->root) {
        gb__error(GB_ERR_STATE, NULL, "gb_scope_end() without a matching gb_scope_begin()");
        return;
    }
    gb_scope_end_hook_fn on_end = atomic_load_explicit(&gb__scope_end_hook, memory_order_acquire);
    if (on_end) on_end(s->depth);
    /* Deferred actions may still read scope memory: run them first. */
    while (s->ndefers > 0) {
        deferred d = s->defers[--s->ndefers];
        d.fn(d.arg);
    }
    release_blocks(s->chunk);
    release_blocks(s->big);
    m->current = s->parent;
    s->parent = m->free_scopes;
    m->free_scopes = s;
}

/* Ends every open scope of an exiting thread and frees its caches. The
 * root scope's blocks go too: nothing of this thread can be used after. */
static void thread_exit(void *arg) {
    thread_mem *m = arg;
    while (m->current != &m->root) gb_scope_end();
    while (m->root.ndefers > 0) {
        deferred d = m->root.defers[--m->root.ndefers];
        d.fn(d.arg);
    }
    free(m->root.defers);
    release_blocks(m->root.chunk);
    release_blocks(m->root.big);
    m->root = (gb_scope){0};
    for (int c = 0; c <= MAX_CLASS; c++) {
        while (m->cache[c]) {
            block *next = m->cache[c]->next;
            free(m->cache[c]);
            m->cache[c] = next;
        }
    }
    m->bytes_cached = 0;
    while (m->free_scopes) {
        gb_scope *next = m->free_scopes->parent;
        free(m->free_scopes->defers);
        free(m->free_scopes);
        m->free_scopes = next;
    }
    m->current = &m->root;
}

/* ---- tensors in scopes ---------------------------------------------------- */

int64_t gb__shape_size(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) return -1; /* a symbolic shape with an unknown dim */
        n *= shape[i];
    }
    return n;
}

bool gb__shape_fits(int rank, const int64_t *shape, size_t elem_size, const char **unit) {
    int64_t n = 1, bytes;
    /* The dims past zero are multiplied out too: a [0, 2^40, 2^40] tensor
     * holds nothing, but its strides would wrap. */
    for (int i = 0; i < rank; i++)
        if (shape[i] > 0 && __builtin_mul_overflow(n, shape[i], &n)) {
            *unit = "elements";
            return false;
        }
    if (__builtin_mul_overflow(n, (int64_t)elem_size, &bytes)) {
        *unit = "bytes";
        return false;
    }
    return true;
}

bool gb__shape_check(const char *op_type, const char *what, int rank, const int64_t *shape,
                     size_t elem_size) {
    const char *unit;
    if (gb__shape_fits(rank, shape, elem_size, &unit)) return true;
    char buf[160];
    gb__error(GB_ERR_SHAPE, op_type, "%s: shape %s has more than 2^63 %s", what,
              gb__shape_fmt(rank, shape, buf, sizeof buf), unit);
    return false;
}

/* Ids are unique in the process and grow on each thread (a tape compares
 * them with its start). Threads take blocks of ids, so making a tensor
 * costs no atomic instruction. */
enum { ID_BLOCK = 4096 };
uint64_t gb__next_tensor_id(void) {
    static _Atomic uint64_t next_block = 1;
    static _Thread_local uint64_t next, end;
    if (next == end) {
        next = atomic_fetch_add_explicit(&next_block, ID_BLOCK, memory_order_relaxed);
        end = next + ID_BLOCK;
    }
    return next++;
}

#define HEADER_BYTES (((sizeof(gb_tensor) + sizeof(gb_buffer)) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static gb_tensor *tensor_in(gb_scope *s, gb_dtype dt, int rank, const int64_t *shape,
                            bool alloc_data) {
    int64_t size = gb__shape_size(rank, shape);
    size_t nbytes = alloc_data ? (size_t)size * gb_dtype_size(dt) : 0;
    char *p = gb__scope_alloc_in(s, HEADER_BYTES + nbytes);
    if (!p) return NULL;
    gb_tensor *t = (gb_tensor *)p;
    gb_buffer *b = (gb_buffer *)(p + sizeof(gb_tensor));
    t->dtype = dt;
    t->rank = (uint8_t)rank;
    t->flags = 0;
    t->size = size;
    for (int i = 0; i < rank; i++) t->shape[i] = shape[i];
    t->scope = s;
    t->id = gb__next_tensor_id();
    t->tape_bits = 0;
    t->graph_id = 0;
    t->node = -1;
    t->out_index = 0;
    if (alloc_data) {
        *b = (gb_buffer){.data = p + HEADER_BYTES, .nbytes = nbytes, .scope = s};
        t->buf = b;
        t->data = b->data;
    } else {
        t->buf = NULL;
        t->data = NULL;
    }
    return t;
}

gb_tensor *gb__tensor_new(gb_dtype dt, int rank, const int64_t *shape, bool alloc_data) {
    return tensor_in(mem()->current, dt, rank, shape, alloc_data);
}

gb_tensor *gb__tensor_new_in(gb_scope *s, gb_dtype dt, int rank, const int64_t *shape,
                             bool alloc_data) {
    return tensor_in(s, dt, rank, shape, alloc_data);
}

bool gb__view_into(gb_tensor *out, gb_tensor *src) {
    out->buf = src->buf;
    out->data = src->data;
    out->flags = src->flags;
    if (src->buf && src->buf->heap) {
        if (!gb__scope_defer((gb_defer_fn)gb__buffer_unref, src->buf)) return false;
        src->buf->refcount++;
    }
    return true;
}

gb_tensor *gb_keep(gb_tensor *t) {
    if (!t) return NULL;
    thread_mem *m = mem();
    gb_scope *s = t->scope;
    if (s != m->current) {
        gb__error(GB_ERR_STATE, NULL,
                  "gb_keep: the tensor does not belong to the current scope (depth %d); keep "
                  "it from the scope that created it",
                  m->current->depth);
        return NULL;
    }
    if (!s->parent) return t; /* the root scope outlives everything */
    gb_scope *p = s->parent;
    bool owns_data = t->buf && !t->buf->heap && t->buf->scope == s;
    /* Strings' bytes are apart from the elements: they always move along. */
    bool strings = t->dtype == GB_STRING && t->data;
    gb_tensor *k = tensor_in(p, t->dtype, t->rank, t->shape, owns_data || strings);
    if (!k) return NULL;
    if (strings) {
        if (!gb__strings_pack_in(p, k->data, t->data, t->size)) return NULL;
    } else if (owns_data) {
        memcpy(k->data, t->data, (size_t)t->size * gb_dtype_size(t->dtype));
    } else {
        k->buf = t->buf;
        k->data = t->data;
        if (t->buf && t->buf->heap) {
            t->buf->refcount++;
            gb__scope_defer_in(p, (gb_defer_fn)gb__buffer_unref, t->buf);
        }
    }
    k->flags = t->flags;
    k->id = t->id; /* the same value for tapes */
    k->tape_bits = t->tape_bits;
    k->graph_id = t->graph_id;
    k->node = t->node;
    k->out_index = t->out_index;
    return k;
}
