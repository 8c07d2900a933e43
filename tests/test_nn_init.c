/* test_nn_init.c — initializers and seeds: same seed same weights, the
 * Glorot-uniform limit, the He-normal standard deviation (statistically,
 * over 10^5 draws), fans of conv kernels, constants, and errors. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

static void moments(gb_tensor *t, double *mean, double *sd, double *maxabs) {
    double s = 0, s2 = 0, m = 0;
    int64_t n = gb_size(t);
    for (int64_t i = 0; i < n; i++) s += gb_get(t, i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = gb_get(t, i) - *mean;
        s2 += d * d;
        if (fabs(gb_get(t, i)) > m) m = fabs(gb_get(t, i));
    }
    *sd = sqrt(s2 / (double)n);
    *maxabs = m;
}

static bool same_values(gb_tensor *a, gb_tensor *b) {
    return gb_size(a) == gb_size(b) && memcmp(gb_data(a), gb_data(b), gb_nbytes(a)) == 0;
}

/* The kernel of a Dense(units, opts) built for [.., in]. */
static gb_tensor *dense_kernel(gb_module **keep, int64_t in, int64_t units,
                               const gb_dense_options *opts) {
    gb_module *d = gb_dense_new(units, opts);
    ck_assert(gb_module_build(d, GB_F32, 2, (const int64_t[]){-1, in}));
    *keep = d;
    return gb_variable_value(gb_module_variable(d, "kernel"));
}

START_TEST(test_same_seed_same_weights) {
    gb_module *a, *b, *c;
    gb_tensor *ka = dense_kernel(&a, 20, 30, &(gb_dense_options){.seed = 42});
    gb_tensor *kb = dense_kernel(&b, 20, 30, &(gb_dense_options){.seed = 42});
    gb_tensor *kc = dense_kernel(&c, 20, 30, &(gb_dense_options){.seed = 43});
    ck_assert(same_values(ka, kb));
    ck_assert(!same_values(ka, kc));
    /* Built by a call or by build(): the same weights for the same seed. */
    gb_module *d = gb_dense_new(30, &(gb_dense_options){.seed = 42});
    gb_module_call(d, gb_ones(GB_F32, GB_SHAPE(5, 20)), false);
    ck_assert(same_values(ka, gb_variable_value(gb_module_variable(d, "kernel"))));
    gb_module_free(a);
    gb_module_free(b);
    gb_module_free(c);
    gb_module_free(d);
}
END_TEST

START_TEST(test_default_seeds_repeat_per_run) {
    gb_module *a, *b, *c, *d;
    gb_nn_set_seed(7);
    gb_tensor *k1 = dense_kernel(&a, 6, 4, NULL);
    gb_tensor *k2 = dense_kernel(&b, 6, 4, NULL);
    ck_assert(!same_values(k1, k2)); /* two layers of one run differ */
    gb_nn_set_seed(7);               /* a new run with the same global seed */
    ck_assert(same_values(k1, dense_kernel(&c, 6, 4, NULL)));
    ck_assert(same_values(k2, dense_kernel(&d, 6, 4, NULL)));
    gb_module *all[] = {a, b, c, d};
    for (int i = 0; i < 4; i++) gb_module_free(all[i]);
}
END_TEST

START_TEST(test_explicit_initializer_seed_wins) {
    gb_module *a, *b;
    gb_initializer init = {.kind = GB_INIT_GLOROT_UNIFORM, .seed = 99};
    gb_tensor *ka = dense_kernel(&a, 5, 5, &(gb_dense_options){.seed = 1, .kernel_initializer = init});
    gb_tensor *kb = dense_kernel(&b, 5, 5, &(gb_dense_options){.seed = 2, .kernel_initializer = init});
    ck_assert(same_values(ka, kb));
    ck_assert(same_values(ka, gb_initializer_make(init, GB_F32, GB_SHAPE(5, 5))));
    gb_module_free(a);
    gb_module_free(b);
}
END_TEST

START_TEST(test_glorot_uniform_bounds) {
    gb_module *d;
    gb_tensor *k = dense_kernel(&d, 300, 200, &(gb_dense_options){.seed = 5});
    double limit = sqrt(6.0 / (300 + 200)), mean, sd, maxabs;
    moments(k, &mean, &sd, &maxabs);
    ck_assert_msg(maxabs <= limit, "max |w| %g beyond the limit %g", maxabs, limit);
    ck_assert_msg(maxabs > 0.99 * limit, "max |w| %g does not reach the limit %g", maxabs, limit);
    ck_assert_msg(fabs(mean) < 0.01 * limit, "mean %g", mean);
    ck_assert_msg(fabs(sd - limit / sqrt(3.0)) < 0.01 * limit, "sd %g vs %g", sd, limit / sqrt(3.0));
    /* The bias defaults to zeros. */
    gb_tensor *b = gb_variable_value(gb_module_variable(d, "bias"));
    for (int64_t i = 0; i < gb_size(b); i++) ck_assert_double_eq(gb_get(b, i), 0.0);
    gb_module_free(d);
}
END_TEST

START_TEST(test_glorot_fans_of_conv_kernels) {
    gb_module *c = gb_conv2d_new(32, 3, 3, &(gb_conv2d_options){.seed = 8});
    ck_assert(gb_module_build(c, GB_F32, 4, (const int64_t[]){-1, 10, 10, 16}));
    gb_tensor *k = gb_variable_value(gb_module_variable(c, "kernel"));
    /* fan_in = 3*3*16 = 144, fan_out = 3*3*32 = 288 */
    double limit = sqrt(6.0 / (144 + 288)), mean, sd, maxabs;
    moments(k, &mean, &sd, &maxabs);
    ck_assert_msg(maxabs <= limit && maxabs > 0.98 * limit, "max |w| %g, limit %g", maxabs, limit);
    gb_module_free(c);
}
END_TEST

START_TEST(test_he_normal_stddev) {
    gb_module *d;
    gb_tensor *k = dense_kernel(&d, 400, 300,
                                &(gb_dense_options){.kernel_initializer = {.kind = GB_INIT_HE_NORMAL}, .seed = 11});
    double target = sqrt(2.0 / 400), mean, sd, maxabs;
    moments(k, &mean, &sd, &maxabs);
    ck_assert_msg(fabs(sd - target) < 0.01 * target, "sd %g vs sqrt(2/fan_in) = %g", sd, target);
    ck_assert_msg(fabs(mean) < 0.01 * target, "mean %g", mean);
    /* Truncated at two standard deviations of the widened normal. */
    double bound = 2 * target / 0.87962566103423978;
    ck_assert_msg(maxabs <= bound * (1 + 1e-6) && maxabs > 0.98 * bound, "max |w| %g, bound %g",
                  maxabs, bound);
    gb_module_free(d);
}
END_TEST

START_TEST(test_other_variance_scalings) {
    struct {
        gb_init_kind kind;
        double sd;
    } cases[] = {
        {.kind = GB_INIT_GLOROT_NORMAL, sqrt(2.0 / (500 + 250))},
        {.kind = GB_INIT_HE_UNIFORM, sqrt(6.0 / 500) / sqrt(3.0)},
        {.kind = GB_INIT_LECUN_UNIFORM, sqrt(3.0 / 500) / sqrt(3.0)},
        {.kind = GB_INIT_LECUN_NORMAL, sqrt(1.0 / 500)},
    };
    for (int i = 0; i < 4; i++) {
        gb_tensor *t = gb_initializer_make((gb_initializer){cases[i].kind, .seed = 3}, GB_F64,
                                           GB_SHAPE(500, 250));
        double mean, sd, maxabs;
        moments(t, &mean, &sd, &maxabs);
        ck_assert_msg(fabs(sd - cases[i].sd) < 0.01 * cases[i].sd, "%s: sd %g vs %g",
                      gb_initializer_name(cases[i].kind), sd, cases[i].sd);
    }
}
END_TEST

START_TEST(test_constants_and_errors) {
    gb_tensor *z = gb_initializer_make((gb_initializer){.kind = GB_INIT_ZEROS}, GB_F32, GB_SHAPE(3));
    gb_tensor *o = gb_initializer_make((gb_initializer){.kind = GB_INIT_ONES}, GB_F64, GB_SHAPE(2, 2));
    gb_tensor *c = gb_initializer_make((gb_initializer){.kind = GB_INIT_CONSTANT, .a = -1.5}, GB_F32, GB_SHAPE(2));
    gb_tensor *u = gb_initializer_make((gb_initializer){.kind = GB_INIT_RANDOM_UNIFORM, .a = 2, .b = 3, .seed = 4},
                                       GB_F32, GB_SHAPE(1000));
    ck_assert_double_eq(gb_get(z, 2), 0.0);
    ck_assert_double_eq(gb_get(o, 3), 1.0);
    ck_assert_double_eq(gb_get(c, 1), -1.5);
    for (int64_t i = 0; i < 1000; i++) ck_assert(gb_get(u, i) >= 2 && gb_get(u, i) < 3);
    ck_assert_str_eq(gb_initializer_name(GB_INIT_HE_NORMAL), "he_normal");
    ck_assert(gb_ok());
    ck_assert_ptr_null(gb_initializer_make((gb_initializer){.kind = GB_INIT_DEFAULT}, GB_F32, GB_SHAPE(2)));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "not a concrete initializer"));
    gb_clear_error();
    ck_assert_ptr_null(gb_initializer_make((gb_initializer){.kind = GB_INIT_ZEROS}, GB_I32, GB_SHAPE(2)));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_DTYPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "must be float32 or float64, not int32"));
}
END_TEST

START_TEST(test_float64_layers_get_float64_weights) {
    gb_module *d = gb_dense_new(3, &(gb_dense_options){.seed = 1});
    gb_tensor *y = gb_module_call(d, gb_ones(GB_F64, GB_SHAPE(2, 4)), false);
    ck_assert_int_eq(gb_tensor_dtype(y), GB_F64);
    ck_assert_int_eq(gb_variable_dtype(gb_module_variable(d, "kernel")), GB_F64);
    ck_assert_int_eq(gb_module_dtype(d), GB_F64);
    gb_module_free(d);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_init");
    TCase *tc = tcase_create("init");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_same_seed_same_weights);
    tcase_add_test(tc, test_default_seeds_repeat_per_run);
    tcase_add_test(tc, test_explicit_initializer_seed_wins);
    tcase_add_test(tc, test_glorot_uniform_bounds);
    tcase_add_test(tc, test_glorot_fans_of_conv_kernels);
    tcase_add_test(tc, test_he_normal_stddev);
    tcase_add_test(tc, test_other_variance_scalings);
    tcase_add_test(tc, test_constants_and_errors);
    tcase_add_test(tc, test_float64_layers_get_float64_weights);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
