/* fuzz_io_checkpoint_state.c — the CheckpointManager's state file reader
 * (io/checkpoint_state.c) on arbitrary bytes.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused file gets a GB_ERR_IO error naming it and a line
 * ("input:<line>: ..."); an accepted one lists only names a manager may
 * delete inside its directory (no '/', no leading '.'), each once, with
 * steps >= 0 and times that have a date; and its text as the manager would
 * write it reads back to the same list (names, steps, marks, times to the
 * millisecond written), whose text is the same again.
 */
#include <math.h>

#include "fuzz_engine.h"
#include "io/internal.h"

static void check_accepted(const gb__ckpt_state *s) {
    for (int i = 0; i < s->n; i++) {
        const gb__ckpt_record *r = &s->v[i];
        FUZZ_CHECK(gb__ckpt_name_ok(r->name, strlen(r->name)) && !strchr(r->name, '/') &&
                       r->name[0] != '.',
                   "record %d: name '%s'", i, r->name);
        FUZZ_CHECK(r->step >= 0 && r->time >= 0 && r->time <= GB__CKPT_MAX_TIME,
                   "record %d: step or time", i);
        FUZZ_CHECK(gb__ckpt_state_find(s, r->name) == i, "record %d: '%s' listed twice", i, r->name);
    }
    FUZZ_CHECK(s->last_preserved == -1 ||
                   (s->last_preserved >= 0 && s->last_preserved <= GB__CKPT_MAX_TIME),
               "last_preserved %g", s->last_preserved);
}

static void check_same(const gb__ckpt_state *a, const gb__ckpt_state *b) {
    FUZZ_CHECK(a->n == b->n, "%d records read back as %d", a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        const gb__ckpt_record *x = &a->v[i], *y = &b->v[i];
        /* Times are written to the millisecond: 0.5 ms of rounding, and a
         * double's spacing near 1e11 s. */
        FUZZ_CHECK(strcmp(x->name, y->name) == 0 && x->step == y->step && x->preserved == y->preserved &&
                       fabs(x->time - y->time) <= 6e-4,
                   "record %d changed in the round trip", i);
    }
    FUZZ_CHECK((a->last_preserved < 0) == (b->last_preserved < 0), "last_preserved lost or gained");
}

/* Writes s as text and reads it back into *back (false: out of memory). */
static bool round_trip(const gb__ckpt_state *s, char **text, size_t *size, gb__ckpt_state *back) {
    if (!gb__ckpt_state_format(s, text, size)) return false;
    bool ok = gb__ckpt_state_parse("written", *text, *size, back);
    FUZZ_CHECK(ok, "the written text is refused: %s", gb_last_error()->message);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    gb__ckpt_state s, back, again;
    if (!gb__ckpt_state_parse("input", (const char *)data, size, &s)) {
        fuzz_check_refused("input:");
        FUZZ_CHECK(gb_last_error()->message[6] >= '1' && gb_last_error()->message[6] <= '9',
                   "no line number: %s", gb_last_error()->message);
        fuzz_end();
        return 0;
    }
    check_accepted(&s);
    char *text1 = NULL, *text2 = NULL;
    size_t n1 = 0, n2 = 0;
    if (round_trip(&s, &text1, &n1, &back)) {
        check_same(&s, &back);
        if (round_trip(&back, &text2, &n2, &again)) {
            FUZZ_CHECK(n1 == n2 && memcmp(text1, text2, n1) == 0, "the text is no fixed point");
            gb__ckpt_state_free(&again);
        }
        gb__ckpt_state_free(&back);
    }
    free(text1);
    free(text2);
    gb__ckpt_state_free(&s);
    fuzz_end();
    return 0;
}
