/* optim/optimizer_config.c — optimizers as configs and back (Keras'
 * keras.optimizers.serialize / deserialize), for model files:
 *
 *   {"class_name": "Adam",
 *    "config": {"name": "Adam", "learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
 *               "epsilon": 1e-07, "weight_decay": 0.0, "clipnorm": null,
 *               "global_clipnorm": null, "clipvalue": null,
 *               "exclude_vectors_from_weight_decay": false, "exclude_from_weight_decay": []}}
 *
 * SGD has momentum and nesterov instead, RMSprop rho, momentum, epsilon
 * and centered. The learning rate is a number, or a schedule the way
 * Keras writes one: {"class_name": "ExponentialDecay" | "CosineDecay",
 * "config": {...}}. The class comes from the update op the optimizer
 * runs and the values from its attributes, so a config says what the
 * optimizer does, never what it was asked: AdamW is Adam with weight
 * decay, written as "Adam" ("AdamW" is read too, with its defaults). The
 * name is kept: slot variables are named after it, and a model file's
 * slots must find their variables again. A custom schedule is a C
 * function no config can hold; asking for its config is an error that
 * says so. Numbers go through JSON with 17 digits, so the optimizer read
 * back updates bit for bit as the one written.
 */
#include <stdio.h>
#include <string.h>

#include "gb_nn.h"
#include "optim/internal.h"

typedef enum kind { SGD, ADAM, RMSPROP, ADAMW } kind;

/* Per kind: the class, the names of the hyperparameters in attributes
 * f[0..2] (NULL: unused) and of the flag in i[GB__OPTIM_I_FLAG]. The
 * weight decay is f[GB__OPTIM_F_WEIGHT_DECAY] for every kind. */
typedef struct kind_desc {
    const char *class_name;
    const char *f[3];
    const char *flag;
} kind_desc;

static const kind_desc KINDS[] = {
    [SGD] = {"SGD", {"momentum"}, "nesterov"},
    [ADAM] = {"Adam", {"beta_1", "beta_2", "epsilon"}, NULL},
    [RMSPROP] = {"RMSprop", {"rho", "momentum", "epsilon"}, "centered"},
    [ADAMW] = {"AdamW", {"beta_1", "beta_2", "epsilon"}, NULL},
};

/* ---- schedules ------------------------------------------------------------------------------ */

static bool put_schedule(gb_config *c, const char *who, const gb_lr_schedule *s) {
    if (s->kind == GB_LR_CONSTANT)
        return gb_config_put_number(c, "learning_rate", s->initial_learning_rate) != NULL;
    if (s->kind != GB_LR_EXPONENTIAL_DECAY && s->kind != GB_LR_COSINE_DECAY) {
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: its learning rate is a custom schedule (a C function), which no config "
                  "can hold; use a built-in schedule, or save the weights with a checkpoint",
                  who);
        return false;
    }
    bool expo = s->kind == GB_LR_EXPONENTIAL_DECAY;
    gb_config *d = gb_config_put_dict(c, "learning_rate");
    gb_config *cfg = d && gb_config_put_string(d, "class_name", expo ? "ExponentialDecay" : "CosineDecay")
                         ? gb_config_put_dict(d, "config")
                         : NULL;
    if (!cfg || !gb_config_put_number(cfg, "initial_learning_rate", s->initial_learning_rate) ||
        !gb_config_put_int(cfg, "decay_steps", s->decay_steps))
        return false;
    if (expo)
        return gb_config_put_number(cfg, "decay_rate", s->decay_rate) &&
               gb_config_put_bool(cfg, "staircase", s->staircase);
    return gb_config_put_number(cfg, "alpha", s->alpha) &&
           gb_config_put_number(cfg, "warmup_target", s->warmup_target) &&
           gb_config_put_int(cfg, "warmup_steps", s->warmup_steps);
}

/* config["learning_rate"]: absent (dflt), a number, or a schedule. The
 * optimizer's constructor checks the values. */
static bool read_schedule(const gb_config *c, const char *who, double dflt, gb_lr_schedule *out) {
    const gb_config *v = gb_config_get(c, "learning_rate");
    *out = (gb_lr_schedule){.kind = GB_LR_CONSTANT, .initial_learning_rate = dflt};
    if (!v || gb_config_is_number(v)) {
        if (v) out->initial_learning_rate = gb_config_number(v);
        return true;
    }
    const char *cls = gb_config_kind_of(v) == GB_CONFIG_DICT
                          ? gb_config_read_string(v, who, "class_name", NULL)
                          : NULL;
    const gb_config *cfg = gb_config_get(v, "config");
    bool expo = cls && strcmp(cls, "ExponentialDecay") == 0;
    if (!cls || (!expo && strcmp(cls, "CosineDecay")) || gb_config_kind_of(cfg) != GB_CONFIG_DICT) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL,
                      "%s config: 'learning_rate' must be a number or a schedule "
                      "{\"class_name\": \"ExponentialDecay\" or \"CosineDecay\", \"config\": {...}}",
                      who);
        return false;
    }
    out->kind = expo ? GB_LR_EXPONENTIAL_DECAY : GB_LR_COSINE_DECAY;
    int64_t warmup = 0;
    bool ok = gb_config_read_number(cfg, who, "initial_learning_rate", dflt, &out->initial_learning_rate) &&
              gb_config_read_int(cfg, who, "decay_steps", 0, &out->decay_steps);
    if (expo)
        return ok && gb_config_read_number(cfg, who, "decay_rate", 0, &out->decay_rate) &&
               gb_config_read_bool(cfg, who, "staircase", false, &out->staircase);
    ok = ok && gb_config_read_number(cfg, who, "alpha", 0, &out->alpha) &&
         gb_config_read_number(cfg, who, "warmup_target", 0, &out->warmup_target) &&
         gb_config_read_int(cfg, who, "warmup_steps", 0, &warmup);
    out->warmup_steps = warmup;
    return ok;
}

/* ---- get_config ------------------------------------------------------------------------------ */

static kind kind_of_op(gb_op_id op) {
    return op == GB_OP_APPLY_ADAM ? ADAM : op == GB_OP_APPLY_RMSPROP ? RMSPROP : SGD;
}

static bool put_hyperparameters(gb_config *cfg, kind k, const gb_attrs *a) {
    for (int i = 0; i < 3; i++)
        if (KINDS[k].f[i] && !gb_config_put_number(cfg, KINDS[k].f[i], a->f[i])) return false;
    if (KINDS[k].flag && !gb_config_put_bool(cfg, KINDS[k].flag, a->i[GB__OPTIM_I_FLAG] != 0))
        return false;
    return gb_config_put_number(cfg, "weight_decay", a->f[GB__OPTIM_F_WEIGHT_DECAY]) != NULL;
}

/* ---- clipping ------------------------------------------------------------------------------ */

static const char *const CLIP_KEYS[3] = {"clipnorm", "global_clipnorm", "clipvalue"};

/* The one clipping set, as Keras writes it (a number; the others null). */
static bool put_clipping(gb_config *cfg, const gb_gradient_clipping *c) {
    const double v[3] = {c->clipnorm, c->global_clipnorm, c->clipvalue};
    for (int k = 0; k < 3; k++)
        if (!(v[k] > 0 ? gb_config_put_number(cfg, CLIP_KEYS[k], v[k])
                       : gb_config_put_null(cfg, CLIP_KEYS[k])))
            return false;
    return true;
}

/* Each key absent or null (off) or a number; the optimizer checks them. */
static bool read_clipping(const gb_config *cfg, const char *who, gb_gradient_clipping *c) {
    double *v[3] = {&c->clipnorm, &c->global_clipnorm, &c->clipvalue};
    *c = (gb_gradient_clipping){0};
    for (int k = 0; k < 3; k++) {
        const gb_config *x = gb_config_get(cfg, CLIP_KEYS[k]);
        if (x && gb_config_kind_of(x) == GB_CONFIG_NULL) continue;
        if (!gb_config_read_number(cfg, who, CLIP_KEYS[k], 0, v[k])) return false;
    }
    return true;
}

gb_config *gb_optimizer_get_config(const gb_optimizer *opt) {
    if (!gb_ok()) return NULL;
    if (!opt) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_get_config: the optimizer is NULL");
        return NULL;
    }
    gb_attrs a;
    kind k = kind_of_op(gb__optimizer_op(opt, &a));
    const char *const *parts = NULL;
    int nparts = gb__optimizer_no_decay(opt, &parts);
    gb_config *c = gb_config_new();
    gb_config *cfg = c && gb_config_put_string(c, "class_name", KINDS[k].class_name)
                         ? gb_config_put_dict(c, "config")
                         : NULL;
    gb_gradient_clipping clipping = gb_optimizer_clipping(opt);
    bool ok = cfg && gb_config_put_string(cfg, "name", gb_optimizer_name(opt)) &&
              put_schedule(cfg, gb_optimizer_name(opt), gb_optimizer_schedule(opt)) &&
              put_hyperparameters(cfg, k, &a) && put_clipping(cfg, &clipping);
    ok = ok && gb_config_put_bool(cfg, "exclude_vectors_from_weight_decay",
                                  gb__optimizer_no_decay_vectors(opt));
    gb_config *excluded = ok ? gb_config_put_list(cfg, "exclude_from_weight_decay") : NULL;
    for (int i = 0; excluded && i < nparts; i++)
        if (!gb_config_put_string(excluded, NULL, parts[i])) excluded = NULL;
    if (excluded && gb_ok()) return c;
    gb_config_free(c);
    return NULL;
}

/* ---- from_config ------------------------------------------------------------------------------ */

/* One kind's hyperparameters, its defaults (Keras') filled in first. */
typedef struct hyper {
    gb_lr_schedule lr;
    double f[3];
    bool flag;
    double weight_decay;
} hyper;

static hyper defaults(kind k) {
    if (k == SGD) {
        gb_sgd_options o = gb_sgd_defaults();
        return (hyper){o.learning_rate, {o.momentum}, o.nesterov, o.weight_decay};
    }
    if (k == RMSPROP) {
        gb_rmsprop_options o = gb_rmsprop_defaults();
        return (hyper){o.learning_rate, {o.rho, o.momentum, o.epsilon}, o.centered, o.weight_decay};
    }
    gb_adam_options o = k == ADAMW ? gb_adamw_defaults() : gb_adam_defaults();
    return (hyper){o.learning_rate, {o.beta_1, o.beta_2, o.epsilon}, false, o.weight_decay};
}

static bool read_hyper(const gb_config *cfg, kind k, hyper *h) {
    const char *who = KINDS[k].class_name;
    *h = defaults(k);
    if (!read_schedule(cfg, who, h->lr.initial_learning_rate, &h->lr)) return false;
    for (int i = 0; i < 3; i++)
        if (KINDS[k].f[i] && !gb_config_read_number(cfg, who, KINDS[k].f[i], h->f[i], &h->f[i]))
            return false;
    return (!KINDS[k].flag || gb_config_read_bool(cfg, who, KINDS[k].flag, h->flag, &h->flag)) &&
           gb_config_read_number(cfg, who, "weight_decay", h->weight_decay, &h->weight_decay);
}

static gb_optimizer *make(kind k, const char *name, const hyper *h) {
    if (k == SGD)
        return gb_sgd_ex(&(gb_sgd_options){.learning_rate = h->lr, .momentum = h->f[0],
                                            .nesterov = h->flag, .weight_decay = h->weight_decay,
                                            .name = name});
    if (k == RMSPROP)
        return gb_rmsprop_ex(&(gb_rmsprop_options){
            .learning_rate = h->lr, .rho = h->f[0], .momentum = h->f[1], .epsilon = h->f[2],
            .centered = h->flag, .weight_decay = h->weight_decay, .name = name});
    return gb_adam_ex(&(gb_adam_options){.learning_rate = h->lr, .beta_1 = h->f[0],
                                         .beta_2 = h->f[1], .epsilon = h->f[2],
                                         .weight_decay = h->weight_decay, .name = name});
}

/* config["exclude_from_weight_decay"]: name parts, each a string. */
static bool exclude_parts(gb_optimizer *o, const gb_config *cfg, const char *who) {
    const gb_config *list = gb_config_get(cfg, "exclude_from_weight_decay");
    bool ok = !list || gb_config_kind_of(list) == GB_CONFIG_LIST;
    for (int i = 0; ok && i < gb_config_len(list); i++) {
        const char *part = gb_config_string(gb_config_at(list, i));
        ok = part && gb_optimizer_exclude_from_weight_decay(o, part);
    }
    if (!ok && gb_ok())
        gb__error(GB_ERR_VALUE, NULL,
                  "%s config: 'exclude_from_weight_decay' must be a list of non-empty strings", who);
    return ok;
}

gb_optimizer *gb_optimizer_from_config(const gb_config *c) {
    if (!gb_ok()) return NULL;
    const char *cls = gb_config_read_string(c, "optimizer", "class_name", NULL);
    const gb_config *cfg = gb_config_get(c, "config");
    if (!cls) return NULL;
    int k = 0;
    while (k < (int)(sizeof KINDS / sizeof *KINDS) && strcmp(KINDS[k].class_name, cls)) k++;
    if (k == (int)(sizeof KINDS / sizeof *KINDS) || gb_config_kind_of(cfg) != GB_CONFIG_DICT) {
        gb__error(GB_ERR_VALUE, NULL,
                  k < (int)(sizeof KINDS / sizeof *KINDS)
                      ? "%s config: 'config' is missing or not a dict"
                      : "unknown optimizer class '%s' (SGD, Adam, AdamW, RMSprop)",
                  cls);
        return NULL;
    }
    hyper h;
    gb_gradient_clipping clipping;
    const char *name = gb_config_read_string(cfg, cls, "name", cls);
    if (!name || !read_hyper(cfg, (kind)k, &h) || !read_clipping(cfg, cls, &clipping)) return NULL;
    gb_optimizer *o = make((kind)k, name, &h);
    bool vectors = false;
    if (o && (!exclude_parts(o, cfg, cls) || !gb_optimizer_set_clipping(o, clipping) ||
              !gb_config_read_bool(cfg, cls, "exclude_vectors_from_weight_decay", false, &vectors) ||
              (vectors && !gb_optimizer_exclude_vectors_from_weight_decay(o)))) {
        gb_optimizer_free(o);
        return NULL;
    }
    return o;
}
