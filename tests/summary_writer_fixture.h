/* summary_writer_fixture.h — the fixture the writer's tests share: a
 * store in a fresh temporary directory per test (dir, db), a scope around
 * each test, and writers and readers of it that fail the test, with the
 * library's message, when they cannot open. Header-only; include it
 * after summary_test_util.h, in a test that links the writer. */
#ifndef GB_TEST_SUMMARY_WRITER_FIXTURE_H
#define GB_TEST_SUMMARY_WRITER_FIXTURE_H

#include <check.h>

#include "gb_reader.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"

static char dir[256], db[300];

/* Runs before each test: name is the temporary directory's prefix. */
#define SUMMARY_WRITER_FIXTURE(name)           \
    static void setup(void) {                  \
        SUMMARY_TEMP_STORE(dir, db, name);     \
        gb_scope_begin();                      \
    }                                          \
    static void teardown(void) {               \
        gb_scope_end();                        \
        summary_remove_dir(dir);               \
    }

static inline gb_summary_writer *open_writer(const char *run) {
    gb_summary_writer *w = NULL;
    ck_assert_msg(gb_summary_writer_open(db, run, NULL, &w) == GB_OK, "%s", gb_summary_last_error());
    return w;
}

static inline gb_store *open_store(void) {
    gb_store *s = NULL;
    ck_assert_msg(gb_store_open(db, &s) == GB_STORE_OK, "%s", gb_store_last_error());
    return s;
}

#endif
