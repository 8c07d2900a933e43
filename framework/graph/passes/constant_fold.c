/* graph/passes/constant_fold.c — constant folding: what depends only on
 * constants is computed once, at trace time.
 *
 * A node whose inputs are all Const nodes (after earlier folds: nodes are
 * visited in order) is run here with its own kernel, and becomes a Const
 * holding the result, under its own name. Traced code is full of these:
 * sqrt(2/pi) built from scalars, a learning rate times a constant, the
 * reciprocal of a batch size. Stateful and random nodes are never folded
 * (their value is not the same at every run), nor nodes with an unknown
 * dim, nor results larger than a limit (a constant is kept in the graph;
 * folding a broadcast of a scalar to a large shape would bloat it, as
 * Grappler limits too). A kernel that fails here (an index out of range)
 * leaves its node alone: it will fail, with the usual error, if it runs.
 */
#include <stdlib.h>

#include "graph/internal.h"

enum { MAX_FOLDED_BYTES = 1 << 20 };

static bool all_inputs_const(const gb_graph *g, const gb_node *nd) {
    for (int k = 0; k < nd->nin; k++)
        if (g->nodes[nd->in[k].node].op != GB_OP_CONST) return false;
    return nd->nin > 0;
}

static bool foldable(const gb_graph *g, const gb_node *nd) {
    if (nd->flags & (GB_NODE_STATEFUL | GB_NODE_DYNAMIC)) return false;
    if (nd->nout != 1 || nd->op == GB_OP_CONST || nd->op == GB_OP_PLACEHOLDER) return false;
    /* If and While make their own outputs (and run sub-graphs): not here. */
    if (gb_op_table[nd->op]->flags & (GB_OPF_RANDOM | GB_OPF_STATEFUL | GB_OPF_ALLOCATES))
        return false;
    int64_t n = gb__shape_size(nd->out[0].rank, nd->out[0].shape);
    return n >= 0 && (size_t)n * gb_dtype_size(nd->out[0].dtype) <= MAX_FOLDED_BYTES &&
           all_inputs_const(g, nd);
}

/* A tensor header over a Const node's bytes (kernels only read inputs). */
static void const_header(const gb_node *c, gb_tensor *t) {
    memset(t, 0, sizeof *t);
    t->dtype = c->out[0].dtype;
    t->rank = (uint8_t)c->out[0].rank;
    memcpy(t->shape, c->out[0].shape, sizeof t->shape);
    t->size = gb__shape_size(t->rank, t->shape);
    t->data = c->payload;
    t->node = -1;
}

/* evaluate() with room for the inputs' headers. */
static void *run_folded(gb_graph *g, const gb_node *nd, gb_tensor *ins, gb_tensor **inp) {
    gb_tensor out;
    for (int k = 0; k < nd->nin; k++) {
        const_header(&g->nodes[nd->in[k].node], &ins[k]);
        inp[k] = &ins[k];
    }
    size_t bytes = (size_t)gb__shape_size(nd->out[0].rank, nd->out[0].shape) *
                   gb_dtype_size(nd->out[0].dtype);
    void *data = gb__graph_alloc(g, bytes ? bytes : 1);
    if (!data) return NULL;
    gb_node as_const = {.out = nd->out, .payload = data};
    const_header(&as_const, &out);
    gb_tensor *outp = &out;
    gb_op_call c = {nd->op, gb_op_table[nd->op], inp, nd->nin, &nd->attrs, nd->payload};
    const char *saved = gb__tl_node_name;
    gb__tl_node_name = nd->name;
    /* A string kernel makes its bytes in the current scope: a scope of
     * their own here, left once they are copied into the graph. */
    bool strings = nd->out[0].dtype == GB_STRING;
    if (strings) gb_scope_begin();
    bool ok = c.def->kernel(&c, &outp);
    gb__tl_node_name = saved;
    if (ok && out.data != data) memcpy(data, out.data, bytes); /* a view (Reshape) of its input */
    if (ok && strings) {
        int64_t n = (int64_t)(bytes / sizeof(gb_string));
        int64_t total = gb__strings_total(data, n);
        char *blob = gb__graph_alloc(g, total ? (size_t)total : 1);
        if (blob) gb__strings_pack(data, data, n, blob);
        ok = blob != NULL;
    }
    if (strings) gb_scope_end();
    if (!ok) {
        gb_clear_error();
        return NULL;
    }
    return data;
}

/* Runs nd on its constant inputs into graph memory; NULL when its kernel
 * refused (the node is then left as it is) or memory ran out. */
static void *evaluate(gb_graph *g, const gb_node *nd) {
    /* The heap's: headers are big, and this pass runs on branches traced
     * inside traces. */
    size_t n = (size_t)(nd->nin ? nd->nin : 1);
    gb_tensor *ins = malloc(n * sizeof *ins), **inp = malloc(n * sizeof *inp);
    void *data = ins && inp ? run_folded(g, nd, ins, inp) : NULL;
    if (!ins || !inp) gb__error(GB_ERR_MEMORY, NULL, "out of memory folding '%s'", nd->name);
    free(ins);
    free(inp);
    return data;
}

bool gb__pass_constant_fold(gb_concrete_function *cf) {
    gb_graph *g = &cf->graph;
    for (int i = 0; i < g->n; i++) {
        gb_node *nd = &g->nodes[i];
        if (!foldable(g, nd)) continue;
        void *value = evaluate(g, nd);
        if (!value) {
            if (!gb_ok()) return false; /* out of memory */
            continue;
        }
        nd->op = GB_OP_CONST;
        nd->nin = 0;
        nd->in = NULL;
        nd->attrs = (gb_attrs){0};
        nd->payload = value;
    }
    /* The constants' inputs are left without users: the rebuild drops them. */
    gb_rewrite rw;
    return gb__rewrite_begin(&rw, cf) && gb__rewrite_commit(&rw);
}
