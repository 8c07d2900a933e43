/* autodiff/record.c — recording op calls on the tapes that watch them.
 *
 * The dispatcher calls the record hook after every kernel while a tape
 * records on the thread. A call is recorded on each tape that watches one
 * of its inputs (or, for ReadVariableOp, the variable); its outputs then
 * carry those tapes' bits, so what is computed from a watched tensor is
 * watched too.
 */
#include <stdio.h>
#include <stdlib.h>

#include "autodiff/internal.h"

/* ---- recording ---------------------------------------------------------------- */

static bool any_float_output(gb_tensor **out, int nout) {
    for (int k = 0; k < nout; k++)
        if (gb_dtype_is_float(out[k]->dtype)) return true;
    return false;
}

/* The recording tapes that should see this call. */
uint64_t gb__tape_tapes_for_call(const gb_op_call *c) {
    uint64_t mask = 0;
    if (c->op == GB_OP_READ_VARIABLE) {
        struct gb_variable *v = gb__call_variable(c);
        for (uint64_t m = gb__tl_recording; m; m &= m - 1) {
            gb_tape *t = gb__tape_slots[__builtin_ctzll(m)];
            if ((t->watch_accessed && gb__variable_is_trainable(v)) || gb__tape_var_watched(t, v)) {
                gb__tape_add_var(t, v);
                mask |= t->bit;
            }
        }
        return mask;
    }
    for (int i = 0; i < c->nin; i++) {
        const gb_tensor *x = c->in[i];
        for (uint64_t m = x->tape_bits & gb__tl_recording & ~mask; m; m &= m - 1) {
            gb_tape *t = gb__tape_slots[__builtin_ctzll(m)];
            if (gb__tape_watches(t, x)) mask |= t->bit;
        }
    }
    return mask;
}

tape_rec *gb__tape_new_record(gb_tape *t, int op, gb_tensor *const *in, int nin, gb_tensor **out,
                            int nout, const char *name, bool in_scope) {
    if (t->nrecs == t->caprecs && !gb__tape_grow((void **)&t->recs, &t->caprecs, sizeof *t->recs))
        return NULL;
    tape_rec *r = gb__tape_alloc(t, sizeof *r + (size_t)(nin + nout) * sizeof(gb_tensor *));
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->op = op;
    r->nin = nin;
    r->nout = nout;
    r->in = (gb_tensor **)(r + 1);
    r->out = r->in + nin;
    if (nin) memcpy(r->in, in, (size_t)nin * sizeof *in); /* ReadVariableOp has none */
    if (nout) memcpy(r->out, out, (size_t)nout * sizeof *out);
    /* A name of static lifetime at the top level is kept as it is: most
     * eager records, at no cost per op. */
    const char *path = in_scope ? gb_name_scope_path() : "";
    if (in_scope && !path[0]) {
        r->name = name;
    } else {
        size_t n = strlen(path) + strlen(name) + 2;
        char *full = gb__tape_alloc(t, n);
        if (full) snprintf(full, n, "%s%s%s", path, path[0] ? "/" : "", name);
        r->name = full ? full : name;
    }
    int depth = gb_scope_depth();
    if (depth > t->max_rec_depth) t->max_rec_depth = depth;
    t->recs[t->nrecs++] = r;
    return r;
}

void gb__tape_record(const gb_op_call *c, gb_tensor **out, int nout) {
    if (nout == 0 || !any_float_output(out, nout)) return;
    uint64_t mask = gb__tape_tapes_for_call(c);
    if (!mask) return;
    /* The op's name as errors give it: traced, its node's (unique); in a
     * backward pass, "gradients/<forward op>_grad/<Type>"; else its scope
     * and type, joined only when the scope is not the top level. */
    char buf[192];
    const char *name = c->def->name;
    bool in_scope = true;
    if (gb__tl_traced_node || gb__tl_backward_of || gb__tl_node_name) {
        name = gb__tl_traced_node ? gb__tl_traced_node : gb__op_display_name(c, buf, sizeof buf);
        in_scope = false;
    }
    for (uint64_t m = mask; m; m &= m - 1) {
        gb_tape *t = gb__tape_slots[__builtin_ctzll(m)];
        tape_rec *r = gb__tape_new_record(t, c->op, c->in, c->nin, out, nout, name, in_scope);
        if (!r) return;
        r->attrs = *c->attrs;
        if (c->op == GB_OP_READ_VARIABLE) r->var = gb__call_variable(c);
    }
    for (int k = 0; k < nout; k++) out[k]->tape_bits |= mask;
}

