/* writer/pr_curve.c — precision-recall curves (TensorBoard's pr_curves).
 *
 * What is stored is the confusion counts at each threshold, never the
 * predictions: a prediction p falls in bucket floor(p * (T - 1)) of T,
 * each bucket sums the weights of its positives and negatives, and the
 * counts at threshold i are the sums over buckets >= i (TP, FP) and the
 * rest (FN, TN). One pass over the predictions and one over the buckets,
 * on the caller's thread (the tensors may change after the call returns).
 * The arithmetic is in double, so counts of unit weights are exact.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

#define MAX_THRESHOLDS 10000

/* A column of a tensor: n elements from data at a stride (a class of an
 * [N, C] tensor, or a whole flat tensor with stride 1). */
typedef struct column {
    int dtype;
    const void *data;
    int64_t n, offset, stride;
} column;

static double at(const column *c, int64_t i) {
    return gb__element(c->dtype, c->data, c->offset + i * c->stride);
}

static column flat(const gb_tensor *t) {
    return (column){gb_tensor_dtype(t), gb_data(t), gb_size(t), 0, 1};
}

/* Checks predictions (and weights) before anything is counted. */
static gb_status check_values(const char *what, const char *tag, const column *pred,
                              const column *weights) {
    char msg[160];
    for (int64_t i = 0; i < pred->n; i++) {
        double p = at(pred, i);
        if (!(p >= 0 && p <= 1)) {   /* NaN fails too */
            snprintf(msg, sizeof msg, "prediction %lld is %g, outside [0, 1]", (long long)i, p);
            return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
        }
    }
    for (int64_t i = 0; weights && i < weights->n; i++) {
        double v = at(weights, i);
        if (!(v >= 0) || isinf(v)) {
            snprintf(msg, sizeof msg, "weight %lld is %g: weights must be finite and >= 0",
                     (long long)i, v);
            return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
        }
    }
    return GB_OK;
}

/* counts = TP[T], FP[T], TN[T], FN[T]; `positive(i)` is label i. weights:
 * NULL (1 each), one value, or one per prediction. */
static void count(const column *labels, const column *pred, const column *weights, int T,
                  double *counts, const int64_t *class_of, int64_t cls) {
    double *tp = counts, *fp = counts + T, *tn = counts + 2 * T, *fn = counts + 3 * T;
    memset(counts, 0, 4 * (size_t)T * sizeof *counts);
    /* Bucket sums first, in tp and fp. */
    for (int64_t i = 0; i < pred->n; i++) {
        int b = (int)floor(at(pred, i) * (T - 1));
        double wt = !weights ? 1 : weights->n == 1 ? at(weights, 0) : at(weights, i);
        bool positive = class_of ? class_of[i] == cls : at(labels, i) != 0;
        (positive ? tp : fp)[b] += wt;
    }
    for (int i = T - 2; i >= 0; i--) {   /* sums over buckets >= i */
        tp[i] += tp[i + 1];
        fp[i] += fp[i + 1];
    }
    for (int i = 0; i < T; i++) {
        fn[i] = tp[0] - tp[i];
        tn[i] = fp[0] - fp[i];
    }
}

static gb_status check_thresholds(const char *what, const char *tag, int T) {
    if (T >= 2 && T <= MAX_THRESHOLDS) return GB_OK;
    char msg[96];
    snprintf(msg, sizeof msg, "num_thresholds is %d; it must be in 2..%d", T, MAX_THRESHOLDS);
    return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
}

/* A curve of T thresholds with room for its counts, or NULL (recorded). */
static gb__pr_payload *new_payload(const char *what, const char *tag, int T, size_t *bytes) {
    *bytes = sizeof(gb__pr_payload) + 4 * (size_t)T * sizeof(double);
    gb__pr_payload *p = malloc(*bytes);
    if (!p) gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    else p->num_thresholds = T;
    return p;
}

static gb_status push_payload(gb_summary_writer *w, const char *what, const char *tag,
                              gb__pr_payload *p, size_t bytes, int64_t step, double wall_time) {
    gb__event ev = {.type = GB__EV_PR_CURVE, .step = step, .wall_time = wall_time, .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_PR_CURVE, ev, bytes);
}

static gb_status push_curve(gb_summary_writer *w, const char *what, const char *tag,
                            const column *labels, const column *pred, const column *weights,
                            int T, int64_t step, const int64_t *class_of, int64_t cls) {
    size_t bytes;
    gb__pr_payload *p = new_payload(what, tag, T, &bytes);
    if (!p) return GB_ERR_MEMORY;
    count(labels, pred, weights, T, p->counts, class_of, cls);
    return push_payload(w, what, tag, p, bytes, step, gb__wall_now());
}

gb_status gb__writer_pr_counts_at(gb_summary_writer *w, const char *tag, int64_t step,
                                  double wall_time, int num_thresholds, const double *counts) {
    static const char what[] = "gb_summary_pr_curve";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_thresholds(what, tag, num_thresholds);
    if (st != GB_OK) return st;
    size_t bytes;
    gb__pr_payload *p = new_payload(what, tag, num_thresholds, &bytes);
    if (!p) return GB_ERR_MEMORY;
    memcpy(p->counts, counts, 4 * (size_t)num_thresholds * sizeof *counts);
    return push_payload(w, what, tag, p, bytes, step, wall_time);
}

static bool is_floating(const gb_tensor *t) {
    gb_dtype dt = gb_tensor_dtype(t);
    return dt == GB_F32 || dt == GB_F64;
}

gb_status gb_summary_pr_curve(gb_summary_writer *w, const char *tag, const gb_tensor *labels,
                              const gb_tensor *predictions, int num_thresholds,
                              const gb_tensor *weights, int64_t step) {
    static const char what[] = "gb_summary_pr_curve";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_thresholds(what, tag, num_thresholds);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, labels);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, predictions);
    if (st == GB_OK && weights) st = gb__writer_check_tensor(what, tag, weights);
    if (st != GB_OK) return st;
    char msg[200];
    if (!is_floating(predictions))
        return gb__writer_fail(GB_ERR_DTYPE, what, tag, "predictions must be float32 or float64");
    if (gb_size(labels) != gb_size(predictions) || gb_size(predictions) == 0) {
        snprintf(msg, sizeof msg,
                 "labels have %lld elements and predictions %lld: they must match and be > 0",
                 (long long)gb_size(labels), (long long)gb_size(predictions));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    if (weights && gb_size(weights) != 1 && gb_size(weights) != gb_size(predictions)) {
        snprintf(msg, sizeof msg, "weights have %lld elements: give 1, or one per prediction (%lld)",
                 (long long)gb_size(weights), (long long)gb_size(predictions));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    column l = flat(labels), p = flat(predictions), wt = weights ? flat(weights) : (column){0};
    st = check_values(what, tag, &p, weights ? &wt : NULL);
    if (st != GB_OK) return st;
    return push_curve(w, what, tag, &l, &p, weights ? &wt : NULL, num_thresholds, step, NULL, 0);
}

/* ---- one curve per class ------------------------------------------------------------------- */

/* Each example's class, from labels [N] of indices or [N, C] one-hot. */
static gb_status classes_of(const char *what, const char *tag, const gb_tensor *labels,
                            int64_t n, int64_t c, int64_t *out) {
    char msg[200], shape[96];
    column l = flat(labels);
    if (gb_rank(labels) == 1 && gb_shape(labels)[0] == n) {
        if (is_floating(labels))
            return gb__writer_fail(GB_ERR_DTYPE, what, tag,
                                   "class indices [N] must be of an integer dtype");
        for (int64_t i = 0; i < n; i++) {
            double k = at(&l, i);
            if (!(k >= 0 && k < (double)c)) {
                snprintf(msg, sizeof msg, "label %lld is %g, not a class index in 0..%lld",
                         (long long)i, k, (long long)(c - 1));
                return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
            }
            out[i] = (int64_t)k;
        }
        return GB_OK;
    }
    if (gb_rank(labels) == 2 && gb_shape(labels)[0] == n && gb_shape(labels)[1] == c) {
        for (int64_t i = 0; i < n; i++) {
            int64_t ones = 0, others = 0;
            for (int64_t k = 0; k < c; k++) {
                double v = at(&l, i * c + k);
                if (v == 1) out[i] = k, ones++;
                else if (v != 0) others++;
            }
            if (ones != 1 || others) {
                snprintf(msg, sizeof msg, "one-hot label row %lld does not hold exactly one 1",
                         (long long)i);
                return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
            }
        }
        return GB_OK;
    }
    snprintf(msg, sizeof msg, "labels %s are neither [N] class indices nor [N, C] one-hot for "
             "probabilities [%lld, %lld]", gb_shape_str(labels, shape, sizeof shape),
             (long long)n, (long long)c);
    return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
}

gb_status gb_summary_pr_curves(gb_summary_writer *w, const char *tag, const gb_tensor *labels,
                               const gb_tensor *probabilities, int num_thresholds,
                               const char *const *class_names, int64_t step) {
    static const char what[] = "gb_summary_pr_curves";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_thresholds(what, tag, num_thresholds);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, labels);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, probabilities);
    if (st != GB_OK) return st;
    char shape[96], msg[200];
    if (gb_rank(probabilities) != 2 || gb_shape(probabilities)[0] == 0 ||
        gb_shape(probabilities)[1] == 0) {
        snprintf(msg, sizeof msg, "probabilities must be [N, C] with N, C > 0, got %s",
                 gb_shape_str(probabilities, shape, sizeof shape));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    if (!is_floating(probabilities))
        return gb__writer_fail(GB_ERR_DTYPE, what, tag, "probabilities must be float32 or float64");
    int64_t n = gb_shape(probabilities)[0], c = gb_shape(probabilities)[1];
    column all = flat(probabilities);
    st = check_values(what, tag, &all, NULL);
    int64_t *class_of = st == GB_OK ? malloc((size_t)n * sizeof *class_of) : NULL;
    if (st == GB_OK && !class_of) st = gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    if (st == GB_OK) st = classes_of(what, tag, labels, n, c, class_of);
    for (int64_t k = 0; st == GB_OK && k < c; k++) {
        char name[512];
        if (class_names && class_names[k])
            snprintf(name, sizeof name, "%s/%s", tag, class_names[k]);
        else
            snprintf(name, sizeof name, "%s/%lld", tag, (long long)k);
        column p = {all.dtype, all.data, n, k, c};
        st = push_curve(w, what, name, NULL, &p, NULL, num_thresholds, step, class_of, k);
    }
    free(class_of);
    return st;
}
