/* ops/conv.c — Conv2D (NHWC input, [KH,KW,C,OC] filter, as TensorFlow)
 * and its two backprop ops, Conv2DBackpropInput and Conv2DBackpropFilter:
 * shape and attribute checks, gradients and the public call. Kernels run
 * through ops/conv/run.c, which picks a direct loop (small windows, as a first
 * layer on 1-3 channels), Winograd F(2x2, 3x3) (3x3 stride-1 windows with
 * enough channels) or im2col + GEMM, on the worker threads.
 *
 * Each backprop op is linear in each of its inputs, so each has a gradient
 * made of the other two ops, and second derivatives through convolutions
 * work (TF's _Conv2DBackpropInputGrad / _Conv2DBackpropFilterGrad).
 *
 * Attributes (all three ops): i[0], i[1] strides h, w; i[2], i[3]
 * dilations h, w; i[4] padding; i[5..8] the shape the backprop op
 * produces (input shape for BackpropInput, filter shape for
 * BackpropFilter; unused by Conv2D).
 */
#include <stdio.h>

#include "ops/conv/run.h"

enum { A_SH = 0, A_SW, A_DH, A_DW, A_PAD, A_SHAPE, A_COUNT = A_SHAPE + 4 };

/* ---- shapes ---------------------------------------------------------------------- */

static const char *fmt4(const int64_t *s, char *buf, size_t n) {
    return gb__shape_fmt(4, s, buf, n);
}

/* Window geometry from the input shape xs [N,H,W,C], filter shape
 * fs [KH,KW,C',OC] and the attrs; checks ranks, depth and attrs. */
static bool conv_window(const gb_op_call *c, const int64_t *xs, const int64_t *fs, gb_window *g) {
    const gb_attrs *a = c->attrs;
    if (!gb__dims_match(xs[3], fs[2])) {
        char x[96], f[96];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: input depth %lld does not match the filter's input channels %lld: "
                     "input %s, filter %s",
                     c->def->name, (long long)xs[3], (long long)fs[2], fmt4(xs, x, sizeof x),
                     fmt4(fs, f, sizeof f));
        return false;
    }
    *g = (gb_window){.n = xs[0],
                     .h = xs[1],
                     .w = xs[2],
                     .c = xs[3],
                     .kh = fs[0],
                     .kw = fs[1],
                     .sh = a->i[A_SH],
                     .sw = a->i[A_SW],
                     .dh = a->i[A_DH],
                     .dw = a->i[A_DW],
                     .padding = (int)a->i[A_PAD]};
    return gb__window_init(c, g);
}

static bool check_rank4(const gb_op_call *c, const gb_tensor *t, const char *what) {
    if (t->rank == 4) return true;
    char s[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: %s must have rank 4, got shape %s", c->def->name, what,
                 gb__shape_fmt(t->rank, t->shape, s, sizeof s));
    return false;
}

static bool check_dtypes(const gb_op_call *c, const gb_tensor *a, const gb_tensor *b) {
    if (a->dtype == b->dtype && gb_dtype_is_float(a->dtype)) return true;
    gb__op_error(c, GB_ERR_DTYPE, "%s: inputs must both be float32 or both float64, got %s and %s",
                 c->def->name, gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
    return false;
}

/* The backprop ops' incoming gradient must have the forward output's shape. */
static bool check_dy(const gb_op_call *c, const gb_tensor *dy, const gb_window *g, int64_t oc) {
    int64_t want[4] = {g->n, g->oh, g->ow, oc};
    if (gb__shapes_match(4, dy->shape, 4, want)) return true;
    char a[96], b[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: out_backprop has shape %s but the convolution output is %s",
                 c->def->name, fmt4(dy->shape, a, sizeof a), fmt4(want, b, sizeof b));
    return false;
}

static void set_out4(gb_out_desc *o, gb_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d) {
    o->dtype = dt;
    o->rank = 4;
    o->shape[0] = a;
    o->shape[1] = b;
    o->shape[2] = c;
    o->shape[3] = d;
}

static int infer_conv2d(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *f = c->in[1];
    gb_window g;
    if (!check_rank4(c, x, "input") || !check_rank4(c, f, "filter") || !check_dtypes(c, x, f) ||
        !conv_window(c, x->shape, f->shape, &g))
        return -1;
    set_out4(&out[0], x->dtype, g.n, g.oh, g.ow, f->shape[3]);
    return 1;
}

/* Conv2DBackpropInput(filter, out_backprop) -> input-shaped gradient. */
static int infer_backprop_input(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *f = c->in[0], *dy = c->in[1];
    int64_t xs[4];
    gb_window g;
    if (!check_rank4(c, f, "filter") || !check_rank4(c, dy, "out_backprop") ||
        !check_dtypes(c, f, dy) ||
        !gb__window_shape_attr(c, c->attrs->i + A_SHAPE, "input", dy, xs) ||
        !conv_window(c, xs, f->shape, &g) || !check_dy(c, dy, &g, f->shape[3]))
        return -1;
    set_out4(&out[0], f->dtype, xs[0], xs[1], xs[2], xs[3]);
    return 1;
}

/* Conv2DBackpropFilter(input, out_backprop) -> filter-shaped gradient. */
static int infer_backprop_filter(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    int64_t fs[4];
    gb_window g;
    if (!check_rank4(c, x, "input") || !check_rank4(c, dy, "out_backprop") ||
        !check_dtypes(c, x, dy) ||
        !gb__window_shape_attr(c, c->attrs->i + A_SHAPE, "filter", NULL, fs) ||
        !conv_window(c, x->shape, fs, &g) || !check_dy(c, dy, &g, fs[3]))
        return -1;
    set_out4(&out[0], x->dtype, fs[0], fs[1], fs[2], fs[3]);
    return 1;
}

static bool kernel_conv2d(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *f = c->in[1];
    gb_window g;
    conv_window(c, x->shape, f->shape, &g);
    return gb__conv_run(GB_CONV_FORWARD, &g, f->shape[3], x, f, out[0]);
}

static bool kernel_backprop_input(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *f = c->in[0], *dy = c->in[1];
    gb_window g;
    conv_window(c, out[0]->shape, f->shape, &g);
    return gb__conv_run(GB_CONV_INPUT_GRAD, &g, f->shape[3], f, dy, out[0]);
}

static bool kernel_backprop_filter(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *dy = c->in[1];
    gb_window g;
    conv_window(c, x->shape, out[0]->shape, &g);
    return gb__conv_run(GB_CONV_FILTER_GRAD, &g, out[0]->shape[3], x, dy, out[0]);
}

/* ---- op calls ---------------------------------------------------------------------------- */

/* The attrs of a call: the convolution parameters of `like` with the
 * shape slots set to `shape` (a backprop op), or without them (NULL: a
 * Conv2D, whose schema has no shape). */
static gb_attrs with_shape(const gb_attrs *like, const int64_t *shape) {
    gb_attrs a = *like;
    memset(a.i + A_SHAPE, 0, 4 * sizeof(int64_t));
    if (shape) memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = shape ? A_COUNT : A_SHAPE;
    return a;
}

static gb_tensor *conv_op(gb_op_id op, gb_tensor *a, gb_tensor *b, const gb_attrs *attrs) {
    gb_tensor *in[2] = {a, b};
    return gb__op1(op, in, 2, attrs);
}

static gb_tensor *backprop_input(const gb_attrs *p, const int64_t *input_shape, gb_tensor *f,
                                 gb_tensor *dy) {
    gb_attrs a = with_shape(p, input_shape);
    return conv_op(GB_OP_CONV2D_BACKPROP_INPUT, f, dy, &a);
}

static gb_tensor *backprop_filter(const gb_attrs *p, const int64_t *filter_shape, gb_tensor *x,
                                  gb_tensor *dy) {
    gb_attrs a = with_shape(p, filter_shape);
    return conv_op(GB_OP_CONV2D_BACKPROP_FILTER, x, dy, &a);
}

/* ---- gradients ---------------------------------------------------------------------------- */

static bool grad_conv2d(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0], *f = ctx->inputs[1], *dy = ctx->dys[0];
    dx[0] = ctx->needs_grad[0] ? backprop_input(ctx->attrs, x->shape, f, dy) : NULL;
    dx[1] = ctx->needs_grad[1] ? backprop_filter(ctx->attrs, f->shape, x, dy) : NULL;
    return gb_ok();
}

/* z = BackpropInput(f, dy): dz/df is BackpropFilter(g, dy) and dz/ddy is
 * Conv2D(g, f), for the incoming gradient g of z's (input) shape. */
static bool grad_backprop_input(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *f = ctx->inputs[0], *dy = ctx->inputs[1], *g = ctx->dys[0];
    dx[0] = ctx->needs_grad[0] ? backprop_filter(ctx->attrs, f->shape, g, dy) : NULL;
    gb_attrs conv = with_shape(ctx->attrs, NULL);
    dx[1] = ctx->needs_grad[1] ? conv_op(GB_OP_CONV2D, g, f, &conv) : NULL;
    return gb_ok();
}

/* z = BackpropFilter(x, dy): dz/dx is BackpropInput(g, dy) and dz/ddy is
 * Conv2D(x, g), for the incoming gradient g of the filter's shape. */
static bool grad_backprop_filter(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *x = ctx->inputs[0], *dy = ctx->inputs[1], *g = ctx->dys[0];
    dx[0] = ctx->needs_grad[0] ? backprop_input(ctx->attrs, x->shape, g, dy) : NULL;
    gb_attrs conv = with_shape(ctx->attrs, NULL);
    dx[1] = ctx->needs_grad[1] ? conv_op(GB_OP_CONV2D, x, g, &conv) : NULL;
    return gb_ok();
}

const gb_op_def gb_opdef_conv2d = {
    .name = "Conv2D",
    .arity = 2,
    .infer = infer_conv2d,
    .kernel = kernel_conv2d,
    .grad = grad_conv2d,
};

const gb_op_def gb_opdef_conv2d_backprop_input = {
    .name = "Conv2DBackpropInput",
    .arity = 2,
    .infer = infer_backprop_input,
    .kernel = kernel_backprop_input,
    .grad = grad_backprop_input,
};

const gb_op_def gb_opdef_conv2d_backprop_filter = {
    .name = "Conv2DBackpropFilter",
    .arity = 2,
    .infer = infer_backprop_filter,
    .kernel = kernel_backprop_filter,
    .grad = grad_backprop_filter,
};

/* ---- public API ------------------------------------------------------------------------------ */

gb_tensor *gb_conv2d(gb_tensor *x, gb_tensor *filter, const int64_t *strides, int nstrides,
                     gb_padding padding, const int64_t *dilations, int ndilations) {
    static const int64_t ones[2] = {1, 1};
    gb_attrs a = {.ni = A_SHAPE};
    if (!gb__window_pair(GB_OP_CONV2D, "strides", strides, nstrides, ones, a.i + A_SH) ||
        !gb__window_pair(GB_OP_CONV2D, "dilations", dilations, ndilations, ones, a.i + A_DH))
        return NULL;
    a.i[A_PAD] = padding;
    return conv_op(GB_OP_CONV2D, x, filter, &a);
}
