/* error.c — the summary component's error messages and clocks.
 *
 * Neither the writer nor the reader may touch the engine's sticky error
 * (that is the engine's state); each keeps the message of the calling
 * thread's last failure here instead, next to the status codes its
 * functions return.
 */
#include <stdio.h>
#include <time.h>

#include "gb_summary.h"
#include "store_internal.h"

static _Thread_local char summary_error[1024];
static _Thread_local char store_error[1024];

void gb__summary_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(summary_error, sizeof summary_error, fmt, ap);
    va_end(ap);
}

void gb__store_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(store_error, sizeof store_error, fmt, ap);
    va_end(ap);
}

const char *gb_summary_last_error(void) { return summary_error; }
void gb_summary_clear_error(void) { summary_error[0] = 0; }
const char *gb_store_last_error(void) { return store_error; }

const char *gb_store_status_name(gb_store_status st) {
    static const char *const names[] = {
        [GB_STORE_OK] = "GB_STORE_OK",
        [GB_STORE_ERR_ARG] = "GB_STORE_ERR_ARG",
        [GB_STORE_ERR_NOT_FOUND] = "GB_STORE_ERR_NOT_FOUND",
        [GB_STORE_ERR_NOT_STORE] = "GB_STORE_ERR_NOT_STORE",
        [GB_STORE_ERR_NEWER] = "GB_STORE_ERR_NEWER",
        [GB_STORE_ERR_NO_RUN] = "GB_STORE_ERR_NO_RUN",
        [GB_STORE_ERR_NO_TAG] = "GB_STORE_ERR_NO_TAG",
        [GB_STORE_ERR_NO_ROW] = "GB_STORE_ERR_NO_ROW",
        [GB_STORE_ERR_IO] = "GB_STORE_ERR_IO",
        [GB_STORE_ERR_MEMORY] = "GB_STORE_ERR_MEMORY",
    };
    if ((unsigned)st >= sizeof names / sizeof names[0]) return "GB_STORE_ERR_UNKNOWN";
    return names[st];
}

double gb__wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double gb__mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
