/* optim/clipping.c — gradient clipping before an update (Keras' clipnorm,
 * global_clipnorm and clipvalue; gb_gradient_clipping in gb_optim.h).
 *
 * Written with ops, not a kernel of its own: in a traced train step the
 * clipping is nodes of the graph (the fusion pass folds the scaling into
 * one elementwise pass), its gradient-norm reductions are visible to the
 * numerics checks, and eager and traced clip alike, bit for bit.
 */
#include <math.h>

#include "gb_ops.h"
#include "optim/internal.h"

/* sum(g^2) over every element, as a scalar of g's dtype. */
static gb_tensor *sum_of_squares(gb_tensor *g) { return gb_reduce_sum(gb_square(g), NULL, 0, false); }

/* c / max(norm, c): 1 while the norm is within c. */
static gb_tensor *scale_for(gb_tensor *norm, double c) {
    gb_tensor *limit = gb_scalar(gb_tensor_dtype(norm), c);
    return gb_div(limit, gb_maximum(norm, limit));
}

static bool clip_each_norm(double c, gb_tensor **grads, int n) {
    for (int i = 0; i < n; i++)
        if (grads[i]) grads[i] = gb_mul(grads[i], scale_for(gb_sqrt(sum_of_squares(grads[i])), c));
    return gb_ok();
}

static bool clip_global_norm(double c, gb_tensor **grads, int n) {
    gb_tensor *total = NULL;
    for (int i = 0; i < n; i++) {
        if (!grads[i]) continue;
        /* Summed in float64 whatever the gradients' dtypes, as one norm. */
        gb_tensor *s = gb_cast(sum_of_squares(grads[i]), GB_F64);
        total = total ? gb_add(total, s) : s;
    }
    if (!total) return true;
    gb_tensor *norm = gb_sqrt(total);
    /* + (norm - norm): NaN when the norm is not finite (tf.clip_by_global_norm). */
    gb_tensor *scale = gb_add(scale_for(norm, c), gb_sub(norm, norm));
    for (int i = 0; i < n; i++)
        if (grads[i]) grads[i] = gb_mul(grads[i], gb_cast(scale, gb_tensor_dtype(grads[i])));
    return gb_ok();
}

static bool clip_each_value(double c, gb_tensor **grads, int n) {
    for (int i = 0; i < n; i++) {
        if (!grads[i]) continue;
        gb_dtype dt = gb_tensor_dtype(grads[i]);
        grads[i] = gb_minimum(gb_maximum(grads[i], gb_scalar(dt, -c)), gb_scalar(dt, c));
    }
    return gb_ok();
}

bool gb__optim_clip(const gb_gradient_clipping *clipping, gb_tensor **grads, int n) {
    if (clipping->clipnorm > 0) return clip_each_norm(clipping->clipnorm, grads, n);
    if (clipping->global_clipnorm > 0) return clip_global_norm(clipping->global_clipnorm, grads, n);
    if (clipping->clipvalue > 0) return clip_each_value(clipping->clipvalue, grads, n);
    return true;
}

bool gb__optim_clipping_valid(const gb_gradient_clipping *c, const char *who) {
    const double v[3] = {c->clipnorm, c->global_clipnorm, c->clipvalue};
    static const char *const names[3] = {"clipnorm", "global_clipnorm", "clipvalue"};
    int set = 0;
    for (int k = 0; k < 3; k++) {
        if (!(v[k] >= 0) || isinf(v[k])) {
            gb__error(GB_ERR_VALUE, NULL, "%s: %s must be a finite number >= 0 (0: off), got %g",
                      who, names[k], v[k]);
            return false;
        }
        set += v[k] > 0;
    }
    if (set > 1) {
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: only one of clipnorm, global_clipnorm and clipvalue can be set, got %g, "
                  "%g and %g",
                  who, v[0], v[1], v[2]);
        return false;
    }
    return true;
}
