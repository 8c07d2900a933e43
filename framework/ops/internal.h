/* ops/internal.h — the op-writer's kit: descriptors, the dispatcher, hooks.
 *
 * Included by op families (ops/, and the op kernels that live with the
 * layer whose state they touch: optim/'s fused updates, debug/'s
 * CheckNumerics) and by everything that calls the dispatcher directly.
 * The hooks here are how the layers above take part in every op call
 * without the dispatcher naming them: the tape records through
 * gb__record_hook, the tracer through gb__trace_hook, numerics checks and
 * placement/timing logs through the post-op hooks.
 */
#ifndef GB_OPS_INTERNAL_H
#define GB_OPS_INTERNAL_H

#include "core/internal.h"

/* ---- ops and the dispatcher ----------------------------------------------------- */

/* A While node outputs its loop variables and, for its gradient, the
 * values each took at every iteration: up to 16 in all. */
#define GB_MAX_OUTPUTS 16

typedef struct gb_op_call {
    gb_op_id op;
    const struct gb_op_def *def;
    gb_tensor *const *in;
    int nin;
    const gb_attrs *attrs;
    const void *payload;         /* a graph node's data beyond its attributes: the
                                  * program of a FusedElementwise node */
} gb_op_call;

/* The dtype and shape of one output, as inferred before anything runs. */
typedef struct gb_out_desc {
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
} gb_out_desc;

/* Checks inputs and attributes, writes the outputs' descriptions, returns
 * the number of outputs or -1 after gb__op_error(). */
typedef int (*gb_infer_fn)(const gb_op_call *c, gb_out_desc *out);
/* Fills the allocated outputs. Returns false after gb__op_error() for
 * errors only the data can show (an index out of range). */
typedef bool (*gb_kernel_fn)(const gb_op_call *c, gb_tensor **out);

enum {
    GB_OPF_STATEFUL = 1u << 0,    /* side effects: never pruned or reordered */
    GB_OPF_ELEMENTWISE = 1u << 1, /* fusable */
    GB_OPF_RANDOM = 1u << 2,
    GB_OPF_VIEW = 1u << 3,        /* outputs share input memory: no data allocated */
    GB_OPF_NO_RECORD = 1u << 4,   /* tapes do not see through it (StopGradient) */
    GB_OPF_INPLACE = 1u << 5,     /* its output may take the memory of an input that
                                   * dies at it (the memory plan's in-place reuse) */
    GB_OPF_OPTIONAL_DYS = 1u << 7, /* its built-in gradient reads a NULL gradient of an output
                                    * after the first as zeros: the tape passes NULL instead of
                                    * filling a tensor (DotProductAttention's weights) */
    GB_OPF_ALLOCATES = 1u << 6,   /* the kernel makes its outputs in the current scope: their
                                   * shapes are known only once it ran (If, While) */
};

/* Ops that write variables (Assign*VariableOp, the optimizers' fused
 * updates) have no outputs to check; this names the variables a call
 * wrote, its own variable first, so the numerics check can look at their
 * new values. nonfinite[i] says whether the kernel found a NaN/Inf in
 * vars[i] while writing it (1 or 0), or -1 when it did not look (the
 * check scans it then). Writes at most GB_MAX_WRITTEN; returns the count. */
#define GB_MAX_WRITTEN 8
typedef int (*gb_written_fn)(const gb_op_call *c, struct gb_variable **vars,
                             signed char *nonfinite);

typedef struct gb_op_def {
    const char *name;       /* the op type, "MatMul" */
    int arity;              /* number of inputs; -1 variadic */
    unsigned flags;
    const char *inputs_doc; /* its inputs, when more than its operands say (NULL);
                             * its attributes are declared in ops.def */
    gb_infer_fn infer;
    gb_kernel_fn kernel;
    gb_grad_fn grad;        /* NULL: no gradient */
    gb_written_fn written;  /* NULL: writes no variable */
} gb_op_def;

#define GB_OP(id, type_name, sym, attrs) extern const gb_op_def gb_opdef_##sym;
#include "ops.def"
#undef GB_OP

extern const gb_op_def *const gb_op_table[GB_OP_COUNT];

/* The one dispatcher: runs op on inputs, writes outputs, returns their
 * number or -1 (sticky error). */
int gb__dispatch(gb_op_id op, gb_tensor *const *in, int nin, const gb_attrs *attrs,
                 gb_tensor **out);
/* Single-output convenience. */
gb_tensor *gb__op1(gb_op_id op, gb_tensor *const *in, int nin, const gb_attrs *attrs);
gb_tensor *gb__op_unary(gb_op_id op, gb_tensor *x);
gb_tensor *gb__op_binary(gb_op_id op, gb_tensor *a, gb_tensor *b);
/* The gradient function in force for op (registered or built in). */
gb_grad_fn gb__grad_fn(gb_op_id op);

/* An op's error: names its type and instance. */
void gb__op_error(const gb_op_call *c, gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The op name shown in errors and logs: "<scope>/<Type>", or
 * "gradients/<forward>_grad/<Type>" inside a backward pass. */
const char *gb__op_display_name(const gb_op_call *c, char *buf, size_t n);

/* ---- attributes by name (ops/attr_schema.c) -------------------------------------------- */

/* Each op's attributes, declared once in ops.def: a name, a type and the
 * gb_attrs slot that holds it. Everything that shows or stores attributes
 * (graph text, the graphs' JSON, SavedModel, tests) goes through the one
 * printer and the one parser below, so none of them knows a slot. */
typedef enum gb_attr_type {
    GB_ATTR_INT,     /* i[slot] */
    GB_ATTR_BOOL,    /* i[slot]: 0 or 1 */
    GB_ATTR_INTS,    /* i[slot..]: len entries, or as many as GB_ALEN_* says */
    GB_ATTR_PAIRS,   /* i[slot..ni): [before, after] pairs, one per axis */
    GB_ATTR_AXES,    /* i[slot]: a bitmask of axes, shown as the list of axes */
    GB_ATTR_ENUM,    /* i[slot]: an index into names ("VALID", "SAME") */
    GB_ATTR_DTYPE,   /* i[slot]: a gb_dtype, shown by name */
    GB_ATTR_COUNT,   /* i[slot]: the length of the list at slot len; derived, never shown */
    GB_ATTR_DOUBLE,  /* f[slot] */
    GB_ATTR_STRING,  /* s */
    GB_ATTR_VAR,     /* vars[slot]: a variable, shown by name */
    GB_ATTR_VARS,    /* vars[slot..nvars): variables, shown by name */
} gb_attr_type;

/* An INTS attribute's length when not fixed: the slots up to ni, or the
 * first or second half of them (Slice's begin and size). */
enum { GB_ALEN_REST = 0, GB_ALEN_HALF1 = -1, GB_ALEN_HALF2 = -2 };

typedef struct gb_attr_def {
    const char *name;
    gb_attr_type type;
    int slot;
    int len;                   /* INTS: a count or GB_ALEN_*; COUNT: the counted list's slot */
    const char *const *names;  /* ENUM: the names of values 0, 1, ... (NULL-terminated) */
} gb_attr_def;

/* op's attributes in declaration order; *n their number. */
const gb_attr_def *gb__op_attrs(gb_op_id op, int *n);
/* Whether the call's typed attributes hold values of their type: an enum
 * one of its names, a bool 0 or 1, a dtype a dtype, axes below
 * GB_MAX_RANK. The dispatcher checks every call (eager, traced, loaded),
 * so what runs can be written and read back as the same values; false
 * after gb__op_error naming the attribute. */
bool gb__attrs_valid(const gb_op_call *c);

/* How a variable attribute is written: its id as `id` in buf (SavedModel
 * writes an index into its variable list); false fails the print. NULL:
 * by the variable's name. */
typedef bool (*gb_attr_var_fn)(void *user, int64_t id, char *buf, size_t n);
typedef struct gb_attrs_style {
    bool json;           /* {"axes": [2], "keepdims": true}; else {axes=[2], keepdims=true} */
    bool omit_variable;  /* leave out the VAR attribute (graph text prints it after the type) */
    gb_attr_var_fn var;
    void *user;
} gb_attrs_style;

/* op's attributes a, printed as an object ("{...}"; text style: "" when
 * there are none) into buf, snprintf-like: returns the length the whole
 * text needs, or -1 when st->var failed. */
int gb__attrs_print(gb_op_id op, const gb_attrs *a, const gb_attrs_style *st, char *buf,
                    size_t n);
/* The name of variable attribute k of a, quoted ('dense/kernel'), into buf;
 * "" when op has no VAR attribute. */
const char *gb__attrs_variable_label(gb_op_id op, const gb_attrs *a, char *buf, size_t n);
/* Parses what gb__attrs_print writes, in either style, into *a (zeroed
 * first): every attribute of the schema exactly once, nothing else;
 * variables are given as integers (ids, or a file's indices). False after
 * a GB_ERR_VALUE error "<what>: <Op> attribute '<name>': <why>". */
bool gb__attrs_parse(gb_op_id op, const char *text, gb_attrs *a, const char *what);

/* ---- variables as ops see them ---------------------------------------------------- */

/* A variable's current value buffer, and installing its new value: a
 * fresh buffer (the old one loses the variable's reference) or the
 * current one, written in place. Every write of a variable goes through
 * gb__variable_install, which counts it: for kernels that update
 * variables in place or copy on write (the fused optimizer updates). */
gb_buffer *gb__variable_buffer(struct gb_variable *v);
void gb__variable_install(struct gb_variable *v, gb_buffer *b);
/* The registry of variables by id (ops/variable_registry.c): ids are
 * never reused; a freed variable's id resolves to NULL. */
int64_t gb__variable_register(struct gb_variable *v);
void gb__variable_unregister(int64_t id);
struct gb_variable *gb__variable_by_id(int64_t id);
int64_t gb__variable_id(const struct gb_variable *v);
/* The ids of the variables an op call reads or writes (its resource
 * attributes); returns how many. */
int gb__call_variable_ids(const gb_op_call *c, int64_t *ids, int cap);
/* Called when a variable is created (graph/ installs it to refuse
 * variables made on a function's later traces); false refuses. */
typedef bool (*gb_variable_created_fn)(const char *name);
extern _Atomic(gb_variable_created_fn) gb__variable_created_hook;
/* A ReadVariableOp run by a graph that proved no write disturbs the value
 * while it is used: out views the variable's memory, taking no reference;
 * false (error) when the variable was freed. */
bool gb__variable_borrow(const gb_op_call *c, gb_tensor *out);
/* Writes so far; a new variable's initial value is write 1. */
uint64_t gb__variable_writes(const struct gb_variable *v);

/* What numerics checks (debug/) last learned about a variable's value:
 * the write it is about, whether that value held a NaN/Inf, and, when a
 * checked write made it, the writing op's type and step. Kept with the
 * variable so a later read can say where its NaN came from. */
typedef struct gb_variable_numerics {
    uint64_t write;        /* the gb__variable_writes() it is about; 0: nothing known */
    bool nonfinite;
    const char *writer;    /* op type of the checked write; NULL: learned from a read */
    bool has_step;
    int64_t step;
} gb_variable_numerics;
gb_variable_numerics *gb__variable_numerics(struct gb_variable *v);
/* The variable behind a ReadVariableOp / Assign*VariableOp call. */
struct gb_variable *gb__call_variable(const gb_op_call *c);
bool gb__variable_is_trainable(const struct gb_variable *v);

/* ---- hooks the dispatcher calls --------------------------------------------------- */

/* Records a finished op call on the tapes that watch it; autodiff/
 * installs it before its first tape sets a gb__tl_recording bit. */
typedef void (*gb_record_hook_fn)(const gb_op_call *c, gb_tensor **out, int nout);
extern _Atomic(gb_record_hook_fn) gb__record_hook;

/* Tracing (functions into graphs) plugs in here; NULL until it exists. */
typedef int (*gb_trace_hook_fn)(const gb_op_call *c, const gb_out_desc *desc, int nout,
                                gb_tensor **out);
extern _Atomic(gb_trace_hook_fn) gb__trace_hook;

/* Post-kernel hooks (numerics, placement, timing): one flag word so the
 * common case costs one branch. Data-worker threads run ops too, so the
 * word and the hooks are atomics. */
enum {
    GB_HOOK_PLACEMENT = 1u << 0,
    GB_HOOK_TIMING = 1u << 1,
    GB_HOOK_NUMERICS = 1u << 2,
    GB_HOOK_PROFILE = 1u << 3,   /* the profiler's capture (debug/profiler.c) */
    /* the kernel is timed: for the timing log, the profiler, or both */
    GB_HOOK_TIMED = GB_HOOK_TIMING | GB_HOOK_PROFILE,
};
extern _Atomic unsigned gb__hook_flags;
void gb__hook_flag_set(unsigned flag, bool on);
/* The numerics check (debug/); returns false to fail the op. */
typedef bool (*gb_post_op_fn)(const gb_op_call *c, gb_tensor **out, int nout);
extern _Atomic(gb_post_op_fn) gb__numerics_hook;
/* Placement and timing logs and the profiler (debug/); when timed, the
 * kernel started at t0 (gb__now_us) and took us; out are its outputs. */
typedef void (*gb_op_log_fn)(const gb_op_call *c, gb_tensor *const *out, int nout, double t0,
                             double us);
extern _Atomic(gb_op_log_fn) gb__op_log_hook;
/* The post-kernel hooks in `hooks` (the flag word read once per op or per
 * graph run); false when the numerics check failed the op. The dispatcher
 * and the graph executor both call it. */
bool gb__run_post_hooks(const gb_op_call *c, unsigned hooks, gb_tensor **out, int nout,
                        double t0, double us);

/* ---- FusedElementwise ---------------------------------------------------------------- */

/* The program of a FusedElementwise node (made by graph/passes/
 * fuse_elementwise.c, run by ops/fused.c): steps in order, each an
 * elementwise op of the fused chain over the whole output shape (an
 * elementwise op commutes with broadcasting, so computing every step at
 * the output's shape is exact). The last step is the node's output. Plain
 * data, kept in the graph's arena like a Const's value. */
enum { GB_FUSED_MAX_STEPS = 32, GB_FUSED_MAX_INPUTS = 8 };
typedef enum gb_fused_kind { GB_FUSED_MAP, GB_FUSED_PAIR, GB_FUSED_BINARY } gb_fused_kind;
typedef struct gb_fused_step {
    gb_op_id op;
    gb_fused_kind kind;
    int16_t a, b;                /* operands: k >= 0 step k's result, k < 0 node input -1-k */
    const char *name;            /* the node this step replaced */
    gb_attrs attrs;
} gb_fused_step;
typedef struct gb_fused_program {
    gb_dtype dtype;              /* of every step */
    int nsteps;
    gb_fused_step steps[GB_FUSED_MAX_STEPS];
} gb_fused_program;
/* Which kind of fusable op `op` is for dtype dt; false when it cannot be
 * fused (not elementwise, changes dtype, or no kernel for dt). */
bool gb__fused_kind_of(gb_op_id op, gb_dtype dt, gb_fused_kind *kind);

/* ---- helpers for op families ------------------------------------------------------ */

/* Normalizes a possibly negative axis against rank; -1 after an error. */
int gb__norm_axis(const gb_op_call *c, int64_t axis, int rank);
/* Unknown dims. A traced shape may hold -1 for a dim known only when the
 * graph runs (an input signature's -1). Inference reads it as "any size":
 * a check that needs the size is skipped — the executor infers such
 * nodes again at every call, with the real shapes, and reports it then —
 * and a result that depends on it is -1. */
static inline bool gb__dims_match(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }
/* The dim two matching dims stand for: the known one, else -1. */
static inline int64_t gb__dims_merge(int64_t a, int64_t b) { return a >= 0 ? a : b; }
/* Same rank and every dim matching. */
bool gb__shapes_match(int ra, const int64_t *a, int rb, const int64_t *b);
/* NumPy broadcasting of one dim pair into *out (-1 against 1 stays -1,
 * -1 against n is n); false when they cannot broadcast. */
bool gb__broadcast_dim(int64_t a, int64_t b, int64_t *out);
/* NumPy broadcasting of two shapes into out; false after an error. */
bool gb__broadcast_shapes(const gb_op_call *c, int ra, const int64_t *sa, int rb,
                          const int64_t *sb, int *rout, int64_t *sout);
/* x broadcast to like's shape, known only when a graph runs if like's has
 * an unknown dim (then like is BroadcastTo's shape donor); the gradients
 * of reductions use it. */
gb_tensor *gb__broadcast_like(gb_tensor *x, gb_tensor *like);
/* gb_fill of t's dtype and shape; for a traced t with an unknown dim, the
 * value broadcast like t (gradients' zeros and ones). NULL for NULL. */
gb_tensor *gb__fill_like(gb_tensor *t, double value);
/* Sums g down to the given shape (undoing broadcasting); used by gradients. */
gb_tensor *gb__sum_to_shape(gb_tensor *g, int rank, const int64_t *shape);
gb_tensor *gb__sum_to(gb_tensor *g, const gb_tensor *like);

/* ---- ops the layers call directly (ops/lstm.c, layer_norm.c, attention.c) -------------- */

/* Keras' default LSTM (sigmoid gates, tanh) over xw = x @ kernel + bias
 * [batch, T, 4 units], its steps in the order processed, from h0 and c0
 * (both NULL: zeros): every h and c [batch, T, units], as one BlockLSTM
 * op whose gradient is one BlockLSTMGrad for the whole sequence. */
bool gb__block_lstm(gb_tensor *xw, gb_tensor *rec, gb_tensor *h0, gb_tensor *c0, gb_tensor **hs,
                    gb_tensor **cs);

/* (x - mean) / sqrt(var + epsilon) * gamma + beta over x's last axis
 * (LayerNormalization), as one LayerNorm op (ops/layer_norm.c) whose
 * gradient is one LayerNormGrad. */
gb_tensor *gb__layer_norm(gb_tensor *x, gb_tensor *gamma, gb_tensor *beta, double epsilon);

/* softmax(scale q k^T, where mask allows) v per head over q [B, Tq, H, dk],
 * k [B, Tv, H, dk], v [B, Tv, H, dv] (mask NULL: all; else bool,
 * broadcasting to [B, H, Tq, Tv]): [B, Tq, H, dv] and, into *weights
 * unless NULL, the weights [B, H, Tq, Tv], as one DotProductAttention op
 * (ops/attention.c) whose gradient is one DotProductAttentionGrad. */
gb_tensor *gb__dot_product_attention(gb_tensor *q, gb_tensor *k, gb_tensor *v, gb_tensor *mask, double scale,
                                     gb_tensor **weights);

/* y * (dy - sum(dy * y)) over the last axis: the gradient of a softmax y
 * (plain or masked) as one SoftmaxGrad op (ops/softmax.c). */
gb_tensor *gb__softmax_grad(gb_tensor *y, gb_tensor *dy);

#endif
