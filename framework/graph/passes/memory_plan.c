/* graph/passes/memory_plan.c — the memory plan: buffer lifetimes, in-place
 * reuse, one arena per concrete function.
 *
 * Each value of a static shape gets a lifetime, from the node that makes
 * it to the last node that reads it (through views, which share their
 * input's memory), and an offset in one arena where values alive at the
 * same time never overlap and values that are not share space (placed
 * largest first, as TFLite's arena planner does). An op that may write over its input (a fused
 * elementwise chain: GB_OPF_INPLACE) takes the very buffer of an input
 * that dies at it, when the sizes agree — no copy, no second buffer.
 * Values with an unknown dim are allocated per call instead; Placeholders
 * are the caller's tensors, Consts the graph's, variable reads the
 * variable's, and the function's outputs are written straight into the
 * tensors the caller receives (no copy out of the arena). The nodes run
 * in program order, or in the memory-aware order of passes/schedule.c
 * when that needs a smaller arena. With the pass off, every value keeps its own buffer (the
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
 * static shapes (not placeholders, constants, views or variable reads, nor
 * the outputs If and While nodes make themselves). */
static bool planned(const gb_node *nd) {
    const gb_op_def *def = gb_op_table[nd->op];
    return !(def->flags & (GB_OPF_VIEW | GB_OPF_ALLOCATES)) && nd->op != GB_OP_PLACEHOLDER && nd->op != GB_OP_CONST &&
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

/* ---- placing buffers ---------------------------------------------------------------- */

/* A buffer of the arena: the value(s) it holds (an in-place chain shares
 * one), from the position that makes the first to the last read of the
 * last. */
typedef struct buffer {
    size_t size;
    int start, end;
    int64_t offset;
} buffer;

static int by_size_desc(const void *a, const void *b) {
    const buffer *x = *(const buffer *const *)a, *y = *(const buffer *const *)b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->start - y->start;
}

static int by_offset(const void *a, const void *b) {
    const buffer *x = *(const buffer *const *)a, *y = *(const buffer *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Greedy by size (TFLite's arena planner's rule): the largest buffers are
 * placed first, each at the lowest offset where it overlaps no placed
 * buffer that is alive at the same time. First fit in program order
 * fragments around the big gradients of a train step; this does not. */
static size_t place(buffer **bs, int n, buffer **scratch) {
    qsort(bs, (size_t)n, sizeof *bs, by_size_desc);
    size_t arena = 0;
    for (int i = 0; i < n; i++) {
        int m = 0;
        for (int j = 0; j < i; j++)
            if (bs[j]->start <= bs[i]->end && bs[i]->start <= bs[j]->end) scratch[m++] = bs[j];
        qsort(scratch, (size_t)m, sizeof *scratch, by_offset);
        size_t off = 0;
        for (int j = 0; j < m; j++) {
            if ((size_t)scratch[j]->offset >= off + bs[i]->size) break; /* the gap fits */
            size_t end = (size_t)scratch[j]->offset + scratch[j]->size;
            off = end > off ? end : off;
        }
        bs[i]->offset = (int64_t)off;
        arena = off + bs[i]->size > arena ? off + bs[i]->size : arena;
    }
    return arena;
}

/* An input of the node at pos whose buffer its output may take: the op
 * works in place, the input is a planned value (not a view of another,
 * not the caller's or a variable's) of the same size, and this node is its
 * last reader. -1 when none. */
static int32_t inplace_input(const gb_concrete_function *cf, const gb_plan *p,
                             const int32_t *buf_of, int pos, size_t size) {
    const gb_graph *g = &cf->graph;
    const gb_node *nd = &g->nodes[p->order[pos]];
    if (!(gb_op_table[nd->op]->flags & GB_OPF_INPLACE)) return -1;
    for (int i = 0; i < nd->nin; i++) {
        int32_t v = gb__value_of(g, nd->in[i]);
        if (p->base[v] == v && buf_of[v] >= 0 && p->last_use[v] == pos && p->bytes[v] == size)
            return v;
    }
    return -1;
}

/* Whether value v is a function output (the caller's memory, not the
 * arena's: the executor writes it straight into the caller's tensor). */
static bool is_output(const gb_concrete_function *cf, int32_t v) {
    for (int k = 0; k < cf->nout; k++)
        if (gb__value_of(&cf->graph, cf->outputs[k]) == v) return true;
    return false;
}

/* Every planned value's buffer (in-place outputs joining their input's);
 * returns the number of buffers. */
static int make_buffers(const gb_concrete_function *cf, gb_plan *p, bool reuse, buffer *bufs,
                        int32_t *buf_of) {
    const gb_graph *g = &cf->graph;
    int n = 0;
    for (int v = 0; v < g->nvalues; v++) buf_of[v] = -1, p->offset[v] = -1;
    for (int pos = 0; pos < p->norder; pos++) {
        const gb_node *nd = &g->nodes[p->order[pos]];
        if (!planned(nd)) continue;
        for (int k = 0; k < nd->nout; k++) {
            int32_t v = nd->value0 + k;
            size_t size = p->bytes[v] = value_bytes(&nd->out[k]);
            if (is_output(cf, v)) {
                p->offset[v] = GB_PLAN_CALLER;
                continue;
            }
            p->naive_bytes += size;
            int end = p->last_use[v] < pos ? pos : p->last_use[v];
            int32_t u = reuse && k == 0 ? inplace_input(cf, p, buf_of, pos, size) : -1;
            if (u >= 0) {
                buf_of[v] = buf_of[u];
                bufs[buf_of[v]].end = end;
                p->inplace++;
                continue;
            }
            bufs[n] = (buffer){.size = size, .start = reuse ? pos : 0, .end = reuse ? end : p->norder};
            buf_of[v] = n++;
        }
    }
    return n;
}

static bool assign_offsets(const gb_concrete_function *cf, gb_plan *p, bool reuse) {
    size_t nv = (size_t)(cf->graph.nvalues ? cf->graph.nvalues : 1);
    buffer *bufs = malloc(nv * sizeof *bufs);
    buffer **order = malloc(2 * nv * sizeof *order);
    int32_t *buf_of = malloc(nv * sizeof *buf_of);
    bool ok = bufs && order && buf_of;
    if (ok) {
        int n = make_buffers(cf, p, reuse, bufs, buf_of);
        for (int i = 0; i < n; i++) order[i] = &bufs[i];
        p->arena_bytes = place(order, n, order + nv);
        for (int v = 0; v < cf->graph.nvalues; v++)
            if (buf_of[v] >= 0) p->offset[v] = bufs[buf_of[v]].offset;
    }
    free(bufs);
    free(order);
    free(buf_of);
    return ok;
}

static bool plan_order(const gb_concrete_function *cf, gb_plan *p, bool reuse) {
    p->naive_bytes = 0;
    p->inplace = 0;
    lifetimes(cf, p);
    return assign_offsets(cf, p, reuse);
}

/* Program order, or the memory-aware schedule (passes/schedule.c) when
 * its arena comes out smaller. */
bool gb__memory_plan(const gb_concrete_function *cf, gb_plan *p) {
    bool reuse = !(cf->passes_off & GB_PASS_MEMORY_PLAN);
    if (!plan_order(cf, p, reuse)) return false;
    if (!reuse || p->norder < 3) return true;
    size_t program_arena = p->arena_bytes, n = (size_t)p->norder;
    int32_t *program = malloc(n * sizeof *program);
    if (!program) return false;
    memcpy(program, p->order, n * sizeof *program);
    bool ok = gb__schedule_for_memory(cf, p->order, p->norder) && plan_order(cf, p, reuse);
    if (ok && p->arena_bytes >= program_arena) {
        memcpy(p->order, program, n * sizeof *program);
        ok = plan_order(cf, p, reuse);
    }
    free(program);
    return ok;
}
