/* train/adapt.c — preprocessing layers adapted to a dataset (keras
 * Layer.adapt): the loop over the dataset, here because nn sits below the
 * input pipeline; the counting and the vocabulary are the layer's
 * (nn/text_vectorization.c).
 */
#include "nn/internal.h"
#include "train/internal.h"

bool gb_text_vectorization_adapt(gb_module *layer, gb_dataset *ds) {
    if (!layer || !ds) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_text_vectorization_adapt: %s is NULL",
                               layer ? "the dataset" : "the layer");
        return false;
    }
    gb_iterator *it = gb_iterator_new(ds);
    bool ok = it != NULL;
    gb_tensor *e[GB_DATA_MAX_COMPONENTS];
    while (ok && gb_iterator_next(it, e)) {
        gb_scope_begin();
        ok = gb__tv_adapt_batch(layer, e[0]);
        gb_scope_end();
    }
    ok = ok && gb_ok();
    gb_iterator_free(it);
    return gb__tv_adapt_finish(layer, ok);
}
