/* train/steps.c — what fit, evaluate and predict run on one batch: the
 * train step (forward, the compiled loss, gradients, the optimizer), the
 * test step (forward in inference mode, the loss) and the predict step
 * (forward), each traced into a gb_function — Keras' train_function,
 * test_function and predict_function — unless the model was compiled
 * with run_eagerly; and the compiled metrics fed from their outputs.
 *
 * The functions take an input signature made from the data (the batch dim
 * -1), so the epoch's last, smaller batch runs the same graph. A run with
 * sample weights has one input more and its own function; data of another
 * dtype or inner shape remakes them (one trace each, with its reason).
 * Metrics stay eager: they read values, which a graph does not.
 */
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

/* ---- the step bodies (eager or traced alike) -------------------------------------- */

/* Holds the step's gradients for the callbacks that asked (at most what
 * a function can return beside the loss and the predictions). */
static bool keep_gradients(gb__compiled *c, gb_tensor *const *grads, int n) {
    if (n > GB_FUNCTION_MAX_OUTPUTS - 2) n = GB_FUNCTION_MAX_OUTPUTS - 2;
    if (n > c->capgrads) {
        gb_tensor **g = realloc(c->grads, (size_t)n * sizeof *g);
        if (!g) {
            gb__error(GB_ERR_MEMORY, NULL, "train step: out of memory for %d gradients", n);
            return false;
        }
        c->grads = g;
        c->capgrads = n;
    }
    if (n) memcpy(c->grads, grads, (size_t)n * sizeof *grads);
    c->ngrads = n;
    return true;
}

/* Keras' default Model.train_step: forward in training mode, the
 * compiled loss, the tape's gradients, the optimizer's update. */
static gb_tensor *default_train_step(gb_train_state *s, gb_tensor *x, gb_tensor *y,
                                     gb_tensor *sw, gb_tensor **y_pred, void *user) {
    (void)user;
    gb_tape *tape = gb_tape_begin();
    *y_pred = gb_module_call(s->model, x, true);
    gb_tensor *loss = *y_pred ? gb_train_compiled_loss(s, y, *y_pred, sw) : NULL;
    gb_tape_end(tape);
    if (!loss) return NULL;
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(s->model, &n);
    gb_tensor **grads = calloc(n > 0 ? (size_t)n : 1, sizeof *grads);
    if (!grads) {
        gb__error(GB_ERR_MEMORY, NULL, "train step: out of memory for %d gradients", n);
        return NULL;
    }
    bool ok = gb_tape_gradient_vars(tape, loss, vars, n, grads) &&
              gb_optimizer_apply_gradients(s->optimizer, grads, n, vars, n) &&
              (!s->want_gradients || keep_gradients(s->compiled, grads, n));
    free(grads);
    return ok ? loss : NULL;
}

static gb_tensor *run_train_step(gb__compiled *c, gb_tensor *x, gb_tensor *y, gb_tensor *sw,
                                 gb_tensor **y_pred) {
    *y_pred = NULL;
    gb_train_step_fn step = c->opts.train_step ? c->opts.train_step : default_train_step;
    gb_tensor *loss = step(&c->state, x, y, sw, y_pred, c->opts.train_step_user);
    if (loss && !*y_pred && gb_ok())
        gb__error(GB_ERR_VALUE, NULL, "train step: the custom train_step returned no predictions");
    return gb_ok() && *y_pred ? loss : NULL;
}

static gb_tensor *run_test_step(gb__compiled *c, gb_tensor *x, gb_tensor *y, gb_tensor *sw,
                                gb_tensor **y_pred) {
    *y_pred = gb_module_call(c->model, x, false);
    return *y_pred ? gb_train_compiled_loss(&c->state, y, *y_pred, sw) : NULL;
}

/* ---- the traced functions ------------------------------------------------------------ */

/* Inputs x, y and (when weighted) sample_weight; outputs loss, y_pred
 * and, when the static with_grads is on, the gradients. */
static int train_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)nst;
    gb__compiled *c = user;
    c->ngrads = 0;
    c->state.want_gradients = st[0].as.b;
    out[0] = run_train_step(c, in[0], in[1], nin > 2 ? in[2] : NULL, &out[1]);
    if (!out[0]) return -1;
    if (c->ngrads) memcpy(out + 2, c->grads, (size_t)c->ngrads * sizeof *out);
    return 2 + c->ngrads;
}

static int test_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)st, (void)nst;
    out[0] = run_test_step(user, in[0], in[1], nin > 2 ? in[2] : NULL, &out[1]);
    return out[0] ? 2 : -1;
}

static int predict_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb__compiled *c = user;
    out[0] = gb_module_call(c->model, in[0], false);
    return out[0] ? 1 : -1;
}

/* Drops the train and test functions, and predict's with_predict. */
static void drop_functions(gb__compiled *c, bool with_predict) {
    for (int w = 0; w < 2; w++) {
        gb_function_free(c->train_fn[w]);
        gb_function_free(c->test_fn[w]);
        c->train_fn[w] = c->test_fn[w] = NULL;
    }
    if (!with_predict) return;
    gb_function_free(c->predict_fn);
    c->predict_fn = NULL;
}

void gb__steps_free(gb__compiled *c) { drop_functions(c, true); }

/* t's spec with the batch dim -1. */
static gb_tensor_spec spec_of(const char *name, gb_tensor *t) {
    gb_tensor_spec s = {.name = name, .dtype = gb_tensor_dtype(t), .rank = gb_rank(t)};
    for (int d = 0; d < s.rank; d++) s.shape[d] = d ? gb_dim(t, d) : -1;
    return s;
}

static bool same_spec(const gb_tensor_spec *a, const gb_tensor_spec *b) {
    return a->dtype == b->dtype && a->rank == b->rank &&
           !memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]);
}

/* Keeps the functions made for x's (and y's) spec; other data drops them. */
static void fit_specs(gb__compiled *c, gb_tensor *x, gb_tensor *y) {
    gb_tensor_spec sx = spec_of("x", x);
    if (!c->specs[0].name || !same_spec(&c->specs[0], &sx)) {
        drop_functions(c, true);
        c->specs[0] = sx;
        c->specs[1].name = NULL;
    }
    if (y) {
        gb_tensor_spec sy = spec_of("y", y);
        if (!c->specs[1].name || !same_spec(&c->specs[1], &sy)) {
            drop_functions(c, false);
            c->specs[1] = sy;
        }
    }
    c->specs[2] = (gb_tensor_spec){.name = "sample_weight", .dtype = GB_F32, .rank = 1, .shape = {-1}};
}

static gb_function *make_fn(gb__compiled *c, const char *name, gb_function_fn body, int nin) {
    gb_function_options o = {.user = c, .input_signature = c->specs, .ninput_signature = nin};
    return gb_function_new(name, body, &o);
}

static gb_function *function_for(gb__compiled *c, bool training, bool weighted) {
    gb_function **slot = training ? &c->train_fn[weighted] : &c->test_fn[weighted];
    if (!*slot)
        *slot = make_fn(c, training ? "train_function" : "test_function",
                        training ? train_body : test_body, weighted ? 3 : 2);
    return *slot;
}

bool gb__train_batch(gb__compiled *c, gb_tensor *x, gb_tensor *y, gb_tensor *sw, bool training,
                     gb_tensor **loss, gb_tensor **y_pred) {
    *loss = *y_pred = NULL;
    gb_train_state *s = &c->state;
    bool want = training && s->want_gradients;
    c->ngrads = 0;
    if (c->opts.run_eagerly) {
        *loss = training ? run_train_step(c, x, y, sw, y_pred) : run_test_step(c, x, y, sw, y_pred);
    } else {
        fit_specs(c, x, y);
        gb_function *f = function_for(c, training, sw != NULL);
        gb_tensor *out[GB_FUNCTION_MAX_OUTPUTS] = {0};
        gb_value with_grads = GB_BOOL("with_grads", want);
        int n = f ? gb_function_call(f, (gb_tensor *[]){x, y, sw}, sw ? 3 : 2, &with_grads,
                                     training, out)
                  : -1;
        if (n < 2) return false;
        *loss = out[0];
        *y_pred = out[1];
        if (want && !keep_gradients(c, out + 2, n - 2)) return false;
    }
    s->gradients = want ? c->grads : NULL;
    s->ngradients = want ? c->ngrads : 0;
    return *loss && gb_ok();
}

gb_tensor *gb__predict_batch(gb__compiled *c, gb_tensor *x) {
    if (c->opts.run_eagerly) return gb_module_call(c->model, x, false);
    fit_specs(c, x, NULL);
    if (!c->predict_fn) c->predict_fn = make_fn(c, "predict_function", predict_body, 1);
    gb_tensor *out = NULL;
    return c->predict_fn && gb_function_call(c->predict_fn, &x, 1, NULL, 0, &out) == 1 ? out : NULL;
}

/* ---- metrics ---------------------------------------------------------------------------- */

void gb__metrics_reset(gb__compiled *c) {
    gb_metric_reset_state(c->loss_tracker);
    for (int i = 0; i < c->nmetrics; i++) gb_metric_reset_state(c->metric[i]);
}

/* The per-sample values a mean metric averages (mse, mae). */
static gb_tensor *per_sample(gb__metric_kind k, gb_tensor *y, gb_tensor *y_pred) {
    return k == GB__METRIC_MSE ? gb_loss_mean_squared_error(y, y_pred, GB_REDUCTION_NONE)
                               : gb_loss_mean_absolute_error(y, y_pred, GB_REDUCTION_NONE);
}

bool gb__metrics_update(gb__compiled *c, gb_tensor *loss, gb_tensor *y, gb_tensor *y_pred,
                        gb_tensor *sw) {
    /* Keras' loss tracker: batch losses weighted by the batch's size, so
     * the epoch's loss is the mean over samples, not over batches. */
    gb_metric_update_value(c->loss_tracker, gb_item(loss), (double)gb_dim(y_pred, 0));
    for (int i = 0; i < c->nmetrics; i++) {
        gb__metric_kind k = c->metric_kind[i];
        if (k == GB__METRIC_MSE || k == GB__METRIC_MAE)
            gb_metric_update_state_weighted(c->metric[i], per_sample(k, y, y_pred), NULL, sw);
        else
            gb_metric_update_state_weighted(c->metric[i], y, y_pred, sw);
    }
    return gb_ok();
}

static int by_name(const void *a, const void *b) {
    return strcmp(gb_metric_name(*(gb_metric *const *)a), gb_metric_name(*(gb_metric *const *)b));
}

/* Sorted by name, as Keras' logs are (accuracy, loss, ...). */
void gb__metrics_logs(gb__compiled *c, const char *prefix, gb_logs *logs) {
    gb_metric *all[GB__MAX_METRICS + 1] = {c->loss_tracker};
    memcpy(all + 1, c->metric, (size_t)c->nmetrics * sizeof *all);
    qsort(all, (size_t)c->nmetrics + 1, sizeof *all, by_name);
    char key[GB_LOGS_KEY_BYTES];
    for (int i = 0; i <= c->nmetrics; i++) {
        snprintf(key, sizeof key, "%s%s", prefix ? prefix : "", gb_metric_name(all[i]));
        gb_logs_set(logs, key, gb_metric_result(all[i]));
    }
}
