/* nn/lstm_sequence.c — an LSTM's whole time loop as one custom-gradient
 * call, so that backpropagation through time does the work once per
 * sequence instead of once per step.
 *
 * Through the generic loop (recurrent.c) the tape differentiates every
 * step's ops: each step's slice of the input projection gets its
 * gradient padded to the whole projection, and each step's h @ R adds
 * its own [units, 4 units] gradient to R's. Here the forward pass is the
 * same arithmetic (unseen by tapes; one sigmoid over all four gates'
 * inputs, g's quarter unused, costs less than three slices and three
 * calls), it keeps every step's state and gate activations, and the
 * backward pass walks the steps back with the
 * gates' derivatives in closed form, then finishes with one matrix
 * product for R's gradient over all steps (H_prev^T dZ) and one stack of
 * the steps' dZ for the projection's. Its ops are recorded by outer
 * tapes and traced like any others, so it nests and runs in graphs.
 *
 * Keras' default LSTM only (tanh, sigmoid): recurrent.c uses it when the
 * call has no mask and no recurrent dropout, and keeps the generic loop
 * for the rest.
 */
#include <stdlib.h>

#include "nn/internal.h"

/* Step k of a [batch, T, n] tensor as [batch, n]. */
static gb_tensor *step_of(gb_tensor *seq, int64_t k) {
    int64_t n = gb_dim(seq, 2);
    return gb_reshape(gb_slice(seq, (int64_t[]){0, k, 0}, 3, (int64_t[]){-1, 1, n}, 3), 2,
                      (int64_t[]){-1, n});
}

/* Columns [k u, (k + 1) u) of [batch, 4u]. */
static gb_tensor *quarter(gb_tensor *z, int k, int64_t u) {
    return gb_slice(z, (int64_t[]){0, k * u}, 2, (int64_t[]){-1, u}, 2);
}

/* Inputs: xw [B, T, 4u] in the order processed, R [u, 4u], then h0 and
 * c0 [B, u] or nothing. Outputs: every h and c [B, T, u], then what the
 * backward pass reads: the sigmoid of every gate's input [B, T, 4u]
 * (one op per step; its g quarter unused) and the candidates g [B, T, u]. */
static bool forward(gb_tensor *const *in, int nin, gb_tensor **out, int nout, void *user) {
    (void)nout, (void)user;
    gb_tensor *xw = in[0], *rec = in[1], *h = nin > 2 ? in[2] : NULL, *c = nin > 2 ? in[3] : NULL;
    int64_t steps = gb_dim(xw, 1), u = gb_dim(rec, 0);
    gb_tensor **hs = malloc((size_t)(4 * steps) * sizeof *hs);
    if (!hs) {
        gb__error(GB_ERR_MEMORY, "LSTM", "LSTM: out of memory");
        return false;
    }
    gb_tensor **cs = hs + steps, **sig = cs + steps, **gs = sig + steps;
    for (int64_t k = 0; k < steps && gb_ok(); k++) {
        gb_tensor *z = step_of(xw, k);
        if (h) z = gb_add(z, gb_matmul(h, rec));
        sig[k] = gb_sigmoid(z);
        gs[k] = gb_tanh(quarter(z, 2, u));
        gb_tensor *ig = gb_mul(quarter(sig[k], 0, u), gs[k]);
        c = c ? gb_add(gb_mul(quarter(sig[k], 1, u), c), ig) : ig;
        h = gb_mul(quarter(sig[k], 3, u), gb_tanh(c));
        hs[k] = h, cs[k] = c;
    }
    bool ok = gb_ok();
    if (ok) {
        out[0] = gb_stack(hs, (int)steps, 1);
        out[1] = gb_stack(cs, (int)steps, 1);
        out[2] = gb_stack(sig, (int)steps, 1);
        out[3] = gb_stack(gs, (int)steps, 1);
    }
    free(hs);
    return ok && gb_ok();
}

/* a + b where either may be NULL (a missing gradient is zero). */
static gb_tensor *plus(gb_tensor *a, gb_tensor *b) { return !a ? b : !b ? a : gb_add(a, b); }

/* s' = s (1 - s) and tanh' = 1 - t^2, from the activations. */
static gb_tensor *sigmoid_grad(gb_tensor *d, gb_tensor *s, gb_tensor *one) {
    return gb_mul(d, gb_mul(s, gb_sub(one, s)));
}
static gb_tensor *tanh_grad(gb_tensor *d, gb_tensor *t, gb_tensor *one) {
    return gb_mul(d, gb_sub(one, gb_mul(t, t)));
}

static bool backward(gb_tensor *const *in, int nin, gb_tensor *const *out, gb_tensor *const *dys,
                     int nout, gb_tensor **dxs, void *user) {
    (void)nout, (void)user;
    gb_tensor *xw = in[0], *rec = in[1];
    gb_tensor *h0 = nin > 2 ? in[2] : NULL, *c0 = nin > 2 ? in[3] : NULL;
    gb_tensor *hs = out[0], *cs = out[1], *sig = out[2], *gs = out[3];
    int64_t steps = gb_dim(xw, 1), u = gb_dim(rec, 0);
    gb_tensor *one = gb_scalar(gb_tensor_dtype(xw), 1.0), *tc = gb_tanh(cs);
    gb_tensor **dz = malloc((size_t)steps * sizeof *dz);
    if (!dz) {
        gb__error(GB_ERR_MEMORY, "LSTM", "LSTM: out of memory");
        return false;
    }
    gb_tensor *dh_next = NULL, *dc_next = NULL;
    for (int64_t k = steps - 1; k >= 0 && gb_ok(); k--) {
        gb_tensor *a = step_of(sig, k), *t = step_of(tc, k), *g = step_of(gs, k);
        gb_tensor *i = quarter(a, 0, u), *f = quarter(a, 1, u), *o = quarter(a, 3, u);
        gb_tensor *dh = plus(dys[0] ? step_of(dys[0], k) : NULL, dh_next);
        gb_tensor *dc = plus(dys[1] ? step_of(dys[1], k) : NULL, dc_next);
        if (dh) dc = plus(dc, tanh_grad(gb_mul(dh, o), t, one));
        gb_tensor *c_prev = k > 0 ? step_of(cs, k - 1) : c0;
        gb_tensor *zero = gb_zeros_like(i);
        gb_tensor *parts[4] = {
            dc ? sigmoid_grad(gb_mul(dc, g), i, one) : zero,
            dc && c_prev ? sigmoid_grad(gb_mul(dc, c_prev), f, one) : zero,
            dc ? tanh_grad(gb_mul(dc, i), g, one) : zero,
            dh ? sigmoid_grad(gb_mul(dh, t), o, one) : zero,
        };
        dz[k] = gb_concat(parts, 4, 1);
        dh_next = gb_matmul_t(dz[k], rec, false, true);
        dc_next = dc ? gb_mul(dc, f) : NULL;
    }
    bool ok = gb_ok();
    if (ok) {
        gb_tensor *dZ = gb_stack(dz, (int)steps, 1);              /* [B, T, 4u] */
        dxs[0] = dZ;
        /* R's gradient over every step at once: the state each step read
         * (h0 or zeros first, then h_0 .. h_{T-2}) against its dz. */
        gb_tensor *first = h0 ? gb_expand_dims(h0, 1)
                              : gb_zeros_like(gb_slice(hs, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, 1, u}, 3));
        gb_tensor *prev = first;
        if (steps > 1) {
            gb_tensor *read = gb_slice(hs, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, steps - 1, u}, 3);
            prev = gb_concat((gb_tensor *[]){first, read}, 2, 1);
        }
        dxs[1] = gb_matmul_t(gb_reshape(prev, 2, (int64_t[]){-1, u}), gb_reshape(dZ, 2, (int64_t[]){-1, 4 * u}),
                             true, false);
        if (h0) {
            dxs[2] = dh_next;
            dxs[3] = dc_next ? dc_next : gb_zeros_like(c0);
        }
    }
    free(dz);
    return ok && gb_ok();
}

bool gb__lstm_sequence(gb_tensor *xw, gb_tensor *rec, gb_tensor *h0, gb_tensor *c0, gb_tensor **hs,
                       gb_tensor **cs) {
    gb_tensor *in[4] = {xw, rec, h0, c0}, *out[4];
    if (!gb_custom_gradient("LSTM", forward, backward, NULL, in, h0 ? 4 : 2, out, 4)) return false;
    *hs = out[0];
    *cs = out[1];
    return true;
}
