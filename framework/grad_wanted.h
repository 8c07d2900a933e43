/* grad_wanted.h — whether a gradient function should compute an input's
 * gradient at all (internal).
 *
 * The tape calls an op's gradient function when any of its inputs needs
 * a gradient and then ignores the others. A tensor that no tape ever
 * watched and that no watched computation produced (the data batch fed to
 * a network's first layer) carries no tape bits: its gradient is never
 * used, and skipping it saves a whole product per step (dx of the first
 * Dense or Conv2D layer). Symbolic tensors are always served, since the
 * tracer decides later what is needed. Stale bits of ended tapes only
 * cost the work, never a gradient.
 */
#ifndef GB_GRAD_WANTED_H
#define GB_GRAD_WANTED_H

#include "internal.h"

static inline bool gb__grad_wanted(const gb_tensor *t) {
    return t->tape_bits != 0 || (t->flags & GB_TF_SYMBOLIC);
}

#endif
