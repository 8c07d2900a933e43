/* dist/buckets.c — which gradients travel together, and packing them.
 *
 * One allreduce per gradient would pay MPI's per-message cost dozens of
 * times a step; one for all of them could start only when backward ends.
 * Buckets sit between, as in PyTorch DDP: the variables are taken in
 * reverse order — backward finishes the last layer's gradients first — and
 * packed into buckets of at most bucket_bytes, so the first bucket can
 * travel while backward still works on the layers below it.
 *
 * Each bucket is one heap buffer. Gradients are copied in as they come;
 * the allreduce sums in place; the averaged gradients handed back are views
 * of the buffer, so unpacking copies nothing. A later step reuses the
 * buffer only when no tensor views it any more (else it takes a new one).
 */
#include <stdio.h>
#include <stdlib.h>

#include "dist/internal.h"

void gb__buckets_free(gb__buckets *p) {
    if (!p) return;
    for (int b = 0; b < p->nbuckets; b++) gb__buffer_unref(p->buckets[b].buf);
    free(p->vars);
    free(p->order);
    free(p->bucket_of);
    free(p->offset);
    free(p->buckets);
    free(p->what);
    free(p);
}

/* Appends variable v to the last bucket, or opens a new one when the last
 * is of another dtype or v would take it past the cap. */
static void place(gb__buckets *p, int v, int64_t cap) {
    gb_dtype dt = gb_variable_dtype(p->vars[v]);
    int64_t n = gb_variable_size(p->vars[v]);
    gb__bucket *last = p->nbuckets ? &p->buckets[p->nbuckets - 1] : NULL;
    int64_t bytes = last ? (last->elements + n) * (int64_t)gb_dtype_size(dt) : 0;
    if (!last || last->dtype != dt || bytes > cap) {
        int at = last ? last->first + last->count : 0;
        last = &p->buckets[p->nbuckets++];
        *last = (gb__bucket){.first = at, .dtype = dt, .ticket = -1};
    }
    p->order[last->first + last->count++] = v;
    p->bucket_of[v] = p->nbuckets - 1;
    p->offset[v] = last->elements;
    last->elements += n;
}

gb__buckets *gb__buckets_new(gb_variable *const *vars, int n, int64_t bucket_bytes) {
    gb__buckets *p = calloc(1, sizeof *p);
    size_t m = n > 0 ? (size_t)n : 1;
    if (p) {
        p->vars = malloc(m * sizeof *p->vars);
        p->order = malloc(m * sizeof *p->order);
        p->bucket_of = malloc(m * sizeof *p->bucket_of);
        p->offset = malloc(m * sizeof *p->offset);
        p->buckets = calloc(m, sizeof *p->buckets);
        p->what = calloc(m, sizeof *p->what);
    }
    if (!p || !p->vars || !p->order || !p->bucket_of || !p->offset || !p->buckets || !p->what) {
        gb__buckets_free(p);
        gb__error(GB_ERR_MEMORY, NULL, "gradient buckets: out of memory for %d variables", n);
        return NULL;
    }
    p->nvars = n;
    p->bucket_bytes = bucket_bytes;
    for (int v = 0; v < n; v++) p->vars[v] = vars[v];
    for (int v = n - 1; v >= 0; v--) place(p, v, bucket_bytes);
    for (int b = 0; b < p->nbuckets; b++)
        snprintf(p->what[b], sizeof p->what[b], "allreduce of gradient bucket %d of %d", b + 1,
                 p->nbuckets);
    return p;
}

bool gb__buckets_fits(const gb__buckets *p, gb_variable *const *vars, int n, int64_t bucket_bytes) {
    if (!p || p->nvars != n || p->bucket_bytes != bucket_bytes) return false;
    for (int v = 0; v < n; v++)
        if (p->vars[v] != vars[v]) return false;
    return true;
}

bool gb__buckets_begin_step(gb__buckets *p) {
    for (int b = 0; b < p->nbuckets; b++) {
        gb__bucket *k = &p->buckets[b];
        k->pending = k->count;
        k->ticket = -1;
        if (k->buf && k->buf->refcount == 1) continue;   /* nobody views last step's */
        gb__buffer_unref(k->buf);
        k->buf = gb__buffer_new_heap((size_t)k->elements * gb_dtype_size(k->dtype));
        if (!k->buf) return false;
    }
    return true;
}

int gb__buckets_pack(gb__buckets *p, int v, const gb_tensor *grad) {
    gb__bucket *k = &p->buckets[p->bucket_of[v]];
    size_t esize = gb_dtype_size(k->dtype);
    int64_t n = gb_variable_size(p->vars[v]);
    char *dst = (char *)k->buf->data + (size_t)p->offset[v] * esize;
    if (!grad) {
        memset(dst, 0, (size_t)n * esize);
    } else if (grad->dtype != k->dtype || grad->size != n || !grad->data) {
        char a[96];
        gb__error(GB_ERR_VALUE, NULL,
                  "averaging gradients: the gradient of '%s' is %s %s%s; the variable is %s "
                  "with %lld elements",
                  gb_variable_name(p->vars[v]), gb_dtype_name(grad->dtype),
                  gb_shape_str(grad, a, sizeof a), grad->data ? "" : " and symbolic (traced)",
                  gb_dtype_name(k->dtype), (long long)n);
        return -2;
    } else {
        memcpy(dst, grad->data, (size_t)n * esize);
    }
    return --k->pending == 0 ? p->bucket_of[v] : -1;
}

gb_tensor *gb__buckets_view(gb__buckets *p, int v) {
    gb_variable *var = p->vars[v];
    gb__bucket *k = &p->buckets[p->bucket_of[v]];
    gb_tensor *t = gb__tensor_new(k->dtype, gb_variable_rank(var), gb_variable_shape(var), false);
    if (!t || !gb__scope_defer((gb_defer_fn)gb__buffer_unref, k->buf)) return NULL;
    k->buf->refcount++;
    t->buf = k->buf;
    t->data = (char *)k->buf->data + (size_t)p->offset[v] * gb_dtype_size(k->dtype);
    return t;
}
