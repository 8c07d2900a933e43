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
} gb_summary_callback_options;

/* w NULL: the default writer at the time of each write. */
gb_callback *gb_summary_callback(gb_summary_writer *w, const gb_summary_callback_options *o);

#ifdef __cplusplus
}
#endif
#endif
