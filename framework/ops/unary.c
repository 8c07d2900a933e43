/* ops/unary.c — elementwise unary ops (Neg ... Softplus), Cast, Identity,
 * StopGradient, and the fused gradient helpers ReluGrad, SigmoidGrad and
 * TanhGrad (TensorFlow's), with the gradients of all of them.
 *
 * The kernels, one tight loop per op and dtype, are in ops/isa/ew_unary.c,
 * compiled once per ISA level; the ops here read the table of the level
 * in force. Which dtypes an op accepts follows from its row in the kernel
 * table: an empty slot is an unsupported dtype.
 *
 * Gradients are written with the public ops so they nest for higher
 * derivatives. Relu, Sigmoid and Tanh backpropagate with one fused helper
 * op each, and the helpers have gradients of their own.
 */
#include <tgmath.h>

#include "ops/elementwise_types.h"

/* ---- math ops: the kernels are in ops/isa/ew_unary.c, per ISA level ---------------- */

static int infer_map(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (!GB_ISA_TABLE(gb__ew_map_kernels)->fn[c->op][x->dtype]) {
        gb__ew_dtype_error(c, x->dtype);
        return -1;
    }
    gb__ew_desc_like(out, x, x->dtype);
    return 1;
}

static bool kernel_map(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    gb_ew_map_fn fn = GB_ISA_TABLE(gb__ew_map_kernels)->fn[c->op][x->dtype];
    if (x->size < GB_EW_PARALLEL_MIN)
        fn(x->size, x->data, out[0]->data, c->attrs);
    else
        gb__ew_map_parallel(fn, x->size, x->data, out[0]->data, gb_dtype_size(x->dtype), c->attrs);
    return true;
}


gb_ew_map_fn gb__ew_map_kernel(gb_op_id op, gb_dtype dt) {
    return op < GB_OP_COUNT && dt < GB_DTYPE_COUNT ? GB_ISA_TABLE(gb__ew_map_kernels)->fn[op][dt] : NULL;
}

gb_ew_pair_fn gb__ew_pair_kernel(gb_op_id op, gb_dtype dt) {
    return op < GB_OP_COUNT && dt < GB_DTYPE_COUNT ? GB_ISA_TABLE(gb__ew_pair_kernels)->fn[op][dt] : NULL;
}

/* The helpers take two tensors of one dtype and one shape (no broadcasting:
 * they only ever pair a gradient with the tensor it belongs to). */
static int infer_pair(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *a = c->in[0], *b = c->in[1];
    if (a->dtype != b->dtype) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: dtype mismatch: %s vs %s", c->def->name,
                     gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
        return -1;
    }
    if (!GB_ISA_TABLE(gb__ew_pair_kernels)->fn[c->op][a->dtype]) {
        gb__ew_dtype_error(c, a->dtype);
        return -1;
    }
    if (!gb__shapes_match(a->rank, a->shape, b->rank, b->shape)) {
        char sa[128], sb[128];
        gb__op_error(c, GB_ERR_SHAPE, "%s: shapes must be equal, got %s and %s", c->def->name,
                     gb__shape_fmt(a->rank, a->shape, sa, sizeof sa),
                     gb__shape_fmt(b->rank, b->shape, sb, sizeof sb));
        return -1;
    }
    gb__ew_desc_like(out, a, a->dtype);
    for (int i = 0; i < a->rank; i++) out->shape[i] = gb__dims_merge(a->shape[i], b->shape[i]);
    return 1;
}

static bool kernel_pair(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *a = c->in[0], *b = c->in[1];
    gb_ew_pair_fn fn = GB_ISA_TABLE(gb__ew_pair_kernels)->fn[c->op][a->dtype];
    if (a->size < GB_EW_PARALLEL_MIN)
        fn(a->size, a->data, b->data, out[0]->data);
    else
        gb__ew_pair_parallel(fn, a->size, a->data, b->data, out[0]->data, gb_dtype_size(a->dtype));
    return true;
}

/* ---- Cast, Identity, StopGradient ----------------------------------------------------- */

#define CAST_LOOP(S, D, CONV)                                                                 \
    do {                                                                                      \
        const S *restrict s_ = px;                                                            \
        D *restrict d_ = pr;                                                                  \
        for (int64_t i = 0; i < n; i++) d_[i] = (D)(CONV);                                    \
    } while (0)

/* One function per source type; the switch picks the destination loop.
 * To bool is "non-zero", as in TensorFlow. */
/* A float as an integer type: saturated at the type's ends, NaN as 0 (a
 * plain cast past the range is undefined behaviour); integers convert as
 * C converts them (narrowing wraps, as TensorFlow's Cast). */
#define TO_I32_F(x) ((x) != (x) ? 0 : (x) <= -0x1p31 ? INT32_MIN : (x) >= 0x1p31 ? INT32_MAX : (int32_t)(x))
#define TO_I64_F(x) ((x) != (x) ? 0 : (x) <= -0x1p63 ? INT64_MIN : (x) >= 0x1p63 ? INT64_MAX : (int64_t)(x))
#define TO_U8_F(x) ((x) != (x) || (x) <= 0 ? 0 : (x) >= 255 ? 255 : (uint8_t)(x))
#define TO_I32_S(x) ((int32_t)(x))
#define TO_I64_S(x) ((int64_t)(x))
#define TO_U8_S(x) ((uint8_t)(x))
#define TO_I32_U TO_I32_S
#define TO_I64_U TO_I64_S
#define TO_U8_U TO_U8_S

#define GEN_CAST_FROM(unused, DT, sfx, S, U, CL)                                              \
    static void cast_from_##sfx(int64_t n, const void *px, void *pr, gb_dtype to) {           \
        switch (to) {                                                                         \
        case GB_F32: CAST_LOOP(S, float, s_[i]); break;                                       \
        case GB_F64: CAST_LOOP(S, double, s_[i]); break;                                      \
        case GB_I32: CAST_LOOP(S, int32_t, TO_I32_##CL(s_[i])); break;                        \
        case GB_I64: CAST_LOOP(S, int64_t, TO_I64_##CL(s_[i])); break;                        \
        case GB_U8: CAST_LOOP(S, uint8_t, TO_U8_##CL(s_[i])); break;                          \
        default: CAST_LOOP(S, uint8_t, s_[i] != 0); break;                                    \
        }                                                                                     \
    }
GB_EW_ALL_TYPES(GEN_CAST_FROM, _)

typedef void (*cast_fn)(int64_t n, const void *x, void *r, gb_dtype to);
#define CAST_ENTRY(unused, DT, sfx, S, U, CL) [DT] = cast_from_##sfx,
static const cast_fn cast_kernels[GB_DTYPE_COUNT] = {GB_EW_ALL_TYPES(CAST_ENTRY, _)};
#undef CAST_ENTRY

static int infer_cast(const gb_op_call *c, gb_out_desc *out) {
    int64_t to = c->attrs->i[0];
    if (to < 0 || to >= GB_DTYPE_COUNT) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: invalid target dtype %lld", c->def->name,
                     (long long)to);
        return -1;
    }
    if ((to == GB_STRING) != (c->in[0]->dtype == GB_STRING)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: cannot cast %s to %s; use %s", c->def->name,
                     gb_dtype_name(c->in[0]->dtype), gb_dtype_name((gb_dtype)to),
                     to == GB_STRING ? "gb_as_string" : "gb_string_to_number");
        return -1;
    }
    gb__ew_desc_like(out, c->in[0], (gb_dtype)to);
    return 1;
}

static bool kernel_cast(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    if (x->dtype == out[0]->dtype)
        memcpy(out[0]->data, x->data, gb_nbytes(x));
    else
        cast_kernels[x->dtype](x->size, x->data, out[0]->data, out[0]->dtype);
    return true;
}

static int infer_same(const gb_op_call *c, gb_out_desc *out) {
    gb__ew_desc_like(out, c->in[0], c->in[0]->dtype);
    return 1;
}

static bool kernel_identity(const gb_op_call *c, gb_tensor **out) {
    memcpy(out[0]->data, c->in[0]->data, gb_nbytes(c->in[0]));
    return true;
}

/* The output is a view of the input's memory. */
static bool kernel_stop_gradient(const gb_op_call *c, gb_tensor **out) {
    return gb__view_into(out[0], c->in[0]);
}

/* ---- gradients ------------------------------------------------------------------------- */

#define X0 (g->inputs[0])
#define Y0 (g->outputs[0])
#define DY (g->dys[0])

static gb_tensor *positive(gb_tensor *x) { return gb_greater(x, gb__ew_scalar_like(x, 0.0)); }

static gb_tensor *relu_grad(gb_tensor *dy, gb_tensor *x) {
    return gb__op_binary(GB_OP_RELU_GRAD, dy, x);
}
static gb_tensor *sigmoid_grad(gb_tensor *y, gb_tensor *dy) {
    return gb__op_binary(GB_OP_SIGMOID_GRAD, y, dy);
}
static gb_tensor *tanh_grad(gb_tensor *y, gb_tensor *dy) {
    return gb__op_binary(GB_OP_TANH_GRAD, y, dy);
}
static gb_tensor *gelu_grad(gb_tensor *dy, gb_tensor *x) {
    return gb__op_binary(GB_OP_GELU_GRAD, dy, x);
}

/* A gradient function whose one input gets the expression EXPR. */
#define GRAD1(name, EXPR)                                                                     \
    static bool name(const gb_grad_ctx *g, gb_tensor **dx) {                                  \
        dx[0] = (EXPR);                                                                       \
        return dx[0] != NULL;                                                                 \
    }

GRAD1(grad_neg, gb_neg(DY))
GRAD1(grad_abs, gb_mul(DY, gb_sign(X0)))
GRAD1(grad_sign, gb__fill_like(X0, 0.0))
GRAD1(grad_exp, gb_mul(DY, Y0))
GRAD1(grad_log, gb_div(DY, X0))
GRAD1(grad_log1p, gb_div(DY, gb_add_scalar(X0, 1.0)))
/* d sqrt(x) = 0.5 / sqrt(x), from the output. */
GRAD1(grad_sqrt, gb_div(gb_mul_scalar(DY, 0.5), Y0))
/* d x^-1/2 = -0.5 * y^3. */
GRAD1(grad_rsqrt, gb_mul(DY, gb_mul_scalar(gb_mul(Y0, gb_square(Y0)), -0.5)))
GRAD1(grad_square, gb_mul(DY, gb_mul_scalar(X0, 2.0)))
/* d 1/x = -y^2. */
GRAD1(grad_reciprocal, gb_neg(gb_mul(DY, gb_square(Y0))))
GRAD1(grad_sin, gb_mul(DY, gb_cos(X0)))
GRAD1(grad_cos, gb_neg(gb_mul(DY, gb_sin(X0))))
GRAD1(grad_tanh, tanh_grad(Y0, DY))
GRAD1(grad_sigmoid, sigmoid_grad(Y0, DY))
GRAD1(grad_relu, relu_grad(DY, X0))
GRAD1(grad_leaky_relu, gb_where(positive(X0), DY, gb_mul_scalar(DY, g->attrs->f[0])))
/* Below zero y = e^x - 1, so dy/dx = y + 1. */
GRAD1(grad_elu, gb_where(positive(X0), DY, gb_mul(DY, gb_add_scalar(Y0, 1.0))))
GRAD1(grad_softplus, gb_mul(DY, gb_sigmoid(X0)))
GRAD1(grad_identity, DY)

/* phi(x) = exp(-x^2/2) / sqrt(2 pi), the standard normal density. */
static gb_tensor *normal_pdf(gb_tensor *x) {
    return gb_mul_scalar(gb_exp(gb_mul_scalar(gb_square(x), -0.5)), 0.3989422804014327);
}

/* tanh form: y = x/2 (1 + t), t = tanh(u), u = c (x + k x^3):
 * dy/dx = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3 k x^2). */
static gb_tensor *gelu_tanh_derivative(gb_tensor *x) {
    gb_tensor *x2 = gb_square(x);
    gb_tensor *u = gb_mul_scalar(gb_mul(x, gb_add_scalar(gb_mul_scalar(x2, GB_GELU_TANH_K), 1.0)),
                                 GB_GELU_TANH_C);
    gb_tensor *t = gb_tanh(u);
    gb_tensor *du = gb_mul_scalar(gb_add_scalar(gb_mul_scalar(x2, 3 * GB_GELU_TANH_K), 1.0),
                                  GB_GELU_TANH_C);
    gb_tensor *sech2 = gb_add_scalar(gb_neg(gb_square(t)), 1.0);
    return gb_add(gb_mul_scalar(gb_add_scalar(t, 1.0), 0.5),
                  gb_mul(gb_mul_scalar(x, 0.5), gb_mul(sech2, du)));
}

/* Exact: d(x Phi(x)) = Phi(x) + x phi(x), one GeluGrad (a transformer's
 * MLP runs it over its widest tensor, where the nine ops it replaces were
 * a twentieth of the train step); the CDF variant: phi(x). */
static bool grad_gelu(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *x = X0, *d;
    switch (gb__gelu_mode(g->attrs)) {
    case GB_GELU_CDF: d = normal_pdf(x); break;
    case GB_GELU_TANH: d = gelu_tanh_derivative(x); break;
    default: dx[0] = gelu_grad(DY, x); return dx[0] != NULL;
    }
    dx[0] = gb_mul(DY, d);
    return dx[0] != NULL;
}

/* Between float dtypes the gradient is cast back; otherwise none flows. */
static bool grad_cast(const gb_grad_ctx *g, gb_tensor **dx) {
    bool both_float = gb_dtype_is_float(X0->dtype) && gb_dtype_is_float(Y0->dtype);
    dx[0] = both_float ? gb_cast(DY, X0->dtype) : NULL;
    return !both_float || dx[0] != NULL;
}

/* ReluGrad(dy, x) is linear in dy and piecewise constant in x. */
static bool grad_relu_grad(const gb_grad_ctx *g, gb_tensor **dx) {
    dx[0] = relu_grad(DY, g->inputs[1]);
    dx[1] = gb__fill_like(g->inputs[1], 0.0);
    return dx[0] && dx[1];
}

/* SigmoidGrad(y, d) = d y (1 - y): by y, d (1 - 2y); by d, y (1 - y). */
static bool grad_sigmoid_grad(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *y = g->inputs[0], *d = g->inputs[1];
    gb_tensor *gd = gb_mul(DY, d);
    dx[0] = gb_sub(gd, gb_mul_scalar(gb_mul(gd, y), 2.0));
    dx[1] = sigmoid_grad(y, DY);
    return dx[0] && dx[1];
}

/* TanhGrad(y, d) = d (1 - y^2): by y, -2 d y; by d, 1 - y^2. */
static bool grad_tanh_grad(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *y = g->inputs[0], *d = g->inputs[1];
    dx[0] = gb_mul_scalar(gb_mul(gb_mul(DY, d), y), -2.0);
    dx[1] = tanh_grad(y, DY);
    return dx[0] && dx[1];
}

/* GeluGrad(d, x) = d G'(x), G' = Phi + x phi: by d, GeluGrad(u, x); by x,
 * u d G''(x), G'' = phi (2 - x^2). */
static bool grad_gelu_grad(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_tensor *d = g->inputs[0], *x = g->inputs[1];
    dx[0] = gelu_grad(DY, x);
    gb_tensor *second = gb_mul(normal_pdf(x), gb_sub(gb__ew_scalar_like(x, 2.0), gb_square(x)));
    dx[1] = gb_mul(gb_mul(DY, d), second);
    return dx[0] && dx[1];
}

#undef X0
#undef Y0
#undef DY

/* ---- descriptors ------------------------------------------------------------------------ */

#define OP_DEF(sym, type_name, n, doc, infer_fn, kernel_fn, grad_fn, extra_flags)              \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = n,                                                                           \
        .flags = GB_OPF_ELEMENTWISE | (extra_flags),                                          \
        .inputs_doc = doc,                                                                    \
        .infer = infer_fn,                                                                    \
        .kernel = kernel_fn,                                                                  \
        .grad = grad_fn,                                                                      \
    };
#define MAP_OP(sym, type_name, grad_fn)                                                       \
    OP_DEF(sym, type_name, 1, NULL, infer_map, kernel_map, grad_fn, 0)

MAP_OP(neg, "Neg", grad_neg)
MAP_OP(abs, "Abs", grad_abs)
MAP_OP(sign, "Sign", grad_sign)
MAP_OP(exp, "Exp", grad_exp)
MAP_OP(log, "Log", grad_log)
MAP_OP(log1p, "Log1p", grad_log1p)
MAP_OP(sqrt, "Sqrt", grad_sqrt)
MAP_OP(rsqrt, "Rsqrt", grad_rsqrt)
MAP_OP(square, "Square", grad_square)
MAP_OP(reciprocal, "Reciprocal", grad_reciprocal)
MAP_OP(sin, "Sin", grad_sin)
MAP_OP(cos, "Cos", grad_cos)
MAP_OP(tanh, "Tanh", grad_tanh)
MAP_OP(sigmoid, "Sigmoid", grad_sigmoid)
MAP_OP(relu, "Relu", grad_relu)
MAP_OP(elu, "Elu", grad_elu)
MAP_OP(softplus, "Softplus", grad_softplus)
OP_DEF(leaky_relu, "LeakyRelu", 1, NULL, infer_map, kernel_map, grad_leaky_relu, 0)
/* normal_cdf: Phi(x), the standard normal CDF, which the exact form's
 * gradient used before GeluGrad (graphs saved then still hold it). */
OP_DEF(gelu, "Gelu", 1, NULL, infer_map, kernel_map, grad_gelu, 0)
OP_DEF(cast, "Cast", 1, NULL, infer_cast, kernel_cast, grad_cast, 0)
OP_DEF(identity, "Identity", 1, NULL, infer_same, kernel_identity, grad_identity, 0)
OP_DEF(stop_gradient, "StopGradient", 1, NULL, infer_same, kernel_stop_gradient, NULL,
       GB_OPF_VIEW | GB_OPF_NO_RECORD)
OP_DEF(relu_grad, "ReluGrad", 2, "dy, x", infer_pair, kernel_pair, grad_relu_grad, 0)
OP_DEF(sigmoid_grad, "SigmoidGrad", 2, "y, dy", infer_pair, kernel_pair, grad_sigmoid_grad, 0)
OP_DEF(tanh_grad, "TanhGrad", 2, "y, dy", infer_pair, kernel_pair, grad_tanh_grad, 0)
OP_DEF(gelu_grad, "GeluGrad", 2, "dy, x", infer_pair, kernel_pair, grad_gelu_grad, 0)

/* ---- public functions -------------------------------------------------------------------- */

#define UNARY_FN(fn, ID)                                                                      \
    gb_tensor *fn(gb_tensor *x) { return gb__op_unary(GB_OP_##ID, x); }
UNARY_FN(gb_neg, NEG)
UNARY_FN(gb_abs, ABS)
UNARY_FN(gb_sign, SIGN)
UNARY_FN(gb_exp, EXP)
UNARY_FN(gb_log, LOG)
UNARY_FN(gb_log1p, LOG1P)
UNARY_FN(gb_sqrt, SQRT)
UNARY_FN(gb_rsqrt, RSQRT)
UNARY_FN(gb_square, SQUARE)
UNARY_FN(gb_reciprocal, RECIPROCAL)
UNARY_FN(gb_sin, SIN)
UNARY_FN(gb_cos, COS)
UNARY_FN(gb_tanh, TANH)
UNARY_FN(gb_sigmoid, SIGMOID)
UNARY_FN(gb_relu, RELU)
UNARY_FN(gb_elu, ELU)
UNARY_FN(gb_softplus, SOFTPLUS)
UNARY_FN(gb_copy, IDENTITY)
UNARY_FN(gb_stop_gradient, STOP_GRADIENT)

gb_tensor *gb_leaky_relu(gb_tensor *x, double alpha) {
    gb_attrs a = {.f = {alpha}};
    return gb__op1(GB_OP_LEAKY_RELU, &x, 1, &a);
}

gb_tensor *gb_gelu(gb_tensor *x, bool approximate) {
    gb_attrs a = {.i = {approximate ? 1 : 0, 0}, .ni = 2};
    return gb__op1(GB_OP_GELU, &x, 1, &a);
}

gb_tensor *gb_cast(gb_tensor *x, gb_dtype dt) {
    gb_attrs a = {.i = {(int64_t)dt}, .ni = 1};
    return gb__op1(GB_OP_CAST, &x, 1, &a);
}
