/* ops/variable_registry.c — variables by id: the resource handles of
 * graphs.
 *
 * A graph names the variables it reads and writes by id, never by
 * pointer, so it can be hashed, printed and saved, and so a concrete
 * function can tell that a variable it captured was freed (its id no
 * longer resolves). Ids are never reused. The table is pages of atomic
 * slots that never move, so lookups from any thread need no lock.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ops/internal.h"

enum { PAGE = 1024, MAX_PAGES = 4096 };

static _Atomic(struct gb_variable *) *_Atomic pages[MAX_PAGES];
static _Atomic int64_t next_id;
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;

static _Atomic(struct gb_variable *) *slot(int64_t id, bool create) {
    if (id <= 0 || id >= (int64_t)PAGE * MAX_PAGES) return NULL;
    int64_t p = id / PAGE;
    _Atomic(struct gb_variable *) *page = atomic_load_explicit(&pages[p], memory_order_acquire);
    if (!page && create) {
        pthread_mutex_lock(&grow_lock);
        if (!(page = atomic_load(&pages[p]))) {
            page = calloc(PAGE, sizeof *page);
            atomic_store_explicit(&pages[p], page, memory_order_release);
        }
        pthread_mutex_unlock(&grow_lock);
    }
    return page ? &page[id % PAGE] : NULL;
}

int64_t gb__variable_register(struct gb_variable *v) {
    int64_t id = atomic_fetch_add(&next_id, 1) + 1;
    _Atomic(struct gb_variable *) *s = slot(id, true);
    if (!s) {
        gb__error(GB_ERR_MEMORY, NULL, "no room for variable number %lld", (long long)id);
        return 0;
    }
    atomic_store_explicit(s, v, memory_order_release);
    return id;
}

void gb__variable_unregister(int64_t id) {
    _Atomic(struct gb_variable *) *s = slot(id, false);
    if (s) atomic_store_explicit(s, NULL, memory_order_release);
}

struct gb_variable *gb__variable_by_id(int64_t id) {
    _Atomic(struct gb_variable *) *s = slot(id, false);
    return s ? atomic_load_explicit(s, memory_order_acquire) : NULL;
}

int gb__call_variable_ids(const gb_op_call *c, int64_t *ids, int cap) {
    int n = c->attrs->nvars < cap ? c->attrs->nvars : cap;
    for (int i = 0; i < n; i++) ids[i] = c->attrs->vars[i];
    return n;
}
