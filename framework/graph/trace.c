/* graph/trace.c — the dispatcher's trace hook: op calls become nodes.
 *
 * While a function traces, the dispatcher checks shapes and dtypes as it
 * does eagerly (so trace-time errors name the op and the shapes), then
 * hands the call here instead of running a kernel: the call becomes a node
 * named by the name-scope path, and its outputs become symbolic tensors —
 * a dtype, a shape (-1 for an unknown dim), and the node output that will
 * compute them. An eager tensor the function uses (a value captured from
 * outside, or made with gb_scalar inside) becomes a Const node, once per
 * tensor. Variables the graph reads or writes are its captures.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

_Thread_local gb_trace *gb__tl_trace;

gb_tensor *gb__symbolic(int32_t node, int k, const gb_out_desc *d) {
    gb_tensor *t = gb__tensor_new(d->dtype, d->rank, d->shape, false);
    if (!t) return NULL;
    t->flags |= GB_TF_SYMBOLIC;
    t->graph_id = (uint32_t)gb__tl_trace->cf->id;
    t->node = node;
    t->out_index = k;
    return t;
}

void gb__trace_capture(gb_trace *t, int64_t var_id) {
    gb_concrete_function *cf = t->cf;
    for (int i = 0; i < cf->ncaptures; i++)
        if (cf->captures[i] == var_id) return;
    int64_t *c = realloc(cf->captures, (size_t)(cf->ncaptures + 1) * sizeof *c);
    if (c) cf->captures = c;
    char **names = c ? realloc(cf->capture_names, (size_t)(cf->ncaptures + 1) * sizeof *names) : NULL;
    if (names) cf->capture_names = names;
    /* The name is kept: a reason names the variable after it is freed. */
    gb_variable *v = gb__variable_by_id(var_id);
    const char *name = v ? gb_variable_name(v) : "";
    char *copy = names ? malloc(strlen(name) + 1) : NULL;
    if (!copy) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory recording a capture");
        return;
    }
    memcpy(copy, name, strlen(name) + 1);
    names[cf->ncaptures] = copy;
    c[cf->ncaptures++] = var_id;
}

/* The Const node standing for eager tensor x in this trace. */
static int32_t const_node(gb_trace *t, const gb_tensor *x) {
    for (int i = 0; i < t->nconsts; i++)
        if (t->const_ids[i] == x->id) return t->const_nodes[i];
    if (t->nconsts == t->capconsts) {
        int cap = t->capconsts ? 2 * t->capconsts : 32;
        uint64_t *ids = realloc(t->const_ids, (size_t)cap * sizeof *ids);
        if (ids) t->const_ids = ids;
        int32_t *nodes = ids ? realloc(t->const_nodes, (size_t)cap * sizeof *nodes) : NULL;
        if (!nodes) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory capturing a constant");
            return -1;
        }
        t->const_nodes = nodes;
        t->capconsts = cap;
    }
    /* Named as an op of its place would be: a constant a gradient
     * function uses is in that gradient's scope. */
    gb_op_call call = {.op = GB_OP_CONST, .def = gb_op_table[GB_OP_CONST]};
    char base[192];
    gb__op_display_name(&call, base, sizeof base);
    int32_t id = gb__graph_add_const(t->graph, x, base);
    if (id < 0) return -1;
    t->const_ids[t->nconsts] = x->id;
    t->const_nodes[t->nconsts++] = id;
    return id;
}

/* The edge feeding input i of the call; false after an error. */
static bool input_edge(gb_trace *t, const gb_op_call *c, int i, gb_edge *e) {
    const gb_tensor *x = c->in[i];
    if (x->flags & GB_TF_SYMBOLIC) {
        if (x->graph_id != (uint32_t)t->cf->id && t->function->region) {
            gb__op_error(c, GB_ERR_STATE,
                         "%s: input %d is a tensor of the enclosing trace, used inside '%s'; a "
                         "branch, loop cond or loop body sees only its inputs: pass the tensor "
                         "to gb_cond as an input, or make it a loop variable of gb_while_loop",
                         c->def->name, i, t->function->region);
            return false;
        }
        if (x->graph_id != (uint32_t)t->cf->id) {
            gb__op_error(c, GB_ERR_STATE,
                         "%s: input %d is a symbolic tensor of another trace (function '%s' "
                         "is tracing); a tensor made while tracing cannot leave its function "
                         "except as an output",
                         c->def->name, i, t->function->name);
            return false;
        }
        *e = (gb_edge){x->node, x->out_index};
        return true;
    }
    int32_t id = const_node(t, x);
    *e = (gb_edge){id, 0};
    return id >= 0;
}

/* Variable ops name their variable by id: the graph captures it. */
static void note_captures(gb_trace *t, const gb_op_call *c) {
    int64_t ids[8];
    int n = gb__call_variable_ids(c, ids, 8);
    for (int i = 0; i < n; i++) gb__trace_capture(t, ids[i]);
}

/* The call as a node of the trace's graph, its input edges gathered in
 * in[c->nin]; the node's id, or -1 after an error. */
static int32_t add_node(gb_trace *t, const gb_op_call *c, const gb_out_desc *desc, int nout,
                        gb_edge *in) {
    for (int i = 0; i < c->nin; i++)
        if (!input_edge(t, c, i, &in[i])) return -1;
    note_captures(t, c);
    char base[192];
    if (t->next_node_name)
        snprintf(base, sizeof base, "%s", t->next_node_name);
    else
        gb__op_display_name(c, base, sizeof base);
    t->next_node_name = NULL;
    int32_t id = gb__graph_add(t->graph, c->op, base, in, c->nin, desc, nout, c->attrs);
    if (id < 0) return -1;
    gb__tl_traced_node = t->graph->nodes[id].name;
    if (!gb__graph_set_backward_of(t->graph, id, gb__tl_backward_of, gb__tl_backward_of_type)) return -1;
    return id;
}

int gb__trace_op(const gb_op_call *c, const gb_out_desc *desc, int nout, gb_tensor **out) {
    gb_trace *t = gb__tl_trace;
    if (!t) {
        gb__op_error(c, GB_ERR_STATE,
                     "%s: a symbolic tensor was used outside the function that traced it; "
                     "return it as an output of the function instead",
                     c->def->name);
        return -1;
    }
    if (c->nin > GB_FUNCTION_MAX_INPUTS) {
        gb__op_error(c, GB_ERR_VALUE, "%s: %d inputs are more than a graph node takes (%d)",
                     c->def->name, c->nin, GB_FUNCTION_MAX_INPUTS);
        return -1;
    }
    /* Most ops take a few inputs; a Concat or an If may take hundreds,
     * and traces nest (a branch traces inside its function's trace). */
    gb_edge few[8], *in = c->nin <= 8 ? few : malloc((size_t)c->nin * sizeof *in);
    if (!in) {
        gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory tracing %d inputs", c->def->name, c->nin);
        return -1;
    }
    int32_t id = add_node(t, c, desc, nout, in);
    if (in != few) free(in);
    if (id < 0) return -1;
    for (int k = 0; k < nout; k++)
        if (!(out[k] = gb__symbolic(id, k, &desc[k]))) return -1;
    return nout;
}

/* A variable made while tracing: allowed on the function's first trace
 * (a layer building lazily), an error on any later one, as tf.function
 * raises. */
static bool on_variable_created(const char *name) {
    gb_trace *t = gb__tl_trace;
    if (!t || t->first_trace) return true;
    gb__error(GB_ERR_STATE, NULL,
              "function '%s' created variable '%s' on a trace that was not its first; "
              "variables may be created only on a function's first trace (create it "
              "outside the function, or on the first call only)",
              t->function->name, name);
    return false;
}

/* "a:0": the node and output of a symbolic tensor of the trace running,
 * as TensorFlow names a graph tensor (gb_tensor_repr). */
static void symbolic_name(const gb_tensor *x, char *buf, size_t n) {
    gb_trace *t = gb__tl_trace;
    if (t && x->graph_id == (uint32_t)t->cf->id && x->node >= 0 && x->node < t->graph->n)
        snprintf(buf, n, "%s:%d", t->graph->nodes[x->node].name, (int)x->out_index);
    else
        snprintf(buf, n, "?:%d", (int)x->out_index);
}

void gb__trace_install_hooks(void) {
    atomic_store_explicit(&gb__symbolic_name_hook, symbolic_name, memory_order_release);
    atomic_store_explicit(&gb__trace_hook, gb__trace_op, memory_order_release);
    atomic_store_explicit(&gb__variable_created_hook, on_variable_created,
                          memory_order_release);
}
