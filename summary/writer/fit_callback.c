/* writer/fit_callback.c — the summary callback of fit (Keras'
 * TensorBoard callback): scalars per batch and per epoch, the learning
 * rate, weight and gradient histograms, the train step's graph with its
 * op times, the run's hparams (fit_hparams.c) and, by option, the
 * classes' precision-recall curves on validation data, and the embedding
 * projector's points (a layer's activations on a fixed sample, or an
 * Embedding layer's weights) every embeddings_freq epochs. It lives with the writer, not in the engine's train/, because
 * the engine never depends on the store (ARCHITECTURE.md); it reaches fit
 * through the public callback interface only. In a distributed fit only
 * rank 0 writes (the ranks' logs are the same), unless every rank writes
 * a store of its own into a logdir (every_rank).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_summary_callback.h"
#include "writer/internal.h"

typedef struct summary_cb {
    gb_summary_writer *w;
    gb_summary_callback_options o;
    int epoch;
    int64_t batches;          /* seen in this fit */
    bool exporting;           /* trace_on called, the graph not exported yet */
    bool quiet;               /* a rank other than 0 of a distributed fit: writes nothing */
} summary_cb;

static gb_summary_writer *writer(const summary_cb *c) {
    return c->w ? c->w : gb_summary_get_default();
}

static void scalars(summary_cb *c, const char *prefix, const gb_logs *logs, int64_t step) {
    char tag[96];
    for (int i = 0; i < logs->n; i++) {
        snprintf(tag, sizeof tag, "%s/%s", prefix, logs->key[i]);
        gb_summary_scalar(writer(c), tag, logs->value[i], step);
    }
}

static void export_graph(summary_cb *c, int64_t step) {
    if (!c->exporting) return;
    c->exporting = false;
    gb_summary_trace_export(writer(c), "train_function", step);
}

static void sc_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)logs;
    summary_cb *c = gb_callback_state(cb);
    c->batches = 0;
    /* A distributed fit: rank 0 writes the run, unless each rank has a store of its own. */
    c->quiet = s->rank != 0 && !c->o.every_rank;
    if (c->quiet) return;
    if (!c->o.no_hparams && writer(c)) gb__fit_record_hparams(writer(c), s);
    c->exporting = !c->o.no_graph && writer(c) && gb_summary_trace_on(writer(c), true) == GB_OK;
}

static void sc_epoch_begin(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)s, (void)logs;
    ((summary_cb *)gb_callback_state(cb))->epoch = epoch;
}

static bool histogram_epoch(const summary_cb *c) {
    return c->o.histogram_freq > 0 && c->epoch % c->o.histogram_freq == 0;
}

/* Each batch is the global step it will count (as Keras' callback sets
 * tf.summary's step): summaries and numerics alerts without a step of
 * their own carry it, and a profiler capture (the first profile_batches
 * batches) gets its step marks, which the Profile page's per-step figures
 * need. */
static void sc_batch_begin(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)logs;
    summary_cb *c = gb_callback_state(cb);
    gb_summary_set_step(gb_optimizer_iterations(s->optimizer) + 1);
    if (!c->quiet && histogram_epoch(c) && batch == s->steps - 1) s->want_gradients = true;
}

/* name/<variable> histograms of one tensor per trainable variable. */
static void histograms(summary_cb *c, gb_module *model, const char *name, gb_tensor *const *t,
                       int n) {
    int nvars = 0;
    gb_variable *const *vars = gb_module_trainable_variables(model, &nvars);
    char tag[256];
    for (int i = 0; i < nvars && i < n; i++) {
        gb_scope_begin();
        gb_tensor *v = t ? t[i] : gb_variable_value(vars[i]);
        snprintf(tag, sizeof tag, "%s/%s", name, gb_variable_name(vars[i]));
        if (v) gb_summary_histogram(writer(c), tag, v, c->epoch);
        gb_scope_end();
    }
}

static void sc_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    summary_cb *c = gb_callback_state(cb);
    int64_t step = gb_optimizer_iterations(s->optimizer);
    if (c->quiet) return;
    c->batches++;
    if (c->o.update_freq >= 0 && c->batches % (c->o.update_freq ? c->o.update_freq : 1) == 0) {
        scalars(c, "batch", logs, step);
        gb_summary_scalar(writer(c), "learning_rate", gb_optimizer_learning_rate(s->optimizer), step);
    }
    if (s->gradients) histograms(c, s->model, "gradients", s->gradients, s->ngradients);
    /* The capture ends after profile_batches batches, or with the first
     * epoch when it is shorter: not at the fit's end, where its last step
     * would take in the evaluation after the epoch. */
    if (c->batches == (c->o.profile_batches ? c->o.profile_batches : 20) || batch == s->steps - 1)
        export_graph(c, step);
}

/* The classes' precision-recall curves on the validation data. */
static void pr_curves(summary_cb *c, gb_module *model, int epoch) {
    gb_scope_begin();
    gb_tensor *out = gb_model_predict(model, c->o.pr_x, 256);
    if (out && c->o.pr_from_logits) out = gb_softmax(out, -1);
    if (out)
        gb_summary_pr_curves(writer(c), "pr", c->o.pr_y, out,
                             c->o.pr_num_thresholds ? c->o.pr_num_thresholds : 101,
                             c->o.pr_class_names, epoch);
    gb_scope_end();
}

/* The activations of the Sequential model's layer `index` on x, in
 * batches of 256 without training behaviour; *name its layer's name. */
static gb_tensor *activations(gb_module *model, gb_tensor *x, int index, const char **name) {
    if (!gb_is_sequential(model)) {
        gb__summary_fail("the summary callback's embeddings_x needs a Sequential model");
        return NULL;
    }
    int layers = gb_sequential_num_layers(model), last = index < 0 ? layers + index : index;
    if (last < 0 || last >= layers) {
        gb__summary_fail("embeddings_layer %d is not a layer of the model (%d layers)", index, layers);
        return NULL;
    }
    *name = gb_module_name(gb_sequential_layer(model, last));
    int64_t n = gb_shape(x)[0];
    int parts = (int)((n + 255) / 256);
    gb_tensor **out = calloc((size_t)(parts ? parts : 1), sizeof *out);
    if (!out) return NULL;
    for (int p = 0; p < parts; p++) {
        int64_t begin[GB_MAX_RANK] = {(int64_t)p * 256}, size[GB_MAX_RANK];
        for (int i = 0; i < GB_MAX_RANK; i++) size[i] = i ? -1 : (n - begin[0] < 256 ? n - begin[0] : 256);
        gb_tensor *h = gb_slice(x, begin, gb_rank(x), size, gb_rank(x));
        for (int l = 0; h && l <= last; l++) h = gb_module_call(gb_sequential_layer(model, l), h, false);
        out[p] = h;
    }
    gb_tensor *all = parts ? gb_concat(out, parts, 0) : NULL;
    free(out);
    return all;
}

static void embeddings(summary_cb *c, gb_module *model, int epoch) {
    const gb_summary_callback_options *o = &c->o;
    char tag[256];
    gb_scope_begin();
    gb_tensor *points = NULL;
    if (o->embeddings_x) {
        const char *name = "layer";
        points = activations(model, o->embeddings_x, o->embeddings_layer, &name);
        snprintf(tag, sizeof tag, "embeddings/%s", name);
        /* [N, ...] activations flattened to [N, D] */
        if (points && gb_rank(points) != 2) {
            int64_t dims[2] = {gb_shape(points)[0], gb_size(points) / (gb_shape(points)[0] ? gb_shape(points)[0] : 1)};
            points = gb_reshape(points, 2, dims);
        }
    } else {
        points = gb_variable_value(o->embeddings_variable);
        snprintf(tag, sizeof tag, "embeddings/%s", gb_variable_name(o->embeddings_variable));
    }
    if (points)
        gb_summary_embedding(writer(c), tag, points, o->embeddings_metadata, o->embeddings_columns,
                             o->embeddings_sprite, epoch);
    gb_scope_end();
}

static void sc_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    summary_cb *c = gb_callback_state(cb);
    if (c->quiet) return;
    scalars(c, "epoch", logs, epoch);
    if (c->o.pr_x && c->o.pr_y && writer(c)) pr_curves(c, s->model, epoch);
    if (histogram_epoch(c)) histograms(c, s->model, "weights", NULL, 1 << 30);
    if (c->o.embeddings_freq > 0 && epoch % c->o.embeddings_freq == 0 && writer(c) &&
        (c->o.embeddings_x || c->o.embeddings_variable))
        embeddings(c, s->model, epoch);
}

static void sc_train_end(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)logs;
    summary_cb *c = gb_callback_state(cb);
    if (c->quiet) return;
    export_graph(c, gb_optimizer_iterations(s->optimizer));
    if (writer(c)) gb_summary_flush(writer(c));
}

static const gb_callback_type SUMMARY_CALLBACK = {
    .name = "SummaryCallback",
    .state_size = sizeof(summary_cb),
    .on_train_begin = sc_train_begin,
    .on_train_end = sc_train_end,
    .on_epoch_begin = sc_epoch_begin,
    .on_epoch_end = sc_epoch_end,
    .on_batch_begin = sc_batch_begin,
    .on_batch_end = sc_batch_end,
};

gb_callback *gb_summary_callback(gb_summary_writer *w, const gb_summary_callback_options *o) {
    gb_callback *cb = gb_callback_new(&SUMMARY_CALLBACK);
    if (!cb) return NULL;
    summary_cb *c = gb_callback_state(cb);
    c->w = w;
    if (o) c->o = *o;
    return cb;
}
