/* writer/error.c — the writer's error messages and clocks.
 *
 * The writer may not touch the engine's sticky error (that is the
 * engine's state); it keeps the message of the calling thread's last
 * failure here instead, next to the gb_status its functions return.
 */
#include <stdio.h>
#include <time.h>

#include "writer/internal.h"

static _Thread_local char summary_error[1024];

void gb__summary_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(summary_error, sizeof summary_error, fmt, ap);
    va_end(ap);
}

const char *gb_summary_last_error(void) { return summary_error; }
void gb_summary_clear_error(void) { summary_error[0] = 0; }

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
