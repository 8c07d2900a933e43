/* graph/passes/memory_plan.c — the memory plan: buffer lifetimes, in-place
 * reuse, one arena per concrete function.
 *
 * Each value of a static shape gets a lifetime, from the node that makes
 * it to the last node that reads it (through views, which share their
 * input's memory), and an offset in one arena, reusing the space of
 * values that died (first fit over a free list, as ggml's allocator and
 * tinygrad's planner do). An op that may write over its input (a fused
 * elementwise chain: GB_OPF_INPLACE) takes the very buffer of an input
 * that dies at it, when the sizes agree — no copy, no second buffer.
 * Values with an unknown dim are allocated per call instead; Placeholders
 * are the caller's tensors, Consts the graph's, variable reads the
 * variable's. With the pass off, every value keeps its own buffer (the
 * naive plan the arena is measured against).
 */
#include <stdlib.h>

#include "graph/internal.h"

enum { ALIGN = 64 };

static size_t value_bytes(const gb_out_desc *d) {
    int64_t n = gb__shape_size(d->rank, d->shape);
    return n < 0 ? 0 : ((size_t)n * gb_dtype_size(d->dtype) + ALIGN - 1) / ALIGN * ALIGN;
}

/* Which values the plan places in the arena: outputs of ordinary ops with
 * static shapes (not placeholders, constants, views or variable reads). */
static bool planned(const gb_node *nd) {
    const gb_op_def *def = gb_op_table[nd->op];
    return !(def->flags & GB_OPF_VIEW) && nd->op != GB_OP_PLACEHOLDER && nd->op != GB_OP_CONST &&
           !(nd->flags & GB_NODE_DYNAMIC);
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

/* An input of the node at pos whose buffer its output may take: the op
 * works in place, the input is a planned value (not a view of another,
 * not the caller's or a variable's) of the same size, and this node is its
 * last reader. -1 when none. */
static int32_t inplace_input(const gb_concrete_function *cf, const gb_plan *p, int pos,
                             size_t size) {
    const gb_graph *g = &cf->graph;
    const gb_node *nd = &g->nodes[p->order[pos]];
    if (!(gb_op_table[nd->op]->flags & GB_OPF_INPLACE)) return -1;
    for (int i = 0; i < nd->nin; i++) {
        int32_t v = gb__value_of(g, nd->in[i]);
        if (p->base[v] == v && p->offset[v] >= 0 && p->last_use[v] == pos && p->bytes[v] == size)
            return v;
    }
    return -1;
}

static bool assign_offsets(const gb_concrete_function *cf, gb_plan *p, bool reuse) {
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
        int32_t reused = -1;
        for (int k = 0; planned(nd) && k < nd->nout; k++) {
            size_t size = p->bytes[nd->value0 + k] = value_bytes(&nd->out[k]);
            p->naive_bytes += size;
            if (!reuse) {
                p->offset[nd->value0 + k] = (int64_t)top;
                top += size;
            } else if (k == 0 && (reused = inplace_input(cf, p, pos, size)) >= 0) {
                p->offset[nd->value0] = p->offset[reused];
                p->inplace++;
            } else {
                p->offset[nd->value0 + k] = (int64_t)take(fl, &nfl, &top, size);
            }
        }
        /* Values whose last reader is this node free their space for the
         * next nodes' outputs (this node's only when it took it in place). */
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
            if (p->offset[b] < 0 || b == reused || !reuse) continue;
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


bool gb__memory_plan(const gb_concrete_function *cf, gb_plan *p) {
    lifetimes(cf, p);
    return assign_offsets(cf, p, !(cf->passes_off & GB_PASS_MEMORY_PLAN));
}
