/* train/fit_dist.c — what a distributed fit (gb_fit_options.distributed,
 * on several ranks of gb_dist.h) does differently, in one place.
 *
 * Before training: the model built (from x, if it is not yet), its
 * weights and the optimizer's state broadcast from rank 0. Per batch:
 * each rank takes its slice of the global batch (fit.c asks
 * gb__dist_slice), the train step averages the gradients (steps.c), and
 * the metrics are read combined over the ranks (gb__dist_metrics_logs).
 * Per epoch: non-trainable variables averaged, validation split among the
 * ranks. Every rank makes the same calls in the same order, so the
 * collectives match and every rank's logs, and so its callbacks'
 * decisions (early stopping, learning-rate changes), are the same.
 */
#include <stdio.h>
#include <stdlib.h>

#include "train/internal.h"

/* The model built for x's first input (a Sequential model builds on its
 * first call; its variables must exist before they can be broadcast). */
static bool built(gb__compiled *c, const gb__io *x) {
    if (gb_module_built(c->model)) return true;
    if (!x || x->n != 1 || !x->t[0]) {
        gb__error(GB_ERR_STATE, NULL,
                  "gb_model_fit (distributed): build the model first (gb_module_build): its "
                  "weights must exist to be broadcast from rank 0");
        return false;
    }
    gb_tensor *t = x->t[0];
    int64_t shape[GB_MAX_RANK];
    for (int d = 0; d < gb_rank(t); d++) shape[d] = d ? gb_dim(t, d) : -1;
    return gb_module_build(c->model, gb_tensor_dtype(t), gb_rank(t), shape);
}

bool gb__dist_fit_begin(gb__compiled *c, const gb__io *x) {
    c->dist = false;
    if (gb_dist_size() == 1) return true;
    if (c->opts.train_step && !c->opts.run_eagerly) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_model_fit (distributed): a custom train_step must average its gradients "
                  "itself (gb_dist_tape_gradient), which a traced step cannot do; compile with "
                  "run_eagerly");
        return false;
    }
    if (!built(c, x)) return false;
    if (!gb_dist_broadcast_model(c->model, c->opts.optimizer, 0) || !gb__health_fit_dist_begin(c))
        return false;
    c->dist = true;
    return true;
}

/* The last timings reach rank 0's writer before the program closes it. */
void gb__dist_fit_end(gb__compiled *c) {
    if (c->dist && gb_ok()) gb_dist_flush_timings();
    c->dist = false;
}

void gb__dist_slice(const gb__compiled *c, int64_t n, int64_t *first, int64_t *count) {
    int64_t ranks = c->dist ? gb_dist_size() : 1, me = c->dist ? gb_dist_rank() : 0;
    *first = n * me / ranks;
    *count = n * (me + 1) / ranks - *first;
}

int64_t gb__dist_ranks(const gb__compiled *c) { return c->dist ? gb_dist_size() : 1; }

bool gb__dist_apply_averaged(gb__compiled *c, gb_tensor **grads, int n) {
    int nvars = 0;
    gb_variable *const *vars = gb_module_trainable_variables(c->model, &nvars);
    if (n != nvars) {
        gb__error(GB_ERR_INTERNAL, NULL, "fit (distributed): the step returned %d gradients for %d "
                                         "variables", n, nvars);
        return false;
    }
    return gb_dist_average_gradients(grads, vars, n) &&
           gb_optimizer_apply_gradients(c->opts.optimizer, grads, n, vars, n);
}

bool gb__dist_epoch_end(gb__compiled *c) {
    if (!c->dist) return true;
    int n = 0;
    gb_variable *const *vars = gb_module_non_trainable_variables(c->model, &n);
    return n == 0 || gb_dist_average_variables(vars, n);
}

bool gb__dist_metric_values(gb__compiled *c, gb_metric *const *metrics, int n, double *out) {
    if (c->dist) return gb_dist_metric_results(metrics, n, out);
    for (int i = 0; i < n; i++) out[i] = gb_metric_result(metrics[i]);
    return true;
}
