/* gradcheck.h — finite-difference gradient checks, shared by the op tests.
 *
 * gc_check() compares the tape's gradient of L = sum(w * f(xs)) (w fixed
 * random weights, so every output element gets a distinct output
 * gradient) with central differences in float64, using PyTorch
 * gradcheck's defaults: eps 1e-6, atol 1e-5, rtol 1e-3. Integer inputs
 * (labels, indices) are passed through and not differentiated.
 * gc_compare() is its second half, for gradients computed some other way
 * (inside a traced function). gc_check_variable() does the same for a
 * layer's weight: the gradient of sum(w * f(user)) with respect to a
 * float64 variable, nudging each of its elements by assignment.
 *
 * Usage in a Check test:
 *     static gb_tensor *f(gb_tensor *const *x, int n, void *u) { return gb_exp(x[0]); }
 *     GC_ASSERT(f, xs, 1, NULL);
 */
#ifndef GB_TEST_GRADCHECK_H
#define GB_TEST_GRADCHECK_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

typedef gb_tensor *(*gc_fn)(gb_tensor *const *xs, int n, void *user);

#define GC_EPS 1e-6
#define GC_ATOL 1e-5
#define GC_RTOL 1e-3
#define GC_MAX_INPUTS 8

/* sum(w * y) computed in C, for the numeric side. */
static inline double gc_weighted_sum(const gb_tensor *y, const gb_tensor *w) {
    double s = 0;
    for (int64_t i = 0; i < gb_size(y); i++) s += gb_get(y, i) * gb_get(w, i);
    return s;
}

/* A copy of x with element j moved by delta (x must be float64). */
static inline gb_tensor *gc_nudged(const gb_tensor *x, int64_t j, double delta) {
    gb_tensor *c = gb_tensor_from(GB_F64, gb_data(x), gb_rank(x), gb_shape(x));
    if (c) ((double *)gb_data(c))[j] += delta;
    return c;
}

static inline double gc_eval(gc_fn f, gb_tensor *const *xs, int n, void *user, int which,
                             int64_t j, double delta, const gb_tensor *w) {
    gb_tensor *args[GC_MAX_INPUTS];
    for (int i = 0; i < n; i++) args[i] = i == which ? gc_nudged(xs[i], j, delta) : xs[i];
    gb_tensor *y = f(args, n, user);
    return y ? gc_weighted_sum(y, w) : NAN;
}

/* Compares analytic gradients of L = sum(w * f(xs)) — grads[i] for each
 * float input i, NULL meaning zero — with central differences; false with
 * the first disagreement described in msg. */
static inline bool gc_compare(gc_fn f, gb_tensor *const *xs, int n, void *user,
                              const gb_tensor *w, gb_tensor *const *grads, char *msg,
                              size_t msgn) {
    for (int i = 0; i < n; i++) {
        if (!gb_dtype_is_float(gb_tensor_dtype(xs[i]))) continue;
        for (int64_t j = 0; j < gb_size(xs[i]); j++) {
            gb_scope_begin();
            double hi = gc_eval(f, xs, n, user, i, j, GC_EPS, w);
            double lo = gc_eval(f, xs, n, user, i, j, -GC_EPS, w);
            gb_scope_end();
            double numeric = (hi - lo) / (2 * GC_EPS);
            double analytic = grads[i] ? gb_get(grads[i], j) : 0.0;
            if (!(fabs(analytic - numeric) <= GC_ATOL + GC_RTOL * fabs(numeric))) {
                snprintf(msg, msgn, "input %d element %lld: analytic %.9g vs numeric %.9g", i,
                         (long long)j, analytic, numeric);
                return false;
            }
        }
    }
    return true;
}

/* The fixed random weights w of L = sum(w * y). */
static inline gb_tensor *gc_weights(const gb_tensor *y) {
    return gb_random_uniform(GB_F64, gb_rank(y), gb_shape(y), 0.5, 1.5, 1234);
}

/* Returns true when the tape's gradients and numeric ones agree; otherwise
 * false with the first disagreement described in msg. */
static inline bool gc_check(gc_fn f, gb_tensor *const *xs, int n, void *user, char *msg,
                            size_t msgn) {
    msg[0] = '\0';
    gb_scope_begin();
    gb_tape *tape = gb_tape_begin();
    for (int i = 0; i < n; i++)
        if (gb_dtype_is_float(gb_tensor_dtype(xs[i]))) gb_tape_watch(tape, xs[i]);
    gb_tensor *y = f(xs, n, user);
    gb_tensor *w = y ? gc_weights(y) : NULL;
    gb_tensor *loss = y ? gb_reduce_sum(gb_mul(y, w), GB_ALL_AXES, false) : NULL;
    gb_tape_end(tape);
    /* Only float inputs are sources (integer ones would warn). */
    gb_tensor *grads[GC_MAX_INPUTS] = {0}, *srcs[GC_MAX_INPUTS], *got[GC_MAX_INPUTS];
    int nsrc = 0;
    for (int i = 0; i < n; i++)
        if (gb_dtype_is_float(gb_tensor_dtype(xs[i]))) srcs[nsrc++] = xs[i];
    if (loss && gb_tape_gradients(tape, loss, srcs, nsrc, got))
        for (int i = 0, k = 0; i < n; i++)
            if (gb_dtype_is_float(gb_tensor_dtype(xs[i]))) grads[i] = got[k++];
    if (!gb_ok() || !loss) {
        snprintf(msg, msgn, "forward/gradient failed: %s", gb_error_string());
        gb_scope_end();
        return false;
    }
    bool ok = gc_compare(f, xs, n, user, w, grads, msg, msgn);
    gb_scope_end();
    return ok;
}

/* The forward pass of a variable check: any function of the variable. */
typedef gb_tensor *(*gc_forward_fn)(void *user);

static inline bool gc_check_variable(gc_forward_fn f, void *user, gb_variable *v, char *msg,
                                     size_t msgn) {
    msg[0] = '\0';
    gb_scope_begin();
    gb_tensor *w0 = gb_variable_value(v); /* the scope keeps it past the assigns */
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch_variable(tape, v);
    gb_tensor *y = f(user);
    gb_tensor *w = y ? gc_weights(y) : NULL;
    gb_tensor *loss = y ? gb_reduce_sum(gb_mul(y, w), GB_ALL_AXES, false) : NULL;
    gb_tape_end(tape);
    gb_tensor *grad = NULL;
    if (!loss || !gb_tape_gradient_vars(tape, loss, &v, 1, &grad) || !grad) {
        snprintf(msg, msgn, "forward/gradient failed: %s", gb_ok() ? "no gradient" : gb_error_string());
        gb_scope_end();
        return false;
    }
    bool ok = true;
    for (int64_t j = 0; ok && j < gb_size(w0); j++) {
        double at[2];
        for (int s = 0; s < 2; s++) {
            gb_tensor *nudged = gc_nudged(w0, j, s ? GC_EPS : -GC_EPS);
            gb_tensor *ys = nudged && gb_variable_assign(v, nudged) ? f(user) : NULL;
            at[s] = ys ? gc_weighted_sum(ys, w) : NAN;
        }
        double numeric = (at[1] - at[0]) / (2 * GC_EPS), analytic = gb_get(grad, j);
        ok = fabs(analytic - numeric) <= GC_ATOL + GC_RTOL * fabs(numeric);
        if (!ok)
            snprintf(msg, msgn, "%s[%lld]: analytic %.9g vs numeric %.9g", gb_variable_name(v),
                     (long long)j, analytic, numeric);
    }
    gb_variable_assign(v, w0);
    gb_scope_end();
    return ok;
}

#define GC_ASSERT_VARIABLE(f, user, v)                                                \
    do {                                                                              \
        char gc_msg_[256];                                                            \
        bool gc_ok_ = gc_check_variable((f), (user), (v), gc_msg_, sizeof gc_msg_);   \
        ck_assert_msg(gc_ok_, "gradient check of %s failed: %s", #f, gc_msg_);       \
    } while (0)

/* First and second derivative of a scalar function at x, through two
 * nested tapes (the inner gradient recorded by the outer tape). */
typedef gb_tensor *(*gc_unary_fn)(gb_tensor *x);
static inline void gc_derivatives(gc_unary_fn f, gb_tensor *x, gb_tensor **dy, gb_tensor **d2y) {
    gb_tape *outer = gb_tape_begin();
    gb_tape_watch(outer, x);
    gb_tape *inner = gb_tape_begin();
    gb_tape_watch(inner, x);
    gb_tensor *y = f(x);
    gb_tape_end(inner);
    *dy = gb_tape_gradient(inner, y, x);
    gb_tape_end(outer);
    *d2y = gb_tape_gradient(outer, *dy, x);
}

#define GC_ASSERT(f, xs, n, user)                                                     \
    do {                                                                              \
        char gc_msg_[256];                                                            \
        bool gc_ok_ = gc_check((f), (xs), (n), (user), gc_msg_, sizeof gc_msg_);      \
        ck_assert_msg(gc_ok_, "gradient check of %s failed: %s", #f, gc_msg_);       \
    } while (0)

/* A float64 tensor of the given shape with values in [lo, hi) from seed. */
#define GC_INPUT(lo, hi, seed, ...) gb_random_uniform(GB_F64, GB_SHAPE(__VA_ARGS__), (lo), (hi), (seed))

/* Asserts t holds exactly the n values in `expected` within tol. */
#define ASSERT_VALUES(t, tol, ...)                                                      \
    do {                                                                                \
        const gb_tensor *t_ = (t); /* evaluated once: it may run an op */               \
        const double exp_[] = {__VA_ARGS__};                                            \
        int64_t n_ = (int64_t)(sizeof exp_ / sizeof exp_[0]);                           \
        ck_assert_msg(t_ != NULL, "tensor is NULL: %s", gb_error_string());             \
        ck_assert_int_eq(gb_size(t_), n_);                                              \
        for (int64_t i_ = 0; i_ < n_; i_++)                                             \
            ck_assert_msg(fabs(gb_get(t_, i_) - exp_[i_]) <= (tol),                      \
                          "element %lld: got %.9g, expected %.9g", (long long)i_,        \
                          gb_get(t_, i_), exp_[i_]);                                     \
    } while (0)

#endif
