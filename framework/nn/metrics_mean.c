/* nn/metrics_mean.c — the metrics that are weighted means: Mean,
 * SparseCategoricalAccuracy, CategoricalAccuracy.
 *
 * Their state is two doubles (total, count) and only the per-sample
 * value differs, so each is a small update function over one shared
 * state and result.
 */
#include "nn/internal.h"

typedef struct mean_state {
    double total, count;
} mean_state;

static double mean_result(const gb_metric *m, const void *state) {
    (void)m;
    const mean_state *s = state;
    return s->count != 0 ? s->total / s->count : 0.0;
}

/* ---- Mean ---------------------------------------------------------------------------------- */

static bool mean_update(gb_metric *m, void *state, gb_tensor *values, gb_tensor *unused,
                        gb_tensor *w) {
    (void)unused;
    mean_state *s = state;
    int64_t n = gb_size(values);
    if (!gb__metric_weights_fit(m, w, n)) return false;
    for (int64_t i = 0; i < n; i++) {
        double wi = gb__metric_weight_at(w, i);
        s->total += wi * gb_get(values, i);
        s->count += wi;
    }
    return true;
}

static const gb_metric_type mean_type = {
    .class_name = "Mean", .default_name = "mean", .state_size = sizeof(mean_state),
    .values_only = true, .update_state = mean_update, .result = mean_result, .state_is_sums = true};

gb_metric *gb_metric_mean_new(const char *name) { return gb_metric_new(&mean_type, name, NULL); }

bool gb_metric_update_value(gb_metric *m, double value, double weight) {
    if (!m) return false;
    if (gb_metric_get_type(m) != &mean_type) {
        gb_metric_error(m, GB_ERR_VALUE, "update_value is for Mean metrics; use update_state");
        return false;
    }
    mean_state *s = gb__metric_state(m);
    s->total += weight * value;
    s->count += weight;
    return true;
}

/* ---- accuracies ---------------------------------------------------------------------------- */

/* Index of the largest of row r of a [rows, classes] layout (first on ties). */
static int64_t row_argmax(gb_tensor *t, int64_t r, int64_t classes) {
    int64_t best = 0;
    double bv = gb_get(t, r * classes);
    for (int64_t c = 1; c < classes; c++) {
        double v = gb_get(t, r * classes + c);
        if (v > bv) {
            bv = v;
            best = c;
        }
    }
    return best;
}

static bool pred_rows(const gb_metric *m, gb_tensor *y_pred, int64_t *rows, int64_t *classes) {
    if (gb_rank(y_pred) < 1 || gb_dim(y_pred, -1) < 1) {
        char b[128];
        gb_metric_error(m, GB_ERR_SHAPE, "predictions must be [batch, classes], got shape %s",
                        gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    *classes = gb_dim(y_pred, -1);
    *rows = gb_size(y_pred) / *classes;
    return true;
}

static bool sparse_accuracy_update(gb_metric *m, void *state, gb_tensor *labels,
                                   gb_tensor *y_pred, gb_tensor *w) {
    mean_state *s = state;
    int64_t rows, classes;
    if (!pred_rows(m, y_pred, &rows, &classes)) return false;
    int rl = gb_rank(labels), rp = gb_rank(y_pred);
    bool fits = gb_size(labels) == rows && (rl == rp - 1 || (rl == rp && gb_dim(labels, -1) == 1));
    if (!fits) {
        char a[128], b[128];
        gb_metric_error(m, GB_ERR_SHAPE,
                        "labels shape %s does not match predictions shape %s (expected one "
                        "class index per row)",
                        gb_shape_str(labels, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    if (!gb__metric_weights_fit(m, w, rows)) return false;
    for (int64_t r = 0; r < rows; r++) {
        double wi = gb__metric_weight_at(w, r);
        s->total += wi * ((double)row_argmax(y_pred, r, classes) == gb_get(labels, r));
        s->count += wi;
    }
    return true;
}

static bool categorical_accuracy_update(gb_metric *m, void *state, gb_tensor *y_true,
                                        gb_tensor *y_pred, gb_tensor *w) {
    mean_state *s = state;
    int64_t rows, classes;
    if (!pred_rows(m, y_pred, &rows, &classes)) return false;
    if (!gb_same_shape(y_true, y_pred)) {
        char a[128], b[128];
        gb_metric_error(m, GB_ERR_SHAPE, "y_true shape %s does not match predictions shape %s",
                        gb_shape_str(y_true, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    if (!gb__metric_weights_fit(m, w, rows)) return false;
    for (int64_t r = 0; r < rows; r++) {
        double wi = gb__metric_weight_at(w, r);
        s->total += wi * (row_argmax(y_pred, r, classes) == row_argmax(y_true, r, classes));
        s->count += wi;
    }
    return true;
}

static const gb_metric_type sparse_accuracy_type = {
    .class_name = "SparseCategoricalAccuracy", .default_name = "sparse_categorical_accuracy",
    .state_size = sizeof(mean_state), .update_state = sparse_accuracy_update,
    .result = mean_result, .state_is_sums = true};
static const gb_metric_type categorical_accuracy_type = {
    .class_name = "CategoricalAccuracy", .default_name = "categorical_accuracy",
    .state_size = sizeof(mean_state), .update_state = categorical_accuracy_update,
    .result = mean_result, .state_is_sums = true};

gb_metric *gb_metric_sparse_categorical_accuracy_new(const char *name) {
    return gb_metric_new(&sparse_accuracy_type, name, NULL);
}
gb_metric *gb_metric_categorical_accuracy_new(const char *name) {
    return gb_metric_new(&categorical_accuracy_type, name, NULL);
}
