/* nn/serialize.c — get_config / from_config for any module, the registry
 * of module types by class name, and the config pieces layers share
 * (initializers, regularizers, activations, padding).
 *
 * A module's config is Keras' serialized form, {"class_name": "Dense",
 * "config": {...}}: the class picks the type, the type's from_config
 * reads the rest. Built-in types are listed here once; custom ones join
 * through gb_register_module_type, as Keras' register_keras_serializable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/config_internal.h"
#include "nn/internal.h"

static const gb_module_type *const builtin[] = {
    &gb__dense_type,   &gb__conv2d_type,     &gb__max_pool_type,  &gb__avg_pool_type,
    &gb__flatten_type, &gb__dropout_type,    &gb__activation_type, &gb__relu_type,
    &gb__add_type,     &gb__concatenate_type, &gb__sequential_type, &gb__functional_type,
    &gb__batch_norm_type, &gb__layer_norm_type, &gb__embedding_type, &gb__global_avg_pool_type,
    &gb__global_avg_pool1d_type,
    &gb__simple_rnn_type, &gb__lstm_type, &gb__gru_type, &gb__mha_type, &gb__position_embedding_type,
    &gb__sine_position_encoding_type,
    &gb__text_vectorization_type, &gb__string_lookup_type, &gb__bidirectional_type,
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const gb_module_type **registered;
static int nregistered, capregistered;

static const gb_module_type *lookup(const char *class_name) {
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (strcmp(builtin[i]->class_name, class_name) == 0) return builtin[i];
    const gb_module_type *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < nregistered && !found; i++)
        if (strcmp(registered[i]->class_name, class_name) == 0) found = registered[i];
    pthread_mutex_unlock(&registry_lock);
    return found;
}

bool gb_register_module_type(const gb_module_type *type) {
    if (!type || !type->class_name || !type->from_config) {
        gb__error(GB_ERR_VALUE, NULL, "gb_register_module_type: %s",
                  !type || !type->class_name ? "the type needs a class_name"
                                             : "the type has no from_config");
        return false;
    }
    const gb_module_type *known = lookup(type->class_name);
    if (known) {
        if (known != type)
            gb__error(GB_ERR_VALUE, NULL,
                      "gb_register_module_type: another type is already registered as '%s'",
                      type->class_name);
        return known == type;
    }
    pthread_mutex_lock(&registry_lock);
    bool ok = true;
    if (nregistered == capregistered) {
        int cap = capregistered ? 2 * capregistered : 8;
        const gb_module_type **grown = realloc(registered, (size_t)cap * sizeof *grown);
        if ((ok = grown != NULL)) registered = grown, capregistered = cap;
    }
    if (ok) registered[nregistered++] = type;
    pthread_mutex_unlock(&registry_lock);
    if (!ok) gb__error(GB_ERR_MEMORY, NULL, "gb_register_module_type: out of memory");
    return ok;
}

/* ---- modules ------------------------------------------------------------------------------- */

bool gb__module_config_into(gb_module *m, gb_config *c) {
    const gb_module_type *t = gb_module_get_type(m);
    gb_config *cfg = gb_config_put_string(c, "class_name", t->class_name)
                         ? gb_config_put_dict(c, "config")
                         : NULL;
    return cfg && gb_config_put_string(cfg, "name", gb_module_name(m)) &&
           gb_config_put_bool(cfg, "trainable", gb_module_trainable(m)) &&
           (!t->get_config || t->get_config(m, cfg)) && gb_ok();
}

gb_config *gb_module_get_config(gb_module *m) {
    if (!gb_ok()) return NULL;
    if (!m) {
        gb__error(GB_ERR_VALUE, NULL, "gb_module_get_config: the module is NULL");
        return NULL;
    }
    gb_config *c = gb_config_new();
    if (c && gb__module_config_into(m, c)) return c;
    gb_config_free(c);
    return NULL;
}

gb_module *gb_module_from_config(const gb_config *c) {
    if (!gb_ok()) return NULL;
    const char *class_name = gb_config_read_string(c, "module", "class_name", NULL);
    const gb_config *cfg = gb_config_get(c, "config");
    if (!class_name) return NULL;
    if (gb_config_kind_of(cfg) != GB_CONFIG_DICT) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'config' is missing or not a dict", class_name);
        return NULL;
    }
    const gb_module_type *t = lookup(class_name);
    if (!t || !t->from_config) {
        gb__error(GB_ERR_VALUE, NULL,
                  t ? "%s config: the type has no from_config"
                    : "unknown layer class '%s'; register custom types with "
                      "gb_register_module_type",
                  class_name);
        return NULL;
    }
    bool trainable = true;
    if (!gb_config_read_bool(cfg, class_name, "trainable", true, &trainable)) return NULL;
    gb_module *m = t->from_config(cfg);
    const char *unread = m && gb_ok() ? gb__config_unread_key(cfg) : NULL;
    if (unread)
        gb__error(GB_ERR_VALUE, NULL, "%s config: unknown key '%s' (the %s layer does not read it)",
                  class_name, unread, class_name);
    if (m && !gb_ok()) {
        gb_module_free(m);
        return NULL;
    }
    if (m && !trainable) gb_module_set_trainable(m, false);
    return m;
}

/* ---- shared pieces ----------------------------------------------------------------------- */

const char *gb__config_name(const gb_config *c, const char *who) {
    return gb_config_read_string(c, who, "name", "");
}

bool gb__config_put_init(gb_config *c, const char *key, gb_initializer init) {
    gb_config *d = gb_config_put_dict(c, key);
    return d && gb_config_put_string(d, "kind", gb_initializer_name(init.kind)) &&
           gb_config_put_number(d, "a", init.a) && gb_config_put_number(d, "b", init.b) &&
           gb_config_put_int(d, "seed", (int64_t)init.seed);
}

bool gb__config_read_init(const gb_config *c, const char *who, const char *key,
                          gb_initializer *out) {
    *out = (gb_initializer){0};
    const gb_config *d = gb_config_get(c, key);
    if (!d) return true;
    const char *kind = gb_config_read_string(d, who, "kind", NULL);
    int64_t seed = 0;
    if (!kind || !gb_config_read_number(d, who, "a", 0, &out->a) ||
        !gb_config_read_number(d, who, "b", 0, &out->b) ||
        !gb_config_read_int(d, who, "seed", 0, &seed))
        return false;
    out->seed = (uint64_t)seed;
    for (int k = 0; k < GB_INIT_KIND_COUNT; k++)
        if (strcmp(gb_initializer_name((gb_init_kind)k), kind) == 0) {
            out->kind = (gb_init_kind)k;
            return true;
        }
    gb__error(GB_ERR_VALUE, NULL, "%s config: '%s' names an unknown initializer '%s'", who, key, kind);
    return false;
}

bool gb__config_put_regularizer(gb_config *c, const char *key, gb_regularizer r) {
    if (!r.l1 && !r.l2) return gb_config_put_null(c, key) != NULL;
    gb_config *d = gb_config_put_dict(c, key);
    return d && gb_config_put_number(d, "l1", r.l1) && gb_config_put_number(d, "l2", r.l2);
}

bool gb__config_read_regularizer(const gb_config *c, const char *who, const char *key,
                                 gb_regularizer *out) {
    *out = (gb_regularizer){0};
    const gb_config *d = gb_config_get(c, key);
    if (!d || gb_config_kind_of(d) == GB_CONFIG_NULL) return true;
    if (gb_config_kind_of(d) == GB_CONFIG_STRING) { /* Keras' names, at its default 0.01 */
        const char *name = gb_config_string(d);
        bool l1 = !strcmp(name, "l1") || !strcmp(name, "l1_l2");
        bool l2 = !strcmp(name, "l2") || !strcmp(name, "l1_l2");
        if (!l1 && !l2) {
            gb__error(GB_ERR_VALUE, NULL,
                      "%s config: '%s' is '%s'; a regularizer is l1, l2, l1_l2 or {l1, l2}", who,
                      key, name);
            return false;
        }
        *out = (gb_regularizer){.l1 = l1 ? 0.01 : 0, .l2 = l2 ? 0.01 : 0};
        return true;
    }
    if (gb_config_kind_of(d) != GB_CONFIG_DICT) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: '%s' must be null, a name or {l1, l2}", who, key);
        return false;
    }
    return gb_config_read_number(d, who, "l1", 0, &out->l1) &&
           gb_config_read_number(d, who, "l2", 0, &out->l2);
}

bool gb__config_read_activation(const gb_config *c, const char *who, gb_activation *out) {
    const char *name = gb_config_read_string(c, who, "activation", "linear");
    return name && gb_activation_from_name(name, out);
}

bool gb__config_put_padding(gb_config *c, gb_padding p) {
    return gb_config_put_string(c, "padding", p == GB_PADDING_SAME ? "same" : "valid") != NULL;
}

bool gb__config_read_padding(const gb_config *c, const char *who, gb_padding *out) {
    const char *p = gb_config_read_string(c, who, "padding", "valid");
    if (!p) return false;
    if (strcmp(p, "valid") && strcmp(p, "same")) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: padding '%s' is neither valid nor same", who, p);
        return false;
    }
    *out = strcmp(p, "same") == 0 ? GB_PADDING_SAME : GB_PADDING_VALID;
    return true;
}

/* A {h, w} pair: exactly two positive integers. */
bool gb__config_read_pair(const gb_config *c, const char *who, const char *key, int64_t dflt,
                          int64_t out[2]) {
    int n = gb_config_read_ints(c, who, key, 2, out);
    if (n == 0) out[0] = out[1] = dflt;
    if (n == 0 || (n == 2 && out[0] > 0 && out[1] > 0)) return true;
    if (n >= 0)
        gb__error(GB_ERR_VALUE, NULL, "%s config: '%s' must be two positive integers", who, key);
    return false;
}

bool gb__config_put_weighted(gb_config *c, const gb__weighted_config *w) {
    return gb_config_put_string(c, "activation", gb_activation_name(w->activation)) &&
           gb_config_put_bool(c, "use_bias", w->use_bias) &&
           gb__config_put_init(c, "kernel_initializer", w->kernel_init) &&
           gb__config_put_init(c, "bias_initializer", w->bias_init) &&
           gb__config_put_regularizer(c, "kernel_regularizer", w->kernel_reg) &&
           gb__config_put_regularizer(c, "bias_regularizer", w->bias_reg) &&
           gb__config_put_regularizer(c, "activity_regularizer", w->activity_reg) &&
           gb_config_put_int(c, "seed", (int64_t)w->seed);
}

bool gb__config_read_weighted(const gb_config *c, const char *who, gb__weighted_config *w) {
    int64_t seed = 0;
    bool ok = gb__config_read_activation(c, who, &w->activation) &&
              gb_config_read_bool(c, who, "use_bias", true, &w->use_bias) &&
              gb__config_read_init(c, who, "kernel_initializer", &w->kernel_init) &&
              gb__config_read_init(c, who, "bias_initializer", &w->bias_init) &&
              gb__config_read_regularizer(c, who, "kernel_regularizer", &w->kernel_reg) &&
              gb__config_read_regularizer(c, who, "bias_regularizer", &w->bias_reg) &&
              gb__config_read_regularizer(c, who, "activity_regularizer", &w->activity_reg) &&
              gb_config_read_int(c, who, "seed", 0, &seed);
    w->seed = (uint64_t)seed;
    return ok;
}

bool gb__config_read_dtype(const gb_config *c, const char *who, const char *key, gb_dtype *out) {
    const char *name = gb_config_read_string(c, who, key, NULL);
    for (int d = 0; name && d < GB_DTYPE_COUNT; d++)
        if (strcmp(gb_dtype_name((gb_dtype)d), name) == 0) {
            *out = (gb_dtype)d;
            return true;
        }
    if (name) gb__error(GB_ERR_VALUE, NULL, "%s config: '%s' is an unknown dtype '%s'", who, key, name);
    return false;
}
