/* test_graph_dynamic.c — gradients traced with a batch dim of unknown size.
 *
 * A train step traced with an input signature [-1, ...] serves every
 * batch size with one graph, so every op and gradient on its path must
 * trace with -1 dims and get the real sizes when the graph runs: the
 * gradients of Sum and Mean (spread over the input's shape; Mean's 1/n
 * counted at run time), Reshape with a -1 target (Flatten), and the
 * convolution's input gradient. Each case takes the value and gradient
 * of an expression through a function with a -1 batch dim, for three
 * batch sizes and one trace, equal bit for bit to eager.
 */
#include <check.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

typedef gb_tensor *(*expr_fn)(gb_tensor *x);

/* y = expr(x) and dy/dx, with the tape inside: as a train step does. */
static int value_and_grad(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    expr_fn expr = *(expr_fn *)user;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    out[0] = expr(in[0]);
    gb_tape_end(tape);
    out[1] = gb_tape_gradient(tape, out[0], in[0]);
    return 2;
}

static void assert_same(gb_tensor *eager, gb_tensor *traced, const char *what, int64_t batch) {
    ck_assert_int_eq(gb_rank(eager), gb_rank(traced));
    for (int d = 0; d < gb_rank(eager); d++) ck_assert_int_eq(gb_dim(eager, d), gb_dim(traced, d));
    ck_assert_msg(memcmp(gb_data(eager), gb_data(traced), (size_t)gb_nbytes(eager)) == 0,
                  "%s differs from eager at batch %lld", what, (long long)batch);
}

/* Runs expr on x of shape [batch, dims...] for batches 1, 3 and 5
 * through one function declared [-1, dims...]. */
static void check_expr(expr_fn expr, int rank, const int64_t *dims) {
    gb_tensor_spec spec = {.name = "x", .dtype = GB_F32, .rank = rank, .shape = {-1}};
    for (int d = 1; d < rank; d++) spec.shape[d] = dims[d - 1];
    gb_function_options o = {.user = &expr, .input_signature = &spec, .ninput_signature = 1};
    gb_function *f = gb_function_new("value_and_grad", value_and_grad, &o);
    for (int64_t batch = 1; batch <= 5; batch += 2) {
        int64_t shape[GB_MAX_RANK] = {batch};
        for (int d = 1; d < rank; d++) shape[d] = dims[d - 1];
        gb_tensor *x = gb_random_normal(GB_F32, rank, shape, 0, 1, (uint64_t)batch);
        gb_tensor *eager[2], *traced[2];
        ck_assert_int_eq(value_and_grad(&expr, &x, 1, NULL, 0, eager), 2);
        ck_assert_msg(gb_function_call(f, &x, 1, NULL, 0, traced) == 2, "%s", gb_error_string());
        assert_same(eager[0], traced[0], "the value", batch);
        assert_same(eager[1], traced[1], "the gradient", batch);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert(gb_ok());
    gb_function_free(f);
}

/* ---- the cases ------------------------------------------------------------------------- */

static gb_tensor *mean_of_squares(gb_tensor *x) {
    return gb_reduce_mean(gb_square(x), GB_ALL_AXES, false);
}

START_TEST(test_mean_over_unknown_dim) { check_expr(mean_of_squares, 1, NULL); }
END_TEST

/* The batch sum a bias gradient takes, then a loss over what is left. */
static gb_tensor *batch_sum(gb_tensor *x) {
    gb_tensor *s = gb_reduce_sum(x, GB_AXES(0), false);
    return gb_reduce_sum(gb_mul(s, s), GB_ALL_AXES, false);
}

START_TEST(test_sum_over_unknown_dim) { check_expr(batch_sum, 2, (int64_t[]){3}); }
END_TEST

/* A mean over a known axis, keeping the unknown one: its gradient
 * reshapes dy to [-1, 1]. */
static gb_tensor *row_means(gb_tensor *x) {
    gb_tensor *m = gb_reduce_mean(x, GB_AXES(1), false);
    return gb_reduce_sum(gb_mul(m, m), GB_ALL_AXES, false);
}

START_TEST(test_mean_keeping_unknown_dim) { check_expr(row_means, 2, (int64_t[]){3}); }
END_TEST

/* Flatten: [-1, 2, 2] -> [-1, 4]. */
static gb_tensor *flattened(gb_tensor *x) {
    gb_tensor *w = gb_from_f32((float[]){1, -2, 3, 0.5f}, GB_SHAPE(4, 1));
    gb_tensor *y = gb_matmul(gb_reshape(x, GB_SHAPE(-1, 4)), w);
    return gb_reduce_sum(gb_square(y), GB_ALL_AXES, false);
}

START_TEST(test_reshape_with_unknown_dim) { check_expr(flattened, 3, (int64_t[]){2, 2}); }
END_TEST

/* A convolution's input gradient gets its batch from out_backprop. */
static gb_tensor *convolved(gb_tensor *x) {
    gb_tensor *f = gb_linspace(GB_F32, -1, 1, 3 * 3 * 2 * 4);
    f = gb_reshape(f, GB_SHAPE(3, 3, 2, 4));
    gb_tensor *y = gb_conv2d(x, f, NULL, 0, GB_PADDING_SAME, NULL, 0);
    return gb_reduce_sum(gb_square(y), GB_ALL_AXES, false);
}

START_TEST(test_conv2d_input_gradient_with_unknown_batch) {
    check_expr(convolved, 4, (int64_t[]){5, 5, 2});
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_dynamic");
    TCase *tc = tcase_create("unknown_batch");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_mean_over_unknown_dim);
    tcase_add_test(tc, test_sum_over_unknown_dim);
    tcase_add_test(tc, test_mean_keeping_unknown_dim);
    tcase_add_test(tc, test_reshape_with_unknown_dim);
    tcase_add_test(tc, test_conv2d_input_gradient_with_unknown_batch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
