/* graph/passes/rewrite.c — what every pass shares: uses, liveness, and
 * rebuilding a graph after its edits.
 *
 * A pass edits the graph in two ways only: it forwards the uses of a
 * value to another (x*1 → x, a duplicate → its twin), or it changes a
 * node in place (a subgraph of constants → one Const, a chain → one fused
 * node). Nodes left without users are not deleted by the pass: the
 * rebuild that ends every pass copies the nodes still needed, in their
 * order, into a fresh graph, following forwarded uses. So each pass is a
 * function from graph to graph, the node list stays a topological order,
 * names stay unique, and stateful nodes keep their program order (they
 * are always needed, and the rebuild re-links their control edges).
 */
#include <stdlib.h>

#include "graph/internal.h"

void gb__graph_live(const gb_graph *g, const gb_edge *outputs, int nout, bool *live) {
    memset(live, 0, (size_t)g->n * sizeof *live);
    for (int k = 0; k < nout; k++) live[outputs[k].node] = true;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].flags & GB_NODE_STATEFUL) live[i] = true;
    /* Inputs come before their node: one sweep from the end marks every
     * node a live node reads, and every stateful node before a live one. */
    for (int i = g->n - 1; i >= 0; i--) {
        if (!live[i]) continue;
        const gb_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->nin; k++) live[nd->in[k].node] = true;
        if (nd->after >= 0) live[nd->after] = true;
    }
}

void gb__graph_uses(const gb_graph *g, const gb_edge *outputs, int nout, int32_t *uses) {
    memset(uses, 0, (size_t)(g->nvalues ? g->nvalues : 1) * sizeof *uses);
    for (int i = 0; i < g->n; i++) {
        const gb_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->nin; k++) uses[gb__value_of(g, nd->in[k])]++;
    }
    for (int k = 0; k < nout; k++) uses[gb__value_of(g, outputs[k])]++;
}

/* ---- edits ------------------------------------------------------------------------------- */

bool gb__rewrite_begin(gb_rewrite *rw, gb_concrete_function *cf) {
    gb_graph *g = &cf->graph;
    *rw = (gb_rewrite){.cf = cf, .g = g, .keep_all = !cf->prune};
    rw->fwd = malloc((size_t)(g->nvalues ? g->nvalues : 1) * sizeof *rw->fwd);
    if (!rw->fwd) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory optimizing '%s'", cf->owner->name);
        return false;
    }
    for (int v = 0; v < g->nvalues; v++) rw->fwd[v] = (gb_edge){-1, -1};
    return true;
}

void gb__rewrite_forward(gb_rewrite *rw, gb_edge from, gb_edge to) {
    rw->fwd[gb__value_of(rw->g, from)] = to;
    rw->changes++;
}

gb_edge gb__rewrite_resolve(const gb_rewrite *rw, gb_edge e) {
    for (;;) {
        gb_edge to = rw->fwd[gb__value_of(rw->g, e)];
        if (to.node < 0) return e;
        e = to;
    }
}

/* ---- the rebuild ------------------------------------------------------------------------- */

/* A copy of nd's payload in graph g (the old graph's arena is freed). */
static void *copy_payload(gb_graph *g, const gb_node *nd) {
    if (!nd->payload) return NULL;
    if (nd->op == GB_OP_FUSED_ELEMENTWISE) {
        gb_fused_program *p = gb__graph_alloc(g, sizeof *p);
        if (!p) return NULL;
        *p = *(const gb_fused_program *)nd->payload;
        for (int s = 0; s < p->nsteps; s++)
            if (!(p->steps[s].name = gb__graph_strdup(g, p->steps[s].name))) return NULL;
        return p;
    }
    /* A Const: its value's bytes (a string's too). */
    return gb__graph_store_value(g, nd->out[0].dtype,
                                 gb__shape_size(nd->out[0].rank, nd->out[0].shape), nd->payload);
}

/* Copies the live nodes of `from` into `to`, in order, with forwarded
 * uses; newid maps old node ids to new (-1: dropped). */
static bool copy_nodes(const gb_rewrite *rw, const bool *live, gb_graph *to, int32_t *newid,
                       gb_edge *in) {
    const gb_graph *from = rw->g;
    for (int i = 0; i < from->n; i++) {
        newid[i] = -1;
        if (!live[i]) continue;
        const gb_node *nd = &from->nodes[i];
        for (int k = 0; k < nd->nin; k++) {
            gb_edge e = gb__rewrite_resolve(rw, nd->in[k]);
            in[k] = (gb_edge){newid[e.node], e.out};
        }
        int32_t id = gb__graph_add(to, nd->op, nd->name, in, nd->nin, nd->out, nd->nout, &nd->attrs);
        if (id < 0) return false;
        to->nodes[id].payload = copy_payload(to, nd);
        if (nd->payload && !to->nodes[id].payload) return false;
        if (!gb__graph_set_backward_of(to, id, nd->backward_of, nd->backward_of_type)) return false;
        newid[i] = id;
    }
    return true;
}

/* copy_nodes with room for the widest node's inputs (the heap's: passes
 * run on branches inside traces inside traces). */
static bool copy_live(const gb_rewrite *rw, const bool *live, gb_graph *to, int32_t *newid) {
    int widest = 1;
    for (int i = 0; i < rw->g->n; i++)
        if (rw->g->nodes[i].nin > widest) widest = rw->g->nodes[i].nin;
    gb_edge *in = malloc((size_t)widest * sizeof *in);
    bool ok = in && copy_nodes(rw, live, to, newid, in);
    free(in);
    return ok;
}

bool gb__rewrite_commit(gb_rewrite *rw) {
    gb_concrete_function *cf = rw->cf;
    const gb_graph *g = rw->g;
    for (int k = 0; k < cf->nout; k++) cf->outputs[k] = gb__rewrite_resolve(rw, cf->outputs[k]);
    bool *live = malloc((size_t)(g->n ? g->n : 1) * sizeof *live);
    int32_t *newid = malloc((size_t)(g->n ? g->n : 1) * sizeof *newid);
    gb_graph to;
    gb__graph_init(&to);
    bool ok = live && newid;
    if (ok) {
        /* Forwarded uses first, so a node only the old value needed dies. */
        for (int i = 0; i < g->n; i++)
            for (int k = 0; k < g->nodes[i].nin; k++)
                g->nodes[i].in[k] = gb__rewrite_resolve(rw, g->nodes[i].in[k]);
        gb__graph_live(g, cf->outputs, cf->nout, live);
        for (int i = 0; i < g->n; i++) live[i] |= rw->keep_all;
        for (int i = 0; i < cf->nin; i++) live[cf->input_nodes[i]] = true;
        ok = copy_live(rw, live, &to, newid);
    }
    if (ok) {
        for (int i = 0; i < cf->nin; i++) cf->input_nodes[i] = newid[cf->input_nodes[i]];
        for (int k = 0; k < cf->nout; k++) cf->outputs[k].node = newid[cf->outputs[k].node];
        if (!rw->keep_old) gb__graph_free(&cf->graph);
        cf->graph = to;
    } else {
        gb__graph_free(&to);
        if (gb_ok()) gb__error(GB_ERR_MEMORY, NULL, "out of memory optimizing '%s'", cf->owner->name);
    }
    free(live);
    free(newid);
    free(rw->fwd);
    rw->fwd = NULL;
    return ok;
}

void gb__rewrite_abort(gb_rewrite *rw) {
    free(rw->fwd);
    rw->fwd = NULL;
}
