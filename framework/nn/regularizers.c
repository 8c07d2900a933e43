/* nn/regularizers.c — L1/L2 penalties, a model's regularization loss,
 * and Keras' add_loss: the losses a forward pass adds, collected.
 *
 * Weight penalties (kernel_regularizer, bias_regularizer) live on the
 * module that owns the weight and are summed over a model on demand, each
 * variable once, so a shared layer is penalized once however often it is
 * called (Keras does the same). Activity penalties and add_loss depend on
 * a call's outputs, so they go to the innermost open collection of this
 * thread: fit opens one around each step; outside any, they are dropped,
 * as in inference. The running sum is a tensor of the step's own scope,
 * symbolic while a step is traced, so the penalty is part of its graph.
 */
#include <math.h>
#include <stdlib.h>

#include "nn/internal.h"

enum { MAX_COLLECTIONS = 8 };

static _Thread_local gb_tensor *collected[MAX_COLLECTIONS];
static _Thread_local int depth;       /* open collections (deeper ones beyond the max count only) */

bool gb__regularizer_valid(gb_regularizer r, const char *who) {
    if (isfinite(r.l1) && isfinite(r.l2) && r.l1 >= 0 && r.l2 >= 0) return true;
    gb__error(GB_ERR_VALUE, NULL, "%s: a regularizer's l1 and l2 must be finite and >= 0, got %g and %g",
              who ? who : "regularizer", r.l1, r.l2);
    return false;
}

/* l1 * sum|t| + l2 * sum t^2 over the given axes (naxes 0: all). */
static gb_tensor *penalty(gb_regularizer r, gb_tensor *t, const int64_t *axes, int naxes) {
    gb_tensor *p = NULL;
    if (r.l1) p = gb_mul_scalar(gb_reduce_sum(gb_abs(t), axes, naxes, false), r.l1);
    if (r.l2) {
        gb_tensor *q = gb_mul_scalar(gb_reduce_sum(gb_square(t), axes, naxes, false), r.l2);
        p = p ? gb_add(p, q) : q;
    }
    return p;
}

gb_tensor *gb_regularizer_apply(gb_regularizer r, gb_tensor *t) {
    if (!gb_ok()) return NULL;
    if (!t) {
        gb__error(GB_ERR_VALUE, NULL, "gb_regularizer_apply: the tensor is NULL");
        return NULL;
    }
    if (!gb__regularizer_valid(r, "gb_regularizer_apply") || (!r.l1 && !r.l2)) return NULL;
    return penalty(r, t, GB_ALL_AXES);
}

/* Adds the penalties of m's weights not seen yet to *sum. */
static void add_penalties(gb_module *m, gb_variable **seen, int *nseen, int cap, gb_tensor **sum) {
    int n = 0;
    const gb__weight_penalty *p = gb__module_penalties(m, &n);
    for (int i = 0; i < n && gb_ok(); i++) {
        bool dup = false;
        for (int k = 0; k < *nseen; k++) dup |= seen[k] == p[i].v;
        if (dup) continue;
        if (*nseen < cap) seen[(*nseen)++] = p[i].v;
        gb_tensor *t = gb_regularizer_apply(p[i].r, gb_variable_value(p[i].v));
        if (t) *sum = *sum ? gb_add(*sum, t) : t;
    }
    for (int i = 0; i < gb_module_num_submodules(m); i++)
        add_penalties(gb_module_submodule(m, i), seen, nseen, cap, sum);
}

gb_tensor *gb_module_regularization_loss(gb_module *m) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_regularization_loss: NULL module");
        return NULL;
    }
    int nvars = 0;
    gb_module_variables(m, &nvars);
    gb_variable **seen = malloc((size_t)(nvars ? nvars : 1) * sizeof *seen);
    if (!seen) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_module_regularization_loss: out of memory");
        return NULL;
    }
    int nseen = 0;
    gb_tensor *sum = NULL;
    add_penalties(m, seen, &nseen, nvars, &sum);
    free(seen);
    return gb_ok() ? sum : NULL;
}

bool gb__nn_regularize(gb_module *m, gb_variable *kernel, gb_regularizer kr, gb_variable *bias,
                       gb_regularizer br) {
    return gb_module_regularize_weight(m, kernel, kr) &&
           (!bias || gb_module_regularize_weight(m, bias, br));
}

gb_module *gb__nn_with_activity(gb_module *m, gb_regularizer r) {
    if (gb_module_set_activity_regularizer(m, r)) return m;
    gb_module_free(m);
    return NULL;
}

/* ---- add_loss ---------------------------------------------------------------------------- */

void gb_losses_begin(void) {
    if (depth < MAX_COLLECTIONS) collected[depth] = NULL;
    depth++;
}

gb_tensor *gb_losses_end(void) {
    if (depth == 0) {
        gb__error(GB_ERR_STATE, NULL, "gb_losses_end: no collection is open (gb_losses_begin)");
        return NULL;
    }
    depth--;
    return depth < MAX_COLLECTIONS ? collected[depth] : NULL;
}

gb_tensor *gb__losses_so_far(void) {
    return depth > 0 && depth <= MAX_COLLECTIONS ? collected[depth - 1] : NULL;
}

bool gb_add_loss(gb_tensor *loss) {
    if (!gb_ok()) return false;
    if (!loss || gb_size(loss) != 1) {
        char b[64];
        gb__error(GB_ERR_SHAPE, NULL, "gb_add_loss: a loss is a scalar, got %s",
                  loss ? gb_shape_str(loss, b, sizeof b) : "NULL");
        return false;
    }
    if (depth == 0 || depth > MAX_COLLECTIONS) return true;
    gb_tensor *scalar = gb_rank(loss) ? gb_reshape(loss, 0, NULL) : loss;
    gb_tensor **sum = &collected[depth - 1];
    *sum = *sum ? gb_add(*sum, gb_cast(scalar, gb_tensor_dtype(*sum))) : scalar;
    return gb_ok();
}

/* penalty(y) / batch as the batch mean of each sample's penalty, which
 * needs no batch size: a traced step does not know it. */
bool gb__add_activity_loss(gb_regularizer r, gb_tensor *y) {
    if (depth == 0) return true;   /* no one collects: skip the arithmetic */
    int rank = gb_rank(y);
    if (rank == 0) return gb_add_loss(penalty(r, y, GB_ALL_AXES));
    if (rank == 1) y = gb_reshape(y, 2, (int64_t[]){-1, 1}), rank = 2;   /* one value per sample */
    int64_t axes[GB_MAX_RANK];
    for (int i = 1; i < rank; i++) axes[i - 1] = i;
    return gb_add_loss(gb_reduce_mean(penalty(r, y, axes, rank - 1), GB_ALL_AXES, false));
}
