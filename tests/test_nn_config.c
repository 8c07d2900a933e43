/* test_nn_config.c — configs: the JSON text both ways (exact output,
 * every parse error with its line and column), get_config / from_config
 * round trips for every built-in layer and for Sequential and functional
 * models (rebuilt models compute the same outputs: same structure, names
 * and seeds), custom layer types through the registry, and bad configs. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "scale_layer.h"
#include "test_util.h"

static char *json_of(const gb_config *c) {
    char *s = gb_config_to_json(c, 0);
    ck_assert_msg(s != NULL, "%s", gb_error_string());
    return s;
}

static gb_config *parse(const char *text) { return gb_config_from_json(text, strlen(text), "test.json"); }

START_TEST(test_json_text_exact) {
    gb_config *c = gb_config_new();
    gb_config_put_string(c, "name", "a \"quoted\"\nline");
    gb_config_put_int(c, "seed", -6917529027641081856LL);   /* a 64-bit seed, exactly */
    gb_config_put_number(c, "rate", 0.1);
    gb_config_put_number(c, "whole", 2.0);
    gb_config_put_bool(c, "on", true);
    gb_config_put_null(c, "none");
    gb_config_put_ints(c, "shape", 2, (int64_t[]){-1, 784});
    gb_config_put_dict(c, "empty");
    char *s = json_of(c);
    const char *want = "{\"name\": \"a \\\"quoted\\\"\\u000aline\", \"seed\": -6917529027641081856, "
                       "\"rate\": 0.10000000000000001, \"whole\": 2.0, \"on\": true, \"none\": null, "
                       "\"shape\": [-1, 784], \"empty\": {}}";
    ck_assert_str_eq(s, want);
    gb_config *back = parse(s);
    ck_assert_ptr_nonnull(back);
    char *again = json_of(back);
    ck_assert_str_eq(again, want);   /* a fixed point: values and kinds survive */
    ck_assert_int_eq(gb_config_kind_of(gb_config_get(back, "whole")), GB_CONFIG_NUMBER);
    ck_assert_int_eq(gb_config_int(gb_config_get(back, "seed")), -6917529027641081856LL);
    ck_assert_str_eq(gb_config_string(gb_config_get(back, "name")), "a \"quoted\"\nline");
    char *pretty = gb_config_to_json(gb_config_get(back, "shape"), 2);
    ck_assert_str_eq(pretty, "[\n  -1,\n  784\n]");
    /* A key set twice is an error, not a silent overwrite. */
    ck_assert_ptr_null(gb_config_put_int(c, "seed", 1));
    assert_error(GB_ERR_VALUE, "key 'seed' is already set");
    ck_assert_ptr_null(gb_config_put_number(c, "nan", NAN));
    assert_error(GB_ERR_VALUE, "JSON has no such number");
    free(s), free(again), free(pretty);
    gb_config_free(back);
    gb_config_free(c);
}
END_TEST

START_TEST(test_json_unicode_and_numbers) {
    gb_config *c = parse(" [\"\\u00e9\\ud83d\\ude00\", 1e3, -0.5, 9223372036854775807, 99999999999999999999] ");
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(gb_config_string(gb_config_at(c, 0)), "\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_int_eq(gb_config_kind_of(gb_config_at(c, 1)), GB_CONFIG_NUMBER);
    ck_assert_double_eq(gb_config_number(gb_config_at(c, 1)), 1000);
    ck_assert_int_eq(gb_config_int(gb_config_at(c, 3)), INT64_MAX);
    ck_assert_int_eq(gb_config_kind_of(gb_config_at(c, 4)), GB_CONFIG_NUMBER);   /* beyond int64 */
    gb_config_free(c);
}
END_TEST

START_TEST(test_json_errors_name_line_and_column) {
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"{\"a\": 1,}", "test.json: line 1, column 9: expected a key (a string)"},
        {"{\"a\" 1}", "line 1, column 6: expected ':' after the key \"a\""},
        {"[1,\n 2\n 3]", "line 3, column 2: expected ',' or ']'"},
        {"\"abc", "line 1, column 5: the text ends inside a string"},
        {"\"a\\x\"", "line 1, column 3: a bad escape sequence in a string"},
        {"\"\\u0000\"", "a bad escape sequence"},
        {"\"\\ud800\"", "a bad escape sequence"},
        {"[01]", "line 1, column 2: a malformed number"},
        {"[1.]", "a malformed number"},
        {"[1e999]", "a number out of range"},
        {"tru", "unexpected character 't' where a value was expected"},
        {"{} x", "line 1, column 4: unexpected text after the value"},
        {"", "line 1, column 1: the text ends where a value was expected"},
        {"\"tab\there\"", "a control character inside a string"},
        {"{\"a\": 1, \"a\": 2}", "line 1, column 13: the key \"a\" is given twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert_msg(parse(cases[i].text) == NULL, "case %zu parsed", i);
        assert_error(GB_ERR_VALUE, cases[i].error);
    }
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    ck_assert_ptr_null(gb_config_from_json(deep, 200, "deep.json"));
    assert_error(GB_ERR_VALUE, "nested deeper than 64 levels");
}
END_TEST

/* get_config -> from_config -> get_config gives the same text. */
static gb_module *round_trip(gb_module *m) {
    gb_config *c = gb_module_get_config(m);
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    char *text = json_of(c);
    gb_config *parsed = parse(text);
    gb_module *back = gb_module_from_config(parsed);
    ck_assert_msg(back != NULL, "%s: %s", text, gb_error_string());
    gb_config *c2 = gb_module_get_config(back);
    char *text2 = json_of(c2);
    ck_assert_str_eq(text2, text);
    free(text), free(text2);
    gb_config_free(c), gb_config_free(c2), gb_config_free(parsed);
    return back;
}

START_TEST(test_every_builtin_layer_round_trips) {
    gb_module *layers[] = {
        gb_dense_new(7, &(gb_dense_options){.activation = GB_ACT_GELU, .no_bias = true,
                                            .kernel_initializer = {.kind = GB_INIT_HE_NORMAL, .seed = 9},
                                            .kernel_regularizer = {.l2 = 0.01},
                                            .activity_regularizer = {.l1 = 0.5}, .seed = 77}),
        gb_conv2d_new(4, 3, 2, &(gb_conv2d_options){.strides = {2, 1}, .padding = GB_PADDING_SAME,
                                                    .bias_regularizer = {.l1 = 1e-3}}),
        gb_max_pool2d_new(&(gb_pool2d_options){.pool_size = {3, 3}, .strides = {1, 2}}),
        gb_avg_pool2d_new(&(gb_pool2d_options){.padding = GB_PADDING_SAME}),
        gb_flatten_new("flat"),
        gb_dropout_new(0.25, 42, NULL),
        gb_activation_new(GB_ACT_SOFTMAX, NULL),
        gb_relu_new(NULL),
        gb_add_layer_new(NULL),
        gb_concatenate_new(2, NULL),
        gb_batch_norm_new(&(gb_batch_norm_options){.momentum = 0.9, .epsilon = 1e-5, .no_center = true}),
        gb_layer_norm_new(&(gb_layer_norm_options){.epsilon = 1e-6}),
        gb_embedding_new(100, 8, &(gb_embedding_options){.seed = 3}),
        gb_embedding_new(100, 8, &(gb_embedding_options){.mask_zero = true, .seed = 4}),
        gb_global_avg_pool2d_new(NULL),
        gb_global_avg_pool1d_new(NULL),
        gb_bidirectional_new(gb_lstm_new(5, &(gb_rnn_options){.return_state = true, .dropout = 0.5}),
                             &(gb_bidirectional_options){.merge_mode = GB_MERGE_NONE}),
        gb_position_embedding_new(16, &(gb_position_embedding_options){.seed = 8}),
        gb_sine_position_encoding_new(&(gb_sine_position_encoding_options){.max_wavelength = 100}),
    };
    for (size_t i = 0; i < sizeof layers / sizeof *layers; i++) {
        gb_module_set_trainable(layers[i], i % 2 == 0);
        gb_module *back = round_trip(layers[i]);
        ck_assert_str_eq(gb_module_class_name(back), gb_module_class_name(layers[i]));
        ck_assert_str_eq(gb_module_name(back), gb_module_name(layers[i]));
        ck_assert(gb_module_trainable(back) == (i % 2 == 0));
        gb_module_free(back);
        gb_module_free(layers[i]);
    }
}
END_TEST

static void assert_same_outputs(gb_module *a, gb_module *b, int nin, gb_tensor *const *in) {
    gb_tensor *ya[GB_NN_MAX_IO], *yb[GB_NN_MAX_IO];
    int n = gb_module_call_n(a, nin, in, ya, false);
    ck_assert_int_eq(gb_module_call_n(b, nin, in, yb, false), n);
    for (int k = 0; k < n; k++)
        for (int64_t j = 0; j < gb_size(ya[k]); j++)
            ck_assert_msg(gb_get(ya[k], j) == gb_get(yb[k], j), "output %d[%lld]", k, (long long)j);
}

START_TEST(test_sequential_round_trip_rebuilds_the_same_model) {
    gb_module *m = gb_sequential_new("cnn");
    gb_sequential_add(m, gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.activation = GB_ACT_RELU, .seed = 5}));
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    gb_sequential_add(m, gb_flatten_new(NULL));
    gb_sequential_add(m, gb_dropout_new(0.5, 3, NULL));
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 6}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 8, 8, 1));
    gb_module *back = round_trip(m);
    ck_assert(gb_module_built(back));
    ck_assert_int_eq(gb_module_count_params(back), gb_module_count_params(m));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(2, 8, 8, 1), 0, 1, 1);
    assert_same_outputs(m, back, 1, &x);
    gb_module_free(back);
    gb_module_free(m);
}
END_TEST

START_TEST(test_functional_round_trip_with_shared_and_nested) {
    gb_sym *x = gb_input(GB_F32, GB_SHAPE(5), "x");
    gb_sym *code = gb_apply(gb_dense_new(3, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 8}), x);
    gb_module *encoder = gb_functional_new(1, &x, 1, &code, "encoder");
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(5), "a"), *b = gb_input(GB_F32, GB_SHAPE(5), "b");
    gb_sym *ea = gb_apply(encoder, a), *eb = gb_apply(encoder, b);
    gb_sym *cat = gb_apply_n(gb_concatenate_new(-1, NULL), 2, (gb_sym *[]){ea, eb});
    gb_sym *sum = gb_apply_n(gb_add_layer_new(NULL), 2, (gb_sym *[]){ea, eb});
    gb_sym *out1 = gb_apply(gb_dense_new(1, &(gb_dense_options){.name = "score", .seed = 9}), cat);
    gb_module *m = gb_functional_new(2, (gb_sym *[]){a, b}, 2, (gb_sym *[]){out1, sum}, "pair");
    gb_config *c = gb_module_get_config(m);
    char *text = json_of(gb_config_get(c, "config"));
    ck_assert_msg(strstr(text, "\"calls\": [{\"layer\": \"encoder\", \"args\": [[\"a\", 0, 0]]}, "
                               "{\"layer\": \"encoder\", \"args\": [[\"b\", 0, 0]]}, "
                               "{\"layer\": \"concatenate\", \"args\": [[\"encoder\", 0, 0], "
                               "[\"encoder\", 1, 0]]}"),
                  "%s", text);
    ck_assert_msg(strstr(text, "\"outputs\": [[\"score\", 0, 0], [\"add\", 0, 0]]"), "%s", text);
    free(text);
    gb_config_free(c);
    gb_module *back = round_trip(m);
    ck_assert_int_eq(gb_model_num_outputs(back), 2);
    ck_assert_int_eq(gb_module_count_params(back), gb_module_count_params(m));
    gb_tensor *in[2] = {gb_random_uniform(GB_F32, GB_SHAPE(3, 5), -1, 1, 2),
                        gb_random_uniform(GB_F32, GB_SHAPE(3, 5), -1, 1, 3)};
    assert_same_outputs(m, back, 2, in);
    gb_module_free(back);
    gb_module_free(m);
}
END_TEST

/* ---- custom types ------------------------------------------------------------------------- */

static const gb_module_type other_scale_type = {.class_name = "Scale", .default_name = "scale",
                                                .call = scale_call, .from_config = scale_from_config};

START_TEST(test_custom_layers_through_the_registry) {
    gb_module *m = gb_sequential_new(NULL);
    gb_sequential_add(m, gb_dense_new(2, NULL));
    gb_sequential_add(m, scale_new(2.5, "times"));
    gb_config *c = gb_module_get_config(m);
    ck_assert_ptr_null(gb_module_from_config(c));
    assert_error(GB_ERR_VALUE, "unknown layer class 'Scale'; register custom types with "
                               "gb_register_module_type");
    ck_assert(gb_register_module_type(&scale_type));
    ck_assert(gb_register_module_type(&scale_type));   /* again: fine */
    ck_assert(!gb_register_module_type(&other_scale_type));
    assert_error(GB_ERR_VALUE, "another type is already registered as 'Scale'");
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_module *times = gb_module_find(back, "times");
    ck_assert_str_eq(gb_module_class_name(times), "Scale");
    ck_assert_double_eq(((scale_state *)gb_module_state(times))->factor, 2.5);
    gb_config_free(c);
    gb_module_free(back);
    gb_module_free(m);
}
END_TEST

START_TEST(test_bad_configs_are_clear_errors) {
    static const struct {
        const char *json, *error;
    } cases[] = {
        {"{\"class_name\": \"Dense\"}", "Dense config: 'config' is missing or not a dict"},
        {"{\"config\": {}}", "module config: 'class_name' is missing"},
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": \"ten\"}}",
         "Dense config: 'units' must be an integer"},
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": 0}}", "Dense: units must be positive"},
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": 3, \"activation\": \"fizz\"}}",
         "unknown activation"},
        {"{\"class_name\": \"Conv2D\", \"config\": {\"filters\": 2, \"kernel_size\": [3]}}",
         "Conv2D config: 'kernel_size' must be two positive integers"},
        {"{\"class_name\": \"Functional\", \"config\": {\"inputs\": [{\"name\": \"x\", \"dtype\": "
         "\"float32\", \"shape\": [-1, 3]}], \"layers\": [], \"calls\": [], \"outputs\": [[\"y\", 0, 0]]}}",
         "Functional config: [\"y\", 0, 0] names no value made before it"},
        {"{\"class_name\": \"Functional\", \"config\": {\"inputs\": [{\"name\": \"x\", \"dtype\": "
         "\"float33\", \"shape\": [-1, 3]}]}}",
         "'dtype' is an unknown dtype 'float33'"},
        /* Every key is read or refused: nothing is silently dropped. */
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": 3, \"kernel_regularizr\": "
         "{\"l2\": 0.1}}}",
         "Dense config: unknown key 'kernel_regularizr' (the Dense layer does not read it)"},
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": 3, \"kernel_regularizer\": "
         "{\"l3\": 0.1}}}",
         "Dense config: unknown key 'l3' (the Dense layer does not read it)"},
        {"{\"class_name\": \"Dense\", \"config\": {\"units\": 3, \"kernel_regularizer\": \"l3\"}}",
         "Dense config: 'kernel_regularizer' is 'l3'; a regularizer is l1, l2, l1_l2 or {l1, l2}"},
        {"{\"class_name\": \"Conv2D\", \"config\": {\"filters\": 2, \"kernel_size\": [3, 3], "
         "\"bias_regularizer\": 5}}",
         "Conv2D config: 'bias_regularizer' must be null, a name or {l1, l2}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gb_config *c = parse(cases[i].json);
        ck_assert_msg(c != NULL, "case %zu: %s", i, gb_error_string());
        ck_assert_msg(gb_module_from_config(c) == NULL, "case %zu built", i);
        const gb_error *e = gb_last_error();
        ck_assert_msg(e && strstr(e->message, cases[i].error), "case %zu: '%s' lacks '%s'", i,
                      e ? e->message : "(none)", cases[i].error);
        gb_clear_error();
        gb_config_free(c);
    }
}
END_TEST

/* Keras' regularizer names in a config: "l2" is L2(0.01), as
 * keras.regularizers.get("l2") gives, and written back as numbers. */
START_TEST(test_regularizer_names_in_configs) {
    gb_config *c = parse("{\"class_name\": \"Dense\", \"config\": {\"units\": 3, "
                         "\"kernel_regularizer\": \"l2\", \"bias_regularizer\": \"l1_l2\"}}");
    gb_module *m = gb_module_from_config(c);
    ck_assert_msg(m != NULL, "%s", gb_error_string());
    gb_config *back = gb_module_get_config(m);
    const gb_config *cfg = gb_config_get(back, "config");
    const gb_config *k = gb_config_get(cfg, "kernel_regularizer"), *b = gb_config_get(cfg, "bias_regularizer");
    ck_assert(gb_config_number(gb_config_get(k, "l1")) == 0 && gb_config_number(gb_config_get(k, "l2")) == 0.01);
    ck_assert(gb_config_number(gb_config_get(b, "l1")) == 0.01 && gb_config_number(gb_config_get(b, "l2")) == 0.01);
    gb_config_free(back);
    gb_config_free(c);
    gb_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_json_text_exact);
    tcase_add_test(tc, test_json_unicode_and_numbers);
    tcase_add_test(tc, test_json_errors_name_line_and_column);
    tcase_add_test(tc, test_every_builtin_layer_round_trips);
    tcase_add_test(tc, test_sequential_round_trip_rebuilds_the_same_model);
    tcase_add_test(tc, test_functional_round_trip_with_shared_and_nested);
    tcase_add_test(tc, test_custom_layers_through_the_registry);
    tcase_add_test(tc, test_bad_configs_are_clear_errors);
    tcase_add_test(tc, test_regularizer_names_in_configs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
