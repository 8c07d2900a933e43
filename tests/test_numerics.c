/* test_numerics.c — numerics checks name the op that made a NaN/Inf.
 *
 * RAISE mode stops at the first bad op with an error naming it; RECORD
 * mode emits one alert per bad output and keeps going; alerts tell an op
 * that created a NaN from one that received it, and in a backward pass
 * name the forward op whose gradient produced it.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "gradcheck.h"
#include "test_util.h"

#define MAX_SEEN 16

typedef struct seen {
    int n;
    char op_type[MAX_SEEN][32];
    char op_name[MAX_SEEN][160];
    char forward_op[MAX_SEEN][160];
    bool created[MAX_SEEN], backward[MAX_SEEN];
    int64_t nan[MAX_SEEN], pinf[MAX_SEEN], ninf[MAX_SEEN], first[MAX_SEEN], step[MAX_SEEN];
} seen;

static void on_alert(const gb_event *ev, void *user) {
    seen *s = user;
    const gb_numerics_alert *a = ev->detail;
    if (s->n >= MAX_SEEN) return;
    int i = s->n++;
    snprintf(s->op_type[i], sizeof s->op_type[i], "%s", a->op_type);
    snprintf(s->op_name[i], sizeof s->op_name[i], "%s", a->op_name);
    snprintf(s->forward_op[i], sizeof s->forward_op[i], "%s", a->forward_op ? a->forward_op : "");
    s->created[i] = a->created;
    s->backward[i] = a->backward;
    s->nan[i] = a->nan_count;
    s->pinf[i] = a->pos_inf_count;
    s->ninf[i] = a->neg_inf_count;
    s->first[i] = a->first_index;
    s->step[i] = a->has_step ? a->step : -1;
}

static void teardown(void) {
    gb_disable_check_numerics();
    gb_clear_step();
    gb_clear_error();
}

/* Runs f under RAISE and returns the error (which must exist). */
static const gb_error *raised(gb_tensor *result) {
    ck_assert_ptr_null(result);
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GB_ERR_NUMERIC);
    return e;
}

START_TEST(test_log_of_zero_is_named_log) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_name_scope_push("loss");
    const gb_error *e = raised(gb_log(gb_from_f32((float[]){1, 0, 2}, GB_SHAPE(3))));
    gb_name_scope_pop();
    ck_assert_str_eq(e->op_type, "Log");
    ck_assert_str_eq(e->op_name, "loss/Log");
    ck_assert_ptr_nonnull(strstr(e->message, "0 NaN, 0 +Inf, 1 -Inf in output 0 (float32 [3])"));
    ck_assert_ptr_nonnull(strstr(e->message, "first at index 1"));
    ck_assert_ptr_nonnull(strstr(e->message, "The op created them"));
    ck_assert_ptr_nonnull(strstr(e->message, "input 0: float32 [3] min 0 max 2 NaN 0 Inf 0"));
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_zero_over_zero_is_named_div) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_set_step(42);
    gb_tensor *z = gb_zeros(GB_F64, GB_SHAPE(2));
    const gb_error *e = raised(gb_div(z, z));
    ck_assert_str_eq(e->op_type, "Div");
    ck_assert_ptr_nonnull(strstr(e->message, "2 NaN, 0 +Inf, 0 -Inf"));
    ck_assert_ptr_nonnull(strstr(e->message, "step 42"));
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_sqrt_of_negative_and_exp_overflow) {
    gb_scope_begin();
    gb_enable_check_numerics();
    ck_assert_str_eq(raised(gb_sqrt(gb_scalar(GB_F32, -1)))->op_type, "Sqrt");
    gb_clear_error();
    const gb_error *e = raised(gb_exp(gb_scalar(GB_F32, 100)));
    ck_assert_str_eq(e->op_type, "Exp");
    ck_assert_ptr_nonnull(strstr(e->message, "0 NaN, 1 +Inf, 0 -Inf"));
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_nothing_runs_after_the_first_bad_op) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_tensor *y = gb_log(gb_scalar(GB_F32, 0));
    gb_tensor *z = gb_mul(y, gb_scalar(GB_F32, 2)); /* NULL in: never runs */
    ck_assert_ptr_null(z);
    ck_assert_str_eq(gb_last_error()->op_type, "Log");
    ck_assert_int_eq(gb_numerics_alert_count(), 1);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_record_mode_distinguishes_created_and_received) {
    gb_scope_begin();
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_tensor *y = gb_log(gb_from_f32((float[]){0, 1}, GB_SHAPE(2)));
    gb_tensor *z = gb_mul(y, gb_scalar(GB_F32, 2));
    gb_tensor *w = gb_add(z, gb_scalar(GB_F32, 1));
    ck_assert_ptr_nonnull(w); /* training goes on */
    ck_assert(gb_ok());
    ck_assert_int_eq(s.n, 3);
    ck_assert_str_eq(s.op_type[0], "Log");
    ck_assert(s.created[0]);
    ck_assert_int_eq(s.ninf[0], 1);
    ck_assert_int_eq(s.first[0], 0);
    ck_assert_str_eq(s.op_type[1], "Mul");
    ck_assert(!s.created[1]);
    ck_assert_str_eq(s.op_type[2], "Add");
    ck_assert(!s.created[2]);
    ck_assert_int_eq(gb_numerics_alert_count(), 3);
    gb_observer_remove(id);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_record_mode_limit_keeps_counting) {
    gb_scope_begin();
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 2);
    gb_tensor *bad = gb_scalar(GB_F64, NAN);
    for (int i = 0; i < 5; i++) bad = gb_add(bad, bad);
    ck_assert_int_eq(s.n, 2);
    ck_assert_int_eq(gb_numerics_alert_count(), 5);
    gb_observer_remove(id);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_backward_only_nan_names_forward_op) {
    gb_scope_begin();
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_tensor *x = gb_scalar(GB_F64, 0);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_name_scope_push("model");
    gb_tensor *y = gb_sqrt(x); /* finite forward: sqrt(0) = 0 */
    gb_name_scope_pop();
    gb_tape_end(tape);
    ck_assert_int_eq(s.n, 0);
    gb_tensor *g = gb_tape_gradient(tape, y, x); /* 0.5 / sqrt(0) = +Inf */
    ck_assert_ptr_nonnull(g);
    ck_assert(isinf(gb_item(g)));
    ck_assert_int_ge(s.n, 1);
    ck_assert(s.backward[0]);
    ck_assert_str_eq(s.forward_op[0], "model/Sqrt");
    ck_assert_ptr_nonnull(strstr(s.op_name[0], "gradients/model/Sqrt_grad/"));
    ck_assert_int_eq(s.pinf[0], 1);
    gb_observer_remove(id);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_backward_raise_message) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_tensor *x = gb_scalar(GB_F64, 0);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_sqrt(x);
    gb_tape_end(tape);
    ck_assert_ptr_null(gb_tape_gradient(tape, y, x));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_NUMERIC);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "in the backward pass of 'Sqrt' (type Sqrt)"));
    teardown();
    gb_scope_end();
}
END_TEST

/* ---- alerts from traced graphs ---------------------------------------------------------- */

/* d sqrt(x)/dx taken by a tape inside the function: its backward ops are
 * nodes of the graph. */
static int sqrt_slope(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, in[0]);
    gb_name_scope_push("norm");
    gb_tensor *y = gb_sqrt(in[0]);
    gb_name_scope_pop();
    gb_tape_end(tape);
    out[0] = gb_tape_gradient(tape, y, in[0]);
    return out[0] ? 1 : -1;
}

/* A NaN/Inf made by a node of a traced backward pass is reported as the
 * backward pass of its forward node, as eagerly. */
START_TEST(test_traced_backward_alert_says_backward) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_function *f = gb_function_new("sqrt_slope", sqrt_slope, NULL);
    gb_tensor *x = gb_from_f64((const double[]){4, 0}, GB_SHAPE(2)), *g;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &g), -1);
    ck_assert_str_eq(gb_last_error()->message,
                     "check_numerics: 0 NaN, 1 +Inf, 0 -Inf in output 0 (float64 [2]) of op "
                     "'gradients/norm/Sqrt_grad/Div' (type Div) in the backward pass of 'norm/Sqrt' "
                     "(type Sqrt) in function 'sqrt_slope', first at index 1. The op created them: its "
                     "inputs are finite — input 0: float64 [2] min 0 max 4 NaN 0 Inf 0; input 1: "
                     "float64 [2] min 0.5 max 0.5 NaN 0 Inf 0");
    gb_clear_error();
    gb_function_free(f);
    teardown();
    gb_scope_end();
}
END_TEST

/* log(x) * 3, fused into one node named after the op it computes (the
 * Mul); the alert names the step that made the -Inf and that node. */
static int log3(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("naive");
    out[0] = gb_mul_scalar(gb_log(in[0]), 3);
    gb_name_scope_pop();
    return 1;
}

START_TEST(test_fused_step_alert_names_its_node) {
    gb_scope_begin();
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics();
    gb_function *f = gb_function_new("log3", log3, NULL);
    gb_tensor *x = gb_from_f64((const double[]){1, 0, 2}, GB_SHAPE(3)), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    ck_assert_msg(strstr(gb_function_graph_text(f), "naive/Mul = FusedElementwise(x0, naive/Const) "
                                                    "{steps=[Log(in0) \"naive/Log\", Mul(s0,in1) \"naive/Mul\"]}"),
                  "%s", gb_function_graph_text(f));
    ck_assert_str_eq(gb_last_error()->message,
                     "check_numerics: 0 NaN, 0 +Inf, 1 -Inf in output 0 (float64 [3]) of op 'naive/Log' "
                     "(type Log), fused into node 'naive/Mul' in function 'log3', first at index 1. The op "
                     "created them: its inputs are finite — input 0: float64 [3] min 0 max 2 NaN 0 Inf 0; "
                     "input 1: float64 [] min 3 max 3 NaN 0 Inf 0");
    gb_clear_error();
    /* Recorded, the alert's op is the step, of its own type. */
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_int_eq(s.n, 1);
    ck_assert_str_eq(s.op_name[0], "naive/Log");
    ck_assert_str_eq(s.op_type[0], "Log");
    ck_assert(!s.backward[0]);
    gb_observer_remove(id);
    gb_function_free(f);
    teardown();
    gb_scope_end();
}
END_TEST

/* onehot * log(p), fused: log(0) is -Inf and times 0 a NaN, which is the
 * node's output. The alert counts what the Log made, as the unfused
 * graph's Log alert does (the traced nan_hunt's read "11 NaN ... of op
 * 'naive_cross_entropy/Log'" beside the advice "log(0) = -Inf"). */
static int log_times(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("naive");
    out[0] = gb_mul(in[1], gb_log(in[0]));
    gb_name_scope_pop();
    return 1;
}

START_TEST(test_fused_step_alert_counts_the_steps_values) {
    gb_scope_begin();
    gb_enable_check_numerics();
    gb_function *f = gb_function_new("log_times", log_times, NULL);
    gb_tensor *in[2] = {gb_from_f32((const float[]){1, 0, 2}, GB_SHAPE(3)),
                        gb_from_f32((const float[]){1, 0, 1}, GB_SHAPE(3))}, *y;
    ck_assert_int_eq(gb_function_call(f, in, 2, NULL, 0, &y), -1);
    ck_assert_msg(strstr(gb_function_graph_text(f), "FusedElementwise"), "%s", gb_function_graph_text(f));
    ck_assert_msg(strstr(gb_last_error()->message,
                         "check_numerics: 0 NaN, 0 +Inf, 1 -Inf in output 0 (float32 [3]) of op 'naive/Log' "
                         "(type Log), fused into node 'naive/Mul'") == gb_last_error()->message,
                  "%s", gb_last_error()->message);
    gb_clear_error();
    gb_function_free(f);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_check_numerics_op) {
    gb_scope_begin();
    gb_tensor *ok = gb_from_f32((float[]){1, 2}, GB_SHAPE(2));
    gb_tensor *same = gb_check_numerics(ok, "activations");
    ASSERT_VALUES(same, 0, 1, 2);
    ck_assert_ptr_eq(gb_data(same), gb_data(ok)); /* an identity: no copy */
    gb_tensor *bad = gb_from_f32((float[]){1, NAN, INFINITY}, GB_SHAPE(3));
    ck_assert_ptr_null(gb_check_numerics(bad, "activations"));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_NUMERIC);
    ck_assert_str_eq(gb_last_error()->op_type, "CheckNumerics");
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "activations: tensor had 1 NaN, 1 +Inf, 0 -Inf values, first at index 1"));
    gb_clear_error();
    ck_assert_ptr_null(gb_check_numerics(gb_zeros(GB_I32, GB_SHAPE(2)), "ints"));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_DTYPE);
    teardown();
    gb_scope_end();
}
END_TEST

START_TEST(test_checks_off_cost_nothing_and_change_nothing) {
    gb_scope_begin();
    gb_tensor *y = gb_log(gb_scalar(GB_F32, 0));
    ck_assert_ptr_nonnull(y);
    ck_assert(isinf(gb_item(y)));
    ck_assert(gb_ok());
    ck_assert(!gb_check_numerics_enabled());
    gb_scope_end();
}
END_TEST

int main(void) {
    Suite *s = suite_create("numerics");
    TCase *t = tcase_create("raise");
    tcase_add_test(t, test_log_of_zero_is_named_log);
    tcase_add_test(t, test_zero_over_zero_is_named_div);
    tcase_add_test(t, test_sqrt_of_negative_and_exp_overflow);
    tcase_add_test(t, test_nothing_runs_after_the_first_bad_op);
    tcase_add_test(t, test_backward_raise_message);
    tcase_add_test(t, test_traced_backward_alert_says_backward);
    tcase_add_test(t, test_fused_step_alert_names_its_node);
    tcase_add_test(t, test_fused_step_alert_counts_the_steps_values);
    tcase_add_test(t, test_check_numerics_op);
    tcase_add_test(t, test_checks_off_cost_nothing_and_change_nothing);
    suite_add_tcase(s, t);
    t = tcase_create("record");
    tcase_add_test(t, test_record_mode_distinguishes_created_and_received);
    tcase_add_test(t, test_record_mode_limit_keeps_counting);
    tcase_add_test(t, test_backward_only_nan_names_forward_op);
    suite_add_tcase(s, t);
    return run_suite(s);
}
