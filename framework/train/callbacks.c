/* train/callbacks.c — a callback's storage and the list fit calls at each
 * point of a run. The order is Keras 3's: the user's callbacks as given,
 * then the progress bar, so a callback that changes the logs at an
 * epoch's end (ReduceLROnPlateau adds learning_rate) shows in the bar.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "train/internal.h"

gb_callback *gb_callback_new(const gb_callback_type *type) {
    if (!type) {
        gb__error(GB_ERR_VALUE, NULL, "gb_callback_new: the type is NULL");
        return NULL;
    }
    gb_callback *cb = calloc(1, sizeof *cb + type->state_size);
    if (!cb) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_callback_new: out of memory for '%s'",
                  type->name ? type->name : "callback");
        return NULL;
    }
    cb->type = type;
    return cb;
}

void *gb_callback_state(gb_callback *cb) { return cb ? cb->state : NULL; }

void gb_callback_free(gb_callback *cb) {
    if (!cb) return;
    if (cb->type->free) cb->type->free(cb);
    free(cb);
}

static int count(const gb__callbacks *l) { return l->nuser + (l->progbar != NULL); }
static gb_callback *at(const gb__callbacks *l, int i) { return i < l->nuser ? l->user[i] : l->progbar; }

/* Calls hook on every callback that has it. */
#define EACH(l, hook, ...)                                     \
    for (int i_ = 0; i_ < count(l); i_++) {                    \
        gb_callback *cb_ = at(l, i_);                          \
        if (cb_ && cb_->type->hook) cb_->type->hook(cb_, __VA_ARGS__); \
    }

void gb__cb_train_begin(gb__callbacks *l, gb_train_state *s, gb_logs *logs) {
    EACH(l, on_train_begin, s, logs)
}
void gb__cb_train_end(gb__callbacks *l, gb_train_state *s, gb_logs *logs) {
    EACH(l, on_train_end, s, logs)
}
void gb__cb_epoch_begin(gb__callbacks *l, gb_train_state *s, int epoch, gb_logs *logs) {
    EACH(l, on_epoch_begin, s, epoch, logs)
}
void gb__cb_epoch_end(gb__callbacks *l, gb_train_state *s, int epoch, gb_logs *logs) {
    EACH(l, on_epoch_end, s, epoch, logs)
}
void gb__cb_batch_begin(gb__callbacks *l, gb_train_state *s, int64_t batch, gb_logs *logs) {
    EACH(l, on_batch_begin, s, batch, logs)
}
void gb__cb_batch_end(gb__callbacks *l, gb_train_state *s, int64_t batch, gb_logs *logs) {
    EACH(l, on_batch_end, s, batch, logs)
}

/* ---- what EarlyStopping, ReduceLROnPlateau and ModelCheckpoint watch -------------------- */

int gb__monitor_init(const char *who, const char *monitor, const char *mode, char *name) {
    if (!monitor) monitor = "val_loss";
    if (strlen(monitor) >= GB_LOGS_KEY_BYTES) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the monitor's name '%.40s...' is too long", who, monitor);
        return 0;
    }
    strcpy(name, monitor);
    return gb__monitor_sign(who, monitor, mode);
}

int gb__monitor_sign(const char *who, const char *monitor, const char *mode) {
    if (!mode || !strcmp(mode, "auto")) {
        static const char *const bigger[] = {"acc", "auc", "precision", "recall"};
        for (size_t i = 0; i < sizeof bigger / sizeof bigger[0]; i++)
            if (strstr(monitor, bigger[i])) return 1;
        return -1;
    }
    if (!strcmp(mode, "min")) return -1;
    if (!strcmp(mode, "max")) return 1;
    gb__error(GB_ERR_VALUE, NULL, "%s: mode '%s' is none of \"auto\", \"min\", \"max\"", who, mode);
    return 0;
}

bool gb__monitor_improved(int sign, double current, double best, double min_delta) {
    return sign * (current - best) > fabs(min_delta);
}

bool gb__monitor_value(const char *who, const char *monitor, const gb_logs *logs, bool *warned,
                       double *value) {
    if (gb_logs_has(logs, monitor)) {
        *value = gb_logs_get(logs, monitor);
        return true;
    }
    if (!*warned) {
        char keys[256] = "";
        for (int i = 0; logs && i < logs->n; i++)
            snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", i ? ", " : "",
                     logs->key[i]);
        gb__warn("%s: '%s' is not in the logs, so it does nothing (the logs have: %s)", who,
                 monitor, keys[0] ? keys : "nothing");
        *warned = true;
    }
    return false;
}
