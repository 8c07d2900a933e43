/* io/checkpoint_delayed.c — delayed restoration: a restore into a model
 * whose layers are not built yet keeps the values it found for their
 * weights, and assigns each when a build makes its weight, as TensorFlow
 * queues restorations and applies them on creation.
 *
 * A restore makes one record (gb__delayed). For every tracked module with
 * a module not built yet (a "root" it waits in) it takes a reference to
 * the module, notes the variables that exist already (the restore itself
 * accounts for those) and keeps a copy of every file value under the
 * root's name that no existing variable claimed. Layers build lazily in
 * nn/, which must not call io by name: nn calls gb__module_built_hook
 * after each build, and the hook installed here walks the records that
 * still wait. A new variable of a watched root takes its kept value —
 * checked first, dtype and shape, with an error naming the path when it
 * does not fit — or counts as missing. When a root's whole tree is built,
 * the values nothing claimed count as unexpected and the record lets the
 * root go; the live counts are what gb_checkpoint_restore_status reports.
 *
 * Builds can run on any thread (a data-pipeline map calling a layer), so
 * the records that wait sit in one list under a mutex.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/internal.h"
#include "nn/internal.h"

enum { NAME_BYTES = 64 };

typedef struct root {
    gb_module *module;    /* a reference of the record's own until done */
    char name[NAME_BYTES];/* its tracked name: the first part of its paths */
    bool done;            /* fully built: it waits for nothing more */
} root;

typedef struct kept {
    gb__ckpt_entry e;     /* e.data: a malloc'd copy; NULL once used or given up */
    int root;
} kept;

/* A variable of a root already accounted for (by the restore or a build). */
typedef struct seen {
    int root;
    int64_t id;
} seen;

struct gb__delayed {
    gb_restore_status st; /* live: the restore's counts, updated by builds */
    root *roots;
    int nroots, caproots;
    kept *vals;
    int nvals, capvals;
    seen *seen;
    int nseen, capseen;
    bool listed;          /* in the list of records that wait */
    gb__delayed *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gb__delayed *waiting;   /* the records builds deliver to */

/* Room for one more element of size bytes in *v (n used of *cap). */
static bool grow(void **v, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 8;
    void *g = realloc(*v, (size_t)c * size);
    if (!g) {
        gb__error(GB_ERR_MEMORY, NULL, "checkpoint restore: out of memory");
        return false;
    }
    *v = g;
    *cap = c;
    return true;
}

gb__delayed *gb__delayed_new(const char *file) {
    gb__delayed *d = calloc(1, sizeof *d);
    if (!d) gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", file);
    else snprintf(d->st.file, sizeof d->st.file, "%s", file);
    return d;
}

bool gb__module_tree_built(gb_module *m) {
    if (!gb_module_built(m)) return false;
    for (int i = 0; i < gb_module_num_submodules(m); i++)
        if (!gb__module_tree_built(gb_module_submodule(m, i))) return false;
    return true;
}

/* Whether m is from or one of its submodules, at any depth. */
static bool reaches(gb_module *from, const gb_module *m) {
    if (from == m) return true;
    for (int i = 0; i < gb_module_num_submodules(from); i++)
        if (reaches(gb_module_submodule(from, i), m)) return true;
    return false;
}

/* ---- what a restore records ------------------------------------------------------------ */

static bool was_seen(const gb__delayed *d, int r, const gb_variable *v) {
    int64_t id = gb__variable_id(v);
    for (int i = 0; i < d->nseen; i++)
        if (d->seen[i].root == r && d->seen[i].id == id) return true;
    return false;
}

static bool mark_seen(gb__delayed *d, int r, const gb_variable *v) {
    if (!grow((void **)&d->seen, &d->capseen, d->nseen, sizeof *d->seen)) return false;
    d->seen[d->nseen++] = (seen){r, gb__variable_id(v)};
    return true;
}

bool gb__delayed_watch(gb__delayed *d, const char *name, gb_module *module) {
    if (!grow((void **)&d->roots, &d->caproots, d->nroots, sizeof *d->roots)) return false;
    root *r = &d->roots[d->nroots++];
    *r = (root){.module = gb_module_retain(module)};
    snprintf(r->name, sizeof r->name, "%s", name);
    int n = 0;
    gb_variable *const *vars = gb_module_variables(module, &n);
    for (int i = 0; i < n; i++)
        if (!mark_seen(d, d->nroots - 1, vars[i])) return false;
    return true;
}

/* The root whose paths path lies under, or -1. */
static int root_of(const gb__delayed *d, const char *path) {
    for (int r = 0; r < d->nroots; r++) {
        size_t len = strlen(d->roots[r].name);
        if (strncmp(path, d->roots[r].name, len) == 0 && path[len] == '/') return r;
    }
    return -1;
}

bool gb__delayed_covers(const gb__delayed *d, const char *path) { return root_of(d, path) >= 0; }

bool gb__delayed_keep(gb__delayed *d, const gb__ckpt_entry *e, const void *data) {
    if (!grow((void **)&d->vals, &d->capvals, d->nvals, sizeof *d->vals)) return false;
    void *copy = malloc(e->nbytes ? (size_t)e->nbytes : 1);
    if (!copy) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory keeping '%s'", d->st.file, e->path);
        return false;
    }
    memcpy(copy, data, (size_t)e->nbytes);
    kept *k = &d->vals[d->nvals++];
    *k = (kept){.e = *e, .root = root_of(d, e->path)};
    k->e.data = copy;
    return true;
}

/* ---- delivering values to builds ---------------------------------------------------------- */

/* Frees a kept value: used, or never to be. */
static void drop(kept *k) {
    free((void *)k->e.data);
    k->e.data = NULL;
}

/* Root r is fully built: the values nothing claimed are unused for good. */
static void settle(gb__delayed *d, int r) {
    for (int i = 0; i < d->nvals; i++) {
        if (d->vals[i].root != r || !d->vals[i].e.data) continue;
        gb__status_count(&d->st.unexpected, d->st.first_unexpected, sizeof d->st.first_unexpected,
                    d->vals[i].e.path);
        drop(&d->vals[i]);
    }
    d->roots[r].done = true;
    gb_module_free(d->roots[r].module);
    d->roots[r].module = NULL;
}

/* Settles every root whose tree is fully built by now. */
static void settle_built(gb__delayed *d) {
    for (int r = 0; r < d->nroots; r++)
        if (!d->roots[r].done && gb__module_tree_built(d->roots[r].module)) settle(d, r);
}

/* The kept value for variable v of root r, or NULL. */
static kept *value_for(gb__delayed *d, int r, const gb_variable *v) {
    size_t len = strlen(d->roots[r].name);
    for (int i = 0; i < d->nvals; i++) {
        kept *k = &d->vals[i];
        if (k->root == r && k->e.data && strcmp(k->e.path + len + 1, gb_variable_name(v)) == 0)
            return k;
    }
    return NULL;
}

/* Every new variable of module m (built just now) under root r, checked
 * (check) or assigned its value and accounted for (!check). */
static bool deliver_root(gb__delayed *d, int r, gb_module *m, bool check) {
    int n = 0;
    gb_variable *const *vars = gb_module_variables(m, &n);
    char note[160];
    snprintf(note, sizeof note, "(delayed: layer '%s' was built after the restore)",
             gb_module_name(m));
    for (int i = 0; i < n; i++) {
        gb_variable *v = vars[i];
        if (was_seen(d, r, v)) continue;
        kept *k = value_for(d, r, v);
        if (check) {
            if (k && !gb__ckpt_fits(d->st.file, &k->e, gb_variable_dtype(v), gb_variable_rank(v),
                                    gb_variable_shape(v), note))
                return false;
            continue;
        }
        if (!mark_seen(d, r, v)) return false;
        if (!k) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s", d->roots[r].name, gb_variable_name(v));
            gb__status_count(&d->st.missing, d->st.first_missing, sizeof d->st.first_missing,
                             path);
            continue;
        }
        if (!gb_variable_assign(v, gb_tensor_from(k->e.dtype, k->e.data, k->e.rank, k->e.dims)))
            return false;
        d->st.restored++;
        drop(k);
    }
    return true;
}

/* Module m was built: its new variables in every root of d that holds it,
 * all checked before any is assigned. */
static bool deliver(gb__delayed *d, gb_module *m) {
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < d->nroots; r++)
            if (!d->roots[r].done && reaches(d->roots[r].module, m) &&
                !deliver_root(d, r, m, pass == 0))
                return false;
    settle_built(d);
    return true;
}

/* Whether a root of d is not fully built yet. */
static bool still_waits(const gb__delayed *d) {
    for (int r = 0; r < d->nroots; r++)
        if (!d->roots[r].done) return true;
    return false;
}

/* Takes d out of the list (the lock held). */
static void unlist(gb__delayed *d) {
    for (gb__delayed **p = &waiting; *p; p = &(*p)->next)
        if (*p == d) {
            *p = d->next;
            break;
        }
    d->listed = false;
}

/* gb__module_built_hook: m was just built; every waiting record delivers. */
static bool on_module_built(gb_module *m) {
    pthread_mutex_lock(&lock);
    bool ok = true;
    for (gb__delayed *d = waiting, *next; d && ok; d = next) {
        next = d->next;
        ok = deliver(d, m);
        if (!still_waits(d)) unlist(d);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

/* ---- the record's life -------------------------------------------------------------------- */

/* The values still waiting, the path of the first into first. */
static int count_pending(const gb__delayed *d, char *first, size_t n) {
    int pending = 0;
    for (int i = 0; i < d->nvals; i++)
        if (d->vals[i].e.data) gb__status_count(&pending, first, n, d->vals[i].e.path);
    return pending;
}

void gb__delayed_start(gb__delayed *d, gb_restore_status *st) {
    st->pending = count_pending(d, st->first_pending, sizeof st->first_pending);
    pthread_mutex_lock(&lock);
    d->st = *st;
    if (still_waits(d)) {   /* at the end: of two restores into one module, the later wins */
        gb__delayed **tail = &waiting;
        while (*tail) tail = &(*tail)->next;
        *tail = d;
        d->next = NULL;
        d->listed = true;
        atomic_store_explicit(&gb__module_built_hook, on_module_built, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
}

void gb__delayed_status(gb__delayed *d, gb_restore_status *st) {
    pthread_mutex_lock(&lock);
    settle_built(d);
    if (d->listed && !still_waits(d)) unlist(d);
    *st = d->st;
    st->first_pending[0] = '\0';
    st->pending = count_pending(d, st->first_pending, sizeof st->first_pending);
    pthread_mutex_unlock(&lock);
}

void gb__delayed_free(gb__delayed *d) {
    if (!d) return;
    pthread_mutex_lock(&lock);
    if (d->listed) unlist(d);
    pthread_mutex_unlock(&lock);
    for (int r = 0; r < d->nroots; r++) gb_module_free(d->roots[r].module);
    for (int i = 0; i < d->nvals; i++) drop(&d->vals[i]);
    free(d->roots);
    free(d->vals);
    free(d->seen);
    free(d);
}
