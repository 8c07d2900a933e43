/* train/logs.c — the named numbers fit passes around (gb_logs), the
 * History of every epoch, and snapshots of a model's weights.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

/* ---- logs ------------------------------------------------------------------------ */

static int find(const gb_logs *l, const char *key) {
    for (int i = 0; l && key && i < l->n; i++)
        if (!strcmp(l->key[i], key)) return i;
    return -1;
}

double gb_logs_get(const gb_logs *logs, const char *key) {
    int i = find(logs, key);
    return i < 0 ? NAN : logs->value[i];
}

bool gb_logs_has(const gb_logs *logs, const char *key) { return find(logs, key) >= 0; }

bool gb_logs_set(gb_logs *logs, const char *key, double value) {
    if (!logs || !key || strlen(key) >= GB_LOGS_KEY_BYTES) return false;
    int i = find(logs, key);
    if (i < 0) {
        if (logs->n == GB_LOGS_MAX) return false;
        i = logs->n++;
        strcpy(logs->key[i], key);
    }
    logs->value[i] = value;
    return true;
}

/* ---- history ----------------------------------------------------------------------- */

struct gb_history {
    int n, cap;
    int *epoch;
    gb_logs *logs;
};

gb_history *gb__history_new(void) { return calloc(1, sizeof(gb_history)); }

bool gb__history_append(gb_history *h, int epoch, const gb_logs *logs) {
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 8;
        int *e = realloc(h->epoch, (size_t)cap * sizeof *e);
        if (e) h->epoch = e;
        gb_logs *l = e ? realloc(h->logs, (size_t)cap * sizeof *l) : NULL;
        if (l) h->logs = l;
        if (!l) {
            gb__error(GB_ERR_MEMORY, NULL, "fit: out of memory for the history");
            return false;
        }
        h->cap = cap;
    }
    h->epoch[h->n] = epoch;
    h->logs[h->n++] = *logs;
    return true;
}

int gb_history_epochs(const gb_history *h) { return h ? h->n : 0; }
int gb_history_epoch(const gb_history *h, int i) { return h && i >= 0 && i < h->n ? h->epoch[i] : -1; }

const gb_logs *gb_history_logs(const gb_history *h, int i) {
    return h && i >= 0 && i < h->n ? &h->logs[i] : NULL;
}

double gb_history_value(const gb_history *h, const char *key, int i) {
    return gb_logs_get(gb_history_logs(h, i), key);
}

void gb_history_free(gb_history *h) {
    if (!h) return;
    free(h->epoch);
    free(h->logs);
    free(h);
}

/* ---- weight snapshots -------------------------------------------------------------- */

struct gb__weights {
    int n;
    void *data[];
};

gb__weights *gb__weights_save(gb_module *model) {
    int n = 0;
    gb_variable *const *vars = gb_module_variables(model, &n);
    gb__weights *w = calloc(1, sizeof *w + (size_t)n * sizeof(void *));
    if (!w) return NULL;
    w->n = n;
    gb_scope_begin();
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)gb_variable_size(vars[i]) * gb_dtype_size(gb_variable_dtype(vars[i]));
        w->data[i] = malloc(bytes ? bytes : 1);
        if (w->data[i] && bytes) memcpy(w->data[i], gb_data(gb_variable_value(vars[i])), bytes);
    }
    gb_scope_end();
    for (int i = 0; i < n; i++)
        if (!w->data[i]) {
            gb__weights_free(w);
            return NULL;
        }
    return w;
}

bool gb__weights_restore(gb_module *model, const gb__weights *w) {
    int n = 0;
    gb_variable *const *vars = gb_module_variables(model, &n);
    if (n != w->n) return false;
    gb_scope_begin();
    for (int i = 0; i < n; i++)
        gb_variable_assign(vars[i], gb_tensor_from(gb_variable_dtype(vars[i]), w->data[i],
                                                   gb_variable_rank(vars[i]),
                                                   gb_variable_shape(vars[i])));
    gb_scope_end();
    return gb_ok();
}

void gb__weights_free(gb__weights *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) free(w->data[i]);
    free(w);
}
