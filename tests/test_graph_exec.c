/* test_graph_exec.c — running traced functions.
 *
 * Only what the outputs and stateful ops need runs (pruning), stateful ops
 * run in program order, eager mode traces nothing, a function called while
 * another traces is inlined, a tape inside a function emits its gradient
 * as nodes (a whole train step is one graph, equal to the eager step bit
 * for bit), a tape outside a call differentiates through it (inputs and
 * captured variables), numerics alerts in a graph name the function and
 * the node, and a traced train step allocates nothing per call.
 */
#include <check.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

/* ---- pruning and order ------------------------------------------------------------------ */

static int prune_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *unused = gb_exp(in[0]); /* no output needs it */
    (void)unused;
    out[0] = gb_neg(in[0]);
    return 1;
}

START_TEST(test_only_needed_ops_run) {
    gb_function *f = gb_function_new("pruned", prune_fn, NULL);
    gb_tensor *y, *x = gb_scalar(GB_F32, 2);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), -2);
    ck_assert_str_eq(gb_function_graph_text(f), "x0 = Placeholder() {index=0} -> float32[]\n"
                                                "Neg = Neg(x0) -> float32[]\n"
                                                "return (Neg)\n");
    gb_function_free(f);
}
END_TEST

static gb_variable *counter;

/* Stateful ops keep program order even when nothing needs their value. */
static int order_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)in, (void)nin, (void)st, (void)nst, (void)out;
    gb_print("before", gb_variable_value(counter));
    gb_variable_assign_add(counter, gb_scalar(GB_F32, 1));
    gb_print("after one", gb_variable_value(counter));
    gb_variable_assign(counter, gb_scalar(GB_F32, 10));
    gb_print("after assign", gb_variable_value(counter));
    return 0;
}

START_TEST(test_stateful_ops_in_program_order) {
    counter = gb_variable_new("counter", gb_scalar(GB_F32, 0), false);
    gb_function *f = gb_function_new("order", order_fn, NULL);
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    gb_function_call(f, NULL, 0, NULL, 0, NULL);
    gb_function_call(f, NULL, 0, NULL, 0, NULL);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    char text[512] = "";
    text[fread(text, 1, sizeof text - 1, tmp)] = '\0';
    fclose(tmp);
    ck_assert_str_eq(text, "before 0\nafter one 1\nafter assign 10\n"
                           "before 10\nafter one 11\nafter assign 10\n");
    ck_assert(gb_ok());
    gb_function_free(f);
    gb_variable_free(counter);
}
END_TEST

/* ---- eager mode and inlining --------------------------------------------------------------- */

static int traced_count;
static int count_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    traced_count++;
    out[0] = gb_square(in[0]);
    return 1;
}

START_TEST(test_run_functions_eagerly) {
    traced_count = 0;
    gb_function *f = gb_function_new("sq", count_fn, NULL);
    gb_tensor *y, *x = gb_scalar(GB_F32, 3);
    gb_run_functions_eagerly(true);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    gb_run_functions_eagerly(false);
    ck_assert_int_eq(traced_count, 2); /* the C code ran each time */
    ck_assert_int_eq(gb_function_tracing_count(f), 0);
    ck_assert_double_eq(gb_item(y), 9);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    gb_function_call(f, &x, 1, NULL, 0, &y);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert_int_eq(traced_count, 3);
    gb_function_free(f);
}
END_TEST

static gb_function *inner;
static int outer_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *sq;
    if (gb_function_call(inner, in, 1, NULL, 0, &sq) < 0) return -1;
    out[0] = gb_add_scalar(sq, 1);
    return 1;
}

/* A function called while another traces becomes part of that graph. */
START_TEST(test_call_inside_trace_is_inlined) {
    inner = gb_function_new("sq", count_fn, NULL);
    gb_function *outer = gb_function_new("outer", outer_fn, NULL);
    gb_tensor *y, *x = gb_scalar(GB_F32, 3);
    gb_function_call(outer, &x, 1, NULL, 0, &y);
    gb_function_call(outer, &x, 1, NULL, 0, &y);
    ck_assert_double_eq(gb_item(y), 10);
    ck_assert_ptr_nonnull(strstr(gb_function_traced_graph_text(outer), "Square = Square(x0)"));
    ck_assert_int_eq(gb_function_tracing_count(inner), 0);
    gb_function_free(outer);
    gb_function_free(inner);
}
END_TEST

/* ---- a whole train step is one graph -------------------------------------------------------- */

typedef struct model {
    gb_module *net;
    gb_optimizer *opt;
} model;

static model make_model(void) {
    gb_nn_set_seed(7);
    model m = {gb_sequential_new("mlp"), gb_sgd_momentum(0.1, 0.9, false)};
    gb_sequential_add(m.net, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m.net, gb_dense_new(3, NULL));
    return m;
}

/* Forward, tape, gradient, update: returns the loss. */
static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    model *m = user;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(
        in[1], gb_module_call(m->net, in[0], true), true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m->net, &n);
    gb_tensor *grads[8];
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    gb_optimizer_apply_gradients(m->opt, grads, n, vars, n);
    out[0] = loss;
    return 1;
}

static void batch(int step, gb_tensor **x, gb_tensor **y) {
    float xs[4 * 5];
    int32_t ys[4];
    for (int i = 0; i < 20; i++) xs[i] = (float)((i * 7 + step * 3) % 11) / 5.0f - 1.0f;
    for (int i = 0; i < 4; i++) ys[i] = (i + step) % 3;
    *x = gb_from_f32(xs, GB_SHAPE(4, 5));
    *y = gb_tensor_from(GB_I32, ys, GB_SHAPE(4));
}

START_TEST(test_traced_train_step_equals_eager) {
    model eager = make_model(), traced = make_model();
    gb_function *step = gb_function_new("train_step", step_fn, &(gb_function_options){.user = &traced});
    for (int s = 0; s < 5; s++) {
        gb_scope_begin();
        gb_tensor *x, *y, *le, *lt;
        batch(s, &x, &y);
        step_fn(&eager, (gb_tensor *[]){x, y}, 2, NULL, 0, &le);
        ck_assert_int_eq(gb_function_call(step, (gb_tensor *[]){x, y}, 2, NULL, 0, &lt), 1);
        ck_assert_msg(gb_item(le) == gb_item(lt), "step %d: eager %.9g traced %.9g", s,
                      gb_item(le), gb_item(lt));
        gb_scope_end();
    }
    ck_assert_int_eq(gb_function_tracing_count(step), 1);
    int n = 0, n2 = 0;
    gb_variable *const *ve = gb_module_trainable_variables(eager.net, &n);
    gb_variable *const *vt = gb_module_trainable_variables(traced.net, &n2);
    ck_assert_int_eq(n, n2);
    for (int i = 0; i < n; i++) {
        gb_tensor *a = gb_variable_value(ve[i]), *b = gb_variable_value(vt[i]);
        ck_assert_int_eq(memcmp(gb_data(a), gb_data(b), (size_t)gb_nbytes(a)), 0);
    }
    const char *g = gb_function_graph_text(step);
    ck_assert_ptr_nonnull(strstr(g, "ResourceApplyKerasMomentum"));
    ck_assert_ptr_nonnull(strstr(g, "gradients/"));
    gb_function_free(step);
    gb_module_free(eager.net);
    gb_module_free(traced.net);
    gb_optimizer_free(eager.opt);
    gb_optimizer_free(traced.opt);
}
END_TEST

/* Steady state: after the first call, calls allocate nothing (scope bytes
 * flat; heap use flat). */
START_TEST(test_traced_step_allocates_nothing_per_call) {
    model m = make_model();
    gb_function *step = gb_function_new("train_step", step_fn, &(gb_function_options){.user = &m});
    gb_tensor *x, *y, *loss;
    batch(0, &x, &y);
    for (int s = 0; s < 3; s++) {
        gb_scope_begin();
        gb_function_call(step, (gb_tensor *[]){x, y}, 2, NULL, 0, &loss);
        gb_scope_end();
    }
    size_t scope_bytes = gb_scope_bytes_in_use();
    struct mallinfo2 before = mallinfo2();
    for (int s = 0; s < 1000; s++) {
        gb_scope_begin();
        gb_function_call(step, (gb_tensor *[]){x, y}, 2, NULL, 0, &loss);
        gb_scope_end();
    }
    struct mallinfo2 after = mallinfo2();
    ck_assert(gb_ok());
    ck_assert_uint_eq(gb_scope_bytes_in_use(), scope_bytes);
#if !defined(__SANITIZE_ADDRESS__)
    ck_assert_uint_eq(after.uordblks, before.uordblks);
#else
    (void)before, (void)after;
#endif
    gb_function_free(step);
    gb_module_free(m.net);
    gb_optimizer_free(m.opt);
}
END_TEST

/* A graph names its optimizer by id: once the optimizer is freed, running
 * the graph is a clear error, not a read of freed memory (plain SGD has no
 * slot variables the graph would capture). */
START_TEST(test_freed_optimizer_is_an_error) {
    model m = make_model();
    gb_optimizer_free(m.opt);
    m.opt = gb_sgd(0.1);
    gb_function *step = gb_function_new("train_step", step_fn, &(gb_function_options){.user = &m});
    gb_tensor *x, *y, *loss;
    batch(0, &x, &y);
    ck_assert_int_eq(gb_function_call(step, (gb_tensor *[]){x, y}, 2, NULL, 0, &loss), 1);
    gb_optimizer_free(m.opt);
    ck_assert_int_eq(gb_function_call(step, (gb_tensor *[]){x, y}, 2, NULL, 0, &loss), -1);
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_msg(strstr(e->message, "ResourceApplyGradientDescent: its optimizer (id ") &&
                      strstr(e->message, ") was freed"),
                  "%s", e->message);
    gb_clear_error();
    gb_function_free(step);
    gb_module_free(m.net);
}
END_TEST

/* ---- gradients through a call ------------------------------------------------------------------ */

static gb_variable *scale;
static int cube_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_mul(gb_mul(gb_mul(in[0], in[0]), in[0]), gb_variable_value(scale));
    return 1;
}

START_TEST(test_tape_outside_differentiates_through_call) {
    scale = gb_variable_new("scale", gb_scalar(GB_F64, 2), true);
    gb_function *f = gb_function_new("cube", cube_fn, NULL);
    gb_tensor *x = gb_scalar(GB_F64, 3), *y;
    for (int rep = 0; rep < 2; rep++) { /* the backward is traced once, then reused */
        gb_tape *tape = gb_tape_begin_ex(true, true);
        gb_tape_watch(tape, x);
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
        gb_tape_end(tape);
        ck_assert_double_eq(gb_item(y), 54);
        ck_assert_double_eq(gb_item(gb_tape_gradient(tape, y, x)), 54);   /* 3 * 2 * x^2 */
        gb_tensor *dv;
        gb_tape_gradient_vars(tape, y, &scale, 1, &dv);
        ck_assert_double_eq(gb_item(dv), 27);                              /* x^3 */
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    ck_assert(gb_ok());
    gb_function_free(f);
    gb_variable_free(scale);
}
END_TEST

/* Nested tapes inside a function: the second derivative of x^3 is 6x,
 * computed by the graph. */
static int second_derivative(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                             int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, in[0]);
    gb_tape *in_tape = gb_tape_begin();
    gb_tape_watch(in_tape, in[0]);
    gb_tensor *y = gb_mul(gb_mul(in[0], in[0]), in[0]);
    gb_tape_end(in_tape);
    gb_tensor *dy = gb_tape_gradient(in_tape, y, in[0]);
    gb_tape_end(outer);
    out[0] = dy;
    out[1] = gb_tape_gradient(outer, dy, in[0]);
    return 2;
}

START_TEST(test_nested_tapes_inside_function) {
    gb_function *f = gb_function_new("d2", second_derivative, NULL);
    gb_tensor *y[2];
    for (int i = 1; i <= 3; i++) {
        gb_tensor *x = gb_scalar(GB_F64, i);
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, y), 2);
        ck_assert_double_eq(gb_item(y[0]), 3.0 * i * i);
        ck_assert_double_eq(gb_item(y[1]), 6.0 * i);
    }
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
}
END_TEST

/* ---- numerics alerts in graphs ----------------------------------------------------------------- */

static int log_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("loss");
    out[0] = gb_log(in[0]);
    gb_name_scope_pop();
    return 1;
}

START_TEST(test_numerics_alert_names_function_and_node) {
    gb_function *f = gb_function_new("naive_loss", log_fn, NULL);
    gb_tensor *y, *x = gb_scalar(GB_F32, 1);
    gb_function_call(f, &x, 1, NULL, 0, &y); /* traced with checks off */
    gb_enable_check_numerics();
    x = gb_scalar(GB_F32, 0);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    gb_disable_check_numerics();
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->op_name, "loss/Log");
    ck_assert_ptr_nonnull(strstr(e->message, "function 'naive_loss'"));
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("graph_exec");
    TCase *tc = tcase_create("exec");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_only_needed_ops_run);
    tcase_add_test(tc, test_stateful_ops_in_program_order);
    tcase_add_test(tc, test_run_functions_eagerly);
    tcase_add_test(tc, test_call_inside_trace_is_inlined);
    tcase_add_test(tc, test_traced_train_step_equals_eager);
    tcase_add_test(tc, test_traced_step_allocates_nothing_per_call);
    tcase_add_test(tc, test_freed_optimizer_is_an_error);
    tcase_add_test(tc, test_tape_outside_differentiates_through_call);
    tcase_add_test(tc, test_nested_tapes_inside_function);
    tcase_add_test(tc, test_numerics_alert_names_function_and_node);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
