/* graph/passes/cse.c — common-subexpression elimination: identical nodes
 * become one.
 *
 * Two nodes are the same computation when they have the same op,
 * attributes, inputs and output types — or, for constants, the same
 * value. Traced code repeats itself more than one would think: every
 * gb_scalar(1.0) a gradient makes is its own Const, a layer reads its
 * kernel in the forward and again in the backward, the gradient of a mean
 * divides by the same count twice. The later copy's uses are forwarded to
 * the first. Nodes are visited in order with their inputs already
 * forwarded, so a chain of duplicates collapses in one pass. Stateful
 * nodes (assignments, prints, random draws) are never merged: two draws
 * are two values.
 */
#include <stdlib.h>

#include "graph/internal.h"

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ull; }

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = mix(h, b[i]);
    return h;
}

static size_t const_bytes(const gb_node *nd) {
    return (size_t)gb__shape_size(nd->out[0].rank, nd->out[0].shape) *
           gb_dtype_size(nd->out[0].dtype);
}

static bool attrs_equal(const gb_attrs *a, const gb_attrs *b) {
    return a->ni == b->ni && a->nvars == b->nvars &&
           memcmp(a->i, b->i, sizeof a->i) == 0 && memcmp(a->f, b->f, sizeof a->f) == 0 &&
           memcmp(a->vars, b->vars, sizeof a->vars) == 0 && strcmp(a->s, b->s) == 0;
}

static bool descs_equal(const gb_out_desc *a, const gb_out_desc *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    return memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape) == 0;
}

static uint64_t node_hash(const gb_node *nd) {
    uint64_t h = mix(1469598103934665603ull, (uint64_t)nd->op);
    for (int k = 0; k < nd->nin; k++) h = mix(mix(h, (uint64_t)nd->in[k].node), (uint64_t)nd->in[k].out);
    for (int k = 0; k < nd->nout; k++) {
        h = mix(mix(h, nd->out[k].dtype), (uint64_t)nd->out[k].rank);
        h = hash_bytes(h, nd->out[k].shape, (size_t)nd->out[k].rank * sizeof(int64_t));
    }
    h = hash_bytes(h, nd->attrs.i, sizeof nd->attrs.i);
    h = hash_bytes(h, nd->attrs.s, strlen(nd->attrs.s));
    if (nd->op == GB_OP_CONST) h = hash_bytes(h, nd->payload, const_bytes(nd));
    return h;
}

static bool same_node(const gb_node *a, const gb_node *b) {
    if (a->op != b->op || a->nin != b->nin || a->nout != b->nout) return false;
    for (int k = 0; k < a->nin; k++)
        if (!gb__edge_eq(a->in[k], b->in[k])) return false;
    for (int k = 0; k < a->nout; k++)
        if (!descs_equal(&a->out[k], &b->out[k])) return false;
    if (!attrs_equal(&a->attrs, &b->attrs)) return false;
    return a->op != GB_OP_CONST || memcmp(a->payload, b->payload, const_bytes(a)) == 0;
}

/* Nodes CSE may merge: pure computations (and constants). */
static bool mergeable(const gb_node *nd) {
    return !(nd->flags & GB_NODE_STATEFUL) && nd->op != GB_OP_PLACEHOLDER;
}

bool gb__pass_cse(gb_concrete_function *cf) {
    gb_rewrite rw;
    if (!gb__rewrite_begin(&rw, cf)) return false;
    gb_graph *g = rw.g;
    size_t cap = 16;
    while (cap < 2 * (size_t)g->n) cap *= 2;
    int32_t *table = malloc(cap * sizeof *table);
    if (!table) {
        gb__rewrite_abort(&rw);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory optimizing '%s'", cf->owner->name);
        return false;
    }
    for (size_t j = 0; j < cap; j++) table[j] = -1;
    for (int i = 0; i < g->n; i++) {
        gb_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->nin; k++) nd->in[k] = gb__rewrite_resolve(&rw, nd->in[k]);
        if (!mergeable(nd)) continue;
        size_t j = node_hash(nd) & (cap - 1);
        while (table[j] >= 0 && !same_node(&g->nodes[table[j]], nd)) j = (j + 1) & (cap - 1);
        if (table[j] < 0) {
            table[j] = i;
            continue;
        }
        for (int k = 0; k < nd->nout; k++)
            gb__rewrite_forward(&rw, (gb_edge){i, k}, (gb_edge){table[j], k});
    }
    free(table);
    return gb__rewrite_commit(&rw);
}
