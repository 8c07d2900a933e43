/* test_optim_schedule.c — learning-rate schedules and the optimizer's learning rate.
 *
 * Each schedule's value at chosen steps (Keras formulas, worked out in the
 * comments), their parameter errors, and an optimizer that follows its
 * schedule step by step, reports the rate it will use next, and refuses a
 * schedule that returns a negative rate.
 */
#include "optim_test_util.h"

START_TEST(test_constant) {
    gb_lr_schedule s = gb_lr_constant(0.5);
    ck_assert_int_eq(s.kind, GB_LR_CONSTANT);
    ck_assert(gb_lr_schedule_value(&s, 0) == 0.5);
    ck_assert(gb_lr_schedule_value(&s, 1000000) == 0.5);
    OT_ASSERT_OK();
}
END_TEST

/* 0.1 * 0.5^(step/10): 0.1, 0.1/sqrt(2), 0.05, 0.1 * 0.5^2.5; staircase
 * floors the exponent: 0.1, 0.1, 0.05, 0.025. */
START_TEST(test_exponential_decay) {
    gb_lr_schedule s = gb_lr_exponential_decay(0.1, 10, 0.5, false);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 0), 0.1, 1e-17);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 5), 0.1 / sqrt(2.0), 1e-16);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 10), 0.05, 1e-17);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 25), 0.017677669529663688, 1e-16);
    gb_lr_schedule st = gb_lr_exponential_decay(0.1, 10, 0.5, true);
    const int64_t steps[4] = {0, 9, 10, 25};
    const double want[4] = {0.1, 0.1, 0.05, 0.025};
    for (int i = 0; i < 4; i++) OT_ASSERT_NEAR(gb_lr_schedule_value(&st, steps[i]), want[i], 1e-17);
    OT_ASSERT_OK();
}
END_TEST

/* 1.0 * ((1 - 0.1) * 0.5 * (1 + cos(pi * step / 100)) + 0.1): step 0 -> 1,
 * 25 -> 0.9 * 0.8535534 + 0.1 = 0.8681981, 50 -> 0.55, 100 and later -> 0.1. */
START_TEST(test_cosine_decay) {
    gb_lr_schedule s = gb_lr_cosine_decay(1.0, 100, 0.1);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 0), 1.0, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 25), 0.86819805153394640, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 50), 0.55, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 100), 0.1, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 5000), 0.1, 1e-15);
    OT_ASSERT_OK();
}
END_TEST

/* Warmup from 0 to 1 over 10 steps, then cosine from 1 to 0 over 100. */
START_TEST(test_cosine_decay_warmup) {
    gb_lr_schedule s = gb_lr_cosine_decay_warmup(0.0, 100, 0.0, 1.0, 10);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 0), 0.0, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 5), 0.5, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 10), 1.0, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 60), 0.5, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 110), 0.0, 1e-15);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 1000), 0.0, 1e-15);
    OT_ASSERT_OK();
}
END_TEST

static double inverse_time(int64_t step, void *user) {
    return *(const double *)user / (1.0 + (double)step);
}

static double broken(int64_t step, void *user) {
    (void)user;
    return step < 2 ? 0.1 : -1.0;
}

START_TEST(test_custom) {
    double base = 0.3;
    gb_lr_schedule s = gb_lr_custom(inverse_time, &base);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 0), 0.3, 0);
    OT_ASSERT_NEAR(gb_lr_schedule_value(&s, 2), 0.1, 1e-16);
    OT_ASSERT_OK();
}
END_TEST

START_TEST(test_schedule_errors) {
    gb_lr_schedule s = gb_lr_exponential_decay(0.1, 0, 0.5, false);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_lr_exponential_decay: decay_steps must be >= 1, got 0");
    gb_clear_error();
    ck_assert(isnan(gb_lr_schedule_value(&s, 3)));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_lr_schedule_value: decay_steps must be >= 1, got 0");
    gb_clear_error();

    gb_lr_cosine_decay(0.1, 10, 1.5);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_lr_cosine_decay: alpha must be in [0, 1], got 1.5");
    gb_clear_error();
    gb_lr_cosine_decay_warmup(0.0, 10, 0.0, -1.0, 5);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "warmup_target must be >= 0 and finite, got -1");
    gb_clear_error();
    gb_lr_cosine_decay_warmup(0.0, 10, 0.0, 1.0, -5);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "warmup_steps must be >= 0, got -5");
    gb_clear_error();
    gb_lr_exponential_decay(-0.1, 10, 0.5, true);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "initial_learning_rate must be >= 0 and finite, got -0.1");
    gb_clear_error();
    gb_lr_exponential_decay(0.1, 10, NAN, true);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "decay_rate must be >= 0 and finite, got nan");
    gb_clear_error();
    gb_lr_custom(NULL, NULL);
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_lr_custom: a custom learning-rate schedule needs a function");
    gb_clear_error();
    gb_lr_schedule c = gb_lr_constant(0.1);
    ck_assert(isnan(gb_lr_schedule_value(&c, -1)));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "step must be >= 0, got -1");
    gb_clear_error();
    ck_assert(isnan(gb_lr_schedule_value(NULL, 0)));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "the learning-rate schedule is NULL");
    gb_clear_error();

    /* An optimizer refuses a bad schedule built by hand. */
    gb_adam_options o = gb_adam_defaults();
    o.learning_rate = (gb_lr_schedule){.kind = GB_LR_COSINE_DECAY, .initial_learning_rate = 1};
    ck_assert_ptr_null(gb_adam_ex(&o));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "Adam: decay_steps must be >= 1, got 0");
}
END_TEST

/* SGD on exponential decay (0.1, halving every step): with g = 1 the
 * variable moves by 0.1, 0.05, 0.025; learning_rate() is the next rate. */
START_TEST(test_optimizer_follows_schedule) {
    gb_sgd_options o = gb_sgd_defaults();
    o.learning_rate = gb_lr_exponential_decay(0.1, 1, 0.5, true);
    gb_optimizer *opt = gb_sgd_ex(&o);
    gb_variable *x = ot_var("x", GB_F64, 1, (const double[]){1.0});
    const double want_x[3] = {0.9, 0.85, 0.825}, want_next[3] = {0.05, 0.025, 0.0125};
    OT_ASSERT_NEAR(gb_optimizer_learning_rate(opt), 0.1, 0);
    for (int t = 0; t < 3; t++) {
        ck_assert(ot_step(opt, x, 1, (const double[]){1.0}));
        OT_ASSERT_NEAR(ot_get(x, 0), want_x[t], 1e-15);
        OT_ASSERT_NEAR(gb_optimizer_learning_rate(opt), want_next[t], 1e-17);
    }
    ck_assert_int_eq(gb_optimizer_schedule(opt)->kind, GB_LR_EXPONENTIAL_DECAY);
    /* Restoring the iteration count restores the position in the schedule. */
    ck_assert(gb_optimizer_set_iterations(opt, 1));
    OT_ASSERT_NEAR(gb_optimizer_learning_rate(opt), 0.05, 0);
    ck_assert(!gb_optimizer_set_iterations(opt, -1));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "iterations must be >= 0 (got -1)");
    gb_clear_error();
    /* As Keras: a schedule-driven learning rate is not settable. */
    ck_assert(!gb_optimizer_set_learning_rate(opt, 0.5));
    OT_ASSERT_ERROR(GB_ERR_STATE, "created with a learning-rate schedule");
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_set_constant_learning_rate) {
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *x = ot_var("x", GB_F64, 1, (const double[]){1.0});
    ck_assert(ot_step(opt, x, 1, (const double[]){1.0}));
    ck_assert(gb_optimizer_set_learning_rate(opt, 0.5));
    OT_ASSERT_NEAR(gb_optimizer_learning_rate(opt), 0.5, 0);
    ck_assert(ot_step(opt, x, 1, (const double[]){1.0}));
    OT_ASSERT_NEAR(ot_get(x, 0), 1.0 - 0.1 - 0.5, 1e-15);
    ck_assert(!gb_optimizer_set_learning_rate(opt, -2));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "gb_optimizer_set_learning_rate: learning_rate must be >= 0");
    gb_clear_error();
    ck_assert(isnan(gb_optimizer_learning_rate(NULL)));
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

/* A custom schedule that turns negative fails the update op, names it,
 * and leaves the variable and the iteration count alone. */
START_TEST(test_negative_scheduled_rate_fails) {
    gb_sgd_options o = gb_sgd_defaults();
    o.learning_rate = gb_lr_custom(broken, NULL);
    gb_optimizer *opt = gb_sgd_ex(&o);
    gb_variable *x = ot_var("x", GB_F32, 1, (const double[]){1.0});
    ck_assert(ot_step(opt, x, 1, (const double[]){1.0}));
    ck_assert(ot_step(opt, x, 1, (const double[]){1.0}));
    OT_ASSERT_NEAR(ot_get(x, 0), 0.8, 1e-7);
    ck_assert(!ot_step(opt, x, 1, (const double[]){1.0}));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "the learning rate of optimizer 'SGD' at iteration 2 is -1");
    ck_assert_str_eq(gb_last_error()->op_type, "ResourceApplyGradientDescent");
    gb_clear_error();
    OT_ASSERT_NEAR(ot_get(x, 0), 0.8, 1e-7);
    ck_assert_int_eq(gb_optimizer_iterations(opt), 2);
    gb_variable_free(x);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *schedule_suite(void) {
    Suite *s = suite_create("optim_schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, test_constant);
    tcase_add_test(tc, test_exponential_decay);
    tcase_add_test(tc, test_cosine_decay);
    tcase_add_test(tc, test_cosine_decay_warmup);
    tcase_add_test(tc, test_custom);
    tcase_add_test(tc, test_schedule_errors);
    tcase_add_test(tc, test_optimizer_follows_schedule);
    tcase_add_test(tc, test_set_constant_learning_rate);
    tcase_add_test(tc, test_negative_scheduled_rate_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(schedule_suite()); }
