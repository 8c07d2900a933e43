/* test_graph_ops.c — every op of ops.def, traced against eager, driven by
 * the one input generator per op of op_cases.h.
 *
 * For each op (a loop test over gb_op_id, so a failure names the op):
 *   - traced (called on a function's symbolic inputs) and eager runs give
 *     the same outputs bit for bit and print the same (only Print prints),
 *     and the graph holds a node of the op; Placeholder and Const refuse
 *     to run eagerly;
 *   - with a -1 batch in the input signature, one trace serves three batch
 *     sizes, each bit for bit as eager;
 *   - an op with a gradient passes a finite-difference check, and the same
 *     gradient taken by a tape inside a traced function is bit for bit the
 *     eager one.
 * The executor runs the kernels the dispatcher runs, on the same inputs,
 * so no tolerance is needed anywhere. Random ops compare the graph's first
 * run (later runs draw anew, checked apart); stateful ops compare the
 * variables they leave. An op without a generator fails every test.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "graph/internal.h"
#include "graph_test_util.h"
#include "op_cases.h"
#include "stdout_capture.h"
#include "test_util.h"

enum { BATCH = 3 };
/* Besides BATCH, for the trace with a -1 batch: 1 broadcasts like no other. */
static const int64_t other_batches[] = {1, 5};

/* ---- cases --------------------------------------------------------------------------- */

static void make_case(gb_op_id op, int64_t batch, op_case *c) {
    char why[256];
    ck_assert_msg(op_case_make(op, batch, c, why, sizeof why), "%s", why);
}

static bool attrs_equal(const gb_attrs *a, const gb_attrs *b) {
    return a->ni == b->ni && memcmp(a->i, b->i, sizeof a->i) == 0 &&
           memcmp(a->f, b->f, sizeof a->f) == 0 && strcmp(a->s, b->s) == 0 &&
           a->nvars == b->nvars && memcmp(a->vars, b->vars, sizeof a->vars) == 0;
}

/* ---- runs ---------------------------------------------------------------------------- */

/* What one run of a case left: its outputs and what it printed. */
typedef struct run_result {
    int n;
    gb_tensor *out[OC_MAX_OUT];
    char printed[512];
} run_result;

static void run_eager(const op_case *c, run_result *r) {
    capture cp;
    capture_begin(&cp);
    r->n = op_case_run(c, 0, c->in, r->out);
    capture_end(&cp, r->printed, sizeof r->printed);
    ck_assert_msg(r->n >= 0 && gb_ok(), "%s eagerly: %s", gb_op_type_name(c->op),
                  gb_error_string());
}

/* The case run in the traced world, on the function's symbolic inputs. */
static int traced_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    return op_case_run(user, 1, in, out);
}

static gb_function *traced_op(const op_case *c, const gb_tensor_spec *signature, int n) {
    gb_function_options o = {
        .user = (void *)c, .input_signature = signature, .ninput_signature = n};
    gb_function *f = gb_function_new(gb_op_type_name(c->op), traced_body, &o);
    ck_assert_ptr_nonnull(f);
    return f;
}

static void run_traced(gb_function *f, const op_case *c, run_result *r) {
    capture cp;
    capture_begin(&cp);
    r->n = gb_function_call(f, c->in, c->nin, NULL, 0, r->out);
    capture_end(&cp, r->printed, sizeof r->printed);
    ck_assert_msg(r->n >= 0 && gb_ok(), "%s traced: %s", gb_op_type_name(c->op),
                  gb_error_string());
}

static void assert_same_outputs(const op_case *c, const run_result *eager,
                                const run_result *traced, const char *when) {
    const char *op = gb_op_type_name(c->op);
    ck_assert_msg(traced->n == eager->n, "%s%s: %d outputs traced, %d eager", op, when, traced->n,
                  eager->n);
    for (int k = 0; k < eager->n; k++) {
        char what[128];
        snprintf(what, sizeof what, "%s%s: output %d", op, when, k);
        assert_bitwise(eager->out[k], traced->out[k], what);
    }
}

/* The same outputs, and the same printed (only Print prints). */
static void assert_same_runs(const op_case *c, const run_result *eager, const run_result *traced,
                             const char *when) {
    const char *op = gb_op_type_name(c->op);
    assert_same_outputs(c, eager, traced, when);
    ck_assert_msg(strcmp(traced->printed, eager->printed) == 0,
                  "%s%s: printed '%s' traced, '%s' eager", op, when, traced->printed,
                  eager->printed);
    ck_assert_msg((eager->printed[0] != '\0') == (c->op == GB_OP_PRINT),
                  "%s%s: printed '%s' (only Print prints)", op, when, eager->printed);
}

/* The graph of f's latest trace has a node of c's op. */
/* The op is a node of the graph as traced (Identity & co. are bypassed
 * by the passes) or of the optimized one (FusedElementwise is made by
 * them). */
static void assert_graph_has_op(gb_function *f, const op_case *c) {
    char node[96], var_node[96]; /* a variable op names its variable after its type */
    snprintf(node, sizeof node, " = %s(", gb_op_type_name(c->op));
    snprintf(var_node, sizeof var_node, " = %s '", gb_op_type_name(c->op));
    const char *traced = gb_function_traced_graph_text(f), *graph = gb_function_graph_text(f);
    ck_assert_msg(strstr(traced, node) || strstr(graph, node) || strstr(traced, var_node),
                  "%s: no such node in the traced graph:\n%s\nnor in the optimized one:\n%s",
                  gb_op_type_name(c->op), traced, graph);
}

/* Placeholder and Const exist only in graphs. */
static void assert_refuses_eager(const op_case *c) {
    gb_tensor *out[OC_MAX_OUT];
    ck_assert_int_eq(gb__dispatch(c->op, NULL, 0, &c->attrs, out), -1);
    const gb_error *e = check_error(GB_ERR_STATE, "exists only in traced graphs");
    ck_assert_str_eq(e->op_type, gb_op_type_name(c->op));
    gb_clear_error();
}

/* ---- attributes outside their type --------------------------------------------------- */

/* An enum, bool, dtype or axes attribute holding a value of no name (one
 * past its names, 2^32, which an int would read as 0, 2, a dtype past the
 * last, an axis past the maximum rank) is refused when the op runs: the
 * op would otherwise run on a value that saves as no name and loads as
 * another. */
START_TEST(test_attributes_outside_their_type_are_refused) {
    gb_op_id op = (gb_op_id)_i;
    if (op == GB_OP_PLACEHOLDER || op == GB_OP_CONST) return;
    int n;
    const gb_attr_def *defs = gb__op_attrs(op, &n);
    for (int k = 0; k < n; k++) {
        const gb_attr_def *d = &defs[k];
        int64_t bad[2] = {0, 0};
        int nbad = 0;
        if (d->type == GB_ATTR_ENUM) {
            while (d->names[bad[0]]) bad[0]++;
            bad[1] = INT64_C(1) << 32;
            nbad = 2;
        } else if (d->type == GB_ATTR_BOOL) {
            bad[0] = 2, bad[1] = INT64_C(1) << 32, nbad = 2;
        } else if (d->type == GB_ATTR_DTYPE) {
            bad[0] = GB_DTYPE_COUNT, bad[1] = -1, nbad = 2;
        } else if (d->type == GB_ATTR_AXES) {
            bad[0] = INT64_C(1) << GB_MAX_RANK, nbad = 1;
        }
        for (int b = 0; b < nbad; b++) {
            gb_scope_begin();
            op_case c;
            make_case(op, BATCH, &c);
            c.attrs.i[d->slot] = bad[b];
            if (c.attrs.ni <= d->slot) c.attrs.ni = d->slot + 1;
            gb_tensor *out[OC_MAX_OUT];
            int got = gb__dispatch(c.op, c.in, c.nin, &c.attrs, out);
            ck_assert_msg(got < 0, "%s ran with attribute '%s' = %lld", gb_op_type_name(op),
                          d->name, (long long)bad[b]);
            const gb_error *e = gb_last_error();
            ck_assert_msg(e && e->message[0], "%s refused '%s' without a message",
                          gb_op_type_name(op), d->name);
            gb_clear_error();
            gb_scope_end();
        }
    }
}
END_TEST

START_TEST(test_schema_names_the_attribute) {
    /* Conv2D's own check reads padding as an int: 2^32 was VALID. */
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(1, 4, 4, 1)), *w = gb_ones(GB_F32, GB_SHAPE(2, 2, 1, 1));
    gb_attrs a = {.i = {1, 1, 1, 1, INT64_C(1) << 32}, .ni = 5};
    gb_tensor *out[1];
    ck_assert_int_eq(gb__dispatch(GB_OP_CONV2D, (gb_tensor *[]){x, w}, 2, &a, out), -1);
    check_error(GB_ERR_VALUE, "Conv2D: attribute 'padding' is 4294967296, not one of VALID, SAME");
    gb_clear_error();
}
END_TEST

/* ---- the generators ------------------------------------------------------------------ */

START_TEST(test_every_op_has_a_generator) {
    for (int op = 0; op < GB_OP_COUNT; op++)
        ck_assert_msg(op_cases[op] != NULL,
                      "op %s has no input generator: add one to op_cases[] in tests/op_cases.h",
                      gb_op_type_name((gb_op_id)op));
}
END_TEST

/* ---- attributes by name ---------------------------------------------------------------- */

/* Whether op's schema has attributes a case gives (a count follows from
 * its list). */
static bool has_given_attrs(gb_op_id op) {
    int n;
    const gb_attr_def *d = gb__op_attrs(op, &n);
    for (int k = 0; k < n; k++)
        if (d[k].type != GB_ATTR_COUNT) return true;
    return false;
}

/* A case that dispatches an op with attributes gives them by name; they
 * print back word for word, so the printer and the parser agree. */
START_TEST(test_cases_give_attributes_by_name) {
    gb_op_id op = (gb_op_id)_i;
    op_case c;
    make_case(op, BATCH, &c);
    if (!c.run && has_given_attrs(op))
        ck_assert_msg(c.attrs_text != NULL, "%s: its case must give its attributes by name "
                      "(attrs_text), as ops.def declares them", gb_op_type_name(op));
    if (c.attrs_text) {
        char back[512];
        gb__attrs_print(op, &c.attrs, &(gb_attrs_style){0}, back, sizeof back);
        ck_assert_str_eq(back, c.attrs_text);
    }
    op_case_free(&c);
}
END_TEST

/* A variable by its id, so a printed node's attributes parse back. */
static bool var_as_id(void *user, int64_t id, char *buf, size_t n) {
    (void)user;
    return snprintf(buf, n, "%lld", (long long)id) > 0;
}

/* Every node each op's case traces — the op, and what the public
 * functions of variable ops, updates, If and While make — holds only
 * attributes of its schema: printed (both styles) and parsed back, they
 * are the node's, slot for slot. */
START_TEST(test_node_attributes_round_trip_through_the_schema) {
    op_case c;
    make_case((gb_op_id)_i, BATCH, &c);
    gb_function *f = traced_op(&c, NULL, 0);
    run_result traced;
    run_traced(f, &c, &traced);
    const gb_graph *g = &f->latest->traced;
    for (int i = 0; i < g->n; i++) {
        const gb_node *nd = &g->nodes[i];
        for (int json = 0; json < 2; json++) {
            char text[1024];
            gb_attrs_style st = {.json = json, .var = var_as_id};
            ck_assert_int_lt(gb__attrs_print(nd->op, &nd->attrs, &st, text, sizeof text), (int)sizeof text);
            gb_attrs back;
            ck_assert_msg(gb__attrs_parse(nd->op, text, &back, "test"), "%s", gb_error_string());
            ck_assert_msg(attrs_equal(&nd->attrs, &back), "%s (%s): %s does not read back as the node's slots",
                          nd->name, gb_op_type_name(nd->op), text);
        }
    }
    gb_function_free(f);
    op_case_free(&c);
}
END_TEST

/* What the printer writes, word for word, and what the parser refuses. */
START_TEST(test_attribute_text_word_for_word) {
    gb_attrs a = {.i = {4, 1}, .ni = 2};
    char buf[256];
    gb__attrs_print(GB_OP_MEAN, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{axes=[2], keepdims=true}");
    gb__attrs_print(GB_OP_MEAN, &a, &(gb_attrs_style){.json = true}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{\"axes\":[2],\"keepdims\":true}");
    a = (gb_attrs){.i = {0, 1}, .ni = 2};
    gb__attrs_print(GB_OP_MATMUL, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{transpose_a=false, transpose_b=true}");
    a = (gb_attrs){.i = {2, 2, 1, 1, GB_PADDING_SAME}, .ni = 5};
    gb__attrs_print(GB_OP_CONV2D, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{strides=[2,2], dilations=[1,1], padding=SAME}");
    a = (gb_attrs){.f = {NAN}};
    gb__attrs_print(GB_OP_LEAKY_RELU, &a, &(gb_attrs_style){.json = true}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{\"alpha\":\"nan\"}");
    a = (gb_attrs){.f = {0.1}};
    gb__attrs_print(GB_OP_LEAKY_RELU, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{alpha=0.1}");
    gb__attrs_print(GB_OP_ADD, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
    /* A rank-0 Pad has no pairs: printed and read back as an empty list. */
    a = (gb_attrs){.f = {3}};
    gb__attrs_print(GB_OP_PAD, &a, &(gb_attrs_style){0}, buf, sizeof buf);
    ck_assert_str_eq(buf, "{paddings=[], constant_value=3}");
    gb_attrs back;
    ck_assert_msg(gb__attrs_parse(GB_OP_PAD, buf, &back, "t"), "%s", gb_error_string());
    ck_assert_int_eq(back.ni, 0);
    ck_assert(back.f[0] == 3);
    static const struct {
        gb_op_id op;
        const char *text, *error;
    } bad[] = {
        {GB_OP_MEAN, "{axes=[2]}", "t: Mean attribute 'keepdims': is missing"},
        {GB_OP_MEAN, "{axes=[2,2], keepdims=true}", "t: Mean attribute 'axes': axis 2 is listed twice"},
        {GB_OP_MEAN, "{axes=[2], keepdims=1}", "t: Mean attribute 'keepdims': must be true or false"},
        {GB_OP_MATMUL, "{transpose_a=false, transpose_c=true}", "t: MatMul has no attribute 'transpose_c'"},
        {GB_OP_CONV2D, "{strides=[2], dilations=[1,1], padding=SAME}", "t: Conv2D attribute 'strides': must have 2 entries, not 1"},
        {GB_OP_CONV2D, "{strides=[2,2], dilations=[1,1], padding=FULL}", "t: Conv2D attribute 'padding': 'FULL' is not one of its values"},
        {GB_OP_CAST, "{dtype=float16}", "t: Cast attribute 'dtype': 'float16' is not a dtype"},
        {GB_OP_SLICE, "{begin=[0,1], size=[3]}", "t: Slice attribute 'size': has 1 entries where the list before it has 2"},
        {GB_OP_SCATTER_ADD, "{axis=0, rank=2, shape=[5,3]}", "t: ScatterAdd attribute 'rank': follows from its list; it is not given"},
        {GB_OP_SOFTMAX, "{axis=-1", "t: Softmax attributes: ',' or '}' is expected at offset 8"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert(!gb__attrs_parse(bad[k].op, bad[k].text, &a, "t"));
        check_error(GB_ERR_VALUE, bad[k].error);
        ck_assert_str_eq(gb_last_error()->message, bad[k].error);
        gb_clear_error();
    }
}
END_TEST

/* ---- traced against eager ------------------------------------------------------------ */

START_TEST(test_traced_matches_eager) {
    op_case c;
    make_case((gb_op_id)_i, BATCH, &c);
    if (c.graph_only) assert_refuses_eager(&c);
    run_result eager, traced;
    run_eager(&c, &eager);
    gb_function *f = traced_op(&c, NULL, 0);
    run_traced(f, &c, &traced);
    assert_same_runs(&c, &eager, &traced, "");
    assert_graph_has_op(f, &c);
    gb_function_free(f);
    op_case_free(&c);
}
END_TEST

/* ---- a -1 batch ---------------------------------------------------------------------- */

/* The inputs' specs with dim 0 of the batched ones unknown. */
static void batch_signature(const op_case *c, gb_tensor_spec *spec) {
    for (int i = 0; i < c->nin; i++) {
        spec[i] = (gb_tensor_spec){.dtype = gb_tensor_dtype(c->in[i]), .rank = gb_rank(c->in[i])};
        memcpy(spec[i].shape, gb_shape(c->in[i]), (size_t)spec[i].rank * sizeof(int64_t));
        if (c->batched >> i & 1) spec[i].shape[0] = -1;
    }
}

static void assert_batch_runs_like_eager(gb_function *f, const op_case *c) {
    char when[48];
    snprintf(when, sizeof when, " (batch %lld of a -1 trace)", (long long)gb_dim(c->in[0], 0));
    run_result eager, traced;
    run_eager(c, &eager);
    run_traced(f, c, &traced);
    assert_same_runs(c, &eager, &traced, when);
}

START_TEST(test_unknown_batch_matches_eager) {
    op_case c;
    make_case((gb_op_id)_i, BATCH, &c);
    if (!c.batched) { /* its shapes are attributes (random ops, BroadcastTo) or variables' */
        op_case_free(&c);
        return;
    }
    gb_tensor_spec spec[OC_MAX_IN];
    batch_signature(&c, spec);
    gb_function *f = traced_op(&c, spec, c.nin);
    assert_batch_runs_like_eager(f, &c);
    for (size_t k = 0; k < sizeof other_batches / sizeof other_batches[0]; k++) {
        op_case d;
        make_case(c.op, other_batches[k], &d);
        ck_assert_msg(attrs_equal(&c.attrs, &d.attrs), "%s: the generator's attributes depend "
                      "on the batch size; one trace cannot serve them all", gb_op_type_name(c.op));
        assert_batch_runs_like_eager(f, &d);
        op_case_free(&d);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
    op_case_free(&c);
}
END_TEST

/* ---- gradients ----------------------------------------------------------------------- */

/* A differentiable op's case dispatches it (no run of its own), in any
 * world; gradcheck's view of it. */
static gb_tensor *op_output(gb_tensor *const *xs, int n, void *user) {
    (void)n;
    gb_tensor *out[OC_MAX_OUT];
    return op_case_run(user, 0, xs, out) == 1 ? out[0] : NULL;
}

/* The case of op _i when the op has a gradient; false (nothing to check)
 * otherwise. */
static bool make_differentiable_case(gb_op_id op, op_case *c) {
    make_case(op, BATCH, c);
    if (!gb_op_table[op]->grad) {
        op_case_free(c);
        return false;
    }
    ck_assert_msg(!c->run || c->run_makes_op,
                  "%s has a gradient: its case must dispatch it (or run the public function "
                  "that makes it)",
                  gb_op_type_name(op));
    return true;
}

START_TEST(test_gradient_finite_differences) {
    op_case c;
    if (!make_differentiable_case((gb_op_id)_i, &c)) return;
    char msg[256];
    bool ok = gc_check(op_output, c.in, c.nin, &c, msg, sizeof msg);
    ck_assert_msg(ok, "%s: gradient check failed: %s", gb_op_type_name(c.op), msg);
    op_case_free(&c);
}
END_TEST

/* Inputs: the case's, then the weights w of L = sum(w * y). Outputs: dL
 * for each float input, from a tape begun here (inside the function when
 * traced). */
static int gradient_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    const op_case *c = user;
    gb_tape *tape = gb_tape_begin();
    gb_source src[OC_MAX_IN];
    int nsrc = 0;
    for (int i = 0; i < c->nin; i++) {
        if (!gb_dtype_is_float(gb_tensor_dtype(in[i]))) continue;
        gb_tape_watch(tape, in[i]);
        src[nsrc++] = GB_SRC(in[i]);
    }
    gb_tensor *loss = gb_reduce_sum(gb_mul(op_output(in, c->nin, user), in[c->nin]), GB_ALL_AXES,
                                    false);
    gb_tape_end(tape);
    if (!loss) return -1;
    return gb_tape_gradient_ex(tape, &loss, 1, NULL, src, nsrc, GB_UNCONNECTED_ZERO, out) ? nsrc
                                                                                           : -1;
}

START_TEST(test_gradient_inside_function_matches_eager) {
    op_case c;
    if (!make_differentiable_case((gb_op_id)_i, &c)) return;
    const char *op = gb_op_type_name(c.op);
    gb_tensor *args[OC_MAX_IN + 1];
    memcpy(args, c.in, (size_t)c.nin * sizeof *args);
    args[c.nin] = gc_weights(op_output(c.in, c.nin, &c));
    run_result eager, traced;
    eager.n = gradient_body(&c, args, c.nin + 1, NULL, 0, eager.out);
    ck_assert_msg(eager.n >= 0, "%s: eager gradient: %s", op, gb_error_string());
    gb_function *f = gb_function_new(op, gradient_body, &(gb_function_options){.user = &c});
    traced.n = gb_function_call(f, args, c.nin + 1, NULL, 0, traced.out);
    ck_assert_msg(traced.n >= 0, "%s: gradient in a function: %s", op, gb_error_string());
    assert_same_outputs(&c, &eager, &traced, " (gradient)");
    gb_function_free(f);
    op_case_free(&c);
}
END_TEST

/* ---- what the table cannot say ------------------------------------------------------- */

static int print_twice(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst, (void)out;
    printf("tracing\n"); /* plain C: runs while tracing only */
    gb_print("x:", in[0]);
    gb_print("done", NULL);
    return 0;
}

/* Print prints at every run of the graph, in program order; printf in the
 * function's C code only while it traces. */
START_TEST(test_print_prints_at_every_run) {
    gb_tensor *x = gb_tensor_from(GB_I64, (const int64_t[]){1, 2, 3, 4, 5, 6}, GB_SHAPE(2, 3));
    gb_function *f = gb_function_new("print_twice", print_twice, NULL);
    char first[128], second[128];
    capture cp;
    capture_begin(&cp);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, NULL), 0);
    capture_end(&cp, first, sizeof first);
    capture_begin(&cp);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, NULL), 0);
    capture_end(&cp, second, sizeof second);
    ck_assert_str_eq(first, "tracing\nx: [[1 2 3] [4 5 6]]\ndone\n");
    ck_assert_str_eq(second, "x: [[1 2 3] [4 5 6]]\ndone\n");
    gb_function_free(f);
}
END_TEST

/* The first run of a graph draws what eager draws (the table checks it);
 * each later run draws anew, as a stateful random op in a tf.function. */
START_TEST(test_random_ops_draw_anew_after_the_first_run) {
    op_case c;
    make_case((gb_op_id)_i, BATCH, &c);
    if (!(gb_op_table[c.op]->flags & GB_OPF_RANDOM)) {
        op_case_free(&c);
        return;
    }
    gb_function *f = traced_op(&c, NULL, 0);
    run_result first, second;
    run_traced(f, &c, &first);
    run_traced(f, &c, &second);
    ck_assert_int_eq(first.n, 1);
    ck_assert_int_eq(gb_size(first.out[0]), 6);
    for (int64_t i = 0; i < 6; i++)
        ck_assert_msg(gb_get(first.out[0], i) != gb_get(second.out[0], i),
                      "%s: element %lld drawn again", gb_op_type_name(c.op), (long long)i);
    gb_function_free(f);
    op_case_free(&c);
}
END_TEST

static int checked(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_check_numerics(gb_log(in[0]), "log of the input");
    return 1;
}

/* CheckNumerics in a graph names its message (kept in its attributes,
 * not in the memory of the scope that traced it) and the node. */
START_TEST(test_check_numerics_in_a_graph_names_its_message) {
    gb_function *f = gb_function_new("checked", checked, NULL);
    gb_tensor *y, *ok = gb_from_f64((const double[]){1, 2}, GB_SHAPE(2));
    ck_assert_int_eq(gb_function_call(f, &ok, 1, NULL, 0, &y), 1);
    gb_tensor *bad = gb_from_f64((const double[]){1, -2}, GB_SHAPE(2));
    ck_assert_int_eq(gb_function_call(f, &bad, 1, NULL, 0, &y), -1);
    const gb_error *e = check_error(GB_ERR_NUMERIC,
                                    "CheckNumerics: log of the input: tensor had 1 NaN, 0 +Inf, "
                                    "0 -Inf values, first at index 1");
    ck_assert_str_eq(e->op_type, "CheckNumerics");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_ops");
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_every_op_has_a_generator);
    tcase_add_loop_test(tc, test_attributes_outside_their_type_are_refused, 0, GB_OP_COUNT);
    tcase_add_test(tc, test_schema_names_the_attribute);
    tcase_add_loop_test(tc, test_cases_give_attributes_by_name, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_node_attributes_round_trip_through_the_schema, 0, GB_OP_COUNT);
    tcase_add_test(tc, test_attribute_text_word_for_word);
    tcase_add_loop_test(tc, test_traced_matches_eager, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_unknown_batch_matches_eager, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_gradient_finite_differences, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_gradient_inside_function_matches_eager, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_random_ops_draw_anew_after_the_first_run, 0, GB_OP_COUNT);
    tcase_add_test(tc, test_print_prints_at_every_run);
    tcase_add_test(tc, test_check_numerics_in_a_graph_names_its_message);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
