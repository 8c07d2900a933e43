/* graph/executor.c — running a planned concrete function.
 *
 * The node list runs in order with no dispatcher work per node: no shape
 * inference (shapes were settled by the trace; only nodes with an unknown
 * dim infer theirs per call), no tape checks (a tape sees the call as a
 * whole, function_grad.c), no allocation (outputs go to reusable headers
 * over the planned arena, allocated on the first run). The run-time hooks
 * — numerics checks naming the function and the node, placement and
 * timing logs — run only when on. Outputs are copied to the caller's
 * scope: they are the only memory a call allocates.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

static bool first_run(gb_concrete_function *cf, gb_plan *p) {
    if (p->arena_bytes && !(p->arena = aligned_alloc(64, p->arena_bytes))) {
        gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory for a %zu-byte arena",
                  cf->owner->name, p->arena_bytes);
        return false;
    }
    const gb_graph *g = &cf->graph;
    for (int v = 0; v < g->nvalues; v++)
        if (p->offset[v] >= 0) p->headers[v].data = (char *)p->arena + p->offset[v];
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].op == GB_OP_CONST) p->values[g->nodes[i].value0] = &p->headers[g->nodes[i].value0];
    return true;
}

/* Random ops draw new numbers at each run after the first, as a stateful
 * random op in a tf.function does; the first run matches eager. */
static const gb_attrs *run_attrs(const gb_node *nd, int64_t runs, gb_attrs *scratch) {
    if (!(gb_op_table[nd->op]->flags & GB_OPF_RANDOM) || runs == 0) return &nd->attrs;
    *scratch = nd->attrs;
    uint64_t s = (uint64_t)nd->attrs.i[1] ^ ((uint64_t)runs * 0x9E3779B97F4A7C15ull);
    scratch->i[1] = (int64_t)gb__splitmix64(&s);
    return scratch;
}

/* The output tensors of node nd for this run. */
static bool outputs_of(gb_plan *p, const gb_node *nd, const gb_op_call *c, gb_tensor **outs) {
    if (!(nd->flags & GB_NODE_DYNAMIC)) {
        for (int k = 0; k < nd->nout; k++) outs[k] = &p->headers[nd->value0 + k];
        return true;
    }
    gb_out_desc desc[GB_MAX_OUTPUTS];
    if (c->def->infer(c, desc) < 0) return false;
    bool view = c->def->flags & GB_OPF_VIEW;
    for (int k = 0; k < nd->nout; k++)
        if (!(outs[k] = gb__tensor_new(desc[k].dtype, desc[k].rank, desc[k].shape, !view)))
            return false;
    return true;
}

static bool run_node(gb_concrete_function *cf, gb_plan *p, const gb_node *nd, unsigned hooks) {
    const gb_graph *g = &cf->graph;
    gb_tensor *ins[GB_FUNCTION_MAX_INPUTS], *outs[GB_MAX_OUTPUTS];
    for (int i = 0; i < nd->nin; i++)
        ins[i] = p->values[g->nodes[nd->in[i].node].value0 + nd->in[i].out];
    gb_attrs scratch;
    gb_op_call c = {nd->op, gb_op_table[nd->op], ins, nd->nin, run_attrs(nd, p->runs, &scratch)};
    gb__tl_node_name = nd->name;
    if (!outputs_of(p, nd, &c, outs)) return false;
    double t0 = (hooks & GB_HOOK_TIMING) ? gb__now_us() : 0.0;
    if (!c.def->kernel(&c, outs)) return false;
    for (int k = 0; k < nd->nout; k++) p->values[nd->value0 + k] = outs[k];
    if (hooks)
        return gb__run_post_hooks(&c, hooks, outs, nd->nout,
                                  (hooks & GB_HOOK_TIMING) ? gb__now_us() - t0 : 0.0);
    return true;
}

/* Binds the placeholders to the call's inputs (shapes fit: checked by the
 * caller against the signature). */
static void bind_inputs(gb_concrete_function *cf, gb_plan *p, gb_tensor *const *in) {
    for (int i = 0; i < cf->nin; i++) p->values[cf->graph.nodes[cf->input_nodes[i]].value0] = in[i];
}

/* Copies the outputs into scope s (the caller's). */
static bool copy_outputs(gb_concrete_function *cf, gb_plan *p, struct gb_scope *s,
                         gb_tensor **out) {
    for (int k = 0; k < cf->nout; k++) {
        const gb_tensor *v = p->values[cf->graph.nodes[cf->outputs[k].node].value0 + cf->outputs[k].out];
        gb_tensor *o = gb__tensor_new_in(s, v->dtype, v->rank, v->shape, true);
        if (!o) return false;
        memcpy(o->data, v->data, (size_t)v->size * gb_dtype_size(v->dtype));
        out[k] = o;
    }
    return true;
}

/* The thread state a run sets aside: tapes do not record inside a call,
 * and names and alerts name the function's nodes. */
typedef struct run_saved {
    uint64_t recording;
    const char *function, *node;
} run_saved;

int gb__execute(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out) {
    gb_plan *p = cf->plan;
    (void)nin;
    if (atomic_exchange(&p->busy, true)) {
        gb__error(GB_ERR_STATE, NULL,
                  "function '%s' was called while a call of it is running (recursion or "
                  "another thread); a concrete function runs one call at a time",
                  cf->owner->name);
        return -1;
    }
    if (!p->arena && p->runs == 0 && !first_run(cf, p)) {
        atomic_store(&p->busy, false);
        return -1;
    }
    run_saved saved = {gb__tl_recording, gb__tl_function, gb__tl_node_name};
    gb__tl_recording = 0;
    gb__tl_function = cf->owner->name;
    struct gb_scope *caller = gb__scope_current();
    gb_scope_begin();
    bind_inputs(cf, p, in);
    unsigned hooks = atomic_load_explicit(&gb__hook_flags, memory_order_acquire);
    bool ok = true;
    for (int i = 0; ok && i < p->norder; i++) {
        const gb_node *nd = &cf->graph.nodes[p->order[i]];
        if (nd->op == GB_OP_PLACEHOLDER || nd->op == GB_OP_CONST) continue;
        ok = run_node(cf, p, nd, hooks);
    }
    gb__tl_node_name = saved.node;
    ok = ok && copy_outputs(cf, p, caller, out);
    gb_scope_end();
    gb__tl_recording = saved.recording;
    gb__tl_function = saved.function;
    p->runs++;
    atomic_store(&p->busy, false);
    return ok ? cf->nout : -1;
}
