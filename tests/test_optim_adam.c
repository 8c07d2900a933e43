/* test_optim_adam.c — Adam and AdamW against hand-computed Keras values.
 *
 * Keras' Adam step t: m += (g - m)(1 - b1); v += (g^2 - v)(1 - b2);
 * var -= lr sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps). AdamW first
 * decays var -= lr * wd * var. The expected numbers were worked out from
 * those formulas in double precision (see each test).
 */
#include <stdio.h>

#include "optim_test_util.h"

/* x = 1, g = 0.5 every step, lr 0.1, Keras defaults otherwise.
 * Step 1: m = 0.05, v = 0.00025, alpha = 0.1 sqrt(0.001) / 0.1 = 0.0316228,
 * var -= alpha * 0.05 / (0.0158114 + 1e-7) = 0.0999994 -> 0.9000006. With a
 * constant gradient every step moves by lr * (1 - about 6e-6). */
START_TEST(test_adam_scalar_three_steps) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *x = ot_var("x", GB_F64, 1, (const double[]){1.0});
    const double want_x[3] = {0.9000006324515321, 0.8000010797749726, 0.7000014451046599};
    const double want_m[3] = {0.05, 0.095, 0.1355};
    const double want_v[3] = {0.00025, 0.00049975, 0.00074925025};
    for (int t = 0; t < 3; t++) {
        ck_assert(ot_step(opt, x, 1, (const double[]){0.5}));
        OT_ASSERT_NEAR(ot_get(x, 0), want_x[t], 1e-14);
        OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, x, "m"), 0), want_m[t], 1e-15);
        OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, x, "v"), 0), want_v[t], 1e-17);
        ck_assert_int_eq(gb_optimizer_iterations(opt), t + 1);
    }
    ck_assert_str_eq(gb_variable_name(gb_optimizer_slot(opt, x, "m")), "Adam/x/m");
    ck_assert_str_eq(gb_variable_name(gb_optimizer_slot(opt, x, "v")), "Adam/x/v");
    ck_assert_ptr_null(gb_optimizer_slot(opt, x, "momentum"));
    OT_ASSERT_OK();
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

/* Gradients 0.5, -1, 0.25 from x = 2: the bias correction matters. */
START_TEST(test_adam_changing_gradient) {
    gb_optimizer *opt = gb_adam(0.1);
    gb_variable *x = ot_var("x", GB_F64, 1, (const double[]){2.0});
    const double g[3] = {0.5, -1.0, 0.25};
    const double want[3] = {1.900000632451532, 1.936610881595338, 1.9502799101487422};
    for (int t = 0; t < 3; t++) {
        ck_assert(ot_step(opt, x, 1, &g[t]));
        OT_ASSERT_NEAR(ot_get(x, 0), want[t], 1e-14);
    }
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

/* Double-precision reference of one Keras Adam step on element arrays. */
static void adam_reference(int n, double *x, double *m, double *v, const double *g, int t,
                           double lr, double wd) {
    double alpha = lr * sqrt(1 - pow(0.999, t)) / (1 - pow(0.9, t));
    for (int i = 0; i < n; i++) {
        x[i] -= x[i] * wd * lr;
        m[i] += (g[i] - m[i]) * 0.1;
        v[i] += (g[i] * g[i] - v[i]) * (1 - 0.999);
        x[i] -= m[i] * alpha / (sqrt(v[i]) + 1e-7);
    }
}

/* float32 over 37 elements (vector body plus a tail), gradients of both
 * signs and a zero: within float rounding of the double reference. */
START_TEST(test_adam_float32_vector) {
    enum { N = 37, STEPS = 4 };
    double x[N], m[N] = {0}, v[N] = {0}, g[N];
    for (int i = 0; i < N; i++) x[i] = 0.5 + 0.1 * i;
    gb_optimizer *opt = gb_adam(0.01);
    gb_variable *var = ot_var("w", GB_F32, N, x);
    ck_assert_ptr_null(gb_optimizer_slot(opt, var, "m")); /* slots come with the first apply */
    for (int t = 1; t <= STEPS; t++) {
        for (int i = 0; i < N; i++) g[i] = (i == 7) ? 0.0 : sin(1.0 + i * t) * (1 + i % 3);
        ck_assert(ot_step(opt, var, N, g));
        adam_reference(N, x, m, v, g, t, 0.01, 0);
    }
    ck_assert_int_eq(gb_variable_dtype(gb_optimizer_slot(opt, var, "v")), GB_F32);
    for (int i = 0; i < N; i++) {
        OT_ASSERT_NEAR(ot_get(var, i), x[i], 2e-6);
        OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, var, "m"), i), m[i], 1e-6);
    }
    OT_ASSERT_NEAR(ot_get(var, 7), (float)x[7], 0); /* g = 0 at every step: x[7] never moves */
    gb_variable_free(var);
    gb_optimizer_free(opt);
}
END_TEST

/* AdamW, lr 0.1, weight decay 0.1, x = 1, g = 0.5: step 1 decays x to
 * 1 - 0.1*0.1*1 = 0.99 and then takes the Adam step (0.0999994):
 * 0.8900006. The decay uses the schedule's lr, not Adam's alpha. */
START_TEST(test_adamw_decoupled_decay) {
    gb_optimizer *opt = gb_adamw(0.1, 0.1);
    ck_assert_str_eq(gb_optimizer_name(opt), "AdamW");
    gb_variable *x = ot_var("x", GB_F64, 1, (const double[]){1.0});
    const double want[3] = {0.890000632451532, 0.7811010734504572, 0.67329042804564};
    for (int t = 0; t < 3; t++) {
        ck_assert(ot_step(opt, x, 1, (const double[]){0.5}));
        OT_ASSERT_NEAR(ot_get(x, 0), want[t], 1e-14);
    }
    /* The moments do not see the decay. */
    OT_ASSERT_NEAR(ot_get(gb_optimizer_slot(opt, x, "m"), 0), 0.1355, 1e-15);
    ck_assert_str_eq(gb_variable_name(gb_optimizer_slot(opt, x, "m")), "AdamW/x/m");
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

/* AdamW defaults: weight decay 0.004; a zero gradient leaves only decay
 * and the (zero) Adam step: x *= 1 - 0.001 * 0.004. */
START_TEST(test_adamw_defaults_and_exclusion) {
    gb_adam_options o = gb_adamw_defaults();
    ck_assert(o.weight_decay == 0.004 && o.beta_1 == 0.9 && o.beta_2 == 0.999);
    ck_assert(o.epsilon == 1e-7 && o.learning_rate.initial_learning_rate == 0.001);
    gb_optimizer *opt = gb_adam_ex(&o);
    gb_name_scope_push("dense");
    gb_variable *w = ot_var("kernel", GB_F64, 2, (const double[]){2.0, -4.0});
    gb_variable *b = ot_var("bias", GB_F64, 2, (const double[]){2.0, -4.0});
    gb_name_scope_pop();
    ck_assert(gb_optimizer_exclude_from_weight_decay(opt, "bias"));
    gb_scope_begin();
    gb_tensor *g[2] = {gb_zeros(GB_F64, GB_SHAPE(2)), gb_zeros(GB_F64, GB_SHAPE(2))};
    gb_variable *vars[2] = {w, b};
    ck_assert(gb_optimizer_apply_gradients(opt, g, 2, vars, 2));
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(w, 0), 2.0 * (1 - 0.001 * 0.004), 1e-15);
    OT_ASSERT_NEAR(ot_get(w, 1), -4.0 * (1 - 0.001 * 0.004), 1e-15);
    OT_ASSERT_NEAR(ot_get(b, 0), 2.0, 0);
    OT_ASSERT_NEAR(ot_get(b, 1), -4.0, 0);
    ck_assert_str_eq(gb_variable_name(gb_optimizer_slot(opt, w, "v")), "AdamW/dense/kernel/v");
    gb_variable_free(w);
    gb_variable_free(b);
    gb_optimizer_free(opt);
}
END_TEST

/* Excluding vectors: a [2, 2] kernel decays, a [2] bias and a scalar do
 * not, whatever their names; the option survives the config. */
START_TEST(test_adamw_excludes_vectors) {
    gb_optimizer *opt = gb_adam_ex(&(gb_adam_options){.learning_rate = gb_lr_constant(0.001),
                                                      .beta_1 = 0.9, .beta_2 = 0.999,
                                                      .epsilon = 1e-7, .weight_decay = 0.004});
    ck_assert(gb_optimizer_exclude_vectors_from_weight_decay(opt));
    gb_scope_begin();
    gb_variable *vars[3] = {gb_variable_new("w", gb_fill(GB_F64, GB_SHAPE(2, 2), 2.0), true),
                            gb_variable_new("b", gb_fill(GB_F64, GB_SHAPE(2), 2.0), true),
                            gb_variable_new("s", gb_scalar(GB_F64, 2.0), true)};
    gb_tensor *g[3] = {gb_zeros(GB_F64, GB_SHAPE(2, 2)), gb_zeros(GB_F64, GB_SHAPE(2)),
                       gb_scalar(GB_F64, 0)};
    ck_assert(gb_optimizer_apply_gradients(opt, g, 3, vars, 3));
    gb_scope_end();
    OT_ASSERT_NEAR(ot_get(vars[0], 3), 2.0 * (1 - 0.001 * 0.004), 1e-15);
    OT_ASSERT_NEAR(ot_get(vars[1], 1), 2.0, 0);
    OT_ASSERT_NEAR(ot_get(vars[2], 0), 2.0, 0);
    gb_config *c = gb_optimizer_get_config(opt);
    gb_optimizer *back = gb_optimizer_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_config *again = gb_optimizer_get_config(back);
    ck_assert(gb_config_get(again, "config") &&
              gb_config_bool(gb_config_get(gb_config_get(again, "config"), "exclude_vectors_from_weight_decay")));
    gb_config_free(c), gb_config_free(again);
    for (int i = 0; i < 3; i++) gb_variable_free(vars[i]);
    gb_optimizer_free(opt), gb_optimizer_free(back);
}
END_TEST

START_TEST(test_adam_minimizes_bowl) {
    /* Adam's steps stay about lr long, so let a cosine schedule shrink lr. */
    gb_adam_options o = gb_adam_defaults();
    o.learning_rate = gb_lr_cosine_decay(0.2, 400, 0.0);
    for (int d = 0; d < 2; d++) {
        gb_optimizer *opt = gb_adam_ex(&o);
        double worst = ot_minimize_bowl(opt, d ? GB_F64 : GB_F32, 400);
        OT_ASSERT_OK();
        ck_assert_msg(worst < 1e-3, "max |x| after Adam: %g", worst);
        gb_optimizer_free(opt);
    }
    gb_optimizer *opt = gb_adamw(0.05, 0.01);
    ck_assert_msg(ot_minimize_bowl(opt, GB_F32, 300) < 0.06, "AdamW did not converge");
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_adam_bad_hyperparameters) {
    gb_adam_options o = gb_adam_defaults();
    o.beta_1 = 1.0;
    ck_assert_ptr_null(gb_adam_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "Adam: beta_1 must be in [0, 1), got 1");
    gb_clear_error();

    o = gb_adam_defaults();
    o.beta_2 = -0.1;
    ck_assert_ptr_null(gb_adam_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "beta_2 must be in [0, 1), got -0.1");
    gb_clear_error();

    o = gb_adamw_defaults();
    o.epsilon = NAN;
    ck_assert_ptr_null(gb_adam_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "AdamW: epsilon must be >= 0 and finite, got nan");
    gb_clear_error();

    ck_assert_ptr_null(gb_adamw(0.001, -0.5));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "weight_decay must be >= 0 and finite, got -0.5");
    gb_clear_error();

    ck_assert_ptr_null(gb_adam(-0.001));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "learning_rate must be >= 0 and finite, got -0.001");
    ck_assert_msg(strstr(gb_error_string(), "test_optim_adam.c"), "call site: %s",
                  gb_error_string());
    gb_clear_error();

    ck_assert_ptr_null(gb_adam_ex(NULL));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "options are NULL");
}
END_TEST

static Suite *adam_suite(void) {
    Suite *s = suite_create("optim_adam");
    TCase *tc = tcase_create("adam");
    tcase_add_test(tc, test_adam_scalar_three_steps);
    tcase_add_test(tc, test_adam_changing_gradient);
    tcase_add_test(tc, test_adam_float32_vector);
    tcase_add_test(tc, test_adamw_decoupled_decay);
    tcase_add_test(tc, test_adamw_defaults_and_exclusion);
    tcase_add_test(tc, test_adamw_excludes_vectors);
    tcase_add_test(tc, test_adam_minimizes_bowl);
    tcase_add_test(tc, test_adam_bad_hyperparameters);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(adam_suite()); }
