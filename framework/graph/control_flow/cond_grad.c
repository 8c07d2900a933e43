/* graph/control_flow/cond_grad.c — the gradient of an If node.
 *
 * The gradient follows the branch taken: it is itself a gb_cond on the
 * same predicate, whose branches are the two branches' vector-Jacobian
 * products. Each re-runs its branch's C function under a tape of its own
 * on the same inputs (recomputing rather than keeping the forward's
 * intermediates, as function_grad.c does for calls) and returns the
 * gradient of every float input given the float outputs' gradients. Both
 * return the same dtypes and shapes — the inputs' — so they merge
 * exactly; written with the public ops, the gradient traces, and its own
 * gradient is again a cond.
 */
#include <stdio.h>

#include "graph/control_flow/internal.h"

static bool is_float(const gb_tensor_spec *s) { return gb_dtype_is_float(s->dtype); }

/* One branch's VJP: inputs are the branch's inputs, then the gradient of
 * each float output; outputs are the gradients of the float inputs. */
static int branch_vjp(const gb_cf_branch *b, gb_tensor *const *in, gb_tensor **out) {
    const gb_concrete_function *cf = b->cf;
    int nx = cf->nin;
    gb_tape *tape = gb_tape_begin();
    gb_source src[GB_CF_MAX_INPUTS];
    int ns = 0;
    for (int i = 0; i < nx; i++)
        if (is_float(&cf->sig.in[i])) {
            gb_tape_watch(tape, in[i]);
            src[ns++] = GB_SRC(in[i]);
        }
    gb_tensor *y[GB_CF_OUTPUT_ROOM] = {0};
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int ny = b->fn(b->user, in, nx, y);
    gb__call_site_restore(site);
    gb_tape_end(tape);
    if (!gb_ok()) return -1;
    if (ny != cf->nout) {
        gb__error(GB_ERR_STATE, "If",
                  "'%s' returned %d outputs when run again for its gradient, %d when traced",
                  b->region, ny, cf->nout);
        return -1;
    }
    gb_tensor *targets[GB_MAX_OUTPUTS], *dys[GB_MAX_OUTPUTS];
    int nt = 0;
    for (int k = 0; k < ny; k++)
        if (gb_dtype_is_float(gb__cf_output(b, k)->dtype)) {
            targets[nt] = y[k];
            dys[nt] = in[nx + nt];
            nt++;
        }
    if (!gb_tape_gradient_ex(tape, targets, nt, dys, src, ns, GB_UNCONNECTED_ZERO, out)) return -1;
    return ns;
}

static int vjp_true(void *user, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)n;
    return branch_vjp(&((gb_cf_record *)user)->sub[0], in, out);
}

static int vjp_false(void *user, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)n;
    return branch_vjp(&((gb_cf_record *)user)->sub[1], in, out);
}

bool gb__if_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_op_call c = {GB_OP_IF, gb_op_table[GB_OP_IF], ctx->inputs, ctx->nin, ctx->attrs, NULL};
    gb_cf_record *r = gb__cf_record_of(&c);
    if (!r) return false;
    const gb_concrete_function *cf = r->sub[0].cf;
    int nx = ctx->nin - 1, nargs = nx;
    gb_tensor *args[GB_CF_MAX_INPUTS + GB_MAX_OUTPUTS];
    for (int i = 0; i < nx; i++) args[i] = ctx->inputs[1 + i];
    for (int k = 0; k < ctx->nout; k++)
        if (gb_dtype_is_float(r->out[k].dtype)) args[nargs++] = ctx->dys[k];
    for (int i = 0; i < ctx->nin; i++) dx[i] = NULL;
    int nfloat = 0;
    for (int i = 0; i < nx; i++) nfloat += is_float(&cf->sig.in[i]);
    if (!nfloat) return true;
    if (nargs > GB_CF_MAX_INPUTS) {
        gb__error(GB_ERR_VALUE, "If", "the gradient of '%s' would take %d inputs (at most %d)",
                  r->name, nargs, GB_CF_MAX_INPUTS);
        return false;
    }
    gb_tensor *grads[GB_CF_MAX_INPUTS];
    gb_cond_options o = {.user = r, .name = "cond"};
    if (gb_cond(ctx->inputs[0], vjp_true, vjp_false, args, nargs, &o, grads) != nfloat) return false;
    for (int i = 0, k = 0; i < nx; i++)
        if (is_float(&cf->sig.in[i])) dx[1 + i] = grads[k++];
    return true;
}
