/* nn/metrics.c — what every metric shares (keras.metrics.Metric): a type
 * (update_state / result / reset_state over plain state), a name, and the
 * rules every update follows.
 *
 * The built-in metrics (metrics_mean.c, metrics_confusion.c) are types
 * like any a user writes, so a custom metric gets the same checks and the
 * same guarantee: an update runs on a copy of the state that is kept only
 * when it succeeds, so a bad batch (a shape error half way through) never
 * leaves a metric counting part of it. Metrics read data, so they run
 * eagerly; a symbolic (traced) tensor is a clear error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/internal.h"

struct gb_metric {
    const gb_metric_type *type;
    char name[64];
    void *user;              /* the caller's, or the config copied below */
    size_t state_size;
    unsigned char *state;    /* state_size bytes */
    unsigned char *scratch;  /* where an update runs before it is kept */
    _Alignas(max_align_t) unsigned char storage[];   /* state, scratch, config */
};

static const char *class_of(const gb_metric_type *t) {
    return t->class_name ? t->class_name : t->default_name ? t->default_name : "Metric";
}

static size_t aligned(size_t n) {
    size_t a = _Alignof(max_align_t);
    return (n + a - 1) / a * a;
}

gb_metric *gb__metric_create(const gb_metric_type *type, const char *name, size_t state_size,
                             const void *config, size_t config_size) {
    size_t s = aligned(state_size);
    gb_metric *m = calloc(1, sizeof *m + 2 * s + config_size);
    if (!m) {
        gb__error(GB_ERR_MEMORY, class_of(type), "%s: out of memory", class_of(type));
        return NULL;
    }
    m->type = type;
    m->state_size = state_size;
    m->state = m->storage;
    m->scratch = m->storage + s;
    if (config_size) {
        m->user = m->storage + 2 * s;
        memcpy(m->user, config, config_size);
    }
    const char *dflt = type->default_name ? type->default_name : "metric";
    snprintf(m->name, sizeof m->name, "%s", name && name[0] ? name : dflt);
    return m;
}

gb_metric *gb_metric_new(const gb_metric_type *type, const char *name, void *user) {
    if (!type || !type->update_state || !type->result) {
        gb__error(GB_ERR_VALUE, NULL, "gb_metric_new: %s", !type ? "the type is NULL"
                                      : "the type needs update_state and result functions");
        return NULL;
    }
    gb_metric *m = gb__metric_create(type, name, type->state_size, NULL, 0);
    if (m) m->user = user;
    return m;
}

void gb_metric_free(gb_metric *m) { free(m); }
const char *gb_metric_name(const gb_metric *m) { return m ? m->name : ""; }
void *gb_metric_user(const gb_metric *m) { return m ? m->user : NULL; }
const gb_metric_type *gb_metric_get_type(const gb_metric *m) { return m ? m->type : NULL; }

void gb_metric_error(const gb_metric *m, gb_status code, const char *fmt, ...) {
    if (!gb_ok()) return;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *cls = m ? class_of(m->type) : "Metric";
    gb__error(code, cls, "%s metric '%s': %s", cls, m ? m->name : "", msg);
}

bool gb__metric_weights_fit(const gb_metric *m, gb_tensor *w, int64_t rows) {
    if (!w || gb_size(w) == rows || gb_size(w) == 1) return true;
    char b[128];
    gb_metric_error(m, GB_ERR_SHAPE,
                    "sample_weight shape %s does not give one weight per sample (%lld)",
                    gb_shape_str(w, b, sizeof b), (long long)rows);
    return false;
}

static bool concrete(const gb_metric *m, gb_tensor *t, const char *what) {
    if (!t || gb_data(t)) return true;
    gb_metric_error(m, GB_ERR_STATE,
                    "%s is symbolic (inside a traced function); metrics read values, update "
                    "them eagerly with the function's outputs",
                    what);
    return false;
}

bool gb_metric_update_state_weighted(gb_metric *m, gb_tensor *a, gb_tensor *b,
                                     gb_tensor *sample_weight) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_metric_update_state: NULL metric");
        return false;
    }
    if (!gb_ok()) return false; /* an input may be NULL because of that error */
    const gb_metric_type *t = m->type;
    if (t->values_only && b) {
        gb_metric_error(m, GB_ERR_VALUE, "%s takes one tensor of values; pass NULL as the second",
                        class_of(t));
        return false;
    }
    if (!a || (!t->values_only && !b)) {
        gb_metric_error(m, GB_ERR_VALUE, "update_state: %s is NULL",
                        a ? "y_pred" : "the first input");
        return false;
    }
    if (!concrete(m, a, "the first input") || !concrete(m, b, "the second input") ||
        !concrete(m, sample_weight, "sample_weight"))
        return false;
    memcpy(m->scratch, m->state, m->state_size);
    bool ok = t->update_state(m, m->scratch, a, b, sample_weight);
    if (!ok && gb_ok())
        gb_metric_error(m, GB_ERR_VALUE, "update_state failed without saying why");
    if (!ok || !gb_ok()) return false;
    memcpy(m->state, m->scratch, m->state_size);
    return true;
}

bool gb_metric_update_state(gb_metric *m, gb_tensor *a, gb_tensor *b) {
    return gb_metric_update_state_weighted(m, a, b, NULL);
}

double gb_metric_result(const gb_metric *m) { return m ? m->type->result(m, m->state) : 0.0; }

gb_tensor *gb_metric_result_tensor(const gb_metric *m) {
    return gb_scalar(GB_F32, gb_metric_result(m));
}

void gb_metric_reset_state(gb_metric *m) {
    if (!m) return;
    if (m->type->reset_state) m->type->reset_state(m, m->state);
    else memset(m->state, 0, m->state_size);
}

/* The state of a metric, for gb_metric_update_value (Mean's shortcut). */
void *gb__metric_state(gb_metric *m) { return m ? m->state : NULL; }
size_t gb__metric_state_size(const gb_metric *m) { return m ? m->state_size : 0; }
