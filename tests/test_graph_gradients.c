/* test_graph_gradients.c — gradients and traced functions, on a small
 * composite: a tanh layer, a dense layer and the mean sparse softmax
 * cross-entropy (the loss of an MLP classifier).
 *
 * Two ways a gradient meets a function, each checked against finite
 * differences and, bit for bit, against the eager tape:
 *   - through a call: a tape outside the call differentiates the function
 *     as a whole (its backward is a traced graph of its own), to its
 *     tensor inputs and to the trainable variables it captured;
 *   - inside a function: a tape begun in the function's code, so the
 *     gradient is part of the graph (a train step's shape), again to
 *     tensor inputs and to variables.
 */
#include <check.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "graph_test_util.h"
#include "test_util.h"

enum { X, W1, B1, W2, B2, LABELS, NIN }; /* the inputs of the tensor form */
enum { NPARAMS = 4 };                   /* w1, b1, w2, b2 */

static gb_tensor *mlp_loss(gb_tensor *x, gb_tensor *const *params, gb_tensor *labels) {
    gb_tensor *h = gb_tanh(gb_add(gb_matmul(x, params[0]), params[1]));
    gb_tensor *logits = gb_add(gb_matmul(h, params[2]), params[3]);
    return gb_reduce_mean(gb_sparse_softmax_cross_entropy_with_logits(labels, logits), GB_ALL_AXES,
                          false);
}

/* x [4,5], w1 [5,6], b1 [6], w2 [6,3], b2 [3], labels [4]. */
static void mlp_inputs(gb_tensor **in) {
    in[X] = gb_random_uniform(GB_F64, GB_SHAPE(4, 5), -1, 1, 1);
    in[W1] = gb_random_uniform(GB_F64, GB_SHAPE(5, 6), -0.7, 0.7, 2);
    in[B1] = gb_random_uniform(GB_F64, GB_SHAPE(6), -0.3, 0.3, 3);
    in[W2] = gb_random_uniform(GB_F64, GB_SHAPE(6, 3), -0.7, 0.7, 4);
    in[B2] = gb_random_uniform(GB_F64, GB_SHAPE(3), -0.3, 0.3, 5);
    in[LABELS] = gb_tensor_from(GB_I64, (const int64_t[]){2, 0, 1, 2}, GB_SHAPE(4));
}

/* ---- the tensor form: every parameter an input --------------------------------------- */

static int loss_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = mlp_loss(in[X], in + W1, in[LABELS]);
    return 1;
}

/* gradcheck's view of the loss through a call of the function `user`. */
static gb_tensor *loss_through_call(gb_tensor *const *xs, int n, void *user) {
    gb_tensor *y = NULL;
    return gb_function_call(user, xs, n, NULL, 0, &y) == 1 ? y : NULL;
}

/* ... and eagerly. */
static gb_tensor *loss_eager(gb_tensor *const *xs, int n, void *user) {
    gb_tensor *y = NULL;
    return loss_body(user, xs, n, NULL, 0, &y) == 1 ? y : NULL;
}

START_TEST(test_through_call_finite_differences) {
    gb_tensor *in[NIN];
    mlp_inputs(in);
    gb_function *f = gb_function_new("mlp_loss", loss_body, NULL);
    char msg[256];
    bool ok = gc_check(loss_through_call, in, NIN, f, msg, sizeof msg);
    ck_assert_msg(ok, "gradient through the call: %s", msg);
    ck_assert_int_eq(gb_function_tracing_count(f), 1); /* the nudged calls reuse the trace */
    gb_function_free(f);
}
END_TEST

/* d loss / d (x, w1, b1, w2, b2) by a tape around loss(in). */
static void tape_gradients(gc_fn loss, void *user, gb_tensor *const *in, gb_tensor **grads) {
    gb_tape *tape = gb_tape_begin();
    for (int i = X; i < LABELS; i++) gb_tape_watch(tape, in[i]);
    gb_tensor *y = loss(in, NIN, user);
    gb_tape_end(tape);
    ck_assert_msg(gb_tape_gradients(tape, y, in, LABELS, grads), "%s", gb_error_string());
}

START_TEST(test_through_call_matches_eager) {
    gb_tensor *in[NIN], *eager[LABELS], *traced[LABELS];
    mlp_inputs(in);
    gb_function *f = gb_function_new("mlp_loss", loss_body, NULL);
    tape_gradients(loss_eager, NULL, in, eager);
    tape_gradients(loss_through_call, f, in, traced);
    for (int i = X; i < LABELS; i++) assert_bitwise(eager[i], traced[i], "gradient through a call");
    gb_function_free(f);
}
END_TEST

/* The loss, then its gradient to x and the parameters from a tape begun
 * inside the function. */
static int loss_and_gradients(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                              int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    for (int i = X; i < LABELS; i++) gb_tape_watch(tape, in[i]);
    out[0] = mlp_loss(in[X], in + W1, in[LABELS]);
    gb_tape_end(tape);
    return gb_tape_gradients(tape, out[0], in, LABELS, out + 1) ? 1 + LABELS : -1;
}

START_TEST(test_inside_function_finite_differences) {
    gb_tensor *in[NIN], *out[1 + LABELS];
    mlp_inputs(in);
    gb_function *f = gb_function_new("mlp_train_step", loss_and_gradients, NULL);
    assert_calls_like_eager(f, loss_and_gradients, NULL, in, NIN);
    ck_assert_int_eq(gb_function_call(f, in, NIN, NULL, 0, out), 1 + LABELS);
    gb_tensor *grads[NIN] = {out[1], out[2], out[3], out[4], out[5], NULL};
    char msg[256];
    bool ok = gc_compare(loss_eager, in, NIN, NULL, gb_scalar(GB_F64, 1), grads, msg, sizeof msg);
    ck_assert_msg(ok, "gradient inside the function: %s", msg);
    gb_function_free(f);
}
END_TEST

/* ---- the variable form: parameters captured by the function -------------------------- */

typedef struct model {
    gb_variable *params[NPARAMS];
} model;

static void model_new(model *m) {
    gb_tensor *in[NIN];
    mlp_inputs(in);
    static const char *const names[NPARAMS] = {"w1", "b1", "w2", "b2"};
    for (int k = 0; k < NPARAMS; k++) m->params[k] = gb_variable_new(names[k], in[W1 + k], true);
}

static void model_free(model *m) {
    for (int k = 0; k < NPARAMS; k++) gb_variable_free(m->params[k]);
}

/* in: x, labels. */
static int model_loss(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    const model *m = user;
    gb_tensor *p[NPARAMS];
    for (int k = 0; k < NPARAMS; k++) p[k] = gb_variable_value(m->params[k]);
    out[0] = mlp_loss(in[0], p, in[1]);
    return 1;
}

/* The loss and its gradient to every variable (the tape watches the
 * trainable variables it sees read), all inside the function. */
static int model_gradients(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                           gb_tensor **out) {
    const model *m = user;
    gb_tape *tape = gb_tape_begin();
    model_loss(user, in, nin, st, nst, out);
    gb_tape_end(tape);
    return gb_tape_gradient_vars(tape, out[0], m->params, NPARAMS, out + 1) ? 1 + NPARAMS : -1;
}

/* The loss f gives on xy with element j of v moved by delta. */
static double loss_nudged(gb_function *f, gb_tensor *const *xy, gb_variable *v,
                          const gb_tensor *value, int64_t j, double delta) {
    gb_tensor *y = NULL;
    ck_assert(gb_variable_assign(v, gc_nudged(value, j, delta)));
    ck_assert_int_eq(gb_function_call(f, xy, 2, NULL, 0, &y), 1);
    return gb_item(y);
}

/* grads[k] against central differences of f's loss in variable k. */
static void assert_variable_gradients(gb_function *f, gb_tensor *const *xy, const model *m,
                                      gb_tensor *const *grads) {
    for (int k = 0; k < NPARAMS; k++) {
        gb_variable *v = m->params[k];
        gb_tensor *value = gb_copy(gb_variable_value(v));
        for (int64_t j = 0; j < gb_size(value); j++) {
            gb_scope_begin();
            double numeric = (loss_nudged(f, xy, v, value, j, GC_EPS) -
                              loss_nudged(f, xy, v, value, j, -GC_EPS)) /
                             (2 * GC_EPS);
            gb_scope_end();
            double analytic = gb_get(grads[k], j);
            ck_assert_msg(fabs(analytic - numeric) <= GC_ATOL + GC_RTOL * fabs(numeric),
                          "%s element %lld: analytic %.9g vs numeric %.9g", gb_variable_name(v),
                          (long long)j, analytic, numeric);
        }
        ck_assert(gb_variable_assign(v, value));
    }
}

static void model_batch(gb_tensor **xy) {
    gb_tensor *in[NIN];
    mlp_inputs(in);
    xy[0] = in[X];
    xy[1] = in[LABELS];
}

START_TEST(test_through_call_to_captured_variables) {
    model m;
    model_new(&m);
    gb_tensor *xy[2], *eager[NPARAMS], *traced[NPARAMS], *y;
    model_batch(xy);
    gb_function *f = gb_function_new("model_loss", model_loss, &(gb_function_options){.user = &m});
    gb_tape *tape = gb_tape_begin();
    model_loss(&m, xy, 2, NULL, 0, &y);
    gb_tape_end(tape);
    ck_assert(gb_tape_gradient_vars(tape, y, m.params, NPARAMS, eager));
    tape = gb_tape_begin();
    ck_assert_int_eq(gb_function_call(f, xy, 2, NULL, 0, &y), 1);
    gb_tape_end(tape);
    ck_assert_msg(gb_tape_gradient_vars(tape, y, m.params, NPARAMS, traced), "%s",
                  gb_error_string());
    for (int k = 0; k < NPARAMS; k++)
        assert_bitwise(eager[k], traced[k], "gradient to a captured variable through a call");
    assert_variable_gradients(f, xy, &m, traced);
    gb_function_free(f);
    model_free(&m);
}
END_TEST

START_TEST(test_inside_function_to_variables) {
    model m;
    model_new(&m);
    gb_tensor *xy[2], *out[1 + NPARAMS];
    model_batch(xy);
    gb_function *grads = gb_function_new("model_gradients", model_gradients,
                                         &(gb_function_options){.user = &m});
    assert_calls_like_eager(grads, model_gradients, &m, xy, 2);
    ck_assert_int_eq(gb_function_call(grads, xy, 2, NULL, 0, out), 1 + NPARAMS);
    gb_function *loss =
        gb_function_new("model_loss", model_loss, &(gb_function_options){.user = &m});
    assert_variable_gradients(loss, xy, &m, out + 1);
    gb_function_free(loss);
    gb_function_free(grads);
    model_free(&m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_gradients");
    TCase *tc = tcase_create("gradients");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_through_call_finite_differences);
    tcase_add_test(tc, test_through_call_matches_eager);
    tcase_add_test(tc, test_inside_function_finite_differences);
    tcase_add_test(tc, test_through_call_to_captured_variables);
    tcase_add_test(tc, test_inside_function_to_variables);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
