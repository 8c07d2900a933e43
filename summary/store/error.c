/* store/error.c — the reader's error messages and status names.
 *
 * The reader may not touch the engine's sticky error (it does not even
 * link the engine); it keeps the message of the calling thread's last
 * failure here instead, next to the status codes its functions return.
 */
#include <stdio.h>

#include "store/internal.h"

static _Thread_local char store_error[1024];

void gb__store_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(store_error, sizeof store_error, fmt, ap);
    va_end(ap);
}

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
        [GB_STORE_ERR_DATA] = "GB_STORE_ERR_DATA",
    };
    if ((unsigned)st >= sizeof names / sizeof names[0]) return "GB_STORE_ERR_UNKNOWN";
    return names[st];
}
