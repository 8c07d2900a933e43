/* ops/elementwise_types.h — the element types the elementwise kernels are
 * instantiated for, shared by ops/unary.c and ops/binary.c.
 *
 * Kernels are written once as expressions over a C type and stamped out
 * per dtype by X-macros, so every inner loop is a plain typed loop the
 * compiler can vectorize (no per-element calls, no gb__load/gb__store).
 *
 * Each list takes the macro X and one argument A passed through, so one
 * generator serves every op: X(A, DTYPE, suffix, T, U, CLASS), where
 *   T      the element type;
 *   U      the type arithmetic is done in: T itself for floats, the
 *          unsigned twin for integers, so integer overflow wraps (as in
 *          TensorFlow) instead of being undefined behaviour;
 *   CLASS  F (float), S (signed integer) or U (unsigned integer), pasted
 *          onto expression macros where a family needs different code.
 */
#ifndef GB_OPS_ELEMENTWISE_TYPES_H
#define GB_OPS_ELEMENTWISE_TYPES_H

#include "core/isa.h"
#include "ops/internal.h"

#define GB_EW_FLOAT_TYPES(X, A)                                                               \
    X(A, GB_F32, f32, float, float, F)                                                        \
    X(A, GB_F64, f64, double, double, F)

#define GB_EW_INT_TYPES(X, A)                                                                 \
    X(A, GB_I32, i32, int32_t, uint32_t, S)                                                   \
    X(A, GB_I64, i64, int64_t, uint64_t, S)                                                   \
    X(A, GB_U8, u8, uint8_t, uint8_t, U)

#define GB_EW_NUMERIC_TYPES(X, A) GB_EW_FLOAT_TYPES(X, A) GB_EW_INT_TYPES(X, A)

/* bool is stored as one byte holding 0 or 1. */
#define GB_EW_BOOL_TYPE(X, A) X(A, GB_BOOL, b8, uint8_t, uint8_t, U)

#define GB_EW_ALL_TYPES(X, A) GB_EW_NUMERIC_TYPES(X, A) GB_EW_BOOL_TYPE(X, A)

/* ---- the kernels of one contiguous run, shared with FusedElementwise ---- */

/* A unary math op (ops/unary.c): r[0..n) from x[0..n), attrs for the
 * parameterized ones (LeakyRelu's slope, Gelu's variant). */
typedef void (*gb_ew_map_fn)(int64_t n, const void *x, void *r, const gb_attrs *at);
/* A same-shape pair op (ReluGrad, SigmoidGrad, TanhGrad): r from a and b. */
typedef void (*gb_ew_pair_fn)(int64_t n, const void *a, const void *b, void *r);
/* A binary op (ops/binary.c) over one run in a layout: vector op vector,
 * scalar op vector, vector op scalar. */
enum { GB_EW_RUN_VV, GB_EW_RUN_SV, GB_EW_RUN_VS };
typedef void (*gb_ew_run_fn)(int layout, int64_t n, const void *a, const void *b, void *r);

/* The kernels of every (op, dtype), one table per family and ISA level
 * (ops/isa/ew_unary.c, ops/isa/ew_binary.c); a NULL entry means the op
 * has no kernel for that dtype. */
typedef struct gb_ew_map_table { gb_ew_map_fn fn[GB_OP_COUNT][GB_DTYPE_COUNT]; } gb_ew_map_table;
typedef struct gb_ew_pair_table { gb_ew_pair_fn fn[GB_OP_COUNT][GB_DTYPE_COUNT]; } gb_ew_pair_table;
typedef struct gb_ew_run_table { gb_ew_run_fn fn[GB_OP_COUNT][GB_DTYPE_COUNT]; } gb_ew_run_table;
GB_ISA_DECLARE(const gb_ew_map_table, gb__ew_map_kernels);
GB_ISA_DECLARE(const gb_ew_pair_table, gb__ew_pair_kernels);
GB_ISA_DECLARE(const gb_ew_run_table, gb__ew_run_kernels);

/* Gelu's variants, from its attributes i[0] (approximate: the tanh form)
 * and i[1] (cdf: Phi(x) alone), shared by the kernel and the gradient. */
enum { GB_GELU_EXACT, GB_GELU_TANH, GB_GELU_CDF };
#define GB_GELU_TANH_C 0.7978845608028654 /* sqrt(2/pi) */
#define GB_GELU_TANH_K 0.044715
static inline int gb__gelu_mode(const gb_attrs *at) {
    return at->i[1] ? GB_GELU_CDF : at->i[0] ? GB_GELU_TANH : GB_GELU_EXACT;
}

/* The kernel of (op, dtype), or NULL when op is not of that kind or has
 * no kernel for dt. */
gb_ew_map_fn gb__ew_map_kernel(gb_op_id op, gb_dtype dt);
gb_ew_pair_fn gb__ew_pair_kernel(gb_op_id op, gb_dtype dt);
gb_ew_run_fn gb__ew_run_kernel(gb_op_id op, gb_dtype dt);

/* The same over n elements, split across the worker pool when n is large
 * (ops/elementwise_parallel.c); es: bytes per operand element, ers: per
 * result element. Below GB_EW_PARALLEL_MIN elements a kernel is called
 * directly (the split costs more than it saves; small ops are the eager
 * loop's common case, where every nanosecond of dispatch shows). */
enum { GB_EW_PARALLEL_MIN = 65536 };
void gb__ew_map_parallel(gb_ew_map_fn fn, int64_t n, const void *x, void *r, size_t es,
                         const gb_attrs *at);
void gb__ew_pair_parallel(gb_ew_pair_fn fn, int64_t n, const void *a, const void *b, void *r,
                          size_t es);
void gb__ew_run_parallel(gb_ew_run_fn fn, int layout, int64_t n, const void *a, const void *b,
                         void *r, size_t es, size_t ers);

/* The error for a dtype an op has no kernel for. */
static inline void gb__ew_dtype_error(const gb_op_call *c, gb_dtype dt) {
    gb__op_error(c, GB_ERR_DTYPE, "%s: unsupported dtype %s", c->def->name, gb_dtype_name(dt));
}

/* Element shapes equal (rank and every dim). */
static inline bool gb__ew_same_shape(const gb_tensor *a, const gb_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

static inline void gb__ew_desc_like(gb_out_desc *d, const gb_tensor *x, gb_dtype dt) {
    d->dtype = dt;
    d->rank = x->rank;
    for (int i = 0; i < x->rank; i++) d->shape[i] = x->shape[i];
}

/* A rank-0 constant of t's dtype (gradients' zeros and ones); NULL for NULL. */
static inline gb_tensor *gb__ew_scalar_like(const gb_tensor *t, double v) {
    return t ? gb_scalar(t->dtype, v) : NULL;
}

#endif
