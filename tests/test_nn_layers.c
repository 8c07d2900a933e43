/* test_nn_layers.c — each layer's forward values and shapes, the ops a
 * Dense call runs, Dropout in training and inference, activations, and
 * the clear errors for inputs that do not fit. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

static void setup(void) {
    gb_clear_error();
    gb_nn_clear_session();
    gb_scope_begin();
}

static void assert_shape(gb_tensor *t, int rank, const int64_t *dims) {
    ck_assert_msg(t != NULL, "NULL tensor: %s", gb_error_string());
    ck_assert_int_eq(gb_rank(t), rank);
    for (int i = 0; i < rank; i++) ck_assert_int_eq(gb_dim(t, i), dims[i]);
}
#define ASSERT_SHAPE(t, ...) assert_shape((t), GB_SHAPE(__VA_ARGS__))

/* ---- Dense --------------------------------------------------------------------------- */

START_TEST(test_dense_values) {
    gb_module *d = gb_dense_new(2, &(gb_dense_options){.activation = GB_ACT_RELU});
    gb_tensor *x = gb_from_f32((const float[]){1, 2, 3, -1, -2, -3}, GB_SHAPE(2, 3));
    ck_assert(gb_module_build(d, GB_F32, 2, (const int64_t[]){-1, 3}));
    gb_variable_assign(gb_module_variable(d, "kernel"),
                       gb_from_f32((const float[]){1, -1, 0, 2, 1, 0.5f}, GB_SHAPE(3, 2)));
    gb_variable_assign(gb_module_variable(d, "bias"), gb_from_f32((const float[]){0.5f, -1}, GB_SHAPE(2)));
    /* row 0: [1+0+3, -1+4+1.5] + b = [4.5, 3.5]; row 1: [-4.5, -5.5] -> relu 0 */
    gb_tensor *y = gb_module_call(d, x, false);
    ASSERT_VALUES(y, 1e-6, 4.5, 3.5, 0, 0);
    /* Rank 3: the kernel applies on the last axis. */
    gb_tensor *y3 = gb_module_call(d, gb_reshape(x, GB_SHAPE(2, 1, 3)), false);
    ASSERT_SHAPE(y3, 2, 1, 2);
    ASSERT_VALUES(y3, 1e-6, 4.5, 3.5, 0, 0);
    gb_module_free(d);
}
END_TEST

typedef struct op_log {
    int n;
    char types[16][32];
    char names[16][64];
} op_log;

static void record_op(const gb_event *ev, void *user) {
    op_log *log = user;
    if (log->n < 16) {
        snprintf(log->types[log->n], sizeof log->types[0], "%s", ev->op_type);
        snprintf(log->names[log->n], sizeof log->names[0], "%s", ev->op_name);
    }
    log->n++;
}

START_TEST(test_dense_call_is_matmul_add_activation) {
    gb_module *d = gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU});
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(8, 3));
    ck_assert_ptr_nonnull(gb_module_call(d, x, true)); /* builds */
    op_log log = {0};
    int id = gb_observer_add(record_op, &log, GB_EVENT_OP);
    gb_set_op_timing(true);
    ck_assert_ptr_nonnull(gb_module_call(d, x, true));
    gb_set_op_timing(false);
    gb_observer_remove(id);
    const char *types[] = {"ReadVariableOp", "MatMul", "ReadVariableOp", "Add", "Relu"};
    ck_assert_int_eq(log.n, 5);
    for (int i = 0; i < 5; i++) ck_assert_str_eq(log.types[i], types[i]);
    ck_assert_str_eq(log.names[1], "dense/MatMul");
    ck_assert_str_eq(log.names[4], "dense/Relu");
    gb_module_free(d);
}
END_TEST

START_TEST(test_dense_errors) {
    gb_module *d = gb_dense_new(10, NULL);
    ck_assert_ptr_nonnull(gb_module_call(d, gb_ones(GB_F32, GB_SHAPE(4, 784)), false));
    ck_assert_ptr_null(gb_module_call(d, gb_ones(GB_F32, GB_SHAPE(4, 100)), false));
    assert_error(GB_ERR_SHAPE,
                 "Dense layer 'dense': input has 100 features (shape [4,100]) but the layer was "
                 "built for 784 (kernel [784,10])");
    ck_assert_ptr_null(gb_module_call(d, gb_ones(GB_F64, GB_SHAPE(4, 784)), false));
    assert_error(GB_ERR_DTYPE, "built for float32 inputs, called with float64");
    gb_module *fresh = gb_dense_new(3, NULL);
    ck_assert_ptr_null(gb_module_call(fresh, gb_ones(GB_F32, GB_SHAPE(5)), false));
    assert_error(GB_ERR_SHAPE, "expected an input of rank >= 2 ([batch, features]), got shape [5]");
    ck_assert(!gb_module_built(fresh));
    ck_assert_ptr_null(gb_module_call(fresh, gb_ones(GB_I32, GB_SHAPE(2, 5)), false));
    assert_error(GB_ERR_DTYPE, "expected a float32 or float64 input, got int32");
    ck_assert(!gb_module_built(fresh));
    ck_assert_ptr_null(gb_dense_new(-1, NULL));
    assert_error(GB_ERR_VALUE, "units must be positive, got -1");
    ck_assert_ptr_null(gb_dense_new(2, &(gb_dense_options){.activation = GB_ACT_COUNT}));
    assert_error(GB_ERR_VALUE, "activation");
    /* A NULL input keeps the first error and returns NULL. */
    gb_tensor *bad = gb_reshape(gb_ones(GB_F32, GB_SHAPE(2, 2)), GB_SHAPE(3));
    ck_assert_ptr_null(gb_module_call(fresh, bad, false));
    ck_assert_str_eq(gb_last_error()->op_type, "Reshape");
    gb_clear_error();
    gb_module_free(d);
    gb_module_free(fresh);
}
END_TEST

/* ---- Conv2D --------------------------------------------------------------------------- */

START_TEST(test_conv2d_values) {
    /* Ones kernel 2x2, one in/out channel, bias 1: each output = window sum + 1. */
    gb_module *c = gb_conv2d_new(1, 2, 2,
                                 &(gb_conv2d_options){
                                     .kernel_initializer = {.kind = GB_INIT_ONES},
                                     .bias_initializer = {.kind = GB_INIT_CONSTANT, .a = 1},
                                 });
    gb_tensor *x = gb_from_f32((const float[]){1, 2, 3, 4, 5, 6, 7, 8, 9}, GB_SHAPE(1, 3, 3, 1));
    gb_tensor *y = gb_module_call(c, x, false);
    ASSERT_SHAPE(y, 1, 2, 2, 1);
    ASSERT_VALUES(y, 1e-5, 13, 17, 25, 29);
    gb_variable *k = gb_module_variable(c, "kernel");
    ck_assert_int_eq(gb_variable_rank(k), 4);
    const int64_t kshape[] = {2, 2, 1, 1};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(gb_variable_shape(k)[i], kshape[i]);
    gb_module_free(c);
}
END_TEST

START_TEST(test_conv2d_shapes) {
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(2, 9, 8, 3));
    struct {
        int k, stride, dilation;
        gb_padding pad;
        int64_t h, w;
    } cases[] = {
        {3, 1, 1, GB_PADDING_VALID, 7, 6}, {3, 1, 1, GB_PADDING_SAME, 9, 8},
        {3, 2, 1, GB_PADDING_VALID, 4, 3}, {3, 2, 1, GB_PADDING_SAME, 5, 4},
        {3, 1, 2, GB_PADDING_VALID, 5, 4}, {1, 3, 1, GB_PADDING_VALID, 3, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_module *c = gb_conv2d_new(5, cases[i].k, cases[i].k,
                                     &(gb_conv2d_options){
                                         .strides = {cases[i].stride, cases[i].stride},
                                         .dilation = {cases[i].dilation, cases[i].dilation},
                                         .padding = cases[i].pad,
                                     });
        gb_tensor *y = gb_module_call(c, x, false);
        ASSERT_SHAPE(y, 2, cases[i].h, cases[i].w, 5);
        int64_t dims[GB_MAX_RANK];
        ck_assert_int_eq(gb_module_output_shape(c, dims), 4);
        ck_assert_int_eq(dims[1], cases[i].h);
        ck_assert_int_eq(dims[2], cases[i].w);
        ck_assert_int_eq(gb_module_count_params(c), cases[i].k * cases[i].k * 3 * 5 + 5);
        gb_module_free(c);
    }
}
END_TEST

START_TEST(test_conv2d_errors) {
    gb_module *c = gb_conv2d_new(4, 3, 3, NULL);
    ck_assert_ptr_null(gb_module_call(c, gb_ones(GB_F32, GB_SHAPE(32, 784)), false));
    assert_error(GB_ERR_SHAPE,
                 "Conv2D layer 'conv2d': expected a rank-4 NHWC input [batch, height, width, "
                 "channels], got shape [32,784] (rank 2)");
    ck_assert(!gb_module_built(c));
    ck_assert_ptr_null(gb_module_call(c, gb_ones(GB_F32, GB_SHAPE(1, 2, 5, 1)), false));
    assert_error(GB_ERR_SHAPE, "input [1,2,5,1] is smaller than the 3x3 kernel");
    ck_assert_ptr_nonnull(gb_module_call(c, gb_ones(GB_F32, GB_SHAPE(1, 5, 5, 2)), false));
    ck_assert_ptr_null(gb_module_call(c, gb_ones(GB_F32, GB_SHAPE(1, 5, 5, 3)), false));
    assert_error(GB_ERR_SHAPE, "input has 3 channels (shape [1,5,5,3]) but the layer was built for 2");
    ck_assert_ptr_null(gb_conv2d_new(4, 0, 3, NULL));
    assert_error(GB_ERR_VALUE, "filters and kernel size must be positive");
    ck_assert_ptr_null(gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.strides = {2, 2}, .dilation = {2, 2}}));
    assert_error(GB_ERR_VALUE, "strides > 1 together with dilation > 1");
    ck_assert_ptr_null(gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.strides = {-1, 1}}));
    assert_error(GB_ERR_VALUE, "must be positive");
    gb_module_free(c);
}
END_TEST

/* ---- pooling and flatten ------------------------------------------------------------------ */

START_TEST(test_pooling) {
    gb_tensor *x = gb_from_f32((const float[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
                               GB_SHAPE(1, 4, 4, 1));
    gb_module *mp = gb_max_pool2d_new(NULL), *ap = gb_avg_pool2d_new(NULL);
    ASSERT_VALUES(gb_module_call(mp, x, false), 0, 6, 8, 14, 16);
    ASSERT_VALUES(gb_module_call(ap, x, false), 1e-6, 3.5, 5.5, 11.5, 13.5);
    ck_assert_int_eq(gb_module_count_params(mp), 0);
    /* 3x3 windows with stride 1, and same padding with stride 2. */
    gb_module *p3 = gb_max_pool2d_new(&(gb_pool2d_options){.pool_size = {3, 3}, .strides = {1, 1}});
    ASSERT_VALUES(gb_module_call(p3, x, false), 0, 11, 12, 15, 16);
    gb_module *ps = gb_max_pool2d_new(&(gb_pool2d_options){.pool_size = {3, 3}, .strides = {2, 2},
                                                           .padding = GB_PADDING_SAME});
    ASSERT_SHAPE(gb_module_call(ps, gb_ones(GB_F32, GB_SHAPE(2, 5, 7, 3)), false), 2, 3, 4, 3);
    /* Errors. */
    ck_assert_ptr_null(gb_module_call(mp, gb_ones(GB_F32, GB_SHAPE(4, 4)), false));
    assert_error(GB_ERR_SHAPE, "MaxPooling2D layer 'max_pooling2d': expected a rank-4 NHWC input");
    ck_assert_ptr_null(gb_module_call(p3, gb_ones(GB_F32, GB_SHAPE(1, 2, 2, 1)), false));
    assert_error(GB_ERR_SHAPE, "smaller than the 3x3 pool window");
    ck_assert_ptr_null(gb_avg_pool2d_new(&(gb_pool2d_options){.pool_size = {-2, 2}}));
    assert_error(GB_ERR_VALUE, "AveragePooling2D: pool size and strides must be positive");
    gb_module *all[] = {mp, ap, p3, ps};
    for (int i = 0; i < 4; i++) gb_module_free(all[i]);
}
END_TEST

START_TEST(test_flatten) {
    gb_module *f = gb_flatten_new(NULL);
    gb_tensor *x = gb_arange(GB_F32, 0, 24, 1);
    gb_tensor *y = gb_module_call(f, gb_reshape(x, GB_SHAPE(2, 3, 4)), false);
    ASSERT_SHAPE(y, 2, 12);
    ck_assert_double_eq(gb_get(y, 13), 13.0);
    ASSERT_SHAPE(gb_module_call(f, gb_reshape(x, GB_SHAPE(2, 2, 3, 2)), false), 2, 12);
    ASSERT_SHAPE(gb_module_call(f, gb_reshape(x, GB_SHAPE(4, 6)), false), 4, 6);
    ASSERT_SHAPE(gb_module_call(f, x, false), 24, 1); /* Keras: [B] -> [B, 1] */
    ck_assert_ptr_null(gb_module_call(f, gb_scalar(GB_F32, 1), false));
    assert_error(GB_ERR_SHAPE, "expected an input with a batch axis");
    gb_module *f2 = gb_flatten_new(NULL);
    ck_assert(gb_module_build(f2, GB_F32, 4, (const int64_t[]){-1, 28, 28, 1}));
    int64_t dims[GB_MAX_RANK];
    ck_assert_int_eq(gb_module_output_shape(f2, dims), 2);
    ck_assert_int_eq(dims[0], -1);
    ck_assert_int_eq(dims[1], 784);
    gb_module_free(f);
    gb_module_free(f2);
}
END_TEST

/* ---- Dropout ---------------------------------------------------------------------------------- */

START_TEST(test_dropout_training_and_inference) {
    gb_module *d = gb_dropout_new(0.25, 7, NULL);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(100, 100));
    ck_assert_ptr_eq(gb_module_call(d, x, false), x); /* inference: the input itself */
    gb_tensor *a = gb_module_call(d, x, true);
    gb_tensor *b = gb_module_call(d, x, true);
    ck_assert_ptr_nonnull(a);
    int64_t zeros = 0, differ = 0;
    double sum = 0;
    for (int64_t i = 0; i < gb_size(a); i++) {
        double v = gb_get(a, i);
        ck_assert_msg(v == 0.0 || fabs(v - 1 / 0.75) < 1e-6, "value %g", v);
        zeros += v == 0.0;
        differ += v != gb_get(b, i);
        sum += v;
    }
    ck_assert_msg(zeros > 2250 && zeros < 2750, "dropped %lld of 10000", (long long)zeros);
    ck_assert_msg(fabs(sum / 10000 - 1) < 0.05, "mean %g", sum / 10000);
    ck_assert_msg(differ > 1000, "consecutive calls must draw fresh masks");
    /* The same seed gives the same sequence of masks. */
    gb_module *d2 = gb_dropout_new(0.25, 7, "again");
    gb_tensor *a2 = gb_module_call(d2, x, true);
    ck_assert_int_eq(memcmp(gb_data(a), gb_data(a2), gb_nbytes(a)), 0);
    /* rate 0 in training is the identity too. */
    gb_module *d0 = gb_dropout_new(0, 0, NULL);
    ck_assert_ptr_eq(gb_module_call(d0, x, true), x);
    gb_module_free(d);
    gb_module_free(d2);
    gb_module_free(d0);
}
END_TEST

START_TEST(test_dropout_bad_rate) {
    const double bad[] = {-0.1, 1.0, 1.5, NAN};
    for (int i = 0; i < 4; i++) {
        ck_assert_ptr_null(gb_dropout_new(bad[i], 0, NULL));
        assert_error(GB_ERR_VALUE, "Dropout: rate must be in [0, 1)");
    }
}
END_TEST

/* ---- activations ------------------------------------------------------------------------------- */

START_TEST(test_activation_layers_and_names) {
    gb_tensor *x = gb_from_f64((const double[]){-2, 0, 3}, GB_SHAPE(1, 3));
    gb_module *r = gb_relu_new(NULL);
    ASSERT_VALUES(gb_module_call(r, x, false), 0, 0, 0, 3);
    ck_assert_str_eq(gb_module_class_name(r), "ReLU");
    gb_module *s = gb_activation_new(GB_ACT_SIGMOID, NULL);
    ASSERT_VALUES(gb_module_call(s, x, false), 1e-12, 1 / (1 + exp(2.0)), 0.5, 1 / (1 + exp(-3.0)));
    gb_module *t = gb_activation_new(GB_ACT_TANH, NULL);
    ASSERT_VALUES(gb_module_call(t, x, false), 1e-12, tanh(-2.0), 0, tanh(3.0));
    gb_module *sw = gb_activation_new(GB_ACT_SWISH, NULL);
    ASSERT_VALUES(gb_module_call(sw, x, false), 1e-12, -2 / (1 + exp(2.0)), 0, 3 / (1 + exp(-3.0)));
    ck_assert_str_eq(gb_module_name(sw), "activation_2");
    gb_module *lin = gb_activation_new(GB_ACT_LINEAR, NULL);
    ck_assert_ptr_eq(gb_module_call(lin, x, false), x);
    for (int a = 0; a < GB_ACT_COUNT; a++) {
        gb_activation back;
        ck_assert(gb_activation_from_name(gb_activation_name((gb_activation)a), &back));
        ck_assert_int_eq(back, a);
    }
    gb_activation out;
    ck_assert(!gb_activation_from_name("relu6", &out));
    assert_error(GB_ERR_VALUE, "unknown activation 'relu6'");
    ck_assert_ptr_null(gb_activation_new((gb_activation)99, NULL));
    assert_error(GB_ERR_VALUE, "activation 99 is out of range");
    gb_module *all[] = {r, s, t, sw, lin};
    for (int i = 0; i < 5; i++) gb_module_free(all[i]);
}
END_TEST

START_TEST(test_dense_with_softmax_activation) {
    gb_module *d = gb_dense_new(3, &(gb_dense_options){.activation = GB_ACT_SOFTMAX, .seed = 3});
    gb_tensor *y = gb_module_call(d, gb_random_normal(GB_F64, GB_SHAPE(4, 5), 0, 1, 1), false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    for (int r = 0; r < 4; r++) {
        double s = 0;
        for (int c = 0; c < 3; c++) s += gb_get(y, r * 3 + c);
        ck_assert_double_eq_tol(s, 1.0, 1e-12);
    }
    gb_module_free(d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_layers");
    TCase *tc = tcase_create("layers");
    tcase_add_checked_fixture(tc, setup, scope_teardown);
    tcase_add_test(tc, test_dense_values);
    tcase_add_test(tc, test_dense_call_is_matmul_add_activation);
    tcase_add_test(tc, test_dense_errors);
    tcase_add_test(tc, test_conv2d_values);
    tcase_add_test(tc, test_conv2d_shapes);
    tcase_add_test(tc, test_conv2d_errors);
    tcase_add_test(tc, test_pooling);
    tcase_add_test(tc, test_flatten);
    tcase_add_test(tc, test_dropout_training_and_inference);
    tcase_add_test(tc, test_dropout_bad_rate);
    tcase_add_test(tc, test_activation_layers_and_names);
    tcase_add_test(tc, test_dense_with_softmax_activation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
