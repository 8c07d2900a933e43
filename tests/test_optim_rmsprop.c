/* test_optim_rmsprop.c — RMSprop's four variants against hand-computed Keras values.
 *
 * Keras RMSprop: v = rho v + (1 - rho) g^2; centered: a = rho a + (1 - rho)
 * g and the denominator is v - a^2 + eps (else v + eps); inc = lr g /
 * sqrt(denominator); with momentum p = momentum p + inc, var -= p; else
 * var -= inc. All tests: x = 1, lr 0.01, rho 0.9, eps 1e-7, gradients
 * 0.5, -1, 0.25.
 */
#include "optim_test_util.h"

static const double GRADS[3] = {0.5, -1.0, 0.25};

typedef struct expect {
    double momentum;
    bool centered;
    double x[3];
} expect;

/* Step 1 of the plain variant: v = 0.1 * 0.25 = 0.025, inc = 0.01 * 0.5 /
 * sqrt(0.0250001) = 0.0316227, x = 0.9683773. Centered: a = 0.05, the
 * denominator 0.025 - 0.0025 + 1e-7, x = 0.9666667. */
static const expect VARIANTS[4] = {
    {0.0, false, {0.9683772866436797, 0.9969487035533079, 0.9896242225054982}},
    {0.5, false, {0.9683772866436797, 0.9811373468751476, 0.9801928959430719}},
    {0.0, true, {0.9666667407404939, 0.9955975977398521, 0.9882541742947754}},
    {0.5, true, {0.9666667407404939, 0.978930968110099, 0.9777196583498249}},
};

static gb_optimizer *make(const expect *e) {
    gb_rmsprop_options o = gb_rmsprop_defaults();
    o.learning_rate = gb_lr_constant(0.01);
    o.momentum = e->momentum;
    o.centered = e->centered;
    return gb_rmsprop_ex(&o);
}

START_TEST(test_rmsprop_variants) {
    for (int d = 0; d < 2; d++) {
        gb_dtype dt = d ? GB_F64 : GB_F32;
        double tol = d ? 1e-14 : 1e-6;
        for (int k = 0; k < 4; k++) {
            gb_optimizer *opt = make(&VARIANTS[k]);
            gb_variable *x = ot_var("x", dt, 1, (const double[]){1.0});
            for (int t = 0; t < 3; t++) {
                ck_assert(ot_step(opt, x, 1, &GRADS[t]));
                OT_ASSERT_NEAR(ot_get(x, 0), VARIANTS[k].x[t], tol);
            }
            /* After 3 steps: v = 0.1165, a = -0.0245 (centered), and the
             * momentum p equals the last total move. */
            OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, x, "velocity"), 0), 0.1165, tol);
            gb_variable *a = gb_optimizer_slot(opt, x, "average_gradient");
            gb_variable *p = gb_optimizer_slot(opt, x, "momentum");
            ck_assert(!a == !VARIANTS[k].centered);
            ck_assert(!p == !(VARIANTS[k].momentum > 0));
            if (a) OT_ASSERT_NEAR(ot_get(a, 0), -0.0245, tol);
            if (p) OT_ASSERT_NEAR(ot_get(p, 0), VARIANTS[k].x[1] - VARIANTS[k].x[2], tol);
            ck_assert_int_eq(gb_optimizer_slot_variables(opt, NULL, 0), 1 + !!a + !!p);
            gb_variable_free(x);
            gb_optimizer_free(opt);
        }
    }
}
END_TEST

START_TEST(test_rmsprop_defaults_and_slot_names) {
    gb_rmsprop_options o = gb_rmsprop_defaults();
    ck_assert(o.learning_rate.initial_learning_rate == 0.001 && o.rho == 0.9);
    ck_assert(o.momentum == 0 && o.epsilon == 1e-7 && !o.centered);
    o.momentum = 0.9;
    o.centered = true;
    gb_optimizer *opt = gb_rmsprop_ex(&o);
    gb_variable *x = ot_var("w", GB_F32, 2, (const double[]){1, 2});
    ck_assert(gb_optimizer_build(opt, &x, 1));
    gb_variable *slots[4];
    ck_assert_int_eq(gb_optimizer_slot_variables(opt, slots, 4), 3);
    ck_assert_str_eq(gb_variable_name(slots[0]), "RMSprop/w/velocity");
    ck_assert_str_eq(gb_variable_name(slots[1]), "RMSprop/w/momentum");
    ck_assert_str_eq(gb_variable_name(slots[2]), "RMSprop/w/average_gradient");
    ck_assert(!gb_variable_trainable(slots[0]));
    ck_assert_int_eq(gb_optimizer_iterations(opt), 0); /* build does not step */
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_rmsprop_minimizes_bowl) {
    for (int k = 0; k < 4; k++) {
        gb_rmsprop_options o = gb_rmsprop_defaults();
        o.learning_rate = gb_lr_cosine_decay(0.05, 500, 0.0);
        o.momentum = VARIANTS[k].momentum;
        o.centered = VARIANTS[k].centered;
        gb_optimizer *opt = gb_rmsprop_ex(&o);
        double worst = ot_minimize_bowl(opt, k % 2 ? GB_F64 : GB_F32, 500);
        OT_ASSERT_OK();
        ck_assert_msg(worst < 1e-3, "variant %d: max |x| %g", k, worst);
        gb_optimizer_free(opt);
    }
}
END_TEST

START_TEST(test_rmsprop_bad_hyperparameters) {
    gb_rmsprop_options o = gb_rmsprop_defaults();
    o.rho = 1.0;
    ck_assert_ptr_null(gb_rmsprop_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "RMSprop: rho must be in [0, 1), got 1");
    gb_clear_error();
    o = gb_rmsprop_defaults();
    o.epsilon = -1e-7;
    ck_assert_ptr_null(gb_rmsprop_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "epsilon must be >= 0 and finite, got -1e-07");
    gb_clear_error();
    o = gb_rmsprop_defaults();
    o.momentum = 2;
    ck_assert_ptr_null(gb_rmsprop_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "momentum must be in [0, 1], got 2");
    gb_clear_error();
    ck_assert_ptr_null(gb_rmsprop(NAN));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "learning_rate must be >= 0 and finite, got nan");
}
END_TEST

static Suite *rmsprop_suite(void) {
    Suite *s = suite_create("optim_rmsprop");
    TCase *tc = tcase_create("rmsprop");
    tcase_add_test(tc, test_rmsprop_variants);
    tcase_add_test(tc, test_rmsprop_defaults_and_slot_names);
    tcase_add_test(tc, test_rmsprop_minimizes_bowl);
    tcase_add_test(tc, test_rmsprop_bad_hyperparameters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(rmsprop_suite()); }
