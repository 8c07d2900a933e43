/* graph/function_grad.c — differentiating through a call of a function.
 *
 * A tape outside a call sees the call as one op (as TensorFlow records a
 * PartitionedCall): inputs, outputs, and a backward that is itself a
 * traced graph, made once per concrete function and cached. The backward
 * graph takes the call's inputs and the gradients of its outputs, runs the
 * function's code again under a tape (recomputing the forward rather than
 * keeping its intermediates), and returns the gradient of every input and
 * of every trainable variable the function reads. Those variables reach
 * the outer tape as extra inputs of the call: each is read eagerly before
 * the call, so the outer tape links the gradient to its variable.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

/* The trainable variables cf captured (the ones gradients flow to). */
static int trainable_captures(const gb_concrete_function *cf, gb_variable **vars) {
    int n = 0;
    for (int i = 0; i < cf->ncaptures && n < GB_FUNCTION_MAX_INPUTS; i++) {
        gb_variable *v = gb__variable_by_id(cf->captures[i]);
        if (v && gb_variable_trainable(v)) vars[n++] = v;
    }
    return n;
}

/* Integer and bool inputs (labels, indices) get no gradient: the backward
 * graph returns the float inputs' only (a graph output cannot be NULL),
 * and the call's record gives the others NULL. */
static bool differentiable(const gb_concrete_function *cf, int i) {
    return gb_dtype_is_float(cf->sig.in[i].dtype);
}

typedef struct backward_ctx {
    gb_concrete_function *forward;
} backward_ctx;

/* The body of the backward graph: inputs are the forward inputs, then
 * the output gradients; outputs are d/d(float inputs), then
 * d/d(variables). */
static int backward_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    gb_concrete_function *cf = ((backward_ctx *)user)->forward;
    gb_function *f = cf->owner;
    int nx = cf->nin, ny = cf->nout;
    (void)nin;
    gb_variable *vars[GB_FUNCTION_MAX_INPUTS];
    int nv = trainable_captures(cf, vars);
    gb_tape *tape = gb_tape_begin();
    for (int i = 0; i < nx; i++)
        if (differentiable(cf, i)) gb_tape_watch(tape, in[i]);
    gb_tensor *y[GB_FUNCTION_MAX_OUTPUTS];
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int n = f->fn(f->user, in, nx, st, nst, y);
    gb__call_site_restore(site);
    gb_tape_end(tape);
    if (n != ny || !gb_ok()) {
        if (gb_ok())
            gb__error(GB_ERR_STATE, NULL,
                      "function '%s' returned %d outputs when traced for its gradient, %d before",
                      f->name, n, ny);
        return -1;
    }
    gb_source src[2 * GB_FUNCTION_MAX_INPUTS];
    int ns = 0;
    for (int i = 0; i < nx; i++)
        if (differentiable(cf, i)) src[ns++] = GB_SRC(in[i]);
    for (int j = 0; j < nv; j++) src[ns++] = GB_SRC_VAR(vars[j]);
    if (!gb_tape_gradient_ex(tape, y, ny, in + nx, src, ns, GB_UNCONNECTED_ZERO, out)) return -1;
    return ns;
}

/* Traces cf's backward graph on first use. */
static gb_concrete_function *backward_of(gb_concrete_function *cf) {
    if (cf->backward) return cf->backward;
    gb_function *bwf = calloc(1, sizeof *bwf);
    backward_ctx *ctx = calloc(1, sizeof *ctx);
    if (!bwf || !ctx) {
        free(bwf);
        free(ctx);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory tracing a gradient");
        return NULL;
    }
    ctx->forward = cf;
    snprintf(bwf->name, sizeof bwf->name, "%.50s_grad", cf->owner->name);
    bwf->fn = backward_body;
    bwf->user = ctx;
    bwf->input_names = cf->owner->input_names;
    bwf->ninput_names = cf->owner->ninput_names;
    gb_signature sig = cf->sig;
    sig.nin = cf->nin + cf->nout;
    for (int k = 0; k < cf->nout; k++) {
        const gb_out_desc *d = gb__graph_desc(&cf->graph, cf->outputs[k]);
        sig.in[cf->nin + k] = (gb_tensor_spec){.dtype = d->dtype, .rank = d->rank};
        memcpy(sig.in[cf->nin + k].shape, d->shape, sizeof d->shape);
    }
    cf->backward = gb__trace(bwf, &sig);
    if (cf->backward) {
        cf->backward->owned_function = bwf; /* freed with it */
        cf->backward->owned_ctx = ctx;
    } else {
        free(bwf);
        free(ctx);
    }
    return cf->backward;
}

/* gb_custom_gradient's forward and backward; user is the concrete
 * function (it outlives every record of its calls: a function is freed
 * after the tapes that saw it). */
static bool forward_fn(gb_tensor *const *in, int nin, gb_tensor **out, int nout, void *user) {
    gb_concrete_function *cf = user;
    (void)nin, (void)nout;
    return gb__execute(cf, in, cf->nin, out) >= 0;
}

/* dx for the call's inputs (x..., then the variable reads) from dys. */
static bool backward_fn(gb_tensor *const *in, int nin, gb_tensor *const *out,
                        gb_tensor *const *dys, int nout, gb_tensor **dx, void *user) {
    gb_concrete_function *cf = user;
    (void)out;
    gb_concrete_function *bw = backward_of(cf);
    if (!bw) return false;
    gb_tensor *args[GB_FUNCTION_MAX_INPUTS + GB_FUNCTION_MAX_OUTPUTS];
    for (int i = 0; i < cf->nin; i++) args[i] = in[i];
    for (int k = 0; k < nout; k++) args[cf->nin + k] = dys[k];
    gb_tensor *grads[2 * GB_FUNCTION_MAX_INPUTS];
    if (gb__execute(bw, args, cf->nin + nout, grads) < 0) return false;
    for (int i = 0, k = 0; i < nin; i++) /* inputs, then the variables' reads */
        dx[i] = i >= cf->nin || differentiable(cf, i) ? grads[k++] : NULL;
    return true;
}

int gb__call_recorded(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out) {
    if (!gb__tl_recording) return gb__execute(cf, in, nin, out);
    gb_variable *vars[GB_FUNCTION_MAX_INPUTS];
    int nv = trainable_captures(cf, vars);
    gb_tensor *args[2 * GB_FUNCTION_MAX_INPUTS];
    for (int i = 0; i < nin; i++) args[i] = in[i];
    for (int j = 0; j < nv; j++)
        if (!(args[nin + j] = gb_variable_value(vars[j]))) return -1;
    if (!gb_custom_gradient(cf->owner->name, forward_fn, backward_fn, cf, args, nin + nv, out,
                            cf->nout))
        return -1;
    return cf->nout;
}
