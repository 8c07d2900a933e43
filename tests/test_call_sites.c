/* test_call_sites.c — an error names the line of the call that failed.
 *
 * Every public function that can fail records its caller's file:line
 * (GB_AT, gb_base.h); the call_sites test checks the headers, these the
 * lines themselves: for the functions a new user found naming an earlier,
 * unrelated op (a second gradient() on a non-persistent tape, assign with
 * the wrong shape, jacobian), for library code calling itself (which must
 * not move the call site), for user callbacks the library runs (whose
 * calls must not leave their lines behind), and for a call through a
 * function pointer (which skips the macro, as gb_base.h documents).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

/* Asserts the error is exactly `message` recorded at this file's `line`,
 * as gb_error_string() shows it, then clears it. */
static void assert_error_at(const char *message, int line) {
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->file, __FILE__);
    ck_assert_int_eq(e->line, line);
    char expect[1024];
    snprintf(expect, sizeof expect, "%s (at test_call_sites.c:%d)", message, line);
    ck_assert_str_eq(gb_error_string(), expect);
    gb_clear_error();
}

/* ---- the functions the macros did not wrap --------------------------------------------- */

/* The line of the second gradient() call below. */
static int second_gradient_line;

/* gradient() twice with an unrelated op between: the error must name the
 * second gradient(), not the op. */
static gb_tensor *gradient_twice(gb_tape *tape, gb_tensor *y, gb_tensor *x) {
    gb_tensor *first = gb_tape_gradient(tape, y, x);
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(gb_mul(first, x));
    second_gradient_line = __LINE__ + 1;
    return gb_tape_gradient(tape, y, x);
}

START_TEST(test_second_gradient_names_its_line) {
    gb_tensor *x = gb_scalar(GB_F32, 3);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    gb_tape_end(tape);
    ck_assert_ptr_null(gradient_twice(tape, y, x));
    assert_error_at("StateError: a non-persistent GradientTape can compute gradients only once; "
                    "begin it with gb_tape_begin_ex(true, ...) to call gradient() several times",
                    second_gradient_line);
}
END_TEST

START_TEST(test_assign_with_wrong_shape_names_its_line) {
    gb_variable *v = gb_variable_new("w", gb_zeros(GB_F32, GB_SHAPE(2, 3)), true);
    gb_tensor *value = gb_ones(GB_F32, GB_SHAPE(3, 2));
    int line = __LINE__ + 1;
    ck_assert(!gb_variable_assign(v, value));
    ck_assert_str_eq(gb_last_error()->op_type, "AssignVariableOp");
    assert_error_at("ShapeError: AssignVariableOp: variable 'w' is float32 [2,3] but the value "
                    "is float32 [3,2]",
                    line);
    gb_variable_free(v);
}
END_TEST

START_TEST(test_jacobian_names_its_line) {
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(1, 1, 1, 2));
    gb_tape *tape = gb_tape_begin_ex(true, true);
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_reshape(gb_mul(x, x), GB_SHAPE(1, 1, 1, 1, 2));
    gb_tape_end(tape);
    int line = __LINE__ + 1;
    ck_assert_ptr_null(gb_tape_jacobian(tape, y, x, GB_UNCONNECTED_NONE));
    assert_error_at("ShapeError: jacobian: result rank 9 exceeds 8", line);
}
END_TEST

START_TEST(test_variable_value_names_its_line) {
    ck_assert_ptr_nonnull(gb_zeros(GB_F32, GB_SHAPE(2)));
    int line = __LINE__ + 1;
    ck_assert_ptr_null(gb_variable_value(NULL));
    assert_error_at("ValueError: gb_variable_value: NULL variable", line);
}
END_TEST

/* ---- library code and callbacks ------------------------------------------------------- */

/* The loss runs several ops inside the library; the one that fails must
 * still name the user's line (the library calls itself without macros). */
START_TEST(test_library_calls_leave_the_call_site) {
    gb_tensor *y_true = gb_zeros(GB_F32, GB_SHAPE(4, 3));
    gb_tensor *y_pred = gb_zeros(GB_F32, GB_SHAPE(4, 2));
    int line = __LINE__ + 1;
    ck_assert_ptr_null(gb_loss_mean_squared_error(y_true, y_pred, GB_REDUCTION_MEAN));
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->file, __FILE__);
    ck_assert_int_eq(e->line, line);
    gb_clear_error();
}
END_TEST

/* A user's layer that flattens everything to rank 1, with ops of its own
 * (wrapped: they record lines in this file). */
static gb_tensor *flatten_all(gb_module *m, gb_tensor *x, bool training) {
    (void)m, (void)training;
    gb_tensor *doubled = gb_mul_scalar(x, 2.0);
    return gb_reshape(doubled, GB_SHAPE(-1));
}

static const gb_module_type flatten_all_type = {
    .class_name = "FlattenAll",
    .default_name = "flatten_all",
    .call = flatten_all,
};

START_TEST(test_callbacks_leave_the_call_site) {
    gb_module *model = gb_sequential_new("model");
    gb_sequential_add(model, gb_module_new(&flatten_all_type, NULL, 1));
    gb_sequential_add(model, gb_dense_new(2, NULL));
    /* Dense after the user's layer gets rank 1: its error is the model
     * call's, not the line of the user's last op. */
    int line = __LINE__ + 1;
    ck_assert_ptr_null(gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(2, 3)), false));
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->file, __FILE__);
    ck_assert_int_eq(e->line, line);
    gb_clear_error();
    gb_module_free(model);
}
END_TEST

/* ---- function pointers ------------------------------------------------------------------- */

START_TEST(test_function_pointer_skips_the_macro) {
    gb_tensor *(*gradient)(gb_tape *, gb_tensor *, gb_tensor *) = gb_tape_gradient;
    gb_tensor *x = gb_scalar(GB_F32, 3);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tensor *y = gb_mul(x, x);
    int last_wrapped_line = __LINE__ + 1;
    gb_tape_end(tape);
    ck_assert_double_eq(gb_item(gradient(tape, y, x)), 6.0);
    /* Through the pointer nothing records a call site: the error names
     * the last wrapped call, gb_tape_end above. */
    ck_assert_ptr_null(gradient(tape, y, x));
    ck_assert_int_eq(gb_last_error()->line, last_wrapped_line);
    gb_clear_error();
}
END_TEST

int main(void) {
    Suite *s = suite_create("call_sites");
    TCase *t = tcase_create("call_sites");
    tcase_add_checked_fixture(t, scope_setup, scope_teardown);
    tcase_add_test(t, test_second_gradient_names_its_line);
    tcase_add_test(t, test_assign_with_wrong_shape_names_its_line);
    tcase_add_test(t, test_jacobian_names_its_line);
    tcase_add_test(t, test_variable_value_names_its_line);
    tcase_add_test(t, test_library_calls_leave_the_call_site);
    tcase_add_test(t, test_callbacks_leave_the_call_site);
    tcase_add_test(t, test_function_pointer_skips_the_macro);
    suite_add_tcase(s, t);
    return run_suite(s);
}
