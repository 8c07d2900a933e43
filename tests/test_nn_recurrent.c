/* test_nn_recurrent.c — SimpleRNN, LSTM and GRU (nn/recurrent.c).
 *
 *   - Against PyTorch: weights and inputs filled by one formula (formula_values.h
 *     below and in scripts/rnn_reference.py), PyTorch's RNN, LSTM and GRU
 *     in float64 on the same weights (mapped from Keras' layout) wrote
 *     tests/fixtures/rnn_reference.txt; every output of every step agrees
 *     to 1e-12.
 *   - Gradients through time: the tape's gradient of sum(w * y) with
 *     respect to the input and to each weight against central differences.
 *     The same from a given initial state, with return_state, and of
 *     Bidirectional (against PyTorch's bidirectional=True: its backward
 *     half back in time order is Keras' concat).
 *   - Gradients through time also with a mask and an initial state (with
 *     respect to h0 and c0), and of Bidirectional (its inputs and both
 *     directions' weights).
 *   - Masking: a masked step carries the state and the last output, so a
 *     masked sequence computes what the sequence of its unmasked steps
 *     does; Embedding(mask_zero) gives the mask; Bidirectional's layers
 *     output zeros at masked steps.
 *   - dropout and recurrent_dropout: one mask per call, the same at every
 *     step (read off layers whose outputs show it), off at inference.
 *   - return_sequences, go_backwards (the sequence reversed, processed in
 *     that order), traced calls bit for bit as eager, configs round trip,
 *     Keras' initial weights (orthogonal recurrent kernel, the LSTM's
 *     forget-gate bias of ones) and shape errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "formula_values.h"
#include "gradcheck.h"
#include "test_util.h"

enum { B = 2, T = 3, F = 4, U = 3 };

typedef enum kind { SIMPLE, LSTM, GRU } kind;
static const int GATES[3] = {1, 4, 3};
static const char *const NAMES[3] = {"simple", "lstm", "gru"};

static gb_tensor *inputs(void) {
    return gb_reshape(formula_matrix(7, B * T, F), 3, (int64_t[]){B, T, F});
}

static gb_module *layer(kind k, const gb_rnn_options *o) {
    return k == SIMPLE ? gb_simple_rnn_new(U, o) : k == LSTM ? gb_lstm_new(U, o) : gb_gru_new(U, o);
}

/* The formula's weights of seeds seed, seed + 1, seed + 2 into layer m
 * (bias row 0; a GRU resetting after, both rows). */
static void set_formula_weights(gb_module *m, kind k, bool reset_before, int seed) {
    int64_t g = GATES[k] * U;
    gb_tensor *bias = formula_matrix(seed + 2, 2, g);
    ck_assert(gb_variable_assign(gb_module_variable(m, "kernel"), formula_matrix(seed, F, g)));
    ck_assert(gb_variable_assign(gb_module_variable(m, "recurrent_kernel"), formula_matrix(seed + 1, U, g)));
    ck_assert(gb_variable_assign(gb_module_variable(m, "bias"),
                                 k == GRU && !reset_before ? bias : gb_reshape(gb_slice(bias, GB_LIST(0, 0), GB_LIST(1, g)), 1, &g)));
}

/* A float64 layer with the formula's weights. */
static gb_module *reference_layer(kind k, gb_rnn_options o) {
    o.no_unit_forget_bias = true;
    gb_module *m = layer(k, &o);
    ck_assert_msg(m && gb_module_build(m, GB_F64, 3, (int64_t[]){-1, T, F}), "%s", gb_error_string());
    set_formula_weights(m, k, o.reset_before, 1);
    return m;
}

/* The fixture line "<name>": its first n numbers into out. */
static void reference_line(const char *name, int n, double *out) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/rnn_reference.txt", getenv("GB_SOURCE_DIR"));
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (!found && getline(&line, &cap, f) > 0) {
        size_t len = strcspn(line, " ");
        found = len == strlen(name) && strncmp(line, name, len) == 0;
        char *p = line + len;
        for (int i = 0; found && i < n; i++) {
            char *end;
            out[i] = strtod(p, &end);
            ck_assert_msg(end != p, "line '%s' has fewer than %d numbers", name, n);
            p = end;
        }
    }
    free(line);
    fclose(f);
    ck_assert_msg(found, "no '%s' line in %s", name, path);
}

/* The fixture's numbers for kind k: B * T * U of them. */
static void reference(kind k, double *out) { reference_line(NAMES[k], B * T * U, out); }

/* t's values against want[0..], to 1e-12; returns how many were read. */
static int assert_close(gb_tensor *t, const double *want, const char *what) {
    ck_assert_msg(t != NULL, "%s: %s", what, gb_error_string());
    for (int64_t i = 0; i < gb_size(t); i++)
        ck_assert_msg(fabs(gb_get(t, i) - want[i]) <= 1e-12, "%s element %lld: %.17g, PyTorch %.17g",
                      what, (long long)i, gb_get(t, i), want[i]);
    return (int)gb_size(t);
}

START_TEST(test_matches_pytorch) {
    kind k = (kind)_i;
    gb_module *m = reference_layer(k, (gb_rnn_options){.return_sequences = true});
    gb_tensor *y = gb_module_call(m, inputs(), false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_rank(y), 3);
    ck_assert_int_eq(gb_dim(y, 2), U);
    double want[B * T * U];
    reference(k, want);
    for (int i = 0; i < B * T * U; i++)
        ck_assert_msg(fabs(gb_get(y, i) - want[i]) <= 1e-12, "%s element %d: %.17g, PyTorch %.17g",
                      NAMES[k], i, gb_get(y, i), want[i]);
    /* Without return_sequences: the last step's state. */
    gb_module *last = reference_layer(k, (gb_rnn_options){0});
    gb_tensor *h = gb_module_call(last, inputs(), false);
    ck_assert_int_eq(gb_rank(h), 2);
    for (int b = 0; b < B; b++)
        for (int u = 0; u < U; u++)
            ck_assert(gb_get(h, b * U + u) == gb_get(y, (b * T + T - 1) * U + u));
    gb_module_free(m);
    gb_module_free(last);
}
END_TEST

/* go_backwards on x equals the forward layer on x reversed in time. */
START_TEST(test_go_backwards_is_the_reversed_sequence) {
    kind k = (kind)_i;
    gb_module *back = reference_layer(k, (gb_rnn_options){.return_sequences = true, .go_backwards = true});
    gb_module *fwd = reference_layer(k, (gb_rnn_options){.return_sequences = true});
    gb_tensor *x = inputs();
    gb_tensor *steps[T];
    for (int t = 0; t < T; t++) steps[t] = gb_slice(x, GB_LIST(0, T - 1 - t, 0), GB_LIST(-1, 1, -1));
    gb_tensor *a = gb_module_call(back, x, false), *b = gb_module_call(fwd, gb_concat(steps, T, 1), false);
    ck_assert_msg(a && b, "%s", gb_error_string());
    for (int64_t i = 0; i < gb_size(a); i++) ck_assert(gb_get(a, i) == gb_get(b, i));
    gb_module_free(back);
    gb_module_free(fwd);
}
END_TEST

/* ---- initial state, return_state, Bidirectional against PyTorch ------------------------- */

static int nstates(kind k) { return k == LSTM ? 2 : 1; }

START_TEST(test_initial_state_matches_pytorch) {
    kind k = (kind)_i;
    gb_module *m = reference_layer(k, (gb_rnn_options){.return_sequences = true, .return_state = true});
    gb_tensor *in[3] = {inputs(), formula_matrix(8, B, U), formula_matrix(9, B, U)}, *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(m, 1 + nstates(k), in, out, false), 1 + nstates(k));
    char name[32];
    snprintf(name, sizeof name, "%s_state", NAMES[k]);
    double want[B * T * U + 2 * B * U];
    reference_line(name, B * T * U + nstates(k) * B * U, want);
    int at = assert_close(out[0], want, "every step");
    at += assert_close(out[1], want + at, "h");
    if (k == LSTM) assert_close(out[2], want + at, "c");
    /* The last step's output is the state h. */
    for (int b = 0; b < B; b++)
        for (int u = 0; u < U; u++) ck_assert(gb_get(out[1], b * U + u) == gb_get(out[0], (b * T + T - 1) * U + u));
    gb_module_free(m);
}
END_TEST

/* A float64 Bidirectional around layer kind k, forward weights seeds 1-3, backward 4-6. */
static gb_module *reference_bidirectional(kind k, gb_rnn_options o, gb_merge_mode mode) {
    o.no_unit_forget_bias = true;
    o.name = "rnn";
    gb_module *m = gb_bidirectional_new(layer(k, &o), &(gb_bidirectional_options){.merge_mode = mode});
    ck_assert_msg(m && gb_module_build(m, GB_F64, 3, (int64_t[]){-1, T, F}), "%s", gb_error_string());
    set_formula_weights(gb_module_find(m, "forward_rnn"), k, o.reset_before, 1);
    set_formula_weights(gb_module_find(m, "backward_rnn"), k, o.reset_before, 4);
    return m;
}

START_TEST(test_bidirectional_matches_pytorch) {
    kind k = (kind)_i;
    gb_module *m = reference_bidirectional(k, (gb_rnn_options){.return_sequences = true, .return_state = true},
                                           GB_MERGE_CONCAT);
    gb_tensor *x = inputs(), *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(m, 1, &x, out, false), 1 + 2 * nstates(k));
    ck_assert_int_eq(gb_dim(out[0], 2), 2 * U);
    char name[32];
    snprintf(name, sizeof name, "%s_bidi", NAMES[k]);
    double want[B * T * 2 * U + 2 * B * U];
    reference_line(name, B * T * 2 * U + 2 * B * U, want);
    int at = assert_close(out[0], want, "both directions");
    at += assert_close(out[1], want + at, "forward h");
    assert_close(out[1 + nstates(k)], want + at, "backward h");
    /* The other merge modes combine the same two halves. */
    gb_tensor *fwd = gb_slice(out[0], GB_LIST(0, 0, 0), GB_LIST(-1, -1, U));
    gb_tensor *bwd = gb_slice(out[0], GB_LIST(0, 0, U), GB_LIST(-1, -1, U));
    gb_tensor *want_mode[4] = {gb_add(fwd, bwd), gb_mul(fwd, bwd),
                               gb_mul(gb_add(fwd, bwd), gb_scalar(GB_F64, 0.5)), bwd};
    for (gb_merge_mode mode = GB_MERGE_SUM; mode <= GB_MERGE_NONE; mode++) {
        gb_module *other = reference_bidirectional(k, (gb_rnn_options){.return_sequences = true}, mode);
        int n = gb_module_call_n(other, 1, &x, out, false);
        ck_assert_int_eq(n, mode == GB_MERGE_NONE ? 2 : 1);
        gb_tensor *got = out[n - 1], *want_t = want_mode[mode - GB_MERGE_SUM];
        ck_assert(gb_same_shape(got, want_t));
        for (int64_t i = 0; i < gb_size(got); i++)
            ck_assert_msg(gb_get(got, i) == gb_get(want_t, i), "merge mode %d element %lld", (int)mode, (long long)i);
        if (mode == GB_MERGE_NONE)
            for (int64_t i = 0; i < gb_size(fwd); i++) ck_assert(gb_get(out[0], i) == gb_get(fwd, i));
        gb_module_free(other);
    }
    gb_module_free(m);
}
END_TEST

/* ---- masking ---------------------------------------------------------------------------- */

/* Sample 0 skips steps 0 and 2 of 0..4; sample 1 keeps 0, 1, 3. */
enum { TM = 5 };
static const bool KEEP[B * TM] = {0, 1, 0, 1, 1, 1, 1, 0, 1, 0};

static gb_tensor *masked_inputs(void) {
    return gb_reshape(formula_matrix(7, B * TM, F), 3, (int64_t[]){B, TM, F});
}

/* A masked step keeps the state and repeats the last output (zeros before
 * the first kept step): each sample computes what the layer does on its
 * kept steps alone (to rounding: the input projection is one GEMM over
 * another number of rows). */
START_TEST(test_masked_steps_carry_state_and_output) {
    kind k = (kind)_i;
    for (int back = 0; back < 2; back++) {
        gb_module *m = reference_layer(k, (gb_rnn_options){.return_sequences = true, .return_state = true,
                                                           .go_backwards = back});
        gb_tensor *x = masked_inputs(), *out[GB_NN_MAX_IO];
        gb_tensor *in[2] = {x, gb_tensor_from(GB_BOOL, KEEP, 2, (int64_t[]){B, TM})};
        ck_assert_int_eq(gb_module_call_n(m, 2, in, out, false), 1 + nstates(k));
        for (int b = 0; b < B; b++) {
            gb_tensor *kept[TM], *sub_out[GB_NN_MAX_IO];
            int n = 0;
            for (int t = 0; t < TM; t++)
                if (KEEP[b * TM + t]) kept[n++] = gb_slice(x, GB_LIST(b, t, 0), GB_LIST(1, 1, F));
            gb_tensor *sub = gb_concat(kept, n, 1);
            ck_assert_int_eq(gb_module_call_n(m, 1, &sub, sub_out, false), 1 + nstates(k));
            for (int s = 1; s <= nstates(k); s++)
                for (int u = 0; u < U; u++)
                    ck_assert_msg(fabs(gb_get(out[s], b * U + u) - gb_get(sub_out[s], u)) <= 1e-15,
                                  "%s state %d sample %d", NAMES[k], s, b);
            /* Output step j (in the order processed) is that of the last kept step up to j. */
            int done = 0;
            for (int j = 0; j < TM; j++) {
                int t = back ? TM - 1 - j : j;
                done += KEEP[b * TM + t];
                for (int u = 0; u < U; u++) {
                    double want = done ? gb_get(sub_out[0], (done - 1) * U + u) : 0.0;
                    ck_assert_msg(fabs(gb_get(out[0], (b * TM + j) * U + u) - want) <= 1e-15, "%s output %d of sample %d: %.17g, want %.17g",
                                  NAMES[k], j, b, gb_get(out[0], (b * TM + j) * U + u), want);
                }
            }
        }
        gb_module_free(m);
    }
}
END_TEST

/* In a Sequential model the mask travels by itself, as in Keras:
 * Embedding(mask_zero) -> Bidirectional(LSTM, sequences) -> GRU gives what
 * the same layers give with the mask handed to each explicitly; and the
 * last-step GRU ends the mask (a Dense after it takes none). */
START_TEST(test_sequential_passes_the_mask_to_recurrent_layers) {
    gb_module *emb = gb_embedding_new(10, F, &(gb_embedding_options){.mask_zero = true, .seed = 3});
    gb_module *bi = gb_bidirectional_new(gb_lstm_new(U, &(gb_rnn_options){.return_sequences = true, .seed = 5}), NULL);
    gb_module *gru = gb_gru_new(U, &(gb_rnn_options){.seed = 6});
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_module_retain(emb));
    gb_sequential_add(model, gb_module_retain(bi));
    gb_sequential_add(model, gb_module_retain(gru));
    gb_sequential_add(model, gb_dense_new(2, &(gb_dense_options){.seed = 7}));
    int64_t ids_v[B * TM] = {4, 7, 2, 0, 0, 9, 1, 1, 5, 0};
    gb_tensor *ids = gb_tensor_from(GB_I64, ids_v, 2, (int64_t[]){B, TM});
    gb_tensor *y = gb_module_call(model, ids, false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    gb_tensor *mask = gb_embedding_compute_mask(emb, ids), *out[GB_NN_MAX_IO];
    gb_tensor *in[2] = {gb_module_call(emb, ids, false), mask};
    ck_assert_int_eq(gb_module_call_n(bi, 2, in, out, false), 1);
    in[0] = out[0];
    ck_assert_int_eq(gb_module_call_n(gru, 2, in, out, false), 1);
    gb_module *dense = gb_sequential_layer(model, 3);
    gb_tensor *want = gb_module_call(dense, out[0], false);
    for (int i = 0; i < B * 2; i++)
        ck_assert_msg(gb_get(y, i) == gb_get(want, i), "output %d: %.9g, explicit masks %.9g", i,
                      gb_get(y, i), gb_get(want, i));
    /* Without the mask the padded steps count: a different result. */
    in[0] = gb_module_call(emb, ids, false);
    ck_assert_int_eq(gb_module_call_n(bi, 1, in, out, false), 1);
    in[0] = out[0];
    ck_assert_int_eq(gb_module_call_n(gru, 1, in, out, false), 1);
    ck_assert(gb_get(gb_module_call(dense, out[0], false), 0) != gb_get(y, 0));
    gb_module_free(model);
    gb_module_free(emb);
    gb_module_free(bi);
    gb_module_free(gru);
}
END_TEST

/* Embedding(mask_zero) -> LSTM: the mask is ids != 0, and a padded
 * sequence ends where its tokens end. Bidirectional's layers return zeros
 * at masked steps (Keras' zero_output_for_mask), also in the merge. */
START_TEST(test_embedding_mask_and_bidirectional_zero_outputs) {
    gb_module *emb = gb_embedding_new(10, F, &(gb_embedding_options){.mask_zero = true, .seed = 3});
    int64_t ids_v[B * TM] = {4, 7, 2, 0, 0, 9, 1, 1, 5, 0};
    gb_tensor *ids = gb_tensor_from(GB_I64, ids_v, 2, (int64_t[]){B, TM});
    gb_tensor *mask = gb_embedding_compute_mask(emb, ids);
    ck_assert_msg(mask != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_tensor_dtype(mask), GB_BOOL);
    for (int i = 0; i < B * TM; i++) ck_assert(((const bool *)gb_data(mask))[i] == (ids_v[i] != 0));
    gb_module *lstm = gb_lstm_new(U, &(gb_rnn_options){.seed = 4});
    gb_tensor *in[2] = {gb_module_call(emb, ids, false), mask}, *out[GB_NN_MAX_IO];
    ck_assert_int_eq(gb_module_call_n(lstm, 2, in, out, false), 1);
    gb_tensor *first3 = gb_slice(in[0], GB_LIST(0, 0, 0), GB_LIST(1, 3, F)), *h;
    h = gb_module_call(lstm, first3, false);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    for (int u = 0; u < U; u++) ck_assert_msg(fabs(gb_get(out[0], u) - gb_get(h, u)) <= 1e-6, "unit %d: %.9g, the first 3 steps alone %.9g", u, gb_get(out[0], u), gb_get(h, u));

    gb_module *bi = gb_bidirectional_new(gb_lstm_new(U, &(gb_rnn_options){.return_sequences = true, .seed = 5}), NULL);
    ck_assert_int_eq(gb_module_call_n(bi, 2, in, out, false), 1);
    for (int i = 0; i < B * TM; i++)
        for (int u = 0; u < 2 * U; u++)
            ck_assert_msg((gb_get(out[0], i * 2 * U + u) == 0) == (ids_v[i] == 0), "step %d unit %d: %g", i, u,
                          gb_get(out[0], i * 2 * U + u));
    gb_module *plain = gb_embedding_new(10, F, NULL);
    ck_assert_ptr_null(gb_embedding_compute_mask(plain, ids));
    check_error(GB_ERR_VALUE, "has no mask: create it with mask_zero");
    gb_clear_error();
    gb_module_free(plain);
    gb_module_free(emb);
    gb_module_free(lstm);
    gb_module_free(bi);
}
END_TEST

/* ---- dropout ---------------------------------------------------------------------------- */

enum { DB = 6, DT = 5, DU = 16 };

/* A float64 SimpleRNN of DU units reading DU features with kernel I, bias 0
 * and recurrent kernel R: its outputs show which units were kept. */
static gb_module *window_rnn(gb_rnn_options o, double recurrent) {
    o.no_bias = true;
    o.return_sequences = true;
    o.seed = 11;
    gb_module *m = gb_simple_rnn_new(DU, &o);
    ck_assert(gb_module_build(m, GB_F64, 3, (int64_t[]){-1, DT, DU}));
    double id[DU * DU] = {0};
    for (int i = 0; i < DU; i++) id[i * DU + i] = 1;
    gb_tensor *eye = gb_from_f64(id, 2, (int64_t[]){DU, DU});
    ck_assert(gb_variable_assign(gb_module_variable(m, "kernel"), eye));
    ck_assert(gb_variable_assign(gb_module_variable(m, "recurrent_kernel"), gb_mul(eye, gb_scalar(GB_F64, recurrent))));
    return m;
}

/* Input dropout (rate 1/2): with kernel I and no recurrence, output (b, t, u)
 * is tanh(2 x) where unit u of sample b is kept and 0 where dropped, the
 * same units at every step; a second call draws another mask; inference
 * drops nothing. */
START_TEST(test_dropout_mask_is_fixed_across_time) {
    gb_module *m = window_rnn((gb_rnn_options){.dropout = 0.5}, 0);
    gb_tensor *x = gb_random_uniform(GB_F64, GB_SHAPE(DB, DT, DU), 0.1, 1, 5);
    gb_tensor *y = gb_module_call(m, x, true), *again = gb_module_call(m, x, true);
    ck_assert_msg(y && again, "%s", gb_error_string());
    int dropped = 0, differ = 0;
    for (int b = 0; b < DB; b++)
        for (int u = 0; u < DU; u++) {
            bool kept = gb_get(y, (b * DT) * DU + u) != 0;
            dropped += !kept;
            differ += kept != (gb_get(again, (b * DT) * DU + u) != 0);
            for (int t = 0; t < DT; t++) {
                int64_t i = (b * DT + t) * DU + u;
                ck_assert_msg(fabs(gb_get(y, i) - (kept ? tanh(2 * gb_get(x, i)) : 0.0)) <= 1e-15, "sample %d step %d unit %d: %.17g",
                              b, t, u, gb_get(y, i));
            }
        }
    ck_assert_msg(dropped > 10 && dropped < DB * DU - 10, "%d of %d dropped", dropped, DB * DU);
    ck_assert_msg(differ > 0, "two calls drew the same mask");
    gb_tensor *plain = gb_module_call(m, x, false);
    for (int64_t i = 0; i < gb_size(x); i++) ck_assert(fabs(gb_get(plain, i) - tanh(gb_get(x, i))) <= 1e-15);
    gb_module_free(m);
}
END_TEST

/* Recurrent dropout (rate 1/2) with kernel I, recurrent kernel I and an
 * input only at step 0: a unit dropped from the state is 0 from step 1 on,
 * a kept one is tanh(2 h) of its last value at every step — so the same
 * units are dropped at every step. */
START_TEST(test_recurrent_dropout_mask_is_fixed_across_time) {
    gb_module *m = window_rnn((gb_rnn_options){.recurrent_dropout = 0.5}, 1);
    gb_tensor *first = gb_random_uniform(GB_F64, GB_SHAPE(DB, 1, DU), 0.1, 1, 6);
    gb_tensor *x = gb_concat((gb_tensor *[]){first, gb_zeros(GB_F64, 3, (int64_t[]){DB, DT - 1, DU})}, 2, 1);
    gb_tensor *y = gb_module_call(m, x, true);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    int dropped = 0;
    for (int b = 0; b < DB; b++)
        for (int u = 0; u < DU; u++) {
            double h = tanh(gb_get(x, b * DT * DU + u));
            ck_assert(fabs(gb_get(y, b * DT * DU + u) - h) <= 1e-15);
            bool kept = gb_get(y, (b * DT + 1) * DU + u) != 0;
            dropped += !kept;
            for (int t = 1; t < DT; t++) {
                h = kept ? tanh(2 * gb_get(y, (b * DT + t - 1) * DU + u)) : 0.0;
                ck_assert_msg(fabs(gb_get(y, (b * DT + t) * DU + u) - h) <= 1e-12, "sample %d step %d unit %d: %.17g, want %.17g", b,
                              t, u, gb_get(y, (b * DT + t) * DU + u), h);
            }
        }
    ck_assert_msg(dropped > 10 && dropped < DB * DU - 10, "%d of %d dropped", dropped, DB * DU);
    gb_module_free(m);
}
END_TEST

/* ---- gradients through time ------------------------------------------------------------- */

/* A layer call for the variable checks: the layer on its fixed inputs. */
typedef struct layer_call {
    gb_module *m;
    int nin;
    gb_tensor *in[6];
} layer_call;

/* Every output of the call, flattened into one [batch, n] (so the checks
 * weigh the states of return_state too). */
static gb_tensor *all_outputs(gb_module *m, int nin, gb_tensor *const *in) {
    gb_tensor *out[GB_NN_MAX_IO];
    int n = gb_module_call_n(m, nin, in, out, false);
    if (n < 0) return NULL;
    for (int i = 0; i < n; i++) out[i] = gb_reshape(out[i], 2, (int64_t[]){gb_dim(out[i], 0), -1});
    return n == 1 ? out[0] : gb_concat(out, n, 1);
}

static gb_tensor *call_fixed(void *user) {
    layer_call *c = user;
    return all_outputs(c->m, c->nin, c->in);
}

static gb_tensor *call_layer(gb_tensor *const *xs, int n, void *user) {
    return all_outputs(user, n, xs);
}

/* The inputs' gradients and every weight's, against central differences. */
static void assert_gradients(gb_module *m, int nin, gb_tensor *const *in) {
    GC_ASSERT(call_layer, in, nin, m);
    layer_call c = {.m = m, .nin = nin};
    memcpy(c.in, in, (size_t)nin * sizeof *in);
    int nv;
    gb_variable *const *vars = gb_module_trainable_variables(m, &nv);
    gb_variable *copy[8];
    ck_assert_int_le(nv, 8);
    memcpy(copy, vars, (size_t)nv * sizeof *vars);
    for (int i = 0; i < nv; i++) GC_ASSERT_VARIABLE(call_fixed, &c, copy[i]);
}

START_TEST(test_gradients_through_time) {
    kind k = (kind)_i;
    for (int variant = 0; variant < 2; variant++) {
        /* variant 1: every step's output, processed backwards (a GRU resetting before). */
        gb_rnn_options o = {.return_sequences = variant, .go_backwards = variant, .reset_before = variant};
        gb_module *m = reference_layer(k, o);
        gb_tensor *x = inputs();
        assert_gradients(m, 1, &x);
        gb_module_free(m);
    }
}
END_TEST

/* From an initial state, with a mask (a masked step in the middle and at
 * the start) and without (an LSTM's own backward pass, forwards and
 * backwards): gradients reach x, h0, c0 and the weights. */
START_TEST(test_gradients_with_mask_and_initial_state) {
    kind k = (kind)_i;
    for (int variant = 0; variant < 3; variant++) {
        gb_module *m = reference_layer(k, (gb_rnn_options){.return_sequences = true, .return_state = true,
                                                           .go_backwards = variant == 2});
        gb_tensor *in[4] = {masked_inputs(), gb_tensor_from(GB_BOOL, KEEP, 2, (int64_t[]){B, TM}),
                            formula_matrix(8, B, U), formula_matrix(9, B, U)};
        if (variant) in[1] = in[0];
        assert_gradients(m, (variant ? 1 : 2) + nstates(k), variant ? in + 1 : in);
        gb_module_free(m);
    }
}
END_TEST

START_TEST(test_bidirectional_gradients) {
    kind k = (kind)_i;
    gb_module *m = reference_bidirectional(k, (gb_rnn_options){.return_sequences = true, .return_state = true},
                                           GB_MERGE_CONCAT);
    gb_tensor *x = inputs();
    assert_gradients(m, 1, &x);
    gb_module_free(m);
    /* Masked, merged by product, from initial states of both directions. */
    m = reference_bidirectional(k, (gb_rnn_options){0}, GB_MERGE_MUL);
    gb_tensor *in[6] = {masked_inputs(), gb_tensor_from(GB_BOOL, KEEP, 2, (int64_t[]){B, TM})};
    for (int i = 0; i < 2 * nstates(k); i++) in[2 + i] = formula_matrix(8 + i, B, U);
    assert_gradients(m, 2 + 2 * nstates(k), in);
    gb_module_free(m);
}
END_TEST

/* ---- traced, configs, initial weights, errors ------------------------------------------- */

static int forward(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)st, (void)nst;
    return gb_module_call_n(user, nin, in, out, false);
}

/* Bit for bit: the plain call, one with a mask, an initial state and
 * return_state, and a masked Bidirectional. */
START_TEST(test_traced_matches_eager) {
    kind k = (kind)_i;
    gb_module *m = layer(k, &(gb_rnn_options){.return_sequences = true, .seed = 5});
    gb_module *full = layer(k, &(gb_rnn_options){.return_sequences = true, .return_state = true, .seed = 6});
    gb_tensor *x = gb_cast(inputs(), GB_F32);
    gb_tensor *in[4] = {gb_cast(masked_inputs(), GB_F32), gb_tensor_from(GB_BOOL, KEEP, 2, (int64_t[]){B, TM}),
                        gb_cast(formula_matrix(8, B, U), GB_F32), gb_cast(formula_matrix(9, B, U), GB_F32)};
    gb_module *bi = gb_bidirectional_new(layer(k, &(gb_rnn_options){.return_sequences = true, .seed = 7}), NULL);
    struct { gb_module *m; int nin; gb_tensor *const *in; } cases[3] = {
        {m, 1, &x}, {full, 2 + nstates(k), in}, {bi, 2, in}};
    for (int c = 0; c < 3; c++) {
        gb_tensor *eager[GB_NN_MAX_IO], *traced[GB_NN_MAX_IO];
        int n = gb_module_call_n(cases[c].m, cases[c].nin, cases[c].in, eager, false);
        gb_function *f = gb_function_new("rnn", forward, &(gb_function_options){.user = cases[c].m});
        ck_assert_msg(gb_function_call(f, cases[c].in, cases[c].nin, NULL, 0, traced) == n, "%s", gb_error_string());
        for (int i = 0; i < n; i++) {
            ck_assert(gb_same_shape(eager[i], traced[i]));
            ck_assert_msg(memcmp(gb_data(eager[i]), gb_data(traced[i]), gb_nbytes(eager[i])) == 0, "%s case %d output %d",
                          NAMES[k], c, i);
        }
        gb_function_free(f);
    }
    gb_module_free(m);
    gb_module_free(full);
    gb_module_free(bi);
}
END_TEST

START_TEST(test_config_round_trip_and_initial_weights) {
    kind k = (kind)_i;
    gb_module *m = layer(k, &(gb_rnn_options){.return_sequences = true, .go_backwards = true, .return_state = true,
                                              .dropout = 0.25, .recurrent_dropout = 0.5,
                                              .recurrent_activation = GB_ACT_TANH, .seed = 3});
    ck_assert(gb_module_build(m, GB_F32, 3, (int64_t[]){-1, T, F}));
    gb_config *c = gb_module_get_config(m);
    ck_assert_ptr_nonnull(c);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_config *again = gb_module_get_config(back);
    char *a = gb_config_to_json(c, 0), *b = gb_config_to_json(again, 0);
    ck_assert_str_eq(a, b);
    ck_assert_msg(strstr(a, "\"return_state\": true") && strstr(a, "\"dropout\": 0.25") &&
                      strstr(a, "\"recurrent_dropout\": 0.5"), "%s", a);
    free(a), free(b);
    gb_config_free(c), gb_config_free(again);
    /* The recurrent kernel [U, g U] starts orthogonal: its rows orthonormal. */
    gb_tensor *r = gb_variable_value(gb_module_variable(m, "recurrent_kernel"));
    gb_tensor *rrt = gb_matmul_t(r, r, false, true);
    for (int i = 0; i < U; i++)
        for (int j = 0; j < U; j++) ck_assert_msg(fabs(gb_get(rrt, i * U + j) - (i == j)) < 1e-6, "%s R R^T[%d,%d] = %g", NAMES[k], i, j, gb_get(rrt, i * U + j));
    if (k == LSTM) { /* unit_forget_bias: the forget gate's quarter is ones */
        gb_tensor *bias = gb_variable_value(gb_module_variable(m, "bias"));
        for (int i = 0; i < 4 * U; i++) ck_assert(gb_get(bias, i) == (i >= U && i < 2 * U));
    }
    gb_module_free(m);
    gb_module_free(back);
}
END_TEST

/* Bidirectional's config holds both layers (names, seeds, go_backwards,
 * zero_output_for_mask) and the merge mode; rebuilt, it has the same
 * weights' names and initial values. */
START_TEST(test_bidirectional_config_round_trip) {
    gb_module *m = gb_bidirectional_new(gb_gru_new(U, &(gb_rnn_options){.return_sequences = true, .seed = 9}),
                                        &(gb_bidirectional_options){.merge_mode = GB_MERGE_AVE});
    ck_assert(gb_module_build(m, GB_F32, 3, (int64_t[]){-1, T, F}));
    gb_config *c = gb_module_get_config(m);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    ck_assert(gb_module_build(back, GB_F32, 3, (int64_t[]){-1, T, F}));
    gb_config *again = gb_module_get_config(back);
    char *a = gb_config_to_json(c, 0), *b = gb_config_to_json(again, 0);
    ck_assert_str_eq(a, b);
    ck_assert_msg(strstr(a, "\"merge_mode\": \"ave\"") && strstr(a, "\"name\": \"backward_gru\"") &&
                      strstr(a, "\"zero_output_for_mask\": true"), "%s", a);
    free(a), free(b);
    gb_config_free(c), gb_config_free(again);
    int n1, n2;
    gb_variable *const *v1 = gb_module_trainable_variables(m, &n1);
    gb_variable *const *v2 = gb_module_trainable_variables(back, &n2);
    ck_assert_int_eq(n1, 6);
    ck_assert_int_eq(n2, 6);
    ck_assert_str_eq(gb_variable_name(v1[0]), "bidirectional/forward_gru/kernel");
    ck_assert_str_eq(gb_variable_name(v1[3]), "bidirectional/backward_gru/kernel");
    for (int i = 0; i < 6; i++) {
        gb_tensor *x = gb_variable_value(v1[i]), *y = gb_variable_value(v2[i]);
        ck_assert(memcmp(gb_data(x), gb_data(y), gb_nbytes(x)) == 0);
    }
    /* The two directions start from different weights. */
    gb_tensor *fk = gb_variable_value(v1[0]), *bk = gb_variable_value(v1[3]);
    ck_assert(memcmp(gb_data(fk), gb_data(bk), gb_nbytes(fk)) != 0);
    gb_module_free(m);
    gb_module_free(back);
}
END_TEST

START_TEST(test_errors_are_clear) {
    gb_module *m = gb_lstm_new(U, NULL);
    ck_assert_ptr_null(gb_module_call(m, gb_ones(GB_F32, GB_SHAPE(B, F)), false));
    check_error(GB_ERR_SHAPE, "expected [batch, time, features] with known features, got shape [2,4]");
    gb_clear_error();
    ck_assert_ptr_null(gb_lstm_new(0, NULL));
    check_error(GB_ERR_VALUE, "LSTM: units must be positive, got 0");
    gb_clear_error();
    ck_assert_ptr_null(gb_gru_new(U, &(gb_rnn_options){.recurrent_dropout = 1}));
    check_error(GB_ERR_VALUE, "GRU: dropout 0 and recurrent_dropout 1 must be in [0, 1)");
    gb_clear_error();
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(B, T, F)), *out[GB_NN_MAX_IO];
    gb_tensor *in[3] = {x, gb_ones(GB_F32, GB_SHAPE(B, U)), gb_ones(GB_F32, GB_SHAPE(B, U))};
    ck_assert_int_eq(gb_module_call_n(m, 2, in, out, false), -1);
    check_error(GB_ERR_VALUE, "LSTM layer 'lstm': takes the input, an optional bool mask [batch, time] and an "
                              "optional initial state (h and c), got 2 inputs");
    gb_clear_error();
    in[2] = gb_ones(GB_F32, GB_SHAPE(B, U + 1));
    ck_assert_int_eq(gb_module_call_n(m, 3, in, out, false), -1);
    check_error(GB_ERR_SHAPE, "the initial state c must be float32 [2, 3] like the input, got float32 [2,4]");
    gb_clear_error();
    in[1] = gb_tensor_from(GB_BOOL, (bool[]){1, 1}, 2, (int64_t[]){B, 1});
    ck_assert_int_eq(gb_module_call_n(m, 2, in, out, false), -1);
    check_error(GB_ERR_SHAPE, "the mask must be [batch, time] of the input [2,3,4], got [2,1]");
    gb_clear_error();
    ck_assert_ptr_null(gb_bidirectional_new(gb_dense_new(3, NULL), NULL));
    check_error(GB_ERR_VALUE, "Bidirectional: the layer must be a SimpleRNN, LSTM or GRU, got Dense");
    gb_clear_error();
    gb_module *bi = gb_bidirectional_new(gb_simple_rnn_new(U, NULL), NULL);
    in[1] = gb_ones(GB_F32, GB_SHAPE(B, U));
    ck_assert_int_eq(gb_module_call_n(bi, 2, in, out, false), -1);
    check_error(GB_ERR_VALUE, "the initial state must hold the forward layer's states then the backward layer's "
                              "(as many of each), got 1 state inputs");
    gb_clear_error();
    gb_module_free(m);
    gb_module_free(bi);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_recurrent");
    TCase *tc = tcase_create("recurrent");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_matches_pytorch, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_go_backwards_is_the_reversed_sequence, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_gradients_through_time, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_traced_matches_eager, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_config_round_trip_and_initial_weights, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_initial_state_matches_pytorch, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_bidirectional_matches_pytorch, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_masked_steps_carry_state_and_output, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_gradients_with_mask_and_initial_state, SIMPLE, GRU + 1);
    tcase_add_loop_test(tc, test_bidirectional_gradients, SIMPLE, GRU + 1);
    tcase_add_test(tc, test_embedding_mask_and_bidirectional_zero_outputs);
    tcase_add_test(tc, test_sequential_passes_the_mask_to_recurrent_layers);
    tcase_add_test(tc, test_dropout_mask_is_fixed_across_time);
    tcase_add_test(tc, test_recurrent_dropout_mask_is_fixed_across_time);
    tcase_add_test(tc, test_bidirectional_config_round_trip);
    tcase_add_test(tc, test_errors_are_clear);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
