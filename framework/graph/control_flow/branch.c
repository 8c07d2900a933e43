/* graph/control_flow/branch.c — tracing a branch into a sub-graph, and what
 * cond and while_loop share when they trace.
 *
 * A branch (or a loop's cond or body) is traced like a function of its
 * own: gb__trace runs the C function on Placeholders of the inputs' specs,
 * in a trace nested in the enclosing one, and plans the result. It is
 * named as the enclosing function (numerics alerts from inside it name
 * the function the user wrote) and names its nodes in the construct's
 * scope, "model/cond/true/Mul", so the node's name and its branches'
 * scopes agree. Tapes begun outside see the construct as one node; its
 * gradient re-runs the branch's C function under a tape of its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/control_flow/internal.h"

void gb__cf_name_node(gb_cf_record *r, const char *kind, const char *user_name) {
    const char *name = user_name && user_name[0] ? user_name : kind;
    const char *path = gb_name_scope_path();
    char base[192];
    if (gb__tl_backward_of) /* as the dispatcher names a backward pass's ops */
        snprintf(base, sizeof base, "gradients/%s_grad/%s", gb__tl_backward_of, name);
    else
        snprintf(base, sizeof base, "%s%s%s", path, path[0] ? "/" : "", name);
    gb__graph_peek_name(gb__tl_trace->graph, base, r->name, sizeof r->name);
}

gb_tensor_spec gb__cf_spec_of(const gb_tensor *t) {
    gb_tensor_spec s = {.dtype = t->dtype, .rank = t->rank};
    memcpy(s.shape, t->shape, (size_t)t->rank * sizeof *s.shape);
    return s;
}

const gb_out_desc *gb__cf_output(const gb_cf_branch *b, int k) {
    return gb__graph_desc(&b->cf->graph, b->cf->outputs[k]);
}

static int run_branch(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    gb_cf_branch *b = user;
    (void)st, (void)nst;
    return b->fn(b->user, in, nin, out);
}

bool gb__cf_trace_branch(gb_cf_record *r, int which, const char *part, gb_branch_fn fn,
                         void *user, const gb_tensor_spec *specs, int n,
                         const char *const *names) {
    gb_cf_branch *b = &r->sub[which];
    gb_trace *outer = gb__tl_trace;
    b->fn = fn;
    b->user = user;
    snprintf(b->region, sizeof b->region, "%s/%s", r->name, part);
    gb_function *f = &b->function;
    snprintf(f->name, sizeof f->name, "%s", outer->function->name);
    f->fn = run_branch;
    f->user = b;
    f->region = b->region;
    /* Variables may be made inside it when the enclosing trace allows it. */
    f->stats.traces = outer->first_trace ? 0 : 1;
    for (int i = 0; names && i < n && i < GB_MAX_OUTPUTS; i++)
        if (names[i]) {
            size_t len = strlen(names[i]) + 1;
            if (!(b->input_names[i] = malloc(len))) {
                gb__error(GB_ERR_MEMORY, NULL, "out of memory tracing '%s'", b->region);
                return false;
            }
            memcpy(b->input_names[i], names[i], len);
        }
    f->input_names = b->input_names;
    f->ninput_names = names ? (n < GB_MAX_OUTPUTS ? n : GB_MAX_OUTPUTS) : 0;
    gb_signature sig;
    if (!gb__sig_init(&sig, n)) return false;
    for (int i = 0; i < n; i++) sig.in[i] = specs[i], sig.in[i].name = NULL;
    /* Nodes inside are named by the region, even in a backward pass. */
    const char *bw = gb__tl_backward_of, *bw_type = gb__tl_backward_of_type;
    gb__tl_backward_of = gb__tl_backward_of_type = NULL;
    b->cf = gb__trace(f, &sig);
    gb__sig_free(&sig);
    gb__tl_backward_of = bw;
    gb__tl_backward_of_type = bw_type;
    return b->cf != NULL;
}

bool gb__cf_stateful(const gb_cf_branch *b) {
    const gb_graph *g = &b->cf->graph;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].flags & GB_NODE_STATEFUL) return true;
    return false;
}

void gb__cf_forward_captures(const gb_cf_record *r) {
    for (int s = 0; s < 2; s++)
        for (int i = 0; r->sub[s].cf && i < r->sub[s].cf->ncaptures; i++)
            gb__trace_capture(gb__tl_trace, r->sub[s].cf->captures[i]);
}

bool gb__cf_check_no_trainable_captures(const gb_cf_record *r) {
    if (!gb__tl_recording) return true;
    for (int s = 0; s < 2; s++) {
        const gb_concrete_function *cf = r->sub[s].cf;
        for (int i = 0; cf && i < cf->ncaptures; i++) {
            gb_variable *v = gb__variable_by_id(cf->captures[i]);
            if (!v || !gb_variable_trainable(v)) continue;
            gb__error(GB_ERR_STATE, gb_op_type_name(r->op),
                      "'%s' reads trainable variable '%s' while a GradientTape records: its "
                      "gradient could not reach the variable through the %s node; read the "
                      "variable outside and pass its value in (as an input of gb_cond, or a "
                      "loop variable of gb_while_loop)",
                      r->sub[s].region, gb_variable_name(v), gb_op_type_name(r->op));
            return false;
        }
    }
    return true;
}

bool gb__cf_recorded(gb_tensor *const *in, int nin) {
    if (!gb__tl_recording) return false;
    gb_op_call probe = {.op = GB_OP_IDENTITY, .def = gb_op_table[GB_OP_IDENTITY], .in = in,
                        .nin = nin, .attrs = NULL};
    return gb__tape_tapes_for_call(&probe) != 0;
}

int gb__cf_add_node(gb_cf_record *r, gb_tensor *const *in, int nin, gb_tensor **out) {
    /* An If holds only its record; a While also its loop's figures. */
    gb_attrs a = {.i = {r->id}, .ni = 1};
    if (r->op == GB_OP_WHILE) a = (gb_attrs){.i = {r->id, r->nvars, r->max_iterations, r->stacks}, .ni = 4};
    gb_trace *t = gb__tl_trace;
    t->next_node_name = r->name;
    int n = gb__dispatch(r->op, in, nin, &a, out);
    t->next_node_name = NULL;
    if (n < 0) return -1;
    int32_t id = t->graph->n - 1; /* the node just added (after any Const of an input) */
    if (gb__cf_stateful(&r->sub[0]) || gb__cf_stateful(&r->sub[1]))
        gb__graph_mark_stateful(t->graph, id);
    gb__cf_forward_captures(r);
    return n;
}

bool gb__cf_check_pred(const gb_tensor *p, const char *label, const char *role) {
    if (p->dtype == GB_BOOL && p->rank == 0) return true;
    char s[96];
    gb__error(GB_ERR_DTYPE, NULL, "%s: %s must be a bool scalar, got %s %s", label, role,
              gb_dtype_name(p->dtype), gb__shape_fmt(p->rank, p->shape, s, sizeof s));
    return false;
}

const char *gb__cf_label(const char *api, const char *name, char *buf, size_t n) {
    if (gb__tl_trace)
        snprintf(buf, n, "%s '%s' in function '%s'", api, name, gb__tl_trace->function->name);
    else
        snprintf(buf, n, "%s '%s'", api, name);
    return buf;
}
