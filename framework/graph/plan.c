/* graph/plan.c — what runs, and where every value lives.
 *
 * Pruning: only the nodes the outputs need, and the stateful nodes with
 * what they need, run (as the seeds say, an op no output needs is not
 * run). Memory: each value of a static shape gets a lifetime, from the
 * node that makes it to the last node that reads it (through views, which
 * share their input's memory), and an offset in one arena per concrete
 * function, reusing the space of values that died (first fit over a free
 * list, as ggml's allocator and tinygrad's planner do). Values with an
 * unknown dim are allocated per call instead, and so are the outputs of
 * If and While nodes, which their kernels make. Placeholders are the
 * caller's tensors, Consts the graph's, variable reads the variable's.
 */
#include <stdlib.h>

#include "graph/internal.h"

enum { ALIGN = 64 };

void gb__plan_free(gb_plan *p) {
    if (!p) return;
    free(p->steps);
    free(p->step_inputs);
    free(p->input_values);
    free(p->output_values);
    free(p->order);
    free(p->offset);
    free(p->base);
    free(p->last_use);
    free(p->bytes);
    free(p->headers);
    free(p->values);
    free(p->arena);
    free(p);
}

/* ---- pruning ------------------------------------------------------------------------ */

static void mark(const gb_graph *g, bool *live, int32_t n) {
    /* Inputs come before their node: one backward sweep from the end
     * would do, but the marks start anywhere, so walk explicitly. */
    int32_t stack[64], top = 0;
    if (live[n]) return;
    live[n] = true;
    stack[top++] = n;
    while (top) {
        const gb_node *nd = &g->nodes[stack[--top]];
        for (int i = 0; i < nd->nin; i++) {
            int32_t m = nd->in[i].node;
            if (live[m]) continue;
            live[m] = true;
            if (top < 64)
                stack[top++] = m;
            else
                mark(g, live, m); /* deep chains: recurse rather than overflow */
        }
        if (nd->after >= 0 && !live[nd->after]) mark(g, live, nd->after);
    }
}

static bool prune(gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    bool *live = calloc((size_t)(g->n ? g->n : 1), sizeof *live);
    p->order = malloc((size_t)(g->n ? g->n : 1) * sizeof *p->order);
    if (!live || !p->order) {
        free(live);
        return false;
    }
    for (int k = 0; k < cf->nout; k++) mark(g, live, cf->outputs[k].node);
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].flags & GB_NODE_STATEFUL) mark(g, live, i);
    for (int i = 0; i < cf->nin; i++) live[cf->input_nodes[i]] = true;
    p->norder = 0;
    for (int i = 0; i < g->n; i++)
        if (live[i]) p->order[p->norder++] = i;
    free(live);
    return true;
}

/* ---- lifetimes and offsets -------------------------------------------------------------- */

static size_t value_bytes(const gb_out_desc *d) {
    int64_t n = gb__shape_size(d->rank, d->shape);
    return n < 0 ? 0 : ((size_t)n * gb_dtype_size(d->dtype) + ALIGN - 1) / ALIGN * ALIGN;
}

/* Which values the plan places in the arena: outputs of ordinary ops with
 * static shapes (not placeholders, constants, views or variable reads). */
static bool planned(const gb_node *nd) {
    const gb_op_def *def = gb_op_table[nd->op];
    return !(def->flags & (GB_OPF_VIEW | GB_OPF_ALLOCATES)) && nd->op != GB_OP_PLACEHOLDER &&
           nd->op != GB_OP_CONST && !(nd->flags & GB_NODE_DYNAMIC);
}

/* base[v]: the value whose memory v uses (itself, or a view's source);
 * last_use[v]: the position in the order of the last node reading base v's
 * memory; function outputs live to the end. */
static void lifetimes(const gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    for (int v = 0; v < g->nvalues; v++) p->base[v] = v, p->last_use[v] = -1;
    for (int pos = 0; pos < p->norder; pos++) {
        const gb_node *nd = &g->nodes[p->order[pos]];
        for (int i = 0; i < nd->nin; i++) {
            int32_t b = p->base[g->nodes[nd->in[i].node].value0 + nd->in[i].out];
            p->last_use[b] = pos;
        }
        if ((gb_op_table[nd->op]->flags & GB_OPF_VIEW) && nd->nin > 0)
            for (int k = 0; k < nd->nout; k++)
                p->base[nd->value0 + k] = p->base[g->nodes[nd->in[0].node].value0 + nd->in[0].out];
    }
    for (int k = 0; k < cf->nout; k++) {
        int32_t b = p->base[g->nodes[cf->outputs[k].node].value0 + cf->outputs[k].out];
        p->last_use[b] = p->norder;
    }
}

typedef struct free_block {
    size_t off, size;
} free_block;

/* First fit in the free list, else the arena's end. */
static size_t take(free_block *fl, int *nfl, size_t *top, size_t size) {
    for (int i = 0; i < *nfl; i++) {
        if (fl[i].size < size) continue;
        size_t off = fl[i].off;
        fl[i].off += size;
        fl[i].size -= size;
        if (!fl[i].size) fl[i] = fl[--*nfl];
        return off;
    }
    size_t off = *top;
    *top += size;
    return off;
}

static void give_back(free_block *fl, int *nfl, size_t off, size_t size) {
    for (int i = 0; i < *nfl; i++) { /* merge with a neighbour */
        if (fl[i].off + fl[i].size == off) {
            fl[i].size += size;
            return;
        }
        if (off + size == fl[i].off) {
            fl[i].off = off;
            fl[i].size += size;
            return;
        }
    }
    fl[(*nfl)++] = (free_block){off, size};
}

static bool assign_offsets(const gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    free_block *fl = malloc((size_t)(g->nvalues + 1) * sizeof *fl);
    int32_t *dies = malloc((size_t)(g->nvalues + 1) * sizeof *dies);
    if (!fl || !dies) {
        free(fl);
        free(dies);
        return false;
    }
    int nfl = 0;
    size_t top = 0;
    for (int v = 0; v < g->nvalues; v++) p->offset[v] = -1;
    for (int pos = 0; pos < p->norder; pos++) {
        const gb_node *nd = &g->nodes[p->order[pos]];
        for (int k = 0; planned(nd) && k < nd->nout; k++) {
            size_t size = p->bytes[nd->value0 + k] = value_bytes(&nd->out[k]);
            p->naive_bytes += size;
            p->offset[nd->value0 + k] = (int64_t)take(fl, &nfl, &top, size);
        }
        /* Values whose last reader is this node free their space for the
         * next nodes' outputs (never this node's: no in-place yet). */
        int ndies = 0;
        for (int i = 0; i < nd->nin; i++) {
            int32_t b = p->base[g->nodes[nd->in[i].node].value0 + nd->in[i].out];
            if (p->last_use[b] == pos && p->offset[b] >= 0) dies[ndies++] = b;
        }
        for (int k = 0; k < nd->nout; k++) /* outputs nobody reads */
            if (p->last_use[nd->value0 + k] < 0 && p->offset[nd->value0 + k] >= 0)
                dies[ndies++] = nd->value0 + k;
        for (int d = 0; d < ndies; d++) {
            int32_t b = dies[d];
            if (p->offset[b] < 0) continue;
            bool seen = false;
            for (int e = 0; e < d; e++) seen |= dies[e] == b;
            if (seen) continue;
            give_back(fl, &nfl, (size_t)p->offset[b], p->bytes[b]);
        }
    }
    p->arena_bytes = top;
    free(fl);
    free(dies);
    return true;
}

/* ---- headers ------------------------------------------------------------------------------ */

/* One reusable tensor header per value of a static shape: its dtype and
 * shape never change, its data points into the arena (set per run, as the
 * arena is allocated on the first one). */
static void init_headers(const gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    for (int i = 0; i < g->n; i++) {
        const gb_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->nout; k++) {
            gb_tensor *t = &p->headers[nd->value0 + k];
            memset(t, 0, sizeof *t);
            t->dtype = nd->out[k].dtype;
            t->rank = (uint8_t)nd->out[k].rank;
            memcpy(t->shape, nd->out[k].shape, sizeof t->shape);
            t->size = gb__shape_size(t->rank, t->shape);
            t->id = gb__next_tensor_id();
            t->node = -1;
            if (nd->op == GB_OP_CONST) t->data = nd->const_data;
        }
    }
}

/* Whether node nd (at position pos) writes variable id. */
static bool writes_var(const gb_node *nd, int64_t id) {
    if (nd->op == GB_OP_READ_VARIABLE) return false;
    for (int k = 0; k < nd->attrs.nvars; k++)
        if (nd->attrs.vars[k] == id) return true;
    return false;
}

/* A read of a variable may use the variable's memory directly (no
 * reference, so later writes happen in place instead of copying) when no
 * write to that variable comes while the value read is still in use. */
static bool can_borrow(const gb_concrete_function *cf, const gb_plan *p, int pos) {
    const gb_graph *g = &cf->graph;
    const gb_node *rd = &g->nodes[p->order[pos]];
    int32_t last = p->last_use[rd->value0];
    for (int q = pos + 1; q < p->norder; q++)
        if (writes_var(&g->nodes[p->order[q]], rd->attrs.vars[0])) return q > last;
    return true;
}

/* The executor's program: one packed step per live node that runs. */
static bool build_steps(const gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    int total_in = 0;
    for (int pos = 0; pos < p->norder; pos++) total_in += g->nodes[p->order[pos]].nin;
    size_t nsteps = p->norder > 0 ? (size_t)p->norder : 1;
    p->steps = malloc(nsteps * sizeof *p->steps);
    p->step_inputs = malloc((size_t)(total_in ? total_in : 1) * sizeof *p->step_inputs);
    if (!p->steps || !p->step_inputs) return false;
    int32_t *in = p->step_inputs;
    p->nsteps = 0;
    for (int pos = 0; pos < p->norder; pos++) {
        const gb_node *nd = &g->nodes[p->order[pos]];
        if (nd->op == GB_OP_PLACEHOLDER || nd->op == GB_OP_CONST) continue;
        const gb_op_def *def = gb_op_table[nd->op];
        gb_exec_step *st = &p->steps[p->nsteps++];
        *st = (gb_exec_step){.kernel = def->kernel, .def = def, .node = nd, .in = in,
                             .nin = nd->nin, .nout = nd->nout, .out0 = nd->value0, .op = nd->op,
                             .dynamic = nd->flags & GB_NODE_DYNAMIC,
                             .random = def->flags & GB_OPF_RANDOM,
                             .borrow = nd->op == GB_OP_READ_VARIABLE && can_borrow(cf, p, pos)};
        for (int i = 0; i < nd->nin; i++) *in++ = g->nodes[nd->in[i].node].value0 + nd->in[i].out;
    }
    p->input_values = malloc((size_t)(cf->nin ? cf->nin : 1) * sizeof *p->input_values);
    p->output_values = malloc((size_t)(cf->nout ? cf->nout : 1) * sizeof *p->output_values);
    if (!p->input_values || !p->output_values) return false;
    for (int i = 0; i < cf->nin; i++) p->input_values[i] = g->nodes[cf->input_nodes[i]].value0;
    for (int k = 0; k < cf->nout; k++)
        p->output_values[k] = g->nodes[cf->outputs[k].node].value0 + cf->outputs[k].out;
    return true;
}

bool gb__plan_build(gb_concrete_function *cf) {
    const gb_graph *g = &cf->graph;
    gb_plan *p = calloc(1, sizeof *p);
    size_t nv = (size_t)(g->nvalues ? g->nvalues : 1);
    if (p) {
        p->offset = malloc(nv * sizeof *p->offset);
        p->base = malloc(nv * sizeof *p->base);
        p->last_use = malloc(nv * sizeof *p->last_use);
        p->bytes = calloc(nv, sizeof *p->bytes);
        p->headers = malloc(nv * sizeof *p->headers);
        p->values = calloc(nv, sizeof *p->values);
    }
    bool ok = p && p->offset && p->base && p->last_use && p->bytes && p->headers && p->values &&
              prune(cf, p);
    if (ok) {
        lifetimes(cf, p);
        ok = assign_offsets(cf, p) && build_steps(cf, p);
    }
    if (!ok) {
        gb__plan_free(p);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory planning '%s'", cf->owner->name);
        return false;
    }
    init_headers(cf, p);
    cf->plan = p;
    return true;
}
