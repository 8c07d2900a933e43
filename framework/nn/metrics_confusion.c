/* nn/metrics_confusion.c — metrics over confusion counts: Precision,
 * Recall (one threshold) and AUC (many), as keras.metrics computes them.
 *
 * All three count, at each threshold, the weighted true and false
 * positives and negatives of every element: a label is positive when
 * nonzero, a prediction when it is greater than the threshold. One
 * counting function serves them: each element is placed by how many
 * (ascending) thresholds it exceeds, then cumulative sums give the counts
 * at every threshold, so AUC's 200 thresholds cost a binary search per
 * element, not 200 comparisons.
 */
#include <math.h>
#include <stdlib.h>

#include "nn/internal.h"

enum { TP, FP, TN, FN, NCOUNTS };

/* ---- counting ------------------------------------------------------------------------------ */

/* How sample weights map to elements: one per element, or one per
 * sample (dim 0 of y_pred) spread over the sample's elements. */
static bool weights_fit(const gb_metric *m, gb_tensor *w, gb_tensor *y_pred, int64_t *per) {
    int64_t n = gb_size(y_pred), rows = gb_rank(y_pred) ? gb_dim(y_pred, 0) : 1;
    *per = 1;
    if (!w || gb_size(w) == 1 || gb_size(w) == n) return true;
    if (rows > 0 && gb_size(w) == rows) {
        *per = n / rows;
        return true;
    }
    char a[128], b[128];
    gb_metric_error(m, GB_ERR_SHAPE,
                    "sample_weight shape %s fits neither one weight per sample nor one per "
                    "element of predictions shape %s",
                    gb_shape_str(w, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
    return false;
}

/* The number of thresholds (ascending) that p exceeds. */
static int exceeded(const double *thr, int nthr, double p) {
    int lo = 0, hi = nthr;   /* thr[< lo] < p, thr[>= hi] >= p */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p > thr[mid]) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Adds one update's weighted counts to counts[NCOUNTS][nthr]. */
static bool count(gb_metric *m, const double *thr, int nthr, bool from_logits, gb_tensor *y_true,
                  gb_tensor *y_pred, gb_tensor *w, double *counts) {
    int64_t n = gb_size(y_pred), per;
    if (gb_size(y_true) != n) {
        char a[128], b[128];
        gb_metric_error(m, GB_ERR_SHAPE,
                        "y_true shape %s does not match predictions shape %s (one label per "
                        "prediction)",
                        gb_shape_str(y_true, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    if (!weights_fit(m, w, y_pred, &per)) return false;
    /* pos[k], neg[k]: weight of positive / negative labels exceeding k thresholds. */
    double *pos = calloc(2 * ((size_t)nthr + 1), sizeof *pos), *neg = pos + nthr + 1;
    if (!pos) {
        gb_metric_error(m, GB_ERR_MEMORY, "out of memory for %d thresholds", nthr);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        double p = gb_get(y_pred, i);
        if (from_logits) p = 1.0 / (1.0 + exp(-p));
        double wi = w ? gb_get(w, gb_size(w) == 1 ? 0 : i / per) : 1.0;
        (gb_get(y_true, i) != 0 ? pos : neg)[exceeded(thr, nthr, p)] += wi;
    }
    /* At threshold j the prediction is positive for buckets k > j. */
    double above_pos = 0, above_neg = 0, total_pos = 0, total_neg = 0;
    for (int k = 0; k <= nthr; k++) total_pos += pos[k], total_neg += neg[k];
    for (int j = nthr - 1; j >= 0; j--) {
        above_pos += pos[j + 1];
        above_neg += neg[j + 1];
        counts[TP * nthr + j] += above_pos;
        counts[FP * nthr + j] += above_neg;
        counts[FN * nthr + j] += total_pos - above_pos;
        counts[TN * nthr + j] += total_neg - above_neg;
    }
    free(pos);
    return true;
}

static double ratio(double a, double b) { return b != 0 ? a / b : 0.0; }   /* divide_no_nan */

/* ---- Precision and Recall ------------------------------------------------------------------ */

typedef struct threshold_config {
    double threshold;
} threshold_config;

static bool one_threshold_update(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
                                 gb_tensor *w) {
    const threshold_config *c = gb_metric_user(m);
    return count(m, &c->threshold, 1, false, y_true, y_pred, w, state);
}

static double precision_result(const gb_metric *m, const void *state) {
    (void)m;
    const double *c = state;
    return ratio(c[TP], c[TP] + c[FP]);
}

static double recall_result(const gb_metric *m, const void *state) {
    (void)m;
    const double *c = state;
    return ratio(c[TP], c[TP] + c[FN]);
}

static const gb_metric_type precision_type = {
    .class_name = "Precision", .default_name = "precision", .state_size = NCOUNTS * sizeof(double),
    .update_state = one_threshold_update, .result = precision_result, .state_is_sums = true};
static const gb_metric_type recall_type = {
    .class_name = "Recall", .default_name = "recall", .state_size = NCOUNTS * sizeof(double),
    .update_state = one_threshold_update, .result = recall_result, .state_is_sums = true};

static gb_metric *one_threshold_new(const gb_metric_type *type, const char *name,
                                    double threshold) {
    if (!(threshold >= 0 && threshold <= 1)) {
        gb__error(GB_ERR_VALUE, type->class_name, "%s: the threshold must be in [0, 1], got %g",
                  type->class_name, threshold);
        return NULL;
    }
    threshold_config c = {threshold};
    return gb__metric_create(type, name, type->state_size, &c, sizeof c);
}

gb_metric *gb_metric_precision_new(const char *name, double threshold) {
    return one_threshold_new(&precision_type, name, threshold);
}

gb_metric *gb_metric_recall_new(const char *name, double threshold) {
    return one_threshold_new(&recall_type, name, threshold);
}

/* ---- AUC ---------------------------------------------------------------------------------------- */

enum { AUC_MAX_THRESHOLDS = 100000 };

/* The options, then the thresholds (num_thresholds doubles). */
typedef struct auc_config {
    gb_auc_options o;
    double thr[];
} auc_config;

static bool auc_update(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
                       gb_tensor *w) {
    const auc_config *c = gb_metric_user(m);
    return count(m, c->thr, c->o.num_thresholds, c->o.from_logits, y_true, y_pred, w, state);
}

/* Davis & Goadrich's interpolation of the PR curve between thresholds
 * (Keras' interpolate_pr_auc): precision varies along the segment as
 * tp / (tp + fp) with tp linear in tp + fp. */
static double pr_interpolated(const double *tp, const double *fp, const double *fn, int n) {
    double sum = 0;
    for (int i = 0; i + 1 < n; i++) {
        double dtp = tp[i] - tp[i + 1];
        double p0 = tp[i] + fp[i], p1 = tp[i + 1] + fp[i + 1];
        double slope = ratio(dtp, fmax(p0 - p1, 0));
        double intercept = tp[i + 1] - slope * p1;
        double p_ratio = p0 > 0 && p1 > 0 ? ratio(p0, fmax(p1, 0)) : 1.0;
        sum += ratio(slope * (dtp + intercept * log(p_ratio)), fmax(tp[i + 1] + fn[i + 1], 0));
    }
    return sum;
}

static double auc_result(const gb_metric *m, const void *state) {
    const auc_config *c = gb_metric_user(m);
    int n = c->o.num_thresholds;
    const double *s = state, *tp = s + TP * n, *fp = s + FP * n, *tn = s + TN * n,
                 *fn = s + FN * n;
    if (c->o.curve == GB_AUC_PR && c->o.summation == GB_AUC_INTERPOLATION)
        return pr_interpolated(tp, fp, fn, n);
    double sum = 0, x0 = 0, y0 = 0;
    for (int i = 0; i < n; i++) {
        double recall = ratio(tp[i], tp[i] + fn[i]);
        double x = c->o.curve == GB_AUC_ROC ? ratio(fp[i], fp[i] + tn[i]) : recall;
        double y = c->o.curve == GB_AUC_ROC ? recall : ratio(tp[i], tp[i] + fp[i]);
        if (i > 0) {
            double h = c->o.summation == GB_AUC_MINORING   ? fmin(y0, y)
                       : c->o.summation == GB_AUC_MAJORING ? fmax(y0, y)
                                                           : (y0 + y) / 2;
            sum += (x0 - x) * h;
        }
        x0 = x, y0 = y;
    }
    return sum;
}

static const gb_metric_type auc_type = {
    .class_name = "AUC", .default_name = "auc", .update_state = auc_update, .result = auc_result,
    .state_is_sums = true};

gb_metric *gb_metric_auc_new(const char *name, const gb_auc_options *options) {
    gb_auc_options o = options ? *options : (gb_auc_options){0};
    if (o.num_thresholds == 0) o.num_thresholds = 200;
    const char *why = o.num_thresholds < 2 || o.num_thresholds > AUC_MAX_THRESHOLDS
                          ? "num_thresholds must be 2 to 100000"
                      : (unsigned)o.curve > GB_AUC_PR ? "curve is neither GB_AUC_ROC nor GB_AUC_PR"
                      : (unsigned)o.summation > GB_AUC_MAJORING ? "unknown summation method"
                                                                : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, "AUC", "gb_metric_auc_new: %s (got num_thresholds %d)", why,
                  o.num_thresholds);
        return NULL;
    }
    int n = o.num_thresholds;
    size_t config_size = sizeof(auc_config) + (size_t)n * sizeof(double);
    auc_config *c = malloc(config_size);
    if (!c) {
        gb__error(GB_ERR_MEMORY, "AUC", "gb_metric_auc_new: out of memory");
        return NULL;
    }
    c->o = o;
    /* Keras' thresholds: evenly spaced, the ends just outside [0, 1] so
     * predictions of exactly 0 and 1 count as positive and negative. */
    const double epsilon = 1e-7;
    c->thr[0] = -epsilon;
    for (int i = 1; i < n - 1; i++) c->thr[i] = (double)i / (n - 1);
    c->thr[n - 1] = 1 + epsilon;
    gb_metric *m = gb__metric_create(&auc_type, name, NCOUNTS * (size_t)n * sizeof(double), c,
                                     config_size);
    free(c);
    return m;
}
