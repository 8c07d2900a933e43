/* gb_function.h — functions traced into graphs (tf.function).
 *
 * gb_function_new wraps a C function that takes tensor inputs and static
 * (non-tensor) arguments and writes tensor outputs. Calling it computes the
 * call's signature — each tensor's dtype and shape, each static argument's
 * value, the variables the trace captured — and runs the most specific
 * cached concrete function that accepts it, or traces a new one: the C
 * function runs once on symbolic tensors, every op it calls becomes a
 * node of a graph, and later calls run the graph without the C code.
 *
 * As under tf.function, plain C in the function (printf, if, for) runs only
 * while tracing; gb_print() is an op and prints at every execution. A
 * variable may be created on the first trace only (a layer building
 * lazily). Every trace is recorded with its reason — which argument
 * changed, old -> new, against the closest cached signature — its call
 * site and its cost, and leaves as a GB_EVENT_TRACE event.
 *
 *   static int dbl(void *user, gb_tensor *const *in, int nin,
 *                  const gb_value *statics, int nstatics, gb_tensor **out) {
 *       printf("Tracing with %s\n", gb_dtype_name(gb_tensor_dtype(in[0])));
 *       out[0] = gb_add(in[0], in[0]);
 *       return 1;                          // number of outputs, -1 on error
 *   }
 *   gb_function *f = gb_function_new("double", dbl, NULL);
 *   gb_tensor *y;
 *   gb_function_call(f, &x, 1, NULL, 0, &y);  // traces, then runs the graph
 *   gb_function_call(f, &x, 1, NULL, 0, &y);  // runs the cached graph
 */
#ifndef GB_FUNCTION_H
#define GB_FUNCTION_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A function takes at most GB_FUNCTION_MAX_INPUTS tensors and returns at
 * most GB_FUNCTION_MAX_OUTPUTS: room for what real models need (a train
 * step returning every trainable variable's gradient; the gradient of a
 * call, whose graph takes the inputs and the outputs' gradients and
 * returns a gradient per input and per captured variable). The C
 * function writes its outputs into an array of GB_FUNCTION_MAX_OUTPUTS;
 * a call or trace beyond either limit is an error naming the function
 * and the limit. The library sizes what it keeps to the function, never
 * to these. */
#define GB_FUNCTION_MAX_INPUTS 4096
#define GB_FUNCTION_MAX_OUTPUTS 4096
#define GB_FUNCTION_MAX_STATICS 16

/* ---- static arguments ------------------------------------------------------ */

/* A static argument: part of the signature by value, as a Python argument
 * of a tf.function is. A new value means a new trace. */
typedef enum gb_value_kind { GB_VALUE_INT, GB_VALUE_DOUBLE, GB_VALUE_BOOL, GB_VALUE_STRING } gb_value_kind;
typedef struct gb_value {
    gb_value_kind kind;
    const char *name;        /* for signatures and retrace reasons; NULL: "static<i>" */
    union {
        int64_t i;
        double d;
        bool b;
        const char *s;       /* copied into the signature whole, any length */
    } as;
} gb_value;
#define GB_INT(name_, v) ((gb_value){.kind = GB_VALUE_INT, .name = (name_), .as.i = (v)})
#define GB_DOUBLE(name_, v) ((gb_value){.kind = GB_VALUE_DOUBLE, .name = (name_), .as.d = (v)})
#define GB_BOOL(name_, v) ((gb_value){.kind = GB_VALUE_BOOL, .name = (name_), .as.b = (v)})
#define GB_STRING(name_, v) ((gb_value){.kind = GB_VALUE_STRING, .name = (name_), .as.s = (v)})

/* ---- tensor specs -------------------------------------------------------------- */

/* The dtype and shape a tensor input must have; -1 for a dim of any size
 * (tf.TensorSpec with None). */
typedef struct gb_tensor_spec {
    const char *name;        /* the argument's name in signatures; NULL: "x<i>" */
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
} gb_tensor_spec;
#define GB_SPEC(name_, dt, ...)                                                        \
    ((gb_tensor_spec){.name = (name_), .dtype = (dt),                                   \
                      .rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                      .shape = {__VA_ARGS__}})
#define GB_SPEC_SCALAR(name_, dt) ((gb_tensor_spec){.name = (name_), .dtype = (dt), .rank = 0})

/* ---- functions ------------------------------------------------------------------ */

/* The wrapped C function: reads inputs (symbolic while tracing) and static
 * arguments, writes outputs, returns how many (0..GB_FUNCTION_MAX_OUTPUTS)
 * or -1 after an error. */
typedef int (*gb_function_fn)(void *user, gb_tensor *const *inputs, int ninputs,
                              const gb_value *statics, int nstatics, gb_tensor **outputs);

typedef struct gb_function_options {
    void *user;                         /* passed to fn */
    /* Names of the tensor inputs for signatures and retrace reasons
     * (ninput_names of them); the input signature's names win. */
    const char *const *input_names;
    int ninput_names;
    /* tf.function(input_signature=...): every call must fit these specs
     * (dtype and rank; -1 dims accept any size); a call that does not is
     * an error naming the argument, never a retrace. */
    const gb_tensor_spec *input_signature;
    int ninput_signature;
    /* On a second distinct shape, trace once with the differing dims
     * relaxed to -1 and serve both (PyTorch's automatic dynamic shapes). */
    bool reduce_retracing;
    /* Graph passes to skip, a mask of gb_graph_pass (for debugging: the
     * graph then runs closer to how it was traced); 0 runs them all. */
    unsigned passes_off;
} gb_function_options;

typedef struct gb_function gb_function;
typedef struct gb_concrete_function gb_concrete_function;

/* The graph passes run on every trace, in this order (after Grappler's
 * default pipeline). Each keeps stateful ops (assignments, prints, random
 * draws) and their program order. */
typedef enum gb_graph_pass {
    GB_PASS_PRUNING = 1u << 0,           /* drop what no output or stateful op needs */
    GB_PASS_CSE = 1u << 1,               /* merge identical nodes */
    GB_PASS_CONSTANT_FOLDING = 1u << 2,  /* evaluate subgraphs of constants once */
    GB_PASS_ARITHMETIC = 1u << 3,        /* x*1, x+0, neg(neg x), transpose pairs, ... */
    GB_PASS_FUSION = 1u << 4,            /* elementwise chains -> one loop */
    GB_PASS_MEMORY_PLAN = 1u << 5,       /* reuse buffers that died; in place */
} gb_graph_pass;
#define GB_GRAPH_PASSES 6

/* A function wrapping fn. Wrappers of one C function made by one line of
 * code share a history of calls (for the excessive-retracing warning):
 * making one there again, whatever its user data, is the "function in a
 * loop" mistake, which its first trace reports; wrappers made at two
 * lines (a train and an eval loss) keep histories of their own. */
gb_function *gb_function_new(const char *name, gb_function_fn fn, const gb_function_options *opts);
void gb_function_free(gb_function *f);

/* Runs f on inputs (tensors) and statics; writes the outputs, returns how
 * many or -1 (sticky error). Outputs belong to the caller's scope. */
int gb_function_call(gb_function *f, gb_tensor *const *inputs, int ninputs,
                     const gb_value *statics, int nstatics, gb_tensor **outputs);

/* tf.config.run_functions_eagerly: calls run fn directly, nothing traced. */
void gb_run_functions_eagerly(bool on);
bool gb_functions_run_eagerly(void);

/* ---- introspection ---------------------------------------------------------------- */

/* The concrete function for a signature, traced if needed but not run
 * (Function.get_concrete_function): specs for the tensor inputs. */
gb_concrete_function *gb_function_get_concrete(gb_function *f, const gb_tensor_spec *specs,
                                               int nspecs, const gb_value *statics,
                                               int nstatics);
/* Runs a concrete function directly (inputs must fit its signature). */
int gb_concrete_call(gb_concrete_function *cf, gb_tensor *const *inputs, int ninputs,
                     gb_tensor **outputs);

typedef struct gb_function_stats {
    int64_t calls;           /* calls of gb_function_call */
    int64_t cache_hits;      /* calls served by a cached concrete function */
    int64_t traces;          /* traces made (tracing count) */
    double trace_ms;         /* time spent tracing */
    double last_trace_ms;    /* the cost of the last trace (in its reason too) */
    int concrete;            /* concrete functions cached now */
} gb_function_stats;
gb_function_stats gb_function_get_stats(const gb_function *f);
int gb_function_tracing_count(const gb_function *f);
const char *gb_function_name(const gb_function *f);
/* Every cached signature, like pretty_printed_concrete_signatures():
 * inputs with dtype and shape, static values, captures, outputs. The text
 * lives in f until its next call. */
const char *gb_function_concrete_signatures(gb_function *f);
/* Why the last trace happened, in the words of the trace event ("" before
 * the first): what changed against the closest cached signature, the
 * call site, the cost and the fix —
 *   "input 0 'x' changed dim 0: 3 -> 4 (float32[3] -> float32[4]), against
 *    the closest cached signature sq(x: float32[3]) -> (float32[3]); called
 *    at train.c:42; traced in 0.31 ms. Fix: declare the dim -1 ..."
 * A call refused before tracing (an input that does not fit the input
 * signature) or a trace that fails leaves it as it was. */
const char *gb_function_last_trace_reason(const gb_function *f);

/* One line on stderr per trace as it happens ("glassbox: traced 'f'
 * (trace 2): <reason>"), as TORCH_LOGS=recompiles does; also turned on,
 * with no change to the program, by the environment variable
 * GB_LOG_TRACES=1. */
void gb_log_traces(bool on);
bool gb_traces_logged(void);

/* Sends the counters of every live function whose calls changed since
 * they last left as a GB_EVENT_FUNCTION event (the summary writer calls
 * it when it closes, so a store's counts are exact at the end of a run). */
void gb_function_flush_counters(void);
/* The graph of the most recently traced concrete function, one node per
 * line, attributes by name and variable ops naming their variable:
 *     dense/ReadVariableOp = ReadVariableOp 'dense/kernel'() -> float32[784,10]
 *     dense/MatMul = MatMul(x, dense/ReadVariableOp) {transpose_a=false, transpose_b=false} -> float32[-1,10]
 * and a backward pass's nodes under their forward node's gradient scope
 * ("gradients/dense/MatMul_grad/MatMul"); the signature and graph of one
 * concrete function. */
const char *gb_function_graph_text(gb_function *f);
const char *gb_concrete_signature_text(const gb_concrete_function *cf);
const char *gb_concrete_graph_text(const gb_concrete_function *cf);
int gb_concrete_node_count(const gb_concrete_function *cf);
/* The graph as traced, before the passes (every node, needed or not). */
const char *gb_concrete_traced_graph_text(const gb_concrete_function *cf);
const char *gb_function_traced_graph_text(gb_function *f);

/* What the passes made of one concrete function's graph. */
typedef struct gb_pass_stats {
    const char *pass;        /* "pruning", "cse", ... */
    bool ran;                /* false: turned off */
    int nodes;               /* nodes after it */
    double ms;               /* its cost */
} gb_pass_stats;
typedef struct gb_graph_stats {
    int nodes_traced;                    /* before the passes */
    gb_pass_stats passes[GB_GRAPH_PASSES - 1];  /* in order; the memory plan is below */
    int npasses;
    size_t arena_bytes;                  /* the planned arena */
    size_t naive_bytes;                  /* every planned value in its own buffer */
    int inplace;                         /* outputs written over an input that died */
    /* A graph with -1 dims plans nothing for the values they size (the
     * batch): it is planned again for each call's shapes. These are the
     * plan for the shapes of the call that traced it — what the function
     * runs with — and those shapes ("float32[32,784], int32[32]"); equal
     * to the above, with call_shapes "", when every dim is known or no
     * call traced it (gb_function_get_concrete). */
    size_t call_arena_bytes, call_naive_bytes;
    char call_shapes[128];
} gb_graph_stats;
gb_graph_stats gb_concrete_graph_stats(const gb_concrete_function *cf);
/* The stats of the most recently traced concrete function. */
gb_graph_stats gb_function_graph_stats(const gb_function *f);

/* ---- trace events ------------------------------------------------------------------- */

/* The detail of a GB_EVENT_TRACE event. */
typedef struct gb_trace_event {
    const char *function;     /* the gb_function's name */
    int64_t concrete_id;      /* unique per concrete function in the process */
    int trace_number;         /* 1 for the function's first trace */
    bool retrace;             /* a trace caused by a change from what was traced before;
                               * false for a first call, and for the first call of
                               * each variant of a function the library made (the
                               * train step's) */
    const char *signature;    /* as in gb_function_concrete_signatures */
    const char *reason;       /* "first call", or what changed and the fix */
    const char *call_site;    /* "train.c:42", or "" (the line of the call that traced) */
    double duration_ms;       /* the trace's cost */
    int nodes;                /* nodes in the graph */
    const char *graph;        /* the graph as text (gb_concrete_graph_text) */
    const char *graph_traced; /* the graph before the passes (NULL: not kept) */
    const gb_graph_stats *stats; /* node counts per pass, planned bytes */
    const char *graph_json;   /* the graph as JSON (nodes with inputs, attributes,
                               * output dtypes and shapes; webui/http_api.md) */
    const char *graph_traced_json; /* the same before the passes */
    bool warning;             /* this trace raised the excessive-retracing warning */
} gb_trace_event;

/* The detail of a GB_EVENT_FUNCTION event: a function's counters, sent
 * after its first call, then after any call a second or more after the
 * last event, when the function is freed and by
 * gb_function_flush_counters — at most a second behind while it runs,
 * exact at the end, and cheap for a training loop. */
typedef struct gb_function_event {
    const char *function;
    gb_function_stats stats;
} gb_function_event;

#if !defined(GB_BUILDING_LIBRARY)
#define gb_function_new(...) GB_AT(gb_function_new, __VA_ARGS__)
#define gb_function_call(...) GB_AT(gb_function_call, __VA_ARGS__)
#define gb_function_get_concrete(...) GB_AT(gb_function_get_concrete, __VA_ARGS__)
#define gb_concrete_call(...) GB_AT(gb_concrete_call, __VA_ARGS__)
#define gb_function_concrete_signatures(...) GB_AT(gb_function_concrete_signatures, __VA_ARGS__)
#define gb_function_graph_text(...) GB_AT(gb_function_graph_text, __VA_ARGS__)
#define gb_concrete_signature_text(...) GB_AT(gb_concrete_signature_text, __VA_ARGS__)
#define gb_concrete_graph_text(...) GB_AT(gb_concrete_graph_text, __VA_ARGS__)
#define gb_concrete_traced_graph_text(...) GB_AT(gb_concrete_traced_graph_text, __VA_ARGS__)
#define gb_function_traced_graph_text(...) GB_AT(gb_function_traced_graph_text, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
