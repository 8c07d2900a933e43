/* internal.h — the engine's private structures and the op-writer's kit.
 *
 * Included only by the framework sources. It defines the tensor and buffer layout,
 * the op descriptor and dispatcher, the allocation and error helpers that
 * op families use, and the hook points (tapes, tracing, numerics,
 * observers) the dispatcher calls. Library sources define
 * GB_BUILDING_LIBRARY so the public headers' call-site macros stay out.
 */
#ifndef GB_INTERNAL_H
#define GB_INTERNAL_H

#ifndef GB_BUILDING_LIBRARY
#define GB_BUILDING_LIBRARY 1
#endif

#include <assert.h>
#include <stdarg.h>
#include <string.h>

#include "glassbox.h"

struct gb_op_call;

/* ---- buffers and tensors ---------------------------------------------------- */

/* Memory behind one or more tensors. Scope-owned buffers live in a scope
 * arena and die with it; heap buffers (variable values) are reference
 * counted so a read keeps its value alive after the variable moves on. */
typedef struct gb_buffer {
    void *data;
    size_t nbytes;
    _Atomic int32_t refcount;  /* heap buffers only; pipelines share them across threads */
    bool heap;
    struct gb_scope *scope;    /* arena buffers: the scope that owns them */
} gb_buffer;

enum {
    GB_TF_SYMBOLIC = 1u << 0,  /* produced while tracing: no data */
};

struct gb_tensor {
    gb_dtype dtype;
    uint8_t rank;
    uint8_t flags;
    int64_t size;
    int64_t shape[GB_MAX_RANK];
    void *data;
    gb_buffer *buf;
    struct gb_scope *scope;
    uint64_t id;               /* identity for tapes; kept tensors keep it */
    uint64_t tape_bits;        /* tapes (by slot) that watch this tensor */
    struct gb_node *node;      /* graph node while traced */
};

/* ---- scopes ------------------------------------------------------------------ */

typedef void (*gb_defer_fn)(void *arg);

struct gb_scope *gb__scope_current(void);
/* Bump-allocates n bytes, 64-byte aligned, in the current scope. Never NULL
 * unless memory is exhausted (then a GB_ERR_MEMORY error is recorded). */
void *gb__scope_alloc(size_t n);
void *gb__scope_alloc_in(struct gb_scope *s, size_t n);
/* Runs fn(arg) when the current scope ends (or the given one). */
bool gb__scope_defer(gb_defer_fn fn, void *arg);
bool gb__scope_defer_in(struct gb_scope *s, gb_defer_fn fn, void *arg);
/* Called by the scope when it ends, before memory is released. */
void gb__tapes_on_scope_end(int depth);

/* A fresh tensor header + data in the current scope. data NULL when
 * alloc_data is false (views). */
gb_tensor *gb__tensor_new(gb_dtype dt, int rank, const int64_t *shape, bool alloc_data);
/* Makes the (data-less) output of a GB_OPF_VIEW op share src's buffer,
 * taking a reference when it is a variable's heap buffer. */
bool gb__view_into(gb_tensor *out, gb_tensor *src);
uint64_t gb__next_tensor_id(void);
int64_t gb__shape_size(int rank, const int64_t *shape);
/* Heap buffers: a new one with refcount 1, and releasing a reference. */
gb_buffer *gb__buffer_new_heap(size_t nbytes);
void gb__buffer_unref(gb_buffer *b);
/* A variable's current value buffer, and replacing it (the old one loses
 * the variable's reference): for kernels that update variables in place
 * or copy on write (the fused optimizer updates). */
gb_buffer *gb__variable_buffer(struct gb_variable *v);
void gb__variable_install(struct gb_variable *v, gb_buffer *b);
/* The variable behind a ReadVariableOp / Assign*VariableOp call. */
struct gb_variable *gb__call_variable(const struct gb_op_call *c);
bool gb__variable_is_trainable(const struct gb_variable *v);

/* ---- errors ---------------------------------------------------------------------- */

struct gb_op_call;
/* Records the first error of the thread; later ones are dropped. */
void gb__error(gb_status code, const char *op_type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gb__verror(gb_status code, const char *op_type, const char *op_name,
                const char *fmt, va_list ap);
/* An op's error: names its type and instance. */
void gb__op_error(const struct gb_op_call *c, gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gb__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Formats a shape as "[2,3]" into buf. */
const char *gb__shape_fmt(int rank, const int64_t *shape, char *buf, size_t n);

/* ---- ops and the dispatcher ----------------------------------------------------- */

#define GB_MAX_OUTPUTS 8

typedef struct gb_op_call {
    gb_op_id op;
    const struct gb_op_def *def;
    gb_tensor *const *in;
    int nin;
    const gb_attrs *attrs;
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
};

typedef struct gb_op_def {
    const char *name;       /* the op type, "MatMul" */
    int arity;              /* number of inputs; -1 variadic */
    unsigned flags;
    const char *attrs_doc;  /* how the op uses gb_attrs slots */
    gb_infer_fn infer;
    gb_kernel_fn kernel;
    gb_grad_fn grad;        /* NULL: no gradient */
} gb_op_def;

#define GB_OP(id, type_name, sym) extern const gb_op_def gb_opdef_##sym;
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

/* ---- hooks the dispatcher calls ------------------------------------------------- */

/* Bits of tapes recording on this thread; non-zero sends ops to tapes. */
extern _Thread_local uint64_t gb__tl_recording;
void gb__tape_record(const gb_op_call *c, gb_tensor **out, int nout);

/* The forward op whose gradient function is running (tape.c sets it), so
 * a numerics alert in a backward pass can name it; NULL outside. */
extern _Thread_local const char *gb__tl_backward_of;
extern _Thread_local const char *gb__tl_backward_of_type;
/* The traced function being built or run, for names in alerts; NULL eager. */
extern _Thread_local const char *gb__tl_function;

/* Tracing (functions into graphs) plugs in here; NULL until it exists. */
typedef int (*gb_trace_hook_fn)(const gb_op_call *c, const gb_out_desc *desc, int nout,
                                gb_tensor **out);
extern gb_trace_hook_fn gb__trace_hook;
extern _Thread_local bool gb__tl_tracing;

/* Post-kernel hooks (numerics, placement, timing, observers): one flag word
 * so the common case costs one branch. */
enum {
    GB_HOOK_PLACEMENT = 1u << 0,
    GB_HOOK_TIMING = 1u << 1,
    GB_HOOK_NUMERICS = 1u << 2,
};
extern unsigned gb__hook_flags;
typedef bool (*gb_post_op_fn)(const gb_op_call *c, gb_tensor **out, int nout);
/* Numerics checking registers here (debug/); returns false to fail the op. */
extern gb_post_op_fn gb__numerics_hook;
void gb__run_post_hooks(const gb_op_call *c, double us);
double gb__now_us(void);

/* ---- helpers for op families ------------------------------------------------------ */

/* Normalizes a possibly negative axis against rank; -1 after an error. */
int gb__norm_axis(const gb_op_call *c, int axis, int rank);
/* NumPy broadcasting of two shapes into out; false after an error. */
bool gb__broadcast_shapes(const gb_op_call *c, int ra, const int64_t *sa, int rb,
                          const int64_t *sb, int *rout, int64_t *sout);
/* Sums g down to the given shape (undoing broadcasting); used by gradients. */
gb_tensor *gb__sum_to_shape(gb_tensor *g, int rank, const int64_t *shape);
gb_tensor *gb__sum_to(gb_tensor *g, const gb_tensor *like);
/* The op name shown in errors: "<scope>/<Type>". */
const char *gb__op_display_name(const gb_op_call *c, char *buf, size_t n);

/* Element i of data (of dtype dt) as a double, and the reverse. */
double gb__load(gb_dtype dt, const void *data, int64_t i);
void gb__store(gb_dtype dt, void *data, int64_t i, double v);

/* Thread-local random seeds for ops that did not get one (dropout). */
uint64_t gb__splitmix64(uint64_t *state);
/* The i-th uniform double in [0,1) of stream `seed` (counter-based). */
double gb__uniform01(uint64_t seed, uint64_t i);

#endif
