/* core/exec_state.c — the thread's execution state, and init_scope.
 *
 * Tapes, tracing and backward passes live in layers above core, yet core
 * (scopes, names) and the dispatcher must know whether they are active on
 * this thread. The state is defined here, owned and written by those
 * layers; the one call core makes up a layer — expiring tapes when a
 * scope ends — goes through a hook the tape installs.
 */
#include "core/internal.h"

_Thread_local uint64_t gb__tl_recording;
_Thread_local bool gb__tl_tracing;
_Thread_local const char *gb__tl_backward_of;
_Thread_local const char *gb__tl_backward_of_type;
_Thread_local const char *gb__tl_backward_label;
_Thread_local const char *gb__tl_traced_node;
_Thread_local const char *gb__tl_fused_node;
_Thread_local int64_t gb__tl_fused_bad[3];
_Thread_local const char *gb__tl_function;
_Thread_local const char *gb__tl_node_name;
_Thread_local uint64_t gb__tl_hidden_tapes;
_Atomic(gb_scope_end_hook_fn) gb__scope_end_hook;

/* Ending a memory scope makes the tapes recompute whether they record, so
 * the pause is applied again (never widened) when init_scope ends. */
gb_init_scope gb__init_scope_begin(void) {
    gb_init_scope s = {gb__tl_recording, gb__tl_tracing};
    gb__tl_recording = 0;
    gb__tl_tracing = false;
    gb_scope_begin();
    return s;
}

void gb__init_scope_end(gb_init_scope s) {
    gb_scope_end();
    gb__tl_recording &= s.recording;
    gb__tl_tracing = s.tracing;
}
