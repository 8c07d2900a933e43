/* graph/internal.h — what the function and graph files share.
 *
 * A gb_function owns a cache of concrete functions. A concrete function
 * is a signature (the specs of its tensor inputs, its static values, the
 * variables it captured), a graph (nodes in program order, so the node
 * list is already a topological order), and an execution plan.
 *
 *   graph.c       the IR: nodes, unique names, constants
 *   trace.c       the dispatcher's trace hook: op calls become nodes
 *   signature.c   call signatures, matching, specificity, text
 *   function.c    gb_function: the cache, the call path, get_concrete
 *   retrace.c     why a trace happened, in words; logging traces
 *   retrace_history.c  a C function's recent calls: the excessive-retracing warning
 *   plan.c        buffer lifetimes and the arena of a concrete function
 *   executor.c    running a planned graph
 *   specialize.c  static plans of a graph with -1 dims, per input shapes
 *   graph_text.c  the graph and signatures as text
 *   function_grad.c  differentiating through a call of a function
 *   control_flow/    cond, while_loop: branches traced as sub-graphs (its internal.h)
 */
#ifndef GB_GRAPH_INTERNAL_H
#define GB_GRAPH_INTERNAL_H

#include "autodiff/internal.h"
#include "gb_function.h"

typedef struct gb_specialization gb_specialization;

/* ---- the graph IR ---------------------------------------------------------------- */

/* One output of one node. */
typedef struct gb_edge {
    int32_t node;
    int32_t out;
} gb_edge;

enum {
    GB_NODE_STATEFUL = 1u << 0,  /* kept and run in program order */
    GB_NODE_DYNAMIC = 1u << 1,   /* an output shape has a -1 dim */
};

typedef struct gb_node {
    gb_op_id op;
    unsigned flags;
    const char *name;            /* unique in its graph: "model/dense/MatMul_1" */
    gb_attrs attrs;
    int nin, nout;
    gb_edge *in;
    gb_out_desc *out;
    int32_t after;               /* the previous stateful node (control edge), -1 */
    int32_t value0;              /* index of output 0 in the graph's value table */
    void *payload;               /* beyond the attributes, in the graph arena: a Const's
                                  * value bytes, a FusedElementwise's program */
    const char *backward_of;     /* made by the gradient of this forward op (traced in a
                                  * backward pass), and its type; NULL: forward */
    const char *backward_of_type;
} gb_node;

typedef struct gb_graph {
    gb_node *nodes;
    int n, cap;
    int nvalues;                 /* sum of the nodes' outputs */
    gb_bump mem;                /* strings, edges, constants */
    /* name -> count, for unique names (open addressing over the arena) */
    const char **names;
    int *name_counts;
    int names_cap, names_used;
    int32_t last_stateful;
} gb_graph;

/* n values of dtype dt copied into g's memory (a string tensor's bytes
 * with them: a graph outlives the scope or older graph holding them);
 * NULL after a memory error. */
void *gb__graph_store_value(gb_graph *g, gb_dtype dt, int64_t n, const void *src);
void gb__graph_init(gb_graph *g);
void gb__graph_free(gb_graph *g);
/* Node id of g is made by the backward pass of forward op `of` (of type
 * of_type; NULL: forward): numerics alerts of graphs say so. */
bool gb__graph_set_backward_of(gb_graph *g, int32_t id, const char *of, const char *of_type);
void *gb__graph_alloc(gb_graph *g, size_t n);
const char *gb__graph_strdup(gb_graph *g, const char *s);
/* Appends a node (inputs, outputs and attributes copied); its name is made
 * unique from base ("scope/Type" -> "scope/Type_1"); -1 after an error. */
int gb__graph_add(gb_graph *g, gb_op_id op, const char *base_name, const gb_edge *in, int nin,
                  const gb_out_desc *out, int nout, const gb_attrs *attrs);
/* A Const node holding a copy of t's value. */
int gb__graph_add_const(gb_graph *g, const gb_tensor *t, const char *base_name);
/* The name the next gb__graph_add with base_name would give its node,
 * into buf (control flow names its branches' scope after its node). */
const char *gb__graph_peek_name(const gb_graph *g, const char *base_name, char *buf, size_t n);
/* Makes node id stateful (kept, and run in program order) after it was
 * added: an If or While node whose sub-graphs hold a stateful node. */
void gb__graph_mark_stateful(gb_graph *g, int32_t id);
static inline const gb_out_desc *gb__graph_desc(const gb_graph *g, gb_edge e) {
    return &g->nodes[e.node].out[e.out];
}
/* The value-table index of an edge. */
static inline int32_t gb__value_of(const gb_graph *g, gb_edge e) {
    return g->nodes[e.node].value0 + e.out;
}
static inline bool gb__edge_eq(gb_edge a, gb_edge b) { return a.node == b.node && a.out == b.out; }
/* live[i]: node i is needed by an output or is stateful (or needed by
 * one); Placeholders are the caller's to add. */
void gb__graph_live(const gb_graph *g, const gb_edge *outputs, int nout, bool *live);
/* uses[v]: how many node inputs and function outputs read value v. */
void gb__graph_uses(const gb_graph *g, const gb_edge *outputs, int nout, int32_t *uses);

/* ---- signatures ---------------------------------------------------------------------- */

typedef struct gb_sig_static {
    gb_value_kind kind;
    char name[32];
    int64_t i;
    double d;
    bool b;
    const char *s;               /* interned (gb__intern): whole, compared by pointer */
} gb_sig_static;

/* A signature owns its input specs on the heap, sized to the call: a
 * model's step may take hundreds of tensors, and a signature lives on
 * the stack of every call that misses the exact-match fast path, and of
 * traces nested in traces (branches, backward graphs). */
typedef struct gb_signature {
    int nin, nstatic;
    gb_tensor_spec *in;          /* nin of them (malloc'd); names point into the function */
    gb_sig_static st[GB_FUNCTION_MAX_STATICS];
} gb_signature;

/* Gives s room for nin input specs (zeroed) and no statics; false (error)
 * when out of memory. gb__sig_free releases it (and is a no-op on a
 * zeroed signature). */
bool gb__sig_init(gb_signature *s, int nin);
void gb__sig_free(gb_signature *s);
/* dst = a copy of src with room for `extra` more input specs after its
 * own (zeroed; dst->nin counts src's only); false (error) when out of
 * memory. */
bool gb__sig_copy(gb_signature *dst, const gb_signature *src, int extra);
/* The signature of a call (gb__sig_free it after); false (error) for too
 * many or NULL inputs. */
bool gb__sig_of_call(const gb_function *f, gb_tensor *const *in, int nin, const gb_value *st,
                     int nst, gb_signature *out);
bool gb__sig_of_specs(const gb_function *f, const gb_tensor_spec *specs, int n,
                      const gb_value *st, int nst, gb_signature *out);
/* Whether cached signature `general` accepts `call` (-1 dims accept any). */
bool gb__sig_accepts(const gb_signature *general, const gb_signature *call);
/* How many dims are -1 (fewer is more specific). */
int gb__sig_unknown_dims(const gb_signature *s);
bool gb__sig_statics_equal(const gb_signature *a, const gb_signature *b);
/* The one copy of string s for the process (any length), so equal
 * strings are the same pointer; NULL when out of memory. */
const char *gb__intern(const char *s);
bool gb__static_equal(const gb_sig_static *a, const gb_sig_static *b);
/* Text of one input spec, "float32[-1,784]" (-1 as None would read oddly in C). */
const char *gb__spec_text(const gb_tensor_spec *s, char *buf, size_t n);
const char *gb__static_text(const gb_sig_static *s, char *buf, size_t n);
const char *gb__input_name(const gb_function *f, int i, char *buf, size_t n);

/* ---- concrete functions and functions ----------------------------------------------- */

/* One node as the executor runs it: everything the loop needs, packed,
 * so a run touches the steps and the value table and nothing else. */
typedef struct gb_exec_step {
    gb_kernel_fn kernel;
    const gb_op_def *def;
    const gb_node *node;         /* for names, attributes, dynamic shapes */
    int32_t *in;                 /* value index of each input */
    int32_t nin, nout;
    int32_t out0;                /* value index of output 0 (outputs are contiguous) */
    gb_op_id op;
    bool dynamic;                /* infer shapes and allocate outputs per run */
    bool random;                 /* new seeds on every run after the first */
    bool borrow;                 /* a variable read no later write can disturb:
                                  * it views the variable's memory, no reference */
} gb_exec_step;

enum { GB_PLAN_CALLER = -2, GB_EXEC_FEW_INPUTS = 16 };

/* How a concrete function runs (plan.c): the live nodes in order, and
 * for every value (node output) its memory. */
typedef struct gb_plan {
    gb_exec_step *steps;         /* the live nodes that run (not inputs or constants) */
    int nsteps;
    int32_t *step_inputs;        /* the steps' input indices, one array */
    int32_t *input_values;       /* value index of each Placeholder */
    int32_t *output_values;      /* value index of each function output */
    bool *output_repeats;        /* output k is the value of an earlier output */
    gb_tensor **args;            /* room for the most inputs a step has (widest): where
                                  * the executor gathers a step's input tensors when some
                                  * step takes more than GB_EXEC_FEW_INPUTS */
    int widest;
    int32_t *order;              /* live nodes, a topological order */
    int norder;
    int64_t *offset;             /* per value: arena offset, -1 when not planned,
                                  * GB_PLAN_CALLER: a function output, allocated in
                                  * the caller's scope at each run */
    int32_t *base;               /* per value: the value whose memory it uses */
    int32_t *last_use;           /* per value: position of its last reader */
    size_t *bytes;               /* per value: planned bytes (0: not planned) */
    size_t arena_bytes, naive_bytes;
    int inplace;                 /* outputs planned over an input that died at them */
    gb_tensor *headers;          /* per value: its reusable header */
    gb_tensor **values;          /* per value: the tensor of this run */
    uint64_t arena_moves;        /* its function's arena when its headers were bound */
    int64_t runs;
} gb_plan;

struct gb_concrete_function {
    int64_t id;
    struct gb_function *owner;
    gb_signature sig;
    gb_graph graph;
    int nin, nout;
    int32_t *input_nodes;        /* the Placeholder of each input */
    gb_edge *outputs;
    int64_t *captures;           /* ids of the variables read or written */
    char **capture_names;        /* their names, for a reason once one is freed */
    int ncaptures;
    bool dynamic;                /* some shape has a -1 dim: infer shapes per call */
    gb_plan *plan;
    struct gb_concrete_function *backward; /* traced on the first gradient through it */
    char *sig_text, *graph_text; /* built on first request */
    double trace_ms;
    struct gb_function *owned_function; /* a backward's own function, freed with it */
    void *owned_ctx;
    struct gb_specialization **specs;   /* static plans per input shapes (dynamic only) */
    int nspecs;
    /* The graph as traced, before the passes (kept for the dashboards). */
    gb_graph traced;
    gb_edge *traced_outputs;
    char *traced_text;
    gb_graph_stats stats;        /* what the passes did */
    unsigned passes_off;
    bool prune;                  /* rebuilds drop nodes nothing needs (pruning on) */
    int64_t *cf_records;         /* ids of its If/While nodes' sub-graphs (control_flow/) */
    int ncf_records;
};

/* Frees the sub-graphs of cf's If and While nodes (control_flow/registry.c). */
void gb__cf_records_free(gb_concrete_function *cf);

/* The static copy of dynamic cf planned for the shapes of `in`, made on
 * first use and cached (graph/specialize.c); NULL after an error. */
gb_concrete_function *gb__specialize(gb_concrete_function *cf, gb_tensor *const *in);
void gb__specializations_free(gb_concrete_function *cf);

struct gb_function {
    char name[64];
    gb_function_fn fn;
    void *user;
    char **input_names;
    int ninput_names;
    gb_tensor_spec *input_signature;
    int ninput_signature;
    bool reduce_retracing;
    unsigned passes_off;         /* gb_graph_pass mask */
    gb_concrete_function **cache;
    int ncache, capcache;
    gb_function_stats stats;
    char last_reason[1024];
    char *signatures_text;
    struct gb_fn_history *history; /* shared by every wrapper of this C function at one place */
    bool rewrapped;              /* its C function was wrapped there before */
    bool owned;                  /* the library's (gb__function_new_owned) */
    /* The arena every concrete function of it runs in (executor.c), the
     * largest plan's size; moves counts its reallocations. */
    void *arena;
    size_t arena_bytes;
    uint64_t arena_moves;
    _Atomic bool running;        /* a call in progress (calls do not nest) */
    gb_call_site created_at;     /* the user's call of gb_function_new (file NULL: the library's) */
    int64_t counted_calls;       /* calls when the counters last left as an event */
    double counted_at_us;        /* and when */
    struct gb_function *live_next, *live_prev; /* the live functions, to flush their counters */
    gb_concrete_function *latest;
    gb_concrete_function *last_exact; /* the last hit, when its signature has no -1 dim */
    /* A branch, loop cond or loop body (control_flow/): the scope its nodes
     * are named in ("model/cond/true"), and how errors name it; NULL for a
     * function of the user's. */
    const char *region;
};

/* A function the library makes for one object (a model's train step, a
 * loaded signature). No line of the user's wraps it, and the object's
 * address may be another object's later: its history is its own, freed
 * with it. Its static arguments select variants the library knows (the
 * train step that also returns the gradients, or the health checks'
 * figures): the first call of each is a first trace of its own, reported
 * as "first call of the variant ...", never a retrace, and not counted by
 * the excessive-retracing warning. */
gb_function *gb__function_new_owned(const char *name, gb_function_fn fn,
                                    const gb_function_options *opts);

/* Traces f for signature sig into a new concrete function (not cached);
 * NULL after an error. */
gb_concrete_function *gb__trace(gb_function *f, const gb_signature *sig);
void gb__concrete_free(gb_concrete_function *cf);
/* Runs cf; outputs go to the caller's scope. Returns nout or -1. */
int gb__execute(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out);
/* The plan of cf (buffer offsets, arena size); false after an error. */
bool gb__plan_build(gb_concrete_function *cf);
void gb__plan_free(gb_plan *p);

/* ---- passes (graph/passes/) ------------------------------------------------------------ */

/* A pass's edits, applied by the rebuild that ends it (passes/rewrite.c). */
typedef struct gb_rewrite {
    gb_concrete_function *cf;
    gb_graph *g;
    gb_edge *fwd;                /* per value: where its uses now read; node -1: itself */
    int changes;
    bool keep_all;               /* the rebuild keeps nodes nothing needs */
    bool keep_old;               /* the old graph lives on (the traced one) */
} gb_rewrite;
bool gb__rewrite_begin(gb_rewrite *rw, gb_concrete_function *cf);
/* Uses of `from` read `to` from now on. */
void gb__rewrite_forward(gb_rewrite *rw, gb_edge from, gb_edge to);
/* Where the uses of e read now (forwarding chains followed). */
gb_edge gb__rewrite_resolve(const gb_rewrite *rw, gb_edge e);
/* Rebuilds cf's graph: forwarded uses, only the nodes still needed; false
 * after an error (cf's graph is then unchanged). */
bool gb__rewrite_commit(gb_rewrite *rw);
void gb__rewrite_abort(gb_rewrite *rw);

/* One pass: false after an error. */
bool gb__pass_prune(gb_concrete_function *cf);
bool gb__pass_cse(gb_concrete_function *cf);
bool gb__pass_constant_fold(gb_concrete_function *cf);
bool gb__pass_arithmetic(gb_concrete_function *cf);
bool gb__pass_fuse_elementwise(gb_concrete_function *cf);
/* The pipeline (passes/pipeline.c): keeps the traced graph, runs the
 * passes not in cf->passes_off, and records their stats. */
bool gb__optimize(gb_concrete_function *cf);
/* The memory plan (passes/memory_plan.c): lifetimes, in-place reuse and
 * arena offsets of the plan's values; every value its own buffer when the
 * pass is off. */
bool gb__memory_plan(const gb_concrete_function *cf, gb_plan *p);
/* Reorders order[n] (a topological order of cf's live nodes) to free
 * memory early, within what data, variables and side effects allow
 * (passes/schedule.c); false after running out of memory. */
bool gb__schedule_for_memory(const gb_concrete_function *cf, int32_t *order, int n);
/* Whether node nd's value is a Const whose every element equals v. */
bool gb__const_all(const gb_graph *g, gb_edge e, double v);

/* ---- the trace in progress ------------------------------------------------------------ */

typedef struct gb_trace {
    gb_function *function;
    gb_concrete_function *cf;
    gb_graph *graph;
    bool first_trace;            /* variables may be created */
    /* eager tensor id -> Const node, so one captured value is one node */
    uint64_t *const_ids;
    int32_t *const_nodes;
    int nconsts, capconsts;
    struct gb_trace *outer;      /* a function traced inside another's trace */
    /* The name of the next node instead of "<scope>/<Type>" (If and While
     * nodes are named as their branches' scope: "cond", "while_1"). */
    const char *next_node_name;
} gb_trace;

extern _Thread_local gb_trace *gb__tl_trace;
/* The dispatcher's trace hook (installed by the first gb_function_new). */
int gb__trace_op(const gb_op_call *c, const gb_out_desc *desc, int nout, gb_tensor **out);
void gb__trace_install_hooks(void);
/* A symbolic tensor for output k of node: lives in the current scope. */
gb_tensor *gb__symbolic(int32_t node, int k, const gb_out_desc *d);
/* Records that the trace reads or writes variable id (a capture). */
void gb__trace_capture(gb_trace *t, int64_t var_id);

/* ---- retracing ------------------------------------------------------------------------- */

typedef struct gb_fn_history gb_fn_history;
/* The history of a C function the user wraps, shared by every
 * gb_function that wraps it at one place: the line that called
 * gb_function_new (as JAX keys on where a function was defined), so a
 * loop that wraps it again — whatever its user data — shares one, and two
 * wrappers made at two lines (a train and an eval loss) have one each
 * (the library's own functions have one each: gb__history_own, since the
 * object one is made for may sit where a freed one sat). Creating a wrapper for a key
 * seen before is the "function in a loop" mistake, which the next first
 * trace reports (*previous: the line of the earlier wrapper). */
gb_fn_history *gb__history_for(gb_function_fn fn, const char *file, int line, const char *name,
                               bool *rewrapped);
/* A history for one library-owned function alone (NULL when out of
 * memory: its calls are then not counted), freed with it. */
gb_fn_history *gb__history_own(const char *name);
void gb__history_free_own(gb_fn_history *h);
/* Notes one call (traced or not) and, when it traced, returns the
 * excessive-retracing warning to raise ("" when none). */
const char *gb__history_note_call(gb_fn_history *h, bool traced);
/* The line that made the history's wrappers ("train.c:40"; "" for the
 * library's), into buf. */
const char *gb__history_site(const gb_fn_history *h, char *buf, size_t n);

/* The kinds of cause of a trace, each with its fix (retrace.c). */
typedef enum gb_retrace_kind {
    GB_CAUSE_FIRST,
    GB_CAUSE_REWRAPPED,
    GB_CAUSE_COUNT,
    GB_CAUSE_DTYPE,
    GB_CAUSE_RANK,
    GB_CAUSE_DIM,
    GB_CAUSE_STATIC,
    GB_CAUSE_CAPTURE,
    GB_CAUSE_KINDS
} gb_retrace_kind;
/* The fixes of the kinds in a mask of (1 << kind), joined by "; ". */
void gb__retrace_fixes(unsigned kinds, char *buf, size_t n);

/* What made a trace: each part of the signature that differs from the
 * closest cached one (its kind, the argument and its values, for the
 * warning's "values seen"), the text of the reason before its cost, and
 * the call site. Worked out before the trace, written after it. */
enum { GB_RETRACE_MAX_DIFFS = 8 };
typedef struct gb_retrace_diff {
    int kind;                    /* gb_retrace_kind */
    char key[160];
    char value[48];
    char old[48];
} gb_retrace_diff;
typedef struct gb_retrace_cause {
    int kind;                    /* of the first difference */
    bool first;                  /* a first call, no retrace: nothing was cached (or, */
    bool variant_first;          /* this, the first call of a library function's variant) */
    int ndiffs;
    gb_retrace_diff diffs[GB_RETRACE_MAX_DIFFS];
    char text[1024];             /* what changed, old -> new, against what */
    char fix[512];               /* "" for a first call or a relaxed trace */
    char relaxed[512];           /* what reduce_retracing relaxed, or "" */
    char site[160];
} gb_retrace_cause;
/* Notes a trace in the history: the values of every argument that
 * changed, and the call; returns the warning to raise ("" when none). */
const char *gb__history_note_trace(gb_fn_history *h, const gb_retrace_cause *cause);
/* Works out why a call with signature sig traces against f's cache:
 * "first call", or every difference against the closest cached
 * signature, with the fix; relaxed (NULL: none) is the signature that
 * reduce_retracing makes of sig, which then replaces the fix. */
void gb__retrace_cause(const gb_function *f, const gb_signature *sig, bool rewrapped,
                       const gb_signature *relaxed, gb_retrace_cause *cause);
/* Writes the reason into f->last_reason with the trace's cost, counts
 * the trace, notes it in the history (raising the warning when due),
 * logs it when asked (gb_log_traces) and emits the GB_EVENT_TRACE event. */
void gb__report_trace(gb_function *f, gb_concrete_function *cf, const gb_retrace_cause *cause);

/* ---- text ---------------------------------------------------------------------------------- */

const char *gb__concrete_signature(gb_concrete_function *cf);
const char *gb__concrete_graph(gb_concrete_function *cf);
/* The graph as JSON ({"nodes": [...], "outputs": [...]}, webui/http_api.md),
 * as traced or as it runs; malloc'd, NULL after an error. */
char *gb__concrete_graph_json(const gb_concrete_function *cf, bool traced);

/* ---- gradients through calls -------------------------------------------------------------- */

/* Runs cf under the tapes that watch its inputs or its captured variables,
 * recording one record whose backward runs cf's (cached) traced backward. */
int gb__call_recorded(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out);

#endif
