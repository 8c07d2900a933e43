/* test_io_checkpoint_manager.c — CheckpointManager: numbered saves, the
 * last max_to_keep kept and the rest deleted, one kept for good every N
 * hours of an injected clock (also across a manager reopened on the
 * directory), the state file's exact text, restore_or_initialize (also
 * into a model not built yet), and every refusal with its whole message:
 * bad options, damaged state files (file and line), files listed but
 * missing, temporary files of killed saves removed. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glassbox.h"
#include "test_util.h"

/* The injected clock: seconds since the epoch, moved by the tests. */
static double clock_now;
static double fake_clock(void *user) {
    (void)user;
    return clock_now;
}

enum { T0 = 1700000000 };   /* 2023-11-14 22:13:20 UTC */

static void dir_setup(void) {
    nn_dir_setup();
    clock_now = T0;
}

static gb_module *model(uint64_t seed) {
    gb_module *m = gb_sequential_new("m");
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = seed}));
    return m;
}

static gb_checkpoint *tracking(gb_module *m) {
    gb_checkpoint *ck = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck, "model", m));
    return ck;
}

static gb_checkpoint_manager *manager(gb_checkpoint *ck, int max_to_keep, double hours) {
    gb_checkpoint_manager *mgr = gb_checkpoint_manager_new(
        ck, test_dir(), &(gb_checkpoint_manager_options){.max_to_keep = max_to_keep,
                                                         .keep_checkpoint_every_n_hours = hours,
                                                         .now = fake_clock});
    ck_assert_msg(mgr != NULL, "%s", gb_error_string());
    return mgr;
}

/* "<test dir>/<name>" in a rotating static buffer (four live at once). */
/* The directory's file names, sorted, space-separated. */
static const char *listing(void) {
    static char out[1024];
    struct dirent **names;
    int n = scandir(test_dir(), &names, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            if (out[0]) strcat(out, " ");
            strcat(out, names[i]->d_name);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

static const char *read_text(const char *path) {
    static char text[4096];
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static void write_bytes(const char *path, const char *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *path, const char *text) { write_bytes(path, text, strlen(text)); }

/* The comment that opens every state file. */
#define STATE_HEADER                                                                         \
    "# glassbox CheckpointManager state: the checkpoints kept in this directory,\n"          \
    "# oldest first. Written at each save (atomically); read when a manager\n"               \
    "# opens the directory. Times: seconds since the epoch ('#' starts a comment).\n"

/* The paths the manager keeps, as "ckpt-3 ckpt-4" (names only). */
static const char *kept(const gb_checkpoint_manager *mgr) {
    static char out[512];
    const char *paths[16];
    int n = gb_checkpoint_manager_checkpoints(mgr, paths, 16);
    ck_assert_int_le(n, 16);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i) strcat(out, " ");
        strcat(out, strrchr(paths[i], '/') + 1);
    }
    return out;
}

/* Saves steps first..last, the clock moving `every` seconds before each. */
static void save_steps(gb_checkpoint_manager *mgr, int first, int last, double every) {
    for (int s = first; s <= last; s++) {
        clock_now += every;
        const char *path = gb_checkpoint_manager_save(mgr, s);
        ck_assert_msg(path != NULL, "%s", gb_error_string());
        char name[32];
        snprintf(name, sizeof name, "ckpt-%d", s);
        ck_assert_str_eq(path, in_test_dir(name));
        ck_assert_str_eq(gb_checkpoint_manager_latest(mgr), path);
    }
}

START_TEST(test_keeps_the_last_max_to_keep) {
    gb_module *m = model(1);
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    gb_checkpoint *ck = tracking(m);
    gb_checkpoint_manager *mgr = manager(ck, 3, 0);
    ck_assert_ptr_null(gb_checkpoint_manager_latest(mgr));
    ck_assert_int_eq(gb_checkpoint_manager_checkpoints(mgr, NULL, 0), 0);
    save_steps(mgr, 1, 5, 60);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-4 ckpt-5");
    ck_assert_str_eq(listing(), "checkpoint ckpt-3 ckpt-4 ckpt-5");
    ck_assert_str_eq(read_text(in_test_dir("checkpoint")),
                     STATE_HEADER
                     "format: 1\n"
                     "latest: ckpt-5\n"
                     "last_preserved_time: 1700000000.000   # 2023-11-14 22:13:20 UTC\n"
                     "checkpoint: ckpt-3 step 3 time 1700000180.000   # 2023-11-14 22:16:20 UTC\n"
                     "checkpoint: ckpt-4 step 4 time 1700000240.000   # 2023-11-14 22:17:20 UTC\n"
                     "checkpoint: ckpt-5 step 5 time 1700000300.000   # 2023-11-14 22:18:20 UTC\n");
    /* Saving a step again replaces it and makes it the latest. */
    save_steps(mgr, 4, 4, 60);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-5 ckpt-4");
    gb_checkpoint_manager_free(mgr);
    /* max_to_keep 0 keeps everything. */
    mgr = manager(ck, 0, 0);
    save_steps(mgr, 6, 9, 60);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-5 ckpt-4 ckpt-6 ckpt-7 ckpt-8 ckpt-9");
    ck_assert_str_eq(listing(), "checkpoint ckpt-3 ckpt-4 ckpt-5 ckpt-6 ckpt-7 ckpt-8 ckpt-9");
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* max_to_keep 2, one kept every hour, a save every 20 minutes: of those
 * rotated out, the first at least an hour after the last one kept (the
 * manager's creation at first) stays for good — TensorFlow's rule, worked
 * by hand: steps 3 and 6 preserved, 1 2 4 5 7 8 deleted. A manager opened
 * later on the directory goes on from the state file's last preserved
 * time: step 9 (an hour after 6) is preserved next. */
START_TEST(test_keeps_one_every_n_hours) {
    gb_module *m = model(1);
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    gb_checkpoint *ck = tracking(m);
    gb_checkpoint_manager *mgr = manager(ck, 2, 1.0);
    save_steps(mgr, 1, 10, 1200);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-6 ckpt-9 ckpt-10");
    ck_assert_str_eq(listing(), "checkpoint ckpt-10 ckpt-3 ckpt-6 ckpt-9");
    ck_assert_str_eq(read_text(in_test_dir("checkpoint")),
                     STATE_HEADER
                     "format: 1\n"
                     "latest: ckpt-10\n"
                     "last_preserved_time: 1700007200.000   # 2023-11-15 00:13:20 UTC\n"
                     "checkpoint: ckpt-3 step 3 time 1700003600.000 preserved   # 2023-11-14 23:13:20 UTC\n"
                     "checkpoint: ckpt-6 step 6 time 1700007200.000 preserved   # 2023-11-15 00:13:20 UTC\n"
                     "checkpoint: ckpt-9 step 9 time 1700010800.000   # 2023-11-15 01:13:20 UTC\n"
                     "checkpoint: ckpt-10 step 10 time 1700012000.000   # 2023-11-15 01:33:20 UTC\n");
    gb_checkpoint_manager_free(mgr);

    clock_now += 3600 * 24;   /* a day later: the state file's time counts, not the new clock */
    mgr = manager(ck, 2, 1.0);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-6 ckpt-9 ckpt-10");
    ck_assert_str_eq(gb_checkpoint_manager_latest(mgr), in_test_dir("ckpt-10"));
    clock_now = T0 + 13200;
    save_steps(mgr, 11, 11, 0);
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-6 ckpt-9 ckpt-10 ckpt-11");
    clock_now = T0 + 14400;
    save_steps(mgr, 12, 12, 0);   /* 10 is 20 minutes after 9: deleted */
    ck_assert_str_eq(kept(mgr), "ckpt-3 ckpt-6 ckpt-9 ckpt-11 ckpt-12");
    ck_assert_str_eq(listing(), "checkpoint ckpt-11 ckpt-12 ckpt-3 ckpt-6 ckpt-9");
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

static void assert_same_weights(gb_module *a, gb_module *b) {
    int na = 0, nb = 0;
    gb_variable *const *va = gb_module_variables(a, &na);
    gb_variable *const *vb = gb_module_variables(b, &nb);
    ck_assert_int_eq(na, nb);
    ck_assert_int_gt(na, 0);
    for (int i = 0; i < na; i++) {
        gb_tensor *x = gb_variable_value(va[i]), *y = gb_variable_value(vb[i]);
        ck_assert_int_eq(gb_nbytes(x), gb_nbytes(y));
        ck_assert_msg(memcmp(gb_data(x), gb_data(y), gb_nbytes(x)) == 0, "%s differs",
                      gb_variable_name(va[i]));
    }
}

/* The first run initializes; a later one (another process, say) restores
 * the latest save, also into a model not built yet. */
START_TEST(test_restore_or_initialize) {
    gb_module *a = model(1);
    gb_module_build(a, GB_F32, GB_SHAPE(-1, 2));
    gb_checkpoint *ck = tracking(a);
    gb_checkpoint_manager *mgr = manager(ck, 2, 0);
    gb_restore_status st;
    ck_assert_int_eq(gb_checkpoint_manager_restore_or_initialize(mgr, &st), GB_CKPT_INITIALIZED);
    ck_assert_int_eq(st.restored, 0);
    save_steps(mgr, 1, 1, 1);
    gb_variable *kernel = gb_module_variables(a, &(int){0})[0];
    ck_assert(gb_variable_assign(kernel, gb_fill(GB_F32, GB_SHAPE(2, 3), 0.25)));
    save_steps(mgr, 2, 2, 1);
    gb_checkpoint_manager_free(mgr);

    gb_nn_clear_session();
    gb_module *b = model(9);
    gb_checkpoint *ck2 = tracking(b);
    gb_checkpoint_manager *mgr2 = manager(ck2, 2, 0);
    ck_assert_int_eq(gb_checkpoint_manager_restore_or_initialize(mgr2, &st), GB_CKPT_RESTORED);
    ck_assert_str_eq(st.file, in_test_dir("ckpt-2"));
    ck_assert_int_eq(st.pending, 2);   /* b is not built: its kernel and bias wait */
    ck_assert(gb_module_build(b, GB_F32, GB_SHAPE(-1, 2)));
    ck_assert(gb_checkpoint_restore_status(ck2, &st));
    ck_assert_int_eq(st.restored, 2);
    ck_assert(gb_restore_assert_consumed(&st));
    assert_same_weights(a, b);
    ck_assert_float_eq(gb_get(gb_variable_value(gb_module_variables(b, &(int){0})[0]), 5), 0.25f);

    /* A restore that fails is no initialization. */
    write_text(in_test_dir("ckpt-2"), "not a checkpoint");
    ck_assert_int_eq(gb_checkpoint_manager_restore_or_initialize(mgr2, &st), GB_CKPT_FAILED);
    assert_error_text(GB_ERR_IO, "%s: truncated: the file has 16 bytes, fewer than a checkpoint header's 40",
                      in_test_dir("ckpt-2"));
    gb_checkpoint_manager_free(mgr2);
    gb_checkpoint_free(ck), gb_checkpoint_free(ck2);
    gb_module_free(a), gb_module_free(b);
}
END_TEST

/* Opens a manager on the directory whose state file holds the n bytes of
 * state and expects it refused with the message "<dir>/checkpoint:<rest>". */
static void assert_bytes_refused(gb_checkpoint *ck, const char *state, size_t n, const char *rest) {
    write_bytes(in_test_dir("checkpoint"), state, n);
    ck_assert_ptr_null(gb_checkpoint_manager_new(ck, test_dir(), NULL));
    assert_error_text(GB_ERR_IO, "%s:%s", in_test_dir("checkpoint"), rest);
}

static void assert_state_refused(gb_checkpoint *ck, const char *state, const char *rest) {
    assert_bytes_refused(ck, state, strlen(state), rest);
}

START_TEST(test_damaged_state_files_name_the_line) {
    gb_module *m = model(1);
    gb_checkpoint *ck = tracking(m);
    assert_state_refused(ck, "", "1: empty: no 'format: 1' line");
    assert_state_refused(ck, "# only a comment\n", "1: empty: no 'format: 1' line");
    assert_state_refused(ck, "latest: ckpt-1\n", "1: expected 'format: 1' first, got 'latest: ckpt-1'");
    assert_state_refused(ck, "format: 2\n",
                         "1: written by a newer glassbox (state format 2; this build reads up to 1)");
    assert_state_refused(ck, "format: 1\nlatest: ckpt-3\ncheckpoint: ckpt-3 step x time 5\n",
                         "3: expected 'checkpoint: <name> step <n> time <seconds> [preserved]', "
                         "got 'checkpoint: ckpt-3 step x time 5'");
    assert_state_refused(ck, "format: 1\ncheckpoint: ckpt-3 step 3 time -5\n",
                         "2: expected 'checkpoint: <name> step <n> time <seconds> [preserved]', "
                         "got 'checkpoint: ckpt-3 step 3 time -5'");
    assert_state_refused(ck, "format: 1\ncheckpoint: ../../etc/passwd step 1 time 5\n",
                         "2: '../../etc/passwd' is not a checkpoint file name (a name in the "
                         "directory, without '/', '#', blanks or a leading '.')");
    assert_state_refused(ck, "format: 1\n\ncheckpoint: a step 1 time 5\ncheckpoint: a step 2 time 6\n",
                         "4: 'a' is listed twice");
    assert_state_refused(ck, "format: 1\nlatest: ckpt-2\ncheckpoint: ckpt-2 step 2 time 5\n"
                             "checkpoint: ckpt-3 step 3 time 6\n",
                         "2: 'latest' names 'ckpt-2', but the last checkpoint listed is 'ckpt-3' (line 4)");
    assert_state_refused(ck, "format: 1\ncheckpoint: ckpt-2 step 2 time 5\n",
                         "2: no 'latest' line (it would name 'ckpt-2')");
    assert_state_refused(ck, "format: 1\nlatest: ckpt-2\n", "2: 'latest' names 'ckpt-2', but no checkpoint is listed");
    assert_state_refused(ck, "format: 1\nlast_preserved_time: soon\n",
                         "2: 'last_preserved_time' is not a number of seconds since the epoch");
    assert_state_refused(ck, "format: 1\nlast_preserved_time: 1\nlast_preserved_time: 2\n",
                         "3: a second 'last_preserved_time' (the first is on line 2)");
    assert_state_refused(ck, "format: 1\nmodel_checkpoint_path: \"ckpt-1\"\n",
                         "2: unknown key 'model_checkpoint_path'");
    assert_state_refused(ck, "format: 1\nno colon here\n", "2: expected 'key: value', got 'no colon here'");
    static const char nul[] = "format: 1\nlatest: a\0b\n";
    assert_bytes_refused(ck, nul, sizeof nul - 1, "2: a NUL byte in the line");
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* Comments, blank lines, CRLF line ends and extra blanks are fine. */
START_TEST(test_state_file_by_hand) {
    gb_module *m = model(1);
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    gb_checkpoint *ck = tracking(m);
    ck_assert(gb_checkpoint_write(ck, in_test_dir("ckpt-4")));
    write_text(in_test_dir("checkpoint"), "# edited by hand\r\n\r\n  format:1  \r\n"
                                     "checkpoint:\tckpt-4   step 4 time 12.5  # a note\r\n"
                                     "latest :ckpt-4\r\n");
    gb_checkpoint_manager *mgr = manager(ck, 1, 0);
    ck_assert_str_eq(kept(mgr), "ckpt-4");
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* Checkpoints the state file lists that are gone: dropped, reported, the
 * newest one there is the latest. */
START_TEST(test_missing_files_are_reported) {
    gb_module *m = model(1);
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    gb_checkpoint *ck = tracking(m);
    gb_checkpoint_manager *mgr = manager(ck, 5, 0);
    save_steps(mgr, 1, 4, 60);
    gb_checkpoint_manager_free(mgr);
    ck_assert_int_eq(unlink(in_test_dir("ckpt-2")), 0);
    ck_assert_int_eq(unlink(in_test_dir("ckpt-4")), 0);
    mgr = manager(ck, 5, 0);
    const char *missing[4];
    ck_assert_int_eq(gb_checkpoint_manager_missing(mgr, missing, 4), 2);
    ck_assert_str_eq(missing[0], in_test_dir("ckpt-2"));
    ck_assert_str_eq(missing[1], in_test_dir("ckpt-4"));
    ck_assert_str_eq(kept(mgr), "ckpt-1 ckpt-3");
    ck_assert_str_eq(gb_checkpoint_manager_latest(mgr), in_test_dir("ckpt-3"));
    save_steps(mgr, 5, 5, 60);   /* the rewritten state file lists what is there */
    gb_checkpoint_manager_free(mgr);
    mgr = manager(ck, 5, 0);
    ck_assert_int_eq(gb_checkpoint_manager_missing(mgr, NULL, 0), 0);
    ck_assert_str_eq(kept(mgr), "ckpt-1 ckpt-3 ckpt-5");
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

/* What saves killed mid-write leave ("<prefix>-<n>.tmp", "checkpoint.tmp")
 * goes when a manager opens the directory; other files stay. */
START_TEST(test_leftover_temporary_files_are_removed) {
    gb_module *m = model(1);
    gb_checkpoint *ck = tracking(m);
    const char *files[] = {"ckpt-5.tmp", "checkpoint.tmp", "ckpt-x.tmp", "other-5.tmp", "ckpt-5.tmpx", "notes.txt"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) write_text(in_test_dir(files[i]), "x");
    gb_checkpoint_manager *mgr = manager(ck, 1, 0);
    ck_assert_str_eq(listing(), "ckpt-5.tmpx ckpt-x.tmp notes.txt other-5.tmp");
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

static double broken_clock(void *user) {
    (void)user;
    return -5;
}

START_TEST(test_bad_arguments) {
    gb_module *m = model(1);
    gb_checkpoint *ck = tracking(m);
    ck_assert_ptr_null(gb_checkpoint_manager_new(ck, test_dir(), &(gb_checkpoint_manager_options){.max_to_keep = -1}));
    assert_error_text(GB_ERR_VALUE, "gb_checkpoint_manager_new: max_to_keep must be >= 0 (0 keeps every checkpoint)");
    ck_assert_ptr_null(gb_checkpoint_manager_new(ck, test_dir(), &(gb_checkpoint_manager_options){.prefix = "a/b"}));
    assert_error_text(GB_ERR_VALUE, "gb_checkpoint_manager_new: the prefix must be a file name of 1 to "
                                    "199 bytes without '/', '#', blanks or a leading '.'");
    ck_assert_ptr_null(gb_checkpoint_manager_new(
        ck, test_dir(), &(gb_checkpoint_manager_options){.keep_checkpoint_every_n_hours = -1}));
    assert_error_text(GB_ERR_VALUE, "gb_checkpoint_manager_new: keep_checkpoint_every_n_hours must be >= 0 (0: off)");
    ck_assert_ptr_null(gb_checkpoint_manager_new(NULL, test_dir(), NULL));
    assert_error_text(GB_ERR_VALUE, "gb_checkpoint_manager_new: the checkpoint is NULL");
    write_text(in_test_dir("file"), "x");
    ck_assert_ptr_null(gb_checkpoint_manager_new(ck, in_test_dir("file"), NULL));
    assert_error_text(GB_ERR_IO, "%s: not a directory (a CheckpointManager keeps its checkpoints in one)",
                      in_test_dir("file"));
    ck_assert_ptr_null(gb_checkpoint_manager_new(ck, test_dir(), &(gb_checkpoint_manager_options){.now = broken_clock}));
    assert_error_text(GB_ERR_VALUE, "CheckpointManager %s: the clock gave -5, not seconds since the epoch",
                      test_dir());
    gb_checkpoint_manager *mgr = gb_checkpoint_manager_new(ck, in_test_dir("a/b"), NULL);   /* made at the first save */
    ck_assert_ptr_nonnull(mgr);
    ck_assert_ptr_null(gb_checkpoint_manager_save(mgr, -1));
    assert_error_text(GB_ERR_VALUE, "gb_checkpoint_manager_save: the step must be >= 0 (it numbers the file)");
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    ck_assert_ptr_nonnull(gb_checkpoint_manager_save(mgr, 0));
    ck_assert_int_eq(access(in_test_dir("a/b/ckpt-0"), F_OK), 0);
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_module_free(m);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("io_checkpoint_manager");
    TCase *tc = tcase_create("manager");
    tcase_add_checked_fixture(tc, dir_setup, nn_dir_teardown);
    tcase_add_test(tc, test_keeps_the_last_max_to_keep);
    tcase_add_test(tc, test_keeps_one_every_n_hours);
    tcase_add_test(tc, test_restore_or_initialize);
    tcase_add_test(tc, test_damaged_state_files_name_the_line);
    tcase_add_test(tc, test_state_file_by_hand);
    tcase_add_test(tc, test_missing_files_are_reported);
    tcase_add_test(tc, test_leftover_temporary_files_are_removed);
    tcase_add_test(tc, test_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
