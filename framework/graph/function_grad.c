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

/* The trainable variables cf captured (the ones gradients flow to), all
 * of them, into a malloc'd *vars; their count, or -1 after an error. */
static int trainable_captures(const gb_concrete_function *cf, gb_variable ***vars) {
    *vars = malloc((size_t)(cf->ncaptures ? cf->ncaptures : 1) * sizeof **vars);
    if (!*vars) {
        gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory for %d captured variables",
                  cf->owner->name, cf->ncaptures);
        return -1;
    }
    int n = 0;
    for (int i = 0; i < cf->ncaptures; i++) {
        gb_variable *v = gb__variable_by_id(cf->captures[i]);
        if (v && gb_variable_trainable(v)) (*vars)[n++] = v;
    }
    return n;
}

/* Integer and bool inputs (labels, indices) get no gradient: the backward
 * graph returns the float inputs' only (a graph output cannot be NULL),
 * and the call's record gives the others NULL. */
static bool differentiable(const gb_concrete_function *cf, int i) {
    return gb_dtype_is_float(cf->sig.in[i].dtype);
}

static int float_inputs(const gb_concrete_function *cf) {
    int n = 0;
    for (int i = 0; i < cf->nin; i++) n += differentiable(cf, i);
    return n;
}

typedef struct backward_ctx {
    gb_concrete_function *forward;
} backward_ctx;

/* backward_body's gradient, with room for the forward outputs y and the
 * sources src: the float inputs, then the variables. */
static int backward_sources(gb_concrete_function *cf, gb_tensor *const *in, const gb_value *st,
                            int nst, gb_variable *const *vars, int nv, gb_tensor **y,
                            gb_source *src, gb_tensor **out) {
    gb_function *f = cf->owner;
    int nx = cf->nin, ny = cf->nout;
    gb_tape *tape = gb_tape_begin();
    for (int i = 0; i < nx; i++)
        if (differentiable(cf, i)) gb_tape_watch(tape, in[i]);
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
    int ns = 0;
    for (int i = 0; i < nx; i++)
        if (differentiable(cf, i)) src[ns++] = GB_SRC(in[i]);
    for (int j = 0; j < nv; j++) src[ns++] = GB_SRC_VAR(vars[j]);
    if (!gb_tape_gradient_ex(tape, y, ny, in + nx, src, ns, GB_UNCONNECTED_ZERO, out)) return -1;
    return ns;
}

/* The body of the backward graph: inputs are the forward inputs, then
 * the output gradients; outputs are d/d(float inputs), then
 * d/d(variables) (backward_of checked they fit in out). */
static int backward_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    gb_concrete_function *cf = ((backward_ctx *)user)->forward;
    (void)nin;
    gb_variable **vars;
    int nv = trainable_captures(cf, &vars);
    if (nv < 0) return -1;
    gb_tensor **y = calloc(GB_FUNCTION_MAX_OUTPUTS, sizeof *y); /* what fn may write */
    gb_source *src = malloc((size_t)(cf->nin + nv + 1) * sizeof *src);
    int ns = -1;
    if (y && src)
        ns = backward_sources(cf, in, st, nst, vars, nv, y, src, out);
    else
        gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory tracing its gradient",
                  cf->owner->name);
    free(vars);
    free(y);
    free(src);
    return ns;
}

/* Whether cf's backward graph fits a function's limits: it takes the
 * inputs and the outputs' gradients, and returns a gradient per float
 * input and per trainable variable. */
static bool backward_fits(const gb_concrete_function *cf) {
    gb_variable **vars;
    int nv = trainable_captures(cf, &vars);
    if (nv < 0) return false;
    free(vars);
    int nin = cf->nin + cf->nout, nout = float_inputs(cf) + nv;
    if (nin <= GB_FUNCTION_MAX_INPUTS && nout <= GB_FUNCTION_MAX_OUTPUTS) return true;
    gb__error(GB_ERR_VALUE, NULL,
              "the gradient of function '%s' would take %d tensors (its %d inputs and the "
              "gradients of its %d outputs) and return %d (for %d float inputs and %d trainable "
              "variables); a function takes at most %d and returns at most %d",
              cf->owner->name, nin, cf->nin, cf->nout, nout, float_inputs(cf), nv,
              GB_FUNCTION_MAX_INPUTS, GB_FUNCTION_MAX_OUTPUTS);
    return false;
}

/* Traces cf's backward graph on first use. */
static gb_concrete_function *backward_of(gb_concrete_function *cf) {
    if (cf->backward) return cf->backward;
    if (!backward_fits(cf)) return NULL;
    gb_function *bwf = calloc(1, sizeof *bwf);
    backward_ctx *ctx = calloc(1, sizeof *ctx);
    gb_signature sig = {0};
    if (!bwf || !ctx || !gb__sig_copy(&sig, &cf->sig, cf->nout)) {
        free(bwf);
        free(ctx);
        if (gb_ok()) gb__error(GB_ERR_MEMORY, NULL, "out of memory tracing a gradient");
        return NULL;
    }
    ctx->forward = cf;
    snprintf(bwf->name, sizeof bwf->name, "%.50s_grad", cf->owner->name);
    bwf->fn = backward_body;
    bwf->user = ctx;
    bwf->input_names = cf->owner->input_names;
    bwf->ninput_names = cf->owner->ninput_names;
    sig.nin = cf->nin + cf->nout;
    for (int k = 0; k < cf->nout; k++) {
        const gb_out_desc *d = gb__graph_desc(&cf->graph, cf->outputs[k]);
        sig.in[cf->nin + k] = (gb_tensor_spec){.dtype = d->dtype, .rank = d->rank};
        memcpy(sig.in[cf->nin + k].shape, d->shape, sizeof d->shape);
    }
    cf->backward = gb__trace(bwf, &sig);
    gb__sig_free(&sig);
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
    gb_tensor **args = malloc((size_t)(cf->nin + nout + 1) * sizeof *args);
    gb_tensor **grads = malloc((size_t)(bw->nout + 1) * sizeof *grads);
    bool ok = args && grads;
    if (!ok) gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory for its gradient",
                       cf->owner->name);
    for (int i = 0; ok && i < cf->nin; i++) args[i] = in[i];
    for (int k = 0; ok && k < nout; k++) args[cf->nin + k] = dys[k];
    ok = ok && gb__execute(bw, args, cf->nin + nout, grads) >= 0;
    /* The call recorded its variables' reads as inputs after its own: as
     * many as the backward returns gradients for (the trainable captures
     * of the call; a variable made untrainable since gets none). */
    for (int i = 0, k = 0; ok && i < nin; i++) /* inputs, then the variables' reads */
        dx[i] = (i >= cf->nin || differentiable(cf, i)) && k < bw->nout ? grads[k++] : NULL;
    free(args);
    free(grads);
    return ok;
}

int gb__call_recorded(gb_concrete_function *cf, gb_tensor *const *in, int nin, gb_tensor **out) {
    /* No output, nothing to differentiate: a plain run. */
    if (!gb__tl_recording || cf->nout == 0) return gb__execute(cf, in, nin, out);
    gb_variable **vars;
    int nv = trainable_captures(cf, &vars);
    if (nv < 0) return -1;
    gb_tensor **args = malloc((size_t)(nin + nv + 1) * sizeof *args);
    bool ok = args != NULL;
    if (!ok) gb__error(GB_ERR_MEMORY, NULL, "function '%s': out of memory for %d captured variables",
                       cf->owner->name, nv);
    for (int i = 0; ok && i < nin; i++) args[i] = in[i];
    for (int j = 0; ok && j < nv; j++) ok = (args[nin + j] = gb_variable_value(vars[j])) != NULL;
    ok = ok && gb_custom_gradient(cf->owner->name, forward_fn, backward_fn, cf, args, nin + nv, out,
                                  cf->nout);
    free(vars);
    free(args);
    return ok ? cf->nout : -1;
}
