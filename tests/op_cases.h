/* op_cases.h — one input generator per op of ops.def, for the tests that
 * run every op (test_graph_ops.c): eager against traced, finite-difference
 * gradients, gradients taken inside a traced function, unknown batch sizes.
 *
 * op_cases[op](c, batch) fills an op_case: the op's inputs and attributes
 * (by name, as graph text prints them, read through ops.def's schema) for
 * a batch size, which
 * inputs carry that batch in dim 0, and, for the ops that cannot simply be
 * dispatched on their inputs, how to run them:
 *   - variable ops and the fused optimizer updates run through the public
 *     functions on a variable (and optimizer) of their own per "world" —
 *     world 0 eager, world 1 traced — made alike, and return the values
 *     they leave behind, so both worlds are compared on their state;
 *   - Placeholder and Const exist only in graphs: their run returns the
 *     value the node stands for (the function's input, a captured tensor);
 *   - If and While run through gb_cond and gb_while_loop: their nodes name
 *     sub-graphs traced by those calls, so their runs make them (eagerly,
 *     the branch or the loop runs instead), and their gradients are
 *     checked through those calls.
 * The table is indexed by gb_op_id with designated initializers: an op
 * added to ops.def has a NULL slot until its generator is written, and the
 * tests fail naming it — a new op can skip none of the checks.
 *
 * Float inputs are float64 (the finite differences need it) with values
 * away from each op's kinks and poles. The attributes never depend on the
 * batch, so one trace with a -1 batch serves every batch size.
 */
#ifndef GB_TEST_OP_CASES_H
#define GB_TEST_OP_CASES_H

#include "glassbox.h"
#include "ops/internal.h"
#include "ops/strings_internal.h"

enum { OC_MAX_IN = 6, OC_MAX_OUT = 4, OC_WORLDS = 2 };

typedef struct op_case op_case;

/* Runs the case in `world` (0 eager; 1 traced, on the symbolic inputs of a
 * function): writes the outputs, returns how many or -1. */
typedef int (*oc_run_fn)(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out);

struct op_case {
    gb_op_id op;
    int nin;
    gb_tensor *in[OC_MAX_IN];
    /* The op's attributes as graph text prints them ("{axes=[1],
     * keepdims=true}"), read into attrs through the op's schema (ops.def):
     * every case of an op with attributes gives them by name. */
    const char *attrs_text;
    gb_attrs attrs;
    unsigned batched;             /* bit i: dim 0 of input i is the batch */
    oc_run_fn run;                /* NULL: the op dispatched on the inputs */
    /* The run calls the public function that makes the op (gb_cond,
     * gb_while_loop: an If or While node names sub-graphs traced with it,
     * so it cannot be dispatched alone): its gradient is checked through
     * that function, eager against traced. */
    bool run_makes_op;
    bool graph_only;              /* refuses to run eagerly (Placeholder, Const) */
    gb_tensor *value;             /* Const: the tensor the function captures */
    gb_variable *var[OC_WORLDS];  /* variable ops, updates: one per world */
    gb_optimizer *opt[OC_WORLDS]; /* updates: one per world */
};

typedef void (*op_case_gen)(op_case *c, int64_t batch);

/* ---- inputs -------------------------------------------------------------------------- */

/* float64 values in [lo, hi) from stream `seed`. */
static gb_tensor *oc_uniform(double lo, double hi, uint64_t seed, int rank, const int64_t *dims) {
    return gb_random_uniform(GB_F64, rank, dims, lo, hi, seed);
}

/* float64 values of magnitude in [0.3, 1.5) and random sign: away from
 * the kinks (Abs, Relu) and poles (Reciprocal) at zero. */
static gb_tensor *oc_nonzero(uint64_t seed, int rank, const int64_t *dims) {
    gb_tensor *m = oc_uniform(0.3, 1.5, seed, rank, dims);
    gb_tensor *s = oc_uniform(-1, 1, seed + 1000, rank, dims);
    return gb_where(gb_greater_equal(s, gb_scalar(GB_F64, 0)), m, gb_neg(m));
}

/* int64 values in [0, n). */
static gb_tensor *oc_ints(int64_t n, uint64_t seed, int rank, const int64_t *dims) {
    return gb_random_uniform(GB_I64, rank, dims, 0, (double)n, seed);
}

static void oc_set_inputs(op_case *c, unsigned batched, int n, gb_tensor *const *in) {
    c->nin = n;
    for (int i = 0; i < n; i++) c->in[i] = in[i];
    c->batched = batched;
}
#define OC_INPUTS(c, batched, ...)                                                         \
    oc_set_inputs((c), (batched), (int)(sizeof((gb_tensor *[]){__VA_ARGS__}) /           \
                                        sizeof(gb_tensor *)),                              \
                  (gb_tensor *[]){__VA_ARGS__})

/* ---- elementwise unary, Cast, Identity, StopGradient, CheckNumerics ------------------ */

static void gen_unary(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 1, GB_SHAPE(b, 3)));
}
static void gen_unary_positive(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(0.5, 2, 2, GB_SHAPE(b, 3)));
}
static void gen_unary_nonzero(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_nonzero(3, GB_SHAPE(b, 3)));
}

static void gen_leaky_relu(op_case *c, int64_t b) {
    gen_unary_nonzero(c, b);
    c->attrs_text = "{alpha=0.2}";
}

static void gen_gelu(op_case *c, int64_t b) {
    gen_unary(c, b);
    c->attrs_text = "{approximate=false, normal_cdf=false}"; /* the exact form */
}

/* float64 to float64: a float32 result would be too coarse for the
 * finite differences (its gradient is the same cast back). */
static void gen_cast(op_case *c, int64_t b) {
    gen_unary(c, b);
    c->attrs_text = "{dtype=float64}";
}

static void gen_check_numerics(op_case *c, int64_t b) {
    gen_unary(c, b);
    c->attrs_text = "{message=\"activations\"}";
}

/* ---- the fused gradient helpers ------------------------------------------------------ */

static void gen_relu_grad(op_case *c, int64_t b) { /* (dy, x) */
    OC_INPUTS(c, 3, oc_uniform(-2, 2, 4, GB_SHAPE(b, 3)), oc_nonzero(5, GB_SHAPE(b, 3)));
}
static void gen_sigmoid_grad(op_case *c, int64_t b) { /* (y, dy) */
    OC_INPUTS(c, 3, oc_uniform(0.1, 0.9, 6, GB_SHAPE(b, 3)), oc_uniform(-2, 2, 7, GB_SHAPE(b, 3)));
}
static void gen_tanh_grad(op_case *c, int64_t b) { /* (y, dy) */
    OC_INPUTS(c, 3, oc_uniform(-0.9, 0.9, 8, GB_SHAPE(b, 3)), oc_uniform(-2, 2, 9, GB_SHAPE(b, 3)));
}
static void gen_gelu_grad(op_case *c, int64_t b) { /* (dy, x) */
    OC_INPUTS(c, 3, oc_uniform(-1, 1, 91, GB_SHAPE(b, 3)), oc_uniform(-3, 3, 92, GB_SHAPE(b, 3)));
}

/* ---- binary (broadcasting [B,3] against [3]) and Select ------------------------------ */

static void gen_binary(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 10, GB_SHAPE(b, 3)), oc_uniform(-2, 2, 11, GB_SHAPE(3)));
}
static void gen_div(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 12, GB_SHAPE(b, 3)), oc_nonzero(13, GB_SHAPE(3)));
}
static void gen_pow(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(0.5, 2, 14, GB_SHAPE(b, 3)), oc_uniform(-1.5, 1.5, 15, GB_SHAPE(3)));
}
/* Small whole numbers, so that equal pairs occur. */
static void gen_compare(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, gb_cast(oc_ints(3, 16, GB_SHAPE(b, 3)), GB_F64),
              gb_cast(oc_ints(3, 17, GB_SHAPE(3)), GB_F64));
}
static void gen_select(op_case *c, int64_t b) {
    gb_tensor *cond = gb_greater(oc_uniform(-1, 1, 18, GB_SHAPE(b, 3)), gb_scalar(GB_F64, 0));
    OC_INPUTS(c, 3, cond, oc_uniform(-2, 2, 19, GB_SHAPE(b, 3)),
              oc_uniform(-2, 2, 20, GB_SHAPE(3)));
}

/* ---- reductions ---------------------------------------------------------------------- */

/* [B,3,4] in [0.5, 1.5) (products stay tame); each op its own axes, the
 * batch axis among them for some (a static result of a dynamic input). */
static void gen_reduce(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(0.5, 1.5, 21, GB_SHAPE(b, 3, 4)));
    switch (c->op) {
    case GB_OP_SUM: c->attrs_text = "{axes=[0,2], keepdims=true}"; break;
    case GB_OP_MEAN: c->attrs_text = "{axes=[0], keepdims=false}"; break;
    case GB_OP_MAX: c->attrs_text = "{axes=[1], keepdims=false}"; break;
    case GB_OP_MIN: c->attrs_text = "{axes=[1,2], keepdims=true}"; break;
    default: c->attrs_text = "{axes=[2], keepdims=false}"; break;
    }
}

static void gen_arg(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 22, GB_SHAPE(b, 4)));
    c->attrs_text = "{axis=1}";
}

/* ---- shape and movement -------------------------------------------------------------- */

static void gen_reshape(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 23, GB_SHAPE(b, 6)));
    c->attrs_text = "{shape=[-1,2,3]}";
}
static void gen_transpose(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 24, GB_SHAPE(b, 3, 4)));
    c->attrs_text = "{perm=[2,0,1]}";
}
/* The target shape is an attribute: no batch can vary. */
static void gen_broadcast_to(op_case *c, int64_t b) {
    (void)b;
    OC_INPUTS(c, 0, oc_uniform(-2, 2, 25, GB_SHAPE(3, 1)));
    c->attrs_text = "{shape=[2,3,4]}";
}
static void gen_slice(op_case *c, int64_t b) { /* x[:, 1:4] */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 26, GB_SHAPE(b, 5)));
    c->attrs_text = "{begin=[0,1], size=[-1,3]}";
}
static void gen_concat(op_case *c, int64_t b) {
    OC_INPUTS(c, 3, oc_uniform(-2, 2, 27, GB_SHAPE(b, 2)), oc_uniform(-2, 2, 28, GB_SHAPE(b, 3)));
    c->attrs_text = "{axis=1}";
}
static void gen_pad(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 29, GB_SHAPE(b, 3)));
    c->attrs_text = "{paddings=[[1,0],[0,2]], constant_value=0.5}";
}
static void gen_gather(op_case *c, int64_t b) { /* (params, indices) */
    OC_INPUTS(c, 2, oc_uniform(-2, 2, 30, GB_SHAPE(5, 3)), oc_ints(5, 31, GB_SHAPE(b)));
    c->attrs_text = "{axis=0}";
}
static void gen_scatter_add(op_case *c, int64_t b) { /* (indices, updates) into [5,3] */
    OC_INPUTS(c, 3, oc_ints(5, 32, GB_SHAPE(b)), oc_uniform(-2, 2, 33, GB_SHAPE(b, 3)));
    c->attrs_text = "{axis=0, shape=[5,3]}";
}
/* Indices up to 4 with depth 4: some rows are all `off`. */
static void gen_one_hot(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_ints(5, 34, GB_SHAPE(b, 2)));
    c->attrs_text = "{depth=4, dtype=float64, on_value=1, off_value=-0.5}";
}

/* ---- matmul, convolution, pooling (NHWC) --------------------------------------------- */

static void gen_matmul(op_case *c, int64_t b) { /* [B,3] x [4,3]^T */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 35, GB_SHAPE(b, 3)), oc_uniform(-2, 2, 36, GB_SHAPE(4, 3)));
    c->attrs_text = "{transpose_a=false, transpose_b=true}";
}

/* BlockLSTM over 3 steps of 2 units: xw [B,3,8], R [2,8], h0 and c0
 * [B,2]. Its run is the layers' call (hs and cs; the gates output is the
 * backward pass's own, which no gradient flows through, as TensorFlow's),
 * hs and cs side by side so both gradients are checked. */
static int run_block_lstm(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)c, (void)world;
    gb_tensor *hs, *cs;
    if (!gb__block_lstm(in[0], in[1], in[2], in[3], &hs, &cs)) return -1;
    out[0] = gb_concat((gb_tensor *[]){hs, cs}, 2, 2);
    return out[0] ? 1 : -1;
}
static void gen_block_lstm(op_case *c, int64_t b) {
    OC_INPUTS(c, 13, oc_uniform(-2, 2, 70, GB_SHAPE(b, 3, 8)), oc_uniform(-1, 1, 71, GB_SHAPE(2, 8)),
              oc_uniform(-1, 1, 72, GB_SHAPE(b, 2)), oc_uniform(-1, 1, 73, GB_SHAPE(b, 2)));
    c->run = run_block_lstm;
    c->run_makes_op = true;
}
/* (R, cs, gates, dhs, dcs): gates in (0, 1) as activations are. */
static void gen_block_lstm_grad(op_case *c, int64_t b) {
    OC_INPUTS(c, 30, oc_uniform(-1, 1, 74, GB_SHAPE(2, 8)), oc_uniform(-1, 1, 75, GB_SHAPE(b, 3, 2)),
              oc_uniform(0.1, 0.9, 76, GB_SHAPE(b, 3, 8)), oc_uniform(-1, 1, 77, GB_SHAPE(b, 3, 2)),
              oc_uniform(-1, 1, 78, GB_SHAPE(b, 3, 2)));
}

/* DotProductAttention: q [B,3,2,2], k [B,4,2,2], v [B,4,2,3] under a
 * [3,4] mask whose second row allows nothing; its run is the layer's
 * call, the output [B,3,2,3] and the weights [B,2,3,4] side by side. */
static int run_attention(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)world;
    gb_tensor *w;
    out[0] = gb__dot_product_attention(in[0], in[1], in[2], in[3], c->attrs.f[0], &w);
    /* the weights too, so their gradient's path is checked (reshaped beside the output) */
    if (out[0]) out[0] = gb_concat((gb_tensor *[]){gb_reshape(out[0], 2, (int64_t[]){-1, 18}),
                                                    gb_reshape(w, 2, (int64_t[]){-1, 24})}, 2, 1);
    return out[0] ? 1 : -1;
}
static void gen_attention(op_case *c, int64_t b) {
    OC_INPUTS(c, 7, oc_uniform(-1, 1, 93, GB_SHAPE(b, 3, 2, 2)), oc_uniform(-1, 1, 94, GB_SHAPE(b, 4, 2, 2)),
              oc_uniform(-1, 1, 95, GB_SHAPE(b, 4, 2, 3)),
              gb_tensor_from(GB_BOOL, (bool[]){1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0}, GB_SHAPE(3, 4)));
    c->attrs_text = "{scale=0.7}";
    c->run = run_attention;
    c->run_makes_op = true;
}
/* (dO, q, k, v, weights, the weights' gradient) */
static void gen_attention_grad(op_case *c, int64_t b) {
    OC_INPUTS(c, 63, oc_uniform(-1, 1, 96, GB_SHAPE(b, 3, 2, 3)), oc_uniform(-1, 1, 93, GB_SHAPE(b, 3, 2, 2)),
              oc_uniform(-1, 1, 94, GB_SHAPE(b, 4, 2, 2)), oc_uniform(-1, 1, 95, GB_SHAPE(b, 4, 2, 3)),
              gb_softmax(oc_uniform(-1, 1, 97, GB_SHAPE(b, 2, 3, 4)), -1), oc_uniform(-1, 1, 98, GB_SHAPE(b, 2, 3, 4)));
    c->attrs_text = "{scale=0.7}";
}

/* LayerNorm over the last axis of [B,2,5]; its run is the layer's call
 * (y alone: mean and rstd are the backward pass's own, which no gradient
 * flows through). */
static int run_layer_norm(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)world;
    out[0] = gb__layer_norm(in[0], in[1], in[2], c->attrs.f[0]);
    return out[0] ? 1 : -1;
}
static void gen_layer_norm(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 80, GB_SHAPE(b, 2, 5)), oc_uniform(0.5, 1.5, 81, GB_SHAPE(5)),
              oc_uniform(-1, 1, 82, GB_SHAPE(5)));
    c->attrs_text = "{epsilon=0.001}";
    c->run = run_layer_norm;
    c->run_makes_op = true;
}
/* (dy, x, gamma, mean, rstd) */
static void gen_layer_norm_grad(op_case *c, int64_t b) {
    OC_INPUTS(c, 27, oc_uniform(-1, 1, 83, GB_SHAPE(b, 2, 5)), oc_uniform(-2, 2, 84, GB_SHAPE(b, 2, 5)),
              oc_uniform(0.5, 1.5, 85, GB_SHAPE(5)), oc_uniform(-0.5, 0.5, 86, GB_SHAPE(b, 2)),
              oc_uniform(0.5, 2, 87, GB_SHAPE(b, 2)));
}

/* 3x3 window, stride 2, SAME over [B,5,5,2] -> [B,3,3,3]; the backprop
 * ops also name the shape they make (a -1 batch: out_backprop's). */
#define CONV_ATTRS "strides=[2,2], dilations=[1,1], padding=SAME"
static gb_tensor *conv_x(int64_t b) { return oc_uniform(-1, 1, 37, GB_SHAPE(b, 5, 5, 2)); }
static gb_tensor *conv_f(void) { return oc_uniform(-1, 1, 38, GB_SHAPE(3, 3, 2, 3)); }
static gb_tensor *conv_dy(int64_t b) { return oc_uniform(-1, 1, 39, GB_SHAPE(b, 3, 3, 3)); }

static void gen_conv2d(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, conv_x(b), conv_f());
    c->attrs_text = "{" CONV_ATTRS "}";
}
static void gen_conv2d_backprop_input(op_case *c, int64_t b) { /* (filter, dy) */
    OC_INPUTS(c, 2, conv_f(), conv_dy(b));
    c->attrs_text = "{" CONV_ATTRS ", input_sizes=[-1,5,5,2]}";
}
static void gen_conv2d_backprop_filter(op_case *c, int64_t b) { /* (x, dy) */
    OC_INPUTS(c, 3, conv_x(b), conv_dy(b));
    c->attrs_text = "{" CONV_ATTRS ", filter_sizes=[3,3,2,3]}";
}

/* MaxPool: 2x2 windows, stride 2, VALID over [B,4,4,2]. */
#define MAX_POOL_ATTRS "{ksize=[2,2], strides=[2,2], padding=VALID}"
static void gen_max_pool(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 40, GB_SHAPE(b, 4, 4, 2)));
    c->attrs_text = MAX_POOL_ATTRS;
}
static void gen_max_pool_grad(op_case *c, int64_t b) { /* (x, y, dy) */
    gb_tensor *x = oc_uniform(-2, 2, 41, GB_SHAPE(b, 4, 4, 2));
    OC_INPUTS(c, 7, x, gb_max_pool2d(x, GB_LIST(2), NULL, 0, GB_PADDING_VALID),
              oc_uniform(-2, 2, 42, GB_SHAPE(b, 2, 2, 2)));
    c->attrs_text = MAX_POOL_ATTRS;
}

/* AvgPool: 3x3 windows, stride 2, SAME over [B,5,5,2] -> [B,3,3,2]. */
static void gen_avg_pool(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 43, GB_SHAPE(b, 5, 5, 2)));
    c->attrs_text = "{ksize=[3,3], strides=[2,2], padding=SAME}";
}
static void gen_avg_pool_grad(op_case *c, int64_t b) { /* (dy) */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 44, GB_SHAPE(b, 3, 3, 2)));
    c->attrs_text = "{ksize=[3,3], strides=[2,2], padding=SAME, orig_input_shape=[-1,5,5,2]}";
}

/* ---- softmax and the losses ---------------------------------------------------------- */

static void gen_softmax(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 45, GB_SHAPE(b, 4)));
    c->attrs_text = "{axis=-1}";
}
static void gen_log_softmax(op_case *c, int64_t b) { /* over the batch axis */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 46, GB_SHAPE(b, 4)));
    c->attrs_text = "{axis=0}";
}
/* (y, dy): y a softmax's output, as the op's callers give it */
static void gen_softmax_grad(op_case *c, int64_t b) {
    OC_INPUTS(c, 3, gb_softmax(oc_uniform(-2, 2, 88, GB_SHAPE(b, 4)), -1), oc_uniform(-1, 1, 89, GB_SHAPE(b, 4)));
}
/* logits [B,3,4] under a [3,4] mask whose second row allows nothing */
static void gen_masked_softmax(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 90, GB_SHAPE(b, 3, 4)),
              gb_tensor_from(GB_BOOL, (bool[]){1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1}, GB_SHAPE(3, 4)));
}
static void gen_sparse_xent(op_case *c, int64_t b) { /* (labels, logits) */
    OC_INPUTS(c, 3, oc_ints(4, 47, GB_SHAPE(b)), oc_uniform(-2, 2, 48, GB_SHAPE(b, 4)));
}
static void gen_softmax_xent(op_case *c, int64_t b) { /* (label distributions, logits) */
    OC_INPUTS(c, 3, gb_softmax(oc_uniform(-2, 2, 49, GB_SHAPE(b, 4)), -1),
              oc_uniform(-2, 2, 50, GB_SHAPE(b, 4)));
}

/* ---- random numbers: no inputs; the first run of a graph draws what eager does ------- */

static void gen_random(op_case *c, int64_t b) {
    (void)b;
    c->attrs_text = c->op == GB_OP_RANDOM_UNIFORM
                        ? "{dtype=float64, seed=51, shape=[2,3], minval=-1, maxval=2}"
                        : "{dtype=float64, seed=51, shape=[2,3], mean=0.5, stddev=2}";
}

/* ---- variables: each world reads and writes its own ---------------------------------- */

static void make_variables(op_case *c, gb_tensor *initial) {
    c->var[0] = gb_variable_new("eager", initial, true);
    c->var[1] = gb_variable_new("traced", initial, true);
}

static int run_read(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)in;
    out[0] = gb_variable_value(c->var[world]);
    return out[0] ? 1 : -1;
}

static void gen_read_variable(op_case *c, int64_t b) {
    (void)b;
    make_variables(c, oc_uniform(-2, 2, 52, GB_SHAPE(2, 3)));
    c->run = run_read;
}

/* The assignment, then the value it left. */
static int run_assign(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    gb_variable *v = c->var[world];
    bool ok = c->op == GB_OP_ASSIGN_VARIABLE       ? gb_variable_assign(v, in[0])
              : c->op == GB_OP_ASSIGN_ADD_VARIABLE ? gb_variable_assign_add(v, in[0])
                                                   : gb_variable_assign_sub(v, in[0]);
    return ok ? run_read(c, world, in, out) : -1;
}

static void gen_assign(op_case *c, int64_t b) {
    (void)b;
    make_variables(c, oc_uniform(-2, 2, 53, GB_SHAPE(2, 3)));
    OC_INPUTS(c, 0, oc_uniform(-2, 2, 54, GB_SHAPE(2, 3)));
    c->run = run_assign;
}

/* ---- fused optimizer updates: an optimizer step in each world ------------------------ */

/* The optimizer whose step is the case's op, with its options off the
 * defaults where that runs more of the update (momentum, Nesterov, decay,
 * a centered RMSprop with momentum). */
static gb_optimizer *optimizer_for(gb_op_id op) {
    switch (op) {
    case GB_OP_APPLY_GRADIENT_DESCENT: return gb_sgd(0.1);
    case GB_OP_APPLY_MOMENTUM: return gb_sgd_momentum(0.1, 0.9, true);
    case GB_OP_APPLY_ADAM: return gb_adamw(0.1, 0.01);
    default: {
        gb_rmsprop_options o = gb_rmsprop_defaults();
        o.learning_rate = gb_lr_constant(0.1);
        o.momentum = 0.5;
        o.centered = true;
        return gb_rmsprop_ex(&o);
    }
    }
}

/* Two steps (the second reads the slots the first wrote), then the
 * variable and every slot. */
static int run_apply(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    gb_optimizer *opt = c->opt[world];
    gb_variable *v = c->var[world], *slots[OC_MAX_OUT - 1];
    for (int step = 0; step < 2; step++)
        if (!gb_optimizer_apply_gradients(opt, in, 1, &v, 1)) return -1;
    int nslots = gb_optimizer_slot_variables(opt, slots, OC_MAX_OUT - 1);
    out[0] = gb_variable_value(v);
    for (int k = 0; k < nslots; k++) out[1 + k] = gb_variable_value(slots[k]);
    return gb_ok() ? 1 + nslots : -1;
}

static void gen_apply(op_case *c, int64_t b) {
    (void)b;
    make_variables(c, oc_uniform(-2, 2, 55, GB_SHAPE(2, 3)));
    OC_INPUTS(c, 0, oc_uniform(-2, 2, 56, GB_SHAPE(2, 3))); /* the gradient */
    for (int w = 0; w < OC_WORLDS; w++) {
        c->opt[w] = optimizer_for(c->op);
        gb_optimizer_build(c->opt[w], &c->var[w], 1); /* slots made outside the trace */
    }
    c->run = run_apply;
}

/* ---- graph-only nodes, and Print ----------------------------------------------------- */

static int run_placeholder(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)c, (void)world;
    out[0] = in[0];
    return 1;
}

static void gen_placeholder(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 57, GB_SHAPE(b, 3)));
    c->run = run_placeholder;
    c->graph_only = true;
}

static int run_const(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)world, (void)in;
    out[0] = c->value;
    return 1;
}

static void gen_const(op_case *c, int64_t b) {
    (void)b;
    c->value = oc_uniform(-2, 2, 58, GB_SHAPE(2, 3));
    c->run = run_const;
    c->graph_only = true;
}

/* FusedElementwise exists only after the fusion pass: the case writes a
 * chain the pass fuses (an input read in place, a broadcast row gathered,
 * a scalar spread), and eagerly runs the same chain unfused. */
static int run_fused(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)c, (void)world;
    gb_tensor *x = in[0], *row = in[1];
    out[0] = gb_mul_scalar(gb_tanh(gb_add(gb_mul(x, row), x)), 0.5);
    return out[0] ? 1 : -1;
}

static void gen_fused(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 60, GB_SHAPE(b, 3)), oc_uniform(-2, 2, 61, GB_SHAPE(3)));
    c->run = run_fused;
    c->graph_only = true;
}

static void gen_print(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_ints(10, 59, GB_SHAPE(b, 3)));
    c->attrs_text = "{message=\"x:\"}";
}

/* ---- tensor arrays: the batch is the array's size, index 0 fits every batch ---------- */

static void gen_tensor_array_write(op_case *c, int64_t b) { /* (ta, index, value) */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 60, GB_SHAPE(b, 3)), gb_scalar(GB_I64, 0),
              oc_uniform(-2, 2, 61, GB_SHAPE(3)));
}
static void gen_tensor_array_read(op_case *c, int64_t b) { /* (ta, index) */
    OC_INPUTS(c, 1, oc_uniform(-2, 2, 62, GB_SHAPE(b, 3)), gb_scalar(GB_I64, 0));
}

/* ---- control flow: run through gb_cond and gb_while_loop ---------------------------- */

static int oc_tanh_times(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_mul(gb_tanh(in[0]), in[1]);
    return 1;
}
static int oc_minus(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_sub(in[0], in[1]);
    return 1;
}

/* cond(sum(x) > 0, tanh(x) * y, x - y): either branch, as the data says. */
static int run_if(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)c, (void)world;
    gb_tensor *p = gb_greater(gb_reduce_sum(in[0], GB_ALL_AXES, false), gb_scalar(GB_F64, 0));
    return gb_cond(p, oc_tanh_times, oc_minus, in, 2, NULL, out);
}

static void gen_if(op_case *c, int64_t b) {
    gen_binary(c, b);
    c->run = run_if;
    c->run_makes_op = true;
}

static int oc_below_3(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_less(v[0], gb_scalar(GB_I64, 3));
    return 1;
}
static int oc_tanh_acc_times_x(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_add_scalar(v[0], 1);
    out[1] = gb_mul(gb_tanh(v[1]), v[2]);
    out[2] = v[2];
    return 3;
}

/* acc = x; 3 times: acc = tanh(acc) * x. */
static int run_while(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    (void)c, (void)world;
    gb_tensor *v[3] = {gb_scalar(GB_I64, 0), in[0], in[0]};
    if (gb_while_loop(oc_below_3, oc_tanh_acc_times_x, v, 3, NULL, v) != 3) return -1;
    out[0] = v[1];
    return 1;
}

static void gen_while(op_case *c, int64_t b) {
    gen_unary(c, b);
    c->run = run_while;
    c->run_makes_op = true;
}

/* ---- strings (no gradients: never differentiable) ------------------------------------ */

/* A batch of b words from a fixed list, cycling; offset picks the start. */
static gb_tensor *oc_words(int64_t b, int offset) {
    static const char *const words[] = {"Hello", "world", "", "a b  c", "x,y,,z", "\xc3\xa9t\xc3\xa9"};
    const char *w[64];
    for (int64_t i = 0; i < b && i < 64; i++) w[i] = words[(i + offset) % 6];
    return gb_strings(w, GB_SHAPE(b));
}

static void gen_strings(op_case *c, int64_t b) { OC_INPUTS(c, 1, oc_words(b, 0)); }
static void gen_string_join(op_case *c, int64_t b) {
    OC_INPUTS(c, 3, oc_words(b, 0), oc_words(b, 1), gb_string_scalar("!"));
    c->attrs_text = "{separator=\"-\"}";
}
static void gen_string_length(op_case *c, int64_t b) {
    gen_strings(c, b);
    c->attrs_text = "{unit=UTF8_CHAR}";
}
static void gen_substr(op_case *c, int64_t b) {
    gen_strings(c, b);
    c->attrs_text = "{pos=0, len=2, unit=UTF8_CHAR}";
}
static void gen_string_split(op_case *c, int64_t b) {
    gen_strings(c, b);
    c->attrs_text = "{sep=\"\", maxsplit=-1}";
}
/* b tokens in rows split 0, b/3, b/2, b (the batch is the tokens' count) */
static void gen_string_ngrams(op_case *c, int64_t b) {
    int64_t splits[4] = {0, b / 3, b / 2, b};
    OC_INPUTS(c, 1, oc_words(b, 0), gb_tensor_from(GB_I64, splits, GB_SHAPE(4)));
    c->attrs_text = "{separator=\" \", min_width=1, max_width=3}";
}
static void gen_hash_bucket(op_case *c, int64_t b) {
    gen_strings(c, b);
    c->attrs_text = "{num_buckets=7}";
}
static void gen_string_to_number(op_case *c, int64_t b) {
    const char *n[64];
    static const char *const nums[] = {"1.5", "-2", "3e2", "0.25"};
    for (int64_t i = 0; i < b && i < 64; i++) n[i] = nums[i % 4];
    OC_INPUTS(c, 1, gb_strings(n, GB_SHAPE(b)));
    c->attrs_text = "{out_type=float64}";
}
static void gen_as_string(op_case *c, int64_t b) {
    gen_unary(c, b);
    c->attrs_text = "{precision=3}";
}

static void gen_regex_full_match(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_words(b, 0), gb_string_scalar("[a-z ]*"));
}
static void gen_regex_replace(op_case *c, int64_t b) {
    OC_INPUTS(c, 1, oc_words(b, 0), gb_string_scalar("(o|l)+"), gb_string_scalar("<$1>"));
    c->attrs_text = "{replace_global=true}";
}

/* One table for every case: made on first use, kept for the process. */
static void gen_lookup_table_find(op_case *c, int64_t b) {
    static gb_lookup_table *table;
    if (!table) {
        gb_scope_begin();
        table = gb_static_hash_table_new(gb_strings((const char *const[]){"world", "", "Hello"},
                                                    GB_SHAPE(3)),
                                         gb_tensor_from(GB_I64, (const int64_t[]){7, 8, 9},
                                                        GB_SHAPE(3)),
                                         -1);
        gb_scope_end();
    }
    OC_INPUTS(c, 1, oc_words(b, 0));
    static char text[48];
    snprintf(text, sizeof text, "{table_id=%lld}", (long long)gb__lookup_table_id(table));
    c->attrs_text = text;
}

/* rows of b values split 0, 1, 3, ... (the batch is the values' count) */
static void gen_ragged(op_case *c, int64_t b) {
    int64_t splits[4] = {0, b / 3, b / 2, b};
    OC_INPUTS(c, 1, oc_ints(5, 40, GB_SHAPE(b)),
              gb_tensor_from(GB_I64, splits, GB_SHAPE(4)));
}
static void gen_ragged_to_tensor(op_case *c, int64_t b) {
    gen_ragged(c, b);
    c->attrs_text = "{length=4}";
}
static void gen_ragged_bincount(op_case *c, int64_t b) {
    gen_ragged(c, b);
    c->attrs_text = "{size=5, binary_output=false}";
}

static void gen_unicode_decode(op_case *c, int64_t b) {
    gen_strings(c, b);
    c->attrs_text = "{errors=strict}";
}
static void gen_unicode_encode(op_case *c, int64_t b) {
    int64_t splits[4] = {0, b / 3, b / 2, b};
    OC_INPUTS(c, 1, gb_cast(oc_ints(0x3000, 41, GB_SHAPE(b)), GB_I32),
              gb_tensor_from(GB_I64, splits, GB_SHAPE(4)));
    c->attrs_text = "{errors=replace}";
}
static void gen_decode_raw(op_case *c, int64_t b) {
    const char *w[64];
    static const char *const eight[] = {"abcdefgh", "01234567", "\x01\x02\x03\x04zzzz"};
    for (int64_t i = 0; i < b && i < 64; i++) w[i] = eight[i % 3];
    OC_INPUTS(c, 1, gb_strings(w, GB_SHAPE(b)));
    c->attrs_text = "{out_type=int32, little_endian=true}";
}

static void gen_decode_csv(op_case *c, int64_t b) {
    static const char *const lines[] = {"1.5,abc,7", "\"-2\",\"x,\"\"y\"\"\",", ",,-3"};
    const char *w[64];
    for (int64_t i = 0; i < b && i < 64; i++) w[i] = lines[i % 3];
    OC_INPUTS(c, 1, gb_strings(w, GB_SHAPE(b)), gb_scalar(GB_F64, 0.5), gb_string_scalar("none"),
              gb_scalar(GB_I64, 9));
    c->attrs_text = "{field_delim=\",\"}";
}

/* ---- the table ----------------------------------------------------------------------- */

static const op_case_gen op_cases[GB_OP_COUNT] = {
    [GB_OP_NEG] = gen_unary,
    [GB_OP_ABS] = gen_unary_nonzero,
    [GB_OP_SIGN] = gen_unary_nonzero,
    [GB_OP_EXP] = gen_unary,
    [GB_OP_LOG] = gen_unary_positive,
    [GB_OP_LOG1P] = gen_unary_positive,
    [GB_OP_SQRT] = gen_unary_positive,
    [GB_OP_RSQRT] = gen_unary_positive,
    [GB_OP_SQUARE] = gen_unary,
    [GB_OP_RECIPROCAL] = gen_unary_nonzero,
    [GB_OP_SIN] = gen_unary,
    [GB_OP_COS] = gen_unary,
    [GB_OP_TANH] = gen_unary,
    [GB_OP_SIGMOID] = gen_unary,
    [GB_OP_RELU] = gen_unary_nonzero,
    [GB_OP_LEAKY_RELU] = gen_leaky_relu,
    [GB_OP_ELU] = gen_unary_nonzero,
    [GB_OP_GELU] = gen_gelu,
    [GB_OP_SOFTPLUS] = gen_unary,
    [GB_OP_CAST] = gen_cast,
    [GB_OP_IDENTITY] = gen_unary,
    [GB_OP_STOP_GRADIENT] = gen_unary,
    [GB_OP_RELU_GRAD] = gen_relu_grad,
    [GB_OP_GELU_GRAD] = gen_gelu_grad,
    [GB_OP_SIGMOID_GRAD] = gen_sigmoid_grad,
    [GB_OP_TANH_GRAD] = gen_tanh_grad,
    [GB_OP_ADD] = gen_binary,
    [GB_OP_SUB] = gen_binary,
    [GB_OP_MUL] = gen_binary,
    [GB_OP_DIV] = gen_div,
    [GB_OP_POW] = gen_pow,
    [GB_OP_MAXIMUM] = gen_binary,
    [GB_OP_MINIMUM] = gen_binary,
    [GB_OP_EQUAL] = gen_compare,
    [GB_OP_NOT_EQUAL] = gen_compare,
    [GB_OP_LESS] = gen_compare,
    [GB_OP_LESS_EQUAL] = gen_compare,
    [GB_OP_GREATER] = gen_compare,
    [GB_OP_GREATER_EQUAL] = gen_compare,
    [GB_OP_SELECT] = gen_select,
    [GB_OP_SUM] = gen_reduce,
    [GB_OP_MEAN] = gen_reduce,
    [GB_OP_MAX] = gen_reduce,
    [GB_OP_MIN] = gen_reduce,
    [GB_OP_PROD] = gen_reduce,
    [GB_OP_ARGMAX] = gen_arg,
    [GB_OP_ARGMIN] = gen_arg,
    [GB_OP_RESHAPE] = gen_reshape,
    [GB_OP_TRANSPOSE] = gen_transpose,
    [GB_OP_BROADCAST_TO] = gen_broadcast_to,
    [GB_OP_SLICE] = gen_slice,
    [GB_OP_CONCAT] = gen_concat,
    [GB_OP_PAD] = gen_pad,
    [GB_OP_GATHER] = gen_gather,
    [GB_OP_SCATTER_ADD] = gen_scatter_add,
    [GB_OP_ONE_HOT] = gen_one_hot,
    [GB_OP_TENSOR_ARRAY_WRITE] = gen_tensor_array_write,
    [GB_OP_TENSOR_ARRAY_READ] = gen_tensor_array_read,
    [GB_OP_MATMUL] = gen_matmul,
    [GB_OP_BLOCK_LSTM] = gen_block_lstm,
    [GB_OP_BLOCK_LSTM_GRAD] = gen_block_lstm_grad,
    [GB_OP_LAYER_NORM] = gen_layer_norm,
    [GB_OP_DOT_PRODUCT_ATTENTION] = gen_attention,
    [GB_OP_DOT_PRODUCT_ATTENTION_GRAD] = gen_attention_grad,
    [GB_OP_LAYER_NORM_GRAD] = gen_layer_norm_grad,
    [GB_OP_CONV2D] = gen_conv2d,
    [GB_OP_CONV2D_BACKPROP_INPUT] = gen_conv2d_backprop_input,
    [GB_OP_CONV2D_BACKPROP_FILTER] = gen_conv2d_backprop_filter,
    [GB_OP_MAX_POOL] = gen_max_pool,
    [GB_OP_MAX_POOL_GRAD] = gen_max_pool_grad,
    [GB_OP_AVG_POOL] = gen_avg_pool,
    [GB_OP_AVG_POOL_GRAD] = gen_avg_pool_grad,
    [GB_OP_SOFTMAX] = gen_softmax,
    [GB_OP_LOG_SOFTMAX] = gen_log_softmax,
    [GB_OP_SPARSE_SOFTMAX_XENT] = gen_sparse_xent,
    [GB_OP_SOFTMAX_XENT] = gen_softmax_xent,
    [GB_OP_SOFTMAX_GRAD] = gen_softmax_grad,
    [GB_OP_MASKED_SOFTMAX] = gen_masked_softmax,
    [GB_OP_RANDOM_UNIFORM] = gen_random,
    [GB_OP_RANDOM_NORMAL] = gen_random,
    [GB_OP_TRUNCATED_NORMAL] = gen_random,
    [GB_OP_READ_VARIABLE] = gen_read_variable,
    [GB_OP_ASSIGN_VARIABLE] = gen_assign,
    [GB_OP_ASSIGN_ADD_VARIABLE] = gen_assign,
    [GB_OP_ASSIGN_SUB_VARIABLE] = gen_assign,
    [GB_OP_APPLY_GRADIENT_DESCENT] = gen_apply,
    [GB_OP_APPLY_MOMENTUM] = gen_apply,
    [GB_OP_APPLY_ADAM] = gen_apply,
    [GB_OP_APPLY_RMSPROP] = gen_apply,
    [GB_OP_CHECK_NUMERICS] = gen_check_numerics,
    [GB_OP_PLACEHOLDER] = gen_placeholder,
    [GB_OP_CONST] = gen_const,
    [GB_OP_PRINT] = gen_print,
    [GB_OP_FUSED_ELEMENTWISE] = gen_fused,
    [GB_OP_IF] = gen_if,
    [GB_OP_WHILE] = gen_while,
    [GB_OP_STRING_JOIN] = gen_string_join,
    [GB_OP_STRING_LENGTH] = gen_string_length,
    [GB_OP_SUBSTR] = gen_substr,
    [GB_OP_STRING_LOWER] = gen_strings,
    [GB_OP_STRING_UPPER] = gen_strings,
    [GB_OP_STRING_SPLIT] = gen_string_split,
    [GB_OP_STRING_NGRAMS] = gen_string_ngrams,
    [GB_OP_STRING_TO_HASH_BUCKET] = gen_hash_bucket,
    [GB_OP_STRING_TO_NUMBER] = gen_string_to_number,
    [GB_OP_AS_STRING] = gen_as_string,
    [GB_OP_REGEX_FULL_MATCH] = gen_regex_full_match,
    [GB_OP_REGEX_REPLACE] = gen_regex_replace,
    [GB_OP_LOOKUP_TABLE_FIND] = gen_lookup_table_find,
    [GB_OP_RAGGED_TO_TENSOR] = gen_ragged_to_tensor,
    [GB_OP_RAGGED_BINCOUNT] = gen_ragged_bincount,
    [GB_OP_UNICODE_DECODE] = gen_unicode_decode,
    [GB_OP_UNICODE_ENCODE] = gen_unicode_encode,
    [GB_OP_DECODE_RAW] = gen_decode_raw,
    [GB_OP_DECODE_CSV] = gen_decode_csv,
};

/* ---- making, running and freeing cases ----------------------------------------------- */

/* The case of op for a batch size; false (an assertion's message in
 * why) when op has no generator or generating failed. */
static bool op_case_make(gb_op_id op, int64_t batch, op_case *c, char *why, size_t n) {
    memset(c, 0, sizeof *c);
    c->op = op;
    if (!op_cases[op]) {
        snprintf(why, n,
                 "op %s has no input generator: add one to op_cases[] in tests/op_cases.h",
                 gb_op_type_name(op));
        return false;
    }
    op_cases[op](c, batch);
    if (gb_ok() && c->attrs_text && !gb__attrs_parse(op, c->attrs_text, &c->attrs, "op_cases.h")) {
        snprintf(why, n, "the attributes of %s's case: %s", gb_op_type_name(op), gb_error_string());
        return false;
    }
    if (gb_ok()) return true;
    snprintf(why, n, "the generator of %s failed: %s", gb_op_type_name(op), gb_error_string());
    return false;
}

static void op_case_free(op_case *c) {
    for (int w = 0; w < OC_WORLDS; w++) {
        gb_optimizer_free(c->opt[w]);
        gb_variable_free(c->var[w]);
    }
}

static int op_case_run(const op_case *c, int world, gb_tensor *const *in, gb_tensor **out) {
    if (c->run) return c->run(c, world, in, out);
    return gb__dispatch(c->op, in, c->nin, &c->attrs, out);
}

#endif
