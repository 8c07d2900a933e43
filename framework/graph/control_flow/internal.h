/* graph/control_flow/internal.h — what the control-flow files share.
 *
 * A traced gb_cond or gb_while_loop becomes one node of the enclosing
 * graph (If, While) and two sub-graphs: the branches, or the loop's cond
 * and body, each a concrete function traced from the user's C function.
 * Attributes are plain data, so the node names them through a record by
 * id (as graphs name variables): the record holds the sub-graphs, the C
 * functions (re-run under a tape for gradients), the node's output shapes
 * and, for a loop, its shape rules. Records belong to the concrete
 * function whose graph holds the node and die with it.
 *
 *   registry.c    records by id, owned by a concrete function
 *   branch.c      tracing a branch into a sub-graph; names; checks shared by both
 *   cond.c        gb_cond, eager and traced, and the If op
 *   cond_grad.c   the gradient of If: a cond over the branches' gradients
 *   while_loop.c  gb_while_loop, eager and traced
 *   while_op.c    the While op: the loop a graph runs, stacking iterations
 *   while_grad.c  the gradient of While: the loop run backwards
 */
#ifndef GB_GRAPH_CONTROL_FLOW_INTERNAL_H
#define GB_GRAPH_CONTROL_FLOW_INTERNAL_H

#include "graph/internal.h"

/* The limits of a construct, apart from a function's (gb_function.h): a
 * cond takes at most GB_CF_MAX_INPUTS inputs beside its predicate (a
 * branch sees only its inputs; the model's variables it reads are not
 * among them) and, as an If node, returns at most GB_MAX_OUTPUTS; a loop
 * has at most GB_MAX_OUTPUTS variables. A branch, cond or body writes
 * into room for GB_CF_OUTPUT_ROOM outputs, so one that returns too many
 * is refused with an error rather than writing past its array. The
 * arrays sized by them live on the stack of paths that recurse (a cond
 * in a cond, the gradient of a gradient): they stay small. */
#define GB_CF_MAX_INPUTS 63
#define GB_CF_OUTPUT_ROOM 64

/* One traced sub-graph: a branch, a loop's cond or its body. */
typedef struct gb_cf_branch {
    gb_branch_fn fn;             /* the user's C function */
    void *user;
    gb_function function;        /* what was traced: named as the enclosing function,
                                  * so alerts name it; region = its scope */
    char region[192];            /* "model/while/body" */
    char *input_names[GB_MAX_OUTPUTS];
    gb_concrete_function *cf;
} gb_cf_branch;

typedef struct gb_cf_record {
    int64_t id;
    gb_op_id op;                 /* GB_OP_IF or GB_OP_WHILE */
    char name[160];              /* the node's name, "model/cond_1" */
    gb_cf_branch sub[2];         /* If: true, false; While: cond, body */
    int nout;
    gb_out_desc out[GB_MAX_OUTPUTS];
    /* While only */
    int nvars;
    int64_t max_iterations;      /* 0: no limit */
    uint8_t free_dims[GB_MAX_OUTPUTS]; /* bit d: dim d of loop var k may change */
    char var_names[GB_MAX_OUTPUTS][32];
    bool stacks;                 /* outputs each changing variable's value per iteration */
    bool stacked[GB_MAX_OUTPUTS];/* loop var k changes in the loop (is stacked) */
    int nstacked;
} gb_cf_record;

/* ---- registry.c ---- */
/* A new record owned by the concrete function being traced; NULL after an
 * error. */
gb_cf_record *gb__cf_record_new(gb_op_id op);
/* The record a node's attributes name (i[0]); NULL (error naming the op)
 * when there is none. */
gb_cf_record *gb__cf_record_of(const gb_op_call *c);

/* ---- branch.c ---- */
/* The name the construct's node gets ("model/cond", "model/while_1", or
 * "gradients/<op>_grad/cond" in a backward pass) into r->name. */
void gb__cf_name_node(gb_cf_record *r, const char *kind, const char *user_name);
/* Traces fn on inputs of the given specs into r->sub[which], whose scope
 * is "<node>/<part>"; false after an error. */
bool gb__cf_trace_branch(gb_cf_record *r, int which, const char *part, gb_branch_fn fn,
                         void *user, const gb_tensor_spec *specs, int n,
                         const char *const *names);
/* The spec of a tensor (dtype and shape; -1 dims stay). */
gb_tensor_spec gb__cf_spec_of(const gb_tensor *t);
/* The output descriptions of a traced sub-graph. */
const gb_out_desc *gb__cf_output(const gb_cf_branch *b, int k);
/* Whether a sub-graph holds a stateful node (so its construct's node does). */
bool gb__cf_stateful(const gb_cf_branch *b);
/* Dispatches the construct's node (named r->name) in the trace; marks it
 * stateful when a sub-graph is. Returns the outputs' count or -1. */
int gb__cf_add_node(gb_cf_record *r, gb_tensor *const *in, int nin, gb_tensor **out);
/* How errors name a construct: "gb_cond 'cond'", and " in function 'f'"
 * while tracing. */
const char *gb__cf_label(const char *api, const char *name, char *buf, size_t n);
/* A bool scalar, or an error naming the construct (its label) and the
 * role ("the predicate", "the output of its cond"). */
bool gb__cf_check_pred(const gb_tensor *p, const char *label, const char *role);
/* The trainable variables a sub-graph reads: a tape recording the node
 * could not route their gradients (an error saying to pass their values
 * in), so gb_cond / gb_while_loop refuse them under a tape. */
bool gb__cf_check_no_trainable_captures(const gb_cf_record *r);
/* Makes the captures of r's sub-graphs the enclosing trace's too. */
void gb__cf_forward_captures(const gb_cf_record *r);
/* Whether a tape records an op on these inputs now. */
bool gb__cf_recorded(gb_tensor *const *in, int nin);

/* ---- cond_grad.c, while_grad.c ---- */
bool gb__if_grad(const gb_grad_ctx *ctx, gb_tensor **dx);
bool gb__while_grad(const gb_grad_ctx *ctx, gb_tensor **dx);

#endif
