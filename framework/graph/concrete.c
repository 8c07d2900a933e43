/* graph/concrete.c — tracing one concrete function.
 *
 * The wrapped C function runs once on Placeholder tensors with the
 * signature's dtypes and shapes, with the dispatcher in tracing mode: its
 * ops become nodes, its C code (printf, if, for) runs this once. The trace
 * has a memory scope of its own (the symbolic tensors die with it), names
 * its nodes from the root name scope, and hides the tapes begun outside it
 * (they see the call, not its insides: function_grad.c); tapes begun
 * inside record, so a gradient taken inside becomes nodes of the graph.
 * The graph then goes through the passes (passes/pipeline.c) and is
 * planned.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

static _Atomic int64_t next_concrete_id;

void gb__concrete_free(gb_concrete_function *cf) {
    if (!cf) return;
    gb__concrete_free(cf->backward);
    gb__specializations_free(cf);
    gb__cf_records_free(cf);
    gb__plan_free(cf->plan);
    gb__graph_free(&cf->graph);
    gb__graph_free(&cf->traced);
    free(cf->traced_outputs);
    free(cf->traced_text);
    free(cf->input_nodes);
    free(cf->outputs);
    for (int i = 0; i < cf->ncaptures; i++) free(cf->capture_names[i]);
    free(cf->capture_names);
    free(cf->captures);
    free(cf->sig_text);
    free(cf->graph_text);
    gb__sig_free(&cf->sig);
    if (cf->owned_function) free(cf->owned_function->arena); /* its runs' (executor.c) */
    free(cf->owned_function);
    free(cf->owned_ctx);
    free(cf);
}

/* Bits of every live tape of this thread. */
static uint64_t live_tapes(void) {
    uint64_t m = 0;
    for (int i = 0; i < MAX_TAPES; i++)
        if (gb__tape_slots[i]) m |= gb__tape_slots[i]->bit;
    return m;
}

/* What a trace changes in the thread's state, to put back after it. */
typedef struct trace_saved {
    gb_trace *trace;
    bool tracing;
    uint64_t hidden;
    const char *function;
    gb_name_root names;
} trace_saved;

static trace_saved enter(gb_trace *t) {
    trace_saved s = {gb__tl_trace, gb__tl_tracing, gb__tl_hidden_tapes, gb__tl_function,
                     gb__name_scope_root_begin()};
    gb__tl_trace = t;
    gb__tl_tracing = true;
    gb__tl_function = t->function->name;
    gb__tl_hidden_tapes |= live_tapes();
    gb__tape_update_recording();
    gb_scope_begin();
    /* A branch or loop body names its nodes in its construct's scope,
     * "model/cond/true/Add", so alerts from inside it say where it is. */
    if (t->function->region) gb_name_scope_push(t->function->region);
    return s;
}

static void leave(trace_saved s) {
    gb_scope_end();
    gb__name_scope_root_end(s.names);
    gb__tl_trace = s.trace;
    gb__tl_tracing = s.tracing;
    gb__tl_function = s.function;
    gb__tl_hidden_tapes = s.hidden;
    gb__tape_update_recording();
}

/* Placeholder i stands for tensor input i. */
static gb_tensor *placeholder(gb_trace *t, int i) {
    char name[64];
    gb__input_name(t->function, i, name, sizeof name);
    const gb_tensor_spec *spec = &t->cf->sig.in[i];
    gb_out_desc d = {.dtype = spec->dtype, .rank = spec->rank};
    memcpy(d.shape, spec->shape, sizeof d.shape);
    gb_attrs a = {.i = {i}, .ni = 1};
    int32_t node = gb__graph_add(t->graph, GB_OP_PLACEHOLDER, name, NULL, 0, &d, 1, &a);
    if (node < 0) return NULL;
    t->cf->input_nodes[i] = node;
    return gb__symbolic(node, 0, &d);
}

static void statics_of_sig(const gb_signature *sig, gb_value *st) {
    for (int i = 0; i < sig->nstatic; i++) {
        const gb_sig_static *s = &sig->st[i];
        st[i] = (gb_value){.kind = s->kind, .name = s->name};
        switch (s->kind) {
        case GB_VALUE_INT: st[i].as.i = s->i; break;
        case GB_VALUE_DOUBLE: st[i].as.d = s->d; break;
        case GB_VALUE_BOOL: st[i].as.b = s->b; break;
        default: st[i].as.s = s->s; break;
        }
    }
}

/* How errors name what traces: "function 'f'", or "'model/cond/true'
 * (in function 'f')" for a branch or loop body. */
static const char *who(const gb_function *f, char *buf, size_t n) {
    if (f->region)
        snprintf(buf, n, "'%s' (in function '%s')", f->region, f->name);
    else
        snprintf(buf, n, "function '%s'", f->name);
    return buf;
}

/* The graph's outputs: symbolic tensors of this trace, or eager values
 * (constants of the graph). */
static bool collect_outputs(gb_trace *t, gb_tensor **out, int n) {
    gb_concrete_function *cf = t->cf;
    if (n > GB_FUNCTION_MAX_OUTPUTS) {
        char w[256];
        gb__error(GB_ERR_VALUE, NULL, "%s returned %d outputs (at most %d)",
                  who(t->function, w, sizeof w), n, GB_FUNCTION_MAX_OUTPUTS);
        return false;
    }
    cf->nout = n;
    cf->outputs = calloc((size_t)(n ? n : 1), sizeof *cf->outputs);
    if (!cf->outputs) return false;
    for (int k = 0; k < n; k++) {
        gb_tensor *y = out[k];
        if (!y) {
            char w[256];
            gb__error(GB_ERR_VALUE, NULL, "%s: output %d is NULL", who(t->function, w, sizeof w), k);
            return false;
        }
        if (!(y->flags & GB_TF_SYMBOLIC)) {
            int32_t id = gb__graph_add_const(t->graph, y, "Const");
            if (id < 0) return false;
            cf->outputs[k] = (gb_edge){id, 0};
        } else if (y->graph_id != (uint32_t)cf->id) {
            char w[256];
            gb__error(GB_ERR_STATE, NULL,
                      "%s: output %d is a symbolic tensor of another trace%s", who(t->function, w, sizeof w), k,
                      t->function->region ? " (the enclosing one?): a branch, loop cond or loop "
                                            "body sees only its inputs; pass the tensor in"
                                          : "");
            return false;
        } else {
            cf->outputs[k] = (gb_edge){y->node, y->out_index};
        }
    }
    return true;
}

static gb_concrete_function *concrete_new(gb_function *f, const gb_signature *sig) {
    gb_concrete_function *cf = calloc(1, sizeof *cf);
    if (!cf) return NULL;
    cf->id = atomic_fetch_add(&next_concrete_id, 1) + 1;
    cf->owner = f;
    cf->passes_off = f->passes_off;
    cf->nin = sig->nin;
    gb__graph_init(&cf->graph);
    cf->input_nodes = calloc((size_t)(sig->nin ? sig->nin : 1), sizeof *cf->input_nodes);
    if (!cf->input_nodes || !gb__sig_copy(&cf->sig, sig, 0)) {
        free(cf->input_nodes);
        free(cf);
        return NULL;
    }
    return cf;
}

/* Runs f's C function on placeholders; false after an error. The
 * arrays are the heap's: fn may write up to GB_FUNCTION_MAX_OUTPUTS
 * outputs, and traces nest (branches, backward graphs, a function
 * called while another traces). */
static bool run_traced(gb_trace *t) {
    gb_function *f = t->function;
    int nin = t->cf->nin;
    gb_tensor **in = malloc((size_t)(nin ? nin : 1) * sizeof *in);
    gb_tensor **out = calloc(GB_FUNCTION_MAX_OUTPUTS, sizeof *out);
    bool ok = in && out;
    if (!ok) gb__error(GB_ERR_MEMORY, NULL, "out of memory tracing '%s'", f->name);
    for (int i = 0; ok && i < nin; i++) ok = (in[i] = placeholder(t, i)) != NULL;
    int n = -1;
    if (ok) {
        gb_value st[GB_FUNCTION_MAX_STATICS];
        statics_of_sig(&t->cf->sig, st);
        gb_call_site site = gb__call_site(); /* the user code moves it */
        n = f->fn(f->user, in, nin, st, t->cf->sig.nstatic, out);
        gb__call_site_restore(site);
        ok = gb_ok();
    }
    if (ok && n < 0) {
        char w[256];
        gb__error(GB_ERR_VALUE, NULL, "%s returned -1 without an error", who(f, w, sizeof w));
        ok = false;
    }
    ok = ok && collect_outputs(t, out, n);
    free(in);
    free(out);
    return ok;
}

gb_concrete_function *gb__trace(gb_function *f, const gb_signature *sig) {
    gb_concrete_function *cf = concrete_new(f, sig);
    if (!cf) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory tracing '%s'", f->name);
        return NULL;
    }
    gb_trace t = {.function = f, .cf = cf, .graph = &cf->graph,
                  .first_trace = f->stats.traces == 0, .outer = gb__tl_trace};
    double t0 = gb__now_us();
    /* An error while the user's code traces names the function and the
     * call that started the trace, besides its own line; a branch or loop
     * body keeps its function's. */
    char context[320], site[160];
    const char *outer_context = NULL;
    if (!f->region) {
        gb__call_site_text(site, sizeof site);
        snprintf(context, sizeof context, "while tracing function '%s'%s%s", f->name,
                 site[0] ? " (called at " : "", site[0] ? site : "");
        if (site[0]) strncat(context, ")", sizeof context - strlen(context) - 1);
        outer_context = gb__error_context(context);
    }
    trace_saved saved = enter(&t);
    bool ok = run_traced(&t);
    leave(saved);
    if (!f->region) gb__error_context(outer_context);
    free(t.const_ids);
    free(t.const_nodes);
    for (int i = 0; ok && i < cf->graph.n; i++)
        if (cf->graph.nodes[i].flags & GB_NODE_DYNAMIC) cf->dynamic = true;
    ok = ok && gb__optimize(cf) && gb__plan_build(cf);
    if (ok) {
        cf->stats.arena_bytes = cf->plan->arena_bytes;
        cf->stats.naive_bytes = cf->plan->naive_bytes;
        cf->stats.inplace = cf->plan->inplace;
        /* Until a call's shapes say otherwise (function.c). */
        cf->stats.call_arena_bytes = cf->stats.arena_bytes;
        cf->stats.call_naive_bytes = cf->stats.naive_bytes;
    }
    cf->trace_ms = (gb__now_us() - t0) / 1000.0;
    if (!ok) {
        gb__concrete_free(cf);
        return NULL;
    }
    return cf;
}
