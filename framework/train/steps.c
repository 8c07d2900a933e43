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

/* Holds the step's gradients for the callbacks that asked: every one. */
static bool keep_gradients(gb__compiled *c, gb_tensor *const *grads, int n) {
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

/* The model on a batch: one prediction per output. */
static bool forward(gb__compiled *c, const gb__io *x, bool training, gb__io *y_pred) {
    y_pred->n = gb_module_call_n(c->model, x->n, x->t, y_pred->t, training);
    return y_pred->n == c->nout;
}

/* Keras' default Model.train_step: forward in training mode, the
 * compiled loss, the tape's gradients, the optimizer's update. In a
 * distributed fit the gradients are averaged over the ranks first: eagerly
 * during backward (gb_dist_tape_gradient); traced, the graph cannot talk
 * to other processes, so it returns them and gb__train_batch averages and
 * applies them after the call. */
static bool default_train_step(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                               gb__step_out *r) {
    gb_train_state *s = &c->state;
    gb_tape *tape = gb_tape_begin();
    r->loss = forward(c, x, true, &r->y_pred) ? gb__compiled_loss(c, y, &r->y_pred, sw, r->out_loss)
                                              : NULL;
    gb_tape_end(tape);
    if (!r->loss) return false;
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(s->model, &n);
    gb_tensor **grads = calloc(n > 0 ? (size_t)n : 1, sizeof *grads);
    if (!grads) {
        gb__error(GB_ERR_MEMORY, NULL, "train step: out of memory for %d gradients", n);
        return false;
    }
    bool ok;
    if (c->dist && !c->opts.run_eagerly)   /* traced: the graph returns them (gb__train_batch) */
        ok = gb_tape_gradient_vars(tape, r->loss, vars, n, grads) && keep_gradients(c, grads, n);
    else
        ok = (c->dist ? gb_dist_tape_gradient(tape, r->loss, vars, n, grads)
                      : gb_tape_gradient_vars(tape, r->loss, vars, n, grads)) &&
             gb_optimizer_apply_gradients(s->optimizer, grads, n, vars, n) &&
             (!s->want_gradients || keep_gradients(c, grads, n));
    free(grads);
    return ok;
}

/* The user's step (one input, one output: compile checked) or the default. */
static bool user_or_default_step(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                                 gb__step_out *r) {
    if (!c->opts.train_step) return default_train_step(c, x, y, sw, r) && gb_ok();
    r->y_pred.n = 1;
    r->loss = c->opts.train_step(&c->state, x->t[0], y->t[0], sw, &r->y_pred.t[0],
                                 c->opts.train_step_user);
    if (r->loss && !r->y_pred.t[0] && gb_ok())
        gb__error(GB_ERR_VALUE, NULL, "train step: the custom train_step returned no predictions");
    return gb_ok() && r->loss && r->y_pred.t[0];
}

/* The losses the forward pass adds (gb_add_loss) are collected around
 * each step; the compiled loss adds them. A health check step (`health`
 * not 0, gb__health_fit_variant) also counts its activations' figures
 * (always a tensor, empty when no layer has any, so the traced variant's
 * outputs have one layout). */
static bool run_train_step(gb__compiled *c, int64_t health, const gb__io *x, const gb__io *y,
                           gb_tensor *sw, gb__step_out *r) {
    *r = (gb__step_out){0};
    gb_losses_begin();
    gb__output_watch was = {0};
    if (health) was = gb__health_fit_watch(c, health);
    bool ok = user_or_default_step(c, x, y, sw, r);
    if (health) {
        gb_tensor *figs = gb__health_fit_unwatch(c, was);
        r->health = figs ? figs : gb_zeros(GB_F32, 1, (int64_t[]){0});
    }
    gb_losses_end();
    return ok && gb_ok();
}

static bool run_test_step(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                          gb__step_out *r) {
    *r = (gb__step_out){0};
    gb_losses_begin();
    r->loss = forward(c, x, false, &r->y_pred) ? gb__compiled_loss(c, y, &r->y_pred, sw, r->out_loss)
                                               : NULL;
    gb_losses_end();
    return r->loss != NULL;
}

/* ---- the traced functions ------------------------------------------------------------ */

static bool has_loss(const gb__compiled *c, int k) { return c->loss[k].kind != GB_LOSS_NONE; }

/* A function's inputs: x..., the targets of the outputs with a loss,
 * then (when weighted) the sample weights. */
static int pack_inputs(const gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                       gb_tensor **in) {
    int n = 0;
    for (int i = 0; i < x->n; i++) in[n++] = x->t[i];
    for (int k = 0; y && k < c->nout; k++)
        if (has_loss(c, k)) in[n++] = y->t[k];
    if (sw) in[n++] = sw;
    return n;
}

static void unpack_inputs(const gb__compiled *c, gb_tensor *const *in, int nin, gb__io *x,
                          gb__io *y, gb_tensor **sw) {
    int n = 0;
    x->n = c->nspec_x;
    for (int i = 0; i < x->n; i++) x->t[i] = in[n++];
    y->n = c->nout;
    for (int k = 0; k < c->nout; k++) y->t[k] = has_loss(c, k) ? in[n++] : NULL;
    *sw = nin > n ? in[n] : NULL;
}

/* A step's outputs: loss, the predictions, each output's loss (several
 * outputs only), a health check step's figures, then the gradients the
 * callbacks (or the checks) asked for. */
static int pack_outputs(const gb__compiled *c, const gb__step_out *r, gb_tensor **out) {
    int n = 0;
    out[n++] = r->loss;
    for (int k = 0; k < c->nout; k++) out[n++] = r->y_pred.t[k];
    for (int k = 0; c->nout > 1 && k < c->nout; k++)
        if (has_loss(c, k)) out[n++] = r->out_loss[k];
    if (r->health) out[n++] = r->health;
    return n;
}

/* The inverse of pack_outputs (health: a check step's); returns where
 * the gradients start. */
static int unpack_outputs(const gb__compiled *c, bool health, gb_tensor *const *out,
                          gb__step_out *r) {
    int n = 0;
    *r = (gb__step_out){.loss = out[n++]};
    r->y_pred.n = c->nout;
    for (int k = 0; k < c->nout; k++) r->y_pred.t[k] = out[n++];
    for (int k = 0; c->nout > 1 && k < c->nout; k++)
        if (has_loss(c, k)) r->out_loss[k] = out[n++];
    if (health) r->health = out[n++];
    return n;
}

static int train_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)nst;
    gb__compiled *c = user;
    gb__io x, y;
    gb_tensor *sw;
    gb__step_out r;
    unpack_inputs(c, in, nin, &x, &y, &sw);
    c->ngrads = 0;
    c->state.want_gradients = st[0].as.b;
    if (!run_train_step(c, nst > 1 ? st[1].as.i : 0, &x, &y, sw, &r)) return -1;
    int n = pack_outputs(c, &r, out);
    /* Every gradient or none: a callback or the ranks' average needs
     * one per variable. */
    if (n + c->ngrads > GB_FUNCTION_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, NULL,
                  "the gradients of %d trainable variables and %d other outputs are more "
                  "than a function returns (%d); compile the model with run_eagerly",
                  c->ngrads, n, GB_FUNCTION_MAX_OUTPUTS);
        return -1;
    }
    if (c->ngrads > 0) memcpy(out + n, c->grads, (size_t)c->ngrads * sizeof *out);
    return n + (c->ngrads > 0 ? c->ngrads : 0);
}

static int test_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)st, (void)nst;
    gb__compiled *c = user;
    gb__io x, y;
    gb_tensor *sw;
    gb__step_out r;
    unpack_inputs(c, in, nin, &x, &y, &sw);
    return run_test_step(c, &x, &y, sw, &r) ? pack_outputs(c, &r, out) : -1;
}

static int predict_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                        gb_tensor **out) {
    (void)st, (void)nst;
    gb__compiled *c = user;
    int n = gb_module_call_n(c->model, nin, in, out, false);
    return n == c->nout ? n : -1;
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

/* t's spec with the batch dim -1; the name from the model's input or
 * output it feeds. */
static gb_tensor_spec spec_of(const char *name, gb_tensor *t) {
    gb_tensor_spec s = {.name = name, .dtype = gb_tensor_dtype(t), .rank = gb_rank(t)};
    for (int d = 0; d < s.rank; d++) s.shape[d] = d ? gb_dim(t, d) : -1;
    return s;
}

static bool same_spec(const gb_tensor_spec *a, const gb_tensor_spec *b) {
    return a->dtype == b->dtype && a->rank == b->rank &&
           !memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]);
}

/* Keeps the functions made for these inputs' (and targets') specs; other
 * data drops them. Names: "x" and "y" for one input and output, else the
 * model's own. */
static void fit_specs(gb__compiled *c, const gb__io *x, const gb__io *y) {
    gb_tensor_spec want[2 * GB_NN_MAX_IO];
    int n = 0;
    for (int i = 0; i < x->n; i++)
        want[n++] = spec_of(x->n == 1 ? "x" : gb_sym_name(gb_model_input(c->model, i)), x->t[i]);
    bool x_same = c->nspec_x == x->n;
    for (int i = 0; x_same && i < n; i++) x_same = same_spec(&c->specs[i], &want[i]);
    if (!x_same) {
        drop_functions(c, true);
        memcpy(c->specs, want, (size_t)n * sizeof *want);
        c->nspec_x = x->n;
        c->nspec_y = -1;
    }
    if (!y) return;
    for (int k = 0; k < c->nout; k++)
        if (has_loss(c, k))
            want[n++] = spec_of(c->nout == 1 ? "y" : gb_model_output_name(c->model, k), y->t[k]);
    int ny = n - x->n;
    bool y_same = c->nspec_y == ny;
    for (int i = x->n; y_same && i < n; i++) y_same = same_spec(&c->specs[i], &want[i]);
    if (!y_same) {
        drop_functions(c, false);
        memcpy(c->specs + x->n, want + x->n, (size_t)ny * sizeof *want);
        c->nspec_y = ny;
    }
    c->specs[n] = (gb_tensor_spec){.name = "sample_weight", .dtype = GB_F32, .rank = 1, .shape = {-1}};
}

static gb_function *make_fn(gb__compiled *c, const char *name, gb_function_fn body, int nin) {
    gb_function_options o = {.user = c, .input_signature = c->specs, .ninput_signature = nin};
    return gb__function_new_owned(name, body, &o);
}

static gb_function *function_for(gb__compiled *c, bool training, bool weighted) {
    gb_function **slot = training ? &c->train_fn[weighted] : &c->test_fn[weighted];
    if (!*slot)
        *slot = make_fn(c, training ? "train_function" : "test_function",
                        training ? train_body : test_body,
                        c->nspec_x + c->nspec_y + (weighted ? 1 : 0));
    return *slot;
}

/* Every target a loss needs is there; none is given where none is. */
static bool targets_fit(const gb__compiled *c, const gb__io *y) {
    for (int k = 0; k < c->nout; k++) {
        if (has_loss(c, k) == (k < y->n && y->t[k] != NULL)) continue;
        gb__error(GB_ERR_VALUE, NULL,
                  has_loss(c, k) ? "fit: output %d ('%s') has a loss but no target (y)"
                                 : "fit: output %d ('%s') was compiled without a loss; give NULL "
                                   "as its target",
                  k, gb_model_output_name(c->model, k));
        return false;
    }
    return true;
}

/* Room for every output a traced step may return, kept with the model:
 * as many as a function returns, since a model that builds on its first
 * call has no variables (no count of gradients) before the call that
 * traces it. */
static gb_tensor **step_outputs(gb__compiled *c) {
    if (!c->step_out && !(c->step_out = calloc(GB_FUNCTION_MAX_OUTPUTS, sizeof *c->step_out)))
        gb__error(GB_ERR_MEMORY, NULL, "train step: out of memory for its outputs");
    return c->step_out;
}

bool gb__train_batch(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                     bool training, gb__step_out *r) {
    *r = (gb__step_out){0};
    gb_train_state *s = &c->state;
    bool want = training && s->want_gradients;
    int64_t health = training ? gb__health_fit_variant(c) : 0;
    c->ngrads = 0;
    if (!targets_fit(c, y)) return false;
    if (c->opts.run_eagerly) {
        if (!(training ? run_train_step(c, health, x, y, sw, r) : run_test_step(c, x, y, sw, r)))
            return false;
    } else {
        fit_specs(c, x, y);
        if (c->traced_dist != c->dist) {   /* a distributed step leaves the update out */
            drop_functions(c, false);
            c->traced_dist = c->dist;
        }
        gb_function *f = function_for(c, training, sw != NULL);
        gb_tensor *in[2 * GB_NN_MAX_IO + 1], **out = step_outputs(c);
        if (!out) return false;
        int nin = pack_inputs(c, x, y, sw, in);
        /* The train function's variants (graph/: a library function's
         * statics select programs it knows, each traced once, never a
         * retrace): the gradients returned, the health checks' figures. */
        gb_value variant[2] = {GB_BOOL("with_grads", want || (training && c->dist)),
                               GB_INT("health_checks", health)};
        int n = f ? gb_function_call(f, in, nin, variant, training ? 2 : 0, out) : -1;
        if (n < 1 + c->nout + (health != 0)) return false;
        int g = unpack_outputs(c, health != 0, out, r);
        if (training && c->dist &&
            !(gb__health_fit_rank_norms(c, out + g, n - g) && gb__dist_apply_averaged(c, out + g, n - g)))
            return false;
        if (want && !keep_gradients(c, out + g, n - g)) return false;
    }
    s->gradients = want ? c->grads : NULL;
    s->ngradients = want ? c->ngrads : 0;
    return r->loss && gb_ok();
}

bool gb__predict_batch(gb__compiled *c, const gb__io *x, gb__io *out) {
    if (c->opts.run_eagerly) return forward(c, x, false, out);
    fit_specs(c, x, NULL);
    if (!c->predict_fn) c->predict_fn = make_fn(c, "predict_function", predict_body, x->n);
    out->n = c->predict_fn ? gb_function_call(c->predict_fn, x->t, x->n, NULL, 0, out->t) : -1;
    return out->n == c->nout;
}

/* ---- metrics ---------------------------------------------------------------------------- */

void gb__metrics_reset(gb__compiled *c) {
    gb_metric_reset_state(c->loss_tracker);
    for (int k = 0; k < c->nout; k++) gb_metric_reset_state(c->out_loss[k]);
    for (int i = 0; i < c->nmetrics; i++) gb_metric_reset_state(c->metric[i]);
}

/* The per-sample values a mean metric averages (mse, mae). */
static gb_tensor *per_sample(gb__metric_kind k, gb_tensor *y, gb_tensor *y_pred) {
    return k == GB__METRIC_MSE ? gb_loss_mean_squared_error(y, y_pred, GB_REDUCTION_NONE)
                               : gb_loss_mean_absolute_error(y, y_pred, GB_REDUCTION_NONE);
}

bool gb__metrics_update(gb__compiled *c, const gb__step_out *r, const gb__io *y, gb_tensor *sw) {
    /* Keras' loss trackers: batch losses weighted by the batch's size, so
     * the epoch's loss is the mean over samples, not over batches. */
    double batch = (double)gb_dim(r->y_pred.t[0], 0);
    gb_metric_update_value(c->loss_tracker, gb_item(r->loss), batch);
    for (int k = 0; k < c->nout; k++)
        if (c->out_loss[k] && r->out_loss[k])
            gb_metric_update_value(c->out_loss[k], gb_item(r->out_loss[k]), batch);
    for (int i = 0; i < c->nmetrics; i++) {
        gb__metric_kind kind = c->metric_kind[i];
        gb_tensor *yk = y->t[c->metric_out[i]], *pk = r->y_pred.t[c->metric_out[i]];
        if (kind == GB__METRIC_MSE || kind == GB__METRIC_MAE)
            gb_metric_update_state_weighted(c->metric[i], per_sample(kind, yk, pk), NULL, sw);
        else
            gb_metric_update_state_weighted(c->metric[i], yk, pk, sw);
    }
    return gb_ok();
}

static int by_name(const void *a, const void *b) {
    return strcmp(gb_metric_name(*(gb_metric *const *)a), gb_metric_name(*(gb_metric *const *)b));
}

enum { MAX_ALL_METRICS = GB__MAX_METRICS + GB_NN_MAX_IO + 1 };

/* Every metric fit keeps: the loss tracker, each output's, the metrics. */
static int all_metrics(gb__compiled *c, gb_metric **all) {
    int n = 0;
    all[n++] = c->loss_tracker;
    for (int k = 0; k < c->nout; k++)
        if (c->out_loss[k]) all[n++] = c->out_loss[k];
    for (int i = 0; i < c->nmetrics; i++) all[n++] = c->metric[i];
    return n;
}

size_t gb__metrics_state_size(gb__compiled *c) {
    gb_metric *all[MAX_ALL_METRICS];
    size_t total = 0;
    for (int i = 0, n = all_metrics(c, all); i < n; i++) total += gb__metric_state_size(all[i]);
    return total;
}

void gb__metrics_state_get(gb__compiled *c, unsigned char *out) {
    gb_metric *all[MAX_ALL_METRICS];
    for (int i = 0, n = all_metrics(c, all); i < n; i++) {
        size_t k = gb__metric_state_size(all[i]);
        if (k) memcpy(out, gb__metric_state(all[i]), k);
        out += k;
    }
}

bool gb__metrics_state_set(gb__compiled *c, const unsigned char *in, size_t n) {
    if (n != gb__metrics_state_size(c)) {
        gb__error(GB_ERR_VALUE, NULL,
                  "fit: the saved metric states take %zu bytes but this model's metrics take %zu; "
                  "was it compiled with other metrics?",
                  n, gb__metrics_state_size(c));
        return false;
    }
    gb_metric *all[MAX_ALL_METRICS];
    for (int i = 0, m = all_metrics(c, all); i < m; i++) {
        size_t k = gb__metric_state_size(all[i]);
        if (k) memcpy(gb__metric_state(all[i]), in, k);
        in += k;
    }
    return true;
}

/* Sorted by name, as Keras' logs are (accuracy, loss, ...); combined over
 * the ranks in a distributed fit. */
void gb__metrics_logs(gb__compiled *c, const char *prefix, gb_logs *logs) {
    gb_metric *all[MAX_ALL_METRICS];
    double value[MAX_ALL_METRICS];
    int n = all_metrics(c, all);
    qsort(all, (size_t)n, sizeof *all, by_name);
    if (!gb__dist_metric_values(c, all, n, value)) return;
    char key[GB_LOGS_KEY_BYTES];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "%s%s", prefix ? prefix : "", gb_metric_name(all[i]));
        gb_logs_set(logs, key, value[i]);
    }
}
