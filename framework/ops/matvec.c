/* ops/matvec.c — matrix-vector products: gb_matvec and gb_vecmat.
 *
 * tf.matmul (like gb_matmul) refuses rank-1 operands; TensorFlow users
 * reach for tf.linalg.matvec instead, and NumPy 2 names both directions
 * matvec and vecmat. Both are compositions, not ops: the vector becomes a
 * one-column (matvec) or one-row (vecmat) matrix by a reshape view, one
 * MatMul runs, and a second view drops that axis again. So they cost one
 * GEMM, trace as MatMul, and need no gradient of their own. Their shape
 * errors are checked here first, so they name the vector and the matrix
 * as the caller passed them (not the reshaped operands MatMul would see).
 */
#include <stdio.h>

#include "ops/internal.h"

/* How one of the two products is laid out. `axis` is the matrix axis of
 * length K (-1: columns, for matvec; -2: rows, for vecmat), and also where
 * the vector gets its size-1 axis to become [..., K, 1] or [..., 1, K]. */
typedef struct matvec_kind {
    const char *op; /* the name errors carry */
    int64_t axis;
} matvec_kind;

static const matvec_kind MATVEC = {"MatVec", -1};
static const matvec_kind VECMAT = {"VecMat", -2};

static void fail(const matvec_kind *k, const gb_tensor *m, const gb_tensor *v, const char *why) {
    char ms[128], vs[128];
    gb__error(GB_ERR_SHAPE, k->op, "%s: %s (matrix %s, vector %s)", k->op, why,
              gb__shape_fmt(m->rank, m->shape, ms, sizeof ms),
              gb__shape_fmt(v->rank, v->shape, vs, sizeof vs));
}

/* Ranks, the shared dimension K, and NumPy broadcasting of the batch dims
 * (the matrix's all but two, the vector's all but one). */
static bool check_operands(const matvec_kind *k, const gb_tensor *m, const gb_tensor *v) {
    if (m->rank < 2 || v->rank < 1) {
        fail(k, m, v, "needs a matrix of rank >= 2 and a vector of rank >= 1");
        return false;
    }
    int64_t km = m->shape[m->rank + k->axis], kv = v->shape[v->rank - 1];
    if (!gb__dims_match(km, kv)) {
        char why[160];
        snprintf(why, sizeof why, "the matrix has %lld %s but the vector has %lld elements",
                 (long long)km, k->axis == -1 ? "columns" : "rows", (long long)kv);
        fail(k, m, v, why);
        return false;
    }
    int mb = m->rank - 2, vb = v->rank - 1;
    for (int i = 1; i <= mb && i <= vb; i++) {
        int64_t dm = m->shape[mb - i], dv = v->shape[vb - i], d;
        if (!gb__broadcast_dim(dm, dv, &d)) {
            fail(k, m, v, "the batch dimensions do not broadcast");
            return false;
        }
    }
    return true;
}

/* The product with the vector as a one-column or one-row matrix. */
static gb_tensor *product(const matvec_kind *k, gb_tensor *m, gb_tensor *v) {
    if (!m || !v) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, k->op, "%s: an input is NULL", k->op);
        return NULL;
    }
    if (!check_operands(k, m, v)) return NULL;
    gb_tensor *vm = gb_expand_dims(v, k->axis);
    gb_tensor *y = k->axis == -1 ? gb_matmul(m, vm) : gb_matmul(vm, m);
    return gb_squeeze(y, &k->axis, 1);
}

gb_tensor *gb_matvec(gb_tensor *a, gb_tensor *x) { return product(&MATVEC, a, x); }

gb_tensor *gb_vecmat(gb_tensor *x, gb_tensor *b) { return product(&VECMAT, b, x); }
