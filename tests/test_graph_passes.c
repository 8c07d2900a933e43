/* test_graph_passes.c — each graph pass on a small graph: what it removes
 * or rewrites (node counts, the text form), the same outputs with the pass
 * on and off (and eagerly), and stateful ops never dropped, merged or
 * reordered.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "graph_test_util.h"
#include "test_util.h"

/* ---- a body traced twice: every pass, and every pass but one ---------------------------- */

typedef struct pair {
    gb_function *on, *off;
} pair;

/* `others` are off in both (a later pass would hide what the tested one did). */
static pair traced_pair(const char *name, gb_function_fn body, void *user, unsigned pass,
                        unsigned others) {
    pair p = {gb_function_new(name, body, &(gb_function_options){.user = user, .passes_off = others}),
              gb_function_new(name, body,
                              &(gb_function_options){.user = user, .passes_off = pass | others})};
    ck_assert(p.on && p.off);
    return p;
}

/* Both give body's eager outputs, bit for bit. */
static void assert_pair_like_eager(pair p, gb_function_fn body, void *user, gb_tensor *const *in,
                                   int nin) {
    assert_calls_like_eager(p.on, body, user, in, nin);
    assert_calls_like_eager(p.off, body, user, in, nin);
}

static int count(const char *text, const char *what) {
    int n = 0;
    for (const char *s = strstr(text, what); s; s = strstr(s + 1, what)) n++;
    return n;
}

static int nodes_after(gb_function *f, const char *pass) {
    gb_graph_stats st = gb_function_graph_stats(f);
    for (int i = 0; i < st.npasses; i++)
        if (strcmp(st.passes[i].pass, pass) == 0) return st.passes[i].nodes;
    ck_abort_msg("no pass %s", pass);
    return -1;
}

static void free_pair(pair p) {
    gb_function_free(p.on);
    gb_function_free(p.off);
}

/* ---- pruning --------------------------------------------------------------------------- */

static gb_variable *counter;

/* A dead chain (exp of exp, dropped), and an assignment nobody returns. */
static int prune_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_exp(gb_exp(in[0]));
    gb_variable_assign(counter, gb_add_scalar(gb_variable_value(counter), 1));
    out[0] = gb_mul_scalar(in[0], 2);
    return 1;
}

START_TEST(test_pruning) {
    counter = gb_variable_new("counter", gb_scalar(GB_F32, 0), false);
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(4, 3), -1, 1, 1);
    pair p = traced_pair("prune", prune_body, NULL, GB_PASS_PRUNING, 0);
    assert_pair_like_eager(p, prune_body, NULL, &x, 1);
    ck_assert_int_eq(count(gb_function_traced_graph_text(p.on), "= Exp("), 2);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= Exp("), 0);
    gb_graph_stats on = gb_function_graph_stats(p.on), off = gb_function_graph_stats(p.off);
    ck_assert_int_eq(nodes_after(p.on, "pruning"), on.nodes_traced - 2);
    ck_assert_int_eq(nodes_after(p.off, "pruning"), off.nodes_traced);
    ck_assert(!off.passes[0].ran && on.passes[0].ran);
    /* The assignment ran at every call: each function's, and eagerly beside each. */
    ck_assert_double_eq(gb_item(gb_variable_value(counter)), 4);
    free_pair(p);
    gb_variable_free(counter);
}
END_TEST

/* ---- common subexpressions ------------------------------------------------------------ */

/* exp(x) twice; two identical stateful increments, which must both run. */
static int cse_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *one = gb_scalar(GB_F32, 1);
    gb_variable_assign_add(counter, one);
    gb_variable_assign_add(counter, one);
    out[0] = gb_add(gb_exp(in[0]), gb_exp(in[0]));
    return 1;
}

START_TEST(test_cse) {
    counter = gb_variable_new("counter", gb_scalar(GB_F32, 0), false);
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(4, 3), -1, 1, 2);
    pair p = traced_pair("cse", cse_body, NULL, GB_PASS_CSE, GB_PASS_FUSION);
    assert_pair_like_eager(p, cse_body, NULL, &x, 1);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= Exp("), 1);
    ck_assert_int_eq(count(gb_function_graph_text(p.off), "= Exp("), 2);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= AssignAddVariableOp '"), 2);
    ck_assert_int_lt(nodes_after(p.on, "cse"), nodes_after(p.off, "cse"));
    ck_assert_double_eq(gb_item(gb_variable_value(counter)), 8); /* 2 per call, 4 calls */
    free_pair(p);
    gb_variable_free(counter);
}
END_TEST

/* ---- constant folding ------------------------------------------------------------------ */

static int fold_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    /* Ops on eager values inside a trace are nodes over Consts. */
    gb_tensor *c = gb_mul_scalar(gb_sqrt(gb_scalar(GB_F32, 2)), 3);
    gb_tensor *k = gb_sqrt(gb_mul(gb_fill(GB_F32, 1, (int64_t[]){3}, 2.0), gb_scalar(GB_F32, 8)));
    out[0] = gb_mul(gb_mul(in[0], c), k);
    return 1;
}

START_TEST(test_constant_folding) {
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(4, 3), -1, 1, 3);
    pair p = traced_pair("fold", fold_body, NULL, GB_PASS_CONSTANT_FOLDING, GB_PASS_FUSION);
    assert_pair_like_eager(p, fold_body, NULL, &x, 1);
    /* Both Sqrts have only constant inputs: traced as nodes, folded. */
    ck_assert_int_eq(count(gb_function_traced_graph_text(p.on), "= Sqrt("), 2);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= Sqrt("), 0);
    ck_assert_int_eq(count(gb_function_graph_text(p.off), "= Sqrt("), 2);
    ck_assert_int_lt(nodes_after(p.on, "constant_folding"), nodes_after(p.off, "constant_folding"));
    free_pair(p);
}
END_TEST

/* ---- arithmetic simplification ---------------------------------------------------------- */

static int arith_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *x = gb_cast(gb_copy(gb_neg(gb_neg(in[0]))), GB_F32);
    x = gb_add_scalar(gb_mul_scalar(x, 1), 0);
    x = gb_transpose(gb_transpose(x, (int64_t[]){1, 0}, 2), (int64_t[]){1, 0}, 2);
    x = gb_reshape(gb_reshape(x, 1, (int64_t[]){12}), 2, (int64_t[]){3, 4});
    out[0] = gb_matmul(x, gb_transpose(x, (int64_t[]){1, 0}, 2));
    return 1;
}

START_TEST(test_arithmetic) {
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(4, 3), -1, 1, 4);
    pair p = traced_pair("arith", arith_body, NULL, GB_PASS_ARITHMETIC, GB_PASS_FUSION);
    assert_pair_like_eager(p, arith_body, NULL, &x, 1);
    const char *on = gb_function_graph_text(p.on), *off = gb_function_graph_text(p.off);
    const char *gone[] = {"= Neg(", "= Identity(", "= Cast(", "= Mul(", "= Add("};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        ck_assert_msg(!strstr(on, gone[i]), "%s left in:\n%s", gone[i], on);
        ck_assert_msg(strstr(off, gone[i]), "%s missing with the pass off:\n%s", gone[i], off);
    }
    /* One Reshape (of x, to [3,4]) and one Transpose (for the matmul) stay. */
    ck_assert_int_eq(count(on, "= Reshape("), 1);
    ck_assert_int_eq(count(on, "= Transpose("), 1);
    ck_assert_int_eq(count(off, "= Transpose("), 3);
    free_pair(p);
}
END_TEST

/* ---- elementwise fusion -------------------------------------------------------------------- */

static int gelu_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *x = in[0];
    gb_name_scope_push("gelu");
    gb_tensor *inner = gb_mul_scalar(gb_add(x, gb_mul_scalar(gb_mul(gb_mul(x, x), x), 0.044715)),
                                     0.7978845608028654);
    out[0] = gb_mul(gb_mul_scalar(x, 0.5), gb_add_scalar(gb_tanh(inner), 1.0));
    gb_name_scope_pop();
    return 1;
}

START_TEST(test_fusion) {
    gb_tensor *x = gb_random_normal(GB_F32, GB_SHAPE(33, 70), 0, 2, 5);
    pair p = traced_pair("gelu", gelu_body, NULL, GB_PASS_FUSION, 0);
    assert_pair_like_eager(p, gelu_body, NULL, &x, 1);
    const char *on = gb_function_graph_text(p.on);
    ck_assert_int_eq(count(on, "= FusedElementwise("), 1);
    ck_assert_int_eq(count(on, "= Mul("), 0);
    /* The fused node keeps the names of the nine ops it replaced. */
    ck_assert_msg(strstr(on, "Tanh(s") && strstr(on, "\"gelu/Tanh\""), "%s", on);
    ck_assert_int_eq(count(on, "\"gelu/"), 9);
    ck_assert_int_eq(count(gb_function_graph_text(p.off), "= FusedElementwise("), 0);
    free_pair(p);
}
END_TEST

/* A -1 batch: the fused node infers its shape per call. */
START_TEST(test_fusion_unknown_batch) {
    gb_tensor_spec spec = GB_SPEC("x", GB_F32, -1, 70);
    gb_function *f = gb_function_new(
        "gelu", gelu_body, &(gb_function_options){.input_signature = &spec, .ninput_signature = 1});
    for (int b = 1; b <= 9; b += 4) {
        gb_tensor *x = gb_random_normal(GB_F32, GB_SHAPE(b, 70), 0, 2, (uint64_t)b);
        assert_calls_like_eager(f, gelu_body, NULL, &x, 1);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert_int_eq(count(gb_function_graph_text(f), "= FusedElementwise("), 1);
    gb_function_free(f);
}
END_TEST

/* (x - a) * b + c with per-channel a, b ([C]), a broadcast row c
 * ([1, 1, W, C]) and a column ([N, 1, 1, 1]): tiled, gathered and
 * spread inputs in one fused loop, bit for bit as eagerly. */
static int channel_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *y = gb_mul(gb_sub(in[0], in[1]), in[2]);
    out[0] = gb_add(gb_add(gb_tanh(y), in[3]), in[4]);
    return 1;
}

START_TEST(test_fusion_broadcast_kinds) {
    gb_tensor *in[5] = {gb_random_normal(GB_F32, GB_SHAPE(3, 5, 7, 6), 0, 2, 1),
                        gb_random_normal(GB_F32, GB_SHAPE(6), 0, 1, 2),
                        gb_random_normal(GB_F32, GB_SHAPE(1, 6), 0, 1, 3),
                        gb_random_normal(GB_F32, GB_SHAPE(1, 1, 7, 6), 0, 1, 4),
                        gb_random_normal(GB_F32, GB_SHAPE(3, 1, 1, 1), 0, 1, 5)};
    pair p = traced_pair("channels", channel_body, NULL, GB_PASS_FUSION, 0);
    assert_pair_like_eager(p, channel_body, NULL, in, 5);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= FusedElementwise("), 1);
    free_pair(p);
}
END_TEST

/* Scalars on either side of non-commutative ops: the fused loop reads a
 * scalar input as one value (the kernels' scalar layouts), so (c - x)
 * must not become x - c, nor d / x become x / d. */
static int scalar_sides_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                             gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *x = in[0], *c = in[1], *d = in[2];
    gb_tensor *y = gb_sub(gb_div(gb_sub(c, x), d), gb_div(d, gb_exp(x)));
    out[0] = gb_mul(gb_sub(y, c), gb_div(x, c));
    return 1;
}

START_TEST(test_fusion_scalar_sides) {
    gb_tensor *in[3] = {gb_random_normal(GB_F32, GB_SHAPE(40, 33), 0, 1, 9), gb_scalar(GB_F32, 3),
                        gb_scalar(GB_F32, -0.7)};
    pair p = traced_pair("scalar_sides", scalar_sides_body, NULL, GB_PASS_FUSION, 0);
    assert_pair_like_eager(p, scalar_sides_body, NULL, in, 3);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= FusedElementwise("), 1);
    free_pair(p);
}
END_TEST

/* Step results read long after they were made, and by two later steps:
 * the fused loop shares register blocks between steps whose results are
 * dead, so a block still to be read must not be handed on. 70,001
 * elements: many blocks, a short last one, and the pool's split. */
static int long_lived_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                           gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *x = in[0];
    gb_tensor *t = gb_mul(x, x);                         /* read at the end */
    gb_tensor *e = gb_exp(gb_neg(t));                    /* read twice */
    gb_tensor *u1 = gb_tanh(gb_add_scalar(gb_mul(e, x), 0.25));
    gb_tensor *u2 = gb_sub(gb_div(u1, gb_add_scalar(t, 1)), e);
    out[0] = gb_add(gb_mul(u2, t), gb_sqrt(gb_add_scalar(e, 1)));
    return 1;
}

START_TEST(test_fusion_long_lived_steps) {
    gb_tensor *x = gb_random_normal(GB_F32, GB_SHAPE(70001), 0, 1.5, 21);
    pair p = traced_pair("long_lived", long_lived_body, NULL, GB_PASS_FUSION, 0);
    assert_pair_like_eager(p, long_lived_body, NULL, &x, 1);
    ck_assert_int_eq(count(gb_function_graph_text(p.on), "= FusedElementwise("), 1);
    free_pair(p);
}
END_TEST

static int log_chain(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("loss");
    out[0] = gb_add_scalar(gb_mul_scalar(gb_log(in[0]), 2), 1);
    gb_name_scope_pop();
    return 1;
}

/* A NaN made inside a fused chain is blamed on the op that made it. */
START_TEST(test_fused_numerics_alert_names_the_op) {
    gb_function *f = gb_function_new("chain", log_chain, NULL);
    gb_tensor *y, *x = gb_fill(GB_F32, 1, (int64_t[]){5}, 2.0);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_int_eq(count(gb_function_graph_text(f), "= FusedElementwise("), 1);
    gb_enable_check_numerics();
    x = gb_fill(GB_F32, 1, (int64_t[]){5}, -1.0);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    gb_disable_check_numerics();
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->op_name, "loss/Log");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

/* ---- the memory plan ----------------------------------------------------------------------- */

static int mlp_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_tensor *h = in[0];
    for (int layer = 0; layer < 4; layer++)
        h = gb_tanh(gb_add_scalar(gb_matmul(h, in[1]), 0.1)); /* fused, in place */
    out[0] = gb_reduce_sum(h, NULL, 0, false);
    return 1;
}

START_TEST(test_memory_plan) {
    gb_tensor *in[2] = {gb_random_uniform(GB_F32, GB_SHAPE(32, 32), -1, 1, 6),
                        gb_random_uniform(GB_F32, GB_SHAPE(32, 32), -0.3, 0.3, 7)};
    pair p = traced_pair("mlp", mlp_body, NULL, GB_PASS_MEMORY_PLAN, 0);
    assert_pair_like_eager(p, mlp_body, NULL, in, 2);
    gb_graph_stats on = gb_function_graph_stats(p.on), off = gb_function_graph_stats(p.off);
    ck_assert_uint_eq(on.naive_bytes, off.naive_bytes);
    ck_assert_uint_eq(off.arena_bytes, off.naive_bytes); /* every value its own buffer */
    ck_assert_int_eq(on.inplace, 4);                      /* each tanh over its matmul */
    ck_assert_int_eq(off.inplace, 0);
    /* Four 4 KiB matmul outputs and their fused tanh: two buffers suffice. */
    ck_assert_uint_eq(on.naive_bytes, 8 * 4096);
    ck_assert_uint_eq(on.arena_bytes, 2 * 4096);
    free_pair(p);
}
END_TEST

/* ---- the order of stateful ops survives every pass ------------------------------------------ */

static int order_body(void *u, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)u, (void)nin, (void)st, (void)nst;
    gb_variable_assign(counter, gb_mul_scalar(gb_variable_value(counter), 2));
    gb_variable_assign(counter, gb_add_scalar(gb_variable_value(counter), 1));
    gb_variable_assign(counter, gb_mul_scalar(gb_variable_value(counter), 1)); /* x*1 */
    out[0] = gb_add(in[0], gb_variable_value(counter));
    return 1;
}

START_TEST(test_stateful_order_kept) {
    counter = gb_variable_new("counter", gb_scalar(GB_F32, 1), false);
    gb_function *f = gb_function_new("order", order_body, NULL);
    gb_tensor *y, *x = gb_scalar(GB_F32, 0);
    for (int call = 0; call < 3; call++) ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    /* 1 -> 3 -> 7 -> 15: (v*2)+1 each time, not (v+1)*2. */
    ck_assert_double_eq(gb_item(y), 15);
    ck_assert_int_eq(count(gb_function_graph_text(f), "= AssignVariableOp '"), 3);
    gb_function_free(f);
    gb_variable_free(counter);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_passes");
    TCase *tc = tcase_create("passes");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_pruning);
    tcase_add_test(tc, test_cse);
    tcase_add_test(tc, test_constant_folding);
    tcase_add_test(tc, test_arithmetic);
    tcase_add_test(tc, test_fusion);
    tcase_add_test(tc, test_fusion_unknown_batch);
    tcase_add_test(tc, test_fusion_broadcast_kinds);
    tcase_add_test(tc, test_fusion_scalar_sides);
    tcase_add_test(tc, test_fusion_long_lived_steps);
    tcase_add_test(tc, test_fused_numerics_alert_names_the_op);
    tcase_add_test(tc, test_memory_plan);
    tcase_add_test(tc, test_stateful_order_kept);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
