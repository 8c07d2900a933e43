/* graph/plan.c — what runs, in what order, and how the executor sees it.
 *
 * Only the nodes the outputs need, and the stateful nodes with what they
 * need, run (as the seeds say, an op no output needs is not run; the
 * pruning pass has usually removed the others already, but it can be
 * turned off). Where every value lives is the memory plan's
 * (passes/memory_plan.c). Then each node that runs becomes one packed
 * step, and each value one reusable tensor header.
 */
#include <stdlib.h>

#include "graph/internal.h"

void gb__plan_free(gb_plan *p) {
    if (!p) return;
    free(p->steps);
    free(p->step_inputs);
    free(p->input_values);
    free(p->output_values);
    free(p->output_repeats);
    free(p->args);
    free(p->order);
    free(p->offset);
    free(p->base);
    free(p->last_use);
    free(p->bytes);
    free(p->headers);
    free(p->values);
    free(p);
}

/* ---- pruning ------------------------------------------------------------------------ */

static bool prune(gb_concrete_function *cf, gb_plan *p) {
    const gb_graph *g = &cf->graph;
    bool *live = calloc((size_t)(g->n ? g->n : 1), sizeof *live);
    p->order = malloc((size_t)(g->n ? g->n : 1) * sizeof *p->order);
    if (!live || !p->order) {
        free(live);
        return false;
    }
    gb__graph_live(g, cf->outputs, cf->nout, live);
    for (int i = 0; i < cf->nin; i++) live[cf->input_nodes[i]] = true;
    p->norder = 0;
    for (int i = 0; i < g->n; i++)
        if (live[i]) p->order[p->norder++] = i;
    free(live);
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
            if (nd->op == GB_OP_CONST) t->data = nd->payload;
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
    int total_in = 0, widest = 1;
    for (int pos = 0; pos < p->norder; pos++) {
        int nin = g->nodes[p->order[pos]].nin;
        total_in += nin;
        if (nin > widest) widest = nin;
    }
    size_t nsteps = p->norder > 0 ? (size_t)p->norder : 1;
    p->steps = malloc(nsteps * sizeof *p->steps);
    p->step_inputs = malloc((size_t)(total_in ? total_in : 1) * sizeof *p->step_inputs);
    p->widest = widest;
    p->args = malloc((size_t)widest * sizeof *p->args);
    if (!p->steps || !p->step_inputs || !p->args) return false;
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
    p->output_repeats = calloc((size_t)(cf->nout ? cf->nout : 1), sizeof *p->output_repeats);
    bool *seen = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *seen);
    bool ok = p->input_values && p->output_values && p->output_repeats && seen;
    for (int i = 0; ok && i < cf->nin; i++) p->input_values[i] = g->nodes[cf->input_nodes[i]].value0;
    for (int k = 0; ok && k < cf->nout; k++) {
        int32_t v = g->nodes[cf->outputs[k].node].value0 + cf->outputs[k].out;
        p->output_values[k] = v;
        p->output_repeats[k] = seen[v];
        seen[v] = true;
    }
    free(seen);
    return ok;
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
    ok = ok && gb__memory_plan(cf, p) && build_steps(cf, p);
    if (!ok) {
        gb__plan_free(p);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory planning '%s'", cf->owner->name);
        return false;
    }
    init_headers(cf, p);
    cf->plan = p;
    return true;
}
