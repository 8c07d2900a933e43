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
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/internal.h"
#include "train/internal.h"

static const char *const FIT = "gb_model_fit";

gb_fit_options gb_fit_defaults(void) {
    return (gb_fit_options){.epochs = 1, .batch_size = 32, .verbose = 1, .shuffle = true};
}

/* ---- checks ------------------------------------------------------------------------------ */

/* x and y (named for errors) hold the same number of samples, at least one. */
static bool check_pair(const char *who, const char *xn, gb_tensor *x, const char *yn, gb_tensor *y) {
    int64_t nx = gb__num_samples(x), ny = gb__num_samples(y);
    const char *why = !x || !y ? "is NULL" : nx < 1 || ny < 1 ? "has no samples (rank 0 or an empty first axis)"
                                                                : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s %s", who, !x || nx < 1 ? xn : yn, why);
        return false;
    }
    if (nx != ny)
        gb__error(GB_ERR_SHAPE, NULL, "%s: %s has %lld samples but %s has %lld", who, xn,
                  (long long)nx, yn, (long long)ny);
    return nx == ny;
}

static bool check_fit(gb_tensor *x, gb_tensor *y, const gb_fit_options *o) {
    if (!check_pair(FIT, "x", x, "y", y)) return false;
    if ((o->val_x || o->val_y) && !check_pair(FIT, "val_x", o->val_x, "val_y", o->val_y)) return false;
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
                          : NULL;
    if (why) gb__error(GB_ERR_VALUE, NULL, "%s: %s", FIT, why);
    return !why;
}

/* ---- one run ------------------------------------------------------------------------------ */

typedef struct fit_run {
    gb__compiled *c;
    const gb_fit_options *o;
    gb_tensor *x, *y, *sw;        /* the training part; sw NULL: unweighted */
    gb_tensor *vx, *vy, *vsw;     /* validation, or NULL */
    int64_t n;
    int64_t *perm;                /* the current pass's order (NULL: no shuffle) */
    int64_t pos, pass;            /* the stream of batches: offset in the pass, its number */
    uint64_t seed;
    gb__callbacks cbs;
    gb_history *history;
} fit_run;

/* validation_split: the last floor(n * split) rows validate, Keras' way. */
static bool split_validation(fit_run *r, gb_tensor *x, gb_tensor *y, gb_tensor **sample_weight) {
    const gb_fit_options *o = r->o;
    int64_t n = gb__num_samples(x);
    if (o->val_x) {
        r->vx = o->val_x, r->vy = o->val_y;
        r->x = x, r->y = y, r->n = n;
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
    r->x = at < n ? gb__rows(x, 0, at) : x;
    r->y = at < n ? gb__rows(y, 0, at) : y;
    r->n = at;
    if (at < n) {
        r->vx = gb__rows(x, at, n - at);
        r->vy = gb__rows(y, at, n - at);
        if (*sample_weight) {
            r->vsw = gb__rows(*sample_weight, at, n - at);
            *sample_weight = gb__rows(*sample_weight, 0, at);
        }
    }
    return gb_ok();
}

static bool prepare(fit_run *r, gb_tensor *x, gb_tensor *y) {
    const gb_fit_options *o = r->o;
    gb_tensor *sample_weight = o->sample_weight;
    if (sample_weight && gb__num_samples(sample_weight) != gb__num_samples(x)) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: sample_weight has %lld values for %lld samples", FIT,
                  (long long)gb__num_samples(sample_weight), (long long)gb__num_samples(x));
        return false;
    }
    if (!split_validation(r, x, y, &sample_weight)) return false;
    /* class_weight weighs training only, as in Keras. */
    r->sw = gb__sample_weights(r->y, o->class_weight, o->nclass_weight, sample_weight, r->n);
    if (!gb_ok()) return false;
    r->seed = o->seed ? o->seed : gb__nn_next_seed();
    r->pos = r->n;                      /* the first batch starts a pass */
    r->pass = o->initial_epoch - 1;
    if (o->shuffle && !(r->perm = malloc((size_t)r->n * sizeof *r->perm))) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for the shuffle", FIT);
        return false;
    }
    r->cbs = (gb__callbacks){.user = o->callbacks, .nuser = o->ncallbacks};
    if (o->verbose && !(r->cbs.progbar = gb__progbar_logger(o->out, o->verbose))) return false;
    return (r->history = gb__history_new()) != NULL;
}

/* Rows of t for the batch at offset pos, m long: a slice, or gathered
 * through the pass's permutation. */
static gb_tensor *batch_of(fit_run *r, gb_tensor *t, int64_t pos, int64_t m) {
    if (!t) return NULL;
    return r->perm ? gb__gather_rows(t, r->perm + pos, m) : gb__rows(t, pos, m);
}

/* One step on the stream's next batch, with the callbacks around it;
 * on_batch_end runs inside the batch's scope, so it can read the
 * gradients it asked for. */
static bool train_batch(fit_run *r, int64_t b) {
    gb_train_state *s = &r->c->state;
    gb_logs logs = {0};
    s->want_gradients = false;
    gb__cb_batch_begin(&r->cbs, s, b, &logs);
    if (r->pos >= r->n) {
        r->pass++;
        r->pos = 0;
        if (r->perm) gb__shuffle_permutation(r->perm, r->n, r->seed, (uint64_t)r->pass);
    }
    int64_t m = r->n - r->pos < r->o->batch_size ? r->n - r->pos : r->o->batch_size;
    gb_scope_begin(); /* the batch's tensors die with it */
    gb_tensor *x = batch_of(r, r->x, r->pos, m), *y = batch_of(r, r->y, r->pos, m);
    gb_tensor *sw = batch_of(r, r->sw, r->pos, m), *loss, *y_pred;
    bool ok = gb_ok() && gb__train_batch(r->c, x, y, sw, true, &loss, &y_pred) &&
              gb__metrics_update(r->c, loss, y, y_pred, sw);
    r->pos += m;
    if (ok) {
        logs.n = 0;
        gb__metrics_logs(r->c, NULL, &logs);
        gb__cb_batch_end(&r->cbs, s, b, &logs);
    }
    s->gradients = NULL;
    s->ngradients = 0;
    gb_scope_end();
    return ok && gb_ok();
}

/* The compiled loss and metrics over x, y in batches, into logs. */
static bool evaluate_into(gb__compiled *c, gb_tensor *x, gb_tensor *y, gb_tensor *sw, int64_t bs,
                          const char *prefix, gb_logs *logs) {
    gb__metrics_reset(c);
    int64_t n = gb__num_samples(x);
    bool ok = true;
    for (int64_t b = 0; ok && b < n; b += bs) {
        int64_t m = n - b < bs ? n - b : bs;
        gb_scope_begin();
        gb_tensor *xb = gb__rows(x, b, m), *yb = gb__rows(y, b, m);
        gb_tensor *swb = sw ? gb__rows(sw, b, m) : NULL, *loss, *y_pred;
        ok = gb__train_batch(c, xb, yb, swb, false, &loss, &y_pred) &&
             gb__metrics_update(c, loss, yb, y_pred, swb);
        gb_scope_end();
    }
    if (ok) gb__metrics_logs(c, prefix, logs);
    return ok;
}

static bool run_epoch(fit_run *r, int epoch, gb_logs *logs) {
    gb_train_state *s = &r->c->state;
    gb__metrics_reset(r->c);
    logs->n = 0;
    gb__cb_epoch_begin(&r->cbs, s, epoch, logs);
    for (int64_t b = 0; b < s->steps && gb_ok() && !s->stop_training; b++)
        if (!train_batch(r, b)) return false;
    if (!gb_ok()) return false;
    logs->n = 0;
    gb__metrics_logs(r->c, NULL, logs);
    if (r->vx && !evaluate_into(r->c, r->vx, r->vy, r->vsw, r->o->batch_size, "val_", logs))
        return false;
    gb__cb_epoch_end(&r->cbs, s, epoch, logs);
    return gb_ok() && gb__history_append(r->history, epoch, logs);
}

static bool train(fit_run *r) {
    const gb_fit_options *o = r->o;
    gb_train_state *s = &r->c->state;
    int64_t passes = (r->n + o->batch_size - 1) / o->batch_size;
    *s = (gb_train_state){.model = r->c->model, .optimizer = r->c->opts.optimizer,
                          .epochs = o->epochs,
                          .steps = o->steps_per_epoch ? o->steps_per_epoch : passes,
                          .verbose = o->verbose, .compiled = r->c};
    gb_logs logs = {0};
    gb__cb_train_begin(&r->cbs, s, &logs);
    bool ok = gb_ok();
    for (int epoch = o->initial_epoch; ok && epoch < o->epochs && !s->stop_training; epoch++)
        ok = run_epoch(r, epoch, &logs);
    if (ok) gb__cb_train_end(&r->cbs, s, &logs);
    return ok && gb_ok();
}

gb_history *gb_model_fit(gb_module *model, gb_tensor *x, gb_tensor *y, const gb_fit_options *opts) {
    if (!gb_ok()) return NULL;
    gb__compiled *c = gb__compiled_of(model, FIT);
    gb_fit_options o = opts ? *opts : gb_fit_defaults();
    if (!c || !check_fit(x, y, &o)) return NULL;
    fit_run r = {.c = c, .o = &o};
    gb_scope_begin(); /* the split, the weights: fit's own tensors */
    bool ok = prepare(&r, x, y) && train(&r);
    gb_scope_end();
    free(r.perm);
    gb_callback_free(r.cbs.progbar);
    if (!ok) {
        gb_history_free(r.history);
        return NULL;
    }
    return r.history;
}

/* ---- evaluate, predict ------------------------------------------------------------------ */

bool gb_model_evaluate(gb_module *model, gb_tensor *x, gb_tensor *y, gb_tensor *sample_weight,
                       int64_t batch_size, gb_logs *out) {
    static const char *const WHO = "gb_model_evaluate";
    if (!gb_ok()) return false;
    gb__compiled *c = gb__compiled_of(model, WHO);
    if (!c || !check_pair(WHO, "x", x, "y", y)) return false;
    if (sample_weight && !check_pair(WHO, "x", x, "sample_weight", sample_weight)) return false;
    if (batch_size < 1 || !out) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO, !out ? "out is NULL" : "batch_size must be >= 1");
        return false;
    }
    out->n = 0;
    gb_scope_begin();
    gb_tensor *sw = sample_weight ? gb__sample_weights(y, NULL, 0, sample_weight, gb__num_samples(x))
                                  : NULL;
    bool ok = gb_ok() && evaluate_into(c, x, y, sw, batch_size, NULL, out);
    gb_scope_end();
    return ok;
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

gb_tensor *gb_model_predict(gb_module *model, gb_tensor *x, int64_t batch_size) {
    static const char *const WHO = "gb_model_predict";
    if (!gb_ok()) return NULL;
    int64_t n = gb__num_samples(x);
    if (!model || n < 1 || batch_size < 1) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO,
                  !model ? "the model is NULL" : n < 1 ? "x has no samples" : "batch_size must be >= 1");
        return NULL;
    }
    /* Keras predicts with an uncompiled model too: then eagerly. */
    gb__compiled *c = gb__module_attached(model);
    predictions p = {0};
    bool ok = true;
    for (int64_t b = 0; ok && b < n; b += batch_size) {
        int64_t m = n - b < batch_size ? n - b : batch_size;
        gb_scope_begin();
        gb_tensor *xb = gb__rows(x, b, m);
        gb_tensor *out = c ? gb__predict_batch(c, xb) : gb_module_call(model, xb, false);
        ok = out && gb_ok() && collect(&p, out, n, b);
        gb_scope_end();
    }
    gb_tensor *t = ok ? gb_tensor_from(p.dtype, p.data, p.rank, p.shape) : NULL;
    free(p.data);
    return t;
}
