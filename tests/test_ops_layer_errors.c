/* test_ops_layer_errors.c — bad inputs to the ops the layers call
 * directly (ops/internal.h: LayerNorm, DotProductAttention and its
 * gradient, SoftmaxGrad) and to GeluGrad: each is refused before a
 * kernel runs, with its status and its whole message. Their values,
 * gradients and levels are tested by the op cases (test_graph_ops,
 * test_ops_isa) and by the layers' tests against PyTorch.
 */
#include <check.h>
#include <math.h>

#include "glassbox.h"
#include "ops/internal.h"
#include "test_util.h"

#define F32(...) gb_zeros(GB_F32, GB_SHAPE(__VA_ARGS__))

START_TEST(test_layer_norm) {
    gb_tensor *x = F32(2, 3), *g = F32(3), *b = F32(3);
    ck_assert_ptr_null(gb__layer_norm(gb_zeros(GB_I32, GB_SHAPE(2, 3)), g, b, 1e-3));
    assert_error_text(GB_ERR_DTYPE, "LayerNorm: x must be float32 or float64, got int32");
    ck_assert_ptr_null(gb__layer_norm(x, F32(4), b, 1e-3));
    assert_error_text(GB_ERR_SHAPE, "LayerNorm: gamma [4] must be a vector of x [2,3]'s last axis");
    ck_assert_ptr_null(gb__layer_norm(x, g, gb_zeros(GB_F64, GB_SHAPE(3)), 1e-3));
    assert_error_text(GB_ERR_DTYPE, "LayerNorm: beta is float64 but x is float32");
    ck_assert_ptr_null(gb__layer_norm(gb_scalar(GB_F32, 1), g, b, 1e-3));
    assert_error_text(GB_ERR_SHAPE, "LayerNorm: x must have rank >= 1 (features on the last axis), got a scalar");
    ck_assert_ptr_null(gb__layer_norm(x, g, b, NAN));
    assert_error_text(GB_ERR_VALUE, "LayerNorm: epsilon must be finite and >= 0, got nan");
    ck_assert_ptr_null(gb__layer_norm(x, g, b, -1));
    assert_error_text(GB_ERR_VALUE, "LayerNorm: epsilon must be finite and >= 0, got -1");
}
END_TEST

START_TEST(test_dot_product_attention) {
    gb_tensor *q = F32(2, 5, 3, 4), *k = F32(2, 6, 3, 4), *v = F32(2, 6, 3, 7);
    ck_assert_ptr_nonnull(gb__dot_product_attention(q, k, v, NULL, 0.5, NULL));
    ck_assert_ptr_null(gb__dot_product_attention(F32(2, 5, 4), k, v, NULL, 0.5, NULL));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttention: q must be [batch, time, heads, depth], got [2,5,4]");
    ck_assert_ptr_null(gb__dot_product_attention(q, F32(2, 6, 3, 5), v, NULL, 0.5, NULL));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttention: q [2,5,3,4], k [2,6,3,5] and v [2,6,3,7] must share batch "
                      "and heads, k and v their length, q and k their depth");
    ck_assert_ptr_null(gb__dot_product_attention(q, k, F32(2, 5, 3, 7), NULL, 0.5, NULL));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttention: q [2,5,3,4], k [2,6,3,4] and v [2,5,3,7] must share batch "
                      "and heads, k and v their length, q and k their depth");
    ck_assert_ptr_null(gb__dot_product_attention(q, k, gb_zeros(GB_F64, GB_SHAPE(2, 6, 3, 7)), NULL, 0.5, NULL));
    assert_error_text(GB_ERR_DTYPE, "DotProductAttention: v must be float32 or float64 as q, got float64 and q "
                      "float32");
    ck_assert_ptr_null(gb__dot_product_attention(q, k, v, NULL, INFINITY, NULL));
    assert_error_text(GB_ERR_VALUE, "DotProductAttention: scale must be finite, got inf");
    ck_assert_ptr_null(gb__dot_product_attention(q, k, v, gb_zeros(GB_BOOL, GB_SHAPE(5, 5)), 0.5, NULL));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttention: the mask must be bool and broadcast to the weights "
                      "[2,3,5,6], got bool [5,5]");
    ck_assert_ptr_null(gb__dot_product_attention(q, k, v, F32(5, 6), 0.5, NULL));
    assert_error_text(GB_ERR_DTYPE, "DotProductAttention: the mask must be bool and broadcast to the weights "
                      "[2,3,5,6], got float32 [5,6]");
    /* a causal mask [Tq, Tv] broadcasts */
    ck_assert_ptr_nonnull(gb__dot_product_attention(q, k, v, gb_ones(GB_BOOL, GB_SHAPE(5, 6)), 0.5, NULL));
}
END_TEST

/* DotProductAttentionGrad's first output, or NULL and the error. */
static gb_tensor *attention_grad(gb_tensor *const *in, int n) {
    gb_tensor *out[3];
    return gb__dispatch(GB_OP_DOT_PRODUCT_ATTENTION_GRAD, in, n, NULL, out) == 3 ? out[0] : NULL;
}

START_TEST(test_dot_product_attention_grad) {
    gb_tensor *q = F32(2, 5, 3, 4), *k = F32(2, 6, 3, 4), *v = F32(2, 6, 3, 7);
    gb_tensor *d_o = F32(2, 5, 3, 7), *w = F32(2, 3, 5, 6);
    ck_assert_ptr_nonnull(attention_grad((gb_tensor *[]){d_o, q, k, v, w}, 5));
    ck_assert_ptr_null(attention_grad((gb_tensor *[]){d_o, q, k, v}, 4));
    assert_error_text(GB_ERR_VALUE, "DotProductAttentionGrad: takes dO, q, k, v, the weights and optionally their "
                      "gradient (5 or 6 inputs), got 4");
    ck_assert_ptr_null(attention_grad((gb_tensor *[]){d_o, q, k, v, F32(2, 3, 6, 5)}, 5));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttentionGrad: the weights [2,3,6,5] (or their gradient) or dO "
                      "[2,5,3,7] do not fit q, k and v");
    ck_assert_ptr_null(attention_grad((gb_tensor *[]){F32(2, 5, 3, 4), q, k, v, w}, 5));
    assert_error_text(GB_ERR_SHAPE, "DotProductAttentionGrad: the weights [2,3,5,6] (or their gradient) or dO "
                      "[2,5,3,4] do not fit q, k and v");
}
END_TEST

START_TEST(test_softmax_grad) {
    ck_assert_ptr_null(gb__softmax_grad(F32(2, 3), F32(2, 4)));
    assert_error_text(GB_ERR_SHAPE, "SoftmaxGrad: y [2,3] and dy [2,4] must have the same shape, of rank >= 1");
    ck_assert_ptr_null(gb__softmax_grad(F32(2, 3), gb_zeros(GB_F64, GB_SHAPE(2, 3))));
    assert_error_text(GB_ERR_DTYPE, "SoftmaxGrad: y and dy must both be float32 or both float64, got float32 and "
                      "float64");
    ck_assert_ptr_null(gb__softmax_grad(gb_zeros(GB_I32, GB_SHAPE(2, 3)), gb_zeros(GB_I32, GB_SHAPE(2, 3))));
    assert_error_text(GB_ERR_DTYPE, "SoftmaxGrad: y and dy must both be float32 or both float64, got int32 and int32");
}
END_TEST

START_TEST(test_gelu_grad) {
    ck_assert_ptr_null(gb__op_binary(GB_OP_GELU_GRAD, F32(2, 3), F32(2, 4)));
    assert_error_text(GB_ERR_SHAPE, "GeluGrad: shapes must be equal, got [2,3] and [2,4]");
    ck_assert_ptr_null(gb__op_binary(GB_OP_GELU_GRAD, gb_zeros(GB_I32, GB_SHAPE(2)), gb_zeros(GB_I32, GB_SHAPE(2))));
    assert_error_text(GB_ERR_DTYPE, "GeluGrad: unsupported dtype int32");
}
END_TEST

int main(void) {
    Suite *s = suite_create("ops_layer_errors");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, test_layer_norm);
    tcase_add_test(tc, test_dot_product_attention);
    tcase_add_test(tc, test_dot_product_attention_grad);
    tcase_add_test(tc, test_softmax_grad);
    tcase_add_test(tc, test_gelu_grad);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
