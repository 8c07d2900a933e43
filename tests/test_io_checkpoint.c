/* test_io_checkpoint.c — checkpoints: a model, an optimizer's slots and
 * iteration count and a step variable round-trip bit for bit; each error
 * exactly (a missing tensor, an unexpected one, a shape mismatch with both
 * shapes, a flipped byte naming its tensor, a truncated file, a newer
 * format version), a failed restore changing nothing; no temporary file
 * left behind; ModelCheckpoint saving the epochs that improved. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "glassbox.h"
#include "test_util.h"

static char file_path[128];

static void dir_setup(void) {
    nn_seeded_setup();
    test_dir_create();
    snprintf(file_path, sizeof file_path, "%s/ckpt", test_dir());
}

static void dir_teardown(void) {
    test_dir_remove();
    scope_teardown();
}

static gb_module *mlp(int64_t hidden) {
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(hidden, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 2}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 3));
    return m;
}

/* One Adam step on random data, so the slots and iterations are non-trivial. */
static void step(gb_module *m, gb_optimizer *opt) {
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(8, 3), -1, 1, 5);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_reduce_mean(gb_square(gb_module_call(m, x, true)), GB_ALL_AXES, false);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m, &n);
    gb_tensor *grads[8];
    ck_assert(gb_tape_gradient_vars(tape, loss, vars, n, grads));
    ck_assert(gb_optimizer_apply_gradients(opt, grads, n, vars, n));
}

static gb_checkpoint *tracking(gb_module *m, gb_optimizer *opt) {
    gb_checkpoint *ck = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck, "model", m));
    if (opt) ck_assert(gb_checkpoint_track_optimizer(ck, "optimizer", opt));
    return ck;
}

static void assert_same_variables(gb_variable *const *a, gb_variable *const *b, int n) {
    for (int i = 0; i < n; i++) {
        gb_tensor *x = gb_variable_value(a[i]), *y = gb_variable_value(b[i]);
        ck_assert_int_eq(gb_size(x), gb_size(y));
        ck_assert_msg(memcmp(gb_data(x), gb_data(y), (size_t)gb_size(x) * 4) == 0, "%s differs",
                      gb_variable_name(a[i]));
    }
}

START_TEST(test_round_trip_bit_for_bit) {
    gb_module *a = mlp(4);
    gb_optimizer *oa = gb_adam(1e-2);
    step(a, oa);
    step(a, oa);
    gb_variable *counter = gb_variable_new("step", gb_scalar(GB_I64, 42), false);
    gb_checkpoint *ck = tracking(a, oa);
    ck_assert(gb_checkpoint_track_variable(ck, "step", counter));
    ck_assert(gb_checkpoint_write(ck, file_path));
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", file_path);
    ck_assert_int_ne(access(tmp, F_OK), 0);   /* renamed into place */

    gb_nn_clear_session();
    gb_module *b = mlp(4);   /* other seeds would do: the values come from the file */
    gb_optimizer *ob = gb_adam(1e-2);
    int n = 0;
    gb_variable *const *vb = gb_module_trainable_variables(b, &n);
    ck_assert(gb_optimizer_build(ob, vb, n));
    gb_variable *counter_b = gb_variable_new("step", gb_scalar(GB_I64, 0), false);
    gb_checkpoint *ck2 = tracking(b, ob);
    gb_checkpoint_track_variable(ck2, "step", counter_b);
    gb_restore_status st;
    ck_assert_msg(gb_checkpoint_restore(ck2, file_path, &st), "%s", gb_error_string());
    ck_assert(gb_restore_assert_consumed(&st));
    ck_assert_int_eq(st.restored, 4 + 8 + 1 + 1);   /* weights, Adam's m and v, iterations, step */
    ck_assert_int_eq(gb_optimizer_iterations(ob), 2);
    ck_assert_int_eq(gb_item(gb_variable_value(counter_b)), 42);
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    vb = gb_module_variables(b, &nb);
    assert_same_variables(va, vb, na);
    gb_variable *sa[16], *sb[16];
    ck_assert_int_eq(gb_optimizer_slot_variables(oa, sa, 16), 8);
    ck_assert_int_eq(gb_optimizer_slot_variables(ob, sb, 16), 8);
    assert_same_variables(sa, sb, 8);
    /* The next step is the same step. */
    step(a, oa);
    step(b, ob);
    assert_same_variables(gb_module_variables(a, &na), gb_module_variables(b, &nb), na);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_variable_free(counter), gb_variable_free(counter_b);
    gb_module_free(a), gb_module_free(b);
    gb_optimizer_free(oa), gb_optimizer_free(ob);
}
END_TEST

START_TEST(test_missing_and_unexpected) {
    gb_module *small = mlp(4);
    gb_checkpoint *ck = tracking(small, NULL);
    ck_assert(gb_checkpoint_write(ck, file_path));
    /* A bigger program: one more layer the file lacks. */
    gb_module *big = gb_sequential_new("m");
    gb_sequential_add(big, gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1, .name = "dense"}));
    gb_sequential_add(big, gb_dense_new(2, &(gb_dense_options){.seed = 2, .name = "dense_1"}));
    gb_sequential_add(big, gb_dense_new(2, &(gb_dense_options){.seed = 3, .name = "extra"}));
    gb_module_build(big, GB_F32, GB_SHAPE(-1, 3));
    gb_checkpoint *ck2 = tracking(big, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck2, file_path, &st));   /* expect_partial: fine */
    ck_assert_int_eq(st.restored, 4);
    ck_assert_int_eq(st.missing, 2);
    ck_assert(!gb_restore_assert_consumed(&st));
    check_error(GB_ERR_VALUE, "restore did not match: 2 tracked tensors not in the file (first: "
                              "'model/m/extra/kernel')");
    gb_clear_error();
    /* The other way: the file has tensors nothing claims. */
    gb_checkpoint *ck3 = tracking(big, NULL);
    ck_assert(gb_checkpoint_write(ck3, file_path));
    ck_assert(gb_checkpoint_restore(ck, file_path, &st));
    ck_assert_int_eq(st.unexpected, 2);
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error(GB_ERR_VALUE, "2 tensors of the file unused (first: 'model/m/extra/kernel')");
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2), gb_checkpoint_free(ck3);
    gb_module_free(small), gb_module_free(big);
}
END_TEST

START_TEST(test_shape_mismatch_changes_nothing) {
    gb_module *a = mlp(4);
    gb_checkpoint *ck = tracking(a, NULL);
    ck_assert(gb_checkpoint_write(ck, file_path));
    gb_nn_clear_session();
    gb_module *b = mlp(5);
    gb_tensor *before = gb_tensor_from(GB_F32, gb_data(gb_variable_value(gb_module_variables(b, &(int){0})[0])),
                                       GB_SHAPE(3, 5));
    gb_checkpoint *ck2 = tracking(b, NULL);
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck2, file_path, &st));
    check_error(GB_ERR_SHAPE, "tensor 'model/m/dense/kernel' is float32[3,4] in the file but "
                              "float32[3,5] in the program");
    gb_clear_error();
    gb_tensor *after = gb_variable_value(gb_module_variables(b, &(int){0})[0]);
    ck_assert(memcmp(gb_data(before), gb_data(after), 15 * 4) == 0);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_module_free(a), gb_module_free(b);
}
END_TEST

/* Reads the file, lets edit() change it, writes it back. */
static void edit_file(void (*edit)(unsigned char *d, long *n)) {
    FILE *f = fopen(file_path, "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char d[1 << 16];
    long n = (long)fread(d, 1, sizeof d, f);
    fclose(f);
    edit(d, &n);
    f = fopen(file_path, "wb");
    fwrite(d, 1, (size_t)n, f);
    fclose(f);
}

static void flip_data_byte(unsigned char *d, long *n) {
    (void)n;
    d[64 + 5] ^= 0x10;   /* inside the first tensor, which starts at byte 64 */
}
static void truncate_half(unsigned char *d, long *n) {
    (void)d;
    *n /= 2;
}
static void newer_version(unsigned char *d, long *n) {
    (void)n;
    d[8] = 2;
    uLong c = crc32(crc32(0L, Z_NULL, 0), d, 36);
    for (int i = 0; i < 4; i++) d[36 + i] = (unsigned char)(c >> (8 * i));
}

START_TEST(test_damaged_files_are_clear_errors) {
    static const struct {
        void (*edit)(unsigned char *, long *);
        const char *error;
    } cases[] = {
        {flip_data_byte, "tensor 'model/m/dense/kernel' is corrupt (CRC mismatch)"},
        {truncate_half, "truncated: the index ends at byte"},
        {newer_version, "written by a newer glassbox (format version 2; this build reads up to 1)"},
    };
    gb_module *m = mlp(4);
    gb_checkpoint *ck = tracking(m, NULL);
    gb_tensor *before = gb_tensor_from(GB_F32, gb_data(gb_variable_value(gb_module_variables(m, &(int){0})[0])),
                                       GB_SHAPE(3, 4));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_assert(gb_checkpoint_write(ck, file_path));
        edit_file(cases[i].edit);
        gb_restore_status st;
        ck_assert_msg(!gb_checkpoint_restore(ck, file_path, &st), "case %zu restored", i);
        check_error(GB_ERR_IO, cases[i].error);
        gb_clear_error();
        gb_tensor *after = gb_variable_value(gb_module_variables(m, &(int){0})[0]);
        ck_assert(memcmp(gb_data(before), gb_data(after), 12 * 4) == 0);
    }
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck, "/nonexistent/ckpt", &st));
    assert_error(GB_ERR_IO, "/nonexistent/ckpt: cannot open the checkpoint");
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* ModelCheckpoint with save_best_only on the training loss: a file for
 * each epoch that improved, the last one restoring the final weights. */
START_TEST(test_model_checkpoint_callback) {
    gb_module *m = mlp(4);
    gb_optimizer *opt = gb_adam(1e-2);
    gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                              .loss = {.kind = GB_LOSS_MEAN_SQUARED_ERROR}});
    char pattern[160];
    snprintf(pattern, sizeof pattern, "%s/epoch-{epoch}", test_dir());
    gb_callback *mc = gb_model_checkpoint(&(gb_model_checkpoint_options){
        .filepath = pattern, .monitor = "loss", .save_best_only = true, .save_weights_only = true});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.verbose = 0;
    o.callbacks = &mc;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(m, gb_random_uniform(GB_F32, GB_SHAPE(16, 3), -1, 1, 1),
                                 gb_zeros(GB_F32, GB_SHAPE(16, 2)), &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    for (int e = 1; e <= 3; e++) {
        char p[200];
        snprintf(p, sizeof p, "%s/epoch-%d", test_dir(), e);
        ck_assert_msg(access(p, F_OK) == 0, "%s missing", p);
    }
    char last[200];
    snprintf(last, sizeof last, "%s/epoch-3", test_dir());
    ck_assert_str_eq(gb_model_checkpoint_last_path(mc), last);
    gb_nn_clear_session();
    gb_module *back = mlp(4);
    gb_checkpoint *ck = tracking(back, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck, last, &st));
    ck_assert_int_eq(st.unexpected, 9);   /* the optimizer's iterations and 8 slots: not tracked here */
    int n = 0;
    assert_same_variables(gb_module_variables(m, &n), gb_module_variables(back, &n), n);
    gb_checkpoint_free(ck);
    gb_history_free(h);
    gb_callback_free(mc);
    gb_module_free(m), gb_module_free(back);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("io_checkpoint");
    TCase *tc = tcase_create("checkpoint");
    tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
    tcase_add_test(tc, test_round_trip_bit_for_bit);
    tcase_add_test(tc, test_missing_and_unexpected);
    tcase_add_test(tc, test_shape_mismatch_changes_nothing);
    tcase_add_test(tc, test_damaged_files_are_clear_errors);
    tcase_add_test(tc, test_model_checkpoint_callback);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
