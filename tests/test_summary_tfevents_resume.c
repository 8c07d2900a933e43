/* test_summary_tfevents_resume.c — importing TensorBoard event files again
 * into the same store: each file is read on from where the last import
 * stopped, so a growing file's new records arrive once and nothing is
 * stored twice; a torn record waits for its end; a directory that moved
 * (the files' names kept) continues; a file cut shorter or replaced is
 * named and left out (`glassbox import` exits 3 then); how far each file
 * was read is in the store.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_tfevents.h"
#include "run_program.h"
#include "run_suite.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_tfresume")

#define FILE_NAME "events.out.tfevents.1700000000.host.42.0"

static char events[400], file[600];

/* dir/<sub>/FILE_NAME (made on first use; events and file name them)
 * gains the records of steps first .. first+n-1, loss = 100 + step; of
 * the last record only its first `keep` bytes when keep > 0, and of the
 * first none of its first `skip` bytes (the rest of one torn before). */
static void append_in(const char *sub, int first, int n, size_t keep, size_t skip) {
    snprintf(events, sizeof events, "%s/%s", dir, sub);
    mkdir(events, 0700);
    snprintf(file, sizeof file, "%s/" FILE_NAME, events);
    gb_tf_buf b = {0};
    for (int i = first; i < first + n; i++) gb_tf_put_scalar(&b, 1.7e9 + i, i, "loss", 100 + i);
    ck_assert(!b.failed);
    size_t end = keep ? b.len - b.len / (size_t)n + keep : b.len;
    FILE *f = fopen(file, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b.data + skip, 1, end - skip, f), end - skip);
    fclose(f);
    gb_tf_buf_free(&b);
}

static void append(int first, int n, size_t keep, size_t skip) { append_in("tb", first, n, keep, skip); }

/* The bytes one loss record takes. */
static size_t record_bytes(void) {
    gb_tf_buf b = {0};
    gb_tf_put_scalar(&b, 1.7e9, 0, "loss", 100);
    size_t n = b.len;
    gb_tf_buf_free(&b);
    return n;
}

static gb_tfevents_report import(const char *from) {
    gb_tfevents_report r;
    ck_assert_msg(gb_summary_import_tfevents_run(from, "tb", db, &r) == GB_OK, "%s",
                  gb_summary_last_error());
    return r;
}

/* The stored losses of run tb, "step:value" comma-joined. */
static const char *losses(void) {
    static char out[512];
    out[0] = '\0';
    gb_store *s = open_store();
    gb_scalar_series *ser = NULL;
    ck_assert_int_eq(gb_store_scalars(s, "tb", "loss", NULL, &ser), GB_STORE_OK);
    for (size_t i = 0; i < ser->count; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%lld:%g", i ? "," : "",
                 (long long)ser->rows[i].step, ser->rows[i].value);
    gb_store_free(ser);
    gb_store_close(s);
    return out;
}

/* The store's mark for the file: "bytes_read tail" ("" when none). */
static const char *mark(void) {
    static char out[64];
    out[0] = '\0';
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(h, "SELECT bytes_read, tail FROM imported_files WHERE file = '" FILE_NAME "'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, sizeof out, "%lld %lld", sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

/* The mark of the file read up to byte upto (0: its end): upto and the
 * four bytes before it, as the store keeps them. */
static const char *file_mark(long upto) {
    static char out[64];
    FILE *f = fopen(file, "rb");
    ck_assert_ptr_nonnull(f);
    if (!upto) {
        fseek(f, 0, SEEK_END);
        upto = ftell(f);
    }
    unsigned char b[4];
    fseek(f, upto - 4, SEEK_SET);
    ck_assert_uint_eq(fread(b, 1, 4, f), 4);
    fclose(f);
    snprintf(out, sizeof out, "%ld %lld", upto,
             (long long)(b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24));
    return out;
}

START_TEST(test_import_again_reads_only_what_was_added) {
    append(0, 3, 0, 0);
    gb_tfevents_report r = import(events);
    ck_assert_uint_eq(r.events, 3);
    ck_assert_uint_eq(r.resumed, 0);
    ck_assert_str_eq(losses(), "0:100,1:101,2:102");
    ck_assert_str_eq(mark(), file_mark(0));

    /* Nothing new: nothing read, nothing stored twice. */
    r = import(events);
    ck_assert_uint_eq(r.files, 1);
    ck_assert_uint_eq(r.events, 0);
    ck_assert_uint_eq(r.scalars, 0);
    ck_assert_uint_eq(r.resumed, 1);
    ck_assert_str_eq(r.notes, "");
    ck_assert_str_eq(losses(), "0:100,1:101,2:102");

    /* The file grows: only its new records are read. */
    append(3, 2, 0, 0);
    r = import(events);
    ck_assert_uint_eq(r.events, 2);
    ck_assert_uint_eq(r.scalars, 2);
    ck_assert_str_eq(losses(), "0:100,1:101,2:102,3:103,4:104");
    ck_assert_str_eq(mark(), file_mark(0));
}
END_TEST

/* A record still being written is left for the next import, which reads it whole. */
START_TEST(test_a_torn_record_is_read_once_complete) {
    size_t half = record_bytes() / 2;
    append(0, 2, half, 0);
    gb_tfevents_report r = import(events);
    ck_assert_uint_eq(r.events, 1);
    ck_assert_str_eq(losses(), "0:100");
    char want[800];
    snprintf(want, sizeof want, "%s: stopped at byte %zu: a record of %zu bytes is cut short (%zu bytes follow its header)\n",
             file, record_bytes(), record_bytes() - 16, half - 12);
    ck_assert_str_eq(r.notes, want);
    ck_assert_str_eq(mark(), file_mark((long)record_bytes()));   /* the first record's end */

    append(1, 2, 0, half);   /* the torn record's rest, and one more */
    r = import(events);
    ck_assert_uint_eq(r.events, 2);
    ck_assert_str_eq(r.notes, "");
    ck_assert_str_eq(losses(), "0:100,1:101,2:102");
    ck_assert_str_eq(mark(), file_mark(0));
}
END_TEST

/* The directory moved (or copied elsewhere): the files keep their names,
 * so the import continues where it stopped. */
START_TEST(test_a_moved_directory_continues) {
    append(0, 2, 0, 0);
    import(events);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "mv '%s' '%s/moved'", events, dir);
    ck_assert_int_eq(system(cmd), 0);
    append_in("moved", 2, 1, 0, 0);
    gb_tfevents_report r = import(events);
    ck_assert_uint_eq(r.resumed, 1);
    ck_assert_uint_eq(r.events, 1);
    ck_assert_str_eq(losses(), "0:100,1:101,2:102");
}
END_TEST

/* A file cut shorter than what was read, or whose bytes there differ
 * (another file under the name), is named and left out: its values are
 * not stored a second time. */
START_TEST(test_a_changed_file_is_left_out) {
    append(0, 3, 0, 0);
    import(events);
    ck_assert_int_eq(truncate(file, (off_t)record_bytes()), 0);
    gb_tfevents_report r = import(events);
    ck_assert_uint_eq(r.changed, 1);
    ck_assert_uint_eq(r.events, 0);
    char want[1000];
    snprintf(want, sizeof want,
             "%s: not the file imported into run 'tb' before (it is shorter than what was read); "
             "not read again: import into a new store to read it whole\n",
             file);
    ck_assert_str_eq(r.notes, want);

    unlink(file);
    append(10, 3, 0, 0);   /* as long as before, other records */
    r = import(events);
    ck_assert_uint_eq(r.changed, 1);
    snprintf(want, sizeof want,
             "%s: not the file imported into run 'tb' before (its bytes differ); "
             "not read again: import into a new store to read it whole\n",
             file);
    ck_assert_str_eq(r.notes, want);
    ck_assert_str_eq(losses(), "0:100,1:101,2:102");

    /* A mark no import writes (a store edited by hand) matches no file. */
    for (int bad = -5; bad <= 15; bad += 10) {
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE imported_files SET bytes_read = %d", bad);
        summary_sql(db, sql);
        r = import(events);
        ck_assert_uint_eq(r.changed, 1);
        ck_assert_uint_eq(r.events, 0);
        ck_assert_str_eq(r.notes, want);
    }
}
END_TEST

/* The same file imported as two runs is read once for each. */
START_TEST(test_marks_are_per_run) {
    append(0, 2, 0, 0);
    import(events);
    gb_tfevents_report r;
    ck_assert_int_eq(gb_summary_import_tfevents_run(events, "again", db, &r), GB_OK);
    ck_assert_uint_eq(r.events, 2);
    ck_assert_uint_eq(r.resumed, 0);
    ck_assert_int_eq(gb_summary_import_tfevents_run(events, "again", db, &r), GB_OK);
    ck_assert_uint_eq(r.events, 0);
    ck_assert_str_eq(losses(), "0:100,1:101");
}
END_TEST

/* The file at path, whole (static buffer). */
static const char *slurp_text(const char *path) {
    static char text[4096];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* `glassbox import` says when it read on from an earlier import, and
 * exits 3 when a file changed otherwise, naming it. */
START_TEST(test_the_command_says_so) {
    append(0, 2, 0, 0);
    char out[400], err[400];
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    const char *args[] = {"import", "--tfevents", events, "--run", "tb", "--db", db, NULL};
    ck_assert_int_eq(run_program("glassbox-model", args, out, err), 0);
    ck_assert_int_eq(run_program("glassbox-model", args, out, err), 0);
    char want[1200];
    snprintf(want, sizeof want,
             "glassbox: imported 1 event files (0 events) into %s: 0 scalars, 0 histograms, 0 images, "
             "0 texts, 0 audio clips, 0 PR curves, 0 hparams records; 0 values of other kinds left out\n"
             "glassbox: 1 of the files had been imported into %s before: only the records added "
             "since were read\n",
             db, db);
    ck_assert_str_eq(slurp_text(out), want);
    ck_assert_int_eq(truncate(file, 10), 0);
    ck_assert_int_eq(run_program("glassbox-model", args, out, err), 3);
    snprintf(want, sizeof want,
             "glassbox import: %s: not the file imported into run 'tb' before (it is shorter than "
             "what was read); not read again: import into a new store to read it whole\n",
             file);
    ck_assert_str_eq(slurp_text(err), want);
    ck_assert_str_eq(losses(), "0:100,1:101");
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_tfevents_resume");
    TCase *tc = tcase_create("resume");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_import_again_reads_only_what_was_added);
    tcase_add_test(tc, test_a_torn_record_is_read_once_complete);
    tcase_add_test(tc, test_a_moved_directory_continues);
    tcase_add_test(tc, test_a_changed_file_is_left_out);
    tcase_add_test(tc, test_marks_are_per_run);
    tcase_add_test(tc, test_the_command_says_so);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
