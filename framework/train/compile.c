/* train/compile.c — model.compile: the optimizer, the loss and the
 * metrics a model trains with, kept on the model; the compiled loss of a
 * batch (per-sample losses, weighted, averaged over the batch).
 */
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

static const char *const COMPILE = "gb_model_compile";

static void compiled_free(void *p) {
    gb__compiled *c = p;
    gb__steps_free(c);
    gb_metric_free(c->loss_tracker);
    for (int i = 0; i < c->nmetrics; i++)
        if (c->metric_kind[i] != GB__METRIC_OBJECT) gb_metric_free(c->metric[i]);
    free(c->grads);
    free(c);
}

/* "accuracy" follows the loss (sparse labels or one-hot), as Keras. */
static bool metric_kind(const char *name, gb_loss_kind loss, gb__metric_kind *out) {
    if (!strcmp(name, "accuracy") || !strcmp(name, "acc")) {
        if (loss == GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY) *out = GB__METRIC_SPARSE_ACCURACY;
        else if (loss == GB_LOSS_CATEGORICAL_CROSSENTROPY) *out = GB__METRIC_CATEGORICAL_ACCURACY;
        else return false;
        return true;
    }
    if (!strcmp(name, "sparse_categorical_accuracy")) *out = GB__METRIC_SPARSE_ACCURACY;
    else if (!strcmp(name, "categorical_accuracy")) *out = GB__METRIC_CATEGORICAL_ACCURACY;
    else if (!strcmp(name, "mse") || !strcmp(name, "mean_squared_error")) *out = GB__METRIC_MSE;
    else if (!strcmp(name, "mae") || !strcmp(name, "mean_absolute_error")) *out = GB__METRIC_MAE;
    else if (!strcmp(name, "precision")) *out = GB__METRIC_PRECISION;
    else if (!strcmp(name, "recall")) *out = GB__METRIC_RECALL;
    else if (!strcmp(name, "auc")) *out = GB__METRIC_AUC;
    else return false;
    return true;
}

static gb_metric *metric_new(gb__metric_kind k, const char *name) {
    switch (k) {
    case GB__METRIC_SPARSE_ACCURACY: return gb_metric_sparse_categorical_accuracy_new(name);
    case GB__METRIC_CATEGORICAL_ACCURACY: return gb_metric_categorical_accuracy_new(name);
    case GB__METRIC_PRECISION: return gb_metric_precision_new(name, 0.5);
    case GB__METRIC_RECALL: return gb_metric_recall_new(name, 0.5);
    case GB__METRIC_AUC: return gb_metric_auc_new(name, NULL);
    default: return gb_metric_mean_new(name);
    }
}

static bool check_options(const gb_compile_options *o) {
    const char *why = !o ? "the options are NULL"
                      : !o->optimizer ? "no optimizer"
                      : o->loss.kind == GB_LOSS_NONE && !o->train_step ? "no loss"
                      : o->loss.kind == GB_LOSS_CUSTOM && !o->loss.fn ? "a custom loss without a function"
                      : o->nmetrics < 0 || (o->nmetrics && !o->metrics) ||
                              o->nmetric_objects < 0 || (o->nmetric_objects && !o->metric_objects) ||
                              o->nmetrics + o->nmetric_objects > GB__MAX_METRICS
                          ? "a bad metrics list (at most 8 metrics, names and objects together)"
                          : NULL;
    if (why) gb__error(GB_ERR_VALUE, NULL, "%s: %s", COMPILE, why);
    return !why;
}

bool gb_model_compile(gb_module *model, const gb_compile_options *o) {
    if (!gb_ok()) return false;
    if (!model) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the model is NULL", COMPILE);
        return false;
    }
    if (!check_options(o)) return false;
    gb__compiled *c = calloc(1, sizeof *c);
    if (!c) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", COMPILE);
        return false;
    }
    c->model = model;
    c->opts = *o;
    c->opts.metrics = NULL;
    c->opts.metric_objects = NULL;
    c->state = (gb_train_state){.model = model, .optimizer = o->optimizer, .compiled = c};
    c->loss_tracker = gb_metric_mean_new("loss");
    for (int i = 0; i < o->nmetrics; i++) {
        const char *name = o->metrics[i] ? o->metrics[i] : "";
        if (!metric_kind(name, o->loss.kind, &c->metric_kind[i])) {
            gb__error(GB_ERR_VALUE, NULL,
                      "%s: unknown metric '%s' for this loss (accuracy, sparse_categorical_accuracy, "
                      "categorical_accuracy, mse, mae, precision, recall, auc)",
                      COMPILE, name);
            compiled_free(c);
            return false;
        }
        c->metric[c->nmetrics] = metric_new(c->metric_kind[i], name);
        if (!c->metric[c->nmetrics]) {
            compiled_free(c);
            return false;
        }
        c->nmetrics++;
    }
    for (int i = 0; i < o->nmetric_objects; i++) {
        if (!o->metric_objects[i]) {
            gb__error(GB_ERR_VALUE, NULL, "%s: metric object %d is NULL", COMPILE, i);
            compiled_free(c);
            return false;
        }
        c->metric_kind[c->nmetrics] = GB__METRIC_OBJECT;
        c->metric[c->nmetrics++] = o->metric_objects[i];
    }
    gb__module_attach(model, c, compiled_free);
    return true;
}

gb__compiled *gb__compiled_of(gb_module *model, const char *who) {
    gb__compiled *c = gb__module_attached(model);
    if (!c && gb_ok())
        gb__error(GB_ERR_STATE, NULL, "%s: the model '%s' is not compiled; call gb_model_compile first",
                  who, model ? gb_module_name(model) : "(NULL)");
    return c;
}

/* ---- the compiled loss ------------------------------------------------------------- */

static gb_tensor *per_sample(const gb_loss_spec *l, gb_tensor *y, gb_tensor *p) {
    const gb_reduction none = GB_REDUCTION_NONE;
    switch (l->kind) {
    case GB_LOSS_MEAN_SQUARED_ERROR: return gb_loss_mean_squared_error(y, p, none);
    case GB_LOSS_MEAN_ABSOLUTE_ERROR: return gb_loss_mean_absolute_error(y, p, none);
    case GB_LOSS_HUBER: return gb_loss_huber(y, p, l->delta > 0 ? l->delta : 1.0, none);
    case GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
        return gb_loss_sparse_categorical_crossentropy(y, p, l->from_logits, none);
    case GB_LOSS_CATEGORICAL_CROSSENTROPY:
        return gb_loss_categorical_crossentropy(y, p, l->from_logits, none);
    case GB_LOSS_BINARY_CROSSENTROPY: return gb_loss_binary_crossentropy(y, p, l->from_logits, none);
    case GB_LOSS_CUSTOM: return l->fn(y, p, l->user);
    default: return NULL;
    }
}

gb_tensor *gb_train_compiled_loss(gb_train_state *s, gb_tensor *y_true, gb_tensor *y_pred,
                                  gb_tensor *sample_weight) {
    gb__compiled *c = s ? s->compiled : NULL;
    if (!c) {
        gb__error(GB_ERR_STATE, NULL, "gb_train_compiled_loss: called outside fit");
        return NULL;
    }
    gb_name_scope_push("loss");
    gb_tensor *per = per_sample(&c->opts.loss, y_true, y_pred);
    if (per && gb_rank(per) != 1 && gb_ok()) {
        char b[64];
        gb__error(GB_ERR_SHAPE, NULL, "%s: a loss must give one value per sample, got shape %s",
                  c->opts.loss.name ? c->opts.loss.name : "custom_loss", gb_shape_str(per, b, sizeof b));
        per = NULL;
    }
    if (per && sample_weight) per = gb_mul(per, gb_cast(sample_weight, gb_tensor_dtype(per)));
    /* sum / batch size: a zero weight masks a sample, it does not shrink the batch. */
    gb_tensor *loss = per ? gb_reduce_mean(per, GB_ALL_AXES, false) : NULL;
    gb_name_scope_pop();
    return loss;
}
