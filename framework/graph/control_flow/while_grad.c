/* graph/control_flow/while_grad.c — the gradient of a While node.
 *
 * The gradient is the loop run backwards: a gb_while_loop from the last
 * iteration to the first whose body is the vector-Jacobian product of the
 * forward body. Iteration j re-runs the forward body's C function under a
 * tape on the loop variables' values as iteration j began — read from
 * the stacks the forward node kept (variables the body passes through
 * unchanged are their entry values) — and maps the gradients of its
 * outputs to those of its inputs. Its loop variables are the counter j,
 * one gradient per float loop variable (starting from the gradients of
 * the loop's outputs), and the stacks and entry values, passed through.
 * Integer loop variables (counters) get no gradient.
 */
#include <stdio.h>

#include "graph/control_flow/internal.h"

/* The backward loop's variables: [0] the iteration j, then the gradient
 * of each float forward variable, then each forward variable's source
 * (its stack, or its entry value). */
typedef struct layout {
    int nfloat;
    int grad_of[GB_MAX_OUTPUTS];   /* forward variable k's gradient slot, -1 for none */
} layout;

static layout layout_of(const gb_cf_record *r) {
    layout L = {0};
    for (int k = 0; k < r->nvars; k++)
        L.grad_of[k] = gb_dtype_is_float(r->out[k].dtype) ? 1 + L.nfloat++ : -1;
    return L;
}

static int rev_cond(void *user, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)user, (void)n;
    out[0] = gb_greater_equal(v[0], gb_scalar(GB_I64, 0));
    return 1;
}

/* Iteration j of the backward loop: the forward body's VJP at j. */
static int rev_body(void *user, gb_tensor *const *v, int nv, gb_tensor **out) {
    const gb_cf_record *r = user;
    const gb_cf_branch *body = &r->sub[1];
    layout L = layout_of(r);
    int n = r->nvars, src0 = 1 + L.nfloat;
    gb_tensor *x[GB_MAX_OUTPUTS];
    for (int k = 0; k < n; k++)
        x[k] = r->stacked[k] ? gb_tensor_array_read(v[src0 + k], v[0]) : v[src0 + k];
    gb_tape *tape = gb_tape_begin();
    gb_source src[GB_MAX_OUTPUTS];
    for (int k = 0; k < n; k++)
        if (L.grad_of[k] >= 0) {
            gb_tape_watch(tape, x[k]);
            src[L.grad_of[k] - 1] = GB_SRC(x[k]);
        }
    gb_tensor *y[GB_CF_OUTPUT_ROOM] = {0};
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int ny = body->fn(body->user, x, n, y);
    gb__call_site_restore(site);
    gb_tape_end(tape);
    if (!gb_ok()) return -1;
    if (ny != n) {
        gb__error(GB_ERR_STATE, "While",
                  "'%s' returned %d outputs when run again for its gradient, %d when traced",
                  body->region, ny, n);
        return -1;
    }
    gb_tensor *targets[GB_MAX_OUTPUTS], *dys[GB_MAX_OUTPUTS];
    for (int k = 0; k < n; k++)
        if (L.grad_of[k] >= 0) {
            targets[L.grad_of[k] - 1] = y[k];
            dys[L.grad_of[k] - 1] = v[L.grad_of[k]];
        }
    if (!gb_tape_gradient_ex(tape, targets, L.nfloat, dys, src, L.nfloat, GB_UNCONNECTED_ZERO,
                             out + 1))
        return -1;
    out[0] = gb_sub(v[0], gb_scalar(GB_I64, 1));
    for (int k = src0; k < nv; k++) out[k] = v[k];
    return nv;
}

bool gb__while_grad(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_op_call c = {GB_OP_WHILE, gb_op_table[GB_OP_WHILE], ctx->inputs, ctx->nin, ctx->attrs, NULL};
    gb_cf_record *r = gb__cf_record_of(&c);
    if (!r) return false;
    for (int i = 0; i < ctx->nin; i++) dx[i] = NULL;
    if (!r->stacks) {
        gb__error(GB_ERR_INTERNAL, "While",
                  "the gradient of '%s' needs its loop variables' values at each iteration, "
                  "which it keeps only when a GradientTape records it as it is traced",
                  r->name);
        return false;
    }
    layout L = layout_of(r);
    int n = r->nvars, nv = 1 + L.nfloat + n;
    if (!L.nfloat) return true;
    if (nv > GB_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, "While",
                  "the gradient of '%s' needs %d loop variables (at most %d): use fewer loop "
                  "variables",
                  r->name, nv, GB_MAX_OUTPUTS);
        return false;
    }
    gb_tensor *v[GB_MAX_OUTPUTS];
    gb_tensor *count = ctx->outputs[n + r->nstacked];
    v[0] = gb_sub(count, gb_scalar(GB_I64, 1));
    for (int k = 0, s = n; k < n; k++) {
        if (L.grad_of[k] >= 0) v[L.grad_of[k]] = ctx->dys[k];
        v[1 + L.nfloat + k] = r->stacked[k] ? ctx->outputs[s++] : ctx->inputs[k];
    }
    char names[GB_MAX_OUTPUTS][32];
    const char *name_ptrs[GB_MAX_OUTPUTS] = {"iteration"};
    for (int k = 0; k < n; k++) {
        if (L.grad_of[k] >= 0) {
            snprintf(names[L.grad_of[k]], sizeof names[0], "grad_%.24s", r->var_names[k]);
            name_ptrs[L.grad_of[k]] = names[L.grad_of[k]];
        }
        snprintf(names[1 + L.nfloat + k], sizeof names[0], "%s_%.24s",
                 r->stacked[k] ? "stack" : "entry", r->var_names[k]);
        name_ptrs[1 + L.nfloat + k] = names[1 + L.nfloat + k];
    }
    gb_while_options o = {.user = r, .name = "while", .names = name_ptrs, .nnames = nv};
    gb_tensor *res[GB_MAX_OUTPUTS];
    if (gb_while_loop(rev_cond, rev_body, v, nv, &o, res) != nv) return false;
    for (int k = 0; k < n; k++)
        if (L.grad_of[k] >= 0) dx[k] = res[L.grad_of[k]];
    return true;
}
