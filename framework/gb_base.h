/* gb_base.h — the vocabulary every glassbox component shares.
 *
 * dtypes, the opaque tensor type, sticky errors, memory scopes and name
 * scopes. Nothing here allocates a tensor; gb_tensor.h creates them and
 * gb_ops.h computes with them.
 *
 * Errors are sticky, as in SQLite: the first failure of a thread is kept
 * with its op, message, name-scope path and call site; every later op
 * given a NULL input returns NULL without touching it. Check once at the
 * end of a chain with gb_ok() / gb_last_error().
 *
 * Memory is owned by scopes, not freed by hand: every tensor belongs to the
 * innermost open scope; gb_scope_end() releases them all at once and
 * gb_keep() moves one result out to the parent scope.
 */
#ifndef GB_BASE_H
#define GB_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GB_MAX_RANK 8

/* ---- dtypes ---------------------------------------------------------- */

typedef enum gb_dtype {
    GB_F32 = 0,
    GB_F64,
    GB_I32,
    GB_I64,
    GB_U8,
    GB_BOOL,
    /* byte strings of any length (gb_string elements: pointer and length;
     * the bytes may hold NUL). Not a number: no arithmetic, never
     * differentiable; strings ops are declared in gb_ops.h. */
    GB_STRING,
    GB_DTYPE_COUNT
} gb_dtype;

const char *gb_dtype_name(gb_dtype dt);   /* "float32", "int64", ... */
size_t gb_dtype_size(gb_dtype dt);        /* bytes per element */
bool gb_dtype_is_float(gb_dtype dt);
bool gb_dtype_is_integer(gb_dtype dt);    /* i32, i64, u8 (not bool) */
bool gb_dtype_is_numeric(gb_dtype dt);    /* every dtype but string: a number per element */

/* One element of a GB_STRING tensor: `len` bytes at `data`, not
 * NUL-terminated (they may hold NUL). The bytes live as long as the tensor
 * does: they are in its memory scope, an enclosing one, or a graph's
 * memory; never write through `data`. */
typedef struct gb_string {
    const char *data;
    int64_t len;
} gb_string;

/* The opaque tensor: dtype, shape, row-major data in a shared buffer. */
typedef struct gb_tensor gb_tensor;

/* ---- sticky errors ---------------------------------------------------- */

typedef enum gb_status {
    GB_OK = 0,
    GB_ERR_SHAPE,          /* shapes do not fit the op */
    GB_ERR_DTYPE,          /* dtype not supported or mismatched */
    GB_ERR_VALUE,          /* a bad argument value (axis, index, rate...) */
    GB_ERR_STATE,          /* API used out of order (tape reused, scope...) */
    GB_ERR_NO_GRADIENT,    /* differentiating through an op without one */
    GB_ERR_NUMERIC,        /* NaN/Inf found by a numerics check */
    GB_ERR_IO,             /* files: missing, truncated, corrupt */
    GB_ERR_MEMORY,         /* allocation failed */
    GB_ERR_INTERNAL,
    GB_ERR_UNAVAILABLE     /* another process of the job was lost, or a collective timed out */
} gb_status;

typedef struct gb_error {
    gb_status code;
    char op_type[32];       /* "MatMul"; empty outside ops */
    char op_name[128];      /* the op instance, e.g. "dense_1/MatMul_3" */
    char scope_path[192];   /* name-scope path when it happened */
    const char *file;       /* user call site, when known */
    int line;
    char message[768];
} gb_error;

bool gb_ok(void);
const gb_error *gb_last_error(void);      /* NULL when there is none */
void gb_clear_error(void);
const char *gb_status_name(gb_status s);
/* "Add: incompatible shapes [2,3] and [4] (at train.c:12, scope model/dense)" */
const char *gb_error_string(void);        /* "" when ok; thread-local buffer */

typedef enum gb_error_mode {
    GB_ERRORS_STICKY = 0,   /* default: record the first error, go on */
    GB_ERRORS_ABORT         /* scripts: print the error and exit(1) */
} gb_error_mode;
void gb_set_error_mode(gb_error_mode mode);

/* Warnings go to stderr and to observers; the last one is kept for tests. */
const char *gb_last_warning(void);        /* "" when none */
int gb_warning_count(void);

/* Call sites. Every public function that can fail is wrapped, in user
 * code, in a macro of its own name that records __FILE__ and __LINE__
 * for the length of the call, so an error or a retrace reason names the
 * line that made the call, not the last op before it:
 *   #define gb_tape_gradient(...) GB_AT(gb_tape_gradient, __VA_ARGS__)
 * The sites form a stack: a wrapped call inside another's arguments (a
 * helper that builds an input, `gb_function_call(f, in_of(x), ...)`)
 * pushes its own line and pops it when it returns, so the outer call
 * still names its line when it runs. Messages name the file by its base
 * name ("train.c:42"). The macros are function-like, so taking a
 * function's address (`&gb_add`, or `gb_add` passed as a pointer) still
 * works; a call through such a pointer (or written `(gb_add)(a, b)`)
 * skips the macro and its error names the last wrapped call instead:
 * call gb_set_call_site() first if that matters. The library is built
 * with GB_BUILDING_LIBRARY and calls its functions directly, so internal
 * calls never move the call site; tests/call_sites checks that no
 * fallible function lacks its macro. */
void gb_set_call_site(const char *file, int line);
/* The macro's halves: push a site (returns the depth), pop it. */
int gb__site_enter(const char *file, int line);
void gb__site_leave(const int *depth);
#if !defined(GB_BUILDING_LIBRARY)
#if defined(__GNUC__)
/* A statement expression whose cleanup pops the site after the call (its
 * value is the call's, void included); __COUNTER__ names each nested
 * site variable apart. */
#define GB__CAT2(a, b) a##b
#define GB__CAT(a, b) GB__CAT2(a, b)
#define GB__AT(var, fn, ...)                                                              \
    (__extension__({                                                                     \
        __attribute__((cleanup(gb__site_leave), unused)) const int var =                 \
            gb__site_enter(__FILE__, __LINE__);                                           \
        fn(__VA_ARGS__);                                                                  \
    }))
#define GB_AT(fn, ...) GB__AT(GB__CAT(gb__site_, __COUNTER__), fn, __VA_ARGS__)
#else
/* Without GNU C the site is set before the arguments are evaluated: a
 * wrapped call inside an argument then moves it. */
#define GB_AT(fn, ...) (gb_set_call_site(__FILE__, __LINE__), fn(__VA_ARGS__))
#endif
#endif

/* ---- memory scopes ------------------------------------------------------ */

void gb_scope_begin(void);
void gb_scope_end(void);
int gb_scope_depth(void);                 /* 0 = the thread's root scope */
/* Moves t into the parent scope and returns the moved tensor (the pointer
 * may change; use the returned one). NULL in, NULL out. */
gb_tensor *gb_keep(gb_tensor *t);
/* Bytes currently held by the thread's scopes (for leak/flat-RSS tests). */
size_t gb_scope_bytes_in_use(void);

/* ---- name scopes -------------------------------------------------------- */

/* Name scopes prefix op and variable names ("model/dense_1/kernel"); they
 * are independent of memory scopes. */
void gb_name_scope_push(const char *name);
void gb_name_scope_pop(void);
const char *gb_name_scope_path(void);     /* "" at top level */

/* ---- the CPU ------------------------------------------------------------ */

/* The instruction-set level the kernels run at: "x86-64-v2" (SSE4.2),
 * "x86-64-v3" (AVX2 + FMA) or "x86-64-v4" (AVX-512), chosen at start from
 * the CPU's features; the environment variable GB_ISA=v2|v3|v4 forces a
 * lower one. A build for one machine (cmake -DGB_MARCH=native) says
 * "-march=native". */
const char *gb_cpu_isa(void);

/* ---- call sites (GB_AT above) ------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_scope_begin(...) GB_AT(gb_scope_begin, __VA_ARGS__)
#define gb_scope_end(...) GB_AT(gb_scope_end, __VA_ARGS__)
#define gb_keep(...) GB_AT(gb_keep, __VA_ARGS__)
#define gb_name_scope_push(...) GB_AT(gb_name_scope_push, __VA_ARGS__)
#define gb_name_scope_pop(...) GB_AT(gb_name_scope_pop, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
