/* train/compile_config.c — a model's compile arguments as a config and
 * back (Keras' compile_config in a .keras file), for model files:
 *
 *   {"optimizer": {"class_name": "Adam", "config": {...}},     gb_optimizer_get_config
 *    "losses": [{"loss": "sparse_categorical_crossentropy", "from_logits": true},
 *               {"loss": "huber", "delta": 1.5}, {"loss": "custom", "name": "my_loss"},
 *               null, ...],                                    one per output; null: none
 *    "loss_weights": [1.0, ...],                               one per output
 *    "metrics": ["accuracy", ...],                             the names compile was given
 *    "metric_objects": [{"class_name": "Precision", "name": "precision"}, ...],
 *    "run_eagerly": false}
 *
 * Built-in losses go by Keras' name with their arguments. What is C code
 * goes by name, and the loading program supplies it (custom_objects.c):
 * a custom loss by its gb_loss_spec.name, a metric object by its class
 * (its factory gets the saved name). A custom train_step has no name a
 * loader could look up: saving such a model is an error that says to
 * save the weights instead, as is an unnamed custom loss.
 */
#include <stdio.h>
#include <string.h>

#include "nn/config_internal.h"
#include "train/internal.h"

static const char *const WHO = "compile";

static const char *const LOSS_NAMES[] = {
    [GB_LOSS_NONE] = NULL,
    [GB_LOSS_MEAN_SQUARED_ERROR] = "mean_squared_error",
    [GB_LOSS_MEAN_ABSOLUTE_ERROR] = "mean_absolute_error",
    [GB_LOSS_HUBER] = "huber",
    [GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY] = "sparse_categorical_crossentropy",
    [GB_LOSS_CATEGORICAL_CROSSENTROPY] = "categorical_crossentropy",
    [GB_LOSS_BINARY_CROSSENTROPY] = "binary_crossentropy",
    [GB_LOSS_CUSTOM] = "custom",
};
enum { NLOSS_NAMES = sizeof LOSS_NAMES / sizeof *LOSS_NAMES };

const char *gb__loss_name(const gb_loss_spec *l) {
    if (l->kind == GB_LOSS_CUSTOM) return l->name && l->name[0] ? l->name : "custom";
    return (unsigned)l->kind < NLOSS_NAMES && LOSS_NAMES[l->kind] ? LOSS_NAMES[l->kind] : "";
}

/* ---- writing ------------------------------------------------------------------------------- */

static bool put_loss(gb_config *list, const gb__compiled *c, int k) {
    const gb_loss_spec *l = &c->loss[k];
    if (l->kind == GB_LOSS_NONE) return gb_config_put_null(list, NULL) != NULL;
    if (l->kind == GB_LOSS_CUSTOM && (!l->name || !l->name[0])) {
        gb__error(GB_ERR_VALUE, NULL,
                  "model '%s': the custom loss of output %d has no name, so a model file cannot "
                  "name it; give gb_loss_spec.name and register the loss under it "
                  "(gb_register_loss) in the program that loads the model",
                  gb_module_name(c->model), k);
        return false;
    }
    gb_config *d = gb_config_put_dict(list, NULL);
    if (!d || !gb_config_put_string(d, "loss", LOSS_NAMES[l->kind])) return false;
    switch (l->kind) {
    case GB_LOSS_CUSTOM: return gb_config_put_string(d, "name", l->name) != NULL;
    case GB_LOSS_HUBER: return gb_config_put_number(d, "delta", l->delta > 0 ? l->delta : 1.0) != NULL;
    case GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY:
    case GB_LOSS_CATEGORICAL_CROSSENTROPY:
    case GB_LOSS_BINARY_CROSSENTROPY: return gb_config_put_bool(d, "from_logits", l->from_logits) != NULL;
    default: return true;
    }
}

static bool put_metrics(gb_config *out, const gb__compiled *c) {
    gb_config *names = gb_config_put_list(out, "metrics");
    for (int i = 0; names && i < c->nmetric_names; i++)
        if (!gb_config_put_string(names, NULL, c->metric_names[i])) return false;
    gb_config *objects = names ? gb_config_put_list(out, "metric_objects") : NULL;
    for (int i = 0; objects && i < c->nmetrics; i++) {
        if (c->metric_kind[i] != GB__METRIC_OBJECT) continue;
        gb_config *d = gb_config_put_dict(objects, NULL);
        if (!d || !gb_config_put_string(d, "class_name", gb__metric_class_name(c->metric[i])) ||
            !gb_config_put_string(d, "name", gb_metric_name(c->metric[i])))
            return false;
    }
    return objects != NULL;
}

bool gb__compile_get_config(const gb__compiled *c, gb_config *out) {
    if (c->opts.train_step) {
        gb__error(GB_ERR_VALUE, NULL,
                  "model '%s' was compiled with a custom train_step (C code), which a model file "
                  "cannot hold; save its weights with a checkpoint instead (gb_checkpoint_write, or "
                  "ModelCheckpoint with save_weights_only)",
                  gb_module_name(c->model));
        return false;
    }
    gb_config *opt = gb_optimizer_get_config(c->opts.optimizer);
    bool ok = opt && gb__config_attach(out, "optimizer", opt);
    gb_config *losses = ok ? gb_config_put_list(out, "losses") : NULL;
    for (int k = 0; losses && k < c->nout; k++)
        if (!put_loss(losses, c, k)) losses = NULL;
    gb_config *weights = losses ? gb_config_put_list(out, "loss_weights") : NULL;
    for (int k = 0; weights && k < c->nout; k++)
        if (!gb_config_put_number(weights, NULL, c->loss_weight[k])) weights = NULL;
    return weights && put_metrics(out, c) && gb_config_put_bool(out, "run_eagerly", c->opts.run_eagerly) &&
           gb_ok();
}

/* ---- reading ------------------------------------------------------------------------------- */

/* What the config asks compile for; the objects made for it (the
 * optimizer, metric objects) until the model owns them. */
typedef struct compile_args {
    gb_compile_options o;
    gb_loss_spec losses[GB_NN_MAX_IO];
    double weights[GB_NN_MAX_IO];
    const char *names[GB__MAX_METRICS];
    gb_metric *objects[GB__MAX_METRICS];
} compile_args;

static bool read_loss(const gb_config *d, int k, gb_loss_spec *out) {
    *out = (gb_loss_spec){0};
    if (gb_config_kind_of(d) == GB_CONFIG_NULL) return true;
    const char *name = gb_config_read_string(d, WHO, "loss", NULL);
    int kind = 1;
    while (name && kind < NLOSS_NAMES && strcmp(LOSS_NAMES[kind], name)) kind++;
    if (!name || kind == NLOSS_NAMES) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL, "compile config: output %d's loss '%s' is unknown", k, name);
        return false;
    }
    out->kind = (gb_loss_kind)kind;
    if (kind == GB_LOSS_CUSTOM) {
        const char *custom = gb_config_read_string(d, WHO, "name", NULL);
        return custom && gb__custom_loss(custom, out);
    }
    return gb_config_read_bool(d, WHO, "from_logits", false, &out->from_logits) &&
           gb_config_read_number(d, WHO, "delta", 0, &out->delta);
}

/* A list of exactly n items under key (n 0: any length up to max). */
static const gb_config *list_of(const gb_config *c, const char *key, int n, int max) {
    const gb_config *l = gb_config_get(c, key);
    int len = gb_config_len(l);
    if (gb_config_kind_of(l) == GB_CONFIG_LIST && (n ? len == n : len <= max)) return l;
    if (n)
        gb__error(GB_ERR_VALUE, NULL, "compile config: '%s' must be a list of %d (one per output)",
                  key, n);
    else
        gb__error(GB_ERR_VALUE, NULL, "compile config: '%s' must be a list of at most %d", key, max);
    return NULL;
}

static bool read_losses(const gb_config *c, int nout, compile_args *a) {
    const gb_config *losses = list_of(c, "losses", nout, 0);
    const gb_config *weights = losses ? list_of(c, "loss_weights", nout, 0) : NULL;
    for (int k = 0; weights && k < nout; k++) {
        const gb_config *w = gb_config_at(weights, k);
        if (!gb_config_is_number(w)) {
            gb__error(GB_ERR_VALUE, NULL, "compile config: 'loss_weights' must be numbers");
            return false;
        }
        a->weights[k] = gb_config_number(w);
        if (!read_loss(gb_config_at(losses, k), k, &a->losses[k])) return false;
    }
    if (!weights) return false;
    a->o.loss_weights = a->weights;
    if (nout == 1) a->o.loss = a->losses[0];
    else a->o.losses = a->losses, a->o.nlosses = nout;
    return true;
}

static bool read_metrics(const gb_config *c, compile_args *a) {
    const gb_config *names = list_of(c, "metrics", 0, GB__MAX_METRICS);
    const gb_config *objects = names ? list_of(c, "metric_objects", 0, GB__MAX_METRICS) : NULL;
    if (!objects) return false;
    for (int i = 0; i < gb_config_len(names); i++)
        if (!(a->names[a->o.nmetrics++] = gb_config_string(gb_config_at(names, i)))) {
            gb__error(GB_ERR_VALUE, NULL, "compile config: 'metrics' must be a list of names");
            return false;
        }
    for (int i = 0; i < gb_config_len(objects); i++) {
        const gb_config *d = gb_config_at(objects, i);
        const char *cls = gb_config_read_string(d, WHO, "class_name", NULL);
        const char *name = cls ? gb_config_read_string(d, WHO, "name", NULL) : NULL;
        gb_metric *m = name ? gb__custom_metric(cls, name) : NULL;
        if (!m) return false;
        a->objects[a->o.nmetric_objects++] = m;
    }
    a->o.metrics = a->names;
    a->o.metric_objects = a->objects;
    return true;
}

bool gb__compile_from_config(gb_module *model, const gb_config *c) {
    compile_args a = {0};
    a.o.optimizer = gb_optimizer_from_config(gb_config_get(c, "optimizer"));
    bool ok = a.o.optimizer && read_losses(c, gb_model_num_outputs(model), &a) && read_metrics(c, &a) &&
              gb_config_read_bool(c, WHO, "run_eagerly", false, &a.o.run_eagerly);
    if (ok) return gb__model_compile_owned(model, &a.o);
    gb_optimizer_free(a.o.optimizer);
    for (int i = 0; i < a.o.nmetric_objects; i++) gb_metric_free(a.objects[i]);
    return false;
}
