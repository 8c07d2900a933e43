/* run_suite.h — the runner every Check test's main() uses, on its own so
 * that tests which do not link the engine (test_webui_*, the store-only
 * test_summary_reader*) can use it without test_util.h's engine fixtures. */
#ifndef GB_TEST_RUN_SUITE_H
#define GB_TEST_RUN_SUITE_H

#include <check.h>
#include <stdlib.h>

/* Runs every test of `s` (forked, as Check does by default) and turns the
 * failure count into the process exit status ctest looks at. */
static inline int run_suite(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
