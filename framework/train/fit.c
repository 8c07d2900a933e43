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
 * Resuming (BackupAndRestore): before the callbacks of each batch's and
 * epoch's end, fit publishes where it is (gb__fit_position: the epoch,
 * the batches of it done, the pass and offset in the stream, the seed);
 * a callback's on_train_begin may ask fit to continue from such a
 * position (gb__resume). Arrays then take up the same pass at the same
 * offset with the same permutation; a dataset replays its iterators (a
 * shuffle's order is its seed and the iterator's number) and drops the
 * batches the interrupted run had trained. The metrics of an epoch
 * resumed part way are put back as they were, so its logs are the
 * uninterrupted run's too.
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
    int64_t ds_iters, ds_taken;   /* iterators of ds made; batches taken from it */
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

/* A new iterator over the dataset, counted: a pass's order may depend on
 * how many came before it (shuffle), which a resumed run replays. */
static gb_iterator *new_pass(fit_run *r) {
    r->ds_iters++;
    r->ds_taken = 0;
    return gb_iterator_new(r->ds);
}

/* The next batch of the dataset: 1, or 0 at the end of a pass (then the
 * epoch ends, unless steps_per_epoch asks for more: a new pass starts,
 * as Keras' EpochIterator does), -1 after an error. */
static int next_dataset_batch(fit_run *r, gb__io *x, gb__io *y, gb_tensor **sw) {
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!r->it && !(r->it = new_pass(r))) return -1;
        int got = gb__dataset_batch(r->c, r->it, r->o, x, y, sw);
        r->ds_taken += got == 1;
        if (got != 0) return got;
        gb_iterator_free(r->it);
        r->it = NULL;
        if (!r->o->steps_per_epoch) return 0;
    }
    gb__error(GB_ERR_VALUE, NULL, "%s: the dataset gives no batches", FIT);
    return -1;
}

/* Where the run is, for the callbacks that save it: epoch, batches of it
 * done, the stream of batches. */
static void publish(fit_run *r, int epoch, int64_t done) {
    r->c->at = (gb__fit_position){
        .epoch = epoch, .batch = done, .seed = (int64_t)r->seed,
        .pass = r->ds ? r->ds_iters : r->pass,
        .pos = r->ds ? (r->it ? r->ds_taken : -1) : r->pos,
        .samples = r->ds ? -1 : r->n, .batch_size = r->ds ? 0 : r->o->batch_size,
        .steps = r->c->state.steps};
}

/* One step on the next batch, with the callbacks around it; on_batch_end
 * runs inside the batch's scope, so it can read the gradients it asked
 * for. 1: trained, 0: the data ended (datasets), -1: an error. */
static int train_batch(fit_run *r, int epoch, int64_t b) {
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
    bool ok = got == 1 && gb_ok() && gb__health_fit_before(r->c) &&
              gb__train_batch(r->c, &x, &y, sw, true, &out) &&
              gb__metrics_update(r->c, &out, &y, sw);
    if (ok) {
        gb__health_fit_after(r->c, &x, &out);
        logs.n = 0;
        gb__metrics_logs(r->c, NULL, &logs);
        publish(r, epoch, b + 1);
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

/* An epoch resumed part way starts with the metrics it had then. */
static bool resume_metrics(gb__compiled *c) {
    bool ok = !c->resume.metrics || gb__metrics_state_set(c, c->resume.metrics, c->resume.nmetrics);
    free(c->resume.metrics);
    c->resume.metrics = NULL;
    return ok;
}

/* The epoch's steps from batch `done` (0 unless resumed): all of them,
 * or (a dataset of unknown length) until it ends, which then fixes the
 * count for the epochs after. */
static bool run_epoch(fit_run *r, int epoch, int64_t done, gb_logs *logs) {
    gb_train_state *s = &r->c->state;
    gb__metrics_reset(r->c);
    if (done > 0 && !resume_metrics(r->c)) return false;
    logs->n = 0;
    gb__cb_epoch_begin(&r->cbs, s, epoch, logs);
    int64_t b = done;
    for (int got = 1; (s->steps < 0 || b < s->steps) && gb_ok() && !s->stop_training; b++) {
        if ((got = train_batch(r, epoch, b)) < 0) return false;
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
    publish(r, epoch, b);
    gb__cb_epoch_end(&r->cbs, s, epoch, logs);
    return gb_ok() && gb__history_append(r->history, epoch, logs);
}

/* ---- resuming ------------------------------------------------------------------------------ */

bool gb__fit_resumable(const gb__fit_position *now, const gb__fit_position *saved) {
    bool arrays = now->samples >= 0;
    const struct {
        const char *what;
        int64_t there, here;
    } same[] = {
        {"training samples", saved->samples, now->samples},
        {"batch size", saved->batch_size, now->batch_size},
        {"steps per epoch", saved->steps < 0 ? now->steps : saved->steps,
         now->steps < 0 ? saved->steps : now->steps},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        if (same[i].there == same[i].here) continue;
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: the saved training state is of another run (%s: %lld there, %lld here)",
                  FIT, same[i].what, (long long)same[i].there, (long long)same[i].here);
        return false;
    }
    /* A dataset's passes: at most one per step, and one more per epoch. */
    int64_t steps = now->steps, per_pass = steps > 0 ? steps : 1;
    bool inside = saved->epoch >= 0 && saved->epoch <= INT32_MAX && saved->batch >= 0 &&
                  (steps < 0 || saved->batch <= steps) && saved->pass >= -1 &&
                  (arrays ? saved->pos >= 0 && saved->pos <= now->samples
                          : saved->pos >= -1 && saved->pass / per_pass <= 2 * (saved->epoch + 1));
    if (!inside)
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: the saved training state is out of range (epoch %lld, batch %lld, pass "
                  "%lld, position %lld)",
                  FIT, (long long)saved->epoch, (long long)saved->batch, (long long)saved->pass,
                  (long long)saved->pos);
    return inside;
}

/* The dataset as the interrupted run left it: as many iterators made
 * before the live one, and that one's batches taken. */
static bool replay_dataset(fit_run *r, const gb__fit_position *at) {
    int64_t before = at->pos >= 0 ? at->pass - 1 : at->pass;
    for (int64_t i = 0; i < before && gb_ok(); i++) gb_iterator_free(new_pass(r));
    if (at->pos < 0 || !gb_ok()) return gb_ok();
    if (!(r->it = new_pass(r))) return false;
    gb_tensor *skip[GB_DATA_MAX_COMPONENTS];
    for (int64_t i = 0; i < at->pos; i++) {
        gb_scope_begin();
        bool got = gb_iterator_next(r->it, skip);
        gb_scope_end();
        if (!got) {
            if (gb_ok())
                gb__error(GB_ERR_VALUE, NULL, "%s: the dataset ended after %lld of the %lld batches "
                          "the resumed run had taken", FIT, (long long)i, (long long)at->pos);
            return false;
        }
        r->ds_taken++;
    }
    return true;
}

/* Continues from the position a callback asked for (the run's seed
 * too, so the order is the saved run's); *first and *done: the epoch and
 * the batches of it done. */
static bool resume(fit_run *r, int *first, int64_t *done) {
    const gb__fit_position *at = &r->c->resume.at;
    r->c->resume.pending = false;
    if (!gb__fit_resumable(&r->c->at, at)) return false;
    *first = (int)at->epoch;
    *done = at->batch;
    r->seed = (uint64_t)at->seed;
    if (r->ds) return replay_dataset(r, at);
    r->pass = at->pass;
    r->pos = at->pos;
    if (r->perm && r->pos < r->n) gb__shuffle_permutation(r->perm, r->n, r->seed, (uint64_t)r->pass);
    return gb_ok();
}

static bool train(fit_run *r) {
    const gb_fit_options *o = r->o;
    gb_train_state *s = &r->c->state;
    int64_t global = o->batch_size * gb__dist_ranks(r->c);
    int64_t passes = r->ds ? gb__dataset_steps(r->ds)
                           : r->n / global + (r->n % global >= gb__dist_ranks(r->c) ? 1 : 0);
    const char *loss = "";
    for (int k = 0; k < r->c->nout && !*loss; k++)
        if (r->c->loss[k].kind != GB_LOSS_NONE) loss = gb__loss_name(&r->c->loss[k]);
    *s = (gb_train_state){.model = r->c->model, .optimizer = r->c->opts.optimizer,
                          .epochs = o->epochs,
                          .steps = o->steps_per_epoch ? o->steps_per_epoch : passes,
                          .batch_size = r->ds ? 0 : o->batch_size, .loss = loss,
                          .verbose = o->verbose, .compiled = r->c,
                          .rank = r->c->dist ? gb_dist_rank() : 0,
                          .num_ranks = (int)gb__dist_ranks(r->c),
                          .progress_bar = r->cbs.progbar};
    gb_logs logs = {0};
    int first = o->initial_epoch;
    int64_t done = 0;
    publish(r, first, 0);   /* which run this is, for a callback that resumes one */
    gb__cb_train_begin(&r->cbs, s, &logs);
    bool ok = gb_ok() && (!r->c->resume.pending || resume(r, &first, &done));
    for (int epoch = first; ok && epoch < o->epochs && !s->stop_training; epoch++, done = 0)
        ok = run_epoch(r, epoch, done, &logs);
    free(r->c->resume.metrics);   /* not used: resumed at an epoch's start */
    r->c->resume.metrics = NULL;
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
