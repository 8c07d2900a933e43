/* graph/passes/arithmetic.c — arithmetic simplification: ops that do
 * nothing are bypassed, pairs that undo each other cancel.
 *
 *   x*1, 1*x, x+0, 0+x, x-0, x/1, x^1      -> x   (when x already has the
 *                                                  result's shape and dtype:
 *                                                  a 1 that broadcasts x up
 *                                                  is not a no-op)
 *   Neg(Neg(x))                             -> x
 *   Identity(x), StopGradient(x)            -> x   (gradients were taken at
 *                                                  trace time; running, both
 *                                                  are copies)
 *   Cast(x) to x's own dtype                -> x
 *   Reshape / BroadcastTo to x's own shape  -> x
 *   Reshape(Reshape(x))                     -> Reshape(x)
 *   Transpose(Transpose(x, p), q)           -> x when the perms cancel,
 *                                              else one Transpose
 * These are what traced train steps show: the gradient of a sum or mean
 * multiplies by ones and broadcasts to the shape it already has, sum_to
 * reshapes to the same shape, a tape seeds with ones, layers cast inputs
 * to their own dtype, matmul gradients transpose twice. A bypass only
 * forwards uses; the bypassed node dies with its last use.
 */
#include "graph/internal.h"

static bool same_desc(const gb_out_desc *a, const gb_out_desc *b) {
    return a->dtype == b->dtype && a->rank == b->rank &&
           memcmp(a->shape, b->shape, (size_t)a->rank * sizeof *a->shape) == 0;
}

/* Fully known and equal: a reshape to it is a no-op. */
static bool same_static_desc(const gb_out_desc *a, const gb_out_desc *b) {
    if (!same_desc(a, b)) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] < 0) return false;
    return true;
}

bool gb__const_all(const gb_graph *g, gb_edge e, double v) {
    const gb_node *c = &g->nodes[e.node];
    if (c->op != GB_OP_CONST) return false;
    const gb_out_desc *d = &c->out[0];
    int64_t n = gb__shape_size(d->rank, d->shape);
    for (int64_t i = 0; i < n; i++)
        if (gb__load(d->dtype, c->payload, i) != v) return false;
    return n > 0;
}

/* The input of a binary node that the other (a constant `unit`) leaves
 * unchanged, or -1: x*1 and 1*x for Mul, x+0 and 0+x for Add, x-0, x/1. */
static int identity_operand(const gb_graph *g, const gb_node *nd) {
    const gb_out_desc *out = &nd->out[0];
    for (int side = 0; side < 2; side++) {
        gb_edge x = nd->in[side], other = nd->in[1 - side];
        if (!same_desc(gb__graph_desc(g, x), out)) continue;
        bool ok = false;
        switch (nd->op) {
        case GB_OP_MUL: ok = gb__const_all(g, other, 1); break;
        case GB_OP_ADD: ok = gb__const_all(g, other, 0); break;
        case GB_OP_SUB: ok = side == 0 && gb__const_all(g, other, 0); break;
        case GB_OP_DIV: ok = side == 0 && gb__const_all(g, other, 1); break;
        case GB_OP_POW: ok = side == 0 && gb__const_all(g, other, 1); break;
        default: break;
        }
        if (ok) return side;
    }
    return -1;
}

/* Transpose(Transpose(x, p), q): perm r[k] = p[q[k]]; true when the pair
 * cancels (the node is then bypassed), else nd becomes one Transpose. */
static bool merge_transposes(gb_node *nd, const gb_node *inner) {
    int64_t r[GB_MAX_RANK];
    bool identity = true;
    for (int k = 0; k < nd->attrs.ni; k++) {
        r[k] = inner->attrs.i[nd->attrs.i[k]];
        identity &= r[k] == k;
    }
    if (identity) return true;
    memcpy(nd->attrs.i, r, (size_t)nd->attrs.ni * sizeof *r);
    nd->in[0] = inner->in[0];
    return false;
}

/* The edge nd can be replaced by, or nd's own output when it stays. */
static gb_edge simplify(gb_graph *g, gb_node *nd, gb_edge self) {
    const gb_node *in0 = nd->nin ? &g->nodes[nd->in[0].node] : NULL;
    int side;
    switch (nd->op) {
    case GB_OP_IDENTITY:
    case GB_OP_STOP_GRADIENT: return nd->in[0];
    case GB_OP_CAST:
        return gb__graph_desc(g, nd->in[0])->dtype == nd->out[0].dtype ? nd->in[0] : self;
    case GB_OP_NEG: return in0->op == GB_OP_NEG ? in0->in[0] : self;
    case GB_OP_RESHAPE:
        if (same_static_desc(gb__graph_desc(g, nd->in[0]), &nd->out[0])) return nd->in[0];
        if (in0->op == GB_OP_RESHAPE) nd->in[0] = in0->in[0];
        return self;
    case GB_OP_BROADCAST_TO:
        return same_static_desc(gb__graph_desc(g, nd->in[0]), &nd->out[0]) ? nd->in[0] : self;
    case GB_OP_TRANSPOSE:
        if (in0->op != GB_OP_TRANSPOSE) return self;
        return merge_transposes(nd, in0) ? in0->in[0] : self;
    case GB_OP_ADD:
    case GB_OP_SUB:
    case GB_OP_MUL:
    case GB_OP_DIV:
    case GB_OP_POW:
        side = identity_operand(g, nd);
        return side >= 0 ? nd->in[side] : self;
    default: return self;
    }
}

bool gb__pass_arithmetic(gb_concrete_function *cf) {
    gb_rewrite rw;
    if (!gb__rewrite_begin(&rw, cf)) return false;
    gb_graph *g = rw.g;
    for (int i = 0; i < g->n; i++) {
        gb_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->nin; k++) nd->in[k] = gb__rewrite_resolve(&rw, nd->in[k]);
        if (nd->flags & GB_NODE_STATEFUL || nd->nout != 1) continue;
        gb_edge self = {i, 0}, to = simplify(g, nd, self);
        if (!gb__edge_eq(to, self)) gb__rewrite_forward(&rw, self, to);
    }
    return gb__rewrite_commit(&rw);
}
