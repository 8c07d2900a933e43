/* autodiff/custom_gradient.c — tf.custom_gradient: a forward function
 * whose gradient is a given backward function.
 *
 * The forward runs unseen by tapes; one record of a custom kind then
 * stands for it on every tape that watches an input.
 */
#include <stdio.h>
#include <stdlib.h>

#include "autodiff/internal.h"

/* ---- custom gradients ---------------------------------------------------------------- */

bool gb_custom_gradient(const char *name, gb_custom_forward_fn forward,
                        gb_custom_backward_fn backward, void *user, gb_tensor *const *inputs,
                        int nin, gb_tensor **outputs, int nout) {
    for (int k = 0; k < nout; k++) outputs[k] = NULL;
    for (int i = 0; i < nin; i++)
        if (!inputs[i]) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, name, "custom gradient: input %d is NULL", i);
            return false;
        }
    /* Any number of outputs: a traced function's call is one record, and
     * a function may return hundreds (a model's gradients). */
    if (!forward || !backward || nout < 1) {
        gb__error(GB_ERR_VALUE, name,
                  "custom gradient: need forward and backward functions and at least 1 output");
        return false;
    }
    /* The forward pass is opaque to tapes: only `backward` defines the
     * gradient. */
    uint64_t saved = gb__tl_recording;
    gb__tl_recording = 0;
    gb_call_site site = gb__call_site();
    bool ok = forward(inputs, nin, outputs, nout, user) && gb_ok();
    gb__call_site_restore(site);
    for (int k = 0; ok && k < nout; k++) {
        ok = outputs[k] != NULL;
        /* An output that is an input would alias their gradients. */
        for (int i = 0; ok && i < nin; i++)
            if (outputs[k]->id == inputs[i]->id) ok = (outputs[k] = gb_copy(outputs[k])) != NULL;
        if (ok) outputs[k]->tape_bits = 0;
    }
    gb__tl_recording = saved;
    if (!ok) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, name, "custom gradient: forward produced no output");
        return false;
    }
    if (!saved) return true;
    gb_op_call probe = {.op = GB_OP_IDENTITY, .def = gb_op_table[GB_OP_IDENTITY], .in = inputs,
                        .nin = nin, .attrs = NULL};
    uint64_t mask = gb__tape_tapes_for_call(&probe);
    for (uint64_t m = mask; m; m &= m - 1) {
        gb_tape *t = gb__tape_slots[__builtin_ctzll(m)];
        tape_rec *r = gb__tape_new_record(t, CUSTOM_OP, inputs, nin, outputs, nout,
                                 name ? name : "CustomGradient", true);
        if (!r) return false;
        r->custom = backward;
        r->custom_user = user;
    }
    for (int k = 0; k < nout; k++) outputs[k]->tape_bits |= mask;
    return true;
}
