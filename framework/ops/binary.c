/* ops/binary.c — elementwise binary ops with NumPy broadcasting (Add, Sub,
 * Mul, Div, Pow, Maximum, Minimum), comparisons (-> bool) and Select
 * (cond ? a : b with three-way broadcasting), with their gradients.
 *
 * Dtypes must match exactly, as in TensorFlow: no silent promotion.
 *
 * Each (op, dtype) pair has one kernel that computes a contiguous run in
 * one of three layouts: vector op vector, scalar op vector, vector op
 * scalar. The driver picks the cheapest way to cover the output with such
 * runs: one run when the shapes are equal or one side is a single element;
 * otherwise a broadcast plan (size-1 dims dropped, adjacent dims merged)
 * walked with an odometer, one run per innermost row. The bias add
 * [N,M] + [M] thus becomes N vector-vector runs of M elements, and
 * [N,M] * [N,1] N vector-scalar runs.
 *
 * Gradients are written with the public ops, so they nest; broadcasting is
 * undone with gb__sum_to().
 */
#include <tgmath.h>

#include "ops/elementwise_types.h"

/* ---- kernels: one contiguous run, in ops/isa/ew_binary.c per ISA level ---------------- */

typedef gb_ew_run_fn run_fn;
enum { RUN_VV = GB_EW_RUN_VV, RUN_SV = GB_EW_RUN_SV, RUN_VS = GB_EW_RUN_VS };

gb_ew_run_fn gb__ew_run_kernel(gb_op_id op, gb_dtype dt) {
    if (op >= GB_OP_COUNT || dt >= GB_DTYPE_COUNT) return NULL;
    return GB_ISA_TABLE(gb__ew_run_kernels)->fn[op][dt];
}

static const bool yields_bool[GB_OP_COUNT] = {
    [GB_OP_EQUAL] = true, [GB_OP_NOT_EQUAL] = true,  [GB_OP_LESS] = true,
    [GB_OP_LESS_EQUAL] = true, [GB_OP_GREATER] = true, [GB_OP_GREATER_EQUAL] = true,
};

/* ---- broadcast plans ------------------------------------------------------------- */

enum { PLAN_MAX_IN = 3 };

/* The output as nd dims (size-1 dims dropped, mergeable dims merged) and
 * each input's element stride per dim (0 where it is broadcast). */
typedef struct bcast_plan {
    int nd;
    int64_t dim[GB_MAX_RANK];
    int64_t stride[PLAN_MAX_IN][GB_MAX_RANK];
} bcast_plan;

static void plan_make(bcast_plan *p, const gb_tensor *out, gb_tensor *const *in, int nin) {
    int64_t contig[PLAN_MAX_IN][GB_MAX_RANK];
    for (int k = 0; k < nin; k++) {
        int64_t s = 1;
        for (int d = in[k]->rank - 1; d >= 0; d--) {
            contig[k][d] = s;
            s *= in[k]->shape[d];
        }
    }
    p->nd = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->shape[d] == 1) continue;
        int j = p->nd;
        for (int k = 0; k < nin; k++) {
            int dk = d - (out->rank - in[k]->rank);
            bool present = dk >= 0 && in[k]->shape[dk] != 1;
            p->stride[k][j] = present ? contig[k][dk] : 0;
        }
        /* Merge into the previous dim when every input walks both as one. */
        bool merge = j > 0;
        for (int k = 0; k < nin && merge; k++)
            merge = p->stride[k][j - 1] == p->stride[k][j] * out->shape[d];
        if (merge) {
            p->dim[j - 1] *= out->shape[d];
            for (int k = 0; k < nin; k++) p->stride[k][j - 1] = p->stride[k][j];
        } else {
            p->dim[j] = out->shape[d];
            p->nd++;
        }
    }
}

/* Walks the plan's outer dims (all but the innermost), calling run() with
 * the element offset of each input and of the output for every row. */
typedef void (*row_fn)(void *ctx, const int64_t *in_off, int64_t out_off);

static void plan_walk(const bcast_plan *p, int nin, row_fn run, void *ctx) {
    int outer_nd = p->nd > 0 ? p->nd - 1 : 0;
    int64_t n = p->nd > 0 ? p->dim[p->nd - 1] : 1;
    int64_t idx[GB_MAX_RANK] = {0}, off[PLAN_MAX_IN] = {0}, out_off = 0;
    for (;;) {
        run(ctx, off, out_off);
        out_off += n;
        int d = outer_nd - 1;
        for (; d >= 0; d--) {
            for (int k = 0; k < nin; k++) off[k] += p->stride[k][d];
            if (++idx[d] < p->dim[d]) break;
            for (int k = 0; k < nin; k++) off[k] -= p->stride[k][d] * p->dim[d];
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* ---- Add, Sub, Mul, Div, Pow, Maximum, Minimum, comparisons ----------------------- */

static int infer_binary(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *a = c->in[0], *b = c->in[1];
    if (a->dtype != b->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: dtype mismatch: %s vs %s", c->def->name,
                     gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
        return -1;
    }
    if (!GB_ISA_TABLE(gb__ew_run_kernels)->fn[c->op][a->dtype]) {
        gb__ew_dtype_error(c, a->dtype);
        return -1;
    }
    out->dtype = yields_bool[c->op] ? GB_BOOL : a->dtype;
    if (gb__ew_same_shape(a, b)) {
        gb__ew_desc_like(out, a, out->dtype);
        return 1;
    }
    return gb__broadcast_shapes(c, a->rank, a->shape, b->rank, b->shape, &out->rank,
                                out->shape)
               ? 1
               : -1;
}

typedef struct binary_rows {
    run_fn run;
    int layout;
    int64_t n;
    const char *a, *b;
    char *r;
    size_t ea, er;
} binary_rows;

static void binary_row(void *ctx, const int64_t *in_off, int64_t out_off) {
    const binary_rows *w = ctx;
    w->run(w->layout, w->n, w->a + in_off[0] * (int64_t)w->ea, w->b + in_off[1] * (int64_t)w->ea,
           w->r + out_off * (int64_t)w->er);
}

/* Whether an integer tensor holds a zero (a divisor check). */
#define GEN_HAS_ZERO(unused, DT, sfx, T, U, CL)                                               \
    static bool has_zero_##sfx(int64_t n, const void *p) {                                    \
        const T *v = p;                                                                       \
        bool zero = false;                                                                    \
        for (int64_t i = 0; i < n; i++) zero |= v[i] == 0;                                    \
        return zero;                                                                          \
    }
GB_EW_INT_TYPES(GEN_HAS_ZERO, _)

static bool has_zero(const gb_tensor *t) {
    switch (t->dtype) {
    case GB_I32: return has_zero_i32(t->size, t->data);
    case GB_I64: return has_zero_i64(t->size, t->data);
    default: return has_zero_u8(t->size, t->data);
    }
}

/* Whether t's shape is the trailing dims of out's (the bias of a bias add). */
static bool is_trailing(const gb_tensor *t, const gb_tensor *out) {
    int lead = out->rank - t->rank;
    if (lead < 0) return false;
    for (int i = 0; i < t->rank; i++)
        if (t->shape[i] != out->shape[lead + i]) return false;
    return true;
}

/* full (output-shaped) op row (repeated along the leading dims), one
 * vector-vector run per row; `swapped` when the row is the left operand. */
static void rows_vv(run_fn run, const gb_tensor *full, const gb_tensor *row, gb_tensor *r,
                    bool swapped) {
    int64_t m = row->size, esz = (int64_t)gb_dtype_size(full->dtype);
    int64_t rsz = (int64_t)gb_dtype_size(r->dtype);
    const char *f = full->data;
    char *out = r->data;
    for (int64_t i = 0; i < r->size / m; i++) {
        const void *x = f + i * m * esz;
        if (swapped)
            run(RUN_VV, m, row->data, x, out + i * m * rsz);
        else
            run(RUN_VV, m, x, row->data, out + i * m * rsz);
    }
}

static bool kernel_binary(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *a = c->in[0], *b = c->in[1], *r = out[0];
    run_fn run = GB_ISA_TABLE(gb__ew_run_kernels)->fn[c->op][a->dtype];
    /* Integer division by zero traps on most CPUs: refuse it up front. */
    if (c->op == GB_OP_DIV && gb_dtype_is_integer(b->dtype) && has_zero(b)) {
        gb__op_error(c, GB_ERR_VALUE, "%s: integer division by zero", c->def->name);
        return false;
    }
    if (r->size == 0) return true;
    int layout = a->size == r->size && b->size == r->size ? RUN_VV
                 : a->size == 1                              ? RUN_SV
                 : b->size == 1                              ? RUN_VS
                                                             : -1;
    /* Strings are not split across the pool: their new bytes go into
     * this thread's scope. */
    if (layout >= 0 && (r->size < GB_EW_PARALLEL_MIN || a->dtype == GB_STRING)) {
        run(layout, r->size, a->data, b->data, r->data);
    } else if (layout >= 0) {
        gb__ew_run_parallel(run, layout, r->size, a->data, b->data, r->data,
                            gb_dtype_size(a->dtype), gb_dtype_size(r->dtype));
    } else if (a->size == r->size && is_trailing(b, r)) {
        rows_vv(run, a, b, r, false);
    } else if (b->size == r->size && is_trailing(a, r)) {
        rows_vv(run, b, a, r, true);
    } else {
        bcast_plan p = {0};
        gb_tensor *in[2] = {a, b};
        plan_make(&p, r, in, 2);
        /* Neither side is a single element, so some dim survives; dropping
         * size-1 dims leaves at least one input walking the innermost one,
         * so a run is never scalar op scalar. */
        assert(p.nd > 0);
        int last = p.nd > 0 ? p.nd - 1 : 0;
        assert((p.stride[0][last] | p.stride[1][last]) != 0);
        binary_rows w = {
            .run = run,
            .layout = p.stride[0][last] == 0 ? RUN_SV : p.stride[1][last] == 0 ? RUN_VS : RUN_VV,
            .n = p.dim[last],
            .a = a->data,
            .b = b->data,
            .r = r->data,
            .ea = gb_dtype_size(a->dtype),
            .er = gb_dtype_size(r->dtype),
        };
        plan_walk(&p, 2, binary_row, &w);
    }
    return true;
}

/* ---- Select ----------------------------------------------------------------------- */

static int infer_select(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *cond = c->in[0], *a = c->in[1], *b = c->in[2];
    if (cond->dtype != GB_BOOL) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the condition must be bool, got %s", c->def->name,
                     gb_dtype_name(cond->dtype));
        return -1;
    }
    if (a->dtype != b->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: dtype mismatch: %s vs %s", c->def->name,
                     gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
        return -1;
    }
    int rank;
    int64_t shape[GB_MAX_RANK];
    if (!gb__broadcast_shapes(c, a->rank, a->shape, b->rank, b->shape, &rank, shape) ||
        !gb__broadcast_shapes(c, cond->rank, cond->shape, rank, shape, &out->rank, out->shape))
        return -1;
    out->dtype = a->dtype;
    return 1;
}

typedef struct select_rows {
    int64_t n;
    const int64_t *inner; /* innermost stride of cond, a, b (0 or 1) */
    const uint8_t *cond;
    const void *a, *b;
    void *r;
    size_t elem;
} select_rows;

/* Select moves elements without looking at them: one loop per element size. */
#define SELECT_ROW(T)                                                                         \
    do {                                                                                      \
        const uint8_t *cc = w->cond + in_off[0];                                              \
        const T *aa = (const T *)w->a + in_off[1], *bb = (const T *)w->b + in_off[2];         \
        T *rr = (T *)w->r + out_off;                                                          \
        int64_t sc = w->inner[0], sa = w->inner[1], sb = w->inner[2];                         \
        for (int64_t i = 0; i < w->n; i++) rr[i] = cc[i * sc] ? aa[i * sa] : bb[i * sb];      \
    } while (0)

static void select_row(void *ctx, const int64_t *in_off, int64_t out_off) {
    const select_rows *w = ctx;
    switch (w->elem) {
    case 1: SELECT_ROW(uint8_t); break;
    case 4: SELECT_ROW(uint32_t); break;
    case sizeof(gb_string): SELECT_ROW(gb_string); break; /* strings: pairs, bytes shared */
    default: SELECT_ROW(uint64_t); break;
    }
}

static bool kernel_select(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *r = out[0];
    if (r->size == 0) return true;
    bcast_plan p = {0};
    plan_make(&p, r, c->in, 3);
    int last = p.nd - 1;
    int64_t inner[3];
    for (int k = 0; k < 3; k++) inner[k] = last >= 0 ? p.stride[k][last] : 0;
    select_rows w = {
        .n = last >= 0 ? p.dim[last] : 1,
        .inner = inner,
        .cond = c->in[0]->data,
        .a = c->in[1]->data,
        .b = c->in[2]->data,
        .r = r->data,
        .elem = gb_dtype_size(r->dtype),
    };
    plan_walk(&p, 3, select_row, &w);
    return true;
}

/* ---- gradients ---------------------------------------------------------------------- */

/* Writes dx[0], dx[1] summed to the inputs' shapes; false if either failed. */
static bool both_to_inputs(const gb_grad_ctx *g, gb_tensor **dx, gb_tensor *da, gb_tensor *db) {
    dx[0] = gb__sum_to(da, g->inputs[0]);
    dx[1] = gb__sum_to(db, g->inputs[1]);
    return dx[0] && dx[1];
}

static bool grad_add(const gb_grad_ctx *g, gb_tensor **dx) {
    return both_to_inputs(g, dx, g->dys[0], g->dys[0]);
}

static bool grad_sub(const gb_grad_ctx *g, gb_tensor **dx) {
    return both_to_inputs(g, dx, g->dys[0], gb_neg(g->dys[0]));
}

static bool grad_mul(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *a = g->inputs[0], *b = g->inputs[1], *dy = g->dys[0];
    return both_to_inputs(g, dx, gb_mul(dy, b), gb_mul(dy, a));
}

/* d(a/b) = dy/b, -dy*a/b^2 (from the inputs, so it nests). */
static bool grad_div(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *a = g->inputs[0], *b = g->inputs[1], *dy = g->dys[0];
    return both_to_inputs(g, dx, gb_div(dy, b), gb_mul(dy, gb_div(gb_div(gb_neg(a), b), b)));
}

/* d(a^b)/da = b*a^(b-1); d(a^b)/db = a^b * log(a) where a > 0, else 0
 * (TensorFlow's rule). log sees 1 where a <= 0 so no NaN enters even the
 * unselected branch, which second derivatives would multiply by zero. */
static bool grad_pow(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *a = g->inputs[0], *b = g->inputs[1], *y = g->outputs[0], *dy = g->dys[0];
    gb_tensor *zero = gb__ew_scalar_like(a, 0.0), *one = gb__ew_scalar_like(a, 1.0);
    gb_tensor *da = gb_mul(dy, gb_mul(b, gb_pow(a, gb_sub(b, one))));
    gb_tensor *positive = gb_greater(a, zero);
    gb_tensor *log_a = gb_where(positive, gb_log(gb_where(positive, a, one)), zero);
    gb_tensor *db = gb_mul(dy, gb_mul(y, log_a));
    return both_to_inputs(g, dx, da, db);
}

/* Routes dy to a where mask holds and to b elsewhere. */
static bool route_by_mask(const gb_grad_ctx *g, gb_tensor **dx, gb_tensor *mask) {
    gb_tensor *dy = g->dys[0], *zero = gb__ew_scalar_like(dy, 0.0);
    return both_to_inputs(g, dx, gb_where(mask, dy, zero), gb_where(mask, zero, dy));
}

/* Ties go to the first input, as TensorFlow's a >= b mask. */
static bool grad_maximum(const gb_grad_ctx *g, gb_tensor **dx) {
    return route_by_mask(g, dx, gb_greater_equal(g->inputs[0], g->inputs[1]));
}

static bool grad_minimum(const gb_grad_ctx *g, gb_tensor **dx) {
    return route_by_mask(g, dx, gb_less_equal(g->inputs[0], g->inputs[1]));
}

/* No gradient to the condition; a and b get dy where they were chosen. */
static bool grad_select(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *cond = g->inputs[0], *dy = g->dys[0], *zero = gb__ew_scalar_like(dy, 0.0);
    dx[0] = NULL;
    dx[1] = gb__sum_to(gb_where(cond, dy, zero), g->inputs[1]);
    dx[2] = gb__sum_to(gb_where(cond, zero, dy), g->inputs[2]);
    return dx[1] && dx[2];
}

/* ---- descriptors ---------------------------------------------------------------------- */

#define BINARY_OP(sym, type_name, grad_fn)                                                    \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = 2,                                                                           \
        .flags = GB_OPF_ELEMENTWISE,                                                          \
        .infer = infer_binary,                                                                \
        .kernel = kernel_binary,                                                              \
        .grad = grad_fn,                                                                      \
    };
BINARY_OP(add, "Add", grad_add)
BINARY_OP(sub, "Sub", grad_sub)
BINARY_OP(mul, "Mul", grad_mul)
BINARY_OP(div, "Div", grad_div)
BINARY_OP(pow, "Pow", grad_pow)
BINARY_OP(maximum, "Maximum", grad_maximum)
BINARY_OP(minimum, "Minimum", grad_minimum)
/* Comparisons yield bool, which tapes never record: no gradient needed. */
BINARY_OP(equal, "Equal", NULL)
BINARY_OP(not_equal, "NotEqual", NULL)
BINARY_OP(less, "Less", NULL)
BINARY_OP(less_equal, "LessEqual", NULL)
BINARY_OP(greater, "Greater", NULL)
BINARY_OP(greater_equal, "GreaterEqual", NULL)

const gb_op_def gb_opdef_select = {
    .name = "Select",
    .arity = 3,
    .flags = GB_OPF_ELEMENTWISE,
    .inputs_doc = "cond (bool), a, b",
    .infer = infer_select,
    .kernel = kernel_select,
    .grad = grad_select,
};

/* ---- public functions ------------------------------------------------------------------ */

#define BINARY_FN(fn, ID)                                                                     \
    gb_tensor *fn(gb_tensor *a, gb_tensor *b) { return gb__op_binary(GB_OP_##ID, a, b); }
BINARY_FN(gb_add, ADD)
BINARY_FN(gb_sub, SUB)
BINARY_FN(gb_mul, MUL)
BINARY_FN(gb_div, DIV)
BINARY_FN(gb_pow, POW)
BINARY_FN(gb_maximum, MAXIMUM)
BINARY_FN(gb_minimum, MINIMUM)
BINARY_FN(gb_equal, EQUAL)
BINARY_FN(gb_not_equal, NOT_EQUAL)
BINARY_FN(gb_less, LESS)
BINARY_FN(gb_less_equal, LESS_EQUAL)
BINARY_FN(gb_greater, GREATER)
BINARY_FN(gb_greater_equal, GREATER_EQUAL)

gb_tensor *gb_where(gb_tensor *cond, gb_tensor *a, gb_tensor *b) {
    gb_tensor *in[3] = {cond, a, b};
    return gb__op1(GB_OP_SELECT, in, 3, NULL);
}

/* ---- x op scalar ------------------------------------------------------------------ */

/* Whether s converts to dt exactly: any value for floats (rounded, as a
 * Python float becomes a tf.float32 constant), whole numbers in range for
 * integers, 0 or 1 for bool. TensorFlow refuses `int_tensor * 2.5` the
 * same way instead of truncating the 2.5. */
static bool scalar_fits(gb_dtype dt, double s) {
    bool whole = s == trunc(s); /* NaN is not; the infinities fail the range checks */
    switch (dt) {
    case GB_I32: return whole && s >= INT32_MIN && s <= INT32_MAX;
    case GB_I64: return whole && s >= -0x1p63 && s < 0x1p63;
    case GB_U8: return whole && s >= 0 && s <= UINT8_MAX;
    case GB_BOOL: return s == 0 || s == 1;
    default: return true;
    }
}

/* x op s with s a scalar of x's dtype; a NULL x still goes through the
 * dispatcher for its error. */
static gb_tensor *with_scalar(gb_op_id op, gb_tensor *x, double s) {
    if (x && !scalar_fits(x->dtype, s)) {
        gb_op_call c = {.op = op, .def = gb_op_table[op]};
        gb__op_error(&c, GB_ERR_DTYPE,
                     "%s: the scalar %g cannot be converted to %s, the dtype of the tensor; "
                     "cast the tensor first (gb_cast)",
                     c.def->name, s, gb_dtype_name(x->dtype));
        return NULL;
    }
    return gb__op_binary(op, x, x ? gb_scalar(x->dtype, s) : NULL);
}

gb_tensor *gb_add_scalar(gb_tensor *x, double s) { return with_scalar(GB_OP_ADD, x, s); }
gb_tensor *gb_sub_scalar(gb_tensor *x, double s) { return with_scalar(GB_OP_SUB, x, s); }
gb_tensor *gb_mul_scalar(gb_tensor *x, double s) { return with_scalar(GB_OP_MUL, x, s); }
gb_tensor *gb_div_scalar(gb_tensor *x, double s) { return with_scalar(GB_OP_DIV, x, s); }
gb_tensor *gb_pow_scalar(gb_tensor *x, double s) { return with_scalar(GB_OP_POW, x, s); }
