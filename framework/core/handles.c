/* core/handles.c — objects by id: the resource handles of graphs.
 *
 * A graph names the variables and optimizers it uses by id, never by
 * pointer, so it can be hashed, printed and saved, and so a freed object is
 * noticed (its id no longer resolves) instead of read after its free. Ids
 * are never reused. A table is pages of atomic slots that never move, so
 * lookups from any thread take no lock; only adding a page does.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/internal.h"

static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;

static _Atomic(void *) *slot(gb_handles *t, int64_t id, bool create) {
    if (id <= 0 || id >= (int64_t)GB_HANDLE_PAGE * GB_HANDLE_PAGES) return NULL;
    int64_t p = id / GB_HANDLE_PAGE;
    _Atomic(void *) *page = atomic_load_explicit(&t->pages[p], memory_order_acquire);
    if (!page && create) {
        pthread_mutex_lock(&grow_lock);
        if (!(page = atomic_load(&t->pages[p]))) {
            page = calloc(GB_HANDLE_PAGE, sizeof *page);
            atomic_store_explicit(&t->pages[p], page, memory_order_release);
        }
        pthread_mutex_unlock(&grow_lock);
    }
    return page ? &page[id % GB_HANDLE_PAGE] : NULL;
}

int64_t gb__handle_add(gb_handles *t, void *obj, const char *what) {
    int64_t id = atomic_fetch_add(&t->next_id, 1) + 1;
    _Atomic(void *) *s = slot(t, id, true);
    if (!s) {
        gb__error(GB_ERR_MEMORY, NULL, "no room for %s number %lld", what, (long long)id);
        return 0;
    }
    atomic_store_explicit(s, obj, memory_order_release);
    return id;
}

void gb__handle_remove(gb_handles *t, int64_t id) {
    _Atomic(void *) *s = slot(t, id, false);
    if (s) atomic_store_explicit(s, NULL, memory_order_release);
}

void *gb__handle_get(gb_handles *t, int64_t id) {
    _Atomic(void *) *s = slot(t, id, false);
    return s ? atomic_load_explicit(s, memory_order_acquire) : NULL;
}
