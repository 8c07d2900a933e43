/* nn/losses.c — Keras losses: MSE, MAE, Huber, sparse / categorical /
 * binary cross-entropy.
 *
 * Each loss computes per-sample values (the mean over the last axis for
 * elementwise losses, as Keras) and reduces them: mean over the batch
 * (Keras' SUM_OVER_BATCH_SIZE, the default), sum, or none. Shapes are
 * checked up front: y_true [B] against y_pred [B,1] is reconciled as Keras
 * does, anything else that differs is an error — a silent broadcast of
 * [B] against [B,1] into [B,B] is a classic wrong-loss bug.
 *
 * Probabilities (from_logits false) are clipped to [1e-7, 1 - 1e-7]
 * before the log, as Keras; the logits paths use the fused, stable ops.
 */
#include <stdio.h>

#include "nn/internal.h"

#define KERAS_EPSILON 1e-7

/* ---- shared checks and reductions ------------------------------------------------------ */

static bool inputs_ok(const char *loss, gb_tensor *a, gb_tensor *b) {
    if (a && b) return true;
    if (gb_ok()) gb__error(GB_ERR_VALUE, loss, "%s: %s is NULL", loss, a ? "y_pred" : "y_true");
    return false;
}

static bool float_pred(const char *loss, gb_tensor *y_pred) {
    if (gb_dtype_is_float(gb_tensor_dtype(y_pred))) return true;
    gb__error(GB_ERR_DTYPE, loss, "%s: predictions must be float32 or float64, got %s", loss,
              gb_dtype_name(gb_tensor_dtype(y_pred)));
    return false;
}

static void shape_mismatch(const char *loss, const char *what_true, gb_tensor *y_true,
                           gb_tensor *y_pred, const char *hint) {
    char a[128], b[128];
    gb__error(GB_ERR_SHAPE, loss, "%s: %s shape %s does not match predictions shape %s%s", loss,
              what_true, gb_shape_str(y_true, a, sizeof a), gb_shape_str(y_pred, b, sizeof b),
              hint);
}

static bool same_dims(int n, const int64_t *a, const int64_t *b) {
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* y_true in y_pred's shape and dtype; [B] vs [B,1] either way is fine. */
static gb_tensor *true_like_pred(const char *loss, gb_tensor *y_true, gb_tensor *y_pred) {
    int rt = gb_rank(y_true), rp = gb_rank(y_pred);
    const int64_t *st = gb_shape(y_true), *sp = gb_shape(y_pred);
    bool fits = (rt == rp && same_dims(rt, st, sp)) ||
                (rt == rp - 1 && sp[rp - 1] == 1 && same_dims(rt, st, sp)) ||
                (rp == rt - 1 && st[rt - 1] == 1 && same_dims(rp, st, sp));
    if (!fits) {
        shape_mismatch(loss, "y_true", y_true, y_pred, " (they must be equal)");
        return NULL;
    }
    if (rt != rp) y_true = gb_reshape(y_true, rp, sp);
    if (gb_tensor_dtype(y_true) != gb_tensor_dtype(y_pred))
        y_true = gb_cast(y_true, gb_tensor_dtype(y_pred));
    return y_true;
}

/* Keras' per-sample value of an elementwise loss: the mean over the last
 * axis (rank-1 inputs already hold one value per sample). */
static gb_tensor *per_sample_mean(gb_tensor *elementwise) {
    if (gb_rank(elementwise) < 2) return elementwise;
    return gb_reduce_mean(elementwise, GB_AXES(-1), false);
}

static gb_tensor *reduce(const char *loss, gb_tensor *per_sample, gb_reduction r) {
    if (!per_sample) return NULL;
    switch (r) {
    case GB_REDUCTION_NONE: return per_sample;
    case GB_REDUCTION_SUM: return gb_reduce_sum(per_sample, GB_ALL_AXES, false);
    case GB_REDUCTION_MEAN:
        /* Keras divides with divide_no_nan: an empty batch has loss 0. */
        if (gb_size(per_sample) == 0) return gb_scalar(gb_tensor_dtype(per_sample), 0);
        return gb_reduce_mean(per_sample, GB_ALL_AXES, false);
    }
    gb__error(GB_ERR_VALUE, loss, "%s: reduction %d is out of range", loss, (int)r);
    return NULL;
}

/* Elementwise losses (all of them equal per sample) reduce in one step
 * when the reduction is the mean: the mean of per-sample means is the
 * mean of all elements. */
static gb_tensor *reduce_elementwise(const char *loss, gb_tensor *e, gb_reduction r) {
    if (r == GB_REDUCTION_MEAN && gb_rank(e) >= 2 && gb_size(e) > 0)
        return gb_reduce_mean(e, GB_ALL_AXES, false);
    return reduce(loss, per_sample_mean(e), r);
}

static gb_tensor *clip_probabilities(gb_tensor *p) {
    gb_dtype dt = gb_tensor_dtype(p);
    return gb_minimum(gb_maximum(p, gb_scalar(dt, KERAS_EPSILON)), gb_scalar(dt, 1 - KERAS_EPSILON));
}

/* ---- regression losses ------------------------------------------------------------------ */

typedef gb_tensor *(*error_fn)(gb_tensor *err, double param);

static gb_tensor *squared(gb_tensor *err, double param) {
    (void)param;
    return gb_square(err);
}

static gb_tensor *absolute(gb_tensor *err, double param) {
    (void)param;
    return gb_abs(err);
}

/* 0.5 q^2 + delta (|e| - q) with q = min(|e|, delta): Huber without a
 * select, differentiable everywhere it should be. */
static gb_tensor *huber(gb_tensor *err, double delta) {
    gb_tensor *a = gb_abs(err);
    gb_tensor *q = gb_minimum(a, gb_scalar(gb_tensor_dtype(err), delta));
    return gb_add(gb_mul_scalar(gb_square(q), 0.5), gb_mul_scalar(gb_sub(a, q), delta));
}

static gb_tensor *regression_loss(const char *loss, error_fn f, double param, gb_tensor *y_true,
                                  gb_tensor *y_pred, gb_reduction r) {
    if (!inputs_ok(loss, y_true, y_pred) || !float_pred(loss, y_pred)) return NULL;
    gb_tensor *t = true_like_pred(loss, y_true, y_pred);
    return t ? reduce_elementwise(loss, f(gb_sub(y_pred, t), param), r) : NULL;
}

gb_tensor *gb_loss_mean_squared_error(gb_tensor *y_true, gb_tensor *y_pred, gb_reduction r) {
    return regression_loss("mean_squared_error", squared, 0, y_true, y_pred, r);
}

gb_tensor *gb_loss_mean_absolute_error(gb_tensor *y_true, gb_tensor *y_pred, gb_reduction r) {
    return regression_loss("mean_absolute_error", absolute, 0, y_true, y_pred, r);
}

gb_tensor *gb_loss_huber(gb_tensor *y_true, gb_tensor *y_pred, double delta, gb_reduction r) {
    if (!(delta > 0)) {
        gb__error(GB_ERR_VALUE, "huber", "huber: delta must be positive, got %g", delta);
        return NULL;
    }
    return regression_loss("huber", huber, delta, y_true, y_pred, r);
}

/* ---- cross-entropies ----------------------------------------------------------------------- */

/* Sparse labels fit predictions [..., C] when they are [...] or [..., 1]. */
static bool sparse_labels_fit(gb_tensor *labels, gb_tensor *y_pred) {
    int rl = gb_rank(labels), rp = gb_rank(y_pred);
    const int64_t *sl = gb_shape(labels), *sp = gb_shape(y_pred);
    if (rl == rp - 1) return same_dims(rl, sl, sp);
    return rl == rp && sl[rl - 1] == 1 && same_dims(rl - 1, sl, sp);
}

gb_tensor *gb_loss_sparse_categorical_crossentropy(gb_tensor *labels, gb_tensor *y_pred,
                                                   bool from_logits, gb_reduction r) {
    const char *loss = "sparse_categorical_crossentropy";
    if (!inputs_ok(loss, labels, y_pred) || !float_pred(loss, y_pred)) return NULL;
    int rp = gb_rank(y_pred);
    if (rp < 2) {
        char b[128];
        gb__error(GB_ERR_SHAPE, loss, "%s: predictions must be [batch, classes], got shape %s",
                  loss, gb_shape_str(y_pred, b, sizeof b));
        return NULL;
    }
    if (!sparse_labels_fit(labels, y_pred)) {
        char hint[160], d[128];
        snprintf(hint, sizeof hint, "; expected class indices of shape %s",
                 gb__shape_fmt(rp - 1, gb_shape(y_pred), d, sizeof d));
        shape_mismatch(loss, "labels", labels, y_pred, hint);
        return NULL;
    }
    gb_dtype lt = gb_tensor_dtype(labels);
    if (lt != GB_I32 && lt != GB_I64) labels = gb_cast(labels, GB_I64); /* Keras casts too */
    int64_t classes = gb_dim(y_pred, -1);
    /* The fused op takes [N, C] and [N]; other ranks go through views. N
     * is -1 (the reshape infers it): a traced batch may be unknown. */
    const int64_t rows = -1;
    gb_tensor *logits = from_logits ? y_pred : gb_log(clip_probabilities(y_pred));
    if (rp > 2) logits = gb_reshape(logits, 2, (const int64_t[]){rows, classes});
    if (gb_rank(labels) != 1) labels = gb_reshape(labels, 1, &rows);
    gb_tensor *per = gb_sparse_softmax_cross_entropy_with_logits(labels, logits);
    if (rp > 2) per = gb_reshape(per, rp - 1, gb_shape(y_pred));
    return reduce(loss, per, r);
}

gb_tensor *gb_loss_categorical_crossentropy(gb_tensor *y_true, gb_tensor *y_pred,
                                            bool from_logits, gb_reduction r) {
    const char *loss = "categorical_crossentropy";
    if (!inputs_ok(loss, y_true, y_pred) || !float_pred(loss, y_pred)) return NULL;
    int rp = gb_rank(y_pred);
    if (rp < 2 || !gb_same_shape(y_true, y_pred)) {
        shape_mismatch(loss, "y_true", y_true, y_pred,
                       " (one-hot targets [batch, classes] like the predictions)");
        return NULL;
    }
    if (gb_tensor_dtype(y_true) != gb_tensor_dtype(y_pred))
        y_true = gb_cast(y_true, gb_tensor_dtype(y_pred));
    gb_tensor *per;
    if (from_logits) {
        int64_t classes = gb_dim(y_pred, -1), rows = gb_size(y_pred) / (classes ? classes : 1);
        const int64_t flat[2] = {rows, classes};
        gb_tensor *t = rp > 2 ? gb_reshape(y_true, 2, flat) : y_true;
        gb_tensor *l = rp > 2 ? gb_reshape(y_pred, 2, flat) : y_pred;
        per = gb_softmax_cross_entropy_with_logits(t, l);
        if (rp > 2) per = gb_reshape(per, rp - 1, gb_shape(y_pred));
    } else {
        /* As Keras: renormalize, clip, then -sum(y log p) over classes. */
        gb_tensor *p = gb_div(y_pred, gb_reduce_sum(y_pred, GB_AXES(-1), true));
        gb_tensor *ll = gb_mul(y_true, gb_log(clip_probabilities(p)));
        per = gb_neg(gb_reduce_sum(ll, GB_AXES(-1), false));
    }
    return reduce(loss, per, r);
}

/* max(x, 0) - x z + log(1 + exp(-|x|)): TensorFlow's stable form. */
static gb_tensor *bce_from_logits(gb_tensor *z, gb_tensor *x) {
    gb_tensor *soft = gb_log1p(gb_exp(gb_neg(gb_abs(x))));
    return gb_add(gb_sub(gb_relu(x), gb_mul(x, z)), soft);
}

static gb_tensor *bce_from_probabilities(gb_tensor *z, gb_tensor *p) {
    gb_tensor *pc = clip_probabilities(p);
    gb_tensor *one_minus = gb_add_scalar(gb_neg(pc), 1.0);
    gb_tensor *pos = gb_mul(z, gb_log(pc));
    gb_tensor *neg = gb_mul(gb_add_scalar(gb_neg(z), 1.0), gb_log(one_minus));
    return gb_neg(gb_add(pos, neg));
}

gb_tensor *gb_loss_binary_crossentropy(gb_tensor *y_true, gb_tensor *y_pred, bool from_logits,
                                       gb_reduction r) {
    const char *loss = "binary_crossentropy";
    if (!inputs_ok(loss, y_true, y_pred) || !float_pred(loss, y_pred)) return NULL;
    gb_tensor *z = true_like_pred(loss, y_true, y_pred);
    if (!z) return NULL;
    gb_tensor *e = from_logits ? bce_from_logits(z, y_pred) : bce_from_probabilities(z, y_pred);
    return reduce_elementwise(loss, e, r);
}
