/* ops_matmul.c — MatMul: [..., M, K] x [..., K, N] with optional
 * transposes and NumPy-broadcast batch dimensions (TF's BatchMatMulV2).
 *
 * float32 goes to cblas_sgemm and float64 to cblas_dgemm. Tiny products
 * (a 1x10 by 10x10 layer of a small MLP) cost more in BLAS call overhead
 * than in arithmetic, so for those a plain loop runs instead (thresholds
 * measured, see TINY_ROWS / TINY_FLOPS). When only `a` carries batch
 * dimensions and is not transposed (Dense on [batch, time, features]),
 * its batch folds into M and one GEMM does all.
 *
 * Attributes: i[0] transpose_a, i[1] transpose_b.
 */
#include <cblas.h>
#include <stdio.h>

#include "internal.h"

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
    int nb;                         /* output batch rank */
    int64_t batch[GB_MAX_RANK];     /* output batch dims */
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
        gb__op_error(c, GB_ERR_SHAPE, "MatMul: both inputs need rank >= 2, got %s", pair);
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
    if (g->k != kb) {
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
        if (da != db && da != 1 && db != 1) {
            shape_pair(a, b, pair, sizeof pair);
            gb__op_error(c, GB_ERR_SHAPE,
                         "MatMul: batch dimensions do not broadcast: %s (%lld vs %lld)", pair,
                         (long long)da, (long long)db);
            return false;
        }
        g->batch[d] = da == 1 ? db : da;
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

/* C[M,N] = op(A) op(B) for one matrix pair, as a loop (tiny products) or
 * a BLAS call. Without transpose_b the loop is i-p-j, so the inner loop is
 * an axpy over contiguous rows of B and C; with it, each C element is a
 * dot product of contiguous rows, summed in 16 lanes so it vectorizes. */
#define DEFINE_GEMM(T, SUFFIX, BLAS)                                                          \
    static void loop_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k,              \
                              const T *restrict A, const T *restrict B, T *restrict C) {      \
        int64_t sai = ta ? 1 : k, sap = ta ? m : 1;                                           \
        for (int64_t i = 0; i < m; i++) {                                                     \
            T *restrict c = C + i * n;                                                        \
            if (!tb) {                                                                        \
                for (int64_t j = 0; j < n; j++) c[j] = 0;                                     \
                for (int64_t p = 0; p < k; p++) {                                             \
                    T av = A[i * sai + p * sap];                                              \
                    const T *restrict b = B + p * n;                                          \
                    for (int64_t j = 0; j < n; j++) c[j] += av * b[j];                        \
                }                                                                             \
                continue;                                                                     \
            }                                                                                 \
            for (int64_t j = 0; j < n; j++) {                                                 \
                const T *restrict b = B + j * k;                                              \
                T acc[16] = {0}, s = 0;                                                       \
                int64_t p = 0;                                                                \
                if (!ta)                                                                      \
                    for (; p + 16 <= k; p += 16)                                              \
                        for (int l = 0; l < 16; l++) acc[l] += A[i * k + p + l] * b[p + l];   \
                for (int l = 0; l < 16; l++) s += acc[l];                                     \
                for (; p < k; p++) s += A[i * sai + p * sap] * b[p];                          \
                c[j] = s;                                                                     \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
    static void gemm_##SUFFIX(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *A,  \
                              const T *B, T *C) {                                             \
        if (use_loop(ta, tb, m, n, k)) {                                                      \
            loop_##SUFFIX(ta, tb, m, n, k, A, B, C);                                          \
            return;                                                                           \
        }                                                                                     \
        BLAS(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,   \
             (int)m, (int)n, (int)k, 1, A, (int)(ta ? m : k), B, (int)(tb ? k : n), 0, C,     \
             (int)(n > 0 ? n : 1));                                                           \
    }
DEFINE_GEMM(float, f32, cblas_sgemm)
DEFINE_GEMM(double, f64, cblas_dgemm)

/* Runs every batch matrix product of the call. */
#define DEFINE_BATCHED(T, SUFFIX)                                                             \
    static void batched_##SUFFIX(const mm_geom *g, bool ta, bool tb, const T *A, const T *B,  \
                                 T *C) {                                                      \
        int64_t sza = g->m * g->k, szb = g->k * g->n, szc = g->m * g->n;                      \
        int64_t idx[GB_MAX_RANK] = {0};                                                       \
        for (int64_t t = 0; t < g->nbatch; t++) {                                             \
            int64_t oa = 0, ob = 0;                                                           \
            for (int d = 0; d < g->nb; d++) {                                                 \
                oa += idx[d] * g->sa[d];                                                      \
                ob += idx[d] * g->sb[d];                                                      \
            }                                                                                 \
            gemm_##SUFFIX(ta, tb, g->m, g->n, g->k, A + oa * sza, B + ob * szb, C + t * szc); \
            for (int d = g->nb - 1; d >= 0 && ++idx[d] == g->batch[d]; d--) idx[d] = 0;       \
        }                                                                                     \
    }
DEFINE_BATCHED(float, f32)
DEFINE_BATCHED(double, f64)

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
    mm_geom g;
    geometry(c, &g); /* validated by infer */
    bool ta = c->attrs->i[A_TA], tb = c->attrs->i[A_TB];
    if (foldable(&g, ta)) {
        g.m *= g.nbatch;
        g.nb = 0;
        g.nbatch = 1;
    }
    const void *A = c->in[0]->data, *B = c->in[1]->data;
    if (out[0]->dtype == GB_F32)
        batched_f32(&g, ta, tb, A, B, out[0]->data);
    else
        batched_f64(&g, ta, tb, A, B, out[0]->data);
    return true;
}

/* ---- gradient ------------------------------------------------------------------------- */

/* TF's BatchMatMulV2 gradient: for C = op(A) op(B),
 *   dA = dC op(B)^T   (or op(B) dC^T when A was transposed),
 *   dB = op(A)^T dC   (or dC^T op(A) when B was transposed),
 * each summed down over the batch dims its input broadcast along. */
static bool grad_matmul(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *dy = ctx->dys[0];
    bool ta = ctx->attrs->i[A_TA], tb = ctx->attrs->i[A_TB];
    gb_tensor *da, *db;
    if (!ta)
        da = tb ? gb_matmul_t(dy, b, false, false) : gb_matmul_t(dy, b, false, true);
    else
        da = tb ? gb_matmul_t(b, dy, true, true) : gb_matmul_t(b, dy, false, true);
    /* b shared by all of a's batch entries: fold the batch into one product
     * instead of a batched one followed by a sum. */
    if (b->rank == 2 && a->rank > 2 && !ta) {
        int64_t k = a->shape[a->rank - 1], n = dy->shape[dy->rank - 1];
        gb_tensor *a2 = gb_reshape(a, 2, (const int64_t[]){-1, k});
        gb_tensor *dy2 = gb_reshape(dy, 2, (const int64_t[]){-1, n});
        db = tb ? gb_matmul_t(dy2, a2, true, false) : gb_matmul_t(a2, dy2, true, false);
    } else if (!tb) {
        db = ta ? gb_matmul_t(a, dy, false, false) : gb_matmul_t(a, dy, true, false);
    } else {
        db = ta ? gb_matmul_t(dy, a, true, true) : gb_matmul_t(dy, a, true, false);
    }
    dx[0] = gb__sum_to(da, a);
    dx[1] = gb__sum_to(db, b);
    return dx[0] && dx[1];
}

const gb_op_def gb_opdef_matmul = {
    .name = "MatMul",
    .arity = 2,
    .flags = 0,
    .attrs_doc = "i[0] transpose_a, i[1] transpose_b",
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
