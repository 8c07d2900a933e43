/* nn/config.c — configs: the JSON-shaped values get_config writes and
 * from_config reads (Keras' config dicts), and the model files of the
 * checkpoint layer store.
 *
 * A config is a tree of values: null, bool, integer (exact int64, so
 * seeds survive), number, string, list, dict (keys kept in insertion
 * order, so the JSON text of a model is stable). Children belong to their
 * parent; freeing the root frees the tree. Builders return the new child
 * (NULL after an error), readers never allocate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/config_internal.h"

static gb_config *value_new(gb_config_kind kind) {
    gb_config *c = calloc(1, sizeof *c);
    if (!c) gb__error(GB_ERR_MEMORY, "config", "config: out of memory");
    if (c) c->kind = kind;
    return c;
}

gb_config *gb_config_new(void) { return value_new(GB_CONFIG_DICT); }

void gb_config_free(gb_config *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) {
        gb_config_free(c->items[i]);
        if (c->keys) free(c->keys[i]);
    }
    free(c->items);
    free(c->keys);
    free(c->str);
    free(c);
}

/* Appends v under key (dicts) or at the end (lists); takes v, also on failure. */
gb_config *gb__config_attach(gb_config *parent, const char *key, gb_config *v) {
    if (!v) return NULL;
    bool dict = parent && parent->kind == GB_CONFIG_DICT;
    if (!parent || (!dict && parent->kind != GB_CONFIG_LIST) || (dict && !key)) {
        gb__error(GB_ERR_VALUE, "config", "config: %s",
                  !parent ? "NULL parent" : dict ? "a dict entry needs a key"
                                                 : "values go into a dict or a list");
        gb_config_free(v);
        return NULL;
    }
    if (dict && gb_config_get(parent, key)) {
        gb__error(GB_ERR_VALUE, "config", "config: key '%s' is already set", key);
        gb_config_free(v);
        return NULL;
    }
    if (parent->n == parent->cap) {
        int cap = parent->cap ? 2 * parent->cap : 4;
        gb_config **items = realloc(parent->items, (size_t)cap * sizeof *items);
        char **keys = items && dict ? realloc(parent->keys, (size_t)cap * sizeof *keys) : NULL;
        if (items) parent->items = items;
        if (keys) parent->keys = keys;
        if (!items || (dict && !keys)) {
            gb__error(GB_ERR_MEMORY, "config", "config: out of memory");
            gb_config_free(v);
            return NULL;
        }
        parent->cap = cap;
    }
    if (dict && !(parent->keys[parent->n] = strdup(key ? key : ""))) {
        gb__error(GB_ERR_MEMORY, "config", "config: out of memory");
        gb_config_free(v);
        return NULL;
    }
    parent->items[parent->n++] = v;
    return v;
}

gb_config *gb_config_put_int(gb_config *c, const char *key, int64_t v) {
    gb_config *x = value_new(GB_CONFIG_INT);
    if (x) x->i = v;
    return gb__config_attach(c, key, x);
}

gb_config *gb_config_put_number(gb_config *c, const char *key, double v) {
    if (!isfinite(v)) {
        gb__error(GB_ERR_VALUE, "config", "config: '%s' is %g; JSON has no such number",
                  key ? key : "(list item)", v);
        return NULL;
    }
    gb_config *x = value_new(GB_CONFIG_NUMBER);
    if (x) x->d = v;
    return gb__config_attach(c, key, x);
}

gb_config *gb_config_put_bool(gb_config *c, const char *key, bool v) {
    gb_config *x = value_new(GB_CONFIG_BOOL);
    if (x) x->b = v;
    return gb__config_attach(c, key, x);
}

gb_config *gb_config_put_null(gb_config *c, const char *key) {
    return gb__config_attach(c, key, value_new(GB_CONFIG_NULL));
}

gb_config *gb_config_put_string(gb_config *c, const char *key, const char *v) {
    gb_config *x = value_new(GB_CONFIG_STRING);
    if (x && !(x->str = strdup(v ? v : ""))) {
        gb__error(GB_ERR_MEMORY, "config", "config: out of memory");
        free(x);
        return NULL;
    }
    return gb__config_attach(c, key, x);
}

gb_config *gb_config_put_dict(gb_config *c, const char *key) {
    return gb__config_attach(c, key, value_new(GB_CONFIG_DICT));
}

gb_config *gb_config_put_list(gb_config *c, const char *key) {
    return gb__config_attach(c, key, value_new(GB_CONFIG_LIST));
}

gb_config *gb_config_put_ints(gb_config *c, const char *key, int n, const int64_t *v) {
    gb_config *list = gb_config_put_list(c, key);
    for (int i = 0; list && i < n; i++)
        if (!gb_config_put_int(list, NULL, v[i])) return NULL;
    return list;
}

/* ---- reading ------------------------------------------------------------------------------- */

gb_config_kind gb_config_kind_of(const gb_config *c) { return c ? c->kind : GB_CONFIG_NULL; }
int gb_config_len(const gb_config *c) {
    return c && (c->kind == GB_CONFIG_LIST || c->kind == GB_CONFIG_DICT) ? c->n : 0;
}
const gb_config *gb_config_at(const gb_config *c, int i) {
    return c && i >= 0 && i < gb_config_len(c) ? c->items[i] : NULL;
}
const char *gb_config_key_at(const gb_config *c, int i) {
    return c && c->kind == GB_CONFIG_DICT && i >= 0 && i < c->n ? c->keys[i] : NULL;
}

const gb_config *gb_config_get(const gb_config *c, const char *key) {
    if (!c || c->kind != GB_CONFIG_DICT || !key) return NULL;
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->keys[i], key) == 0) {
            c->items[i]->looked_up = true;
            return c->items[i];
        }
    return NULL;
}

const char *gb__config_unread_key(const gb_config *c) {
    if (!c || c->kind != GB_CONFIG_DICT) return NULL;
    for (int i = 0; i < c->n; i++) {
        if (!c->items[i]->looked_up) return c->keys[i];
        /* Inside a dict that was read (an initializer, a regularizer). */
        const char *inner = gb__config_unread_key(c->items[i]);
        if (inner) return inner;
    }
    return NULL;
}

bool gb_config_is_number(const gb_config *c) {
    return c && (c->kind == GB_CONFIG_INT || c->kind == GB_CONFIG_NUMBER);
}
int64_t gb_config_int(const gb_config *c) {
    return !c ? 0 : c->kind == GB_CONFIG_INT ? c->i : c->kind == GB_CONFIG_NUMBER ? (int64_t)c->d : 0;
}
double gb_config_number(const gb_config *c) {
    return !c ? 0 : c->kind == GB_CONFIG_INT ? (double)c->i : c->kind == GB_CONFIG_NUMBER ? c->d : 0;
}
bool gb_config_bool(const gb_config *c) { return c && c->kind == GB_CONFIG_BOOL && c->b; }
const char *gb_config_string(const gb_config *c) {
    return c && c->kind == GB_CONFIG_STRING ? c->str : NULL;
}

/* ---- reading with errors (from_config) ------------------------------------------------------- */

static const char *const KIND_NAMES[] = {"null", "a bool", "an integer", "a number", "a string",
                                         "a list", "a dict"};

/* c[key] of the kind wanted (integers count as numbers), or NULL with an
 * error naming who and the key; optional entries may be absent. */
static const gb_config *field(const gb_config *c, const char *who, const char *key,
                              gb_config_kind want, bool optional) {
    const gb_config *v = gb_config_get(c, key);
    if (!v && optional) return NULL;
    bool ok = v && (v->kind == want || (want == GB_CONFIG_NUMBER && v->kind == GB_CONFIG_INT));
    if (!ok && gb_ok())
        gb__error(GB_ERR_VALUE, "config", "%s config: '%s' %s%s", who, key,
                  v ? "must be " : "is missing", v ? KIND_NAMES[want] : "");
    return ok ? v : NULL;
}

bool gb_config_read_int(const gb_config *c, const char *who, const char *key, int64_t dflt,
                        int64_t *out) {
    const gb_config *v = field(c, who, key, GB_CONFIG_INT, true);
    *out = v ? v->i : dflt;
    return gb_ok();
}

bool gb_config_read_number(const gb_config *c, const char *who, const char *key, double dflt,
                           double *out) {
    const gb_config *v = field(c, who, key, GB_CONFIG_NUMBER, true);
    *out = v ? gb_config_number(v) : dflt;
    return gb_ok();
}

bool gb_config_read_bool(const gb_config *c, const char *who, const char *key, bool dflt,
                         bool *out) {
    const gb_config *v = field(c, who, key, GB_CONFIG_BOOL, true);
    *out = v ? v->b : dflt;
    return gb_ok();
}

const char *gb_config_read_string(const gb_config *c, const char *who, const char *key,
                                  const char *dflt) {
    const gb_config *v = field(c, who, key, GB_CONFIG_STRING, dflt != NULL);
    return v ? v->str : gb_ok() ? dflt : NULL;
}

int gb_config_read_ints(const gb_config *c, const char *who, const char *key, int max,
                        int64_t *out) {
    const gb_config *v = field(c, who, key, GB_CONFIG_LIST, true);
    if (!v) return gb_ok() ? 0 : -1;
    if (v->n > max) {
        gb__error(GB_ERR_VALUE, "config", "%s config: '%s' has %d values, at most %d", who, key,
                  v->n, max);
        return -1;
    }
    for (int i = 0; i < v->n; i++) {
        if (v->items[i]->kind != GB_CONFIG_INT) {
            gb__error(GB_ERR_VALUE, "config", "%s config: '%s' must be a list of integers", who, key);
            return -1;
        }
        out[i] = v->items[i]->i;
    }
    return v->n;
}
