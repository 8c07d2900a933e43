/* test_ops_matmul.c — MatMul: hand-computed products, transposes, batch
 * broadcasting, the BLAS and the small-loop paths against a naive
 * reference, every shape/dtype error, and finite-difference gradients;
 * the same for the matrix-vector products gb_matvec and gb_vecmat. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

/* Naive reference: element (batch index t, i, j) of op(a) op(b) where the
 * batch dims of a and b broadcast against each other. */
static double ref_element(const gb_tensor *a, const gb_tensor *b, bool ta, bool tb,
                          const int64_t *bidx, int nb, int64_t i, int64_t j) {
    int64_t oa = 0, ob = 0, sa = 1, sb = 1;
    for (int d = nb - 1; d >= 0; d--) {
        int ad = d - (nb - (gb_rank(a) - 2)), bd = d - (nb - (gb_rank(b) - 2));
        if (ad >= 0) {
            int64_t dim = gb_dim(a, ad);
            oa += (dim == 1 ? 0 : bidx[d]) * sa;
            sa *= dim;
        }
        if (bd >= 0) {
            int64_t dim = gb_dim(b, bd);
            ob += (dim == 1 ? 0 : bidx[d]) * sb;
            sb *= dim;
        }
    }
    int64_t ar = gb_dim(a, -2), ac = gb_dim(a, -1), br = gb_dim(b, -2), bc = gb_dim(b, -1);
    int64_t k = ta ? ar : ac;
    double s = 0;
    for (int64_t p = 0; p < k; p++) {
        double av = gb_get(a, oa * ar * ac + (ta ? p * ac + i : i * ac + p));
        double bv = gb_get(b, ob * br * bc + (tb ? j * bc + p : p * bc + j));
        s += av * bv;
    }
    return s;
}

/* Checks gb_matmul_t(a, b, ta, tb) element by element against the reference. */
static void check_against_reference(gb_tensor *a, gb_tensor *b, bool ta, bool tb, double tol) {
    gb_tensor *c = gb_matmul_t(a, b, ta, tb);
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    int nb = gb_rank(c) - 2;
    int64_t m = gb_dim(c, -2), n = gb_dim(c, -1), nbatch = gb_size(c) / (m * n);
    int64_t bidx[GB_MAX_RANK] = {0};
    for (int64_t t = 0; t < nbatch; t++) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double want = ref_element(a, b, ta, tb, bidx, nb, i, j);
                double got = gb_get(c, (t * m + i) * n + j);
                ck_assert_msg(fabs(got - want) <= tol * (1 + fabs(want)),
                              "batch %lld (%lld,%lld): got %.9g want %.9g", (long long)t,
                              (long long)i, (long long)j, got, want);
            }
        for (int d = nb - 1; d >= 0 && ++bidx[d] == gb_dim(c, d); d--) bidx[d] = 0;
    }
}

/* ---- forward values ----------------------------------------------------------------- */

START_TEST(test_2x3_by_3x2) {
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
    gb_tensor *c = gb_matmul(gb_from_f32(a, GB_SHAPE(2, 3)), gb_from_f32(b, GB_SHAPE(3, 2)));
    ck_assert_int_eq(gb_tensor_dtype(c), GB_F32);
    ck_assert_int_eq(gb_dim(c, 0), 2);
    ck_assert_int_eq(gb_dim(c, 1), 2);
    ASSERT_VALUES(c, 0, 58, 64, 139, 154);
    /* float64 takes the same path */
    double ad[] = {1, 2, 3, 4, 5, 6}, bd[] = {7, 8, 9, 10, 11, 12};
    ASSERT_VALUES(gb_matmul(gb_from_f64(ad, GB_SHAPE(2, 3)), gb_from_f64(bd, GB_SHAPE(3, 2))), 0,
                  58, 64, 139, 154);
}
END_TEST

START_TEST(test_transposes) {
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
    gb_tensor *A = gb_from_f32(a, GB_SHAPE(2, 3)), *B = gb_from_f32(b, GB_SHAPE(3, 2));
    gb_tensor *At = gb_from_f32((float[]){1, 4, 2, 5, 3, 6}, GB_SHAPE(3, 2));
    gb_tensor *Bt = gb_from_f32((float[]){7, 9, 11, 8, 10, 12}, GB_SHAPE(2, 3));
    ASSERT_VALUES(gb_matmul_t(At, B, true, false), 0, 58, 64, 139, 154);
    ASSERT_VALUES(gb_matmul_t(A, Bt, false, true), 0, 58, 64, 139, 154);
    ASSERT_VALUES(gb_matmul_t(At, Bt, true, true), 0, 58, 64, 139, 154);
    /* a^T a of [2,3]: a 3x3 Gram matrix */
    ASSERT_VALUES(gb_matmul_t(A, A, true, false), 0, 17, 22, 27, 22, 29, 36, 27, 36, 45);
}
END_TEST

START_TEST(test_batched_broadcast_values) {
    /* [2,2,2] x [2,2]: each batch entry times the same matrix. */
    float a[] = {1, 0, 0, 1, 2, 0, 0, 2}, b[] = {1, 2, 3, 4};
    gb_tensor *c = gb_matmul(gb_from_f32(a, GB_SHAPE(2, 2, 2)), gb_from_f32(b, GB_SHAPE(2, 2)));
    ck_assert_int_eq(gb_rank(c), 3);
    ASSERT_VALUES(c, 0, 1, 2, 3, 4, 2, 4, 6, 8);
    /* [2,2] x [2,2,2]: the shared matrix on the left. */
    gb_tensor *d = gb_matmul(gb_from_f32(b, GB_SHAPE(2, 2)), gb_from_f32(a, GB_SHAPE(2, 2, 2)));
    ASSERT_VALUES(d, 0, 1, 2, 3, 4, 2, 4, 6, 8);
}
END_TEST

START_TEST(test_batched_against_reference) {
    const struct {
        int ra, rb;
        int64_t sa[4], sb[4];
    } cases[] = {
        {3, 2, {2, 3, 4}, {4, 5}},           {2, 3, {3, 4}, {2, 4, 5}},
        {4, 3, {2, 1, 3, 4}, {3, 4, 2}},     {3, 3, {1, 3, 4}, {2, 4, 5}},
        {3, 3, {4, 16, 24}, {4, 24, 20}},    /* large enough for BLAS */
        {3, 2, {3, 16, 24}, {24, 20}},       /* folds into one GEMM */
        {3, 3, {3, 61, 120}, {3, 120, 100}}, /* rows split over threads mid-batch */
        {3, 2, {2, 90, 100}, {100, 120}},    /* folded, then split over threads */
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        for (int mode = 0; mode < 4; mode++) {
            bool ta = mode & 1, tb = mode & 2;
            int64_t sa[4], sb[4];
            memcpy(sa, cases[t].sa, sizeof sa);
            memcpy(sb, cases[t].sb, sizeof sb);
            int ra = cases[t].ra, rb = cases[t].rb;
            if (ta) {
                int64_t x = sa[ra - 1];
                sa[ra - 1] = sa[ra - 2];
                sa[ra - 2] = x;
            }
            if (tb) {
                int64_t x = sb[rb - 1];
                sb[rb - 1] = sb[rb - 2];
                sb[rb - 2] = x;
            }
            for (int dt = GB_F32; dt <= GB_F64; dt++) {
                gb_tensor *a = gb_random_uniform(dt, ra, sa, -1, 1, 10 + t);
                gb_tensor *b = gb_random_uniform(dt, rb, sb, -1, 1, 20 + t);
                check_against_reference(a, b, ta, tb, dt == GB_F32 ? 1e-5 : 1e-12);
            }
        }
    }
}
END_TEST

/* The small-product loop and BLAS cover row counts on both sides of the
 * threshold, including one- and two-row products with long K. */
START_TEST(test_small_and_gemv_shapes) {
    const int64_t shapes[][3] = {{1, 10, 10}, {1, 1, 1},   {2, 7, 40},  {1, 300, 70},
                                 {3, 5, 4},   {8, 8, 8},   {4, 10, 10}, {2, 64, 64},
                                 {1, 10, 1},  {10, 10, 1}, {5, 3, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        for (int mode = 0; mode < 4; mode++) {
            bool ta = mode & 1, tb = mode & 2;
            gb_tensor *a = ta ? gb_random_uniform(GB_F32, GB_SHAPE(k, m), -1, 1, s)
                              : gb_random_uniform(GB_F32, GB_SHAPE(m, k), -1, 1, s);
            gb_tensor *b = tb ? gb_random_uniform(GB_F32, GB_SHAPE(n, k), -1, 1, s + 50)
                              : gb_random_uniform(GB_F32, GB_SHAPE(k, n), -1, 1, s + 50);
            check_against_reference(a, b, ta, tb, 1e-5);
        }
    }
}
END_TEST

START_TEST(test_empty_dims) {
    gb_tensor *c = gb_matmul(gb_ones(GB_F32, GB_SHAPE(2, 0)), gb_ones(GB_F32, GB_SHAPE(0, 3)));
    ck_assert_int_eq(gb_dim(c, 0), 2);
    ck_assert_int_eq(gb_dim(c, 1), 3);
    ASSERT_VALUES(c, 0, 0, 0, 0, 0, 0, 0);
    gb_tensor *e = gb_matmul(gb_ones(GB_F64, GB_SHAPE(0, 4)), gb_ones(GB_F64, GB_SHAPE(4, 3)));
    ck_assert_int_eq(gb_size(e), 0);
    ck_assert(gb_ok());
}
END_TEST

/* ---- errors ------------------------------------------------------------------------- */

START_TEST(test_errors) {
    gb_tensor *a23 = gb_ones(GB_F32, GB_SHAPE(2, 3)), *b45 = gb_ones(GB_F32, GB_SHAPE(4, 5));
    expect_error(gb_matmul(a23, b45), GB_ERR_SHAPE,
                 "MatMul: inner dimensions differ: [2,3] x [4,5]");
    expect_error(gb_matmul_t(a23, gb_ones(GB_F32, GB_SHAPE(3, 4)), true, false), GB_ERR_SHAPE,
                 "inner dimensions differ: [2,3] x [3,4] (2 vs 3, transpose_a)");
    expect_error(gb_matmul(gb_ones(GB_F32, GB_SHAPE(3)), a23), GB_ERR_SHAPE,
                 "MatMul: both inputs need rank >= 2, got [3] x [2,3]; for a matrix and a vector "
                 "use gb_matvec (tf.linalg.matvec) or gb_vecmat");
    expect_error(gb_matmul(a23, gb_ones(GB_F64, GB_SHAPE(3, 2))), GB_ERR_DTYPE,
                 "MatMul: inputs must both be float32 or both float64, got float32 and float64");
    expect_error(gb_matmul(gb_ones(GB_I32, GB_SHAPE(2, 3)), gb_ones(GB_I32, GB_SHAPE(3, 2))),
                 GB_ERR_DTYPE, "got int32 and int32");
    expect_error(gb_matmul(gb_ones(GB_F32, GB_SHAPE(2, 2, 3)), gb_ones(GB_F32, GB_SHAPE(3, 3, 4))),
                 GB_ERR_SHAPE,
                 "MatMul: batch dimensions do not broadcast: [2,2,3] x [3,3,4] (2 vs 3)");
    /* a NULL input (an earlier failure) passes through without a new error */
    expect_error(gb_matmul(NULL, a23), GB_ERR_VALUE, "MatMul: input 0 is NULL");
}
END_TEST

/* ---- matrix-vector products ------------------------------------------------------------ */

START_TEST(test_matvec_vecmat_values) {
    gb_tensor *a = gb_from_f64((double[]){1, 2, 3, 4, 5, 6}, GB_SHAPE(2, 3));
    gb_tensor *y = gb_matvec(a, gb_from_f64((double[]){1, 0, -1}, GB_SHAPE(3))); /* [2,3] x [3] */
    ck_assert_int_eq(gb_rank(y), 1);
    ASSERT_VALUES(y, 0, -2, -2);
    gb_tensor *z = gb_vecmat(gb_from_f64((double[]){1, 2}, GB_SHAPE(2)), a); /* [2] x [2,3] */
    ck_assert_int_eq(gb_rank(z), 1);
    ASSERT_VALUES(z, 0, 9, 12, 15);
    gb_tensor *f = gb_matvec(gb_cast(a, GB_F32), gb_ones(GB_F32, GB_SHAPE(3)));
    ck_assert_int_eq(gb_tensor_dtype(f), GB_F32);
    ASSERT_VALUES(f, 0, 6, 15);
    ck_assert(gb_ok());
}
END_TEST

/* Batch dims broadcast as tf.linalg.matvec's: the same as MatMul with the
 * vector as a one-column (or one-row) matrix. */
START_TEST(test_matvec_vecmat_batched) {
    const struct {
        int64_t m[3], v[2];
        int mr, vr;
    } cases[] = {
        {{4, 2, 3}, {3}, 3, 1},    /* a batch of matrices, one vector */
        {{2, 3}, {5, 3}, 2, 2},    /* one matrix, a batch of vectors */
        {{4, 2, 3}, {4, 3}, 3, 2}, /* matching batches */
        {{1, 2, 3}, {5, 3}, 3, 2}, /* a size-1 batch broadcast */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_tensor *m = gb_random_uniform(GB_F64, cases[i].mr, cases[i].m, -1, 1, 7 * i);
        gb_tensor *v = gb_random_uniform(GB_F64, cases[i].vr, cases[i].v, -1, 1, 7 * i + 1);
        gb_tensor *got = gb_matvec(m, v);
        gb_tensor *want = gb_squeeze(gb_matmul(m, gb_expand_dims(v, -1)), GB_AXES(-1));
        ck_assert_msg(got && want, "case %zu: %s", i, gb_error_string());
        ck_assert(gb_same_shape(got, want));
        for (int64_t e = 0; e < gb_size(want); e++)
            ck_assert_double_eq_tol(gb_get(got, e), gb_get(want, e), 1e-12);
        /* vecmat: v [.., 3] times b [.., 3, 2], m with its last two axes swapped */
        int64_t bs[3];
        memcpy(bs, cases[i].m, sizeof bs);
        bs[cases[i].mr - 2] = 3;
        bs[cases[i].mr - 1] = 2;
        gb_tensor *b = gb_random_uniform(GB_F64, cases[i].mr, bs, -1, 1, 7 * i + 2);
        gb_tensor *vb = gb_vecmat(v, b);
        gb_tensor *ref = gb_squeeze(gb_matmul(gb_expand_dims(v, -2), b), GB_AXES(-2));
        ck_assert_msg(vb && ref, "case %zu: %s", i, gb_error_string());
        ck_assert(gb_same_shape(vb, ref));
        for (int64_t e = 0; e < gb_size(ref); e++)
            ck_assert_double_eq_tol(gb_get(vb, e), gb_get(ref, e), 1e-12);
    }
}
END_TEST

START_TEST(test_matvec_errors) {
    gb_tensor *a23 = gb_ones(GB_F32, GB_SHAPE(2, 3)), *v3 = gb_ones(GB_F32, GB_SHAPE(3));
    expect_error(gb_matvec(v3, v3), GB_ERR_SHAPE,
                 "MatVec: needs a matrix of rank >= 2 and a vector of rank >= 1 (matrix [3], "
                 "vector [3])");
    expect_error(gb_matvec(a23, gb_ones(GB_F32, GB_SHAPE(4))), GB_ERR_SHAPE,
                 "MatVec: the matrix has 3 columns but the vector has 4 elements (matrix [2,3], "
                 "vector [4])");
    expect_error(gb_vecmat(v3, a23), GB_ERR_SHAPE,
                 "VecMat: the matrix has 2 rows but the vector has 3 elements (matrix [2,3], "
                 "vector [3])");
    expect_error(gb_vecmat(gb_scalar(GB_F32, 1), a23), GB_ERR_SHAPE,
                 "VecMat: needs a matrix of rank >= 2 and a vector of rank >= 1");
    expect_error(gb_matvec(gb_ones(GB_F32, GB_SHAPE(2, 2, 3)), gb_ones(GB_F32, GB_SHAPE(3, 3))),
                 GB_ERR_SHAPE,
                 "MatVec: the batch dimensions do not broadcast (matrix [2,2,3], vector [3,3])");
    expect_error(gb_matvec(a23, gb_ones(GB_F64, GB_SHAPE(3))), GB_ERR_DTYPE,
                 "MatMul: inputs must both be float32 or both float64");
    expect_error(gb_matvec(NULL, v3), GB_ERR_VALUE, "MatVec: an input is NULL");
}
END_TEST

static gb_tensor *matvec_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_matvec(x[0], x[1]);
}

static gb_tensor *vecmat_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_vecmat(x[0], x[1]);
}

START_TEST(test_grad_matvec_vecmat) {
    gb_tensor *mv[2] = {GC_INPUT(-1, 1, 60, 3, 4), GC_INPUT(-1, 1, 61, 4)};
    GC_ASSERT(matvec_fn, mv, 2, NULL);
    gb_tensor *vm[2] = {GC_INPUT(-1, 1, 62, 3), GC_INPUT(-1, 1, 63, 3, 2)};
    GC_ASSERT(vecmat_fn, vm, 2, NULL);
    /* broadcast batches sum their gradients back */
    gb_tensor *bmv[2] = {GC_INPUT(-1, 1, 64, 2, 3, 4), GC_INPUT(-1, 1, 65, 4)};
    GC_ASSERT(matvec_fn, bmv, 2, NULL);
    gb_tensor *bvm[2] = {GC_INPUT(-1, 1, 66, 5, 3), GC_INPUT(-1, 1, 67, 3, 2)};
    GC_ASSERT(vecmat_fn, bvm, 2, NULL);
}
END_TEST

/* ---- gradients ------------------------------------------------------------------------ */

static gb_tensor *mm_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    int mode = *(int *)u;
    return gb_matmul_t(x[0], x[1], mode & 1, mode & 2);
}

START_TEST(test_grad_transpose_combos) {
    for (int mode = 0; mode < 4; mode++) {
        gb_tensor *a = mode & 1 ? GC_INPUT(-1, 1, 1, 4, 3) : GC_INPUT(-1, 1, 1, 3, 4);
        gb_tensor *b = mode & 2 ? GC_INPUT(-1, 1, 2, 5, 4) : GC_INPUT(-1, 1, 2, 4, 5);
        gb_tensor *xs[2] = {a, b};
        GC_ASSERT(mm_fn, xs, 2, &mode);
    }
}
END_TEST

START_TEST(test_grad_batched_broadcast) {
    for (int mode = 0; mode < 4; mode++) {
        bool ta = mode & 1, tb = mode & 2;
        /* a batched, b shared (the folded weight gradient when !ta) */
        gb_tensor *xs[2] = {ta ? GC_INPUT(-1, 1, 3, 2, 4, 3) : GC_INPUT(-1, 1, 3, 2, 3, 4),
                            tb ? GC_INPUT(-1, 1, 4, 5, 4) : GC_INPUT(-1, 1, 4, 4, 5)};
        GC_ASSERT(mm_fn, xs, 2, &mode);
        /* a shared, b batched */
        gb_tensor *ys[2] = {ta ? GC_INPUT(-1, 1, 5, 4, 3) : GC_INPUT(-1, 1, 5, 3, 4),
                            tb ? GC_INPUT(-1, 1, 6, 2, 5, 4) : GC_INPUT(-1, 1, 6, 2, 4, 5)};
        GC_ASSERT(mm_fn, ys, 2, &mode);
        /* both batched, broadcasting size-1 dims on each side */
        gb_tensor *zs[2] = {ta ? GC_INPUT(-1, 1, 7, 2, 1, 4, 3) : GC_INPUT(-1, 1, 7, 2, 1, 3, 4),
                            tb ? GC_INPUT(-1, 1, 8, 3, 2, 4) : GC_INPUT(-1, 1, 8, 3, 4, 2)};
        GC_ASSERT(mm_fn, zs, 2, &mode);
    }
}
END_TEST

/* A chain: the inner product's output is an intermediate whose gradient
 * must flow; with only the weights watched, the data's gradient is
 * skipped and the weights' is still right. */
static gb_tensor *chain_fn(gb_tensor *const *x, int n, void *u) {
    (void)n;
    (void)u;
    return gb_matmul(gb_matmul(x[0], x[1]), x[1]);
}

START_TEST(test_grad_chain_and_weights_only) {
    gb_tensor *xs[2] = {GC_INPUT(-1, 1, 30, 2, 3), GC_INPUT(-1, 1, 31, 3, 3)};
    GC_ASSERT(chain_fn, xs, 2, NULL);
    double xv[] = {1, 2, 3, 4, 5, 6}, wv[] = {1, 0, 0, 1, 1, 1};
    gb_tensor *x = gb_from_f64(xv, GB_SHAPE(2, 3)), *w = gb_from_f64(wv, GB_SHAPE(3, 2));
    gb_tape *t = gb_tape_begin();
    gb_tape_watch(t, w);
    gb_tensor *y = gb_matmul(x, w);
    gb_tape_end(t);
    /* d sum(x w) / dw = x^T 1: column sums of x, repeated */
    ASSERT_VALUES(gb_tape_gradient(t, y, w), 0, 5, 5, 7, 7, 9, 9);
}
END_TEST

/* The worker threads do not survive fork(): a child (a data loader, a
 * test runner) must still be able to run big products, inline. */
START_TEST(test_fork_after_threads) {
    gb_tensor *a = gb_random_uniform(GB_F32, GB_SHAPE(256, 300), -1, 1, 1);
    gb_tensor *b = gb_random_uniform(GB_F32, GB_SHAPE(300, 200), -1, 1, 2);
    gb_tensor *c = gb_matmul(a, b); /* big enough to use the threads */
    ck_assert_ptr_nonnull(c);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        gb_tensor *d = gb_matmul(a, b);
        if (!d) _exit(2);
        for (int64_t i = 0; i < gb_size(c); i++)
            if (fabs(gb_get(c, i) - gb_get(d, i)) > 1e-4) _exit(3);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_matmul");
    TCase *tc = tcase_create("matmul");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_2x3_by_3x2);
    tcase_add_test(tc, test_transposes);
    tcase_add_test(tc, test_batched_broadcast_values);
    tcase_add_test(tc, test_batched_against_reference);
    tcase_add_test(tc, test_small_and_gemv_shapes);
    tcase_add_test(tc, test_empty_dims);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_grad_transpose_combos);
    tcase_add_test(tc, test_grad_batched_broadcast);
    tcase_add_test(tc, test_grad_chain_and_weights_only);
    tcase_add_test(tc, test_matvec_vecmat_values);
    tcase_add_test(tc, test_matvec_vecmat_batched);
    tcase_add_test(tc, test_matvec_errors);
    tcase_add_test(tc, test_grad_matvec_vecmat);
    tcase_add_test(tc, test_fork_after_threads);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
