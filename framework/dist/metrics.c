/* dist/metrics.c — a metric's result over every rank's updates.
 *
 * Each rank updates its metrics from its own batches. A metric whose
 * state is sums (totals and counts, confusion counts: every built-in
 * one) combines exactly: the state summed over the ranks is the state one
 * process would have after all the updates, so its result is the global
 * result — as Keras reads a metric's SUM-aggregated variables under a
 * distribution strategy. The ranks' own states stay as they are; only a
 * copy is reduced, all metrics in one allreduce.
 */
#include <math.h>
#include <stdlib.h>

#include "dist/internal.h"

/* The metric's state as doubles: how many, or -1 (error) when its type
 * does not declare it summable. */
static int64_t summable_doubles(const char *who, gb_metric *m) {
    const gb_metric_type *t = gb_metric_get_type(m);
    size_t bytes = gb__metric_state_size(m);
    if (t && t->state_is_sums && bytes % sizeof(double) == 0) return (int64_t)(bytes / sizeof(double));
    gb__error(GB_ERR_VALUE, NULL,
              "%s: metric '%s' does not declare its state summable (gb_metric_type.state_is_sums: "
              "doubles that add up over parts of the data), so its results on several ranks "
              "cannot be combined",
              who, gb_metric_name(m));
    return -1;
}

bool gb_dist_metric_results(gb_metric *const *metrics, int n, double *out) {
    static const char WHO[] = "gb_dist_metric_results";
    if (!gb_ok()) return false;
    if (n < 0 || (n && (!metrics || !out))) {
        gb__error(GB_ERR_VALUE, NULL, "%s: a bad metric list (%d)", WHO, n);
        return false;
    }
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        int64_t k = metrics[i] ? summable_doubles(WHO, metrics[i]) : -1;
        if (k < 0) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: metric %d is NULL", WHO, i);
            return false;
        }
        total += k;
    }
    double *states = malloc((size_t)total * sizeof *states + 1);
    if (!states) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", WHO);
        return false;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = gb__metric_state_size(metrics[i]);
        memcpy(states + at, gb__metric_state(metrics[i]), bytes);
        at += bytes / sizeof(double);
    }
    bool ok = gb__comm_done(gb__comm_iallreduce(states, total, GB_F64, GB_DIST_SUM, WHO));
    at = 0;
    for (int i = 0; ok && i < n; i++) {
        out[i] = gb_metric_get_type(metrics[i])->result(metrics[i], states + at);
        at += gb__metric_state_size(metrics[i]) / sizeof(double);
    }
    free(states);
    return ok;
}

double gb_dist_metric_result(gb_metric *m) {
    double r = NAN;
    return gb_dist_metric_results(&m, 1, &r) ? r : NAN;
}
