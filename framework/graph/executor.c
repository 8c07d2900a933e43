/* graph/executor.c — running a planned concrete function.
 *
 * The node list runs in order with no dispatcher work per node: no shape
 * inference (shapes were settled by the trace; only nodes with an unknown
 * dim infer theirs per call), no tape checks (a tape sees the call as a
 * whole, function_grad.c), no allocation (outputs go to reusable headers
 * over the planned arena, allocated on the first run). The run-time hooks
 * — numerics checks naming the function and the node, placement and
 * timing logs — run only when on. Outputs are written straight into
 * tensors of the caller's scope (copied there when they are views or
 * inputs): they are the only memory a call allocates.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

/* Where empty values point: a kernel may form pointers into (or memcpy
 * zero bytes from) any tensor's data, which must then not be NULL, as it
 * is not for eager tensors. Nothing is ever read or written through it. */
static _Alignas(64) char empty_value[64];

/* The arena of a run: its function's, one for all the function's concrete
 * functions and their specializations (calls of a function do not nest
 * or overlap), as large as the largest plan that ran. A function whose
 * calls alternate between programs — the train step's variants, the
 * epoch's last smaller batch — then writes memory the caches hold rather
 * than an arena of its own that went cold since its last call (a fifth of
 * a CNN step). The plan's headers are bound to it on the first run and
 * again when it moved (grew). */
static bool bind_arena(gb_concrete_function *cf, gb_plan *p) {
    gb_function *f = cf->owner;
    if (p->arena_bytes > f->arena_bytes) {
        void *a = aligned_alloc(64, p->arena_bytes);
        if (!a) {
            gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory for a %zu-byte arena",
                      f->name, p->arena_bytes);
            return false;
        }
        free(f->arena);
        f->arena = a;
        f->arena_bytes = p->arena_bytes;
        f->arena_moves++;
    }
    if (p->runs > 0 && p->arena_moves == f->arena_moves) return true;
    p->arena_moves = f->arena_moves;
    /* Static values keep one header for good: a run only rewrites the
     * placeholders' entries and the outputs of dynamic nodes. */
    const gb_graph *g = &cf->graph;
    for (int v = 0; v < g->nvalues; v++) {
        gb_tensor *h = &p->headers[v];
        /* No arena at all when every planned value is empty. */
        if (p->offset[v] >= 0) h->data = p->arena_bytes ? (char *)f->arena + p->offset[v] : NULL;
        if (!h->data && h->size == 0) h->data = empty_value;
        p->values[v] = h;
    }
    return true;
}

/* Random ops draw new numbers at each run after the first, as a stateful
 * random op in a tf.function does; the first run matches eager. */
static const gb_attrs *random_attrs(const gb_node *nd, int64_t runs, gb_attrs *scratch) {
    if (runs == 0) return &nd->attrs;
    *scratch = nd->attrs;
    uint64_t s = (uint64_t)nd->attrs.i[1] ^ ((uint64_t)runs * 0x9E3779B97F4A7C15ull);
    scratch->i[1] = (int64_t)gb__splitmix64(&s);
    return scratch;
}

/* Outputs of a node with an unknown dim: shapes from this run's inputs. */
static bool dynamic_outputs(gb_plan *p, const gb_exec_step *st, const gb_op_call *c) {
    gb_out_desc desc[GB_MAX_OUTPUTS];
    if (st->def->infer(c, desc) < 0) return false;
    bool view = st->def->flags & GB_OPF_VIEW;
    for (int k = 0; k < st->nout; k++) {
        gb_tensor *t = gb__tensor_new(desc[k].dtype, desc[k].rank, desc[k].shape, !view);
        if (!t) return false;
        p->values[st->out0 + k] = t;
    }
    return true;
}

/* Runs the steps; false after an error (the node named by the error). */
static bool run_steps(gb_plan *p, unsigned hooks) {
    gb_tensor **values = p->values;
    const gb_exec_step *end = p->steps + p->nsteps;
    /* Where a step's inputs gather: the stack when every step takes few,
     * else the plan's array for its widest node (a kernel that runs a
     * sub-graph runs another plan, with its own). Either is apart from
     * the values, which lets the compiler keep the loop's pointers in
     * registers. */
    gb_tensor *few[GB_EXEC_FEW_INPUTS];
    gb_tensor **restrict ins = p->widest <= GB_EXEC_FEW_INPUTS ? few : p->args;
    for (const gb_exec_step *st = p->steps; st < end; st++) {
        for (int i = 0; i < st->nin; i++) ins[i] = values[st->in[i]];
        gb_attrs scratch;
        const gb_attrs *attrs = st->random ? random_attrs(st->node, p->runs, &scratch)
                                           : &st->node->attrs;
        gb_op_call c = {st->op, st->def, ins, st->nin, attrs, st->node->payload};
        gb__tl_node_name = st->node->name;
        /* If and While make their outputs (shapes known once they ran). */
        if (st->dynamic && !(st->def->flags & GB_OPF_ALLOCATES) && !dynamic_outputs(p, st, &c))
            return false;
        gb_tensor **outs = values + st->out0;
        if (st->borrow) {
            if (!gb__variable_borrow(&c, outs[0])) return false;
            continue;
        }
        if (!hooks) {
            if (!st->kernel(&c, outs)) return false;
            continue;
        }
        double t0 = (hooks & GB_HOOK_TIMED) ? gb__now_us() : 0.0;
        if (!st->kernel(&c, outs)) return false;
        double us = (hooks & GB_HOOK_TIMED) ? gb__now_us() - t0 : 0.0;
        /* A node of a backward pass is reported as one, as eagerly. */
        const char *of = gb__tl_backward_of, *of_type = gb__tl_backward_of_type;
        if (st->node->backward_of) {
            gb__tl_backward_of = st->node->backward_of;
            gb__tl_backward_of_type = st->node->backward_of_type;
        }
        bool ok = gb__run_post_hooks(&c, hooks, outs, st->nout, t0, us);
        gb__tl_backward_of = of, gb__tl_backward_of_type = of_type;
        if (!ok) return false;
    }
    return true;
}

/* Binds the placeholders to the call's inputs (shapes fit: checked by the
 * caller against the signature). */
static void bind_inputs(gb_concrete_function *cf, gb_plan *p, gb_tensor *const *in) {
    for (int i = 0; i < cf->nin; i++) p->values[p->input_values[i]] = in[i];
}

/* The outputs the memory plan gave to the caller: allocated in the
 * caller's scope before the run, so the nodes write them in place. */
static bool bind_outputs(gb_concrete_function *cf, gb_plan *p, struct gb_scope *s) {
    for (int k = 0; k < cf->nout; k++) {
        int32_t v = p->output_values[k];
        if (p->offset[v] != GB_PLAN_CALLER) continue;
        const gb_tensor *h = &p->headers[v];
        if (!(p->values[v] = gb__tensor_new_in(s, h->dtype, h->rank, h->shape, true))) return false;
    }
    return true;
}

/* The outputs in scope s (the caller's): the ones written there already,
 * copies of the others (and of an output returned twice). */
static bool take_outputs(gb_concrete_function *cf, gb_plan *p, struct gb_scope *s,
                         gb_tensor **out) {
    for (int k = 0; k < cf->nout; k++) {
        int32_t v = p->output_values[k];
        bool first = !p->output_repeats[k];
        const gb_tensor *t = p->values[v];
        gb_tensor *o = p->values[v];
        if (p->offset[v] != GB_PLAN_CALLER || !first) {
            if (!(o = gb__tensor_new_in(s, t->dtype, t->rank, t->shape, true))) return false;
            memcpy(o->data, t->data, (size_t)t->size * gb_dtype_size(t->dtype));
        }
        /* A string's bytes were made in the run's scope, which ends. */
        if (t->dtype == GB_STRING && !gb__strings_pack_in(s, o->data, o->data, o->size))
            return false;
        out[k] = o;
    }
    return true;
}

/* The thread state a run sets aside: tapes do not record inside a call,
 * and names and alerts name the function's nodes. */
typedef struct run_saved {
    uint64_t recording;
    const char *function, *node;
} run_saved;

int gb__execute(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out) {
    /* -1 dims: run the static plan made for these input shapes. */
    if (cf->dynamic && !(cf = gb__specialize(cf, in))) return -1;
    gb_plan *p = cf->plan;
    (void)nin;
    /* Plain loads and stores: this catches recursion and careless sharing
     * between threads without a locked instruction on every call. */
    gb_function *f = cf->owner;
    if (atomic_load_explicit(&f->running, memory_order_relaxed)) {
        gb__error(GB_ERR_STATE, NULL,
                  "function '%s' was called while a call of it is running (recursion or "
                  "another thread); a function runs one call at a time",
                  f->name);
        return -1;
    }
    atomic_store_explicit(&f->running, true, memory_order_relaxed);
    if (!bind_arena(cf, p)) {
        atomic_store_explicit(&f->running, false, memory_order_relaxed);
        return -1;
    }
    run_saved saved = {gb__tl_recording, gb__tl_function, gb__tl_node_name};
    gb__tl_recording = 0;
    gb__tl_function = cf->owner->name;
    struct gb_scope *caller = gb__scope_current();
    gb_scope_begin();
    bind_inputs(cf, p, in);
    bool ok = bind_outputs(cf, p, caller) &&
              run_steps(p, atomic_load_explicit(&gb__hook_flags, memory_order_acquire));
    gb__tl_node_name = saved.node;
    ok = ok && take_outputs(cf, p, caller, out);
    gb_scope_end();
    gb__tl_recording = saved.recording;
    gb__tl_function = saved.function;
    p->runs++;
    atomic_store_explicit(&f->running, false, memory_order_relaxed);
    return ok ? cf->nout : -1;
}
