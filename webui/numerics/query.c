/* numerics/query.c — a run's numerics alerts in first-occurrence order.
 *
 * The reader returns alerts by id (arrival order), a page at a time. The
 * dashboard wants them by (step, id): what happened first comes first even
 * when several processes wrote one run, with filters and a window. This is
 * built on the reader in two passes, each reading the run in bounded pages:
 *
 *   1. every alert: totals, the run's first alert, counts per op type,
 *      and the (step, id) key of each alert the filters let through;
 *      the keys are sorted and the window [offset, offset + limit) cut;
 *   2. only the id range of the window: the rows whose key falls inside
 *      it are copied, straight into their place.
 *
 * Memory stays at 16 bytes per matching alert plus the window's rows,
 * whatever the run holds; at most scan_max alerts are read (beyond that
 * the view says it is truncated). Pass 2 stops at the last id pass 1
 * read, so alerts arriving in between cannot shift the window.
 */
#include <stdlib.h>
#include <string.h>

#include "numerics/internal.h"

#define PAGE 512   /* rows per reader call */

/* ---- keys: first-occurrence order ---------------------------------------------- */

typedef struct key {
    int64_t step, id;   /* step GB_STEP_NONE (the smallest) for alerts without one */
} key;

static key key_of(const gb_numerics_row *r) { return (key){r->step, r->id}; }

static int key_cmp(const void *pa, const void *pb) {
    const key *a = pa, *b = pb;
    if (a->step != b->step) return a->step < b->step ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static bool matches(const gb__numerics_filter *f, const gb_numerics_row *r) {
    if (f->op_type && strcmp(f->op_type, r->op_type)) return false;
    if (r->step == GB_STEP_NONE) return f->step_min == GB_STEP_MIN && f->step_max == GB_STEP_MAX;
    return r->step >= f->step_min && r->step <= f->step_max;
}

/* A row and its strings in one allocation (freed with free()). */
static gb_numerics_row *copy_row(const gb_numerics_row *r) {
    enum { N = 7 };
    const char *src[N] = {r->op_type,    r->op_name, r->function, r->scope_path,
                          r->forward_op, r->message, r->detail};
    size_t len[N], total = sizeof *r;
    for (int i = 0; i < N; i++) total += len[i] = strlen(src[i]) + 1;
    gb_numerics_row *c = malloc(total);
    if (!c) return NULL;
    *c = *r;
    const char **dst[N] = {&c->op_type,    &c->op_name, &c->function, &c->scope_path,
                           &c->forward_op, &c->message, &c->detail};
    char *p = (char *)(c + 1);
    for (int i = 0; i < N; i++) {
        memcpy(p, src[i], len[i]);
        *dst[i] = p;
        p += len[i];
    }
    return c;
}

/* ---- reading a run page by page --------------------------------------------------- */

/* Called for each row read; false: out of memory (the scan stops). */
typedef bool (*visit_fn)(void *ctx, const gb_numerics_row *r);

typedef struct scan_range {
    int64_t after, upto;   /* ids in (after, upto] */
    size_t max;            /* rows to visit at most */
} scan_range;

/* Visits the run's alerts of range in id order. *more: rows past max exist. */
static gb_store_status scan(gb_store *s, const char *run, scan_range range, visit_fn visit,
                            void *ctx, bool *more) {
    size_t seen = 0;
    *more = false;
    for (;;) {
        gb_numerics *page = NULL;
        gb_event_query q = {range.after, PAGE};
        gb_store_status st = gb_store_numerics(s, run, &q, &page);
        if (st != GB_STORE_OK) return st;
        bool done = false, last_page = page->count < PAGE;
        for (size_t i = 0; i < page->count && !done; i++) {
            const gb_numerics_row *r = &page->rows[i];
            if (r->id > range.upto) {
                done = true;
            } else if (seen == range.max) {
                *more = done = true;
            } else {
                seen++;
                range.after = r->id;
                if (!visit(ctx, r)) st = GB_STORE_ERR_MEMORY, done = true;
            }
        }
        gb_store_free(page);
        if (st != GB_STORE_OK || done || last_page) return st;
    }
}

/* ---- pass 1: totals, first alert, op types, keys ------------------------------------ */

typedef struct pass1 {
    const gb__numerics_filter *f;
    gb__numerics_view *v;
    key *keys;
    size_t nkeys, cap;
    size_t type_cap;
} pass1;

static bool count_type(gb__numerics_view *v, size_t *cap, const char *op_type) {
    for (size_t i = 0; i < v->type_count; i++)
        if (!strcmp(v->types[i].op_type, op_type)) return ++v->types[i].count, true;
    if (v->type_count == *cap) {
        size_t n = *cap ? 2 * *cap : 16;
        gb__numerics_type_count *t = realloc(v->types, n * sizeof *t);
        if (!t) return false;
        v->types = t;
        *cap = n;
    }
    char *name = strdup(op_type);
    if (!name) return false;
    v->types[v->type_count++] = (gb__numerics_type_count){name, 1};
    return true;
}

static bool push_key(pass1 *p, key k) {
    if (p->nkeys == p->cap) {
        size_t n = p->cap ? 2 * p->cap : 256;
        key *keys = realloc(p->keys, n * sizeof *keys);
        if (!keys) return false;
        p->keys = keys;
        p->cap = n;
    }
    p->keys[p->nkeys++] = k;
    return true;
}

static bool visit_all(void *ctx, const gb_numerics_row *r) {
    pass1 *p = ctx;
    gb__numerics_view *v = p->v;
    v->total++;
    v->last_id = r->id;
    if (r->step != GB_STEP_NONE) {
        if (v->first_step == GB_STEP_NONE || r->step < v->first_step) v->first_step = r->step;
        if (v->last_step == GB_STEP_NONE || r->step > v->last_step) v->last_step = r->step;
    }
    key k = key_of(r);
    if (!v->first || key_cmp(&k, &(key){v->first->step, v->first->id}) < 0) {
        gb_numerics_row *c = copy_row(r);
        if (!c) return false;
        free(v->first);
        v->first = c;
    }
    if (!count_type(v, &p->type_cap, r->op_type)) return false;
    if (!matches(p->f, r)) return true;
    v->matched++;
    if (r->id <= p->f->after_id) return true;
    v->window_matched++;
    return p->f->limit == 0 || push_key(p, k);
}

static int type_cmp(const void *pa, const void *pb) {
    const gb__numerics_type_count *a = pa, *b = pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return strcmp(a->op_type, b->op_type);
}

/* ---- pass 2: the window's rows ------------------------------------------------------- */

typedef struct pass2 {
    const gb__numerics_filter *f;
    const key *window;
    size_t n;
    gb_numerics_row **rows;   /* rows[i] belongs to window[i] */
} pass2;

static bool visit_window(void *ctx, const gb_numerics_row *r) {
    pass2 *p = ctx;
    key k = key_of(r);
    if (r->id <= p->f->after_id || !matches(p->f, r)) return true;
    const key *at = bsearch(&k, p->window, p->n, sizeof k, key_cmp);
    if (!at) return true;   /* outside the window */
    gb_numerics_row **slot = &p->rows[at - p->window];
    return *slot || (*slot = copy_row(r)) != NULL;
}

static gb_store_status read_window(gb_store *s, const char *run, const gb__numerics_filter *f,
                                   const key *window, size_t n, gb__numerics_view *v) {
    int64_t lo = window[0].id, hi = window[0].id;
    for (size_t i = 1; i < n; i++) {
        if (window[i].id < lo) lo = window[i].id;
        if (window[i].id > hi) hi = window[i].id;
    }
    v->rows = calloc(n, sizeof *v->rows);
    if (!v->rows) return GB_STORE_ERR_MEMORY;
    pass2 p = {f, window, n, v->rows};
    bool more;
    gb_store_status st = scan(s, run, (scan_range){lo - 1, hi, SIZE_MAX}, visit_window, &p, &more);
    /* Rows are never deleted, so every slot is filled; keep the order dense
     * all the same should one have gone. */
    for (size_t i = 0; i < n; i++)
        if (v->rows[i]) v->rows[v->count++] = v->rows[i];
    return st;
}

/* ---- the view ----------------------------------------------------------------------------- */

gb_store_status gb__numerics_read(gb_store *s, const char *run, const gb__numerics_filter *f,
                                  gb__numerics_view *out) {
    memset(out, 0, sizeof *out);
    out->first_step = out->last_step = GB_STEP_NONE;
    pass1 p = {.f = f, .v = out};
    size_t max = f->scan_max ? f->scan_max : GB__NUMERICS_SCAN_MAX;
    gb_store_status st =
        scan(s, run, (scan_range){0, INT64_MAX, max}, visit_all, &p, &out->truncated);
    if (st == GB_STORE_OK) {
        /* (qsort must not see the NULL of an empty array.) */
        if (out->type_count) qsort(out->types, out->type_count, sizeof *out->types, type_cmp);
        if (p.nkeys) qsort(p.keys, p.nkeys, sizeof *p.keys, key_cmp);
        if (f->offset < p.nkeys) {
            size_t n = p.nkeys - f->offset < f->limit ? p.nkeys - f->offset : f->limit;
            st = read_window(s, run, f, p.keys + f->offset, n, out);
        }
    }
    free(p.keys);
    return st;
}

void gb__numerics_view_free(gb__numerics_view *v) {
    free(v->first);
    for (size_t i = 0; i < v->type_count; i++) free(v->types[i].op_type);
    free(v->types);
    for (size_t i = 0; i < v->count; i++) free(v->rows[i]);
    free(v->rows);
    memset(v, 0, sizeof *v);
}

bool gb__numerics_any(gb_store *s, const char *run) {
    gb_numerics *one = NULL;
    bool any = gb_store_numerics(s, run, &(gb_event_query){0, 1}, &one) == GB_STORE_OK &&
               one->count > 0;
    gb_store_free(one);
    return any;
}
