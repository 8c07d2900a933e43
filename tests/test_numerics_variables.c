/* test_numerics_variables.c — numerics checks of what variables hold.
 *
 * A NaN reaches a variable through a write: an assign or an optimizer's
 * fused update (which has no output of its own). With checks on, the
 * writing op reports it, naming itself, the variable and the step; a
 * later read says the variable holds it and which write put it there, and
 * a read of a NaN from before checks were on says it was held already,
 * never that the read created it. A write made while checks were off is
 * never taken for one they checked.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

#define MAX_SEEN 8

/* The variable alerts of RECORD mode, as an observer sees them. */
typedef struct seen {
    int n;
    char message[MAX_SEEN][1400];
    char variable[MAX_SEEN][64];
    char op_type[MAX_SEEN][32];
    bool written[MAX_SEEN], created[MAX_SEEN];
    int output_index[MAX_SEEN];
    int64_t step[MAX_SEEN];
} seen;

static void on_alert(const gb_event *ev, void *user) {
    seen *s = user;
    const gb_numerics_alert *a = ev->detail;
    if (s->n >= MAX_SEEN) return;
    int i = s->n++;
    snprintf(s->message[i], sizeof s->message[i], "%s", a->message);
    snprintf(s->variable[i], sizeof s->variable[i], "%s", a->variable ? a->variable : "");
    snprintf(s->op_type[i], sizeof s->op_type[i], "%s", a->op_type);
    s->written[i] = a->variable_written;
    s->created[i] = a->created;
    s->output_index[i] = a->output_index;
    s->step[i] = a->has_step ? a->step : -1;
}

static void setup(void) {
    scope_setup();
    gb_nn_clear_session();
}

static void teardown(void) {
    gb_disable_check_numerics();
    gb_clear_step();
    scope_teardown();
}

/* Asserts the sticky error is the numerics error `message` of op_type,
 * then clears it. */
static void assert_numeric_error(const char *op_type, const char *message) {
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GB_ERR_NUMERIC);
    ck_assert_str_eq(e->op_type, op_type);
    char expect[1400];
    snprintf(expect, sizeof expect, "check_numerics: %s", message);
    ck_assert_str_eq(e->message, expect);
    gb_clear_error();
}

static gb_variable *f32_variable(const char *name, const float *values, int64_t n) {
    return gb_variable_new(name, gb_from_f32(values, 1, &n), true);
}

/* ---- writes ------------------------------------------------------------------------------ */

START_TEST(test_assign_of_nan_names_op_variable_and_step) {
    gb_variable *v = f32_variable("w", (float[]){0, 0, 0}, 3);
    gb_enable_check_numerics();
    gb_set_step(7);
    ck_assert(!gb_variable_assign(v, gb_from_f32((float[]){1, NAN, 3}, GB_SHAPE(3))));
    assert_numeric_error("AssignVariableOp",
                         "variable 'w' now holds 1 NaN, 0 +Inf, 0 -Inf (float32 [3]), written by "
                         "op 'AssignVariableOp' (type AssignVariableOp), first at index 1, step "
                         "7. The op received them: an input is already non-finite — input 0: "
                         "float32 [3] min 1 max 3 NaN 1 Inf 0");
    /* The write happened (the op failed after it): a later read says
     * what the variable holds and which write put it there. */
    gb_set_step(8);
    ck_assert_ptr_null(gb_variable_value(v));
    assert_numeric_error("ReadVariableOp",
                         "variable 'w' holds 1 NaN, 0 +Inf, 0 -Inf (float32 [3]), read by op "
                         "'ReadVariableOp' (type ReadVariableOp), first at index 1, step 8 "
                         "(written by AssignVariableOp at step 7)");
    gb_variable_free(v);
}
END_TEST

START_TEST(test_assign_add_overflow_is_created_by_the_assign) {
    gb_variable *v = f32_variable("w", (float[]){3e38f}, 1);
    gb_tensor *delta = gb_from_f32((float[]){3e38f}, GB_SHAPE(1));
    gb_enable_check_numerics();
    gb_set_step(2);
    /* Nothing has checked w's value yet: the report says so. */
    ck_assert(!gb_variable_assign_add(v, delta));
    assert_numeric_error("AssignAddVariableOp",
                         "variable 'w' now holds 0 NaN, 1 +Inf, 0 -Inf (float32 [1]), written by "
                         "op 'AssignAddVariableOp' (type AssignAddVariableOp), first at index 0, "
                         "step 2. The op created them: its inputs are finite (the value of 'w' "
                         "before this write was not checked) — input 0: float32 [1] min 3e+38 "
                         "max 3e+38 NaN 0 Inf 0");
    /* Once a read has checked the value, the report is sure. */
    ck_assert(gb_variable_assign(v, gb_from_f32((float[]){3e38f}, GB_SHAPE(1))));
    ck_assert_ptr_nonnull(gb_variable_value(v));
    ck_assert(!gb_variable_assign_add(v, delta));
    assert_numeric_error("AssignAddVariableOp",
                         "variable 'w' now holds 0 NaN, 1 +Inf, 0 -Inf (float32 [1]), written by "
                         "op 'AssignAddVariableOp' (type AssignAddVariableOp), first at index 0, "
                         "step 2. The op created them: its inputs are finite — input 0: float32 "
                         "[1] min 3e+38 max 3e+38 NaN 0 Inf 0");
    gb_variable_free(v);
}
END_TEST

START_TEST(test_sgd_update_with_nan_gradient_names_op_variable_and_step) {
    gb_name_scope_push("dense");
    gb_variable *kernel = f32_variable("kernel", (float[]){1, 2, 3, 4}, 4);
    gb_name_scope_pop();
    gb_optimizer *opt = gb_sgd(0.1);
    gb_tensor *grad = gb_from_f32((float[]){0, NAN, 0, 0}, GB_SHAPE(4));
    gb_enable_check_numerics();
    gb_set_step(3);
    ck_assert(!gb_optimizer_apply_gradients(opt, &grad, 1, &kernel, 1));
    assert_numeric_error("ResourceApplyGradientDescent",
                         "variable 'dense/kernel' now holds 1 NaN, 0 +Inf, 0 -Inf (float32 [4]), "
                         "written by op 'SGD/ResourceApplyGradientDescent' (type "
                         "ResourceApplyGradientDescent), first at index 1, step 3. The op "
                         "received them: an input is already non-finite — input 0: float32 [4] "
                         "min 0 max 0 NaN 1 Inf 0");
    gb_set_step(4);
    ck_assert_ptr_null(gb_variable_value(kernel));
    assert_numeric_error("ReadVariableOp",
                         "variable 'dense/kernel' holds 1 NaN, 0 +Inf, 0 -Inf (float32 [4]), read "
                         "by op 'ReadVariableOp' (type ReadVariableOp), first at index 1, step 4 "
                         "(written by ResourceApplyGradientDescent at step 3)");
    gb_optimizer_free(opt);
    gb_variable_free(kernel);
}
END_TEST

/* RECORD mode: Adam writes the variable and both slots, each checked;
 * with a read alive the update copies on write, and is checked the same. */
START_TEST(test_adam_update_reports_variable_then_slots) {
    gb_variable *w = f32_variable("w", (float[]){1, 2}, 2);
    gb_optimizer *opt = gb_adam(0.01);
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_set_step(11);
    gb_tensor *before = gb_variable_value(w);   /* held: the update copies on write */
    gb_tensor *grad = gb_from_f32((float[]){NAN, 1}, GB_SHAPE(2));
    ck_assert(gb_optimizer_apply_gradients(opt, &grad, 1, &w, 1));
    ck_assert(gb_ok());
    ck_assert_double_eq(gb_get(before, 0), 1.0);
    ck_assert_int_eq(s.n, 3);
    const char *names[3] = {"w", "Adam/w/m", "Adam/w/v"};
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(s.op_type[i], "ResourceApplyAdam");
        ck_assert_str_eq(s.variable[i], names[i]);
        ck_assert(s.written[i]);
        ck_assert(!s.created[i]);
        ck_assert_int_eq(s.output_index[i], -1);
        ck_assert_int_eq(s.step[i], 11);
    }
    ck_assert_str_eq(s.message[0],
                     "variable 'w' now holds 1 NaN, 0 +Inf, 0 -Inf (float32 [2]), written by op "
                     "'Adam/ResourceApplyAdam' (type ResourceApplyAdam), first at index 0, step 11. "
                     "The op received them: an input is already non-finite — input 0: float32 "
                     "[2] min 1 max 1 NaN 1 Inf 0");
    gb_observer_remove(id);
    gb_optimizer_free(opt);
    gb_variable_free(w);
}
END_TEST

/* A gradient too big to square: v overflows while w stays finite (Adam
 * divides by sqrt(v)), a stall only the slot's check shows. */
START_TEST(test_adam_slot_overflow_is_reported) {
    gb_variable *w = f32_variable("w", (float[]){1}, 1);
    gb_optimizer *opt = gb_adam(0.01);
    gb_tensor *grad = gb_from_f32((float[]){1e30f}, GB_SHAPE(1));
    gb_enable_check_numerics();
    gb_set_step(1);
    ck_assert_ptr_nonnull(gb_variable_value(w));
    ck_assert(!gb_optimizer_apply_gradients(opt, &grad, 1, &w, 1));
    assert_numeric_error("ResourceApplyAdam",
                         "variable 'Adam/w/v' now holds 0 NaN, 1 +Inf, 0 -Inf (float32 [1]), "
                         "written by op 'Adam/ResourceApplyAdam' (type ResourceApplyAdam), first at "
                         "index 0, step 1. The op created them: its inputs are finite (the value "
                         "of 'Adam/w/m' before this write was not checked) — input 0: float32 [1] "
                         "min 1e+30 max 1e+30 NaN 0 Inf 0");
    gb_optimizer_free(opt);
    gb_variable_free(w);
}
END_TEST

START_TEST(test_write_of_a_variable_already_bad_is_received) {
    gb_variable *v = f32_variable("w", (float[]){0, 0}, 2);
    seen s = {0};
    int id = gb_observer_add(on_alert, &s, GB_EVENT_NUMERICS);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_set_step(5);
    ck_assert(gb_variable_assign(v, gb_from_f32((float[]){NAN, 0}, GB_SHAPE(2))));
    ck_assert(gb_variable_assign_add(v, gb_ones(GB_F32, GB_SHAPE(2))));
    ck_assert_int_eq(s.n, 2);
    ck_assert(!s.created[1]);
    ck_assert_str_eq(s.message[1],
                     "variable 'w' now holds 1 NaN, 0 +Inf, 0 -Inf (float32 [2]), written by op "
                     "'AssignAddVariableOp' (type AssignAddVariableOp), first at index 0, step 5. "
                     "The op received them: variable 'w' already held non-finite values — input "
                     "0: float32 [2] min 1 max 1 NaN 0 Inf 0");
    gb_observer_remove(id);
    gb_variable_free(v);
}
END_TEST

/* ---- reads ------------------------------------------------------------------------------- */

START_TEST(test_nan_from_before_checks_is_held_not_created) {
    gb_variable *v = f32_variable("w", (float[]){0, 0, 0}, 3);
    ck_assert(gb_variable_assign(v, gb_from_f32((float[]){NAN, 1, 2}, GB_SHAPE(3))));
    gb_enable_check_numerics();
    gb_set_step(5);
    ck_assert_ptr_null(gb_variable_value(v));
    ck_assert_ptr_null(strstr(gb_last_error()->message, "created"));
    assert_numeric_error("ReadVariableOp",
                         "variable 'w' holds 1 NaN, 0 +Inf, 0 -Inf (float32 [3]), read by op "
                         "'ReadVariableOp' (type ReadVariableOp), first at index 0, step 5. No "
                         "write checked by numerics put them there: the variable held them "
                         "already (its initial value, or a write while checks were off)");
    gb_variable_free(v);
}
END_TEST

/* A value checked clean is not scanned again on reads; a write made
 * while checks were off must not pass for it. */
START_TEST(test_write_while_checks_off_is_not_taken_for_a_checked_one) {
    gb_variable *v = f32_variable("w", (float[]){0, 0}, 2);
    gb_enable_check_numerics();
    ck_assert(gb_variable_assign(v, gb_ones(GB_F32, GB_SHAPE(2))));
    ck_assert_ptr_nonnull(gb_variable_value(v));
    gb_disable_check_numerics();
    ck_assert(gb_variable_assign(v, gb_from_f32((float[]){1, INFINITY}, GB_SHAPE(2))));
    gb_enable_check_numerics();
    ck_assert_ptr_null(gb_variable_value(v));
    assert_numeric_error("ReadVariableOp",
                         "variable 'w' holds 0 NaN, 1 +Inf, 0 -Inf (float32 [2]), read by op "
                         "'ReadVariableOp' (type ReadVariableOp), first at index 1. No write "
                         "checked by numerics put them there: the variable held them already "
                         "(its initial value, or a write while checks were off)");
    gb_variable_free(v);
}
END_TEST

START_TEST(test_integer_variables_are_not_scanned) {
    int32_t zeros[2] = {0, 0};
    gb_variable *v = gb_variable_new("count", gb_tensor_from(GB_I32, zeros, GB_SHAPE(2)), false);
    gb_enable_check_numerics();
    ck_assert(gb_variable_assign_add(v, gb_tensor_from(GB_I32, (int32_t[]){1, 2}, GB_SHAPE(2))));
    ck_assert_double_eq(gb_get(gb_variable_value(v), 1), 2.0);
    ck_assert(gb_ok());
    gb_variable_free(v);
}
END_TEST

int main(void) {
    Suite *s = suite_create("numerics_variables");
    TCase *t = tcase_create("writes");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_assign_of_nan_names_op_variable_and_step);
    tcase_add_test(t, test_assign_add_overflow_is_created_by_the_assign);
    tcase_add_test(t, test_sgd_update_with_nan_gradient_names_op_variable_and_step);
    tcase_add_test(t, test_adam_update_reports_variable_then_slots);
    tcase_add_test(t, test_adam_slot_overflow_is_reported);
    tcase_add_test(t, test_write_of_a_variable_already_bad_is_received);
    suite_add_tcase(s, t);
    t = tcase_create("reads");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_nan_from_before_checks_is_held_not_created);
    tcase_add_test(t, test_write_while_checks_off_is_not_taken_for_a_checked_one);
    tcase_add_test(t, test_integer_variables_are_not_scanned);
    suite_add_tcase(s, t);
    return run_suite(s);
}
