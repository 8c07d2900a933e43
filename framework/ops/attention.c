/* ops/attention.c — DotProductAttention and its backward: the core of a
 * multi-head attention layer, softmax(scale q k^T, masked) v per head, as
 * one op each way.
 *
 * Built from ops, a head's scores are a [B, H, Tq, Tv] tensor that one
 * product writes, a masked softmax reads and writes and another product
 * reads, and q, k, v and the output each go through a transpose between
 * [B, T, H, d] and [B, H, T, d]; backward the same again with a softmax
 * gradient — in the char LM, passes over 8 MB tensors that cost more than
 * the products. Here each (batch, head) pair is one task on one thread:
 * its scores come from a GEMM that reads q and k in place in [B, T, H, d]
 * (the leading dimension H * d picks the head), the masked softmax runs
 * on them while they are in cache (ops/softmax_rows.h), and the product
 * with v writes the head's slice of the [B, Tq, H, dv] output. The
 * weights are kept (they are the second output) for the backward pass:
 *   dP = dO v^T,  dS = P * (dP - rowsum(dP * P)),
 *   dq = scale dS k,  dk = scale dS^T q,  dv = P^T dO
 * with dP and dS in a per-worker buffer, never a whole tensor (the
 * weights' own gradient, when the weights are used, is added to dP).
 *
 * DotProductAttention: inputs q [B, Tq, H, dk], k [B, Tv, H, dk], v [B,
 * Tv, H, dv] and optionally a bool mask broadcasting to [B, H, Tq, Tv]
 * (masked softmax semantics: a row with nothing allowed is 0); attribute
 * scale. Outputs o [B, Tq, H, dv] and the weights [B, H, Tq, Tv] (kept
 * for the backward pass, and a layer's attention scores).
 * DotProductAttentionGrad: inputs dO, q, k, v, the weights and, when a
 * gradient reaches them, the weights' gradient; attribute scale; outputs
 * dq, dk, dv. It has no gradient.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ops/internal.h"
#include "ops/softmax_rows.h"

enum { A_SCALE = 0 };
enum { Q, K, V, MASK };
enum { G_DO, G_Q, G_K, G_V, G_P, G_DW };

/* ---- shapes ------------------------------------------------------------------------ */

static bool check_float4(const gb_op_call *c, const gb_tensor *t, const gb_tensor *q, const char *what) {
    char s[96];
    if (t->dtype != q->dtype || !gb_dtype_is_float(t->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: %s must be float32 or float64 as q, got %s and q %s", c->def->name,
                     what, gb_dtype_name(t->dtype), gb_dtype_name(q->dtype));
        return false;
    }
    if (t->rank != 4) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: %s must be [batch, time, heads, depth], got %s", c->def->name, what,
                     gb__shape_fmt(t->rank, t->shape, s, sizeof s));
        return false;
    }
    return true;
}

/* q, k, v agree: one batch and head count, k and v one length, q and k one depth. */
static bool check_qkv(const gb_op_call *c, const gb_tensor *q, const gb_tensor *k, const gb_tensor *v) {
    if (!check_float4(c, q, q, "q") || !check_float4(c, k, q, "k") || !check_float4(c, v, q, "v")) return false;
    bool ok = gb__dims_match(q->shape[0], k->shape[0]) && gb__dims_match(q->shape[0], v->shape[0]) &&
              gb__dims_match(q->shape[2], k->shape[2]) && gb__dims_match(q->shape[2], v->shape[2]) &&
              gb__dims_match(k->shape[1], v->shape[1]) && gb__dims_match(q->shape[3], k->shape[3]);
    if (!ok) {
        char a[96], b[96], d[96];
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: q %s, k %s and v %s must share batch and heads, k and v their length, q and k "
                     "their depth",
                     c->def->name, gb__shape_fmt(q->rank, q->shape, a, sizeof a),
                     gb__shape_fmt(k->rank, k->shape, b, sizeof b), gb__shape_fmt(v->rank, v->shape, d, sizeof d));
    }
    return ok;
}

/* The weights' shape [B, H, Tq, Tv]. */
static void weights_shape(const gb_tensor *q, const gb_tensor *k, int64_t *w) {
    w[0] = gb__dims_merge(q->shape[0], k->shape[0]);
    w[1] = gb__dims_merge(q->shape[2], k->shape[2]);
    w[2] = q->shape[1];
    w[3] = k->shape[1];
}

static void describe(gb_out_desc *o, gb_dtype dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    o->dtype = dt;
    o->rank = 4;
    o->shape[0] = d0, o->shape[1] = d1, o->shape[2] = d2, o->shape[3] = d3;
}

static int infer_attention(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin != 3 && c->nin != 4) {
        gb__op_error(c, GB_ERR_VALUE, "%s: takes q, k, v and optionally a mask (3 or 4 inputs), got %d",
                     c->def->name, c->nin);
        return -1;
    }
    const gb_tensor *q = c->in[Q], *k = c->in[K], *v = c->in[V];
    if (!check_qkv(c, q, k, v)) return -1;
    double scale = c->attrs->f[A_SCALE];
    if (!isfinite(scale)) {
        gb__op_error(c, GB_ERR_VALUE, "%s: scale must be finite, got %g", c->def->name, scale);
        return -1;
    }
    int64_t w[4];
    weights_shape(q, k, w);
    if (c->nin == 4) {
        const gb_tensor *m = c->in[MASK];
        bool fits = m->dtype == GB_BOOL && m->rank <= 4;
        for (int d = 1; fits && d <= m->rank; d++)
            fits = m->shape[m->rank - d] == 1 || gb__dims_match(m->shape[m->rank - d], w[4 - d]);
        if (!fits) {
            char a[96], b[96];
            gb__op_error(c, m->dtype == GB_BOOL ? GB_ERR_SHAPE : GB_ERR_DTYPE,
                         "%s: the mask must be bool and broadcast to the weights %s, got %s %s", c->def->name,
                         gb__shape_fmt(4, w, a, sizeof a), gb_dtype_name(m->dtype),
                         gb__shape_fmt(m->rank, m->shape, b, sizeof b));
            return -1;
        }
    }
    describe(&out[0], q->dtype, w[0], q->shape[1], w[1], v->shape[3]);
    describe(&out[1], q->dtype, w[0], w[1], w[2], w[3]);
    return 2;
}

static int infer_attention_grad(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin != 5 && c->nin != 6) {
        gb__op_error(c, GB_ERR_VALUE, "%s: takes dO, q, k, v, the weights and optionally their gradient (5 or "
                     "6 inputs), got %d", c->def->name, c->nin);
        return -1;
    }
    const gb_tensor *q = c->in[G_Q], *k = c->in[G_K], *v = c->in[G_V], *dout = c->in[G_DO], *p = c->in[G_P];
    if (!check_qkv(c, q, k, v) || !check_float4(c, dout, q, "dO") || !check_float4(c, p, q, "the weights"))
        return -1;
    int64_t w[4], o[4] = {q->shape[0], q->shape[1], q->shape[2], v->shape[3]};
    weights_shape(q, k, w);
    const gb_tensor *dw = c->nin == 6 ? c->in[G_DW] : p;
    if (c->nin == 6 && !check_float4(c, dw, q, "the weights' gradient")) return -1;
    if (!gb__shapes_match(4, p->shape, 4, w) || !gb__shapes_match(4, dw->shape, 4, w) ||
        !gb__shapes_match(4, dout->shape, 4, o)) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: the weights %s (or their gradient) or dO %s do not fit q, k and v",
                     c->def->name, gb__shape_fmt(4, p->shape, a, sizeof a),
                     gb__shape_fmt(4, dout->shape, b, sizeof b));
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        const gb_tensor *t = c->in[G_Q + i];
        describe(&out[i], q->dtype, t->shape[0], t->shape[1], t->shape[2], t->shape[3]);
    }
    return 3;
}

/* ---- kernels ----------------------------------------------------------------------- */

/* One call's geometry; task t is batch t / H, head t % H. */
typedef struct attn_job {
    int64_t b, h, tq, tv, dk, dv;
    double scale;
    const char *q, *k, *v, *dout, *dw;
    char *o, *p, *dq, *dk_out, *dv_out;
    const bool *mask;
    int64_t mstride[4];          /* the mask's element strides over [B, H, Tq, Tv]; 0: broadcast */
    char *scratch;               /* backward: per worker, Tq * Tv */
    bool f64;
} attn_job;

/* The mask's strides over the weights' dims (aligned right). */
static void mask_strides(const gb_tensor *m, attn_job *j) {
    const int64_t w[4] = {j->b, j->h, j->tq, j->tv};
    int64_t s = 1;
    for (int d = 3; d >= 0; d--) {
        int md = m->rank - (4 - d);
        int64_t dim = md >= 0 ? m->shape[md] : 1;
        j->mstride[d] = dim == 1 || w[d] == 1 ? 0 : s;
        s *= dim;
    }
}

/* GEMM in the element type: C = alpha op(A) op(B), row-major; a product
 * over no depth (k = 0) is zeros, one with no rows or columns nothing. */
static void gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                 int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc) {
    const double beta = 0;
    if (m == 0 || n == 0) return;
    if (k == 0) {
        size_t es = f64 ? sizeof(double) : sizeof(float);
        for (int64_t i = 0; i < m; i++) memset((char *)c + (size_t)(i * ldc) * es, 0, (size_t)n * es);
        return;
    }
    enum CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
    if (f64)
        cblas_dgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c,
                    (int)ldc);
    else
        cblas_sgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b, (int)ldb,
                    (float)beta, c, (int)ldc);
}

/* Row i of (batch bi, head hi)'s scores: softmax over what the mask allows. */
static void softmax_row(const attn_job *j, int64_t bi, int64_t hi, int64_t i, char *row) {
    const bool *allow = NULL;
    if (j->mask) {
        const bool *m = j->mask + bi * j->mstride[0] + hi * j->mstride[1] + i * j->mstride[2];
        if (j->mstride[3] == 0 && !*m) { /* one flag for the row, and it says no */
            memset(row, 0, (size_t)j->tv * (j->f64 ? sizeof(double) : sizeof(float)));
            return;
        }
        allow = j->mstride[3] ? m : NULL;
    }
    if (j->f64)
        gb__softmax_row_f64((const double *)row, allow, (double *)row, j->tv);
    else
        gb__softmax_row_f32((const float *)row, allow, (float *)row, j->tv);
}

static void forward_part(void *ctx, int64_t t0, int64_t t1, int worker) {
    (void)worker;
    const attn_job *j = ctx;
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / j->h, hi = t % j->h;
        const char *q = j->q + (size_t)((bi * j->tq * j->h + hi) * j->dk) * es;
        const char *k = j->k + (size_t)((bi * j->tv * j->h + hi) * j->dk) * es;
        const char *v = j->v + (size_t)((bi * j->tv * j->h + hi) * j->dv) * es;
        char *p = j->p + (size_t)(t * j->tq * j->tv) * es, *o = j->o + (size_t)((bi * j->tq * j->h + hi) * j->dv) * es;
        gemm(j->f64, false, true, j->tq, j->tv, j->dk, j->scale, q, j->h * j->dk, k, j->h * j->dk, p, j->tv);
        for (int64_t i = 0; i < j->tq; i++) softmax_row(j, bi, hi, i, p + (size_t)(i * j->tv) * es);
        gemm(j->f64, false, false, j->tq, j->dv, j->tv, 1, p, j->tv, v, j->h * j->dv, o, j->h * j->dv);
    }
}

/* a += b over n elements */
static void add_into(bool f64, char *a, const char *b, int64_t n) {
    if (f64)
        for (int64_t i = 0; i < n; i++) ((double *)a)[i] += ((const double *)b)[i];
    else
        for (int64_t i = 0; i < n; i++) ((float *)a)[i] += ((const float *)b)[i];
}

static void backward_part(void *ctx, int64_t t0, int64_t t1, int worker) {
    const attn_job *j = ctx;
    size_t es = j->f64 ? sizeof(double) : sizeof(float);
    char *ds = j->scratch + (size_t)(worker * j->tq * j->tv) * es;
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / j->h, hi = t % j->h;
        size_t at_q = (size_t)((bi * j->tq * j->h + hi) * j->dk) * es, at_k = (size_t)((bi * j->tv * j->h + hi) * j->dk) * es;
        size_t at_v = (size_t)((bi * j->tv * j->h + hi) * j->dv) * es, at_o = (size_t)((bi * j->tq * j->h + hi) * j->dv) * es;
        const char *p = j->p + (size_t)(t * j->tq * j->tv) * es, *dout = j->dout + at_o;
        int64_t lk = j->h * j->dk, lv = j->h * j->dv;
        gemm(j->f64, false, true, j->tq, j->tv, j->dv, 1, dout, lv, j->v + at_v, lv, ds, j->tv); /* dP */
        if (j->dw) add_into(j->f64, ds, j->dw + (size_t)(t * j->tq * j->tv) * es, j->tq * j->tv);
        for (int64_t i = 0; i < j->tq; i++) {
            size_t r = (size_t)(i * j->tv) * es;
            if (j->f64)
                gb__softmax_grad_row_f64((const double *)(p + r), (const double *)(ds + r), (double *)(ds + r), j->tv);
            else
                gb__softmax_grad_row_f32((const float *)(p + r), (const float *)(ds + r), (float *)(ds + r), j->tv);
        }
        gemm(j->f64, false, false, j->tq, j->dk, j->tv, j->scale, ds, j->tv, j->k + at_k, lk, j->dq + at_q, lk);
        gemm(j->f64, true, false, j->tv, j->dk, j->tq, j->scale, ds, j->tv, j->q + at_q, lk, j->dk_out + at_k, lk);
        gemm(j->f64, true, false, j->tv, j->dv, j->tq, 1, p, j->tv, dout, lv, j->dv_out + at_v, lv);
    }
}

static attn_job job_of(const gb_tensor *q, const gb_tensor *k, const gb_tensor *v, double scale) {
    return (attn_job){.b = q->shape[0], .h = q->shape[2], .tq = q->shape[1], .tv = k->shape[1],
                      .dk = q->shape[3], .dv = v->shape[3], .scale = scale, .q = q->data, .k = k->data,
                      .v = v->data, .f64 = q->dtype == GB_F64};
}

static bool kernel_attention(const gb_op_call *c, gb_tensor **out) {
    attn_job j = job_of(c->in[Q], c->in[K], c->in[V], c->attrs->f[A_SCALE]);
    j.o = out[0]->data, j.p = out[1]->data;
    if (c->nin == 4) {
        j.mask = c->in[MASK]->data;
        mask_strides(c->in[MASK], &j);
    }
    gb__parallel_workers(); /* OpenBLAS single-threaded before the first product */
    if (j.b * j.h > 0) gb__parallel_for(j.b * j.h, 1, forward_part, &j);
    return true;
}

static bool kernel_attention_grad(const gb_op_call *c, gb_tensor **out) {
    attn_job j = job_of(c->in[G_Q], c->in[G_K], c->in[G_V], c->attrs->f[A_SCALE]);
    j.dout = c->in[G_DO]->data, j.p = c->in[G_P]->data, j.dw = c->nin == 6 ? c->in[G_DW]->data : NULL;
    j.dq = out[0]->data, j.dk_out = out[1]->data, j.dv_out = out[2]->data;
    int workers = gb__parallel_workers();
    j.scratch = malloc((size_t)(workers * j.tq * j.tv) * gb_dtype_size(out[0]->dtype) + 1);
    if (!j.scratch) {
        gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory for %d buffers of %lld x %lld scores", c->def->name,
                     workers, (long long)j.tq, (long long)j.tv);
        return false;
    }
    if (j.b * j.h > 0) gb__parallel_for(j.b * j.h, 1, backward_part, &j);
    free(j.scratch);
    return true;
}

/* ---- gradient ---------------------------------------------------------------------- */

/* The weights' gradient goes in when a loss used them (a layer's attention
 * scores); the tape leaves it NULL otherwise (GB_OPF_OPTIONAL_DYS). */
static bool grad_attention(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[6] = {ctx->dys[0], ctx->inputs[Q], ctx->inputs[K], ctx->inputs[V], ctx->outputs[1], ctx->dys[1]};
    gb_tensor *g[3];
    if (gb__dispatch(GB_OP_DOT_PRODUCT_ATTENTION_GRAD, in, in[5] ? 6 : 5, ctx->attrs, g) != 3) return false;
    for (int i = 0; i < 3; i++) dx[i] = ctx->needs_grad[i] ? g[i] : NULL;
    if (ctx->nin == 4) dx[MASK] = NULL;
    return true;
}

const gb_op_def gb_opdef_dot_product_attention = {
    .name = "DotProductAttention",
    .arity = -1,
    .flags = GB_OPF_OPTIONAL_DYS,
    .inputs_doc = "q [B, Tq, H, dk], k [B, Tv, H, dk], v [B, Tv, H, dv], then optionally a bool mask "
                  "broadcasting to [B, H, Tq, Tv]; outputs [B, Tq, H, dv] and the weights [B, H, Tq, Tv]",
    .infer = infer_attention,
    .kernel = kernel_attention,
    .grad = grad_attention,
};

const gb_op_def gb_opdef_dot_product_attention_grad = {
    .name = "DotProductAttentionGrad",
    .arity = -1,
    .inputs_doc = "dO [B, Tq, H, dv], q, k, v, DotProductAttention's weights, optionally their gradient; "
                  "outputs dq, dk, dv",
    .infer = infer_attention_grad,
    .kernel = kernel_attention_grad,
};

/* ---- for the layer ---------------------------------------------------------------------- */

gb_tensor *gb__dot_product_attention(gb_tensor *q, gb_tensor *k, gb_tensor *v, gb_tensor *mask, double scale,
                                     gb_tensor **weights) {
    gb_attrs a = {.f = {scale}};
    gb_tensor *in[4] = {q, k, v, mask}, *out[2];
    if (gb__dispatch(GB_OP_DOT_PRODUCT_ATTENTION, in, mask ? 4 : 3, &a, out) != 2) return NULL;
    if (weights) *weights = out[1];
    return out[0];
}
