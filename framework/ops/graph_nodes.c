/* ops/graph_nodes.c — Placeholder and Const: the inputs and constants of
 * traced graphs.
 *
 * They exist as op types so that a graph is nothing but op nodes (to
 * print, hash, serialize and draw). The executor binds a Placeholder to
 * the call's input and a Const to the value the node holds; dispatching
 * either eagerly is a mistake, reported as one.
 */
#include "ops/internal.h"

static int infer_graph_only(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_STATE,
                 "%s exists only in traced graphs; it cannot run eagerly", c->def->name);
    return -1;
}

static bool kernel_graph_only(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s has no kernel: the executor binds it", c->def->name);
    return false;
}

const gb_op_def gb_opdef_placeholder = {
    .name = "Placeholder",
    .arity = 0,
    .infer = infer_graph_only,
    .kernel = kernel_graph_only,
};

const gb_op_def gb_opdef_const = {
    .name = "Const",
    .arity = 0,
    .inputs_doc = "none; the node holds the value",
    .infer = infer_graph_only,
    .kernel = kernel_graph_only,
};
