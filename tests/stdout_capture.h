/* stdout_capture.h — what the code under test prints to stdout, captured
 * into a buffer (Print's output, a progress line). Header-only. */
#ifndef GB_TEST_STDOUT_CAPTURE_H
#define GB_TEST_STDOUT_CAPTURE_H

#include <check.h>
#include <stdio.h>
#include <unistd.h>

typedef struct capture {
    int saved;
    FILE *file;
} capture;

/* From here on, stdout goes to a temporary file. */
static inline void capture_begin(capture *cp) {
    fflush(stdout);
    cp->file = tmpfile();
    ck_assert_ptr_nonnull(cp->file);
    cp->saved = dup(STDOUT_FILENO);
    ck_assert_int_ge(cp->saved, 0);
    ck_assert_int_ge(dup2(fileno(cp->file), STDOUT_FILENO), 0);
}

/* stdout back where it was; what was printed meanwhile in buf. */
static inline void capture_end(capture *cp, char *buf, size_t n) {
    fflush(stdout);
    dup2(cp->saved, STDOUT_FILENO);
    close(cp->saved);
    rewind(cp->file);
    size_t len = fread(buf, 1, n - 1, cp->file);
    buf[len] = '\0';
    fclose(cp->file);
}

#endif
