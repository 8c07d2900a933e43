/* test_nn_attention.c — MultiHeadAttention (nn/attention.c) and
 * gb_masked_softmax (ops/masked_softmax.c).
 *
 *   - Against PyTorch: weights and inputs filled by one formula (formula_values.h
 *     below and in scripts/mha_reference.py); torch.nn.MultiheadAttention
 *     in float64 on the same weights wrote tests/fixtures/mha_reference.txt
 *     for self-attention and a causal mask: outputs and every head's
 *     weights agree to 1e-12.
 *   - Masks: masked keys get exactly 0 weight; a query that may see no key
 *     gets 0 weight everywhere (PyTorch gives NaN there); finite-difference
 *     gradients of the masked softmax and of the layer (input and weights).
 *   - Traced bit for bit as eager; configs round trip; errors name the input.
 *   - PositionEmbedding (nn/position_embedding.c): the table's first T rows
 *     for every sample, finite-difference gradients of its table, its config
 *     and its errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "formula_values.h"
#include "gradcheck.h"
#include "test_util.h"

enum { B = 2, T = 4, D = 6, H = 2, K = D / H };

static gb_tensor *inputs(void) { return gb_reshape(formula_matrix(7, B * T, D), 3, (int64_t[]){B, T, D}); }

static void set(gb_module *m, const char *name, gb_tensor *v, int rank, const int64_t *shape) {
    gb_variable *var = gb_module_variable(m, name);
    ck_assert_msg(var != NULL, "no variable %s", name);
    ck_assert_msg(gb_variable_assign(var, gb_reshape(v, rank, shape)), "%s: %s", name, gb_error_string());
}

/* A float64 layer with the formula's weights (the script's). */
static gb_module *reference_layer(gb_mha_options o) {
    o.return_attention_scores = true;
    gb_module *m = gb_multi_head_attention_new(H, K, &o);
    ck_assert_msg(m && gb_module_build(m, GB_F64, 3, (int64_t[]){-1, T, D}), "%s", gb_error_string());
    const int64_t w3[3] = {D, H, K}, b2[2] = {H, K}, wo[3] = {H, K, D}, bo[1] = {D};
    set(m, "query/kernel", formula_matrix(1, D, H * K), 3, w3);
    set(m, "key/kernel", formula_matrix(2, D, H * K), 3, w3);
    set(m, "value/kernel", formula_matrix(3, D, H * K), 3, w3);
    set(m, "attention_output/kernel", formula_matrix(4, H * K, D), 3, wo);
    set(m, "query/bias", formula_matrix(5, 1, H * K), 2, b2);
    set(m, "key/bias", formula_matrix(6, 1, H * K), 2, b2);
    set(m, "value/bias", formula_matrix(8, 1, H * K), 2, b2);
    set(m, "attention_output/bias", formula_matrix(9, 1, D), 1, bo);
    return m;
}

/* The fixture's numbers for "<which> <what>" (n of them). */
static void reference(const char *which, const char *what, double *out, int n) {
    char path[512], a[16], b[16];
    snprintf(path, sizeof path, "%s/tests/fixtures/mha_reference.txt", getenv("GB_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    bool found = false;
    while (!found && fscanf(f, "%15s %15s", a, b) == 2) {
        found = !strcmp(a, which) && !strcmp(b, what);
        int count = !strcmp(b, "out") ? B * T * D : B * H * T * T;
        for (int i = 0; i < count; i++) ck_assert(fscanf(f, "%lf", found ? &out[i] : &(double){0}) == 1);
        ck_assert(!found || count == n);
    }
    fclose(f);
    ck_assert_msg(found, "no '%s %s' line in %s", which, what, path);
}

static void assert_close(gb_tensor *got, const double *want, int n, const char *what) {
    ck_assert_int_eq(gb_size(got), n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(gb_get(got, i) - want[i]) <= 1e-12, "%s element %d: %.17g, PyTorch %.17g",
                      what, i, gb_get(got, i), want[i]);
}

START_TEST(test_matches_pytorch) {
    static const char *const cases[2] = {"self", "causal"};
    for (int c = 0; c < 2; c++) {
        gb_module *m = reference_layer((gb_mha_options){.use_causal_mask = c == 1});
        gb_tensor *x = inputs(), *out[2];
        ck_assert_msg(gb_module_call_n(m, 1, &x, out, false) == 2, "%s", gb_error_string());
        double want_out[B * T * D], want_w[B * H * T * T];
        reference(cases[c], "out", want_out, B * T * D);
        reference(cases[c], "weights", want_w, B * H * T * T);
        assert_close(out[0], want_out, B * T * D, cases[c]);
        assert_close(out[1], want_w, B * H * T * T, cases[c]);
        gb_module_free(m);
    }
}
END_TEST

START_TEST(test_masked_softmax_is_exact) {
    gb_tensor *logits = gb_from_f64((double[]){1, 2, 3, 4, 5, 6}, 2, (int64_t[]){2, 3});
    gb_tensor *mask = gb_tensor_from(GB_BOOL, (bool[]){true, false, true, false, false, false}, 2,
                                     (int64_t[]){2, 3});
    gb_tensor *p = gb_masked_softmax(logits, mask);
    ck_assert_msg(p != NULL, "%s", gb_error_string());
    double e = exp(2.0); /* softmax over {1, 3}: 1 / (1 + e^2), e^2 / (1 + e^2) */
    ck_assert(fabs(gb_get(p, 0) - 1 / (1 + e)) < 1e-15);
    ck_assert(gb_get(p, 1) == 0);
    ck_assert(fabs(gb_get(p, 2) - e / (1 + e)) < 1e-15);
    for (int i = 3; i < 6; i++) ck_assert(gb_get(p, i) == 0); /* nothing to see: 0, not NaN */
    ck_assert_ptr_null(gb_masked_softmax(logits, gb_ones(GB_F64, GB_SHAPE(2, 3))));
    check_error(GB_ERR_DTYPE, "MaskedSoftmax: the mask must be bool, got float64");
    gb_clear_error();
}
END_TEST

static gb_tensor *masked_softmax_of(gb_tensor *const *xs, int n, void *user) {
    (void)n;
    return gb_masked_softmax(xs[0], user);
}

static gb_tensor *attend(gb_tensor *const *xs, int n, void *user) {
    gb_tensor *out[2];
    return gb_module_call_n(user, n, xs, out, false) > 0 ? out[0] : NULL;
}

/* The layer on fixed inputs, for the weights' checks. */
typedef struct fixed_call {
    gb_module *m;
    gb_tensor *const *in;
    int n;
} fixed_call;

static gb_tensor *attend_fixed(void *user) {
    const fixed_call *c = user;
    return attend(c->in, c->n, c->m);
}

START_TEST(test_gradients) {
    gb_tensor *logits = formula_matrix(11, 3, 4);
    gb_tensor *mask = gb_tensor_from(GB_BOOL, (bool[]){1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}, 2,
                                     (int64_t[]){3, 4});
    GC_ASSERT(masked_softmax_of, &logits, 1, mask);
    /* The layer, causal, with a mask that hides every key from one query. */
    gb_module *m = reference_layer((gb_mha_options){.use_causal_mask = true});
    bool allow[B * T * T];
    for (int i = 0; i < B * T * T; i++) allow[i] = !(i / T == 1); /* batch 0, query 1: nothing */
    /* Query, value and key as three tensors, so each is nudged on its own. */
    gb_tensor *xs[4] = {inputs(), inputs(), inputs(), gb_tensor_from(GB_BOOL, allow, 3, (int64_t[]){B, T, T})};
    GC_ASSERT(attend, xs, 4, m);
    /* Every weight, through the same masks. */
    int nv;
    gb_variable *const *listed = gb_module_trainable_variables(m, &nv);
    gb_variable *vars[8];
    ck_assert_int_eq(nv, 8);
    memcpy(vars, listed, sizeof vars);
    fixed_call c = {m, xs, 4};
    for (int i = 0; i < nv; i++) GC_ASSERT_VARIABLE(attend_fixed, &c, vars[i]);
    gb_tensor *out[2];
    ck_assert_int_eq(gb_module_call_n(m, 4, xs, out, false), 2);
    for (int j = 0; j < T; j++) ck_assert(gb_get(out[1], (0 * H + 1) * T * T + 1 * T + j) == 0);
    gb_module_free(m);
}
END_TEST

static int forward(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)st, (void)nst;
    return gb_module_call_n(user, nin, in, out, false);
}

START_TEST(test_traced_matches_eager_and_config) {
    gb_module *m = gb_multi_head_attention_new(H, K, &(gb_mha_options){.use_causal_mask = true, .seed = 4});
    gb_tensor *x = gb_cast(inputs(), GB_F32), *eager[2], *traced[2];
    ck_assert_int_eq(gb_module_call_n(m, 1, &x, eager, false), 1);
    gb_function *f = gb_function_new("attend", forward, &(gb_function_options){.user = m});
    ck_assert_msg(gb_function_call(f, &x, 1, NULL, 0, traced) == 1, "%s", gb_error_string());
    ck_assert(gb_same_shape(eager[0], traced[0]));
    ck_assert(memcmp(gb_data(eager[0]), gb_data(traced[0]), gb_nbytes(eager[0])) == 0);
    gb_config *c = gb_module_get_config(m);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_config *again = gb_module_get_config(back);
    char *a = gb_config_to_json(c, 0), *b = gb_config_to_json(again, 0);
    ck_assert_str_eq(a, b);
    free(a), free(b);
    gb_config_free(c), gb_config_free(again);
    gb_function_free(f);
    gb_module_free(m), gb_module_free(back);
}
END_TEST

START_TEST(test_errors_are_clear) {
    gb_module *m = gb_multi_head_attention_new(H, K, NULL);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(B, T, D)), *narrow = gb_ones(GB_F32, GB_SHAPE(B, T, D - 1));
    gb_tensor *out[2];
    ck_assert_int_eq(gb_module_call_n(m, 2, (gb_tensor *[]){x, narrow}, out, false), -1);
    check_error(GB_ERR_SHAPE, "the value must be [batch, time, 6] like the query, got [2,4,5]");
    gb_clear_error();
    ck_assert_int_eq(gb_module_call_n(m, 4, (gb_tensor *[]){x, x, x, x}, out, false), -1);
    check_error(GB_ERR_DTYPE, "the attention mask must be bool, got float32");
    gb_clear_error();
    ck_assert_ptr_null(gb_multi_head_attention_new(0, K, NULL));
    check_error(GB_ERR_VALUE, "MultiHeadAttention: num_heads 0 and key_dim 3 must be positive");
    gb_clear_error();
    gb_module_free(m);
}
END_TEST

/* ---- PositionEmbedding ------------------------------------------------------------------ */

START_TEST(test_position_embedding) {
    gb_module *m = gb_position_embedding_new(5, &(gb_position_embedding_options){.seed = 3});
    gb_tensor *x = gb_zeros(GB_F64, GB_SHAPE(2, 3, 4));
    gb_tensor *y = gb_module_call(m, x, false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    gb_tensor *table = gb_variable_value(gb_module_variable(m, "embeddings"));
    ck_assert_int_eq(gb_dim(table, 0), 5);
    ck_assert_int_eq(gb_dim(table, 1), 4);
    ck_assert(gb_same_shape(x, y));
    for (int b = 0; b < 2; b++)   /* every sample gets rows 0..2 of the table */
        for (int i = 0; i < 12; i++) ck_assert(gb_get(y, b * 12 + i) == gb_get(table, i));
    /* Glorot-uniform: |w| <= sqrt(6 / (5 + 4)) */
    for (int i = 0; i < 20; i++) ck_assert(fabs(gb_get(table, i)) <= sqrt(6.0 / 9.0));
    /* The tape's gradient of L = sum(w * y) for the table against central
     * differences: rows 0..2 get the sum over the batch of w, rows 3, 4 none. */
    gb_variable *v = gb_module_variable(m, "embeddings");
    gb_tensor *w = formula_matrix(5, 2 * 3, 4), *g = NULL;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_reduce_sum(gb_mul(gb_reshape(w, 3, (int64_t[]){2, 3, 4}), gb_module_call(m, x, true)),
                                    GB_ALL_AXES, false);
    gb_tape_end(tape);
    ck_assert_msg(gb_tape_gradient_vars(tape, loss, &v, 1, &g), "%s", gb_error_string());
    gb_tensor *start = gb_add_scalar(table, 0);
    for (int64_t j = 0; j < 20; j++) {
        double l[2];
        for (int side = 0; side < 2; side++) {
            ck_assert(gb_variable_assign(v, gc_nudged(start, j, side ? GC_EPS : -GC_EPS)));
            l[side] = gc_weighted_sum(gb_module_call(m, x, false), w);
        }
        double numeric = (l[1] - l[0]) / (2 * GC_EPS), want = j < 12 ? gb_get(w, j) + gb_get(w, 12 + j) : 0;
        ck_assert_msg(fabs(numeric - gb_get(g, j)) <= GC_ATOL + GC_RTOL * fabs(numeric),
                      "element %lld: tape %.10g, finite differences %.10g", (long long)j, gb_get(g, j), numeric);
        ck_assert_msg(fabs(gb_get(g, j) - want) <= 1e-12, "element %lld: %.17g, want %.17g", (long long)j,
                      gb_get(g, j), want);
    }
    gb_module_free(m);
}
END_TEST

START_TEST(test_position_embedding_config_and_errors) {
    gb_module *m = gb_position_embedding_new(8, &(gb_position_embedding_options){.name = "pos", .seed = 5});
    gb_config *c = gb_module_get_config(m);
    char *json = gb_config_to_json(c, 0);
    ck_assert_msg(strstr(json, "\"class_name\": \"PositionEmbedding\"") && strstr(json, "\"sequence_length\": 8"), "%s", json);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_config *again = gb_module_get_config(back);
    char *json2 = gb_config_to_json(again, 0);
    ck_assert_str_eq(json, json2);
    free(json), free(json2);
    gb_config_free(c), gb_config_free(again);
    gb_module_free(back);
    ck_assert_ptr_null(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(2, 9, 4)), false));
    assert_error(GB_ERR_SHAPE, "PositionEmbedding layer 'pos': input [2,9,4] has 9 positions; sequence_length is 8");
    ck_assert_ptr_null(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(4)), false));
    assert_error(GB_ERR_SHAPE, "PositionEmbedding layer 'pos': expected [..., time, features] with known features, got [4]");
    ck_assert_ptr_nonnull(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(2, 8, 4)), false));
    ck_assert_ptr_null(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(2, 8, 3)), false));
    assert_error(GB_ERR_SHAPE, "PositionEmbedding layer 'pos': input [2,8,3] has 3 features, built for 4");
    ck_assert_ptr_null(gb_position_embedding_new(0, NULL));
    assert_error(GB_ERR_VALUE, "PositionEmbedding: sequence_length must be positive, got 0");
    gb_module_free(m);
}
END_TEST

/* ---- SinePositionEncoding ------------------------------------------------------------- */

/* Keras-NLP's signal: at position p, sin(p w_i) at even features, cos at
 * odd ones, w_i = 10000^(-2 floor(i/2) / d); for d = 4, w = 1, 1, 0.01,
 * 0.01. The same for every sample, whatever x holds. */
START_TEST(test_sine_position_encoding) {
    gb_module *m = gb_sine_position_encoding_new(NULL);
    gb_tensor *x = gb_random_normal(GB_F32, GB_SHAPE(2, 5, 4), 0, 1, 3);
    gb_tensor *y = gb_module_call(m, x, false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_tensor_dtype(y), GB_F32);
    ck_assert_int_eq(gb_rank(y), 3);
    ck_assert_int_eq(gb_dim(y, 0), 2);
    const double want[3][4] = {{0, 1, 0, 1}, {sin(1.0), cos(1.0), sin(0.01), cos(0.01)},
                               {sin(3.0), cos(3.0), sin(0.03), cos(0.03)}};
    const int64_t at[3] = {0, 1, 3};
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 4; i++) {
                double got = gb_get(y, (b * 5 + at[k]) * 4 + i);
                ck_assert_msg(fabs(got - want[k][i]) <= 6e-8, "sample %d position %lld feature %d: %.9g, want %.9g",
                              b, (long long)at[k], i, got, want[k][i]);
            }
    gb_tensor *other = gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(2, 5, 4)), false);
    for (int64_t i = 0; i < gb_size(y); i++) ck_assert(gb_get(other, i) == gb_get(y, i));
    /* float64 input: the table rounded once, to float64 */
    gb_tensor *y64 = gb_module_call(m, gb_zeros(GB_F64, GB_SHAPE(1, 4, 4)), false);
    ck_assert(gb_get(y64, 1 * 4 + 2) == sin(0.01));
    gb_module_free(m);
}
END_TEST

START_TEST(test_sine_position_encoding_config_and_errors) {
    gb_module *m = gb_sine_position_encoding_new(&(gb_sine_position_encoding_options){.name = "sine", .max_wavelength = 500});
    gb_config *c = gb_module_get_config(m);
    char *json = gb_config_to_json(c, 0);
    ck_assert_msg(strstr(json, "\"class_name\": \"SinePositionEncoding\"") && strstr(json, "\"max_wavelength\": 500"), "%s", json);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_tensor *x = gb_zeros(GB_F32, GB_SHAPE(1, 3, 6));
    gb_tensor *a = gb_module_call(m, x, false), *b = gb_module_call(back, x, false);
    for (int64_t i = 0; i < gb_size(a); i++) ck_assert(gb_get(a, i) == gb_get(b, i));
    ck_assert(fabs(gb_get(a, 2 * 6 + 4) - sin(2 * pow(1.0 / 500, 4.0 / 6))) <= 6e-8);
    free(json);
    gb_config_free(c);
    gb_module_free(back);
    ck_assert_ptr_null(gb_module_call(m, gb_zeros(GB_F32, GB_SHAPE(4)), false));
    assert_error(GB_ERR_SHAPE, "SinePositionEncoding layer 'sine': expected [..., time, features] with known features, got [4]");
    ck_assert_ptr_null(gb_sine_position_encoding_new(&(gb_sine_position_encoding_options){.max_wavelength = 0.5}));
    assert_error(GB_ERR_VALUE, "SinePositionEncoding: max_wavelength must be a finite number above 1, got 0.5");
    gb_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_attention");
    TCase *tc = tcase_create("attention");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_matches_pytorch);
    tcase_add_test(tc, test_masked_softmax_is_exact);
    tcase_add_test(tc, test_gradients);
    tcase_add_test(tc, test_traced_matches_eager_and_config);
    tcase_add_test(tc, test_errors_are_clear);
    tcase_add_test(tc, test_position_embedding);
    tcase_add_test(tc, test_position_embedding_config_and_errors);
    tcase_add_test(tc, test_sine_position_encoding);
    tcase_add_test(tc, test_sine_position_encoding_config_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
