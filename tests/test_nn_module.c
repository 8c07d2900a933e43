/* test_nn_module.c — modules and Sequential models: Keras auto-naming and
 * name scopes, lazy build, parameter counts, variable collection order,
 * freezing, sharing, summaries, and the structural errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

/* A 28x28x1 CNN: conv(8,3x3) -> pool -> conv(4,3x3,same) -> flatten -> dense(16) -> dense(10). */
static gb_module *small_cnn(void) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_conv2d_new(8, 3, 3, &(gb_conv2d_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_max_pool2d_new(NULL));
    gb_sequential_add(model, gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.padding = GB_PADDING_SAME}));
    gb_sequential_add(model, gb_flatten_new(NULL));
    gb_sequential_add(model, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(10, NULL));
    return model;
}

/* ---- naming ------------------------------------------------------------------------ */

START_TEST(test_auto_names_count_per_kind) {
    gb_module *d0 = gb_dense_new(3, NULL), *d1 = gb_dense_new(3, NULL);
    gb_module *c0 = gb_conv2d_new(2, 3, 3, NULL);
    gb_module *d2 = gb_dense_new(3, NULL);
    gb_module *s0 = gb_sequential_new(NULL), *s1 = gb_sequential_new(NULL);
    gb_module *f0 = gb_flatten_new(NULL), *p0 = gb_max_pool2d_new(NULL), *a0 = gb_avg_pool2d_new(NULL);
    gb_module *r0 = gb_relu_new(NULL), *dr = gb_dropout_new(0.5, 0, NULL);
    ck_assert_str_eq(gb_module_name(d0), "dense");
    ck_assert_str_eq(gb_module_name(d1), "dense_1");
    ck_assert_str_eq(gb_module_name(c0), "conv2d");
    ck_assert_str_eq(gb_module_name(d2), "dense_2");
    ck_assert_str_eq(gb_module_name(s0), "sequential");
    ck_assert_str_eq(gb_module_name(s1), "sequential_1");
    ck_assert_str_eq(gb_module_name(f0), "flatten");
    ck_assert_str_eq(gb_module_name(p0), "max_pooling2d");
    ck_assert_str_eq(gb_module_name(a0), "average_pooling2d");
    ck_assert_str_eq(gb_module_name(r0), "re_lu");
    ck_assert_str_eq(gb_module_name(dr), "dropout");
    ck_assert_str_eq(gb_module_class_name(c0), "Conv2D");
    ck_assert_str_eq(gb_module_class_name(p0), "MaxPooling2D");
    /* Explicit names are used as given and do not advance the counter. */
    gb_module *named = gb_dense_new(3, &(gb_dense_options){.name = "logits"});
    gb_module *d3 = gb_dense_new(3, NULL);
    ck_assert_str_eq(gb_module_name(named), "logits");
    ck_assert_str_eq(gb_module_name(d3), "dense_3");
    gb_nn_clear_session();
    gb_module *again = gb_dense_new(3, NULL);
    ck_assert_str_eq(gb_module_name(again), "dense");
    gb_module *all[] = {d0, d1, c0, d2, s0, s1, f0, p0, a0, r0, dr, named, d3, again};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) gb_module_free(all[i]);
    ck_assert(gb_ok());
}
END_TEST

START_TEST(test_weight_names_follow_scopes) {
    gb_module *d = gb_dense_new(4, NULL);
    gb_module *d1 = gb_dense_new(2, NULL);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(3, 5));
    ck_assert_ptr_nonnull(gb_module_call(d, x, false));
    ck_assert_str_eq(gb_variable_name(gb_module_variable(d, "kernel")), "dense/kernel");
    ck_assert_str_eq(gb_variable_name(gb_module_variable(d, "bias")), "dense/bias");

    /* Inside a model (and inside a user's name scope) the path nests. */
    gb_module *model = gb_sequential_new(NULL);
    ck_assert(gb_sequential_add(model, d1));
    gb_name_scope_push("outer");
    ck_assert_ptr_nonnull(gb_module_call(model, x, false));
    gb_name_scope_pop();
    ck_assert_str_eq(gb_variable_name(gb_module_variable(d1, "kernel")),
                     "outer/sequential/dense_1/kernel");
    ck_assert_str_eq(gb_variable_name(gb_module_variable(d1, "bias")),
                     "outer/sequential/dense_1/bias");
    ck_assert_str_eq(gb_name_scope_path(), "");
    /* Full names find the same variable. */
    ck_assert_ptr_eq(gb_module_variable(d1, "outer/sequential/dense_1/bias"),
                     gb_module_variable(d1, "bias"));
    ck_assert_ptr_null(gb_module_variable(d1, "gamma"));
    gb_module_free(d);
    gb_module_free(model);
    ck_assert(gb_ok());
}
END_TEST

START_TEST(test_errors_name_the_layer_scope) {
    gb_module *model = gb_sequential_new("mlp");
    gb_sequential_add(model, gb_dense_new(4, &(gb_dense_options){.name = "hidden"}));
    ck_assert_ptr_nonnull(gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(2, 3)), false));
    ck_assert_ptr_null(gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(2, 5)), false));
    const gb_error *e = gb_last_error();
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->code, GB_ERR_SHAPE);
    ck_assert_str_eq(e->op_type, "Dense");
    ck_assert_str_eq(e->scope_path, "mlp/hidden");
    ck_assert_ptr_nonnull(strstr(e->message, "Dense layer 'hidden'"));
    /* The call site is the test's line, not the library's. */
    ck_assert_ptr_nonnull(strstr(gb_error_string(), "test_nn_module.c"));
    ck_assert_str_eq(gb_name_scope_path(), "");
    gb_module_free(model);
}
END_TEST

START_TEST(test_bad_names_rejected) {
    ck_assert_ptr_null(gb_dense_new(3, &(gb_dense_options){.name = "a/b"}));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "contains '/'"));
    gb_clear_error();
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_ptr_null(gb_flatten_new(longname));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "longer than 63"));
}
END_TEST

/* ---- build ---------------------------------------------------------------------------- */

START_TEST(test_lazy_build_shapes_and_params) {
    gb_module *d = gb_dense_new(10, NULL);
    int64_t dims[GB_MAX_RANK];
    ck_assert(!gb_module_built(d));
    ck_assert_int_eq(gb_module_output_shape(d, dims), -1);
    ck_assert_int_eq(gb_module_count_params(d), 0);
    int n = -1;
    gb_module_trainable_variables(d, &n);
    ck_assert_int_eq(n, 0);

    gb_tensor *y = gb_module_call(d, gb_ones(GB_F32, GB_SHAPE(32, 784)), false);
    ck_assert_int_eq(gb_rank(y), 2);
    ck_assert_int_eq(gb_dim(y, 0), 32);
    ck_assert_int_eq(gb_dim(y, 1), 10);
    ck_assert(gb_module_built(d));
    ck_assert_int_eq(gb_module_dtype(d), GB_F32);
    ck_assert_int_eq(gb_module_count_params(d), 784 * 10 + 10);
    gb_variable *k = gb_module_variable(d, "kernel");
    ck_assert_int_eq(gb_variable_rank(k), 2);
    ck_assert_int_eq(gb_variable_shape(k)[0], 784);
    ck_assert_int_eq(gb_variable_shape(k)[1], 10);
    ck_assert_int_eq(gb_variable_shape(gb_module_variable(d, "bias"))[0], 10);
    ck_assert_int_eq(gb_module_input_shape(d, dims), 2);
    ck_assert_int_eq(dims[0], -1);   /* the batch is recorded as unknown */
    ck_assert_int_eq(dims[1], 784);
    ck_assert_int_eq(gb_module_output_shape(d, dims), 2);
    ck_assert_int_eq(dims[1], 10);

    /* Another batch size is fine; no new weights. */
    ck_assert_int_eq(gb_dim(gb_module_call(d, gb_ones(GB_F32, GB_SHAPE(3, 784)), false), 0), 3);
    gb_module_variables(d, &n);
    ck_assert_int_eq(n, 2);

    /* no_bias: a kernel only. */
    gb_module *nb = gb_dense_new(5, &(gb_dense_options){.no_bias = true});
    gb_module_call(nb, gb_ones(GB_F32, GB_SHAPE(1, 4)), false);
    ck_assert_int_eq(gb_module_count_params(nb), 20);
    ck_assert_ptr_null(gb_module_variable(nb, "bias"));
    gb_module_free(d);
    gb_module_free(nb);
    ck_assert(gb_ok());
}
END_TEST

START_TEST(test_build_without_data) {
    gb_module *model = small_cnn();
    ck_assert(gb_module_build(model, GB_F32, 4, (const int64_t[]){-1, 28, 28, 1}));
    int64_t dims[GB_MAX_RANK];
    ck_assert_int_eq(gb_module_output_shape(model, dims), 2);
    ck_assert_int_eq(dims[0], -1);
    ck_assert_int_eq(dims[1], 10);
    /* conv 3x3 valid: 26x26x8; pool: 13x13x8; conv same: 13x13x4; flatten 676. */
    const int64_t expect[][4] = {{-1, 26, 26, 8}, {-1, 13, 13, 8}, {-1, 13, 13, 4}, {-1, 676}, {-1, 16}, {-1, 10}};
    const int ranks[] = {4, 4, 4, 2, 2, 2};
    for (int i = 0; i < 6; i++) {
        int r = gb_module_output_shape(gb_sequential_layer(model, i), dims);
        ck_assert_int_eq(r, ranks[i]);
        for (int j = 0; j < r; j++) ck_assert_int_eq(dims[j], expect[i][j]);
    }
    int64_t params = (3 * 3 * 1 * 8 + 8) + (3 * 3 * 8 * 4 + 4) + (676 * 16 + 16) + (16 * 10 + 10);
    ck_assert_int_eq(gb_module_count_params(model), params);
    ck_assert_int_eq(gb_module_count_trainable_params(model), params);
    /* A built model then runs on data of that shape. */
    gb_tensor *y = gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(2, 28, 28, 1)), false);
    ck_assert_msg(y != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_dim(y, 0), 2);
    ck_assert_int_eq(gb_dim(y, 1), 10);
    gb_module_free(model);
}
END_TEST

START_TEST(test_sequential_variable_order) {
    gb_module *model = small_cnn();
    ck_assert_ptr_nonnull(gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(1, 28, 28, 1)), true));
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    const char *names[] = {"sequential/conv2d/kernel",  "sequential/conv2d/bias",
                           "sequential/conv2d_1/kernel", "sequential/conv2d_1/bias",
                           "sequential/dense/kernel",   "sequential/dense/bias",
                           "sequential/dense_1/kernel", "sequential/dense_1/bias"};
    ck_assert_int_eq(n, 8);
    for (int i = 0; i < n; i++) ck_assert_str_eq(gb_variable_name(vars[i]), names[i]);
    /* The same order from all variables; none are non-trainable. */
    int na = 0;
    gb_variable *const *all = gb_module_variables(model, &na);
    ck_assert_int_eq(na, 8);
    for (int i = 0; i < na; i++) ck_assert_ptr_eq(all[i], vars[i]);
    int nn = -1;
    gb_module_non_trainable_variables(model, &nn);
    ck_assert_int_eq(nn, 0);
    /* get_layer by name, and its own weights. */
    gb_module *dense1 = gb_module_find(model, "dense_1");
    ck_assert_ptr_eq(dense1, gb_sequential_layer(model, 5));
    ck_assert_ptr_eq(gb_module_variable(dense1, "kernel"), vars[6]);
    ck_assert_ptr_null(gb_module_find(model, "nope"));
    gb_module_free(model);
}
END_TEST

START_TEST(test_freezing) {
    gb_module *model = gb_sequential_new(NULL);
    gb_module *base = gb_dense_new(4, NULL);
    gb_sequential_add(model, base);
    gb_sequential_add(model, gb_dense_new(2, NULL));
    gb_module_set_trainable(base, false); /* before build: applies to weights built later */
    gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(1, 3)), false);
    int nt = 0, nn = 0;
    gb_variable *const *t = gb_module_trainable_variables(model, &nt);
    ck_assert_int_eq(nt, 2);
    ck_assert_str_eq(gb_variable_name(t[0]), "sequential/dense_1/kernel");
    gb_variable *const *f = gb_module_non_trainable_variables(model, &nn);
    ck_assert_int_eq(nn, 2);
    ck_assert_str_eq(gb_variable_name(f[0]), "sequential/dense/kernel");
    ck_assert_int_eq(gb_module_count_params(model), 3 * 4 + 4 + 4 * 2 + 2);
    ck_assert_int_eq(gb_module_count_trainable_params(model), 4 * 2 + 2);
    /* A tape does not watch frozen weights. */
    gb_tape *tape = gb_tape_begin();
    gb_tensor *y = gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(1, 3)), true);
    gb_tape_end(tape);
    ck_assert_ptr_nonnull(y);
    gb_variable *watched[8];
    ck_assert_int_eq(gb_tape_watched_variables(tape, watched, 8), 2);
    gb_module_set_trainable(base, true);
    ck_assert(gb_module_trainable(base));
    gb_module_trainable_variables(model, &nt);
    ck_assert_int_eq(nt, 4);
    gb_module_free(model);
}
END_TEST

START_TEST(test_shared_layer_counted_once) {
    gb_module *shared = gb_dense_new(3, NULL);
    gb_module *a = gb_sequential_new(NULL), *b = gb_sequential_new(NULL);
    ck_assert(gb_sequential_add(a, gb_module_retain(shared)));
    ck_assert(gb_sequential_add(b, gb_module_retain(shared)));
    gb_module *outer = gb_sequential_new("outer");
    ck_assert(gb_sequential_add(outer, a));
    ck_assert(gb_sequential_add(outer, b));
    ck_assert_ptr_nonnull(gb_module_call(outer, gb_ones(GB_F32, GB_SHAPE(2, 3)), false));
    int n = 0;
    gb_module_variables(outer, &n);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(gb_module_count_params(outer), 12);
    gb_module_free(outer);  /* drops a and b and two references to shared */
    ck_assert_str_eq(gb_module_name(shared), "dense");
    gb_module_free(shared); /* the last reference */
    ck_assert(gb_ok());
}
END_TEST

/* ---- summary ----------------------------------------------------------------------------- */

/* The summary as text, through a temporary file (malloc'ed; free it). */
static char *summary_text(gb_module *m, bool *ok) {
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    *ok = gb_module_summary(m, f);
    long len = ftell(f);
    char *text = calloc(1, (size_t)len + 1);
    rewind(f);
    ck_assert_int_eq(fread(text, 1, (size_t)len, f), len);
    fclose(f);
    return text;
}

START_TEST(test_summary_table) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_flatten_new(NULL));
    gb_sequential_add(model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dropout_new(0.2, 0, NULL));
    gb_sequential_add(model, gb_dense_new(10, NULL));
    ck_assert(gb_module_build(model, GB_F32, 3, (const int64_t[]){-1, 28, 28}));
    bool ok = false;
    char *text = summary_text(model, &ok);
    ck_assert(ok);
    const char *expected =
        "Model: \"sequential\"\n"
        "_________________________________________________________________\n"
        " Layer (type)                Output Shape              Param #\n"
        "=================================================================\n"
        " flatten (Flatten)           (None, 784)               0\n"
        " dense (Dense)               (None, 128)               100480\n"
        " dropout (Dropout)           (None, 128)               0\n"
        " dense_1 (Dense)             (None, 10)                1290\n"
        "=================================================================\n"
        "Total params: 101,770\n"
        "Trainable params: 101,770\n"
        "Non-trainable params: 0\n"
        "_________________________________________________________________\n";
    ck_assert_str_eq(text, expected);
    free(text);
    gb_module_free(model);
}
END_TEST

START_TEST(test_summary_columns_widen_for_long_names) {
    gb_module *model = gb_sequential_new("cnn");
    gb_sequential_add(model, gb_conv2d_new(4, 3, 3, &(gb_conv2d_options){.padding = GB_PADDING_SAME}));
    gb_sequential_add(model, gb_max_pool2d_new(NULL));
    gb_sequential_add(model, gb_max_pool2d_new(NULL));
    ck_assert(gb_module_build(model, GB_F32, 4, (const int64_t[]){-1, 8, 8, 1}));
    bool ok = false;
    char *text = summary_text(model, &ok);
    ck_assert(ok);
    /* "max_pooling2d_1 (MaxPooling2D)" is 30 wide: every row's shape
     * starts under the header's "Output Shape". */
    const char *header = strstr(text, "Output Shape");
    const char *header_line = strstr(text, " Layer (type)");
    ck_assert_ptr_nonnull(header);
    long column = header - header_line;
    ck_assert_int_eq(column, 32);
    const char *rows[] = {" conv2d (Conv2D)", " max_pooling2d (MaxPooling2D)",
                          " max_pooling2d_1 (MaxPooling2D)"};
    const char *shapes[] = {"(None, 8, 8, 4)", "(None, 4, 4, 4)", "(None, 2, 2, 4)"};
    for (int i = 0; i < 3; i++) {
        const char *line = strstr(text, rows[i]);
        ck_assert_ptr_nonnull(line);
        ck_assert_int_eq(strncmp(line + column, shapes[i], strlen(shapes[i])), 0);
    }
    const char *rule = strstr(text, "\n=");
    ck_assert_int_eq(strcspn(rule + 1, "\n"), 30 + 25 + 13);
    free(text);
    gb_module_free(model);
}
END_TEST

START_TEST(test_summary_before_build_is_an_error) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_dense_new(3, NULL));
    bool ok = true;
    char *text = summary_text(model, &ok);
    ck_assert(!ok);
    free(text);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "has not been built yet"));
    gb_module_free(model);
}
END_TEST

/* ---- structure errors ------------------------------------------------------------------------- */

START_TEST(test_duplicate_layer_names) {
    gb_module *model = gb_sequential_new(NULL);
    ck_assert(gb_sequential_add(model, gb_dense_new(3, &(gb_dense_options){.name = "fc"})));
    ck_assert(!gb_sequential_add(model, gb_dense_new(3, &(gb_dense_options){.name = "fc"})));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "unique names; 'fc'"));
    ck_assert_int_eq(gb_sequential_num_layers(model), 1);
    gb_module_free(model); /* the rejected layer was freed by add (ASan checks) */
}
END_TEST

START_TEST(test_add_null_layer_keeps_first_error) {
    gb_module *model = gb_sequential_new(NULL);
    ck_assert(!gb_sequential_add(model, gb_dense_new(0, NULL)));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "units must be positive, got 0"));
    gb_module_free(model);
}
END_TEST

START_TEST(test_cycles_and_non_models) {
    gb_module *a = gb_sequential_new(NULL), *b = gb_sequential_new(NULL);
    ck_assert(gb_sequential_add(a, gb_module_retain(b)));
    ck_assert(!gb_sequential_add(b, gb_module_retain(a)));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "a cycle"));
    gb_clear_error();
    gb_module *d = gb_dense_new(2, NULL);
    ck_assert(!gb_sequential_add(d, gb_flatten_new(NULL)));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "not a Sequential model"));
    gb_clear_error();
    gb_module *empty = gb_sequential_new("empty");
    ck_assert_ptr_null(gb_module_call(empty, gb_ones(GB_F32, GB_SHAPE(1, 2)), false));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_STATE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "has no layers"));
    gb_module_free(empty);
    gb_module_free(d);
    gb_module_free(a);
    gb_module_free(b);
}
END_TEST

START_TEST(test_add_to_built_model_builds_new_layer) {
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, gb_dense_new(4, NULL));
    ck_assert(gb_module_build(model, GB_F32, 2, (const int64_t[]){-1, 3}));
    ck_assert(gb_sequential_add(model, gb_dense_new(2, NULL)));
    ck_assert(gb_module_built(model));
    int64_t dims[GB_MAX_RANK];
    ck_assert_int_eq(gb_module_output_shape(model, dims), 2);
    ck_assert_int_eq(dims[1], 2);
    ck_assert_int_eq(gb_module_count_params(model), 3 * 4 + 4 + 4 * 2 + 2);
    ck_assert_str_eq(gb_variable_name(gb_module_variable(gb_sequential_layer(model, 1), "kernel")),
                     "sequential/dense_1/kernel");
    gb_module_free(model);
    ck_assert(gb_ok());
}
END_TEST

/* ---- custom modules ---------------------------------------------------------------------------- */

/* A tf.Module-style custom layer: y = x * scale, scale created in the
 * constructor, no build function. */
typedef struct scale_state {
    gb_variable *scale;
} scale_state;

static gb_tensor *scale_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    scale_state *s = gb_module_state(m);
    return gb_mul(x, gb_variable_value(s->scale));
}

/* A custom block of two layers, with no output_shape of its own: its
 * output shape is recorded from its first call. */
typedef struct block_state {
    gb_module *expand, *project;
} block_state;

static gb_tensor *block_call(gb_module *m, gb_tensor *x, bool training) {
    block_state *s = gb_module_state(m);
    return gb_module_call(s->project, gb_module_call(s->expand, x, training), training);
}

static const gb_module_type block_type = {
    .class_name = "Block", .default_name = "block", .state_size = sizeof(block_state),
    .call = block_call};

START_TEST(test_custom_block_of_layers) {
    gb_module *b = gb_module_new(&block_type, NULL, 0);
    block_state *s = gb_module_state(b);
    s->expand = gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU});
    s->project = gb_dense_new(2, NULL);
    ck_assert(gb_module_add_submodule(b, s->expand));
    ck_assert(gb_module_add_submodule(b, s->project));
    gb_module *model = gb_sequential_new(NULL);
    gb_sequential_add(model, b);
    gb_sequential_add(model, gb_dense_new(1, NULL));
    ck_assert_ptr_nonnull(gb_module_call(model, gb_ones(GB_F32, GB_SHAPE(3, 5)), false));
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    ck_assert_int_eq(n, 6);
    ck_assert_str_eq(gb_variable_name(vars[0]), "sequential/block/dense/kernel");
    ck_assert_str_eq(gb_variable_name(vars[3]), "sequential/block/dense_1/bias");
    ck_assert_str_eq(gb_variable_name(vars[4]), "sequential/dense_2/kernel");
    int64_t dims[GB_MAX_RANK];
    ck_assert_int_eq(gb_module_output_shape(b, dims), 2);
    ck_assert_int_eq(dims[1], 2);
    ck_assert_int_eq(gb_module_count_params(b), 5 * 8 + 8 + 8 * 2 + 2);
    gb_module_free(model);

    /* Built without data (inside a recording tape, which must not see the
     * probe that builds it): the block learns its output shape too. */
    gb_module *b2 = gb_module_new(&block_type, "b2", 0);
    s = gb_module_state(b2);
    gb_module_add_submodule(b2, s->expand = gb_dense_new(6, NULL));
    gb_module_add_submodule(b2, s->project = gb_dense_new(3, NULL));
    gb_module *m2 = gb_sequential_new(NULL);
    gb_sequential_add(m2, b2);
    gb_sequential_add(m2, gb_dense_new(1, &(gb_dense_options){.name = "head"}));
    gb_tape *tape = gb_tape_begin();
    ck_assert(gb_module_build(m2, GB_F32, 2, (const int64_t[]){-1, 4}));
    gb_variable *watched[8];
    ck_assert_int_eq(gb_tape_watched_variables(tape, watched, 8), 0);
    gb_tensor *x = gb_ones(GB_F32, GB_SHAPE(2, 4));
    gb_tensor *loss = gb_reduce_sum(gb_module_call(m2, x, true), GB_ALL_AXES, false);
    gb_tape_end(tape);
    int nv = 0;
    gb_variable *const *vars2 = gb_module_trainable_variables(m2, &nv);
    gb_tensor *grads[6] = {0};
    ck_assert_int_eq(nv, 6);
    ck_assert_msg(gb_tape_gradient_vars(tape, loss, vars2, nv, grads), "%s", gb_error_string());
    for (int i = 0; i < nv; i++) ck_assert_ptr_nonnull(grads[i]);
    ck_assert_int_eq(gb_tape_watched_variables(tape, watched, 8), 6);
    ck_assert_int_eq(gb_module_output_shape(b2, dims), 2);
    ck_assert_int_eq(dims[0], -1);
    ck_assert_int_eq(dims[1], 3);
    ck_assert_int_eq(gb_module_output_shape(m2, dims), 2);
    ck_assert_int_eq(dims[1], 1);
    ck_assert_int_eq(gb_module_count_params(m2), (4 * 6 + 6) + (6 * 3 + 3) + (3 + 1));
    gb_module_free(m2);
}
END_TEST

static const gb_module_type scale_type = {
    .class_name = "Scale", .default_name = "scale", .state_size = sizeof(scale_state),
    .call = scale_call};

START_TEST(test_custom_module) {
    gb_module *m = gb_module_new(&scale_type, NULL, 5);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gb_module_seed(m), 5);
    scale_state *s = gb_module_state(m);
    s->scale = gb_module_add_weight(m, "scale", GB_F32, 0, NULL,
                                    (gb_initializer){.kind = GB_INIT_CONSTANT, .a = 3}, true);
    ck_assert_str_eq(gb_variable_name(s->scale), "scale/scale");
    gb_tensor *y = gb_module_call(m, gb_fill(GB_F32, GB_SHAPE(2), 2.0), false);
    ck_assert_double_eq(gb_get(y, 1), 6.0);
    int64_t dims[GB_MAX_RANK];
    ck_assert_int_eq(gb_module_output_shape(m, dims), 1);
    ck_assert_int_eq(dims[0], -1);
    /* Its state is zeroed and separate from other instances. */
    gb_module *m2 = gb_module_new(&scale_type, "other", 0);
    ck_assert_ptr_null(((scale_state *)gb_module_state(m2))->scale);
    ck_assert_uint_ne(gb_module_seed(m2), 0);
    gb_module_free(m);
    gb_module_free(m2);
    /* A type without a call function is refused. */
    static const gb_module_type broken = {.class_name = "Broken", .default_name = "broken"};
    ck_assert_ptr_null(gb_module_new(&broken, NULL, 0));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("nn_module");
    TCase *tc = tcase_create("module");
    tcase_add_checked_fixture(tc, nn_seeded_setup, scope_teardown);
    tcase_add_test(tc, test_auto_names_count_per_kind);
    tcase_add_test(tc, test_weight_names_follow_scopes);
    tcase_add_test(tc, test_errors_name_the_layer_scope);
    tcase_add_test(tc, test_bad_names_rejected);
    tcase_add_test(tc, test_lazy_build_shapes_and_params);
    tcase_add_test(tc, test_build_without_data);
    tcase_add_test(tc, test_sequential_variable_order);
    tcase_add_test(tc, test_freezing);
    tcase_add_test(tc, test_shared_layer_counted_once);
    tcase_add_test(tc, test_summary_table);
    tcase_add_test(tc, test_summary_columns_widen_for_long_names);
    tcase_add_test(tc, test_summary_before_build_is_an_error);
    tcase_add_test(tc, test_duplicate_layer_names);
    tcase_add_test(tc, test_add_null_layer_keeps_first_error);
    tcase_add_test(tc, test_cycles_and_non_models);
    tcase_add_test(tc, test_add_to_built_model_builds_new_layer);
    tcase_add_test(tc, test_custom_module);
    tcase_add_test(tc, test_custom_block_of_layers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
