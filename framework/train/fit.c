/* train/fit.c — model.fit, model.evaluate and model.predict over arrays.
 *
 * fit: the validation part split off the end (before any shuffling, as
 * Keras), each sample's weight from class_weight and sample_weight, then
 * per epoch: the metrics reset, a shuffled pass over the training rows in
 * batches through the train step, the epoch's logs, validation into val_
 * logs, the callbacks at every point, the History.
 *
 * Batches come from a stream of passes over the data, each pass in the
 * order gb_dataset_shuffle(n, seed) gives its pass-th iteration — so fit
 * and a hand loop over shuffle -> batch train on the same batches. Without steps_per_epoch an epoch is
 * one pass and pass k is epoch k, so a run resumed at initial_epoch k
 * shuffles as the uninterrupted run did. With steps_per_epoch an epoch
 * takes that many batches and the stream carries on across epochs where
 * it stopped (Keras' EpochIterator does the same).
 *
 * Distributed (fit_dist.c), a global batch is batch_size rows per rank of
 * that same stream, and each rank trains on its slice of it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/internal.h"
#include "train/internal.h"

static const char *const FIT = "gb_model_fit";

gb_fit_options gb_fit_defaults(void) {
    return (gb_fit_options){.epochs = 1, .batch_size = 32, .verbose = 1, .shuffle = true};
}

/* ---- checks ------------------------------------------------------------------------------ */

/* The samples of a group's first tensor; -1 when there is none. */
static int64_t group_samples(const gb__io *g) {
    for (int i = 0; i < g->n; i++)
        if (g->t[i]) return gb__num_samples(g->t[i]);
    return -1;
}

/* x (and y, when given) fit the model and hold the same number of
 * samples, at least one; names ("x", "val_x") for errors. */
static bool check_data(gb__compiled *c, const char *who, const char *xn, const gb__io *x,
                       const char *yn, const gb__io *y) {
    gb_module *m = c ? c->model : NULL;
    int nin = gb_model_num_inputs(m), nout = gb_model_num_outputs(m);
    if (x->n != nin || (y && y->n != nout)) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the model has %d input%s and %d output%s; got %d %s%s",
                  who, nin, nin == 1 ? "" : "s", nout, nout == 1 ? "" : "s",
                  x->n != nin ? x->n : y->n, x->n != nin ? xn : yn,
                  (x->n != nin ? x->n : y->n) == 1 ? "" : "s");
        return false;
    }
    int64_t n = group_samples(x);
    for (int g = 0; g < (y ? 2 : 1); g++) {
        const gb__io *io = g ? y : x;
        for (int i = 0; i < io->n; i++) {
            gb_tensor *t = io->t[i];
            const char *name = g ? yn : xn;
            if (!t && g == 0) {
                gb__error(GB_ERR_VALUE, NULL, "%s: %s[%d] is NULL", who, name, i);
                return false;
            }
            if (!t) continue;
            int64_t k = gb__num_samples(t);
            if (k < 1) {
                gb__error(GB_ERR_VALUE, NULL, "%s: %s has no samples (rank 0 or an empty first axis)",
                          who, name);
                return false;
            }
            if (k == n) continue;
            char label[32];
            snprintf(label, sizeof label, io->n > 1 ? "%s[%d]" : "%s", name, i);
            gb__error(GB_ERR_SHAPE, NULL, "%s: %s has %lld samples but %s has %lld", who,
                      x->n > 1 ? "x[0]" : xn, (long long)n, label, (long long)k);
            return false;
        }
    }
    return true;
}

/* A single tensor as a group; a NULL one stays an empty slot (an error
 * check_data names). */
static gb__io group_of(gb_tensor *const *t, int n) {
    gb__io g = {.n = n > GB_NN_MAX_IO ? GB_NN_MAX_IO : n};
    for (int i = 0; t && i < g.n; i++) g.t[i] = t[i];
    return g;
}

bool gb__check_fit_options(gb__compiled *c, const gb_fit_options *o) {
    const char *why = o->epochs < 1 ? "epochs must be >= 1"
                      : o->batch_size < 1 ? "batch_size must be >= 1"
                      : !(o->validation_split >= 0 && o->validation_split < 1)
                          ? "validation_split must be in [0, 1)"
                      : o->verbose < 0 || o->verbose > 2 ? "verbose must be 0, 1 or 2"
                      : o->initial_epoch < 0 ? "initial_epoch must be >= 0"
                      : o->steps_per_epoch < 0 ? "steps_per_epoch must be >= 0"
                      : o->ncallbacks < 0 || (o->ncallbacks && !o->callbacks) ? "a bad callback list"
                      : o->nclass_weight < 0 || (o->nclass_weight && !o->class_weight)
                          ? "a bad class_weight array"
                      : o->class_weight && c->nout != 1
                          ? "class_weight is only supported for models of one output"
                          : NULL;
    if (why) gb__error(GB_ERR_VALUE, NULL, "%s: %s", FIT, why);
    return !why;
}

static bool check_fit(gb__compiled *c, const gb__io *x, const gb__io *y, const gb_fit_options *o) {
    if (!check_data(c, FIT, "x", x, "y", y)) return false;
    gb__io vx = group_of(&o->val_x, 1), vy = group_of(&o->val_y, 1);
    if (o->val_data.nx) vx = group_of(o->val_data.x, o->val_data.nx), vy = group_of(o->val_data.y, o->val_data.ny);
    bool has_val = o->val_x || o->val_y || o->val_data.nx;
    if (has_val && !check_data(c, FIT, "val_x", &vx, "val_y", &vy)) return false;
    return gb__check_fit_options(c, o);
}

/* ---- one run ------------------------------------------------------------------------------ */

typedef struct fit_run {
    gb__compiled *c;
    const gb_fit_options *o;
    gb__io x, y;                  /* the training part */
    gb_tensor *sw;                /* NULL: unweighted */
    gb__io vx, vy;                /* validation (vx.n 0: none) */
    gb_tensor *vsw;
    int64_t n;
    int64_t *perm;                /* the current pass's order (NULL: no shuffle) */
    int64_t pos, pass;            /* the stream of batches: offset in the pass, its number */
    uint64_t seed;
    gb_dataset *ds;               /* fit on a dataset: batches come from it */
    gb_iterator *it;              /* the current pass over ds */
    gb__callbacks cbs;
    gb_history *history;
} fit_run;

/* Rows [at, at + m) of every tensor of a group (NULL slots stay NULL). */
static gb__io group_rows(const gb__io *g, int64_t at, int64_t m) {
    gb__io r = {.n = g->n};
    for (int i = 0; i < g->n; i++) r.t[i] = g->t[i] ? gb__rows(g->t[i], at, m) : NULL;
    return r;
}

/* validation_split: the last floor(n * split) rows validate, Keras' way. */
static bool split_validation(fit_run *r, const gb__io *x, const gb__io *y,
                             gb_tensor **sample_weight) {
    const gb_fit_options *o = r->o;
    int64_t n = group_samples(x);
    if (o->val_x || o->val_data.nx) {
        r->vx = o->val_data.nx ? group_of(o->val_data.x, o->val_data.nx) : group_of(&o->val_x, 1);
        r->vy = o->val_data.nx ? group_of(o->val_data.y, o->val_data.ny) : group_of(&o->val_y, 1);
        r->x = *x, r->y = *y, r->n = n;
        return true;
    }
    int64_t at = o->validation_split > 0 ? (int64_t)floor((double)n * (1 - o->validation_split)) : n;
    if (at == 0 || (o->validation_split > 0 && at == n)) {
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: %lld samples are not enough to split off validation_split=%g; give more "
                  "data or another validation_split",
                  FIT, (long long)n, o->validation_split);
        return false;
    }
    r->x = at < n ? group_rows(x, 0, at) : *x;
    r->y = at < n ? group_rows(y, 0, at) : *y;
    r->n = at;
    if (at < n) {
        r->vx = group_rows(x, at, n - at);
        r->vy = group_rows(y, at, n - at);
        if (*sample_weight) {
            r->vsw = gb__rows(*sample_weight, at, n - at);
            *sample_weight = gb__rows(*sample_weight, 0, at);
        }
    }
    return gb_ok();
}

/* Keras' progress bar when verbose, on rank 0 alone in a distributed fit. */
static bool progress_bar(fit_run *r) {
    if (!r->o->verbose || (r->c->dist && gb_dist_rank() != 0)) return true;
    return (r->cbs.progbar = gb__progbar_logger(r->o->out, r->o->verbose)) != NULL;
}

static bool prepare(fit_run *r, const gb__io *x, const gb__io *y) {
    const gb_fit_options *o = r->o;
    gb_tensor *sample_weight = o->sample_weight;
    if (sample_weight && gb__num_samples(sample_weight) != group_samples(x)) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: sample_weight has %lld values for %lld samples", FIT,
                  (long long)gb__num_samples(sample_weight), (long long)group_samples(x));
        return false;
    }
    if (!split_validation(r, x, y, &sample_weight)) return false;
    /* class_weight weighs training only, as in Keras. */
    r->sw = gb__sample_weights(r->y.t[0], o->class_weight, o->nclass_weight, sample_weight, r->n);
    if (!gb_ok()) return false;
    r->seed = o->seed ? o->seed : gb__nn_next_seed();
    r->pos = r->n;                      /* the first batch starts a pass */
    r->pass = o->initial_epoch - 1;
    if (o->shuffle && !(r->perm = malloc((size_t)r->n * sizeof *r->perm))) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for the shuffle", FIT);
        return false;
    }
    r->cbs = (gb__callbacks){.user = o->callbacks, .nuser = o->ncallbacks};
    return progress_bar(r) && (r->history = gb__history_new()) != NULL;
}

/* Rows of t for the batch at offset pos, m long: a slice, or gathered
 * through the pass's permutation. */
static gb_tensor *batch_of(fit_run *r, gb_tensor *t, int64_t pos, int64_t m) {
    if (!t) return NULL;
    return r->perm ? gb__gather_rows(t, r->perm + pos, m) : gb__rows(t, pos, m);
}

static gb__io group_batch(fit_run *r, const gb__io *g, int64_t pos, int64_t m) {
    gb__io b = {.n = g->n};
    for (int i = 0; i < g->n; i++) b.t[i] = batch_of(r, g->t[i], pos, m);
    return b;
}

/* The stream's next batch of the arrays: a pass over the (shuffled)
 * rows, the next pass starting where one ends. Distributed, the batch is
 * batch_size rows per rank and this rank takes its slice; a pass's last
 * rows, when fewer than the ranks, are left out (some rank would get none). */
static void next_array_batch(fit_run *r, gb__io *x, gb__io *y, gb_tensor **sw) {
    if (r->n - r->pos < gb__dist_ranks(r->c)) {
        r->pass++;
        r->pos = 0;
        if (r->perm) gb__shuffle_permutation(r->perm, r->n, r->seed, (uint64_t)r->pass);
    }
    int64_t global = r->o->batch_size * gb__dist_ranks(r->c), first, m;
    gb__dist_slice(r->c, r->n - r->pos < global ? r->n - r->pos : global, &first, &m);
    *x = group_batch(r, &r->x, r->pos + first, m), *y = group_batch(r, &r->y, r->pos + first, m);
    *sw = batch_of(r, r->sw, r->pos + first, m);
    r->pos += r->n - r->pos < global ? r->n - r->pos : global;
}

/* The next batch of the dataset: 1, or 0 at the end of a pass (then the
 * epoch ends, unless steps_per_epoch asks for more: a new pass starts,
 * as Keras' EpochIterator does), -1 after an error. */
static int next_dataset_batch(fit_run *r, gb__io *x, gb__io *y, gb_tensor **sw) {
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!r->it && !(r->it = gb_iterator_new(r->ds))) return -1;
        int got = gb__dataset_batch(r->c, r->it, r->o, x, y, sw);
        if (got != 0) return got;
        gb_iterator_free(r->it);
        r->it = NULL;
        if (!r->o->steps_per_epoch) return 0;
    }
    gb__error(GB_ERR_VALUE, NULL, "%s: the dataset gives no batches", FIT);
    return -1;
}

/* One step on the next batch, with the callbacks around it; on_batch_end
 * runs inside the batch's scope, so it can read the gradients it asked
 * for. 1: trained, 0: the data ended (datasets), -1: an error. */
static int train_batch(fit_run *r, int64_t b) {
    gb_train_state *s = &r->c->state;
    gb_logs logs = {0};
    gb_scope_begin(); /* the batch's tensors die with it */
    gb__io x, y;
    gb_tensor *sw;
    int got = 1;
    if (r->ds)
        got = next_dataset_batch(r, &x, &y, &sw);   /* first: an ended pass is no batch */
    else
        next_array_batch(r, &x, &y, &sw);
    s->want_gradients = false;
    if (got == 1) gb__cb_batch_begin(&r->cbs, s, b, &logs);
    gb__step_out out;
    bool ok = got == 1 && gb_ok() && gb__train_batch(r->c, &x, &y, sw, true, &out) &&
              gb__metrics_update(r->c, &out, &y, sw);
    if (ok) {
        logs.n = 0;
        gb__metrics_logs(r->c, NULL, &logs);
        gb__cb_batch_end(&r->cbs, s, b, &logs);
    }
    s->gradients = NULL;
    s->ngradients = 0;
    gb_scope_end();
    return got == 0 ? 0 : ok && gb_ok() ? 1 : -1;
}

/* The compiled loss and metrics over x, y in batches, into logs; in a
 * distributed fit each rank takes a slice and the metrics combine them. */
static bool evaluate_into(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                          int64_t bs, const char *prefix, gb_logs *logs) {
    gb__metrics_reset(c);
    int64_t first, count;
    gb__dist_slice(c, group_samples(x), &first, &count);
    int64_t n = first + count;
    bool ok = true;
    for (int64_t b = first; ok && b < n; b += bs) {
        int64_t m = n - b < bs ? n - b : bs;
        gb_scope_begin();
        gb__io xb = group_rows(x, b, m), yb = group_rows(y, b, m);
        gb_tensor *swb = sw ? gb__rows(sw, b, m) : NULL;
        gb__step_out out;
        ok = gb__train_batch(c, &xb, &yb, swb, false, &out) && gb__metrics_update(c, &out, &yb, swb);
        gb_scope_end();
    }
    if (ok) gb__metrics_logs(c, prefix, logs);
    return ok;
}

/* The epoch's steps: all of them, or (a dataset of unknown length) until
 * it ends, which then fixes the count for the epochs after. */
static bool run_epoch(fit_run *r, int epoch, gb_logs *logs) {
    gb_train_state *s = &r->c->state;
    gb__metrics_reset(r->c);
    logs->n = 0;
    gb__cb_epoch_begin(&r->cbs, s, epoch, logs);
    int64_t b = 0;
    for (int got = 1; (s->steps < 0 || b < s->steps) && gb_ok() && !s->stop_training; b++) {
        if ((got = train_batch(r, b)) < 0) return false;
        if (got == 0) break;
    }
    if (s->steps < 0) s->steps = b;
    if (r->ds && !r->o->steps_per_epoch) {   /* an epoch is a pass: the next one starts anew */
        gb_iterator_free(r->it);
        r->it = NULL;
    }
    if (!gb_ok() || !gb__dist_epoch_end(r->c)) return false;
    logs->n = 0;
    gb__metrics_logs(r->c, NULL, logs);
    if (r->vx.n && !evaluate_into(r->c, &r->vx, &r->vy, r->vsw, r->o->batch_size, "val_", logs))
        return false;
    if (r->o->val_dataset && !gb__evaluate_dataset_into(r->c, r->o->val_dataset, "val_", logs))
        return false;
    gb__cb_epoch_end(&r->cbs, s, epoch, logs);
    return gb_ok() && gb__history_append(r->history, epoch, logs);
}

static bool train(fit_run *r) {
    const gb_fit_options *o = r->o;
    gb_train_state *s = &r->c->state;
    int64_t global = o->batch_size * gb__dist_ranks(r->c);
    int64_t passes = r->ds ? gb__dataset_steps(r->ds)
                           : r->n / global + (r->n % global >= gb__dist_ranks(r->c) ? 1 : 0);
    *s = (gb_train_state){.model = r->c->model, .optimizer = r->c->opts.optimizer,
                          .epochs = o->epochs,
                          .steps = o->steps_per_epoch ? o->steps_per_epoch : passes,
                          .verbose = o->verbose, .compiled = r->c,
                          .rank = r->c->dist ? gb_dist_rank() : 0,
                          .num_ranks = (int)gb__dist_ranks(r->c)};
    gb_logs logs = {0};
    gb__cb_train_begin(&r->cbs, s, &logs);
    bool ok = gb_ok();
    for (int epoch = o->initial_epoch; ok && epoch < o->epochs && !s->stop_training; epoch++)
        ok = run_epoch(r, epoch, &logs);
    if (ok) gb__cb_train_end(&r->cbs, s, &logs);
    return ok && gb_ok();
}

static gb_history *fit_groups(gb_module *model, const gb__io *x, const gb__io *y,
                              const gb_fit_options *opts) {
    if (!gb_ok()) return NULL;
    gb__compiled *c = gb__compiled_of(model, FIT);
    gb_fit_options o = opts ? *opts : gb_fit_defaults();
    if (!c || !check_fit(c, x, y, &o)) return NULL;
    fit_run r = {.c = c, .o = &o};
    gb_scope_begin(); /* the split, the weights: fit's own tensors */
    bool ok = (!o.distributed || gb__dist_fit_begin(c, x)) && prepare(&r, x, y) && train(&r);
    gb__dist_fit_end(c);
    gb_scope_end();
    free(r.perm);
    gb_callback_free(r.cbs.progbar);
    if (!ok) {
        gb_history_free(r.history);
        return NULL;
    }
    return r.history;
}

gb_history *gb_model_fit_dataset(gb_module *model, gb_dataset *ds, const gb_fit_options *opts) {
    if (!gb_ok()) return NULL;
    gb__compiled *c = gb__compiled_of(model, FIT);
    gb_fit_options o = opts ? *opts : gb_fit_defaults();
    if (!c || !gb__check_fit_dataset(c, ds, &o)) return NULL;
    fit_run r = {.c = c, .o = &o, .ds = ds};
    r.cbs = (gb__callbacks){.user = o.callbacks, .nuser = o.ncallbacks};
    bool ok = (!o.distributed || gb__dist_fit_begin(c, NULL)) && progress_bar(&r) &&
              (r.history = gb__history_new()) && train(&r);
    gb__dist_fit_end(c);
    gb_iterator_free(r.it);
    gb_callback_free(r.cbs.progbar);
    if (!ok) {
        gb_history_free(r.history);
        return NULL;
    }
    return r.history;
}

gb_history *gb_model_fit(gb_module *model, gb_tensor *x, gb_tensor *y, const gb_fit_options *opts) {
    gb__io xs = gb__io_one(x), ys = gb__io_one(y);
    return fit_groups(model, &xs, &ys, opts);
}

gb_history *gb_model_fit_arrays(gb_module *model, gb_data_arrays data, const gb_fit_options *o) {
    gb__io xs = group_of(data.x, data.nx), ys = group_of(data.y, data.ny);
    if (data.nx > GB_NN_MAX_IO || data.ny > GB_NN_MAX_IO || (data.nx && !data.x) || (data.ny && !data.y)) {
        gb__error(GB_ERR_VALUE, NULL, "gb_model_fit_arrays: a bad data array");
        return NULL;
    }
    return fit_groups(model, &xs, &ys, o);
}

/* ---- evaluate, predict ------------------------------------------------------------------ */

static bool evaluate_groups(gb_module *model, const gb__io *x, const gb__io *y,
                            gb_tensor *sample_weight, int64_t batch_size, gb_logs *out) {
    static const char *const WHO = "gb_model_evaluate";
    if (!gb_ok()) return false;
    gb__compiled *c = gb__compiled_of(model, WHO);
    if (!c || !check_data(c, WHO, "x", x, "y", y)) return false;
    if (sample_weight && gb__num_samples(sample_weight) != group_samples(x)) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: x has %lld samples but sample_weight has %lld", WHO,
                  (long long)group_samples(x), (long long)gb__num_samples(sample_weight));
        return false;
    }
    if (batch_size < 1 || !out) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO, !out ? "out is NULL" : "batch_size must be >= 1");
        return false;
    }
    out->n = 0;
    gb_scope_begin();
    gb_tensor *sw = sample_weight ? gb__sample_weights(y->t[0], NULL, 0, sample_weight,
                                                       group_samples(x))
                                  : NULL;
    bool ok = gb_ok() && evaluate_into(c, x, y, sw, batch_size, NULL, out);
    gb_scope_end();
    return ok;
}

bool gb_model_evaluate(gb_module *model, gb_tensor *x, gb_tensor *y, gb_tensor *sample_weight,
                       int64_t batch_size, gb_logs *out) {
    gb__io xs = gb__io_one(x), ys = gb__io_one(y);
    return evaluate_groups(model, &xs, &ys, sample_weight, batch_size, out);
}

bool gb_model_evaluate_arrays(gb_module *model, gb_data_arrays data, gb_tensor *sample_weight,
                              int64_t batch_size, gb_logs *out) {
    gb__io xs = group_of(data.x, data.nx), ys = group_of(data.y, data.ny);
    return evaluate_groups(model, &xs, &ys, sample_weight, batch_size, out);
}

/* Predictions gathered batch by batch into one buffer, then one tensor. */
typedef struct predictions {
    unsigned char *data;
    size_t row_bytes;
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
} predictions;

static bool collect(predictions *p, gb_tensor *out, int64_t n, int64_t at) {
    if (!p->data) {
        p->dtype = gb_tensor_dtype(out);
        p->rank = gb_rank(out);
        memcpy(p->shape, gb_shape(out), (size_t)p->rank * sizeof p->shape[0]);
        p->shape[0] = n;
        p->row_bytes = (size_t)(gb_size(out) / gb_dim(out, 0)) * gb_dtype_size(p->dtype);
        if (!(p->data = malloc(p->row_bytes * (size_t)n + 1))) {
            gb__error(GB_ERR_MEMORY, NULL, "gb_model_predict: out of memory for %lld predictions",
                      (long long)n);
            return false;
        }
    }
    memcpy(p->data + p->row_bytes * (size_t)at, gb_data(out), p->row_bytes * (size_t)gb_dim(out, 0));
    return true;
}

/* One batch's predictions, compiled (traced) or, for a model never
 * compiled, eagerly as Keras does. */
static bool predict_one(gb_module *model, gb__compiled *c, const gb__io *x, gb__io *out) {
    if (c) return gb__predict_batch(c, x, out);
    out->n = gb_module_call_n(model, x->n, x->t, out->t, false);
    return out->n > 0;
}

int gb_model_predict_arrays(gb_module *model, int nx, gb_tensor *const *x, int64_t batch_size,
                            gb_tensor **out) {
    static const char *const WHO = "gb_model_predict";
    if (!gb_ok()) return -1;
    gb__io xs = group_of(x, nx);
    int64_t n = group_samples(&xs);
    if (!model || !out || n < 1 || batch_size < 1 || nx > GB_NN_MAX_IO) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO,
                  !model ? "the model is NULL" : !out ? "out is NULL"
                  : n < 1 ? "x has no samples" : nx > GB_NN_MAX_IO ? "too many inputs"
                          : "batch_size must be >= 1");
        return -1;
    }
    gb__compiled *c = gb__module_attached(model);
    if (c && !check_data(c, WHO, "x", &xs, "y", NULL)) return -1;
    predictions p[GB_NN_MAX_IO] = {0};
    int nout = -1;
    for (int64_t b = 0; b < n; b += batch_size) {
        int64_t m = n - b < batch_size ? n - b : batch_size;
        gb_scope_begin();
        gb__io xb = group_rows(&xs, b, m), yb;
        nout = predict_one(model, c, &xb, &yb) && gb_ok() ? yb.n : -1;
        for (int k = 0; k < nout; k++)
            if (!collect(&p[k], yb.t[k], n, b)) nout = -1;
        gb_scope_end();
        if (nout < 0) break;
    }
    for (int k = 0; k < nout; k++) out[k] = gb_tensor_from(p[k].dtype, p[k].data, p[k].rank, p[k].shape);
    for (int k = 0; k < GB_NN_MAX_IO; k++) free(p[k].data);
    return gb_ok() ? nout : -1;
}

gb_tensor *gb_model_predict(gb_module *model, gb_tensor *x, int64_t batch_size) {
    gb_tensor *out[GB_NN_MAX_IO];
    int n = gb_model_predict_arrays(model, 1, &x, batch_size, out);
    if (n > 1)
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_model_predict: the model has %d outputs; use gb_model_predict_arrays", n);
    return n == 1 ? out[0] : NULL;
}
