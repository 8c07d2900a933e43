/* ops/matmul.c — MatMul: [..., M, K] x [..., K, N] with optional
 * transposes and NumPy-broadcast batch dimensions (TF's BatchMatMulV2).
 *
 * float32 goes to cblas_sgemm and float64 to cblas_dgemm. Tiny products
 * (a 1x10 by 10x10 layer of a small MLP) cost more in BLAS call overhead
 * than in arithmetic, so for those a plain loop runs instead (thresholds
 * measured, see TINY_ROWS / TINY_FLOPS). When only `a` carries batch
 * dimensions and is not transposed (Dense on [batch, time, features]),
 * its batch folds into M and one GEMM does all. Big products split their
 * rows (over all batch entries) across the worker threads (core/parallel.h).
 *
 * Attributes: i[0] transpose_a, i[1] transpose_b.
 */
#include <cblas.h>
#include <stdio.h>

#include "ops/internal.h"
#include "core/parallel.h"

enum { A_TA = 0, A_TB = 1 };

/* When the plain loop beats the BLAS call (about 70-100 ns of overhead per
 * call here). Measured on the 2-core Zen 4 box, ns per float32 product,
 * loop vs cblas_sgemm (B not transposed / transposed):
 *   1x10x10      42 vs  95  /   45 vs  97
 *   1x256x784 19000 vs 53000 / 16400 vs 71000  (OpenBLAS is weak at M=1)
 *   2x64x64     550 vs 913  /  927 vs 1321
 *   4x10x10     156 vs 115  /  180 vs 133
 *   8x8x8       128 vs 128  /  241 vs 148
 *   10x10x10    389 vs 193  /  432 vs 206
 * so: one or two rows, or at most 256 multiply-adds. */
#define TINY_ROWS 2
#define TINY_FLOPS 256

/* ---- shapes -------------------------------------------------------------------- */

/* The product's geometry, derived once from the inputs and the attrs. */
typedef struct mm_geom {
    int64_t m, n, k;
    int nb;                                   /* output batch rank */
    int64_t batch[GB_MAX_RANK];               /* output batch dims */
    int64_t sa[GB_MAX_RANK], sb[GB_MAX_RANK]; /* batch strides in matrices, 0 = broadcast */
    int64_t nbatch;
} mm_geom;

static void shape_pair(const gb_tensor *a, const gb_tensor *b, char *buf, size_t n) {
    char x[96], y[96];
    snprintf(buf, n, "%s x %s", gb__shape_fmt(a->rank, a->shape, x, sizeof x),
             gb__shape_fmt(b->rank, b->shape, y, sizeof y));
}

/* Batch strides (in whole matrices) of t's batch dims aligned to nb. */
static void batch_strides(const gb_tensor *t, const mm_geom *g, int64_t *s) {
    int tb = t->rank - 2, lead = g->nb - tb;
    int64_t stride = 1;
    for (int d = g->nb - 1; d >= 0; d--) {
        int64_t dim = d < lead ? 1 : t->shape[d - lead];
        s[d] = dim == 1 ? 0 : stride;
        stride *= dim;
    }
}

static bool geometry(const gb_op_call *c, mm_geom *g) {
    const gb_tensor *a = c->in[0], *b = c->in[1];
    bool ta = c->attrs->i[A_TA], tb = c->attrs->i[A_TB];
    char pair[224];
    if (a->rank < 2 || b->rank < 2) {
        shape_pair(a, b, pair, sizeof pair);
        gb__op_error(c, GB_ERR_SHAPE,
                     "MatMul: both inputs need rank >= 2, got %s; for a matrix and a vector "
                     "use gb_matvec (tf.linalg.matvec) or gb_vecmat",
                     pair);
        return false;
    }
    if (a->dtype != b->dtype || !gb_dtype_is_float(a->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE,
                     "MatMul: inputs must both be float32 or both float64, got %s and %s",
                     gb_dtype_name(a->dtype), gb_dtype_name(b->dtype));
        return false;
    }
    const int64_t *as = a->shape + a->rank - 2, *bs = b->shape + b->rank - 2;
    g->m = ta ? as[1] : as[0];
    g->k = ta ? as[0] : as[1];
    int64_t kb = tb ? bs[1] : bs[0];
    g->n = tb ? bs[0] : bs[1];
    if (!gb__dims_match(g->k, kb)) {
        shape_pair(a, b, pair, sizeof pair);
        gb__op_error(c, GB_ERR_SHAPE, "MatMul: inner dimensions differ: %s (%lld vs %lld%s%s)",
                     pair, (long long)g->k, (long long)kb, ta ? ", transpose_a" : "",
                     tb ? ", transpose_b" : "");
        return false;
    }
    int ra = a->rank - 2, rb = b->rank - 2;
    g->nb = ra > rb ? ra : rb;
    g->nbatch = 1;
    for (int d = 0; d < g->nb; d++) {
        int64_t da = d < g->nb - ra ? 1 : a->shape[d - (g->nb - ra)];
        int64_t db = d < g->nb - rb ? 1 : b->shape[d - (g->nb - rb)];
        if (!gb__broadcast_dim(da, db, &g->batch[d])) {
            shape_pair(a, b, pair, sizeof pair);
            gb__op_error(c, GB_ERR_SHAPE,
                         "MatMul: batch dimensions do not broadcast: %s (%lld vs %lld)", pair,
                         (long long)da, (long long)db);
            return false;
        }
        g->nbatch *= g->batch[d];
    }
    batch_strides(a, g, g->sa);
    batch_strides(b, g, g->sb);
    return true;
}

static int infer_matmul(const gb_op_call *c, gb_out_desc *out) {
    mm_geom g;
    if (!geometry(c, &g)) return -1;
    out[0].dtype = c->in[0]->dtype;
    out[0].rank = g.nb + 2;
    memcpy(out[0].shape, g.batch, (size_t)g.nb * sizeof(int64_t));
    out[0].shape[g.nb] = g.m;
    out[0].shape[g.nb + 1] = g.n;
    return 1;
}

/* ---- kernels ------------------------------------------------------------------------ */

static bool use_loop(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
    if (k == 0) return true;
    if (m * n * k <= TINY_FLOPS) return true;
    return m <= TINY_ROWS && !(ta && tb);
}

/* Rows [i0, i1) of C[M,N] = op(A) op(B) for one matrix pair, as a loop
 * (tiny products) or a BLAS call on the row block. Without transpose_b
 * the loop is i-p-j, so the inner loop is an axpy over contiguous rows of
 * B and C; with it, each C element is a dot product of contiguous rows,
 * summed in 16 lanes so it vectorizes. */
#define DEFINE_GEMM(T, SUFFIX, BLAS)                                                               \
    static void loop_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k,                   \
                              const T *restrict A, const T *restrict B, T *restrict C, int64_t i0, \
                              int64_t i1) {                                                        \
        int64_t sai = ta ? 1 : k, sap = ta ? m : 1;                                                \
        for (int64_t i = i0; i < i1; i++) {                                                        \
            T *restrict c = C + i * n;                                                             \
            if (!tb) {                                                                             \
                for (int64_t j = 0; j < n; j++) c[j] = 0;                                          \
                for (int64_t p = 0; p < k; p++) {                                                  \
                    T av = A[i * sai + p * sap];                                                   \
                    const T *restrict b = B + p * n;                                               \
                    for (int64_t j = 0; j < n; j++) c[j] += av * b[j];                             \
                }                                                                                  \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t j = 0; j < n; j++) {                                                      \
                const T *restrict b = B + j * k;                                                   \
                T acc[16] = {0}, s = 0;                                                            \
                int64_t p = 0;                                                                     \
                if (!ta)                                                                           \
                    for (; p + 16 <= k; p += 16)                                                   \
                        for (int l = 0; l < 16; l++) acc[l] += A[i * k + p + l] * b[p + l];        \
                for (int l = 0; l < 16; l++) s += acc[l];                                          \
                for (; p < k; p++) s += A[i * sai + p * sap] * b[p];                               \
                c[j] = s;                                                                          \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void gemm_rows_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *A,  \
                                   const T *B, T *C, int64_t i0, int64_t i1) {                     \
        if (use_loop(ta, tb, i1 - i0, n, k)) {                                                     \
            loop_##SUFFIX(ta, tb, m, n, k, A, B, C, i0, i1);                                       \
            return;                                                                                \
        }                                                                                          \
        /* cleared here, beta 1: faster than OpenBLAS's own clearing for beta 0 */                 \
        memset(C + i0 * n, 0, (size_t)((i1 - i0) * n) * sizeof(T));                                \
        BLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,        \
             (int)(i1 - i0), (int)n, (int)k, 1, ta ? A + i0 : A + i0 * k, (int)(ta ? m : k), B,    \
             (int)(tb ? k : n), 1, C + i0 * n, (int)n);                                            \
    }
DEFINE_GEMM(float, f32, cblas_sgemm)
DEFINE_GEMM(double, f64, cblas_dgemm)

/* One kernel call. Its work is a list of units, row i of batch entry t
 * being unit t*M + i; parts of the list run on different threads and
 * write disjoint rows of the output. */
typedef struct mm_job {
    mm_geom g;
    bool ta, tb, f64;
    const void *A, *B;
    void *C;
} mm_job;

#define DEFINE_UNITS(T, SUFFIX)                                                                    \
    static void units_##SUFFIX(const mm_job *j, int64_t u0, int64_t u1) {                          \
        const mm_geom *g = &j->g;                                                                  \
        int64_t sza = g->m * g->k, szb = g->k * g->n, szc = g->m * g->n;                           \
        for (int64_t t = u0 / g->m; t * g->m < u1; t++) {                                          \
            int64_t oa = 0, ob = 0, rest = t;                                                      \
            for (int d = g->nb - 1; d >= 0; d--) {                                                 \
                int64_t idx = rest % g->batch[d];                                                  \
                rest /= g->batch[d];                                                               \
                oa += idx * g->sa[d];                                                              \
                ob += idx * g->sb[d];                                                              \
            }                                                                                      \
            int64_t i0 = u0 - t * g->m, i1 = u1 - t * g->m;                                        \
            gemm_rows_##SUFFIX(j->ta, j->tb, g->m, g->n, g->k, (const T *)j->A + oa * sza,         \
                               (const T *)j->B + ob * szb, (T *)j->C + t * szc, i0 > 0 ? i0 : 0,   \
                               i1 < g->m ? i1 : g->m);                                             \
        }                                                                                          \
    }
DEFINE_UNITS(float, f32)
DEFINE_UNITS(double, f64)

static void units_range(void *ctx, int64_t u0, int64_t u1, int worker) {
    const mm_job *j = ctx;
    (void)worker;
    if (j->f64)
        units_f64(j, u0, u1);
    else
        units_f32(j, u0, u1);
}

/* Parts below this many multiply-adds are not worth a thread (waking one
 * costs about as much as 0.5M multiply-adds). */
#define PARALLEL_MIN_MACS (1 << 20)

/* Whether a's batch can fold into M: b is shared by every batch entry and
 * a's matrices are stacked row-major (not transposed). */
static bool foldable(const mm_geom *g, bool ta) {
    if (ta || g->nbatch <= 1) return false;
    for (int d = 0; d < g->nb; d++)
        if (g->sb[d] != 0) return false;
    int64_t expect = 1;
    for (int d = g->nb - 1; d >= 0; d--) {
        if (g->batch[d] != 1 && g->sa[d] != expect) return false;
        expect *= g->batch[d];
    }
    return true;
}

static bool kernel_matmul(const gb_op_call *c, gb_tensor **out) {
    mm_job j = {.ta = c->attrs->i[A_TA],
                .tb = c->attrs->i[A_TB],
                .f64 = out[0]->dtype == GB_F64,
                .A = c->in[0]->data,
                .B = c->in[1]->data,
                .C = out[0]->data};
    geometry(c, &j.g); /* validated by infer */
    if (foldable(&j.g, j.ta)) {
        j.g.m *= j.g.nbatch;
        j.g.nb = 0;
        j.g.nbatch = 1;
    }
    int64_t units = j.g.nbatch * j.g.m, row_macs = j.g.n * j.g.k;
    if (units == 0 || j.g.n == 0) return true;
    int64_t grain = row_macs > 0 ? (PARALLEL_MIN_MACS + row_macs - 1) / row_macs : units;
    /* one part per worker: GEMMs lose speed on fewer rows */
    int workers = gb__parallel_workers();
    int64_t even = (units + workers - 1) / workers;
    gb__parallel_for(units, grain > even ? grain : even, units_range, &j);
    return true;
}

/* ---- gradient ------------------------------------------------------------------------- */

/* TF's BatchMatMulV2 gradient: for C = op(A) op(B),
 *   dA = dC op(B)^T   (or op(B) dC^T when A was transposed),
 *   dB = op(A)^T dC   (or dC^T op(A) when B was transposed),
 * each summed down over the batch dims its input broadcast along. */
static gb_tensor *grad_a(gb_tensor *a, gb_tensor *b, gb_tensor *dy, bool ta, bool tb) {
    if (!ta) return tb ? gb_matmul_t(dy, b, false, false) : gb_matmul_t(dy, b, false, true);
    return tb ? gb_matmul_t(b, dy, true, true) : gb_matmul_t(b, dy, false, true);
}

static gb_tensor *grad_b(gb_tensor *a, gb_tensor *b, gb_tensor *dy, bool ta, bool tb) {
    /* b shared by all of a's batch entries: fold the batch into one product
     * instead of a batched one followed by a sum. */
    if (b->rank == 2 && a->rank > 2 && !ta) {
        int64_t k = a->shape[a->rank - 1], n = dy->shape[dy->rank - 1];
        gb_tensor *a2 = gb_reshape(a, 2, (const int64_t[]){-1, k});
        gb_tensor *dy2 = gb_reshape(dy, 2, (const int64_t[]){-1, n});
        return tb ? gb_matmul_t(dy2, a2, true, false) : gb_matmul_t(a2, dy2, true, false);
    }
    if (!tb) return ta ? gb_matmul_t(a, dy, false, false) : gb_matmul_t(a, dy, true, false);
    return ta ? gb_matmul_t(dy, a, true, true) : gb_matmul_t(dy, a, true, false);
}

static bool grad_matmul(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *dy = ctx->dys[0];
    bool ta = ctx->attrs->i[A_TA], tb = ctx->attrs->i[A_TB];
    if (ctx->needs_grad[0]) dx[0] = gb__sum_to(grad_a(a, b, dy, ta, tb), a);
    if (ctx->needs_grad[1]) dx[1] = gb__sum_to(grad_b(a, b, dy, ta, tb), b);
    return gb_ok();
}

const gb_op_def gb_opdef_matmul = {
    .name = "MatMul",
    .arity = 2,
    .flags = 0,
    .infer = infer_matmul,
    .kernel = kernel_matmul,
    .grad = grad_matmul,
};

/* ---- public API -------------------------------------------------------------------------- */

gb_tensor *gb_matmul_t(gb_tensor *a, gb_tensor *b, bool transpose_a, bool transpose_b) {
    gb_attrs at = {.ni = 2};
    at.i[A_TA] = transpose_a;
    at.i[A_TB] = transpose_b;
    gb_tensor *in[2] = {a, b};
    return gb__op1(GB_OP_MATMUL, in, 2, &at);
}

gb_tensor *gb_matmul(gb_tensor *a, gb_tensor *b) { return gb_matmul_t(a, b, false, false); }
