/* train/early_stopping.c — EarlyStopping: stop when the monitored value
 * has not improved for `patience` epochs, and put back the weights of the
 * best epoch. Keras 3's rules, exactly: an epoch improves when it beats
 * the best by more than min_delta; the count of epochs without
 * improvement restarts at an improvement; it stops once the count reaches
 * patience (never at epoch 0); with restore_best_weights the best epoch's
 * weights come back at the end of training, whether it stopped or not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

typedef struct early_stopping {
    gb_early_stopping_options o;
    char monitor[GB_LOGS_KEY_BYTES];
    int sign;
    int wait, stopped_epoch, best_epoch;
    double best;
    gb__weights *best_weights;
    bool warned;
} early_stopping;

static void es_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)s, (void)logs;
    early_stopping *e = gb_callback_state(cb);
    e->wait = 0;
    e->stopped_epoch = -1;
    e->best_epoch = 0;
    e->best = -e->sign * INFINITY;
    gb__weights_free(e->best_weights);
    e->best_weights = NULL;
}

static void keep_weights(early_stopping *e, gb_train_state *s, int epoch) {
    if (!e->o.restore_best_weights) return;
    gb__weights_free(e->best_weights);
    e->best_weights = gb__weights_save(s->model);
    e->best_epoch = epoch;
}

static void es_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    early_stopping *e = gb_callback_state(cb);
    double current;
    if (!gb__monitor_value("EarlyStopping", e->monitor, logs, &e->warned, &current) ||
        epoch < e->o.start_from_epoch)
        return;
    /* Until something improves, the weights as they are count as the best. */
    if (!e->best_weights) keep_weights(e, s, epoch);
    e->wait++;
    if (gb__monitor_improved(e->sign, current, e->best, e->o.min_delta)) {
        e->best = current;
        e->best_epoch = epoch;
        keep_weights(e, s, epoch);
        e->wait = 0;
        return;
    }
    if (e->wait >= e->o.patience && epoch > 0) {
        e->stopped_epoch = epoch;
        s->stop_training = true;
    }
}

static void es_train_end(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)logs;
    early_stopping *e = gb_callback_state(cb);
    if (e->stopped_epoch >= 0 && e->o.verbose) gb_train_print(s, "Epoch %d: early stopping", e->stopped_epoch + 1);
    if (!e->best_weights) return;
    if (e->o.verbose)
        gb_train_print(s, "Restoring model weights from the end of the best epoch: %d.", e->best_epoch + 1);
    gb__weights_restore(s->model, e->best_weights);
}

static void es_free(gb_callback *cb) {
    early_stopping *e = gb_callback_state(cb);
    gb__weights_free(e->best_weights);
}

static const gb_callback_type EARLY_STOPPING = {
    .name = "EarlyStopping",
    .state_size = sizeof(early_stopping),
    .on_train_begin = es_train_begin,
    .on_epoch_end = es_epoch_end,
    .on_train_end = es_train_end,
    .free = es_free,
};

gb_callback *gb_early_stopping(const gb_early_stopping_options *o) {
    static const char *const WHO = "gb_early_stopping";
    gb_early_stopping_options d = o ? *o : (gb_early_stopping_options){0};
    if (d.patience < 0) {
        gb__error(GB_ERR_VALUE, NULL, "%s: patience must be >= 0", WHO);
        return NULL;
    }
    char monitor[GB_LOGS_KEY_BYTES];
    int sign = gb__monitor_init(WHO, d.monitor, d.mode, monitor);
    gb_callback *cb = sign ? gb_callback_new(&EARLY_STOPPING) : NULL;
    if (!cb) return NULL;
    early_stopping *e = gb_callback_state(cb);
    e->o = d;
    e->o.monitor = e->o.mode = NULL; /* the caller's strings are not kept */
    memcpy(e->monitor, monitor, sizeof monitor);
    e->sign = sign;
    e->stopped_epoch = -1;
    return cb;
}

int gb_early_stopping_stopped_epoch(gb_callback *cb) {
    return cb && cb->type == &EARLY_STOPPING ? ((early_stopping *)gb_callback_state(cb))->stopped_epoch
                                             : -1;
}
