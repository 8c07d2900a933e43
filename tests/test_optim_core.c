/* test_optim_core.c — what every optimizer shares: copy on write, apply_gradients rules.
 *
 * A value read before an update keeps its contents (variables and slots),
 * updates happen in place when nothing reads the value, a tape's saved
 * read survives the step, NULL gradients are skipped with one warning,
 * and every malformed call fails with a clear error before any variable
 * changes. One iteration is counted per apply, and all variables of a
 * step see the same step number.
 */
#include <stdio.h>

#include "gradcheck.h"
#include "optim_test_util.h"

/* ---- copy on write ------------------------------------------------------------------ */

START_TEST(test_read_before_update_keeps_value) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *v = ot_var("w", GB_F32, 3, (const double[]){1, 2, 3});
    gb_scope_begin();
    gb_tensor *before = gb_variable_value(v);
    const void *old_data = gb_data(before);
    gb_tensor *g = ot_tensor(GB_F32, 3, (const double[]){1, 1, 1});
    ck_assert(gb_optimizer_apply_gradients(opt, &g, 1, &v, 1));
    ASSERT_VALUES(before, 0, 1, 2, 3);
    gb_tensor *after = gb_variable_value(v);
    ck_assert_ptr_ne(gb_data(after), old_data); /* the update wrote a fresh buffer */
    ck_assert(fabs(gb_get(after, 0) - 0.9) < 1e-7 && fabs(gb_get(after, 2) - 2.9) < 1e-6);
    gb_scope_end();
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_slot_read_keeps_value) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *v = ot_var("w", GB_F64, 1, (const double[]){1});
    ck_assert(ot_step(opt, v, 1, (const double[]){0.5}));
    gb_variable *m = gb_optimizer_slot(opt, v, "m");
    gb_scope_begin();
    gb_tensor *m_before = gb_variable_value(m);
    ck_assert(ot_step(opt, v, 1, (const double[]){0.5}));
    OT_ASSERT_NEAR(gb_get(m_before, 0), 0.05, 1e-16);
    OT_ASSERT_NEAR(gb_get(gb_variable_value(m), 0), 0.095, 1e-15);
    gb_scope_end();
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

/* The data pointer of a read, taken in a scope that has ended. */
static const void *buffer_of(gb_variable *v) {
    gb_scope_begin();
    const void *p = gb_data(gb_variable_value(v));
    gb_scope_end();
    return p;
}

START_TEST(test_update_in_place_without_readers) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *v = ot_var("w", GB_F32, 4, (const double[]){1, 2, 3, 4});
    ck_assert(ot_step(opt, v, 4, (const double[]){1, 1, 1, 1}));
    const void *var_buf = buffer_of(v);
    const void *m_buf = buffer_of(gb_optimizer_slot(opt, v, "m"));
    ck_assert(ot_step(opt, v, 4, (const double[]){1, 1, 1, 1}));
    ck_assert_ptr_eq(buffer_of(v), var_buf);
    ck_assert_ptr_eq(buffer_of(gb_optimizer_slot(opt, v, "m")), m_buf);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

/* One step with the variable read (the read alive during the update);
 * returns the data pointer the variable has afterwards. */
static const void *step_with_read(gb_optimizer *opt, gb_variable *v, const void **read_data) {
    gb_scope_begin();
    *read_data = gb_data(gb_variable_value(v));
    ck_assert(ot_step(opt, v, 2, (const double[]){1, 1}));
    gb_scope_end();
    return buffer_of(v);
}

/* A loop whose reads are alive at update time alternates between two
 * buffers: the one replaced last step is rewritten once its readers are
 * gone, instead of allocating a new one every step. */
START_TEST(test_copy_on_write_reuses_released_buffer) {
    gb_optimizer *opt = gb_sgd(0.5);
    gb_variable *v = ot_var("w", GB_F32, 2, (const double[]){10, 20});
    const void *r0, *r1, *r2;
    const void *b1 = step_with_read(opt, v, &r0);
    const void *b2 = step_with_read(opt, v, &r1);
    const void *b3 = step_with_read(opt, v, &r2);
    ck_assert_ptr_ne(b1, r0);
    ck_assert_ptr_eq(r1, b1);
    ck_assert_ptr_eq(b2, r0); /* the first buffer, released, came back */
    ck_assert_ptr_eq(b3, b1);
    OT_ASSERT_NEAR(ot_get(v, 1), 20 - 1.5, 0);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

/* A spare still held by a reader (a value kept across steps) is never
 * written: that reader keeps its value. */
START_TEST(test_copy_on_write_spares_held_values) {
    gb_optimizer *opt = gb_sgd(0.5);
    gb_variable *v = ot_var("w", GB_F32, 2, (const double[]){10, 20});
    gb_scope_begin();
    gb_tensor *kept = gb_variable_value(v);
    const void *r;
    for (int s = 0; s < 4; s++) step_with_read(opt, v, &r);
    ASSERT_VALUES(kept, 0, 10, 20);
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(v, 0), 10 - 2, 0);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

/* The tape keeps the read of w for its backward pass; the step must not
 * change it. loss = sum(w * w), so the gradient is 2w. */
START_TEST(test_with_tape) {
    gb_optimizer *opt = gb_sgd(0.25);
    gb_variable *w = ot_var("w", GB_F32, 2, (const double[]){1, -2});
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    gb_tensor *wv = gb_variable_value(w);
    gb_tensor *loss = gb_reduce_sum(gb_mul(wv, wv), GB_ALL_AXES, false);
    gb_tape_end(tape);
    gb_tensor *grad[1];
    ck_assert_msg(gb_tape_gradient_vars(tape, loss, &w, 1, grad), "%s", gb_error_string());
    ck_assert(gb_optimizer_apply_gradients(opt, grad, 1, &w, 1));
    ASSERT_VALUES(wv, 0, 1, -2);
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(w, 0), 1 - 0.25 * 2, 0);
    OT_ASSERT_NEAR(ot_get(w, 1), -2 + 0.25 * 4, 0);
    gb_variable_free(w);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- steps and slots ------------------------------------------------------------------ */

/* Both variables must see t = 1 in the first step (same bias correction),
 * and the iteration count moves once per apply. */
START_TEST(test_one_iteration_per_apply) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *vars[3] = {ot_var("a", GB_F64, 1, (const double[]){1}),
                            ot_var("b", GB_F64, 1, (const double[]){1}),
                            ot_var("c", GB_F32, 1, (const double[]){1})};
    for (int step = 0; step < 2; step++) {
        gb_scope_begin();
        gb_tensor *g[3] = {gb_scalar(GB_F64, 0.5), gb_scalar(GB_F64, 0.5),
                           gb_scalar(GB_F32, 0.5)};
        /* scalars: reshape the variables' [1] into the gradients' shape */
        for (int i = 0; i < 3; i++) g[i] = gb_reshape(g[i], 1, (const int64_t[]){1});
        ck_assert(gb_optimizer_apply_gradients(opt, g, 3, vars, 3));
        gb_scope_end();
        ck_assert_int_eq(gb_optimizer_iterations(opt), step + 1);
    }
    for (int i = 0; i < 3; i++) OT_ASSERT_NEAR(ot_get(vars[i], 0), 0.8000010797749726, 1e-6);
    OT_ASSERT_NEAR(ot_get(vars[0], 0), ot_get(vars[1], 0), 0);
    for (int i = 0; i < 3; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_slot_names_and_listing) {
    gb_optimizer *opt = gb_sgd_momentum(0.1, 0.9, false);
    gb_name_scope_push("dense");
    gb_variable *k = ot_var("kernel", GB_F32, 2, (const double[]){1, 2});
    gb_variable *b = ot_var("bias", GB_F32, 1, (const double[]){3});
    gb_name_scope_pop();
    ck_assert_ptr_null(gb_optimizer_slot(opt, k, "momentum"));
    gb_variable *vars[2] = {k, b};
    ck_assert(gb_optimizer_build(opt, vars, 2));
    gb_variable *slots[2];
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, slots, 2), 2);
    ck_assert_str_eq(gb_variable_name(slots[0]), "SGD/dense/kernel/momentum");
    ck_assert_str_eq(gb_variable_name(slots[1]), "SGD/dense/bias/momentum");
    ck_assert_ptr_eq(gb_optimizer_slot(opt, b, "momentum"), slots[1]);
    ck_assert_ptr_null(gb_optimizer_slot(opt, b, "m"));
    ck_assert_int_eq(gb_variable_rank(slots[0]), 1);
    ck_assert_int_eq(gb_variable_shape(slots[0])[0], 2);
    OT_ASSERT_NEAR(ot_get(slots[0], 1), 0, 0); /* zeros */
    /* Building again (or applying) reuses the same slots. */
    ck_assert(gb_optimizer_build(opt, vars, 2));
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, NULL, 0), 2);
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, slots, 1), 2); /* total, 1 written */
    gb_variable_free(k);
    gb_variable_free(b);
    gb_optimizer_free(opt);
}
END_TEST

/* Many variables: the per-variable index grows and finds each again. */
START_TEST(test_many_variables) {
    enum { N = 200 };
    gb_optimizer *opt = gb_sgd_momentum(0.5, 0.5, false);
    gb_variable *vars[N];
    for (int i = 0; i < N; i++) vars[i] = ot_var("v", GB_F64, 1, (const double[]){i});
    for (int step = 0; step < 2; step++) {
        gb_scope_begin();
        gb_tensor *g[N];
        for (int i = 0; i < N; i++) g[i] = ot_tensor(GB_F64, 1, (const double[]){1});
        ck_assert(gb_optimizer_apply_gradients(opt, g, N, vars, N));
        gb_scope_end();
    }
    /* m: -0.5, then -0.75; x = i - 1.25. */
    for (int i = 0; i < N; i++) OT_ASSERT_NEAR(ot_get(vars[i], 0), i - 1.25, 1e-15);
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, NULL, 0), N);
    for (int i = 0; i < N; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- NULL gradients -------------------------------------------------------------------- */

START_TEST(test_null_gradient_skipped_with_one_warning) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *vars[2] = {ot_var("a", GB_F64, 1, (const double[]){1}),
                            ot_var("unused", GB_F64, 1, (const double[]){5})};
    int warnings = gb_warning_count();
    for (int step = 0; step < 2; step++) {
        gb_scope_begin();
        gb_tensor *g[2] = {ot_tensor(GB_F64, 1, (const double[]){1}), NULL};
        ck_assert(gb_optimizer_apply_gradients(opt, g, 2, vars, 2));
        gb_scope_end();
    }
    OT_ASSERT_OK();
    ck_assert_int_eq(gb_warning_count(), warnings + 1);
    ck_assert_msg(strstr(gb_last_warning(), "gradients do not exist for variable 'unused'"), "%s",
                  gb_last_warning());
    OT_ASSERT_NEAR(ot_get(vars[0], 0), 0.8, 1e-15);
    OT_ASSERT_NEAR(ot_get(vars[1], 0), 5, 0);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 2);
    for (int i = 0; i < 2; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_all_gradients_null) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *vars[2] = {ot_var("a", GB_F64, 1, (const double[]){1}),
                            ot_var("b", GB_F64, 1, (const double[]){1})};
    gb_tensor *g[2] = {NULL, NULL};
    ck_assert(!gb_optimizer_apply_gradients(opt, g, 2, vars, 2));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "no gradients provided for any of the 2 variables, e.g. a");
    ck_assert_int_eq(gb_optimizer_iterations(opt), 0);
    for (int i = 0; i < 2; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- errors: checked before anything changes ----------------------------------------- */

START_TEST(test_count_mismatch) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *vars[3] = {ot_var("a", GB_F64, 1, (const double[]){1}),
                            ot_var("b", GB_F64, 1, (const double[]){1}),
                            ot_var("c", GB_F64, 1, (const double[]){1})};
    gb_scope_begin();
    gb_tensor *g[2] = {ot_tensor(GB_F64, 1, (const double[]){1}),
                       ot_tensor(GB_F64, 1, (const double[]){1})};
    ck_assert(!gb_optimizer_apply_gradients(opt, g, 2, vars, 3));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_optimizer_apply_gradients: 2 gradients for 3 variables");
    ck_assert_msg(strstr(gb_error_string(), "test_optim_core.c"), "no call site: %s",
                  gb_error_string());
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(vars[0], 0), 1, 0);
    for (int i = 0; i < 3; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt);
}
END_TEST

/* The first variable's gradient is fine, the second's is not: nothing is
 * updated, no slot is created, no iteration counted. */
START_TEST(test_shape_mismatch_changes_nothing) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_name_scope_push("dense");
    gb_variable *a = ot_var("bias", GB_F32, 3, (const double[]){1, 2, 3});
    gb_scope_begin();
    gb_variable *b = gb_variable_new("kernel", gb_zeros(GB_F32, GB_SHAPE(2, 2)), true);
    gb_scope_end();
    gb_name_scope_pop();
    gb_variable *vars[2] = {a, b};
    gb_scope_begin();
    gb_tensor *g[2] = {ot_tensor(GB_F32, 3, (const double[]){1, 1, 1}),
                       gb_zeros(GB_F32, GB_SHAPE(4))};
    ck_assert(!gb_optimizer_apply_gradients(opt, g, 2, vars, 2));
    OT_ASSERT_ERROR(GB_ERR_SHAPE, "the gradient for variable 'dense/kernel' is float32 [4] but "
                                  "the variable is float32 [2,2] (gradient 1)");
    gb_scope_end();
    gb_clear_error();
    OT_ASSERT_NEAR(ot_get(a, 0), 1, 0);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 0);
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, NULL, 0), 0);
    gb_variable_free(a);
    gb_variable_free(b);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_dtype_mismatch) {
    gb_optimizer *opt = gb_rmsprop(0.1);
    gb_variable *v = ot_var("w", GB_F32, 2, (const double[]){1, 2});
    gb_scope_begin();
    gb_tensor *g = ot_tensor(GB_F64, 2, (const double[]){1, 2});
    ck_assert(!gb_optimizer_apply_gradients(opt, &g, 1, &v, 1));
    OT_ASSERT_ERROR(GB_ERR_DTYPE,
                    "the gradient for variable 'w' is float64 [2] but the variable is float32 [2]");
    gb_scope_end();
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_integer_variable) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_scope_begin();
    gb_variable *v = gb_variable_new("count", gb_zeros(GB_I32, GB_SHAPE(2)), true);
    gb_tensor *g = gb_zeros(GB_I32, GB_SHAPE(2));
    ck_assert(!gb_optimizer_apply_gradients(opt, &g, 1, &v, 1));
    OT_ASSERT_ERROR(GB_ERR_DTYPE,
                    "variable 'count' is int32; optimizers update float32 and float64 variables");
    gb_scope_end();
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_bad_arguments) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *v = ot_var("w", GB_F64, 1, (const double[]){1});
    gb_scope_begin();
    gb_tensor *g = ot_tensor(GB_F64, 1, (const double[]){1});
    ck_assert(!gb_optimizer_apply_gradients(NULL, &g, 1, &v, 1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "the optimizer is NULL");
    gb_clear_error();
    gb_variable *null_var = NULL;
    ck_assert(!gb_optimizer_apply_gradients(opt, &g, 1, &null_var, 1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "variable 0 is NULL");
    gb_clear_error();
    ck_assert(!gb_optimizer_apply_gradients(opt, &g, -1, &v, -1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "negative count");
    gb_clear_error();
    ck_assert(!gb_optimizer_apply_gradients(opt, NULL, 1, &v, 1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "NULL array");
    gb_clear_error();
    ck_assert(!gb_optimizer_build(opt, &null_var, 1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_optimizer_build: variable 0 is NULL");
    gb_clear_error();
    ck_assert(!gb_optimizer_exclude_from_weight_decay(opt, ""));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "empty name part");
    gb_clear_error();
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(v, 0), 1, 0);
    gb_optimizer_free(NULL); /* like free(NULL) */
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

/* An earlier error may be why a gradient is NULL: apply refuses to run
 * and keeps that first error. */
START_TEST(test_pending_error_refuses) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *v = ot_var("w", GB_F64, 1, (const double[]){1});
    gb_scope_begin();
    gb_tensor *g = ot_tensor(GB_F64, 1, (const double[]){1});
    gb_tensor *bad = gb_matmul(g, g); /* rank 1: fails */
    ck_assert_ptr_null(bad);
    const gb_status first = gb_last_error()->code;
    ck_assert(!gb_optimizer_apply_gradients(opt, &g, 1, &v, 1));
    ck_assert_int_eq(gb_last_error()->code, first);
    ck_assert_str_eq(gb_last_error()->op_type, "MatMul");
    gb_scope_end();
    gb_clear_error();
    OT_ASSERT_NEAR(ot_get(v, 0), 1, 0);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 0);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *core_suite(void) {
    Suite *s = suite_create("optim_core");
    TCase *cow = tcase_create("copy_on_write");
    tcase_add_test(cow, test_read_before_update_keeps_value);
    tcase_add_test(cow, test_slot_read_keeps_value);
    tcase_add_test(cow, test_update_in_place_without_readers);
    tcase_add_test(cow, test_copy_on_write_reuses_released_buffer);
    tcase_add_test(cow, test_copy_on_write_spares_held_values);
    tcase_add_test(cow, test_with_tape);
    suite_add_tcase(s, cow);
    TCase *steps = tcase_create("steps");
    tcase_add_test(steps, test_one_iteration_per_apply);
    tcase_add_test(steps, test_slot_names_and_listing);
    tcase_add_test(steps, test_many_variables);
    tcase_add_test(steps, test_null_gradient_skipped_with_one_warning);
    tcase_add_test(steps, test_all_gradients_null);
    suite_add_tcase(s, steps);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_count_mismatch);
    tcase_add_test(errors, test_shape_mismatch_changes_nothing);
    tcase_add_test(errors, test_dtype_mismatch);
    tcase_add_test(errors, test_integer_variable);
    tcase_add_test(errors, test_bad_arguments);
    tcase_add_test(errors, test_pending_error_refuses);
    suite_add_tcase(s, errors);
    return s;
}

int main(void) { return ot_run(core_suite()); }
