/* test_io_checkpoint.c — checkpoints: a model, an optimizer's slots and
 * iteration count and a step variable round-trip bit for bit; each error
 * with its whole message (a missing tensor, an unexpected one, a shape
 * mismatch with both shapes, a dtype mismatch, a flipped byte naming its
 * tensor, a truncated file, a newer format version), a failed restore
 * changing nothing; no temporary file left behind; ModelCheckpoint saving
 * the epochs that improved. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "glassbox.h"
#include "test_util.h"

/* Two Dense layers (hidden units, then 2), not built: its weights do not
 * exist until its first call. */
static gb_module *unbuilt_mlp(int64_t hidden, uint64_t seed) {
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(hidden, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = seed}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = seed + 1}));
    return m;
}

static gb_module *mlp(int64_t hidden) {
    gb_module *m = unbuilt_mlp(hidden, 1);
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

/* mlp(4) written to ckpt_path() through *ck, then a fresh session (the
 * next model's layers are named as this one's). */
static gb_module *saved_mlp(gb_checkpoint **ck) {
    gb_module *a = mlp(4);
    *ck = tracking(a, NULL);
    ck_assert(gb_checkpoint_write(*ck, ckpt_path()));
    gb_nn_clear_session();
    return a;
}

static void assert_same_variables(gb_variable *const *a, gb_variable *const *b, int n) {
    for (int i = 0; i < n; i++) {
        gb_tensor *x = gb_variable_value(a[i]), *y = gb_variable_value(b[i]);
        ck_assert_int_eq(gb_size(x), gb_size(y));
        ck_assert_msg(memcmp(gb_data(x), gb_data(y), (size_t)gb_size(x) * 4) == 0, "%s differs",
                      gb_variable_name(a[i]));
    }
}

/* a's variables and b's first ones hold the same bytes (b may have more:
 * a layer a lacks). */
static void assert_same_weights(gb_module *a, gb_module *b) {
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    gb_variable *const *vb = gb_module_variables(b, &nb);
    ck_assert_int_gt(na, 0);
    ck_assert_int_ge(nb, na);
    assert_same_variables(va, vb, na);
}

START_TEST(test_round_trip_bit_for_bit) {
    gb_module *a = mlp(4);
    gb_optimizer *oa = gb_adam(1e-2);
    step(a, oa);
    step(a, oa);
    gb_variable *counter = gb_variable_new("step", gb_scalar(GB_I64, 42), false);
    gb_checkpoint *ck = tracking(a, oa);
    ck_assert(gb_checkpoint_track_variable(ck, "step", counter));
    ck_assert(gb_checkpoint_write(ck, ckpt_path()));
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", ckpt_path());
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
    ck_assert_msg(gb_checkpoint_restore(ck2, ckpt_path(), &st), "%s", gb_error_string());
    ck_assert(gb_restore_assert_consumed(&st));
    ck_assert_int_eq(st.restored, 4 + 8 + 1 + 1);   /* weights, Adam's m and v, iterations, step */
    ck_assert_int_eq(gb_optimizer_iterations(ob), 2);
    ck_assert_int_eq(gb_item(gb_variable_value(counter_b)), 42);
    assert_same_weights(a, b);
    gb_variable *sa[16], *sb[16];
    ck_assert_int_eq(gb_optimizer_slot_variables(oa, sa, 16), 8);
    ck_assert_int_eq(gb_optimizer_slot_variables(ob, sb, 16), 8);
    assert_same_variables(sa, sb, 8);
    /* The next step is the same step. */
    step(a, oa);
    step(b, ob);
    assert_same_weights(a, b);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_variable_free(counter), gb_variable_free(counter_b);
    gb_module_free(a), gb_module_free(b);
    gb_optimizer_free(oa), gb_optimizer_free(ob);
}
END_TEST

/* The two layers of mlp() and a third the file lacks. */
static gb_module *mlp_with_extra(void) {
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1, .name = "dense"}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 2, .name = "dense_1"}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 3, .name = "extra"}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 3));
    return m;
}

START_TEST(test_missing_and_unexpected) {
    gb_module *small = mlp(4);
    gb_checkpoint *ck = tracking(small, NULL);
    ck_assert(gb_checkpoint_write(ck, ckpt_path()));
    /* A bigger program: one more layer the file lacks. */
    gb_module *big = mlp_with_extra();
    gb_checkpoint *ck2 = tracking(big, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck2, ckpt_path(), &st));   /* expect_partial: fine */
    ck_assert_int_eq(st.restored, 4);
    ck_assert_int_eq(st.missing, 2);
    ck_assert_int_eq(st.unexpected, 0);
    ck_assert_str_eq(st.first_missing, "model/m/extra/kernel");
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 2 tracked tensors not in the file (first: "
                      "'model/m/extra/kernel')", ckpt_path());
    /* The other way: the file has tensors nothing claims. */
    gb_checkpoint *ck3 = tracking(big, NULL);
    ck_assert(gb_checkpoint_write(ck3, ckpt_path()));
    ck_assert(gb_checkpoint_restore(ck, ckpt_path(), &st));
    ck_assert_int_eq(st.restored, 4);
    ck_assert_int_eq(st.missing, 0);
    ck_assert_int_eq(st.unexpected, 2);
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 2 tensors of the file unused (first: "
                      "'model/m/extra/kernel')", ckpt_path());
    /* Both at once: a step variable the file lacks, a layer the program lacks. */
    gb_variable *counter = gb_variable_new("step", gb_scalar(GB_I64, 0), false);
    ck_assert(gb_checkpoint_track_variable(ck, "step", counter));
    ck_assert(gb_checkpoint_restore(ck, ckpt_path(), &st));
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 1 tracked tensor not in the file (first: "
                      "'step'); 2 tensors of the file unused (first: 'model/m/extra/kernel')",
                      ckpt_path());
    /* A matching pair passes. */
    ck_assert(gb_checkpoint_restore(ck3, ckpt_path(), &st));
    ck_assert(gb_restore_assert_consumed(&st));
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2), gb_checkpoint_free(ck3);
    gb_variable_free(counter);
    gb_module_free(small), gb_module_free(big);
}
END_TEST

/* The first kernel's values, copied. */
static gb_tensor *first_kernel(gb_module *m) {
    gb_variable *k = gb_module_variables(m, &(int){0})[0];
    gb_tensor *v = gb_variable_value(k);
    return gb_tensor_from(gb_tensor_dtype(v), gb_data(v), gb_rank(v), gb_shape(v));
}

static void assert_unchanged(gb_tensor *before, gb_module *m) {
    gb_tensor *after = gb_variable_value(gb_module_variables(m, &(int){0})[0]);
    ck_assert_int_eq(gb_nbytes(before), gb_nbytes(after));
    ck_assert(memcmp(gb_data(before), gb_data(after), gb_nbytes(before)) == 0);
}

START_TEST(test_shape_mismatch_changes_nothing) {
    gb_checkpoint *ck;
    gb_module *a = saved_mlp(&ck);
    gb_module *b = mlp(5);
    gb_tensor *before = first_kernel(b);
    gb_checkpoint *ck2 = tracking(b, NULL);
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck2, ckpt_path(), &st));
    assert_error_text(GB_ERR_SHAPE,
                      "%s: tensor 'model/m/dense/kernel' is float32[3,4] in the file but "
                      "float32[3,5] in the program", ckpt_path());
    assert_unchanged(before, b);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_module_free(a), gb_module_free(b);
}
END_TEST

START_TEST(test_dtype_mismatch_changes_nothing) {
    gb_checkpoint *ck;
    gb_module *a = saved_mlp(&ck);
    gb_module *b = gb_sequential_new("m");
    gb_sequential_add(b, gb_dense_new(4, &(gb_dense_options){.seed = 1}));
    gb_sequential_add(b, gb_dense_new(2, &(gb_dense_options){.seed = 2}));
    ck_assert(gb_module_build(b, GB_F64, GB_SHAPE(-1, 3)));
    gb_tensor *before = first_kernel(b);
    gb_checkpoint *ck2 = tracking(b, NULL);
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck2, ckpt_path(), &st));
    assert_error_text(GB_ERR_DTYPE,
                      "%s: tensor 'model/m/dense/kernel' is float32[3,4] in the file but "
                      "float64[3,4] in the program", ckpt_path());
    assert_unchanged(before, b);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_module_free(a), gb_module_free(b);
}
END_TEST

/* The size of the file before edit_file changed it, and where its index
 * ended (the header's index offset + bytes). */
static long file_bytes;
static uint64_t index_end;

static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Reads the file, lets edit() change it, writes it back. */
static void edit_file(void (*edit)(unsigned char *d, long *n)) {
    FILE *f = fopen(ckpt_path(), "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char d[1 << 16];
    long n = (long)fread(d, 1, sizeof d, f);
    fclose(f);
    ck_assert_int_lt(n, (long)sizeof d);
    file_bytes = n;
    index_end = get_u64(d + 16) + get_u64(d + 24);
    edit(d, &n);
    f = fopen(ckpt_path(), "wb");
    ck_assert_int_eq(fwrite(d, 1, (size_t)n, f), (size_t)n);
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
static void truncate_in_header(unsigned char *d, long *n) {
    (void)d;
    *n = 20;
}
static void newer_version(unsigned char *d, long *n) {
    (void)n;
    d[8] = 2;
    uLong c = crc32(crc32(0L, Z_NULL, 0), d, 36);
    for (int i = 0; i < 4; i++) d[36 + i] = (unsigned char)(c >> (8 * i));
}

/* Writes m's checkpoint, damages it with edit and expects the restore to
 * fail. Returns m's first kernel from before, for assert_unchanged once
 * the caller has checked (and cleared) the error. */
static gb_tensor *restore_damaged(gb_checkpoint *ck, gb_module *m, void (*edit)(unsigned char *, long *)) {
    gb_tensor *before = first_kernel(m);
    ck_assert(gb_checkpoint_write(ck, ckpt_path()));
    edit_file(edit);
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck, ckpt_path(), &st));
    return before;
}

START_TEST(test_damaged_files_are_clear_errors) {
    gb_module *m = mlp(4);
    gb_checkpoint *ck = tracking(m, NULL);
    gb_tensor *before = restore_damaged(ck, m, flip_data_byte);
    assert_error_text(GB_ERR_IO, "%s: tensor 'model/m/dense/kernel' is corrupt (CRC mismatch)",
                      ckpt_path());
    assert_unchanged(before, m);
    before = restore_damaged(ck, m, truncate_half);
    assert_error_text(GB_ERR_IO, "%s: truncated: the file has %ld bytes but its index ends at byte %ld",
                      ckpt_path(), file_bytes / 2, file_bytes);
    ck_assert_int_eq(index_end, file_bytes);   /* the index is the file's end */
    assert_unchanged(before, m);
    before = restore_damaged(ck, m, truncate_in_header);
    assert_error_text(GB_ERR_IO,
                      "%s: truncated: the file has 20 bytes, fewer than a checkpoint header's 40",
                      ckpt_path());
    assert_unchanged(before, m);
    before = restore_damaged(ck, m, newer_version);
    assert_error_text(GB_ERR_IO,
                      "%s: written by a newer glassbox (format version 2; this build reads up to 1)",
                      ckpt_path());
    assert_unchanged(before, m);
    gb_restore_status st;
    ck_assert(!gb_checkpoint_restore(ck, "/nonexistent/ckpt", &st));
    assert_error_text(GB_ERR_IO, "/nonexistent/ckpt: cannot open: No such file or directory");
    /* A FIFO is refused at once, never waited on. */
    const char *fifo = in_test_dir("fifo");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert(!gb_checkpoint_restore(ck, fifo, &st));
    assert_error_text(GB_ERR_IO, "%s: is a FIFO, not a checkpoint", fifo);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* The largest resident set of the process so far, in KiB. */
static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A file that is no checkpoint is refused by its first 40 bytes: a 3 GiB
 * (sparse) file once cost 3 GiB of memory and 22 s before "bad magic".
 * The peak resident set says it was never read whole; a model file, the
 * same container, likewise. */
START_TEST(test_big_files_refused_by_their_header) {
    const char *big = in_test_dir("big.ckpt");
    int fd = open(big, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)3 << 30), 0);
    close(fd);
    long before = peak_rss_kib();
    gb_checkpoint_entry *entries = NULL;
    ck_assert_int_eq(gb_checkpoint_list(big, &entries), -1);
    assert_error_text(GB_ERR_IO, "%s: not a glassbox checkpoint (bad magic)", big);
    ck_assert_ptr_null(gb_model_load(big));
    assert_error_text(GB_ERR_IO, "%s: not a glassbox checkpoint (bad magic)", big);
    ck_assert_msg(peak_rss_kib() - before < 64 * 1024, "peak memory grew by %ld KiB",
                  peak_rss_kib() - before);
    unlink(big);
}
END_TEST

/* ---- delayed restoration ---------------------------------------------------------------- */

static int forward(void *user, gb_tensor *const *in, int nin, const gb_value *statics, int nstatics,
                   gb_tensor **out) {
    (void)nin, (void)statics, (void)nstatics;
    out[0] = gb_module_call(user, in[0], false);
    return out[0] ? 1 : -1;
}

static void assert_same_tensors(gb_tensor *a, gb_tensor *b) {
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(gb_nbytes(a), gb_nbytes(b));
    ck_assert(memcmp(gb_data(a), gb_data(b), gb_nbytes(a)) == 0);
}

static void assert_counts(const gb_restore_status *st, int restored, int missing, int unexpected,
                          int pending) {
    ck_assert_int_eq(st->restored, restored);
    ck_assert_int_eq(st->missing, missing);
    ck_assert_int_eq(st->unexpected, unexpected);
    ck_assert_int_eq(st->pending, pending);
}

/* A restore into a model never called keeps the values (pending); its
 * first call, eager or traced in a function, builds the layers with the
 * saved weights bit for bit, and the status then says all were restored. */
static void restore_then_first_call(bool traced) {
    gb_nn_clear_session();
    gb_module *a = mlp(4);
    gb_checkpoint *ck = tracking(a, NULL);
    ck_assert(gb_checkpoint_write(ck, ckpt_path()));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(5, 3), -1, 1, 9);
    gb_tensor *want = gb_module_call(a, x, false);

    gb_nn_clear_session();
    gb_module *b = unbuilt_mlp(4, 7);   /* other seeds: built alone, its weights would differ */
    gb_checkpoint *ck2 = tracking(b, NULL);
    gb_restore_status st;
    ck_assert_msg(gb_checkpoint_restore(ck2, ckpt_path(), &st), "%s", gb_error_string());
    assert_counts(&st, 0, 0, 0, 4);
    ck_assert_str_eq(st.first_pending, "model/m/dense/kernel");
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 4 tensors of the file waiting for layers not "
                      "built yet (first: 'model/m/dense/kernel'; build them, then check "
                      "gb_checkpoint_restore_status)", ckpt_path());
    ck_assert_int_eq(gb_module_count_params(b), 0);   /* nothing built by the restore */

    gb_tensor *got = NULL;
    gb_function *f = traced ? gb_function_new("forward", forward, &(gb_function_options){.user = b}) : NULL;
    if (traced) ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &got), 1);
    else got = gb_module_call(b, x, false);
    ck_assert_msg(got != NULL, "%s", gb_error_string());
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    gb_variable *const *vb = gb_module_variables(b, &nb);
    ck_assert_int_eq(na, 4);
    ck_assert_int_eq(nb, 4);
    assert_same_variables(va, vb, na);
    assert_same_tensors(want, got);
    ck_assert(gb_checkpoint_restore_status(ck2, &st));
    assert_counts(&st, 4, 0, 0, 0);
    ck_assert_str_eq(st.first_pending, "");
    ck_assert(gb_restore_assert_consumed(&st));
    gb_function_free(f);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_module_free(a), gb_module_free(b);
}

START_TEST(test_delayed_restore_at_first_call) { restore_then_first_call(false); }
END_TEST

START_TEST(test_delayed_restore_in_a_traced_first_call) { restore_then_first_call(true); }
END_TEST

/* A waiting value that does not fit the weight its build makes: that
 * build (the first call) fails naming the path, both shapes or dtypes,
 * and the layer. */
START_TEST(test_delayed_restore_mismatch_fails_the_build) {
    gb_checkpoint *ck;
    gb_module *a = saved_mlp(&ck);
    gb_module *wide = unbuilt_mlp(5, 7);
    gb_checkpoint *ck2 = tracking(wide, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck2, ckpt_path(), &st));
    ck_assert_int_eq(st.pending, 4);
    ck_assert_ptr_null(gb_module_call(wide, gb_zeros(GB_F32, GB_SHAPE(1, 3)), false));
    assert_error_text(GB_ERR_SHAPE,
                      "%s: tensor 'model/m/dense/kernel' is float32[3,4] in the file but "
                      "float32[3,5] in the program (delayed: layer 'dense' was built after the "
                      "restore)", ckpt_path());
    gb_nn_clear_session();
    gb_module *f64 = unbuilt_mlp(4, 7);
    gb_checkpoint *ck3 = tracking(f64, NULL);
    ck_assert(gb_checkpoint_restore(ck3, ckpt_path(), &st));
    ck_assert(!gb_module_build(f64, GB_F64, GB_SHAPE(-1, 3)));
    assert_error_text(GB_ERR_DTYPE,
                      "%s: tensor 'model/m/dense/kernel' is float32[3,4] in the file but "
                      "float64[3,4] in the program (delayed: layer 'dense' was built after the "
                      "restore)", ckpt_path());
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2), gb_checkpoint_free(ck3);
    gb_module_free(a), gb_module_free(wide), gb_module_free(f64);
}
END_TEST

/* assert_consumed with values pending: it fails until the build; then
 * the status counts what the build made without a value (missing) and
 * the values no weight claimed (unexpected), as for a built model. */
START_TEST(test_delayed_restore_status_after_the_build) {
    /* The program has a layer the file lacks. */
    gb_module *small = mlp(4);
    gb_checkpoint *ck = tracking(small, NULL);
    ck_assert(gb_checkpoint_write(ck, ckpt_path()));
    gb_nn_clear_session();
    gb_module *big = unbuilt_mlp(4, 7);
    ck_assert(gb_sequential_add(big, gb_dense_new(2, &(gb_dense_options){.name = "extra"})));
    gb_checkpoint *ck2 = tracking(big, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck2, ckpt_path(), &st));
    assert_counts(&st, 0, 0, 0, 4);
    ck_assert(gb_module_build(big, GB_F32, GB_SHAPE(-1, 3)));
    ck_assert(gb_checkpoint_restore_status(ck2, &st));
    assert_counts(&st, 4, 2, 0, 0);
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 2 tracked tensors not in the file (first: "
                      "'model/m/extra/kernel')", ckpt_path());
    assert_same_weights(small, big);

    /* The file has a layer the program lacks. */
    gb_nn_clear_session();
    gb_module *big_saved = mlp_with_extra();
    gb_checkpoint *ck3 = tracking(big_saved, NULL);
    ck_assert(gb_checkpoint_write(ck3, ckpt_path()));
    gb_nn_clear_session();
    gb_module *two = unbuilt_mlp(4, 7);
    gb_checkpoint *ck4 = tracking(two, NULL);
    ck_assert(gb_checkpoint_restore(ck4, ckpt_path(), &st));
    assert_counts(&st, 0, 0, 0, 6);
    ck_assert(gb_module_build(two, GB_F32, GB_SHAPE(-1, 3)));
    ck_assert(gb_checkpoint_restore_status(ck4, &st));
    assert_counts(&st, 4, 0, 2, 0);
    ck_assert_str_eq(st.first_unexpected, "model/m/extra/kernel");
    ck_assert(!gb_restore_assert_consumed(&st));
    assert_error_text(GB_ERR_VALUE,
                      "%s: restore did not match: 2 tensors of the file unused (first: "
                      "'model/m/extra/kernel')", ckpt_path());
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2), gb_checkpoint_free(ck3), gb_checkpoint_free(ck4);
    gb_module_free(small), gb_module_free(big), gb_module_free(big_saved), gb_module_free(two);
}
END_TEST

/* Two checkpoints restored into one model not built: the later restore's
 * values are the ones its build keeps, as when both assign at once. */
START_TEST(test_delayed_restore_later_restore_wins) {
    char second[160];
    snprintf(second, sizeof second, "%s/second", test_dir());
    gb_checkpoint *ck;
    gb_module *a = saved_mlp(&ck);
    gb_module *a2 = unbuilt_mlp(4, 5);
    ck_assert(gb_module_build(a2, GB_F32, GB_SHAPE(-1, 3)));
    gb_checkpoint *ck2 = tracking(a2, NULL);
    ck_assert(gb_checkpoint_write(ck2, second));

    gb_nn_clear_session();
    gb_module *b = unbuilt_mlp(4, 7);
    gb_checkpoint *first_ck = tracking(b, NULL), *later_ck = tracking(b, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(first_ck, ckpt_path(), &st));
    ck_assert(gb_checkpoint_restore(later_ck, second, &st));
    ck_assert(gb_module_build(b, GB_F32, GB_SHAPE(-1, 3)));
    assert_same_weights(a2, b);
    ck_assert(gb_checkpoint_restore_status(first_ck, &st));
    assert_counts(&st, 4, 0, 0, 0);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2), gb_checkpoint_free(first_ck), gb_checkpoint_free(later_ck);
    gb_module_free(a), gb_module_free(a2), gb_module_free(b);
}
END_TEST

/* What waits belongs to the checkpoint: freeing it (or a new restore)
 * drops the values, and a model freed before its build is kept alive by
 * the checkpoint until then, not used after its free. */
START_TEST(test_delayed_restore_ends_with_the_checkpoint) {
    gb_checkpoint *ck;
    gb_module *a = saved_mlp(&ck);
    gb_module *b = unbuilt_mlp(4, 7);
    gb_checkpoint *ck2 = tracking(b, NULL);
    gb_restore_status st;
    ck_assert(gb_checkpoint_restore(ck2, ckpt_path(), &st));
    gb_checkpoint_free(ck2);
    ck_assert(gb_module_build(b, GB_F32, GB_SHAPE(-1, 3)));
    int n = 0;
    gb_variable *const *vb = gb_module_variables(b, &n);
    ck_assert_int_eq(n, 4);
    ck_assert(memcmp(gb_data(gb_variable_value(vb[0])), gb_data(gb_variable_value(gb_module_variables(a, &n)[0])),
                     12 * 4) != 0);   /* its own initial weights */
    /* Freed while its values wait, then another model built: no use after free. */
    gb_nn_clear_session();
    gb_module *c = unbuilt_mlp(4, 7);
    gb_checkpoint *ck3 = tracking(c, NULL);
    ck_assert(gb_checkpoint_restore(ck3, ckpt_path(), &st));
    gb_module_free(c);
    gb_nn_clear_session();
    gb_module *d = mlp(4);
    ck_assert(gb_checkpoint_restore_status(ck3, &st));
    ck_assert_int_eq(st.pending, 4);
    gb_checkpoint_free(ck3);
    gb_checkpoint_free(ck);
    gb_module_free(a), gb_module_free(b), gb_module_free(d);
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
    assert_same_weights(m, back);
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
    tcase_add_checked_fixture(tc, ckpt_dir_setup, ckpt_dir_teardown);
    tcase_add_test(tc, test_round_trip_bit_for_bit);
    tcase_add_test(tc, test_missing_and_unexpected);
    tcase_add_test(tc, test_shape_mismatch_changes_nothing);
    tcase_add_test(tc, test_dtype_mismatch_changes_nothing);
    tcase_add_test(tc, test_damaged_files_are_clear_errors);
    tcase_add_test(tc, test_big_files_refused_by_their_header);
    tcase_add_test(tc, test_delayed_restore_at_first_call);
    tcase_add_test(tc, test_delayed_restore_in_a_traced_first_call);
    tcase_add_test(tc, test_delayed_restore_mismatch_fails_the_build);
    tcase_add_test(tc, test_delayed_restore_status_after_the_build);
    tcase_add_test(tc, test_delayed_restore_later_restore_wins);
    tcase_add_test(tc, test_delayed_restore_ends_with_the_checkpoint);
    tcase_add_test(tc, test_model_checkpoint_callback);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
