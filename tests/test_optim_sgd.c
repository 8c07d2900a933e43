/* test_optim_sgd.c — SGD, momentum and Nesterov against hand-computed Keras values.
 *
 * Keras SGD: without momentum var -= lr g; with momentum m = momentum m -
 * lr g, then var += m, or with Nesterov var += momentum m - lr g. All
 * tests use x = 1, lr 0.1 and gradients 0.5, -1, 0.25.
 */
#include "optim_test_util.h"

static const double GRADS[3] = {0.5, -1.0, 0.25};

/* Runs the three steps on x = 1 and checks x (and the momentum slot). */
static void check_three_steps(gb_optimizer *opt, gb_dtype dt, const double *want_x,
                              const double *want_m, double tol) {
    gb_variable *x = ot_var("x", dt, 1, (const double[]){1.0});
    for (int t = 0; t < 3; t++) {
        ck_assert_msg(ot_step(opt, x, 1, &GRADS[t]), "%s", gb_error_string());
        OT_ASSERT_NEAR(ot_get(x, 0), want_x[t], tol);
        if (want_m) OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, x, "momentum"), 0), want_m[t], tol);
    }
    ck_assert_int_eq(gb_optimizer_iterations(opt), 3);
    gb_variable_free(x);
}

/* 1 - 0.05 = 0.95; + 0.1 = 1.05; - 0.025 = 1.025. */
START_TEST(test_sgd_plain) {
    gb_optimizer *opt = gb_sgd(0.1);
    check_three_steps(opt, GB_F64, (const double[]){0.95, 1.05, 1.025}, NULL, 1e-15);
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, NULL, 0), 0); /* no slots */
    gb_optimizer_free(opt);
    opt = gb_sgd(0.1);
    check_three_steps(opt, GB_F32, (const double[]){0.95, 1.05, 1.025}, NULL, 1e-7);
    gb_optimizer_free(opt);
}
END_TEST

/* m = 0.9 m - 0.1 g: -0.05, 0.055, 0.0245; x += m: 0.95, 1.005, 1.0295. */
START_TEST(test_sgd_momentum) {
    const double want_x[3] = {0.95, 1.005, 1.0295}, want_m[3] = {-0.05, 0.055, 0.0245};
    gb_optimizer *opt = gb_sgd_momentum(0.1, 0.9, false);
    check_three_steps(opt, GB_F64, want_x, want_m, 1e-15);
    gb_optimizer_free(opt);
    opt = gb_sgd_momentum(0.1, 0.9, false);
    check_three_steps(opt, GB_F32, want_x, want_m, 1e-7);
    gb_optimizer_free(opt);
}
END_TEST

/* Nesterov: x += 0.9 m - 0.1 g with the new m: 1 - 0.045 - 0.05 = 0.905;
 * + 0.0495 + 0.1 = 1.0545; + 0.02205 - 0.025 = 1.05155. */
START_TEST(test_sgd_nesterov) {
    const double want_x[3] = {0.905, 1.0545, 1.05155}, want_m[3] = {-0.05, 0.055, 0.0245};
    gb_optimizer *opt = gb_sgd_momentum(0.1, 0.9, true);
    check_three_steps(opt, GB_F64, want_x, want_m, 1e-15);
    gb_optimizer_free(opt);
    opt = gb_sgd_momentum(0.1, 0.9, true);
    check_three_steps(opt, GB_F32, want_x, want_m, 1e-7);
    gb_optimizer_free(opt);
}
END_TEST

/* Decoupled decay before the step: x = 1 - 0.1*0.5*1 - 0.1*0.5 = 0.9. */
START_TEST(test_sgd_weight_decay) {
    gb_sgd_options o = gb_sgd_defaults();
    ck_assert(o.learning_rate.initial_learning_rate == 0.01 && o.momentum == 0 && !o.nesterov);
    o.learning_rate = gb_lr_constant(0.1);
    o.weight_decay = 0.5;
    o.name = "MySGD";
    gb_optimizer *opt = gb_sgd_ex(&o);
    ck_assert_str_eq(gb_optimizer_name(opt), "MySGD");
    gb_variable *x = ot_var("x", GB_F64, 2, (const double[]){1.0, -2.0});
    ck_assert(ot_step(opt, x, 2, (const double[]){0.5, 0.0}));
    OT_ASSERT_NEAR(ot_get(x, 0), 0.9, 1e-15);
    OT_ASSERT_NEAR(ot_get(x, 1), -2.0 + 0.1, 1e-15);
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

/* float32 over 300 elements (vector body and tail) against a reference. */
START_TEST(test_sgd_nesterov_float32_vector) {
    enum { N = 300 };
    double x[N], m[N] = {0}, g[N];
    for (int i = 0; i < N; i++) x[i] = cos(i);
    gb_optimizer *opt = gb_sgd_momentum(0.05, 0.8, true);
    gb_variable *v = ot_var("w", GB_F32, N, x);
    for (int t = 1; t <= 3; t++) {
        for (int i = 0; i < N; i++) g[i] = sin(i * t);
        ck_assert(ot_step(opt, v, N, g));
        for (int i = 0; i < N; i++) {
            m[i] = 0.8 * m[i] - 0.05 * g[i];
            x[i] += 0.8 * m[i] - 0.05 * g[i];
        }
    }
    for (int i = 0; i < N; i++) OT_ASSERT_NEAR(ot_get(v, i), x[i], 1e-6);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_sgd_minimizes_bowl) {
    for (int d = 0; d < 2; d++) {
        gb_dtype dt = d ? GB_F64 : GB_F32;
        gb_optimizer *opts[3] = {gb_sgd(0.1), gb_sgd_momentum(0.1, 0.9, false),
                                 gb_sgd_momentum(0.1, 0.9, true)};
        for (int k = 0; k < 3; k++) {
            double worst = ot_minimize_bowl(opts[k], dt, 300);
            OT_ASSERT_OK();
            ck_assert_msg(worst < 1e-5, "optimizer %d (%s): max |x| %g", k, gb_dtype_name(dt),
                          worst);
            gb_optimizer_free(opts[k]);
        }
    }
}
END_TEST

START_TEST(test_sgd_bad_hyperparameters) {
    ck_assert_ptr_null(gb_sgd_momentum(0.1, 1.5, false));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "SGD: momentum must be in [0, 1], got 1.5");
    gb_clear_error();
    ck_assert_ptr_null(gb_sgd_momentum(0.1, -0.1, true));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "momentum must be in [0, 1], got -0.1");
    gb_clear_error();
    ck_assert_ptr_null(gb_sgd(-1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "learning_rate must be >= 0 and finite, got -1");
    gb_clear_error();
    ck_assert_ptr_null(gb_sgd(INFINITY));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "learning_rate must be >= 0 and finite, got inf");
    gb_clear_error();
    gb_sgd_options o = gb_sgd_defaults();
    o.weight_decay = -1e-3;
    ck_assert_ptr_null(gb_sgd_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "weight_decay must be >= 0 and finite, got -0.001");
    gb_clear_error();
    ck_assert_ptr_null(gb_sgd_ex(NULL));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_sgd_ex: options are NULL");
    gb_clear_error();
    /* Momentum 1 is allowed (Keras: [0, 1]); 0 means no slot. */
    gb_optimizer *opt = gb_sgd_momentum(0.1, 1.0, false);
    ck_assert_ptr_nonnull(opt);
    gb_optimizer_free(opt);
    OT_ASSERT_OK();
}
END_TEST

static Suite *sgd_suite(void) {
    Suite *s = suite_create("optim_sgd");
    TCase *tc = tcase_create("sgd");
    tcase_add_test(tc, test_sgd_plain);
    tcase_add_test(tc, test_sgd_momentum);
    tcase_add_test(tc, test_sgd_nesterov);
    tcase_add_test(tc, test_sgd_weight_decay);
    tcase_add_test(tc, test_sgd_nesterov_float32_vector);
    tcase_add_test(tc, test_sgd_minimizes_bowl);
    tcase_add_test(tc, test_sgd_bad_hyperparameters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(sgd_suite()); }
