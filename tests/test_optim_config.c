/* test_optim_config.c — optimizers as configs (keras.optimizers.serialize):
 * each kind and schedule written and read back updates bit for bit like
 * the original over several steps (slots, bias correction, decay and the
 * schedule all in play) and writes the same JSON again; the text of one
 * config exactly; absent values take Keras' defaults; a custom schedule,
 * an unknown class and bad values are errors that say which. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "optim_test_util.h"
#include "test_util.h"

static char *json_of(const gb_optimizer *o) {
    gb_config *c = gb_optimizer_get_config(o);
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    char *text = gb_config_to_json(c, 0);
    gb_config_free(c);
    return text;
}

/* o and the optimizer rebuilt from its config, stepped side by side on
 * the same gradients, keep bit-identical variables. */
static void assert_same_updates(gb_optimizer *o) {
    gb_config *c = gb_optimizer_get_config(o);
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    gb_optimizer *back = gb_optimizer_from_config(c);
    gb_config_free(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    char *a = json_of(o), *b = json_of(back);
    ck_assert_str_eq(a, b);
    free(a), free(b);
    const double init[3] = {0.5, -1.25, 2.0};
    gb_variable *va = ot_var("w_bias", GB_F32, 3, init), *vb = ot_var("w_bias", GB_F32, 3, init);
    for (int step = 0; step < 5; step++) {
        const double g[3] = {0.3 - step * 0.1, -0.7 + step * 0.05, 1.1};
        ck_assert(ot_step(o, va, 3, g) && ot_step(back, vb, 3, g));
    }
    for (int i = 0; i < 3; i++) {
        double x = ot_get(va, i), y = ot_get(vb, i);
        ck_assert_msg(memcmp(&x, &y, sizeof x) == 0, "element %d: %.17g vs %.17g", i, x, y);
        ck_assert_msg(x != init[i], "element %d did not move", i);
    }
    ck_assert_int_eq(gb_optimizer_iterations(back), 5);
    gb_variable_free(va), gb_variable_free(vb);
    gb_optimizer_free(back);
}

START_TEST(test_every_kind_round_trips) {
    gb_optimizer *opts[] = {
        gb_sgd(0.05),
        gb_sgd_momentum(0.05, 0.9, true),
        gb_adam(0.01),
        gb_adamw(0.01, 0.02),
        gb_rmsprop_ex(&(gb_rmsprop_options){.learning_rate = gb_lr_constant(0.01), .rho = 0.8,
                                            .momentum = 0.5, .epsilon = 1e-6, .centered = true,
                                            .weight_decay = 0.001, .name = "my_rms"}),
        gb_sgd_ex(&(gb_sgd_options){.learning_rate = gb_lr_exponential_decay(0.1, 2, 0.5, true)}),
        gb_adam_ex(&(gb_adam_options){.learning_rate = gb_lr_cosine_decay_warmup(0.01, 4, 0.1, 0.03, 2),
                                      .beta_1 = 0.8, .beta_2 = 0.99, .epsilon = 1e-5}),
    };
    ck_assert(gb_optimizer_exclude_from_weight_decay(opts[3], "nothing_matches"));
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        ck_assert_msg(opts[i] != NULL, "%s", gb_error_string());
        assert_same_updates(opts[i]);
        gb_optimizer_free(opts[i]);
    }
}
END_TEST

START_TEST(test_config_text) {
    gb_optimizer *o = gb_adamw(0.001, 0.004);
    ck_assert(gb_optimizer_exclude_from_weight_decay(o, "bias"));
    char *text = json_of(o);
    ck_assert_str_eq(text, "{\"class_name\": \"Adam\", \"config\": {\"name\": \"AdamW\", "
                           "\"learning_rate\": 0.001, \"beta_1\": 0.90000000000000002, "
                           "\"beta_2\": 0.999, \"epsilon\": 9.9999999999999995e-08, "
                           "\"weight_decay\": 0.0040000000000000001, \"clipnorm\": null, "
                           "\"global_clipnorm\": null, \"clipvalue\": null, "
                           "\"exclude_vectors_from_weight_decay\": false, "
                           "\"exclude_from_weight_decay\": [\"bias\"]}}");
    free(text);
    gb_optimizer_free(o);
    o = gb_sgd_ex(&(gb_sgd_options){.learning_rate = gb_lr_exponential_decay(0.1, 10, 0.5, false)});
    text = json_of(o);
    ck_assert_str_eq(text, "{\"class_name\": \"SGD\", \"config\": {\"name\": \"SGD\", "
                           "\"learning_rate\": {\"class_name\": \"ExponentialDecay\", \"config\": "
                           "{\"initial_learning_rate\": 0.10000000000000001, \"decay_steps\": 10, "
                           "\"decay_rate\": 0.5, \"staircase\": false}}, \"momentum\": 0.0, "
                           "\"nesterov\": false, \"weight_decay\": 0.0, \"clipnorm\": null, "
                           "\"global_clipnorm\": null, \"clipvalue\": null, "
                           "\"exclude_vectors_from_weight_decay\": false, "
                           "\"exclude_from_weight_decay\": []}}");
    free(text);
    gb_optimizer_free(o);
}
END_TEST

static gb_optimizer *from_json(const char *json) {
    gb_config *c = gb_config_from_json(json, strlen(json), "test");
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    gb_optimizer *o = gb_optimizer_from_config(c);
    gb_config_free(c);
    return o;
}

START_TEST(test_defaults_when_absent) {
    gb_optimizer *o = from_json("{\"class_name\": \"AdamW\", \"config\": {}}");
    ck_assert_msg(o != NULL, "%s", gb_error_string());
    ck_assert_str_eq(gb_optimizer_name(o), "AdamW");
    ck_assert(gb_optimizer_learning_rate(o) == 0.001);
    char *text = json_of(o);
    ck_assert_msg(strstr(text, "\"weight_decay\": 0.0040000000000000001"), "%s", text);
    free(text);
    gb_optimizer_free(o);
    o = from_json("{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": 1}}");
    ck_assert_msg(o != NULL, "%s", gb_error_string());
    ck_assert(gb_optimizer_learning_rate(o) == 1.0);
    ck_assert_str_eq(gb_optimizer_name(o), "SGD");
    gb_optimizer_free(o);
}
END_TEST

static double my_schedule(int64_t step, void *user) {
    (void)user;
    return 1.0 / (double)(step + 1);
}

START_TEST(test_errors) {
    gb_optimizer *o = gb_sgd_ex(&(gb_sgd_options){.learning_rate = gb_lr_custom(my_schedule, NULL)});
    ck_assert_ptr_null(gb_optimizer_get_config(o));
    assert_error(GB_ERR_VALUE, "SGD: its learning rate is a custom schedule (a C function), which "
                               "no config can hold");
    gb_optimizer_free(o);
    static const struct {
        const char *json, *error;
    } cases[] = {
        {"{\"class_name\": \"Adagrad\", \"config\": {}}", "unknown optimizer class 'Adagrad'"},
        {"{\"class_name\": \"Adam\"}", "Adam config: 'config' is missing or not a dict"},
        {"{\"config\": {}}", "optimizer config: 'class_name' is missing"},
        {"{\"class_name\": \"Adam\", \"config\": {\"beta_1\": 1.5}}", "beta_1 must be in [0, 1)"},
        {"{\"class_name\": \"Adam\", \"config\": {\"beta_2\": \"x\"}}", "'beta_2' must be a number"},
        {"{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": \"fast\"}}",
         "'learning_rate' must be a number or a schedule"},
        {"{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": {\"class_name\": "
         "\"ExponentialDecay\", \"config\": {\"decay_steps\": 0}}}}",
         "decay_steps must be >= 1, got 0"},
        {"{\"class_name\": \"SGD\", \"config\": {\"exclude_from_weight_decay\": [3]}}",
         "'exclude_from_weight_decay' must be a list of non-empty strings"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_msg(from_json(cases[i].json) == NULL, "case %zu accepted", i);
        assert_error(GB_ERR_VALUE, cases[i].error);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("optim_config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_every_kind_round_trips);
    tcase_add_test(tc, test_config_text);
    tcase_add_test(tc, test_defaults_when_absent);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
