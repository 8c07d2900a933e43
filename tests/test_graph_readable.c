/* test_graph_readable.c — traced graphs read like the model.
 *
 * Two train steps, traced as a person writes them: the Fashion-MNIST MLP
 * (784-256-128-10, ReLU, sparse cross-entropy, Adam) and a small
 * attention block (Q, K, V projections, softmax of QK^T scaled, times V,
 * an output projection; SGD, and d loss/d x). Their graphs, as traced and
 * after the passes, must show
 *   - attributes by name ({transpose_a=false, transpose_b=true}, {axes=[0],
 *     keepdims=false}), never slots;
 *   - variable ops naming their variable (ReadVariableOp 'attention/query/kernel',
 *     ResourceApplyAdam 'mlp/dense/kernel');
 *   - one gradient scope per forward node (gradients/attention/MatMul_3_grad/...),
 *     and no node of the step outside a scope but the inputs.
 * The texts are also written to graph_readable.txt in the working
 * directory (build/tests/), to be read whole.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "graph/internal.h"
#include "test_util.h"

/* ---- the two steps ------------------------------------------------------------------------ */

typedef struct mlp_step {
    gb_module *model;
    gb_optimizer *opt;
} mlp_step;

static int mlp_train_step(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    mlp_step *s = user;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *logits = gb_module_call(s->model, in[0], true);
    gb_name_scope_push("loss");
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(in[1], logits, true, GB_REDUCTION_MEAN);
    gb_name_scope_pop();
    gb_tape_end(tape);
    int n;
    gb_variable *const *vars = gb_module_trainable_variables(s->model, &n);
    gb_tensor *grads[8];
    if (!gb_tape_gradient_vars(tape, loss, vars, n, grads) ||
        !gb_optimizer_apply_gradients(s->opt, grads, n, vars, n))
        return -1;
    out[0] = loss;
    return 1;
}

typedef struct attention_step {
    gb_module *q, *k, *v, *o;
    gb_optimizer *opt;
} attention_step;

static int attention_train_step(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                                int nst, gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    attention_step *s = user;
    gb_tensor *x = in[0];
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_name_scope_push("attention");
    gb_tensor *q = gb_module_call(s->q, x, true), *k = gb_module_call(s->k, x, true);
    gb_tensor *v = gb_module_call(s->v, x, true);
    gb_tensor *scores = gb_mul_scalar(gb_matmul_t(q, k, false, true), 0.5);
    gb_tensor *y = gb_module_call(s->o, gb_matmul(gb_softmax(scores, -1), v), true);
    gb_name_scope_pop();
    gb_name_scope_push("loss");
    gb_tensor *loss = gb_reduce_mean(gb_square(y), GB_ALL_AXES, false);
    gb_name_scope_pop();
    gb_tape_end(tape);
    gb_variable *vars[4];
    gb_source src[5] = {{.tensor = x}};
    gb_module *layers[4] = {s->q, s->k, s->v, s->o};
    for (int i = 0; i < 4; i++) {
        int n;
        vars[i] = gb_module_trainable_variables(layers[i], &n)[0];
        src[1 + i].variable = vars[i];
    }
    gb_tensor *g[5];
    if (!gb_tape_gradient_ex(tape, &loss, 1, NULL, src, 5, GB_UNCONNECTED_NONE, g) ||
        !gb_optimizer_apply_gradients(s->opt, g + 1, 4, vars, 4))
        return -1;
    out[0] = loss;
    out[1] = g[0];
    return 2;
}

/* The MLP, with a BatchNormalization after its first layer when asked. */
static gb_function *mlp_function(mlp_step *s, bool batch_norm) {
    s->model = gb_sequential_new("mlp");
    gb_sequential_add(s->model, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    if (batch_norm) gb_sequential_add(s->model, gb_batch_norm_new(NULL));
    gb_sequential_add(s->model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(s->model, gb_dense_new(10, NULL));
    s->opt = gb_adam(1e-3);
    static const gb_tensor_spec sig[2] = {{.name = "images", .dtype = GB_F32, .rank = 2, .shape = {-1, 784}},
                                          {.name = "labels", .dtype = GB_I32, .rank = 1, .shape = {-1}}};
    gb_function *f = gb_function_new("train_step", mlp_train_step,
                                     &(gb_function_options){.user = s, .input_signature = sig, .ninput_signature = 2});
    ck_assert_msg(gb_function_get_concrete(f, sig, 2, NULL, 0) != NULL, "%s", gb_error_string());
    return f;
}

static gb_function *attention_function(attention_step *s) {
    static const char *const names[4] = {"query", "key", "value", "output"};
    gb_module **layers[4] = {&s->q, &s->k, &s->v, &s->o};
    for (int i = 0; i < 4; i++)
        *layers[i] = gb_dense_new(8, &(gb_dense_options){.name = names[i], .no_bias = true});
    s->opt = gb_sgd(0.1);
    static const gb_tensor_spec sig[1] = {{.name = "x", .dtype = GB_F32, .rank = 3, .shape = {-1, 6, 8}}};
    gb_function *f = gb_function_new("attention_step", attention_train_step,
                                     &(gb_function_options){.user = s, .input_signature = sig, .ninput_signature = 1});
    ck_assert_msg(gb_function_get_concrete(f, sig, 1, NULL, 0) != NULL, "%s", gb_error_string());
    return f;
}

/* ---- what a graph text must show ------------------------------------------------------------ */

static void assert_line(const char *text, const char *line) {
    char want[1024];
    snprintf(want, sizeof want, "\n%s\n", line);
    ck_assert_msg(strstr(text, want) || strncmp(text, want + 1, strlen(want + 1)) == 0,
                  "no line\n%s\nin\n%.3000s", line, text);
}

/* A part of a line (the optimizer's id depends on how many the process made). */
static void assert_text(const char *text, const char *part) {
    ck_assert_msg(strstr(text, part), "no\n%s\nin\n%.3000s", part, text);
}

/* The node names of a graph text, one per line before " = ". */
static int node_names(const char *text, char names[][160], int cap) {
    int n = 0;
    for (const char *p = text; *p && n < cap; p = strchr(p, '\n') + 1) {
        const char *eq = strstr(p, " = ");
        const char *nl = strchr(p, '\n');
        if (eq && eq < nl) snprintf(names[n++], 160, "%.*s", (int)(eq - p), p);
        if (!nl) break;
    }
    return n;
}

static bool has_node(char names[][160], int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

/* No slot is shown; every node but the inputs sits in a scope; a node of
 * the backward pass sits in "gradients/<forward node>_grad/", the forward
 * node one of the graph as traced. */
static void assert_readable(const char *text, const char *traced, const char *const *inputs, int ninputs) {
    ck_assert_msg(!strstr(text, "{i=") && !strstr(text, " i=["), "slots shown:\n%.3000s", text);
    static char names[1024][160], traced_names[1024][160];
    int n = node_names(text, names, 1024), nt = node_names(traced, traced_names, 1024);
    for (int i = 0; i < n; i++) {
        bool input = false;
        for (int k = 0; k < ninputs; k++) input |= strcmp(names[i], inputs[k]) == 0;
        ck_assert_msg(input || strchr(names[i], '/'), "node '%s' is in no scope", names[i]);
        if (strncmp(names[i], "gradients/", 10) != 0) continue;
        const char *grad = strstr(names[i], "_grad/");
        ck_assert_msg(grad != NULL, "'%s' is in no gradient scope", names[i]);
        char forward[160];
        snprintf(forward, sizeof forward, "%.*s", (int)(grad - names[i] - 10), names[i] + 10);
        ck_assert_msg(has_node(traced_names, nt, forward), "'%s' is the gradient of '%s', no node of the graph",
                      names[i], forward);
    }
}

static void write_texts(const char *mode, const char *title, gb_function *f) {
    FILE *out = fopen("graph_readable.txt", mode);
    ck_assert_ptr_nonnull(out);
    fprintf(out, "==== %s, as traced\n%s\n==== %s, after the passes\n%s\n", title,
            gb_function_traced_graph_text(f), title, gb_function_graph_text(f));
    fclose(out);
}

/* ---- the tests ---------------------------------------------------------------------------- */

START_TEST(test_mlp_train_step_reads_like_the_model) {
    mlp_step s;
    gb_function *f = mlp_function(&s, false);
    const char *traced = gb_function_traced_graph_text(f), *optimized = gb_function_graph_text(f);
    write_texts("w", "Fashion-MNIST MLP train step", f);
    const char *inputs[] = {"images", "labels"};
    assert_readable(traced, traced, inputs, 2);
    assert_readable(optimized, traced, inputs, 2);
    for (int k = 0; k < 2; k++) {
        const char *text = k ? optimized : traced;
        assert_line(text, "images = Placeholder() {index=0} -> float32[-1,784]");
        assert_line(text, "mlp/dense/ReadVariableOp = ReadVariableOp 'mlp/dense/kernel'() -> float32[784,256]");
        assert_line(text, "mlp/dense/MatMul = MatMul(images, mlp/dense/ReadVariableOp) "
                          "{transpose_a=false, transpose_b=false} -> float32[-1,256]");
        assert_line(text, "mlp/dense_1/ReadVariableOp_1 = ReadVariableOp "
                          "'mlp/dense_1/bias'(^mlp/dense_1/ReadVariableOp) -> float32[128]");
        assert_line(text, "loss/Mean = Mean(loss/SparseSoftmaxCrossEntropyWithLogits) "
                          "{axes=[0], keepdims=false} -> float32[]");
        assert_line(text, "gradients/loss/SparseSoftmaxCrossEntropyWithLogits_grad/OneHot = OneHot(labels) "
                          "{depth=10, dtype=float32, on_value=1, off_value=0} -> float32[-1,10]");
        assert_line(text, "gradients/mlp/dense_1/MatMul_grad/MatMul_1 = MatMul(mlp/dense/Relu, "
                          "gradients/mlp/dense_1/Relu_grad/ReluGrad) {transpose_a=true, transpose_b=false} "
                          "-> float32[256,128]");
    }
    /* The bias gradient's Reshape to its own shape is gone after the passes. */
    assert_text(optimized, "\nAdam/ResourceApplyAdam_5 = ResourceApplyAdam 'mlp/dense_2/bias'("
                           "gradients/mlp/dense_2/Add_grad/Sum, ^Adam/ResourceApplyAdam_4) {beta_1=0.9, "
                           "beta_2=0.999, epsilon=1e-07, weight_decay=0, "
                           "slots=['Adam/mlp/dense_2/bias/m','Adam/mlp/dense_2/bias/v'], optimizer_id=");
    /* The stored graph (a trace's detail, the Graphs page): attrs by name. */
    char *json = gb__concrete_graph_json(f->latest, false);
    assert_text(json, "{\"name\":\"mlp/dense/ReadVariableOp\",\"op\":\"ReadVariableOp\",\"device\":\"CPU:0\","
                      "\"inputs\":[],\"control\":[],\"attrs\":{\"variable\":\"mlp/dense/kernel\"},");
    assert_text(json, "\"attrs\":{\"transpose_a\":false,\"transpose_b\":true}");
    assert_text(json, "\"attrs\":{\"axes\":[0],\"keepdims\":false}");
    assert_text(json, "\"attrs\":{\"variable\":\"mlp/dense_2/bias\",\"beta_1\":0.9,\"beta_2\":0.999,"
                      "\"epsilon\":1e-07,\"weight_decay\":0,\"slots\":[\"Adam/mlp/dense_2/bias/m\","
                      "\"Adam/mlp/dense_2/bias/v\"],\"optimizer_id\":");
    free(json);
    gb_function_free(f);
    gb_optimizer_free(s.opt);
    gb_module_free(s.model);
}
END_TEST

START_TEST(test_attention_step_has_a_gradient_scope_per_matmul) {
    attention_step s;
    gb_function *f = attention_function(&s);
    const char *traced = gb_function_traced_graph_text(f), *optimized = gb_function_graph_text(f);
    write_texts("a", "attention block train step", f);
    const char *inputs[] = {"x"};
    assert_readable(traced, traced, inputs, 1);
    assert_readable(optimized, traced, inputs, 1);
    assert_line(traced, "attention/query/ReadVariableOp = ReadVariableOp 'attention/query/kernel'() -> float32[8,8]");
    assert_line(traced, "attention/MatMul = MatMul(attention/query/MatMul, attention/key/MatMul) "
                        "{transpose_a=false, transpose_b=true} -> float32[-1,6,6]");
    assert_line(traced, "attention/Softmax = Softmax(attention/Mul) {axis=-1} -> float32[-1,6,6]");
    /* Q^T K, softmax times V and the four projections: each MatMul its own scope. */
    static const char *const scopes[] = {
        "gradients/attention/MatMul_grad/", "gradients/attention/MatMul_1_grad/",
        "gradients/attention/query/MatMul_grad/", "gradients/attention/key/MatMul_grad/",
        "gradients/attention/value/MatMul_grad/", "gradients/attention/output/MatMul_grad/"};
    for (size_t k = 0; k < sizeof scopes / sizeof scopes[0]; k++)
        ck_assert_msg(strstr(traced, scopes[k]), "no scope %s", scopes[k]);
    /* x feeds three projections: d loss/d x sums their gradients, named so. */
    assert_line(traced, "gradients/attention/query/MatMul_grad/AccumulateGrad = "
                        "Add(gradients/attention/key/MatMul_grad/AccumulateGrad, "
                        "gradients/attention/query/MatMul_grad/MatMul) -> float32[-1,6,8]");
    ck_assert_msg(strstr(traced, "return (loss/Mean, gradients/attention/query/MatMul_grad/AccumulateGrad)\n"), "%.3000s", traced);
    assert_text(traced, "\nSGD/ResourceApplyGradientDescent = ResourceApplyGradientDescent "
                        "'attention/query/kernel'(gradients/attention/query/MatMul_grad/MatMul_1, "
                        "^attention/output/ReadVariableOp) {weight_decay=0, slots=[], optimizer_id=");
    gb_function_free(f);
    gb_optimizer_free(s.opt);
    gb_module_free(s.q), gb_module_free(s.k), gb_module_free(s.v), gb_module_free(s.o);
}
END_TEST

/* BatchNormalization's gradient sums what flows back through its batch
 * mean and variance: every sum in its layer's gradient scopes, none at the
 * top level. */
START_TEST(test_batch_norm_gradients_are_scoped) {
    mlp_step s;
    gb_function *f = mlp_function(&s, true);
    const char *traced = gb_function_traced_graph_text(f);
    const char *inputs[] = {"images", "labels"};
    assert_readable(traced, traced, inputs, 2);
    assert_readable(gb_function_graph_text(f), traced, inputs, 2);
    assert_text(traced, "\ngradients/mlp/batch_normalization/Mean_grad/AccumulateGrad = Add(");
    gb_function_free(f);
    gb_optimizer_free(s.opt);
    gb_module_free(s.model);
}
END_TEST

/* Writes name their variable too. */
static int count_and_reset(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                           gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_variable *const *v = user;
    gb_name_scope_push("metrics");
    bool ok = gb_variable_assign_add(v[0], in[0]) && gb_variable_assign(v[1], in[0]) &&
              gb_variable_assign_sub(v[1], in[0]);
    gb_name_scope_pop();
    out[0] = in[0];
    return ok ? 1 : -1;
}

START_TEST(test_assigns_name_their_variable) {
    gb_variable *v[2] = {gb_variable_new("metrics/count", gb_zeros(GB_F32, GB_SHAPE(2)), false),
                         gb_variable_new("metrics/last", gb_zeros(GB_F32, GB_SHAPE(2)), false)};
    gb_function *f = gb_function_new("count", count_and_reset, &(gb_function_options){.user = v});
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(2)), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_str_eq(gb_function_traced_graph_text(f),
                     "x0 = Placeholder() {index=0} -> float32[2]\n"
                     "metrics/AssignAddVariableOp = AssignAddVariableOp 'metrics/count'(x0)\n"
                     "metrics/AssignVariableOp = AssignVariableOp 'metrics/last'(x0, ^metrics/AssignAddVariableOp)\n"
                     "metrics/AssignSubVariableOp = AssignSubVariableOp 'metrics/last'(x0, ^metrics/AssignVariableOp)\n"
                     "return (x0)\n");
    gb_function_free(f);
    gb_variable_free(v[0]), gb_variable_free(v[1]);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_readable");
    TCase *tc = tcase_create("readable");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_mlp_train_step_reads_like_the_model);
    tcase_add_test(tc, test_attention_step_has_a_gradient_scope_per_matmul);
    tcase_add_test(tc, test_batch_norm_gradients_are_scoped);
    tcase_add_test(tc, test_assigns_name_their_variable);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
