/* ops/dispatch.c — the one path every op call takes.
 *
 * In order: a NULL input returns NULL (the first error stays); the op's
 * infer function checks shapes and dtypes; while tracing, the tracer adds
 * a graph node instead of running anything; otherwise outputs are
 * allocated in the current scope and the kernel runs; tapes that watch an
 * input record the call; then the numerics check, placement log, timing
 * and observers. Users, layers and gradient functions all come through
 * here, so every hook sees every op.
 */
#include <stdio.h>

#include "ops/internal.h"

_Atomic(gb_record_hook_fn) gb__record_hook;
_Atomic(gb_trace_hook_fn) gb__trace_hook;
_Atomic unsigned gb__hook_flags;
_Atomic(gb_post_op_fn) gb__numerics_hook;
_Atomic(gb_op_log_fn) gb__op_log_hook;

void gb__hook_flag_set(unsigned flag, bool on) {
    if (on)
        atomic_fetch_or_explicit(&gb__hook_flags, flag, memory_order_acq_rel);
    else
        atomic_fetch_and_explicit(&gb__hook_flags, ~flag, memory_order_acq_rel);
}

static const gb_attrs no_attrs;

static bool inputs_present(gb_op_id op, gb_tensor *const *in, int nin, bool *symbolic) {
    for (int i = 0; i < nin; i++) {
        if (!in[i]) {
            /* Normally an earlier op failed and its error stands; if not,
             * the caller passed NULL itself and should hear about it. */
            if (gb_ok())
                gb__error(GB_ERR_VALUE, gb_op_table[op]->name, "%s: input %d is NULL",
                          gb_op_table[op]->name, i);
            return false;
        }
        if (in[i]->flags & GB_TF_SYMBOLIC) *symbolic = true;
    }
    return true;
}

/* Every output's shape has a count and bytes within int64: checked here,
 * once for every op, eager, traced or replayed from a loaded graph, so
 * no kernel, planner or loader multiplies out a shape that wraps (a
 * SavedModel's Reshape to 2^62 x 4 passed a size check by wrapping). */
static bool outputs_fit(const gb_op_call *c, const gb_out_desc *desc, int nout) {
    for (int k = 0; k < nout; k++) {
        const char *unit;
        if (gb__shape_fits(desc[k].rank, desc[k].shape, gb_dtype_size(desc[k].dtype), &unit))
            continue;
        char shape[160];
        gb__op_error(c, GB_ERR_SHAPE, "%s: output %d of shape %s has more than 2^63 %s",
                     c->def->name, k, gb__shape_fmt(desc[k].rank, desc[k].shape, shape, sizeof shape),
                     unit);
        return false;
    }
    return true;
}

/* Numerics may fail the op; placement and timing only log. */
bool gb__run_post_hooks(const gb_op_call *c, unsigned hooks, gb_tensor **out, int nout,
                        double t0, double us) {
    if (hooks & GB_HOOK_NUMERICS) {
        gb_post_op_fn check = atomic_load_explicit(&gb__numerics_hook, memory_order_relaxed);
        if (check && !check(c, out, nout)) return false;
    }
    if (hooks & (GB_HOOK_PLACEMENT | GB_HOOK_TIMED)) {
        gb_op_log_fn log = atomic_load_explicit(&gb__op_log_hook, memory_order_relaxed);
        if (log) log(c, out, nout, t0, us);
    }
    return true;
}

int gb__dispatch(gb_op_id op, gb_tensor *const *in, int nin, const gb_attrs *attrs,
                 gb_tensor **out) {
    const gb_op_def *def = gb_op_table[op];
    bool symbolic = false;
    if (!inputs_present(op, in, nin, &symbolic)) return -1;
    gb_op_call c = {op, def, in, nin, attrs ? attrs : &no_attrs, NULL};
    if (def->arity >= 0 && nin != def->arity) {
        gb__op_error(&c, GB_ERR_INTERNAL, "%s takes %d inputs, got %d", def->name, def->arity,
                     nin);
        return -1;
    }
    gb_out_desc desc[GB_MAX_OUTPUTS];
    int nout = def->infer(&c, desc);
    /* An op's own checks speak first (they name the C API's constants);
     * the schema's catch whatever an op leaves unchecked. */
    if (nout < 0 || !outputs_fit(&c, desc, nout) || !gb__attrs_valid(&c)) return -1;

    if (gb__tl_tracing || symbolic) {
        /* Traced: a node instead of a kernel; tapes begun inside the traced
         * function record it, so their gradients become nodes too. */
        gb_trace_hook_fn trace = atomic_load_explicit(&gb__trace_hook, memory_order_acquire);
        if (!trace) {
            gb__op_error(&c, GB_ERR_INTERNAL, "%s: symbolic input but no tracer", def->name);
            return -1;
        }
        int n = trace(&c, desc, nout, out);
        if (n >= 0 && gb__tl_recording && !(def->flags & GB_OPF_NO_RECORD))
            atomic_load_explicit(&gb__record_hook, memory_order_relaxed)(&c, out, n);
        gb__tl_traced_node = NULL;
        return n;
    }

    bool view = def->flags & GB_OPF_VIEW;
    for (int k = 0; k < nout; k++) {
        if (def->flags & GB_OPF_ALLOCATES) {
            out[k] = NULL; /* the kernel makes it */
            continue;
        }
        out[k] = gb__tensor_new(desc[k].dtype, desc[k].rank, desc[k].shape, !view);
        if (!out[k]) return -1;
    }
    /* A flag turned on by another thread is seen at this thread's next op;
     * the hook it needs was stored before the flag (release/acquire). */
    unsigned hooks = atomic_load_explicit(&gb__hook_flags, memory_order_acquire);
    double t0 = (hooks & GB_HOOK_TIMED) ? gb__now_us() : 0.0;
    if (!def->kernel(&c, out)) return -1;
    double us = (hooks & GB_HOOK_TIMED) ? gb__now_us() - t0 : 0.0;

    if (gb__tl_recording && !(def->flags & GB_OPF_NO_RECORD))
        atomic_load_explicit(&gb__record_hook, memory_order_relaxed)(&c, out, nout);

    if (hooks) return gb__run_post_hooks(&c, hooks, out, nout, t0, us) ? nout : -1;
    return nout;
}

gb_tensor *gb__op1(gb_op_id op, gb_tensor *const *in, int nin, const gb_attrs *attrs) {
    gb_tensor *out[GB_MAX_OUTPUTS];
    return gb__dispatch(op, in, nin, attrs, out) >= 1 ? out[0] : NULL;
}

gb_tensor *gb__op_unary(gb_op_id op, gb_tensor *x) { return gb__op1(op, &x, 1, NULL); }

gb_tensor *gb__op_binary(gb_op_id op, gb_tensor *a, gb_tensor *b) {
    gb_tensor *in[2] = {a, b};
    return gb__op1(op, in, 2, NULL);
}
