/* graph/control_flow/while_op.c — the While op: the loop a graph runs.
 *
 * Each iteration runs the cond's sub-graph, then the body's, in a memory
 * scope of its own that ends with the iteration: the loop variables live
 * in buffers of the kernel's, copied from the body's outputs, so a long
 * loop holds one iteration's memory, not all of them. Every iteration
 * checks the body kept each variable's dtype, rank and the dims no shape
 * invariant frees; more than max_iterations is an error naming the loop.
 * A loop recorded by a tape as it was traced also appends each changing
 * variable's value, as the iteration began, to a stack the gradient reads
 * backwards (while_grad.c), and outputs the stacks and the iteration
 * count after the loop variables.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/control_flow/internal.h"

/* A value held across iterations: a tensor header over a heap buffer. */
typedef struct held {
    gb_tensor t;
    size_t cap;
} held;

/* A stack of one variable's values, one per iteration, all one shape. */
typedef struct stack {
    char *data;
    size_t elem_bytes, cap;
    int rank;
    int64_t shape[GB_MAX_RANK];
} stack;

typedef struct loop_run {
    const gb_op_call *c;
    gb_cf_record *r;
    held vars[GB_MAX_OUTPUTS];
    gb_tensor *ptrs[GB_MAX_OUTPUTS];
    stack stacks[GB_MAX_OUTPUTS];
    int64_t iterations;
} loop_run;

static size_t bytes_of(const gb_tensor *t) { return (size_t)t->size * gb_dtype_size(t->dtype); }

/* "'model/while' in function 'f'": how run-time errors name the loop. */
static const char *loop_label(const loop_run *lr, char *buf, size_t n) {
    if (gb__tl_function)
        snprintf(buf, n, "'%s' in function '%s'", lr->r->name, gb__tl_function);
    else
        snprintf(buf, n, "'%s'", lr->r->name);
    return buf;
}

/* Copies v into held h (its buffer grows when v is bigger). */
static bool hold(const gb_op_call *c, held *h, const gb_tensor *v) {
    size_t n = bytes_of(v);
    if (n > h->cap || !h->t.data) {
        void *p = realloc(h->t.data, n ? n : 1);
        if (!p) {
            gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory for a loop variable", c->def->name);
            return false;
        }
        h->t.data = p;
        h->cap = n ? n : 1;
    }
    h->t.dtype = v->dtype;
    h->t.rank = v->rank;
    memcpy(h->t.shape, v->shape, sizeof h->t.shape);
    h->t.size = v->size;
    h->t.id = gb__next_tensor_id(); /* a new value each iteration */
    h->t.node = -1;
    memcpy(h->t.data, v->data, n);
    return true;
}

/* Appends the value variable k had as iteration `it` began. */
static bool push(loop_run *lr, int k, int64_t it) {
    const gb_tensor *v = &lr->vars[k].t;
    stack *s = &lr->stacks[k];
    if (it == 0) {
        s->elem_bytes = bytes_of(v);
        s->rank = v->rank;
        memcpy(s->shape, v->shape, sizeof s->shape);
    } else if (v->rank != s->rank || memcmp(v->shape, s->shape, (size_t)v->rank * sizeof *v->shape)) {
        char a[96], b[96], l[256];
        gb__op_error(lr->c, GB_ERR_SHAPE,
                     "%s: the gradient of %s keeps loop variable %d ('%s') at every "
                     "iteration, which needs one shape: it was %s, then %s",
                     lr->c->def->name, loop_label(lr, l, sizeof l), k, lr->r->var_names[k],
                     gb__shape_fmt(s->rank, s->shape, a, sizeof a),
                     gb__shape_fmt(v->rank, v->shape, b, sizeof b));
        return false;
    }
    size_t need = (size_t)(it + 1) * s->elem_bytes;
    if (need > s->cap || !s->data) {   /* a stack of empty values still gets memory */
        size_t cap = s->cap ? 2 * s->cap : 8 * (s->elem_bytes ? s->elem_bytes : 1);
        while (cap < need) cap *= 2;
        char *p = realloc(s->data, cap);
        if (!p) {
            gb__op_error(lr->c, GB_ERR_MEMORY, "%s: out of memory keeping loop iterations",
                         lr->c->def->name);
            return false;
        }
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + (size_t)it * s->elem_bytes, v->data, s->elem_bytes);
    return true;
}

/* The body kept what each variable must (checked against its value on
 * entry, with the dims its shape invariant frees left out). */
static bool check_kept(loop_run *lr, gb_tensor *const *next) {
    for (int k = 0; k < lr->r->nvars; k++) {
        const gb_tensor *v = lr->c->in[k], *w = next[k];
        int bad = v->dtype != w->dtype || v->rank != w->rank ? -2 : -1;
        for (int d = 0; bad == -1 && d < v->rank; d++)
            if (!(lr->r->free_dims[k] >> d & 1) && v->shape[d] != w->shape[d]) bad = d;
        if (bad == -1) continue;
        char a[96], b[96], l[256];
        gb__op_error(lr->c, GB_ERR_SHAPE,
                     "%s: loop variable %d ('%s') of %s is %s on entry but %s after iteration "
                     "%lld; give it a shape invariant with -1 for the dims that may change",
                     lr->c->def->name, k, lr->r->var_names[k], loop_label(lr, l, sizeof l),
                     gb__shape_fmt(v->rank, v->shape, a, sizeof a),
                     gb__shape_fmt(w->rank, w->shape, b, sizeof b), (long long)lr->iterations + 1);
        return false;
    }
    return true;
}

/* One iteration, in a scope of its own; *more is false when the cond
 * no longer holds. */
static bool iterate(loop_run *lr, bool *more) {
    gb_cf_record *r = lr->r;
    gb_scope_begin();
    gb_tensor *p = NULL, *next[GB_MAX_OUTPUTS];
    bool ok = gb__execute(r->sub[0].cf, lr->ptrs, r->nvars, &p) >= 0;
    *more = ok && *(const uint8_t *)p->data;
    if (*more && r->max_iterations && lr->iterations >= r->max_iterations) {
        char l[256];
        gb__op_error(lr->c, GB_ERR_VALUE,
                     "%s: the cond of %s still holds after max_iterations = %lld iterations",
                     lr->c->def->name, loop_label(lr, l, sizeof l), (long long)r->max_iterations);
        ok = false;
    }
    for (int k = 0; ok && *more && r->stacks && k < r->nvars; k++)
        if (r->stacked[k]) ok = push(lr, k, lr->iterations);
    ok = ok && (!*more || (gb__execute(r->sub[1].cf, lr->ptrs, r->nvars, next) >= 0 &&
                           check_kept(lr, next)));
    for (int k = 0; ok && *more && k < r->nvars; k++) ok = hold(lr->c, &lr->vars[k], next[k]);
    gb_scope_end();
    if (ok && *more) lr->iterations++;
    return ok;
}

/* The outputs, in the current scope (the graph run's). */
static bool outputs(loop_run *lr, gb_tensor **out) {
    gb_cf_record *r = lr->r;
    int n = 0;
    for (int k = 0; k < r->nvars; k++, n++) {
        const gb_tensor *v = &lr->vars[k].t;
        if (!(out[n] = gb__tensor_new(v->dtype, v->rank, v->shape, true))) return false;
        memcpy(out[n]->data, v->data, bytes_of(v));
    }
    if (!r->stacks) return true;
    for (int k = 0; k < r->nvars; k++) {
        if (!r->stacked[k]) continue;
        const gb_tensor *v = &lr->vars[k].t;
        stack *s = &lr->stacks[k];
        int64_t shape[GB_MAX_RANK] = {lr->iterations};
        /* No iteration: stacks of the variable's entry shape. */
        const int64_t *elem = lr->iterations ? s->shape : v->shape;
        for (int d = 0; d < v->rank; d++) shape[1 + d] = elem[d];
        if (!(out[n] = gb__tensor_new(v->dtype, v->rank + 1, shape, true))) return false;
        if (lr->iterations) memcpy(out[n]->data, s->data, (size_t)lr->iterations * s->elem_bytes);
        n++;
    }
    if (!(out[n] = gb__tensor_new(GB_I64, 0, NULL, true))) return false;
    *(int64_t *)out[n]->data = lr->iterations;
    return true;
}

static bool kernel_while(const gb_op_call *c, gb_tensor **out) {
    loop_run lr = {.c = c, .r = gb__cf_record_of(c)};
    if (!lr.r) return false;
    bool ok = true;
    for (int k = 0; ok && k < lr.r->nvars; k++) {
        ok = hold(c, &lr.vars[k], c->in[k]);
        lr.ptrs[k] = &lr.vars[k].t;
    }
    for (bool more = true; ok && more;) ok = iterate(&lr, &more);
    ok = ok && outputs(&lr, out);
    for (int k = 0; k < lr.r->nvars; k++) {
        free(lr.vars[k].t.data);
        free(lr.stacks[k].data);
    }
    return ok;
}

static int infer_while(const gb_op_call *c, gb_out_desc *out) {
    gb_cf_record *r = gb__cf_record_of(c);
    if (!r) return -1;
    if (c->nin != r->nvars) {
        gb__op_error(c, GB_ERR_VALUE, "%s: takes %d loop variables, got %d", c->def->name,
                     r->nvars, c->nin);
        return -1;
    }
    memcpy(out, r->out, (size_t)r->nout * sizeof *out);
    return r->nout;
}

const gb_op_def gb_opdef_while = {
    .name = "While",
    .arity = -1,
    .flags = GB_OPF_ALLOCATES,
    .inputs_doc = "the loop variables; record_id names the record of its traced cond and body "
                  "(control_flow/registry.c), max_iterations 0 is none, and with stacks it also "
                  "outputs each changing variable's values per iteration and the iteration count "
                  "(for its gradient)",
    .infer = infer_while,
    .kernel = kernel_while,
    .grad = gb__while_grad,
};
