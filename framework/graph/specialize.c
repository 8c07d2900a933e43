/* graph/specialize.c — a concrete function with -1 dims, planned for the
 * shapes it is actually called with.
 *
 * A trace with an unknown dim (an input signature's -1 batch) serves every
 * size, but its nodes cannot be given arena offsets. Calls come with few
 * distinct shapes (a training loop: the batch size, and the last, smaller
 * batch), so each distinct set of input shapes gets its own copy of the
 * node list with every shape inferred once, and a static plan: planned
 * arena, no shape inference and no allocation per call — TinyJit's idea,
 * kept per shape. A few are cached per concrete function, the least
 * recently used replaced.
 *
 * A specialization shares everything but its nodes' output shapes (names,
 * edges, attributes, constants) with the concrete function it came from,
 * which outlives it.
 */
#include <stdlib.h>

#include "graph/internal.h"

enum { MAX_SPECIALIZATIONS = 4 };

struct gb_specialization {
    gb_concrete_function cf;     /* a static copy: its own nodes, the rest shared */
    int64_t (*shapes)[GB_MAX_RANK]; /* per input, the shape it was planned for */
    int64_t last_used;
};

static void free_one(gb_specialization *s) {
    if (!s) return;
    gb__plan_free(s->cf.plan);
    free(s->shapes);
    free(s->cf.graph.nodes);
    gb__bump_free(&s->cf.graph.mem);
    free(s);
}

void gb__specializations_free(gb_concrete_function *cf) {
    for (int i = 0; i < cf->nspecs; i++) free_one(cf->specs[i]);
    free(cf->specs);
    cf->specs = NULL;
    cf->nspecs = 0;
}

static bool same_shapes(const gb_specialization *s, gb_tensor *const *in, int nin) {
    for (int i = 0; i < nin; i++)
        if (memcmp(s->shapes[i], in[i]->shape, (size_t)in[i]->rank * sizeof(int64_t)) != 0)
            return false;
    return true;
}

/* Infers every live node's output shapes from the call's input shapes,
 * with headers standing in for the values (shapes, no data). */
static bool infer_all(gb_concrete_function *spec, gb_tensor *const *in) {
    gb_graph *g = &spec->graph;
    int widest = 1;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].nin > widest) widest = g->nodes[i].nin;
    gb_tensor *fake = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *fake);
    gb_tensor **ins = malloc((size_t)widest * sizeof *ins);
    bool ok = fake && ins;
    for (int i = 0; ok && i < g->n; i++) {
        gb_node *nd = &g->nodes[i];
        gb_out_desc *desc = gb__bump_alloc(&g->mem, (size_t)(nd->nout ? nd->nout : 1) * sizeof *desc,
                                           "specializing a graph");
        if (!desc) {
            ok = false;
            break;
        }
        if (nd->op == GB_OP_PLACEHOLDER) {
            const gb_tensor *x = in[nd->attrs.i[0]];
            desc[0] = (gb_out_desc){.dtype = x->dtype, .rank = x->rank};
            memcpy(desc[0].shape, x->shape, (size_t)x->rank * sizeof *x->shape);
        } else if (nd->op == GB_OP_CONST || !(nd->flags & GB_NODE_DYNAMIC)) {
            if (nd->nout) memcpy(desc, nd->out, (size_t)nd->nout * sizeof *desc);
        } else {
            for (int k = 0; k < nd->nin; k++)
                ins[k] = &fake[g->nodes[nd->in[k].node].value0 + nd->in[k].out];
            gb_op_call c = {nd->op, gb_op_table[nd->op], ins, nd->nin, &nd->attrs, nd->payload};
            const char *running = gb__tl_node_name; /* an If or While node's, when nested */
            gb__tl_node_name = nd->name;
            ok = c.def->infer(&c, desc) == nd->nout;
            gb__tl_node_name = running;
        }
        nd->out = desc;
        nd->flags &= ~(unsigned)GB_NODE_DYNAMIC;
        /* Every dim is known now, but for what an If or While node makes
         * (a dim its branches disagree on, a loop variable that grows) and
         * what is computed from it: those nodes stay dynamic. */
        for (int k = 0; ok && k < nd->nin; k++)
            if (fake[g->nodes[nd->in[k].node].value0 + nd->in[k].out].size < 0)
                nd->flags |= GB_NODE_DYNAMIC;
        for (int k = 0; ok && k < nd->nout; k++) {
            gb_tensor *t = &fake[nd->value0 + k];
            t->dtype = desc[k].dtype;
            t->rank = (uint8_t)desc[k].rank;
            memcpy(t->shape, desc[k].shape, sizeof t->shape);
            t->size = gb__shape_size(t->rank, t->shape);
            if (t->size < 0) nd->flags |= GB_NODE_DYNAMIC;
        }
    }
    free(fake);
    free(ins);
    return ok;
}

static gb_specialization *make(gb_concrete_function *cf, gb_tensor *const *in) {
    gb_specialization *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cf = *cf;
    gb_concrete_function *spec = &s->cf;
    spec->graph.mem = (gb_bump){.min_chunk = 4096};
    spec->graph.nodes = malloc((size_t)(cf->graph.n ? cf->graph.n : 1) * sizeof *spec->graph.nodes);
    spec->plan = NULL;
    spec->dynamic = false;
    spec->specs = NULL;
    spec->nspecs = 0;
    s->shapes = malloc((size_t)(cf->nin ? cf->nin : 1) * sizeof *s->shapes);
    if (!spec->graph.nodes || !s->shapes) {
        free(spec->graph.nodes);
        free(s->shapes);
        free(s);
        return NULL;
    }
    memcpy(spec->graph.nodes, cf->graph.nodes, (size_t)cf->graph.n * sizeof *spec->graph.nodes);
    for (int i = 0; i < cf->nin; i++)
        memcpy(s->shapes[i], in[i]->shape, (size_t)in[i]->rank * sizeof(int64_t));
    if (!infer_all(spec, in) || !gb__plan_build(spec)) {
        free_one(s);
        return NULL;
    }
    return s;
}

gb_concrete_function *gb__specialize(gb_concrete_function *cf, gb_tensor *const *in) {
    static _Thread_local int64_t clock;
    for (int i = 0; i < cf->nspecs; i++) {
        if (!same_shapes(cf->specs[i], in, cf->nin)) continue;
        cf->specs[i]->last_used = ++clock;
        return &cf->specs[i]->cf;
    }
    if (!cf->specs && !(cf->specs = calloc(MAX_SPECIALIZATIONS, sizeof *cf->specs))) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory specializing '%s'", cf->owner->name);
        return NULL;
    }
    gb_specialization *s = make(cf, in);
    if (!s) {
        if (gb_ok()) gb__error(GB_ERR_MEMORY, NULL, "out of memory specializing '%s'", cf->owner->name);
        return NULL;
    }
    s->last_used = ++clock;
    int slot = cf->nspecs;
    if (slot == MAX_SPECIALIZATIONS) { /* replace the least recently used */
        slot = 0;
        for (int i = 1; i < cf->nspecs; i++)
            if (cf->specs[i]->last_used < cf->specs[slot]->last_used) slot = i;
        free_one(cf->specs[slot]);
    } else {
        cf->nspecs++;
    }
    cf->specs[slot] = s;
    return &s->cf;
}
