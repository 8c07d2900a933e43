/* train/compile.c — model.compile: the optimizer, the loss and the
 * metrics a model trains with, kept on the model; the compiled loss of a
 * batch (per-sample losses, weighted, averaged over the batch).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

static const char *const COMPILE = "gb_model_compile";

static void compiled_free(void *p) {
    gb__compiled *c = p;
    gb__steps_free(c);
    gb_metric_free(c->loss_tracker);
    for (int k = 0; k < c->nout; k++) gb_metric_free(c->out_loss[k]);
    for (int i = 0; i < c->nmetrics; i++)
        if (c->metric_kind[i] != GB__METRIC_OBJECT || c->owns_metric[i]) gb_metric_free(c->metric[i]);
    if (c->owns_optimizer) gb_optimizer_free(c->opts.optimizer);
    free(c->resume.metrics);
    free(c->grads);
    free(c->step_out);
    gb__health_fit_free(c->health);
    free(c);
}

/* A model compiled again with the optimizer or metric objects its old
 * compiled state owns (gb_model_optimizer of a loaded model) keeps them:
 * the ownership moves to the new state before the old one is freed. */
static void inherit_ownership(gb__compiled *c, gb__compiled *old) {
    if (!old) return;
    if (old->owns_optimizer && old->opts.optimizer == c->opts.optimizer) {
        old->owns_optimizer = false;
        c->owns_optimizer = true;
    }
    for (int i = 0; i < old->nmetrics; i++)
        for (int k = 0; old->owns_metric[i] && k < c->nmetrics; k++)
            if (c->metric_kind[k] == GB__METRIC_OBJECT && c->metric[k] == old->metric[i]) {
                old->owns_metric[i] = false;
                c->owns_metric[k] = true;
            }
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

static bool check_options(gb_module *model, const gb_compile_options *o) {
    int nout = gb_model_num_outputs(model);
    const char *why =
        !o ? "the options are NULL"
        : !o->optimizer ? "no optimizer"
        : o->nlosses && o->nlosses != nout ? "losses must give one loss per model output"
        : o->nlosses && !o->losses ? "a NULL losses array"
        : !o->nlosses && o->loss.kind == GB_LOSS_NONE && !o->train_step ? "no loss"
        : o->train_step && (nout != 1 || gb_model_num_inputs(model) != 1)
            ? "a custom train_step needs a model of one input and one output"
        : o->nmetrics < 0 || (o->nmetrics && !o->metrics) || o->nmetric_objects < 0 ||
                (o->nmetric_objects && !o->metric_objects) ||
                o->nmetrics + o->nmetric_objects > GB__MAX_METRICS
            ? "a bad metrics list (at most 16 metrics, names and objects together)"
            : NULL;
    for (int k = 0; !why && k < (o->nlosses ? o->nlosses : 1); k++) {
        const gb_loss_spec *l = o->nlosses ? &o->losses[k] : &o->loss;
        if (l->kind == GB_LOSS_CUSTOM && !l->fn) why = "a custom loss without a function";
        if (o->loss_weights && !(isfinite(o->loss_weights[k]) && o->loss_weights[k] >= 0))
            why = "loss_weights must be finite and >= 0";
    }
    if (why) gb__error(GB_ERR_VALUE, NULL, "%s: %s", COMPILE, why);
    return !why;
}

/* Each output's loss and weight; trackers of each output's loss when
 * there are several (Keras logs "<output>_loss"). */
static bool set_losses(gb__compiled *c, const gb_compile_options *o) {
    c->nout = gb_model_num_outputs(c->model);
    for (int k = 0; k < c->nout; k++) {
        c->loss[k] = o->nlosses ? o->losses[k] : o->loss;
        c->loss_weight[k] = o->loss_weights ? o->loss_weights[k] : 1.0;
        if (c->loss[k].kind == GB_LOSS_NONE) continue;
        c->nlossy++;
        if (c->nout == 1) continue;
        char name[GB_LOGS_KEY_BYTES];
        snprintf(name, sizeof name, "%s_loss", gb_model_output_name(c->model, k));
        if (!(c->out_loss[k] = gb_metric_mean_new(name))) return false;
    }
    if (c->nlossy || o->train_step) return true;
    gb__error(GB_ERR_VALUE, NULL, "%s: no output of the model has a loss", COMPILE);
    return false;
}

/* One metric for output k; false (quietly) when its loss does not fit it. */
static bool add_metric(gb__compiled *c, const char *name, int k) {
    gb__metric_kind kind;
    if (!metric_kind(name, c->loss[k].kind, &kind)) return false;
    /* Among several outputs, mse and mae watch the regressions only. */
    gb_loss_kind lk = c->loss[k].kind;
    bool classifies = lk == GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY ||
                      lk == GB_LOSS_CATEGORICAL_CROSSENTROPY || lk == GB_LOSS_BINARY_CROSSENTROPY;
    bool binary = kind == GB__METRIC_PRECISION || kind == GB__METRIC_RECALL || kind == GB__METRIC_AUC;
    if (c->nout > 1 && classifies && (kind == GB__METRIC_MSE || kind == GB__METRIC_MAE))
        return false;
    /* ... and precision, recall and AUC the binary classifiers only. */
    if (c->nout > 1 && binary && lk != GB_LOSS_BINARY_CROSSENTROPY) return false;
    if (c->nmetrics == GB__MAX_METRICS) {
        gb__error(GB_ERR_VALUE, NULL, "%s: more than %d metrics over all outputs", COMPILE,
                  GB__MAX_METRICS);
        return true;
    }
    char full[GB_LOGS_KEY_BYTES];
    if (c->nout > 1)
        snprintf(full, sizeof full, "%s_%s", gb_model_output_name(c->model, k), name);
    else
        snprintf(full, sizeof full, "%s", name);
    c->metric_kind[c->nmetrics] = kind;
    c->metric_out[c->nmetrics] = k;
    if ((c->metric[c->nmetrics] = metric_new(kind, full))) c->nmetrics++;
    return true;
}

/* Metric objects (the caller's) watch the model's first output with a loss. */
static bool add_metric_objects(gb__compiled *c, const gb_compile_options *o) {
    int k = 0;
    while (k < c->nout - 1 && c->loss[k].kind == GB_LOSS_NONE) k++;
    for (int i = 0; i < o->nmetric_objects && gb_ok(); i++) {
        if (!o->metric_objects[i] || c->nmetrics == GB__MAX_METRICS) {
            gb__error(GB_ERR_VALUE, NULL, "%s: metric object %d is %s", COMPILE, i,
                      o->metric_objects[i] ? "one too many" : "NULL");
            break;
        }
        c->metric_kind[c->nmetrics] = GB__METRIC_OBJECT;
        c->metric_out[c->nmetrics] = k;
        c->metric[c->nmetrics++] = o->metric_objects[i];
    }
    return gb_ok();
}

/* A metric name watches every output whose loss it fits ("accuracy" on
 * the cross-entropy outputs of a model that also regresses). */
static bool set_metrics(gb__compiled *c, const gb_compile_options *o) {
    for (int i = 0; i < o->nmetrics && gb_ok(); i++) {
        const char *name = o->metrics[i] ? o->metrics[i] : "";
        bool used = false;
        for (int k = 0; k < c->nout; k++)
            if (c->nout == 1 || c->loss[k].kind != GB_LOSS_NONE) used |= add_metric(c, name, k);
        if (used) {   /* a known name: short enough */
            snprintf(c->metric_names[c->nmetric_names++], GB_LOGS_KEY_BYTES, "%s", name);
            continue;
        }
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: unknown metric '%s' for %s (accuracy, sparse_categorical_accuracy, "
                  "categorical_accuracy, mse, mae, precision, recall, auc)",
                  COMPILE, name, c->nout > 1 ? "any output's loss" : "this loss");
    }
    return gb_ok() && add_metric_objects(c, o);
}

bool gb_model_compile(gb_module *model, const gb_compile_options *o) {
    if (!gb_ok()) return false;
    if (!model) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the model is NULL", COMPILE);
        return false;
    }
    if (!check_options(model, o)) return false;
    gb__compiled *c = calloc(1, sizeof *c);
    if (!c) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", COMPILE);
        return false;
    }
    c->model = model;
    c->opts = *o;
    c->opts.metrics = NULL;
    c->opts.losses = NULL;
    c->opts.loss_weights = NULL;
    c->opts.metric_objects = NULL;
    c->state = (gb_train_state){.model = model, .optimizer = o->optimizer, .compiled = c};
    c->loss_tracker = gb_metric_mean_new("loss");
    if (!set_losses(c, o) || !set_metrics(c, o)) {
        compiled_free(c);
        return false;
    }
    inherit_ownership(c, gb__module_attached(model));
    gb__module_attach(model, c, compiled_free);
    return true;
}

bool gb__model_compile_owned(gb_module *model, const gb_compile_options *o) {
    bool ok = gb_model_compile(model, o);
    gb__compiled *c = ok ? gb__module_attached(model) : NULL;
    if (c) {
        c->owns_optimizer = true;
        for (int i = 0; i < c->nmetrics; i++) c->owns_metric[i] = c->metric_kind[i] == GB__METRIC_OBJECT;
        return true;
    }
    gb_optimizer_free(o->optimizer);
    for (int i = 0; i < o->nmetric_objects; i++) gb_metric_free(o->metric_objects[i]);
    return false;
}

gb_optimizer *gb_model_optimizer(gb_module *model) {
    gb__compiled *c = gb__module_attached(model);
    return c ? c->opts.optimizer : NULL;
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

/* Output k's loss: per-sample losses weighted by sw, summed, divided by
 * the batch size (a zero weight masks a sample, it does not shrink the
 * batch). A loss of a sequence model gives one value per sample and time
 * step ([batch, time, ...]): a sample's loss is their mean, so the total is
 * the mean over every element, as Keras' sum_over_batch_size takes it. */
static gb_tensor *output_loss(gb__compiled *c, int k, gb_tensor *y_true, gb_tensor *y_pred,
                              gb_tensor *sw) {
    const gb_loss_spec *l = &c->loss[k];
    gb_tensor *per = per_sample(l, y_true, y_pred);
    if (per && gb_rank(per) > 1) {
        int64_t axes[GB_MAX_RANK];
        for (int a = 1; a < gb_rank(per); a++) axes[a - 1] = a;
        per = gb_reduce_mean(per, axes, gb_rank(per) - 1, false);
    }
    if (per && gb_rank(per) != 1 && gb_ok()) {
        char b[64];
        gb__error(GB_ERR_SHAPE, NULL, "%s: a loss must give one value per sample, got shape %s",
                  l->name ? l->name : "custom_loss", gb_shape_str(per, b, sizeof b));
        per = NULL;
    }
    if (per && sw) per = gb_mul(per, gb_cast(sw, gb_tensor_dtype(per)));
    return per ? gb_reduce_mean(per, GB_ALL_AXES, false) : NULL;
}

/* total + the losses the forward pass added (add_loss, activity
 * penalties) + the model's weight penalties, as Keras' compute_loss. */
static gb_tensor *with_extra_losses(gb__compiled *c, gb_tensor *total) {
    gb_tensor *extra[2] = {gb__losses_so_far(), NULL};
    if (!total || !gb_ok()) return total;
    gb_name_scope_push("regularization");
    extra[1] = gb_module_regularization_loss(c->model);
    for (int i = 0; i < 2; i++)
        if (extra[i]) total = gb_add(total, gb_cast(extra[i], gb_tensor_dtype(total)));
    gb_name_scope_pop();
    return total;
}

gb_tensor *gb__compiled_loss(gb__compiled *c, const gb__io *y, const gb__io *y_pred,
                             gb_tensor *sw, gb_tensor **per_output) {
    gb_name_scope_push("loss");
    gb_tensor *total = NULL;
    for (int k = 0; k < c->nout && gb_ok(); k++) {
        if (c->loss[k].kind == GB_LOSS_NONE) continue;
        if (c->nout > 1) gb_name_scope_push(gb_model_output_name(c->model, k));
        gb_tensor *l = output_loss(c, k, y->t[k], y_pred->t[k], sw);
        if (per_output) per_output[k] = l;
        if (l && c->loss_weight[k] != 1.0) l = gb_mul_scalar(l, c->loss_weight[k]);
        if (l) total = total ? gb_add(total, l) : l;
        if (c->nout > 1) gb_name_scope_pop();
    }
    total = with_extra_losses(c, total);
    gb_name_scope_pop();
    return gb_ok() ? total : NULL;
}

gb_tensor *gb_train_compiled_loss(gb_train_state *s, gb_tensor *y_true, gb_tensor *y_pred,
                                  gb_tensor *sample_weight) {
    gb__compiled *c = s ? s->compiled : NULL;
    if (!c) {
        gb__error(GB_ERR_STATE, NULL, "gb_train_compiled_loss: called outside fit");
        return NULL;
    }
    gb__io y = gb__io_one(y_true), p = gb__io_one(y_pred);
    return gb__compiled_loss(c, &y, &p, sample_weight, NULL);
}
