/* test_graph_unknown_dims.c — shape inference with unknown (-1) dims, the
 * rules one at a time (test_graph_ops.c runs every op with a -1 batch).
 *
 * A function traced for an input signature with -1 dims: the graph's
 * shapes (-1 broadcast against n is n, against 1 stays -1; matmul's inner
 * dims are checked when known; reshape keeps a -1; concat, slice, pad,
 * convolution and pooling windows over unknown sizes), calls of several
 * sizes against eager, trace-time errors that name the op and the shapes,
 * and run-time errors — not out-of-bounds reads — when a call's real
 * shapes do not fit what the trace settled. Gradients with a -1 batch:
 * the backprop ops whose shape attribute has a -1 batch, the reductions'
 * (spreading dy like x, a mean's count known only when the graph runs),
 * the zeros and ones a tape fills in; and dropout's noise shaped like x.
 */
#include <check.h>
#include <string.h>

#include "glassbox.h"
#include "graph_test_util.h"
#include "test_util.h"

/* A body's parameters, unused ones silenced once. */
#define BODY(name)                                                                          \
    static int name##_impl(gb_tensor *const *in, gb_tensor **out);                         \
    static int name(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, \
                    gb_tensor **out) {                                                      \
        (void)user, (void)nin, (void)st, (void)nst;                                         \
        return name##_impl(in, out);                                                        \
    }                                                                                       \
    static int name##_impl(gb_tensor *const *in, gb_tensor **out)

static gb_function *traced(const char *name, gb_function_fn body, const gb_tensor_spec *sig,
                           int n) {
    gb_function_options o = {.input_signature = sig, .ninput_signature = n};
    gb_function *f = gb_function_new(name, body, &o);
    ck_assert_ptr_nonnull(f);
    return f;
}

static gb_tensor *f64(uint64_t seed, int rank, const int64_t *dims) {
    return gb_random_uniform(GB_F64, rank, dims, -2, 2, seed);
}

/* The traced graph has this line (a node, its inputs and output shapes). */
static void assert_graph_line(gb_function *f, const char *line) {
    const char *g = gb_function_graph_text(f);
    ck_assert_msg(strstr(g, line), "no line '%s' in the graph:\n%s", line, g);
}

/* A call that fails at run time with `code` and `part` in the message. */
static void assert_call_fails(gb_function *f, gb_tensor *const *in, int nin, gb_status code,
                              const char *part) {
    gb_tensor *out[GB_FUNCTION_MAX_OUTPUTS];
    int n = gb_function_call(f, in, nin, NULL, 0, out);
    ck_assert_msg(n == -1, "%s ran (%d outputs) where it should fail with '%s'",
                  gb_function_name(f), n, part);
    assert_error(code, part);
}

/* ---- broadcasting -------------------------------------------------------------------- */

BODY(add_three) {
    out[0] = gb_add(in[0], in[1]); /* [-1,3] + [5,3]: [5,3] */
    out[1] = gb_add(in[0], in[2]); /* [-1,3] + [1,3]: [-1,3] */
    return 2;
}

START_TEST(test_broadcast_unknown_against_known) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 3), GB_SPEC("y", GB_F64, 5, 3),
                            GB_SPEC("z", GB_F64, 1, 3)};
    gb_function *f = traced("add_three", add_three, sig, 3);
    gb_tensor *y = f64(2, GB_SHAPE(5, 3)), *z = f64(3, GB_SHAPE(1, 3));
    assert_calls_like_eager(f, add_three, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(5, 3)), y, z}, 3);
    assert_calls_like_eager(f, add_three, NULL, (gb_tensor *[]){f64(4, GB_SHAPE(1, 3)), y, z}, 3);
    assert_graph_line(f, "Add = Add(x, y) -> float64[5,3]");
    assert_graph_line(f, "Add_1 = Add(x, z) -> float64[-1,3]");
    /* The trace settled [5,3] for an input of unknown batch: a batch that
     * does not broadcast fails when the graph runs, naming the op. */
    assert_call_fails(f, (gb_tensor *[]){f64(5, GB_SHAPE(7, 3)), y, z}, 3, GB_ERR_SHAPE,
                      "Add: incompatible shapes [7,3] and [5,3] (dimension 0: 7 vs 5)");
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

BODY(mlp_layer) {
    gb_tensor *h = gb_relu(gb_matmul(in[0], in[1]));
    out[0] = gb_add(gb_mul(h, h), h);
    return 1;
}

/* A graph with a -1 batch plans no memory for batch-sized values; its
 * stats also give the plan for the shapes of the call that traced it,
 * byte for byte the plan of the same graph traced for those shapes. */
START_TEST(test_stats_plan_the_call_shapes) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F32, -1, 64), GB_SPEC("w", GB_F32, 64, 32)};
    gb_tensor_spec fixed[] = {GB_SPEC("x", GB_F32, 50, 64), GB_SPEC("w", GB_F32, 64, 32)};
    gb_function *f = traced("layer_any_batch", mlp_layer, sig, 2);
    gb_function *g = traced("layer_batch_50", mlp_layer, fixed, 2);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(50, 64)), *w = gb_ones(GB_F32, GB_SHAPE(64, 32));
    gb_tensor *out;
    ck_assert_int_eq(gb_function_call(f, (gb_tensor *[]){x, w}, 2, NULL, 0, &out), 1);
    ck_assert_int_eq(gb_function_call(g, (gb_tensor *[]){x, w}, 2, NULL, 0, &out), 1);
    gb_graph_stats any = gb_function_graph_stats(f), batch = gb_function_graph_stats(g);
    ck_assert_uint_eq(any.arena_bytes, 0);   /* every value is batch-sized */
    ck_assert_uint_gt(batch.arena_bytes, 0);
    ck_assert_uint_eq(any.call_arena_bytes, batch.arena_bytes);
    ck_assert_uint_eq(any.call_naive_bytes, batch.naive_bytes);
    ck_assert_str_eq(any.call_shapes, "float32[50,64], float32[64,32]");
    ck_assert_uint_eq(batch.call_arena_bytes, batch.arena_bytes);
    ck_assert_str_eq(batch.call_shapes, "");
    gb_function_free(f);
    gb_function_free(g);
}
END_TEST

BODY(add_two) {
    out[0] = gb_add(in[0], in[1]);
    return 1;
}

START_TEST(test_trace_time_errors_name_op_and_shapes) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 3), GB_SPEC("y", GB_F64, -1, 4)};
    gb_function *f = traced("add_two", add_two, sig, 2);
    ck_assert_ptr_null(gb_function_get_concrete(f, sig, 2, NULL, 0));
    assert_error(GB_ERR_SHAPE, "Add: incompatible shapes [-1,3] and [-1,4] (dimension 1: 3 vs 4)");
    gb_function_free(f);
}
END_TEST

/* ---- matmul -------------------------------------------------------------------------- */

BODY(matmul_two) {
    out[0] = gb_matmul(in[0], in[1]);
    return 1;
}

START_TEST(test_matmul_inner_dim_unknown) {
    gb_tensor_spec sig[] = {GB_SPEC("a", GB_F64, 4, -1), GB_SPEC("b", GB_F64, 3, 2)};
    gb_function *f = traced("matmul", matmul_two, sig, 2);
    gb_tensor *b = f64(2, GB_SHAPE(3, 2));
    assert_calls_like_eager(f, matmul_two, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(4, 3)), b}, 2);
    assert_graph_line(f, "MatMul = MatMul(a, b) {transpose_a=false, transpose_b=false} -> float64[4,2]");
    assert_call_fails(f, (gb_tensor *[]){f64(3, GB_SHAPE(4, 5)), b}, 2, GB_ERR_SHAPE,
                      "MatMul: inner dimensions differ: [4,5] x [3,2] (5 vs 3)");
    gb_function_free(f);

    gb_tensor_spec known[] = {GB_SPEC("a", GB_F64, -1, 3), GB_SPEC("b", GB_F64, 4, 2)};
    f = traced("matmul", matmul_two, known, 2);
    ck_assert_ptr_null(gb_function_get_concrete(f, known, 2, NULL, 0));
    assert_error(GB_ERR_SHAPE, "MatMul: inner dimensions differ: [-1,3] x [4,2] (3 vs 4)");
    gb_function_free(f);
}
END_TEST

START_TEST(test_matmul_batch_dims_broadcast) {
    gb_tensor_spec sig[] = {GB_SPEC("a", GB_F64, -1, 2, 3), GB_SPEC("b", GB_F64, 4, 3, 2)};
    gb_function *f = traced("matmul", matmul_two, sig, 2);
    gb_tensor *b = f64(2, GB_SHAPE(4, 3, 2));
    assert_calls_like_eager(f, matmul_two, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(4, 2, 3)), b}, 2);
    assert_calls_like_eager(f, matmul_two, NULL, (gb_tensor *[]){f64(3, GB_SHAPE(1, 2, 3)), b}, 2);
    assert_graph_line(f, "-> float64[4,2,2]");
    assert_call_fails(f, (gb_tensor *[]){f64(4, GB_SHAPE(2, 2, 3)), b}, 2, GB_ERR_SHAPE,
                      "MatMul: batch dimensions do not broadcast: [2,2,3] x [4,3,2] (2 vs 4)");
    gb_function_free(f);
}
END_TEST

/* ---- reshape ------------------------------------------------------------------------- */

BODY(reshapes) {
    out[0] = gb_reshape(in[0], GB_SHAPE(-1, 2, 3)); /* -1 stays -1 */
    out[1] = gb_reshape(in[0], GB_SHAPE(12));       /* a multiple of the known 6 */
    return 2;
}

START_TEST(test_reshape_with_unknown_input) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 6)};
    gb_function *f = traced("reshapes", reshapes, sig, 1);
    assert_calls_like_eager(f, reshapes, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(2, 6))}, 1);
    assert_graph_line(f, "Reshape = Reshape(x) {shape=[-1,2,3]} -> float64[-1,2,3]");
    assert_graph_line(f, "Reshape_1 = Reshape(x) {shape=[12]} -> float64[12]");
    assert_call_fails(f, (gb_tensor *[]){f64(2, GB_SHAPE(3, 6))}, 1, GB_ERR_SHAPE,
                      "Reshape: cannot reshape a tensor of shape [3,6] (18 elements) into shape "
                      "[12] (12 elements)");
    gb_function_free(f);
}
END_TEST

BODY(reshape_bad) {
    out[0] = gb_reshape(in[0], GB_SHAPE(4, 5));
    return 1;
}

START_TEST(test_reshape_error_at_trace_time) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 6)};
    gb_function *f = traced("reshape_bad", reshape_bad, sig, 1);
    ck_assert_ptr_null(gb_function_get_concrete(f, sig, 1, NULL, 0));
    assert_error(GB_ERR_SHAPE, "Reshape: cannot reshape a tensor of shape [-1,6] into shape [4,5] "
                               "(20 elements, not a multiple of the 6 the known dimensions hold)");
    gb_function_free(f);
}
END_TEST

/* ---- movement ------------------------------------------------------------------------ */

BODY(movements) {
    gb_tensor *x = in[0], *y = in[1];
    out[0] = gb_concat((gb_tensor *[]){x, y}, 2, 1);          /* [-1,2] ++ [3,4]: [3,6] */
    out[1] = gb_concat((gb_tensor *[]){x, x}, 2, 0);          /* [-1,2] */
    out[2] = gb_slice(x, GB_LIST(1, 0), GB_LIST(-1, 1));       /* [-1,1] */
    out[3] = gb_pad(x, GB_LIST(1, 2, 0, 1), 0.25);             /* [-1,3] */
    out[4] = gb_broadcast_to(gb_slice(x, GB_LIST(0, 0), GB_LIST(-1, 1)), GB_SHAPE(3, 4));
    out[5] = gb_squeeze(gb_reduce_sum(x, GB_AXES(0), true), GB_AXES(0)); /* [2] */
    return 6;
}

START_TEST(test_movement_with_unknown_batch) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 2), GB_SPEC("y", GB_F64, 3, 4)};
    gb_function *f = traced("movements", movements, sig, 2);
    gb_tensor *y = f64(2, GB_SHAPE(3, 4));
    assert_calls_like_eager(f, movements, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(3, 2)), y}, 2);
    assert_graph_line(f, "ConcatV2 = ConcatV2(x, y) {axis=1} -> float64[3,6]");
    assert_graph_line(f, "ConcatV2_1 = ConcatV2(x, x) {axis=0} -> float64[-1,2]");
    assert_graph_line(f, "Slice = Slice(x) {begin=[1,0], size=[-1,1]} -> float64[-1,1]");
    assert_graph_line(f, "Pad = Pad(x) {paddings=[[1,2],[0,1]], constant_value=0.25} -> float64[-1,3]");
    assert_graph_line(f, "BroadcastTo = BroadcastTo(Slice_1) {shape=[3,4]} -> float64[3,4]");
    /* A batch of 1 broadcasts to 3; ConcatV2 needs 3: it fails first. */
    assert_call_fails(f, (gb_tensor *[]){f64(3, GB_SHAPE(2, 2)), y}, 2, GB_ERR_SHAPE,
                      "ConcatV2: input 1 has shape [3,4] but input 0 has shape [2,2]");
    gb_function_free(f);
}
END_TEST

BODY(split_batch) {
    return gb_split(in[0], 2, 0, out) ? 2 : -1;
}

START_TEST(test_split_along_unknown_axis_is_an_error) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 4)};
    gb_function *f = traced("split_batch", split_batch, sig, 1);
    ck_assert_ptr_null(gb_function_get_concrete(f, sig, 1, NULL, 0));
    assert_error(GB_ERR_SHAPE, "Split: cannot split axis 0 of shape [-1,4]: its size is unknown");
    gb_function_free(f);
}
END_TEST

BODY(split_features) {
    return gb_split(in[0], 2, 1, out) ? 2 : -1;
}

START_TEST(test_split_along_known_axis) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 4)};
    gb_function *f = traced("split_features", split_features, sig, 1);
    assert_calls_like_eager(f, split_features, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(3, 4))}, 1);
    assert_calls_like_eager(f, split_features, NULL, (gb_tensor *[]){f64(2, GB_SHAPE(1, 4))}, 1);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* ---- windows ------------------------------------------------------------------------- */

BODY(windows) {
    gb_tensor *x = in[0], *filter = in[1];
    out[0] = gb_conv2d(x, filter, GB_LIST(2), GB_PADDING_SAME, NULL, 0);
    out[1] = gb_conv2d(x, filter, NULL, 0, GB_PADDING_VALID, NULL, 0);
    out[2] = gb_max_pool2d(x, GB_LIST(2), NULL, 0, GB_PADDING_VALID);
    out[3] = gb_avg_pool2d(x, GB_LIST(3), GB_LIST(2), GB_PADDING_SAME);
    return 4;
}

/* Unknown batch, height and width (an image model for any image size). */
START_TEST(test_windows_over_unknown_sizes) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, -1, -1, 2), GB_SPEC("f", GB_F64, 3, 3, 2, 3)};
    gb_function *f = traced("windows", windows, sig, 2);
    gb_tensor *filter = f64(2, GB_SHAPE(3, 3, 2, 3));
    assert_calls_like_eager(f, windows, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(2, 5, 6, 2)), filter},
                            2);
    assert_calls_like_eager(f, windows, NULL, (gb_tensor *[]){f64(3, GB_SHAPE(1, 4, 4, 2)), filter},
                            2);
    assert_graph_line(f, "-> float64[-1,-1,-1,3]");
    assert_call_fails(f, (gb_tensor *[]){f64(4, GB_SHAPE(1, 2, 4, 2)), filter}, 2, GB_ERR_SHAPE,
                      "Conv2D: with VALID padding the window (effective height size 3) must fit "
                      "in the input height size 2");
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* ---- losses and variables ------------------------------------------------------------ */

BODY(losses) {
    out[0] = gb_sparse_softmax_cross_entropy_with_logits(in[0], in[1]);
    out[1] = gb_softmax_cross_entropy_with_logits(gb_softmax(in[1], -1), in[1]);
    return 2;
}

/* Unknown batch and classes. */
START_TEST(test_losses_with_unknown_classes) {
    gb_tensor_spec sig[] = {GB_SPEC("labels", GB_I64, -1), GB_SPEC("logits", GB_F64, -1, -1)};
    gb_function *f = traced("losses", losses, sig, 2);
    gb_tensor *labels = gb_tensor_from(GB_I64, (const int64_t[]){0, 3}, GB_SHAPE(2));
    assert_calls_like_eager(f, losses, NULL, (gb_tensor *[]){labels, f64(1, GB_SHAPE(2, 4))}, 2);
    assert_graph_line(f, "-> float64[-1]");
    assert_call_fails(f, (gb_tensor *[]){labels, f64(2, GB_SHAPE(3, 4))}, 2, GB_ERR_SHAPE,
                      "labels [2] must have the shape of logits [3,4] without its last axis");
    gb_function_free(f);
}
END_TEST

typedef struct assign_ctx {
    gb_variable *v;
} assign_ctx;

static int assign_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_variable *v = ((assign_ctx *)user)->v;
    if (!gb_variable_assign(v, in[0])) return -1;
    out[0] = gb_variable_value(v);
    return 1;
}

/* A value of unknown batch may be assigned: the variable's shape is
 * checked when the graph runs. */
START_TEST(test_assign_value_of_unknown_batch) {
    assign_ctx ctx = {gb_variable_new("v", gb_zeros(GB_F64, GB_SHAPE(2, 3)), true)};
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 3)};
    gb_function *f = gb_function_new(
        "assign", assign_body,
        &(gb_function_options){.user = &ctx, .input_signature = sig, .ninput_signature = 1});
    gb_tensor *x = f64(1, GB_SHAPE(2, 3)), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    assert_bitwise(x, y, "the assigned value");
    assert_call_fails(f, (gb_tensor *[]){f64(2, GB_SHAPE(3, 3))}, 1, GB_ERR_SHAPE,
                      "AssignVariableOp: variable 'v' is float64 [2,3] but the value is float64 "
                      "[3,3]");
    gb_function_free(f);
    gb_variable_free(ctx.v);
}
END_TEST

/* ---- gradients of a batch of unknown size -------------------------------------------- */

/* dL/dx and dL/dfilter of a convolution and a gather along axis 1, for
 * given output gradients (in[2], in[4]): Conv2DBackpropInput's shape
 * attribute gets a -1 batch (out_backprop's), ScatterAdd's output shape a
 * -1 batch (the updates'). */
BODY(window_gradients) {
    gb_tensor *x = in[0], *filter = in[1], *dy = in[2], *idx = in[3], *dg = in[4];
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, filter);
    gb_tensor *targets[2] = {gb_conv2d(x, filter, GB_LIST(2), GB_PADDING_SAME, NULL, 0),
                             gb_gather(x, idx, 1)};
    gb_tape_end(tape);
    gb_source src[2] = {GB_SRC(x), GB_SRC(filter)};
    gb_tensor *dys[2] = {dy, dg};
    return gb_tape_gradient_ex(tape, targets, 2, dys, src, 2, GB_UNCONNECTED_ZERO, out) ? 2 : -1;
}

START_TEST(test_gradients_of_unknown_batch) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 5, 5, 2), GB_SPEC("f", GB_F64, 3, 3, 2, 3),
                            GB_SPEC("dy", GB_F64, -1, 3, 3, 3), GB_SPEC("idx", GB_I64, 2),
                            GB_SPEC("dg", GB_F64, -1, 2, 5, 2)};
    gb_function *f = traced("window_gradients", window_gradients, sig, 5);
    gb_tensor *filter = f64(2, GB_SHAPE(3, 3, 2, 3));
    gb_tensor *idx = gb_tensor_from(GB_I64, (const int64_t[]){4, 1}, GB_SHAPE(2));
    for (int64_t b = 1; b <= 3; b += 2)
        assert_calls_like_eager(f, window_gradients, NULL,
                                (gb_tensor *[]){f64(1, GB_SHAPE(b, 5, 5, 2)), filter,
                                                f64(3, GB_SHAPE(b, 3, 3, 3)), idx,
                                                f64(4, GB_SHAPE(b, 2, 5, 2))},
                                5);
    assert_graph_line(f, "Conv2DBackpropInput");
    assert_graph_line(f, "{strides=[2,2], dilations=[1,1], padding=SAME, input_sizes=[-1,5,5,2]} -> float64[-1,5,5,2]");
    assert_graph_line(f, "{axis=1, shape=[-1,5,5,2]} -> float64[-1,5,5,2]");
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* A train step's gradients with a -1 batch: a mean loss over the batch
 * (its count known only when the graph runs), a sum and a max over it;
 * their gradients spread dy with BroadcastTo given x as shape donor. */
BODY(batch_gradients) {
    gb_tensor *x = in[0], *labels = in[1], *w = in[2], *b = in[3];
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, w);
    gb_tape_watch(tape, b);
    gb_tensor *xent = gb_sparse_softmax_cross_entropy_with_logits(labels,
                                                                  gb_add(gb_matmul(x, w), b));
    gb_tensor *penalty = gb_add(gb_reduce_sum(gb_square(x), GB_ALL_AXES, false),
                                gb_reduce_sum(gb_reduce_max(x, GB_AXES(0), false), GB_ALL_AXES,
                                              false));
    out[0] = gb_add(gb_reduce_mean(xent, GB_ALL_AXES, false), gb_mul_scalar(penalty, 0.01));
    gb_tape_end(tape);
    return gb_tape_gradients(tape, out[0], (gb_tensor *[]){x, w, b}, 3, out + 1) ? 4 : -1;
}

START_TEST(test_reduction_gradients_of_unknown_batch) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 5), GB_SPEC("labels", GB_I64, -1),
                            GB_SPEC("w", GB_F64, 5, 3), GB_SPEC("b", GB_F64, 3)};
    gb_function *f = traced("batch_gradients", batch_gradients, sig, 4);
    gb_tensor *w = f64(2, GB_SHAPE(5, 3)), *b = f64(3, GB_SHAPE(3));
    for (int64_t n = 1; n <= 6; n += 5) {
        gb_tensor *labels = gb_random_uniform(GB_I64, GB_SHAPE(n), 0, 3, 4);
        assert_calls_like_eager(f, batch_gradients, NULL,
                                (gb_tensor *[]){f64(1, GB_SHAPE(n, 5)), labels, w, b}, 4);
    }
    assert_graph_line(f, "-> float64[-1,5]");
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* Zeros and ones of a shape known only when the graph runs: the ones a
 * tape seeds a non-scalar target with, the zeros of an unconnected source
 * and of Sign's gradient; and logsumexp's forward pass over such a shape. */
BODY(filled_like) {
    gb_tensor *x = in[0], *labels = in[1], *unused = in[2];
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, unused);
    gb_tensor *per_example = gb_add(gb_sparse_softmax_cross_entropy_with_logits(labels, x),
                                    gb_reduce_sum(gb_mul(gb_sign(x), x), GB_AXES(1), false));
    out[0] = gb_reduce_logsumexp(x, GB_AXES(1), false);
    gb_tape_end(tape);
    gb_source src[2] = {GB_SRC(x), GB_SRC(unused)};
    return gb_tape_gradient_ex(tape, &per_example, 1, NULL, src, 2, GB_UNCONNECTED_ZERO, out + 1)
               ? 3
               : -1;
}

START_TEST(test_zeros_and_ones_of_unknown_batch) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 4), GB_SPEC("labels", GB_I64, -1),
                            GB_SPEC("unused", GB_F64, -1, 2)};
    gb_function *f = traced("filled_like", filled_like, sig, 3);
    for (int64_t n = 1; n <= 4; n += 3)
        assert_calls_like_eager(f, filled_like, NULL,
                                (gb_tensor *[]){f64(1, GB_SHAPE(n, 4)),
                                                gb_random_uniform(GB_I64, GB_SHAPE(n), 0, 4, 2),
                                                f64(3, GB_SHAPE(n, 2))},
                                3);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

BODY(dropped) {
    out[0] = gb_dropout(in[0], 0.5, 7);
    return 1;
}

/* Dropout's noise takes the shape of x when the graph runs. The first run
 * draws what eager draws; later ones draw anew (kept elements doubled). */
START_TEST(test_dropout_of_unknown_batch) {
    gb_tensor_spec sig[] = {GB_SPEC("x", GB_F64, -1, 5)};
    gb_function *f = traced("dropped", dropped, sig, 1);
    assert_calls_like_eager(f, dropped, NULL, (gb_tensor *[]){f64(1, GB_SHAPE(4, 5))}, 1);
    gb_tensor *x = f64(2, GB_SHAPE(2, 5)), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert(gb_same_shape(x, y));
    for (int64_t i = 0; i < gb_size(x); i++)
        ck_assert(gb_get(y, i) == 0 || gb_get(y, i) == 2 * gb_get(x, i));
    assert_graph_line(f, "RandomUniform = RandomUniform(x) {dtype=float64, seed=7, shape=[-1,5], minval=0, maxval=1} -> float64[-1,5]");
    gb_function_free(f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_unknown_dims");
    TCase *tc = tcase_create("unknown_dims");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_broadcast_unknown_against_known);
    tcase_add_test(tc, test_stats_plan_the_call_shapes);
    tcase_add_test(tc, test_trace_time_errors_name_op_and_shapes);
    tcase_add_test(tc, test_matmul_inner_dim_unknown);
    tcase_add_test(tc, test_matmul_batch_dims_broadcast);
    tcase_add_test(tc, test_reshape_with_unknown_input);
    tcase_add_test(tc, test_reshape_error_at_trace_time);
    tcase_add_test(tc, test_movement_with_unknown_batch);
    tcase_add_test(tc, test_split_along_unknown_axis_is_an_error);
    tcase_add_test(tc, test_split_along_known_axis);
    tcase_add_test(tc, test_windows_over_unknown_sizes);
    tcase_add_test(tc, test_losses_with_unknown_classes);
    tcase_add_test(tc, test_assign_value_of_unknown_batch);
    tcase_add_test(tc, test_gradients_of_unknown_batch);
    tcase_add_test(tc, test_reduction_gradients_of_unknown_batch);
    tcase_add_test(tc, test_zeros_and_ones_of_unknown_batch);
    tcase_add_test(tc, test_dropout_of_unknown_batch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
