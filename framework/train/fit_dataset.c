/* train/fit_dataset.c — fit and evaluate on a dataset (tf.data), as
 * Keras' fit(dataset).
 *
 * Each element is one batch. Its components are the model's inputs in
 * order, then the targets of the outputs compiled with a loss, then,
 * optionally, one sample weight per sample — Keras' (x, y, sample_weight)
 * flattened. The dataset decides batching and shuffling (batch_size and
 * shuffle of the options do not apply); class_weight still weighs each
 * batch by its labels. An epoch is one pass, or steps_per_epoch batches
 * of a stream that starts a new pass when one ends.
 */
#include <stdio.h>

#include "train/internal.h"

static const char *const FIT = "gb_model_fit";

/* Components the model needs per element: inputs + targets (+ weights). */
static int needed(const gb__compiled *c) { return gb_model_num_inputs(c->model) + c->nlossy; }

static bool check_components(const gb__compiled *c, gb_dataset *ds, const char *who,
                             const char *what) {
    if (!ds) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s is NULL", who, what);
        return false;
    }
    int n = gb_dataset_num_components(ds), want = needed(c);
    if (n == want || n == want + 1) return true;
    gb__error(GB_ERR_VALUE, NULL,
              "%s: %s gives elements of %d components; the model needs %d input%s and %d "
              "target%s (then, optionally, the sample weights)",
              who, what, n, gb_model_num_inputs(c->model),
              gb_model_num_inputs(c->model) == 1 ? "" : "s", c->nlossy, c->nlossy == 1 ? "" : "s");
    return false;
}

bool gb__check_fit_dataset(gb__compiled *c, gb_dataset *ds, const gb_fit_options *o) {
    if (!check_components(c, ds, FIT, "the dataset") ||
        (o->val_dataset && !check_components(c, o->val_dataset, FIT, "val_dataset")) ||
        !gb__check_fit_options(c, o))
        return false;
    const char *why = o->validation_split > 0 ? "validation_split needs arrays; give val_dataset"
                      : o->val_x || o->val_data.nx ? "give validation data as val_dataset"
                      : o->sample_weight ? "sample_weight comes from the dataset's elements"
                      : gb_dataset_cardinality(ds) == GB_DATA_INFINITE && !o->steps_per_epoch
                          ? "the dataset is infinite; give steps_per_epoch"
                          : NULL;
    if (why) gb__error(GB_ERR_VALUE, NULL, "%s: %s", FIT, why);
    return !why;
}

int64_t gb__dataset_steps(gb_dataset *ds) {
    int64_t n = gb_dataset_cardinality(ds);
    return n >= 0 ? n : -1;   /* unknown: counted in the first epoch */
}

int gb__dataset_batch(gb__compiled *c, gb_iterator *it, const gb_fit_options *o, gb__io *x,
                      gb__io *y, gb_tensor **sw) {
    gb_tensor *comp[GB_DATA_MAX_COMPONENTS] = {0};
    if (!gb_iterator_next(it, comp)) return gb_ok() ? 0 : -1;
    int nin = gb_model_num_inputs(c->model), k = 0;
    *x = (gb__io){.n = nin};
    for (int i = 0; i < nin; i++) x->t[i] = comp[k++];
    *y = (gb__io){.n = c->nout};
    for (int i = 0; i < c->nout; i++) y->t[i] = c->loss[i].kind != GB_LOSS_NONE ? comp[k++] : NULL;
    *sw = comp[k];   /* NULL when the elements carry no weights */
    if (o && o->class_weight) {
        int64_t n = gb_rank(x->t[0]) > 0 ? gb_dim(x->t[0], 0) : 1;
        *sw = gb__sample_weights(y->t[0], o->class_weight, o->nclass_weight, *sw, n);
    }
    return gb_ok() ? 1 : -1;
}

bool gb__evaluate_dataset_into(gb__compiled *c, gb_dataset *ds, const char *prefix,
                               gb_logs *logs) {
    gb__metrics_reset(c);
    gb_iterator *it = gb_iterator_new(ds);
    bool ok = it != NULL;
    int64_t batches = 0;
    for (int got = 1; ok && got == 1; batches += got == 1) {
        gb_scope_begin();
        gb__io x, y;
        gb_tensor *sw;
        gb__step_out out;
        got = gb__dataset_batch(c, it, NULL, &x, &y, &sw);
        ok = got == 0 || (got == 1 && gb__train_batch(c, &x, &y, sw, false, &out) &&
                          gb__metrics_update(c, &out, &y, sw));
        gb_scope_end();
    }
    gb_iterator_free(it);
    if (ok && batches == 0) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_model_evaluate: the dataset has no samples; the loss and metrics need at "
                  "least one");
        ok = false;
    }
    if (ok) gb__metrics_logs(c, prefix, logs);
    return ok && gb_ok();
}

bool gb_model_evaluate_dataset(gb_module *model, gb_dataset *ds, gb_logs *out) {
    static const char *const WHO = "gb_model_evaluate";
    if (!gb_ok()) return false;
    gb__compiled *c = gb__compiled_of(model, WHO);
    if (!c || !check_components(c, ds, WHO, "the dataset")) return false;
    if (!out) {
        gb__error(GB_ERR_VALUE, NULL, "%s: out is NULL", WHO);
        return false;
    }
    if (gb_dataset_cardinality(ds) == GB_DATA_INFINITE) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the dataset is infinite; take() a part of it", WHO);
        return false;
    }
    out->n = 0;
    return gb__evaluate_dataset_into(c, ds, NULL, out);
}
