/* core/core/internal.h — the engine's private structures, below every op.
 *
 * Included by every framework source (through the headers of the layers
 * above it). It defines the tensor and buffer layout, memory scopes,
 * sticky errors, the thread's execution state that the layers above
 * publish (recording tapes, tracing, the backward pass in progress), and
 * the hooks through which core calls up without naming a higher layer.
 * Library sources define GB_BUILDING_LIBRARY so the public headers'
 * call-site macros stay out.
 */
#ifndef GB_CORE_INTERNAL_H
#define GB_CORE_INTERNAL_H

#ifndef GB_BUILDING_LIBRARY
#define GB_BUILDING_LIBRARY 1
#endif

#include <assert.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include "glassbox.h"

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
    /* Symbolic tensors (while tracing): the graph they belong to and the
     * node output that produces them. */
    uint32_t graph_id;
    int32_t node;
    int32_t out_index;
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

/* A fresh tensor header + data in the current scope. data NULL when
 * alloc_data is false (views). */
gb_tensor *gb__tensor_new(gb_dtype dt, int rank, const int64_t *shape, bool alloc_data);
/* The same in a given scope (a graph run writes its outputs to the
 * caller's scope from inside a scope of its own). */
gb_tensor *gb__tensor_new_in(struct gb_scope *s, gb_dtype dt, int rank, const int64_t *shape,
                             bool alloc_data);
/* Makes the (data-less) output of a view op share src's buffer, taking a
 * reference when it is a variable's heap buffer. */
bool gb__view_into(gb_tensor *out, gb_tensor *src);
uint64_t gb__next_tensor_id(void);
/* Elements of a shape (-1 when a dim is unknown). Only for shapes already
 * known to fit: every shape a tensor or a graph node gets has passed
 * gb__shape_check first. */
int64_t gb__shape_size(int rank, const int64_t *shape);
/* Whether a tensor of this shape (unknown -1 dims count as 1) and element
 * size fits: its element count and its bytes within int64. When not,
 * *unit says which overflowed ("elements" or "bytes"). */
bool gb__shape_fits(int rank, const int64_t *shape, size_t elem_size, const char **unit);
/* The same, recording when it does not fit a ShapeError naming `what`
 * ("Reshape: output 0") and the shape: "... has more than 2^63 elements"
 * (or bytes). Callers check once, before any size is multiplied out. */
bool gb__shape_check(const char *op_type, const char *what, int rank, const int64_t *shape,
                     size_t elem_size);
/* Heap buffers: a new one with refcount 1, and releasing a reference. */
gb_buffer *gb__buffer_new_heap(size_t nbytes);
void gb__buffer_unref(gb_buffer *b);

/* Whether elements [begin, end) of data (float32 or float64) hold a NaN
 * or an Inf: one vectorized pass (core/nonfinite.c). */
bool gb__nonfinite_in(gb_dtype dt, const void *data, int64_t begin, int64_t end);

/* Element i of data (of dtype dt) as a double, and the reverse. */
double gb__load(gb_dtype dt, const void *data, int64_t i);
void gb__store(gb_dtype dt, void *data, int64_t i, double v);

/* ---- the bytes of string tensors (core/strings.c) ----------------------------------- */

/* Where empty strings point (never NULL). */
extern const char gb__empty_bytes[1];
/* The bytes of n strings together. */
int64_t gb__strings_total(const gb_string *s, int64_t n);
/* Copies the bytes of src[0..n) one after the other into blob (room for
 * gb__strings_total bytes) and points dst at them; dst may be src. */
void gb__strings_pack(gb_string *dst, const gb_string *src, int64_t n, char *blob);
/* The same with the block allocated in scope s: how a value moving to a
 * scope that outlives its bytes takes them along. False on memory error. */
bool gb__strings_pack_in(struct gb_scope *s, gb_string *dst, const gb_string *src, int64_t n);

/* New strings built one after another into a growing buffer: add bytes,
 * end element i of out, and at last place every byte in the current scope
 * in one allocation (finish points out[0..n) there and frees the buffer;
 * free alone abandons it). Zero-initialize. */
typedef struct gb__strbuf {
    char *bytes;
    int64_t len, cap, mark;
} gb__strbuf;
bool gb__strbuf_add(gb__strbuf *b, const char *p, int64_t len);
bool gb__strbuf_end_element(gb__strbuf *b, gb_string *out, int64_t i);
bool gb__strbuf_finish(gb__strbuf *b, gb_string *out, int64_t n);
void gb__strbuf_free(gb__strbuf *b);

/* s as Python's bytes repr (b'a\x00b'), snprintf-like: returns the
 * length the whole text needs. */
int gb__string_repr(const gb_string *s, char *buf, size_t n);

/* ---- bump arenas --------------------------------------------------------------- */

/* A bump allocator owned by an object (a tape, a graph) and freed with it
 * (core/bump.c). Zero-initialize with the chunk size wanted. */
typedef struct gb_bump {
    struct gb_bump_chunk *head;
    size_t min_chunk;
} gb_bump;
/* n bytes, max_align_t-aligned; NULL after an error "out of memory <what>". */
void *gb__bump_alloc(gb_bump *a, size_t n, const char *what);
void gb__bump_free(gb_bump *a);

/* ---- handles ------------------------------------------------------------------ */

/* Objects by id, for graphs to name them (core/handles.c). A table is a
 * zero-initialized static; ids start at 1 and are never reused. */
enum { GB_HANDLE_PAGE = 1024, GB_HANDLE_PAGES = 4096 };
typedef struct gb_handles {
    _Atomic(void *) *_Atomic pages[GB_HANDLE_PAGES];
    _Atomic int64_t next_id;
} gb_handles;
/* A new id for obj; 0 after an error ("no room for <what> ..."). */
int64_t gb__handle_add(gb_handles *t, void *obj, const char *what);
void gb__handle_remove(gb_handles *t, int64_t id);
/* The object, or NULL for an id removed or never given. */
void *gb__handle_get(gb_handles *t, int64_t id);

/* ---- errors ---------------------------------------------------------------------- */

/* Records the first error of the thread; later ones are dropped. */
void gb__error(gb_status code, const char *op_type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gb__verror(gb_status code, const char *op_type, const char *op_name,
                const char *fmt, va_list ap);
void gb__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a warning's line ("glassbox warning: ...", no newline) for a
 * person: set by train/ while a progress bar is live, so the line goes
 * above the bar, not into it; NULL: straight to stderr. */
typedef void (*gb_warn_hook_fn)(const char *line);
extern _Atomic(gb_warn_hook_fn) gb__warn_hook;
/* What the thread is working on ("model.gbm", a file being loaded): while
 * set, an error recorded is "<context>: <message>", so the messages of
 * the layers a loader calls (a layer's from_config knows no file) name
 * what they came from. Returns the previous context, to put back; NULL
 * clears. The string must outlive its use. */
const char *gb__error_context(const char *context);
/* The user's call site of the current API call, "train.c:42" ("" when
 * unknown), into buf. */
const char *gb__call_site_text(char *buf, size_t n);
/* The base name of a source path ("train.c" of "/src/train.c"), as every
 * message names a file. */
const char *gb__site_file_name(const char *file);
/* Formats a shape as "[2,3]" into buf. */
const char *gb__shape_fmt(int rank, const int64_t *shape, char *buf, size_t n);

/* ---- names ------------------------------------------------------------------------ */

/* Whether `name` is fit to be selected by: at most max_bytes, well-formed
 * UTF-8, no control characters; false after a ValueError naming `what`
 * (core/name_check.c). */
bool gb__name_check(const char *what, const char *name, size_t max_bytes);
/* The same check without an error: NULL when the name is fit, else what
 * is wrong with it, written into buf. */
const char *gb__name_problem(const char *name, size_t max_bytes, char *buf, size_t n);

/* ---- files ---------------------------------------------------------------------- */

/* The bytes of the regular file at path (malloc'd, *size set), or NULL
 * after a GB_ERR_IO error naming the path: missing, unreadable, or not a
 * regular file ("is a FIFO, not <what>"; what: "an IDX file"). Never
 * blocks on a FIFO or device. */
void *gb__file_read(const char *path, const char *what, size_t *size);
/* A loader's look at the first bytes of a file (n of them: fewer when the
 * file is shorter) and its size, before the rest is read: false, after an
 * error, refuses the file — so a 3 GiB file that is not a checkpoint costs
 * its first 40 bytes, not 3 GiB of memory and 20 s. */
typedef bool (*gb_file_head_fn)(const char *path, const unsigned char *head, size_t n,
                                uint64_t file_size);
/* gb__file_read, reading only the first head_bytes until head_ok agrees. */
void *gb__file_read_checked(const char *path, const char *what, size_t head_bytes,
                            gb_file_head_fn head_ok, size_t *size);

/* The call site the last GB_AT macro recorded (gb_base.h). User code the
 * library calls back (observers, custom layers, gradient functions, map
 * and generator functions, learning-rate schedules) makes wrapped calls
 * that move it; the library puts it back after each callback, so an
 * error the outer call records later still names the outer call's line. */
typedef struct gb_call_site {
    const char *file;
    int line;
} gb_call_site;
gb_call_site gb__call_site(void);
void gb__call_site_restore(gb_call_site site);

/* ---- the thread's execution state ------------------------------------------------ */

/* Written by the layers above, read here and by the dispatcher with one
 * load each, so the common case (no tape, no trace) costs a branch. */
/* Bits of the tapes recording on this thread (autodiff/). */
extern _Thread_local uint64_t gb__tl_recording;
/* A function is being traced on this thread (graph/). */
extern _Thread_local bool gb__tl_tracing;
/* The forward op whose gradient function is running (autodiff/), so
 * names and numerics alerts in a backward pass can point at it. */
extern _Thread_local const char *gb__tl_backward_of;
extern _Thread_local const char *gb__tl_backward_of_type;
/* What an op of the backward pass is, when not the op's own type: the
 * sums of a gradient's contributions are "AccumulateGrad" (autodiff/). */
extern _Thread_local const char *gb__tl_backward_label;
/* The name of the graph node the op call being dispatched became (graph/
 * sets it, the dispatcher clears it after the tapes recorded the call):
 * a tape names its record after it, so each traced op's gradient gets a
 * scope of its own, "gradients/attention/MatMul_3_grad/". */
extern _Thread_local const char *gb__tl_traced_node;
/* The traced function being built or run, for names in alerts; NULL eager. */
extern _Thread_local const char *gb__tl_function;
/* The graph node the executor is running (its name names the op); NULL
 * outside graphs. */
extern _Thread_local const char *gb__tl_node_name;
/* A FusedElementwise node that blamed a NaN/Inf on one of its steps
 * (ops/fused.c sets it, naming the step in gb__tl_node_name): the alert
 * names both, the step that made it and the node a graph shows. */
extern _Thread_local const char *gb__tl_fused_node;
/* With it, that step's own NaN, +Inf and -Inf over the whole output: what
 * the alert counts, since later steps may turn them into others (log(0)
 * is -Inf, times 0 a NaN out of the node). */
extern _Thread_local int64_t gb__tl_fused_bad[3];

/* Called when a memory scope of the given depth ends, before its memory
 * is released: the tapes begun in it expire (autodiff/ installs it with
 * its first tape). */
/* Names a symbolic tensor as its graph does ("a:0") for gb_tensor_repr;
 * installed by the tracer (graph/trace.c). */
typedef void (*gb_symbolic_name_fn)(const gb_tensor *t, char *buf, size_t n);
extern _Atomic(gb_symbolic_name_fn) gb__symbolic_name_hook;
typedef void (*gb_scope_end_hook_fn)(int depth);
extern _Atomic(gb_scope_end_hook_fn) gb__scope_end_hook;

/* TensorFlow's init_scope: one-off work (initial values, the probe run
 * that builds a model) runs eagerly even inside a traced function, unseen
 * by tapes, in a memory scope of its own so nothing of it outlives it. */
typedef struct gb_init_scope {
    uint64_t recording;
    bool tracing;
} gb_init_scope;
gb_init_scope gb__init_scope_begin(void);
void gb__init_scope_end(gb_init_scope s);

/* A new root for name-scope paths (a function's trace names its nodes
 * from the root, whatever scope the call sits in), and its end. */
typedef struct gb_name_root {
    size_t base;
    int depth;
} gb_name_root;
gb_name_root gb__name_scope_root_begin(void);
void gb__name_scope_root_end(gb_name_root r);

/* Tapes hidden from the dispatcher (bits): those begun outside a function
 * that is tracing do not record its symbolic ops (graph/ sets it). */
extern _Thread_local uint64_t gb__tl_hidden_tapes;

/* ---- clocks and random numbers --------------------------------------------------- */

/* Monotonic microseconds, for op timing and durations. */
double gb__now_us(void);
/* Thread-local random seeds for ops that did not get one (dropout). */
uint64_t gb__splitmix64(uint64_t *state);
/* The i-th uniform double in [0,1) of stream `seed` (counter-based). */
double gb__uniform01(uint64_t seed, uint64_t i);

/* ---- the profiler's capture (profiler.c; gb_profiler.h) ----------------------------- */

/* On while a capture runs: recorders test it with one load. */
extern _Atomic bool gb__prof_on;
/* What this thread is, for its track ("prefetch", "data worker"); set
 * once by the code that starts the thread. NULL: "training" for the
 * thread that started the capture, else "thread N". */
extern _Thread_local const char *gb__tl_thread_name;
/* The start of a range to record, or -1 while no capture runs. */
static inline double gb__prof_clock(void) {
    return atomic_load_explicit(&gb__prof_on, memory_order_relaxed) ? gb__now_us() : -1.0;
}
/* Records [t0, now] as a range of `kind` named `name` (nothing for t0 < 0). */
void gb__prof_range(gb_profile_kind kind, const char *name, double t0);
/* Records r (start_us on gb__now_us's clock); the strings are copied,
 * and the thread, step and live bytes filled in. */
void gb__prof_add(const gb_profile_record *r);
/* A step began (gb_set_step while a capture runs). */
void gb__prof_step(int64_t step);
/* Begins a capture; false when one runs. steps > 0: the stop hook is
 * called at the step after that many. */
bool gb__prof_session_begin(int64_t steps);
/* Ends it: the profile (one reference), or NULL when none ran or memory
 * ran out (then an error is set). */
gb_profile *gb__prof_session_end(int rank);
/* Ends a window of steps (debug/ installs gb_profiler_stop). */
typedef void (*gb_prof_stop_fn)(void);
extern _Atomic(gb_prof_stop_fn) gb__prof_stop_hook;
/* Several ranks (dist/ installs it): takes this rank's capture and returns
 * the one to emit — every rank's, merged, on rank 0; NULL elsewhere, or
 * after an error (set). */
typedef gb_profile *(*gb_prof_merge_fn)(gb_profile *own);
extern _Atomic(gb_prof_merge_fn) gb__prof_merge_hook;
/* One profile of n ranks' captures: threads named "rank r: <name>", rank
 * r's times shifted by shift_us[r] (>= 0: onto the clock of the rank that
 * started first, whose wall time the profile keeps). */
gb_profile *gb__prof_merge(const gb_profile *const *parts, const double *shift_us, int n);

#endif
