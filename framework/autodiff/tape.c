/* autodiff/tape.c — GradientTape: its slots, lifetime and what it watches.
 *
 * Each live tape of a thread holds one of 64 slots; a tensor carries a bit
 * per slot that watches it, so the dispatcher decides whether to record
 * with one AND. A bit can outlive its tape, so it only counts for tensors
 * made after the tape began (ids grow monotonically) or watched explicitly.
 * A tape belongs to the memory scope it was begun in; a scope that ends
 * under it expires it (through core's scope-end hook, installed here).
 */
#include <stdio.h>
#include <stdlib.h>

#include "autodiff/internal.h"

_Thread_local gb_tape *gb__tape_slots[MAX_TAPES];

/* ---- bookkeeping --------------------------------------------------------------- */

/* Bits of the occupied slots: the loops below visit live tapes only, and
 * a scope ending with no live tape costs one test. */
static _Thread_local uint64_t live_slots;

void gb__tape_update_recording(void) {
    uint64_t m = 0;
    for (uint64_t l = live_slots; l; l &= l - 1) {
        gb_tape *t = gb__tape_slots[__builtin_ctzll(l)];
        if (t->recording && !t->paused && !t->in_gradient && !t->expired) m |= t->bit;
    }
    gb__tl_recording = m & ~gb__tl_hidden_tapes;
}

void *gb__tape_alloc(gb_tape *t, size_t n) {
    return gb__bump_alloc(&t->mem, n, "recording on a GradientTape");
}

bool gb__tape_grow(void **arr, int *cap, size_t elem) {
    int ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory on a GradientTape");
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

void gb__tape_drop_records(gb_tape *t) {
    gb__bump_free(&t->mem);
    free(t->recs);
    t->recs = NULL;
    t->nrecs = t->caprecs = 0;
}

static void tape_destroy(void *arg) {
    gb_tape *t = arg;
    gb__tape_drop_records(t);
    free(t->old_ids);
    free(t->vars);
    gb__tape_slots[t->slot] = NULL;
    live_slots &= ~t->bit;
    gb__tape_update_recording();
}

/* Installed as core's scope-end hook by the first tape. */
static void tapes_on_scope_end(int depth) {
    if (!live_slots) return;
    for (uint64_t l = live_slots; l; l &= l - 1) {
        gb_tape *t = gb__tape_slots[__builtin_ctzll(l)];
        /* Tapes begun in the ending scope are destroyed by its defer list;
         * older tapes that recorded tensors of this scope lose them. */
        if (t->depth >= depth || t->expired || t->max_rec_depth < depth) continue;
        t->expired = true;
        snprintf(t->expired_why, sizeof t->expired_why,
                 "the GradientTape recorded tensors of a scope (depth %d) that has ended; "
                 "compute gradients before gb_scope_end(), or begin the tape inside that scope",
                 depth);
        gb__tape_drop_records(t);
    }
    gb__tape_update_recording();
}

/* The dispatcher and core reach tapes only through these hooks. */
static void install_hooks(void) {
    atomic_store_explicit(&gb__record_hook, gb__tape_record, memory_order_release);
    atomic_store_explicit(&gb__scope_end_hook, tapes_on_scope_end, memory_order_release);
}

/* ---- begin / end / watch ---------------------------------------------------------- */

gb_tape *gb_tape_begin_ex(bool persistent, bool watch_accessed_variables) {
    int slot = -1;
    for (int i = 0; i < MAX_TAPES && slot < 0; i++)
        if (!gb__tape_slots[i]) slot = i;
    if (slot < 0) {
        gb__error(GB_ERR_STATE, NULL,
                  "more than %d GradientTapes alive on this thread; end the scopes of old ones",
                  MAX_TAPES);
        return NULL;
    }
    install_hooks();
    gb_tape *t = gb__scope_alloc(sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->mem.min_chunk = 32768;
    t->slot = slot;
    t->bit = (uint64_t)1 << slot;
    t->start_id = gb__next_tensor_id();
    t->depth = gb_scope_depth();
    t->persistent = persistent;
    t->watch_accessed = watch_accessed_variables;
    t->recording = true;
    if (!gb__scope_defer(tape_destroy, t)) return NULL;
    gb__tape_slots[slot] = t;
    live_slots |= t->bit;
    gb__tape_update_recording();
    return t;
}

gb_tape *gb_tape_begin(void) { return gb_tape_begin_ex(false, true); }

bool gb__tape_usable(const gb_tape *t, const char *fn) {
    if (!t) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: tape is NULL", fn);
        return false;
    }
    return true;
}

void gb_tape_end(gb_tape *t) {
    if (!gb__tape_usable(t, "gb_tape_end")) return;
    t->recording = false;
    gb__tape_update_recording();
}

void gb_tape_stop_recording(gb_tape *t) {
    if (!gb__tape_usable(t, "gb_tape_stop_recording")) return;
    t->paused = true;
    gb__tape_update_recording();
}

void gb_tape_resume_recording(gb_tape *t) {
    if (!gb__tape_usable(t, "gb_tape_resume_recording")) return;
    t->paused = false;
    gb__tape_update_recording();
}

static bool is_old_watched(const gb_tape *t, uint64_t id) {
    for (int i = 0; i < t->nold; i++)
        if (t->old_ids[i] == id) return true;
    return false;
}

/* Whether tape t watches tensor x (its bit set and still meaningful). */
bool gb__tape_watches(const gb_tape *t, const gb_tensor *x) {
    return (x->tape_bits & t->bit) && (x->id >= t->start_id || is_old_watched(t, x->id));
}

void gb_tape_watch(gb_tape *t, gb_tensor *x) {
    if (!gb__tape_usable(t, "gb_tape_watch") || !x) return;
    if (gb__tape_watches(t, x)) return;
    if (x->id < t->start_id) {
        if (t->nold == t->capold && !gb__tape_grow((void **)&t->old_ids, &t->capold, sizeof(uint64_t)))
            return;
        t->old_ids[t->nold++] = x->id;
    }
    x->tape_bits |= t->bit;
}

bool gb__tape_var_watched(const gb_tape *t, const struct gb_variable *v) {
    for (int i = 0; i < t->nvars; i++)
        if (t->vars[i] == v) return true;
    return false;
}

void gb__tape_add_var(gb_tape *t, struct gb_variable *v) {
    if (gb__tape_var_watched(t, v)) return;
    if (t->nvars == t->capvars && !gb__tape_grow((void **)&t->vars, &t->capvars, sizeof *t->vars)) return;
    t->vars[t->nvars++] = v;
}

void gb_tape_watch_variable(gb_tape *t, gb_variable *v) {
    if (!gb__tape_usable(t, "gb_tape_watch_variable") || !v) return;
    gb__tape_add_var(t, v);
}

int gb_tape_watched_variables(const gb_tape *t, gb_variable **out, int cap) {
    if (!t) return 0;
    for (int i = 0; i < t->nvars && i < cap; i++) out[i] = t->vars[i];
    return t->nvars;
}

