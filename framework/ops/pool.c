/* ops/pool.c — MaxPool and AvgPool over NHWC windows, with MaxPoolGrad
 * and AvgPoolGrad as ops (what their gradients call), as in TensorFlow.
 *
 * Window geometry and the SAME/VALID rules are shared with convolution
 * (ops/conv/im2col.h). The kernels (ops/isa/pool.c, one set per ISA
 * level) clip every window to the image once per output pixel, so the
 * inner loops run over the C contiguous channels of one input pixel with
 * no bounds checks; AvgPool with SAME padding divides by
 * the number of in-bounds elements, as TF does. MaxPool propagates NaN
 * (a NaN in a window is that window's maximum) so numerics checks see it.
 * MaxPoolGrad(x, y, dy), given the forward output y as TF's, routes each
 * output gradient to the first maximum of its window (in row-major window
 * order); it has no gradient itself.
 *
 * Attributes: i[0], i[1] window h, w; i[2], i[3] strides h, w; i[4]
 * padding; i[5..8] the input shape (AvgPoolGrad only).
 */
#include <math.h>
#include <stdio.h>

#include "core/parallel.h"
#include "ops/pool_kernels.h"

enum { A_KH = 0, A_KW, A_SH, A_SW, A_PAD, A_SHAPE, A_COUNT = A_SHAPE + 4 };

/* ---- shapes ----------------------------------------------------------------------- */

static bool pool_window(const gb_op_call *c, const int64_t *xs, gb_window *g) {
    const gb_attrs *a = c->attrs;
    *g = (gb_window){.n = xs[0],
                     .h = xs[1],
                     .w = xs[2],
                     .c = xs[3],
                     .kh = a->i[A_KH],
                     .kw = a->i[A_KW],
                     .sh = a->i[A_SH],
                     .sw = a->i[A_SW],
                     .dh = 1,
                     .dw = 1,
                     .padding = (int)a->i[A_PAD]};
    return gb__window_init(c, g);
}

static bool check_input(const gb_op_call *c, const gb_tensor *x, const char *what) {
    char s[96];
    if (x->rank != 4) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s must have rank 4 (NHWC), got shape %s", c->def->name,
                     what, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return false;
    }
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: %s must be float32 or float64, got %s", c->def->name,
                     what, gb_dtype_name(x->dtype));
        return false;
    }
    return true;
}

/* The grad ops' inputs shaped like the pooling output (`what`: the
 * gradient, or MaxPoolGrad's forward output) must match it. */
static bool check_dy(const gb_op_call *c, const gb_tensor *dy, const char *what, const gb_window *g,
                     gb_dtype dt) {
    int64_t want[4] = {g->n, g->oh, g->ow, g->c};
    if (dy->dtype != dt) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the %s is %s but the input is %s", c->def->name, what,
                     gb_dtype_name(dy->dtype), gb_dtype_name(dt));
        return false;
    }
    if (gb__shapes_match(4, dy->shape, 4, want)) return true;
    char a[96], b[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: the %s has shape %s but the pooling output is %s",
                 c->def->name, what, gb__shape_fmt(4, dy->shape, a, sizeof a),
                 gb__shape_fmt(4, want, b, sizeof b));
    return false;
}

static void set_out(gb_out_desc *o, gb_dtype dt, const int64_t *s) {
    o->dtype = dt;
    o->rank = 4;
    memcpy(o->shape, s, 4 * sizeof *s);
}

static int infer_pool(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    gb_window g;
    if (!check_input(c, x, "input") || !pool_window(c, x->shape, &g)) return -1;
    set_out(&out[0], x->dtype, (const int64_t[]){g.n, g.oh, g.ow, g.c});
    return 1;
}

/* MaxPoolGrad(x, y, dy) -> dx, y = MaxPool(x) */
static int infer_max_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *y = c->in[1], *dy = c->in[2];
    gb_window g;
    if (!check_input(c, x, "input") || !check_input(c, y, "output") ||
        !check_input(c, dy, "gradient") || !pool_window(c, x->shape, &g) ||
        !check_dy(c, y, "output", &g, x->dtype) || !check_dy(c, dy, "gradient", &g, x->dtype))
        return -1;
    set_out(&out[0], x->dtype, x->shape);
    return 1;
}

/* AvgPoolGrad(dy) -> dx of the input shape in the attrs */
static int infer_avg_pool_grad(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *dy = c->in[0];
    int64_t xs[4];
    gb_window g;
    if (!check_input(c, dy, "gradient") ||
        !gb__window_shape_attr(c, c->attrs->i + A_SHAPE, "input", dy, xs) ||
        !pool_window(c, xs, &g) || !check_dy(c, dy, "gradient", &g, dy->dtype))
        return -1;
    set_out(&out[0], dy->dtype, xs);
    return 1;
}

/* ---- kernels ------------------------------------------------------------------------- */

/* ---- kernels: in ops/isa/pool.c, one set per ISA level ------------------------------- */

typedef struct pool_task {
    gb_pool_job job;
    gb_pool_kernel fn;
} pool_task;

static void pool_range(void *ctx, int64_t n0, int64_t n1, int w) {
    const pool_task *t = ctx;
    t->fn(&t->job, n0, n1, w);
}

/* Parts smaller than this many input elements are not worth a thread. */
#define PARALLEL_MIN_ELEMS (1 << 16)

/* Runs the kernel of `which` (a gb_pool_kind) for dtype dt at the ISA
 * level in force over all images of the job's window, in parallel when big. */
static bool run_pool(int which, gb_dtype dt, gb_pool_job job) {
    pool_task t = {job, GB_ISA_TABLE(gb__pool_kernels)->fn[which][dt == GB_F64]};
    const gb_window *g = &job.g;
    if (which == GB_POOL_MAX_GRAD) {
        int64_t c = g->c > 0 ? g->c : 1;
        t.job.scratch = gb__scope_alloc((size_t)(gb__parallel_workers() * c) * gb_dtype_size(dt));
        if (!t.job.scratch) return false;
    }
    int64_t per_image = g->h * g->w * g->c + g->oh * g->ow * g->c;
    int64_t grain = per_image > 0 ? (PARALLEL_MIN_ELEMS + per_image - 1) / per_image : g->n;
    gb__parallel_for(g->n, grain, pool_range, &t);
    return true;
}

static bool kernel_max_pool(const gb_op_call *c, gb_tensor **out) {
    gb_pool_job j = {.x = c->in[0]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(GB_POOL_MAX, out[0]->dtype, j);
}

static bool kernel_avg_pool(const gb_op_call *c, gb_tensor **out) {
    gb_pool_job j = {.x = c->in[0]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(GB_POOL_AVG, out[0]->dtype, j);
}

static bool kernel_max_pool_grad(const gb_op_call *c, gb_tensor **out) {
    gb_pool_job j = {
        .x = c->in[0]->data, .y = c->in[1]->data, .dy = c->in[2]->data, .out = out[0]->data};
    pool_window(c, c->in[0]->shape, &j.g);
    return run_pool(GB_POOL_MAX_GRAD, out[0]->dtype, j);
}

static bool kernel_avg_pool_grad(const gb_op_call *c, gb_tensor **out) {
    gb_pool_job j = {.dy = c->in[0]->data, .out = out[0]->data};
    pool_window(c, out[0]->shape, &j.g);
    return run_pool(GB_POOL_AVG_GRAD, out[0]->dtype, j);
}

/* ---- gradients ------------------------------------------------------------------------- */

/* The window of `like` with the shape slots set to `shape` (AvgPoolGrad),
 * or without them (NULL: the pools, whose schema has no shape). */
static gb_attrs with_shape(const gb_attrs *like, const int64_t *shape) {
    gb_attrs a = *like;
    memset(a.i + A_SHAPE, 0, 4 * sizeof(int64_t));
    if (shape) memcpy(a.i + A_SHAPE, shape, 4 * sizeof(int64_t));
    a.ni = shape ? A_COUNT : A_SHAPE;
    return a;
}

static bool grad_max_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[3] = {ctx->inputs[0], ctx->outputs[0], ctx->dys[0]};
    dx[0] = gb__op1(GB_OP_MAX_POOL_GRAD, in, 3, ctx->attrs);
    return dx[0] != NULL;
}

static bool grad_avg_pool(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_attrs a = with_shape(ctx->attrs, ctx->inputs[0]->shape);
    dx[0] = gb__op1(GB_OP_AVG_POOL_GRAD, &ctx->dys[0], 1, &a);
    return dx[0] != NULL;
}

/* AvgPoolGrad is linear in dy and AvgPool is its adjoint. */
static bool grad_avg_pool_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_attrs a = with_shape(ctx->attrs, NULL);
    dx[0] = gb__op1(GB_OP_AVG_POOL, &ctx->dys[0], 1, &a);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_max_pool = {
    .name = "MaxPool",
    .arity = 1,
    .infer = infer_pool,
    .kernel = kernel_max_pool,
    .grad = grad_max_pool,
};

const gb_op_def gb_opdef_max_pool_grad = {
    .name = "MaxPoolGrad",
    .arity = 3,
    .infer = infer_max_pool_grad,
    .kernel = kernel_max_pool_grad,
    .grad = NULL, /* second derivatives of max pooling are not supported */
};

const gb_op_def gb_opdef_avg_pool = {
    .name = "AvgPool",
    .arity = 1,
    .infer = infer_pool,
    .kernel = kernel_avg_pool,
    .grad = grad_avg_pool,
};

const gb_op_def gb_opdef_avg_pool_grad = {
    .name = "AvgPoolGrad",
    .arity = 1,
    .infer = infer_avg_pool_grad,
    .kernel = kernel_avg_pool_grad,
    .grad = grad_avg_pool_grad,
};

/* ---- public API ---------------------------------------------------------------------------- */

static gb_tensor *pool(gb_op_id op, gb_tensor *x, const int64_t *ksize, int nksize,
                       const int64_t *strides, int nstrides, gb_padding padding) {
    gb_attrs a = {.ni = A_SHAPE};
    if (!gb__window_pair(op, "ksize", ksize, nksize, NULL, a.i + A_KH) ||
        !gb__window_pair(op, "strides", strides, nstrides, a.i + A_KH, a.i + A_SH))
        return NULL;
    a.i[A_PAD] = padding;
    return gb__op1(op, &x, 1, &a);
}

gb_tensor *gb_max_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding) {
    return pool(GB_OP_MAX_POOL, x, ksize, nksize, strides, nstrides, padding);
}

gb_tensor *gb_avg_pool2d(gb_tensor *x, const int64_t *ksize, int nksize, const int64_t *strides,
                         int nstrides, gb_padding padding) {
    return pool(GB_OP_AVG_POOL, x, ksize, nksize, strides, nstrides, padding);
}
