/* nn/metrics.c — streaming metrics: Mean, SparseCategoricalAccuracy,
 * CategoricalAccuracy (keras.metrics with update_state / result /
 * reset_state).
 *
 * Every metric here is a weighted mean, so the state is two doubles
 * (total, count) and only the per-update contribution differs: a small
 * per-kind function reads the values in C. Metrics read data, so they run
 * eagerly; a symbolic (traced) tensor is a clear error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/internal.h"

/* Adds the weighted values of one update to *total and *count. */
typedef bool (*metric_update_fn)(const gb_metric *m, gb_tensor *a, gb_tensor *b,
                                 gb_tensor *w, double *total, double *count);

typedef struct metric_kind {
    const char *class_name;
    const char *default_name;
    metric_update_fn update;
} metric_kind;

struct gb_metric {
    const metric_kind *kind;
    char name[64];
    double total, count;
};

static void metric_error(const gb_metric *m, gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void metric_error(const gb_metric *m, gb_status code, const char *fmt, ...) {
    if (!gb_ok()) return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(code, m->kind->class_name, "%s metric '%s': %s", m->kind->class_name, m->name, msg);
}

static bool concrete(const gb_metric *m, gb_tensor *t, const char *what) {
    if (!t || gb_data(t)) return true;
    metric_error(m, GB_ERR_STATE,
                 "%s is symbolic (inside a traced function); metrics read values, update them "
                 "eagerly with the function's outputs",
                 what);
    return false;
}

/* Sample weights: NULL, one per sample (n of them), or a scalar. */
static bool weights_fit(const gb_metric *m, gb_tensor *w, int64_t n) {
    if (!w || gb_size(w) == n || gb_size(w) == 1) return true;
    char b[128];
    metric_error(m, GB_ERR_SHAPE, "sample_weight shape %s does not give one weight per sample (%lld)",
                 gb_shape_str(w, b, sizeof b), (long long)n);
    return false;
}

static double weight_at(gb_tensor *w, int64_t i) {
    if (!w) return 1.0;
    return gb_get(w, gb_size(w) == 1 ? 0 : i);
}

/* ---- Mean ---------------------------------------------------------------------------------- */

static bool mean_update(const gb_metric *m, gb_tensor *values, gb_tensor *unused, gb_tensor *w,
                        double *total, double *count) {
    if (unused) {
        metric_error(m, GB_ERR_VALUE, "Mean takes one tensor of values; pass NULL as the second");
        return false;
    }
    int64_t n = gb_size(values);
    if (!weights_fit(m, w, n)) return false;
    for (int64_t i = 0; i < n; i++) {
        double wi = weight_at(w, i);
        *total += wi * gb_get(values, i);
        *count += wi;
    }
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
        metric_error(m, GB_ERR_SHAPE, "predictions must be [batch, classes], got shape %s",
                     gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    *classes = gb_dim(y_pred, -1);
    *rows = gb_size(y_pred) / *classes;
    return true;
}

static bool sparse_accuracy_update(const gb_metric *m, gb_tensor *labels, gb_tensor *y_pred,
                                   gb_tensor *w, double *total, double *count) {
    int64_t rows, classes;
    if (!pred_rows(m, y_pred, &rows, &classes)) return false;
    int rl = gb_rank(labels), rp = gb_rank(y_pred);
    bool fits = gb_size(labels) == rows && (rl == rp - 1 || (rl == rp && gb_dim(labels, -1) == 1));
    if (!fits) {
        char a[128], b[128];
        metric_error(m, GB_ERR_SHAPE,
                     "labels shape %s does not match predictions shape %s (expected one class "
                     "index per row)",
                     gb_shape_str(labels, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    if (!weights_fit(m, w, rows)) return false;
    for (int64_t r = 0; r < rows; r++) {
        double wi = weight_at(w, r);
        *total += wi * ((double)row_argmax(y_pred, r, classes) == gb_get(labels, r));
        *count += wi;
    }
    return true;
}

static bool categorical_accuracy_update(const gb_metric *m, gb_tensor *y_true, gb_tensor *y_pred,
                                        gb_tensor *w, double *total, double *count) {
    int64_t rows, classes;
    if (!pred_rows(m, y_pred, &rows, &classes)) return false;
    if (!gb_same_shape(y_true, y_pred)) {
        char a[128], b[128];
        metric_error(m, GB_ERR_SHAPE, "y_true shape %s does not match predictions shape %s",
                     gb_shape_str(y_true, a, sizeof a), gb_shape_str(y_pred, b, sizeof b));
        return false;
    }
    if (!weights_fit(m, w, rows)) return false;
    for (int64_t r = 0; r < rows; r++) {
        double wi = weight_at(w, r);
        *total += wi * (row_argmax(y_pred, r, classes) == row_argmax(y_true, r, classes));
        *count += wi;
    }
    return true;
}

static const metric_kind mean_kind = {"Mean", "mean", mean_update};
static const metric_kind sparse_accuracy_kind = {
    "SparseCategoricalAccuracy", "sparse_categorical_accuracy", sparse_accuracy_update};
static const metric_kind categorical_accuracy_kind = {
    "CategoricalAccuracy", "categorical_accuracy", categorical_accuracy_update};

/* ---- the generic part ------------------------------------------------------------------------ */

static gb_metric *metric_new(const metric_kind *kind, const char *name) {
    gb_metric *m = calloc(1, sizeof *m);
    if (!m) {
        gb__error(GB_ERR_MEMORY, kind->class_name, "%s: out of memory", kind->class_name);
        return NULL;
    }
    m->kind = kind;
    snprintf(m->name, sizeof m->name, "%s", name && name[0] ? name : kind->default_name);
    return m;
}

gb_metric *gb_metric_mean_new(const char *name) { return metric_new(&mean_kind, name); }
gb_metric *gb_metric_sparse_categorical_accuracy_new(const char *name) {
    return metric_new(&sparse_accuracy_kind, name);
}
gb_metric *gb_metric_categorical_accuracy_new(const char *name) {
    return metric_new(&categorical_accuracy_kind, name);
}

void gb_metric_free(gb_metric *m) { free(m); }
const char *gb_metric_name(const gb_metric *m) { return m ? m->name : ""; }

bool gb_metric_update_state_weighted(gb_metric *m, gb_tensor *a, gb_tensor *b,
                                     gb_tensor *sample_weight) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_metric_update_state: NULL metric");
        return false;
    }
    if (!gb_ok()) return false; /* an input may be NULL because of that error */
    if (!a || (m->kind != &mean_kind && !b)) {
        metric_error(m, GB_ERR_VALUE, "update_state: %s is NULL", a ? "y_pred" : "the first input");
        return false;
    }
    if (!concrete(m, a, "the first input") || !concrete(m, b, "the second input") ||
        !concrete(m, sample_weight, "sample_weight"))
        return false;
    /* Accumulate aside so a failed update leaves the state as it was. */
    double total = 0, count = 0;
    if (!m->kind->update(m, a, b, sample_weight, &total, &count)) return false;
    m->total += total;
    m->count += count;
    return true;
}

bool gb_metric_update_state(gb_metric *m, gb_tensor *a, gb_tensor *b) {
    return gb_metric_update_state_weighted(m, a, b, NULL);
}

bool gb_metric_update_value(gb_metric *m, double value, double weight) {
    if (!m) return false;
    if (m->kind != &mean_kind) {
        metric_error(m, GB_ERR_VALUE, "update_value is for Mean metrics; use update_state");
        return false;
    }
    m->total += weight * value;
    m->count += weight;
    return true;
}

double gb_metric_result(const gb_metric *m) {
    return m && m->count != 0 ? m->total / m->count : 0.0;
}

gb_tensor *gb_metric_result_tensor(const gb_metric *m) {
    return gb_scalar(GB_F32, gb_metric_result(m));
}

void gb_metric_reset_state(gb_metric *m) {
    if (m) m->total = m->count = 0;
}
