/* graph/passes/fuse_elementwise.c — elementwise fusion: a chain of
 * elementwise ops becomes one FusedElementwise node, one pass over memory.
 *
 * Walking back from each elementwise node not yet fused (the root), the
 * group takes in every producer that is elementwise too, computes in the
 * same dtype and to the same shape, and whose every use is inside the
 * group (a value someone else reads must exist in memory anyway). Inputs
 * from outside the group — the chain's tensors, its scalar constants, a
 * bias that broadcasts — become the fused node's inputs. The root becomes
 * the fused node under its own name, holding the program of the nodes it
 * replaced with their names (passes/../ops/fused.c runs it), so numerics
 * alerts and the graph dashboard still name "gelu/Tanh". GELU or a layer
 * norm's elementwise tail written from primitives, an optimizer's update
 * arithmetic, the ReluGrad-times-something of a backward pass: each
 * becomes one loop.
 */
#include <stdlib.h>

#include "graph/internal.h"

typedef struct group {
    int32_t member[GB_FUSED_MAX_STEPS];
    int n;
    gb_edge ext[GB_FUSED_MAX_INPUTS + 1];
    int next;
} group;

static bool fusable(const gb_node *nd, const gb_node *root) {
    gb_fused_kind kind;
    if (nd->nout != 1 || (nd->flags & GB_NODE_STATEFUL)) return false;
    if (!gb__fused_kind_of(nd->op, nd->out[0].dtype, &kind)) return false;
    const gb_out_desc *a = &nd->out[0], *b = &root->out[0];
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape) == 0;
}

static bool is_member(const group *gr, int32_t node) {
    for (int m = 0; m < gr->n; m++)
        if (gr->member[m] == node) return true;
    return false;
}

/* The group's inputs from outside it, in order of first use; false when
 * there are more than a fused node takes. */
static bool externals(const gb_graph *g, group *gr) {
    gr->next = 0;
    for (int m = 0; m < gr->n; m++) {
        const gb_node *nd = &g->nodes[gr->member[m]];
        for (int k = 0; k < nd->nin; k++) {
            if (is_member(gr, nd->in[k].node)) continue;
            bool seen = false;
            for (int e = 0; e < gr->next; e++) seen |= gb__edge_eq(gr->ext[e], nd->in[k]);
            if (seen) continue;
            if (gr->next == GB_FUSED_MAX_INPUTS) return false;
            gr->ext[gr->next++] = nd->in[k];
        }
    }
    return true;
}

/* How many times the group's members read node p. */
static int32_t reads_inside(const gb_graph *g, const group *gr, int32_t p) {
    int32_t n = 0;
    for (int m = 0; m < gr->n; m++) {
        const gb_node *nd = &g->nodes[gr->member[m]];
        for (int k = 0; k < nd->nin; k++) n += nd->in[k].node == p;
    }
    return n;
}

/* Tries to take producer p into the group. */
static bool absorb(const gb_graph *g, group *gr, int32_t p, const int32_t *uses,
                   const int32_t *fused_into) {
    const gb_node *pd = &g->nodes[p];
    if (fused_into[p] >= 0 || is_member(gr, p) || gr->n == GB_FUSED_MAX_STEPS) return false;
    if (!fusable(pd, &g->nodes[gr->member[0]])) return false;
    if (uses[pd->value0] != reads_inside(g, gr, p)) return false; /* read elsewhere too */
    gr->member[gr->n++] = p;
    if (externals(g, gr)) return true;
    gr->n--; /* too many inputs with it */
    externals(g, gr);
    return false;
}

/* Grows the group rooted at r until no producer can join. */
static void grow(const gb_graph *g, group *gr, const int32_t *uses, const int32_t *fused_into) {
    for (bool changed = true; changed;) {
        changed = false;
        for (int m = 0; m < gr->n && !changed; m++) {
            const gb_node *nd = &g->nodes[gr->member[m]];
            for (int k = 0; k < nd->nin && !changed; k++)
                changed = absorb(g, gr, nd->in[k].node, uses, fused_into);
        }
    }
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The operand code of edge e in the program: a step, or an input. */
static int16_t operand(const group *gr, gb_edge e) {
    for (int m = 0; m < gr->n; m++)
        if (gr->member[m] == e.node) return (int16_t)m;
    for (int x = 0; x < gr->next; x++)
        if (gb__edge_eq(gr->ext[x], e)) return (int16_t)(-1 - x);
    return 0; /* unreachable: every input is a member or an external */
}

/* The root (the group's last node) becomes the fused node. */
static bool rewrite_root(gb_graph *g, group *gr) {
    qsort(gr->member, (size_t)gr->n, sizeof gr->member[0], cmp_i32);
    externals(g, gr);
    gb_fused_program *p = gb__graph_alloc(g, sizeof *p);
    gb_edge *in = gb__graph_alloc(g, (size_t)gr->next * sizeof *in);
    if (!p || !in) return false;
    gb_node *root = &g->nodes[gr->member[gr->n - 1]];
    *p = (gb_fused_program){.dtype = root->out[0].dtype, .nsteps = gr->n};
    for (int m = 0; m < gr->n; m++) {
        const gb_node *nd = &g->nodes[gr->member[m]];
        gb_fused_step *st = &p->steps[m];
        *st = (gb_fused_step){.op = nd->op, .name = nd->name, .attrs = nd->attrs,
                              .a = operand(gr, nd->in[0])};
        gb__fused_kind_of(nd->op, p->dtype, &st->kind);
        if (nd->nin > 1) st->b = operand(gr, nd->in[1]);
    }
    memcpy(in, gr->ext, (size_t)gr->next * sizeof *in);
    root->op = GB_OP_FUSED_ELEMENTWISE;
    root->in = in;
    root->nin = gr->next;
    root->attrs = (gb_attrs){0};
    root->payload = p;
    return true;
}

bool gb__pass_fuse_elementwise(gb_concrete_function *cf) {
    gb_graph *g = &cf->graph;
    int32_t *uses = malloc((size_t)(g->nvalues ? g->nvalues : 1) * sizeof *uses);
    int32_t *fused_into = malloc((size_t)(g->n ? g->n : 1) * sizeof *fused_into);
    bool ok = uses && fused_into;
    if (ok) {
        gb__graph_uses(g, cf->outputs, cf->nout, uses);
        for (int i = 0; i < g->n; i++) fused_into[i] = -1;
    }
    for (int r = g->n - 1; ok && r >= 0; r--) {
        if (fused_into[r] >= 0 || !fusable(&g->nodes[r], &g->nodes[r])) continue;
        group gr = {.member = {r}, .n = 1};
        if (!externals(g, &gr)) continue;
        grow(g, &gr, uses, fused_into);
        if (gr.n < 2) continue;
        for (int m = 0; m < gr.n; m++) fused_into[gr.member[m]] = r;
        ok = rewrite_root(g, &gr);
    }
    free(uses);
    free(fused_into);
    if (!ok) {
        if (gb_ok()) gb__error(GB_ERR_MEMORY, NULL, "out of memory optimizing '%s'", cf->owner->name);
        return false;
    }
    gb_rewrite rw; /* the members other than the roots are left without users */
    return gb__rewrite_begin(&rw, cf) && gb__rewrite_commit(&rw);
}
