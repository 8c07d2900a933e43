/* fuzz_engine.h — helpers for fuzz targets of the engine (framework/).
 *
 * Each input runs in a memory scope of its own and from a clean sticky
 * error, so one input cannot leak tensors or errors into the next (ASan's
 * leak check at exit would blame the wrong input).
 */
#ifndef GB_FUZZ_ENGINE_H
#define GB_FUZZ_ENGINE_H

#include "fuzz_target.h"
#include "glassbox.h"

static inline void fuzz_begin(void) {
    gb_clear_error();
    gb_scope_begin();
}

static inline void fuzz_end(void) {
    gb_scope_end();
    gb_clear_error();
}

/* After an input was refused: an I/O error was recorded whose message
 * starts with `name` (the file, or what stands for it), so the user
 * learns which input is wrong. */
static inline void fuzz_check_refused(const char *name) {
    const gb_error *e = gb_last_error();
    FUZZ_CHECK(e != NULL, "refused without an error");
    FUZZ_CHECK(e->code == GB_ERR_IO, "code %s: %s", gb_status_name(e->code), e->message);
    FUZZ_CHECK(strncmp(e->message, name, strlen(name)) == 0, "the message does not name %s: %s",
               name, e->message);
}

#endif
