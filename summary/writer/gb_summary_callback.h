/* gb_summary_callback.h — glassbox's TensorBoard callback: what fit does,
 * written to the event store while it runs.
 *
 *   gb_callback *tb = gb_summary_callback(writer, &(gb_summary_callback_options){
 *       .histogram_freq = 1});
 *   o.callbacks = &tb; o.ncallbacks = 1;
 *   gb_model_fit(model, x, y, &o);
 *
 * Per batch (every update_freq): "batch/<log>" for every log (loss,
 * accuracy...) and "learning_rate", at the optimizer's step. Per epoch:
 * "epoch/<log>" (val_ included) at the epoch. Every histogram_freq
 * epochs: "weights/<variable>" and "gradients/<variable>" (the epoch's
 * last batch) at the epoch. Once: the traced train step's graph, with op
 * times over its first profile_batches batches, under "train_function"
 * (the Graphs dashboard) — and, as for every traced function when the
 * writer is the default one, each trace with its reason (Traces).
 * When training begins: the run's hparams (the HParams dashboard), from
 * the compile and fit arguments — "optimizer" (its class) and
 * "optimizer.<key>" for each number of its config, "loss", "batch_size",
 * "epochs" — and the model's config: "<class><k>.units", ".filters",
 * ".rate" of every layer that has one ("dense0.units", "conv2d1.filters",
 * "dropout0.rate": the k-th layer of its class in the model).
 */
#ifndef GB_SUMMARY_CALLBACK_H
#define GB_SUMMARY_CALLBACK_H

#include "gb_summary.h"
#include "gb_train.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_summary_callback_options {
    int64_t update_freq;      /* batches between per-batch scalars; 0: every batch; -1: none */
    int histogram_freq;       /* epochs between histograms; 0: none */
    bool no_graph;            /* do not export the train step's graph */
    int profile_batches;      /* batches timed for the graph's op costs; 0: 20 */
    bool no_hparams;          /* do not record the run's hparams (see above) */
    bool every_rank;          /* a distributed fit: every rank writes, each into a
                                 store of its own (gb_summary_logdir_store); by
                                 default rank 0 alone does (the logs are the same) */
    /* Precision-recall curves at each epoch's end (gb_summary_pr_curves,
     * tags "pr/<class>"): pr_x the validation inputs, pr_y their labels
     * (class indices [N] or one-hot [N, C]); the model's outputs are
     * probabilities, or logits when pr_from_logits (a softmax first).
     * Borrowed: they must live through the fit. NULL: no curves. */
    gb_tensor *pr_x, *pr_y;
    bool pr_from_logits;
    int pr_num_thresholds;    /* 0: 101 (thresholds every 0.01) */
    const char *const *pr_class_names;   /* NULL: the class indices */
    /* The embedding projector every embeddings_freq epochs (Keras'
     * embeddings_freq; 0: never), at each such epoch's end, under tag
     * "embeddings/<layer name>": with embeddings_x (a fixed sample of
     * inputs) the activations of the Sequential model's layer
     * embeddings_layer (its index; negative counts from the end, -2 the
     * penultimate layer) on it; without, embeddings_variable's value
     * ([N, D], an Embedding layer's weights; tag "embeddings/<variable>").
     * Metadata, its column names and a sprite as gb_summary_embedding
     * takes them (NULL: none). Borrowed: they must live through the fit. */
    int embeddings_freq;
    gb_tensor *embeddings_x;
    int embeddings_layer;
    gb_variable *embeddings_variable;
    gb_tensor *embeddings_metadata;
    const char *const *embeddings_columns;
    gb_tensor *embeddings_sprite;
} gb_summary_callback_options;

/* w NULL: the default writer at the time of each write. */
gb_callback *gb_summary_callback(gb_summary_writer *w, const gb_summary_callback_options *o);

#ifdef __cplusplus
}
#endif
#endif
