/* train/model_checkpoint.c — ModelCheckpoint: save the model at the end
 * of every epoch, or only when the monitored value improved
 * (save_best_only), as Keras does, to a path that may name the epoch
 * ("ckpt/epoch-{epoch}"). As Keras' save_weights_only: false (the
 * default) saves the whole model as a model file (gb_model_save:
 * architecture, weights, compile arguments, optimizer state), true a
 * checkpoint of the weights and the optimizer's state (gb_io.h). Both
 * are written atomically, so an interrupted run leaves the previous save
 * whole.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

enum { PATH_BYTES = 512 };

typedef struct model_checkpoint {
    char pattern[PATH_BYTES];
    char monitor[GB_LOGS_KEY_BYTES];
    int sign, verbose;
    bool save_best_only, save_weights_only, warned;
    double best;
    char last[PATH_BYTES];
} model_checkpoint;

/* The pattern with each "{epoch}" replaced by the 1-based epoch. */
static bool path_for(const model_checkpoint *m, int epoch, char *out) {
    size_t o = 0;
    for (const char *p = m->pattern; *p && o < PATH_BYTES - 1;) {
        if (strncmp(p, "{epoch}", 7) == 0) {
            o += (size_t)snprintf(out + o, PATH_BYTES - o, "%d", epoch + 1);
            p += 7;
        } else {
            out[o++] = *p++;
        }
    }
    if (o >= PATH_BYTES - 1) {
        gb__error(GB_ERR_VALUE, NULL, "ModelCheckpoint: the path for epoch %d is too long", epoch + 1);
        return false;
    }
    out[o] = '\0';
    return true;
}

/* Saves (rank 0 alone in a distributed fit: the ranks hold the same
 * weights); true when it wrote the file. */
static bool save(model_checkpoint *m, gb_train_state *s, int epoch) {
    char path[PATH_BYTES];
    /* Rank 0 alone writes in a distributed fit: the ranks hold the same weights. */
    if (s->rank != 0 || !path_for(m, epoch, path)) return false;
    bool ok = m->save_weights_only ? gb__state_write(s->model, s->optimizer, path, NULL, 0)
                                   : gb_model_save(s->model, path);
    if (ok) snprintf(m->last, sizeof m->last, "%s", path);
    return ok;
}

static void mc_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)s, (void)logs;
    model_checkpoint *m = gb_callback_state(cb);
    m->best = -m->sign * INFINITY;
}

static void mc_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    model_checkpoint *m = gb_callback_state(cb);
    if (!m->save_best_only) {
        if (save(m, s, epoch) && m->verbose) gb_train_print(s, "Epoch %d: saving model to %s", epoch + 1, m->last);
        return;
    }
    double current;
    if (!gb__monitor_value("ModelCheckpoint", m->monitor, logs, &m->warned, &current)) return;
    if (!gb__monitor_improved(m->sign, current, m->best, 0)) {
        if (m->verbose && s->rank == 0)
            gb_train_print(s, "Epoch %d: %s did not improve from %.5f", epoch + 1, m->monitor, m->best);
        return;
    }
    double before = m->best;
    m->best = current;
    if (save(m, s, epoch) && m->verbose)
        gb_train_print(s, "Epoch %d: %s improved from %.5f to %.5f, saving model to %s", epoch + 1,
                       m->monitor, before, current, m->last);
}

static const gb_callback_type MODEL_CHECKPOINT = {
    .name = "ModelCheckpoint",
    .state_size = sizeof(model_checkpoint),
    .on_train_begin = mc_train_begin,
    .on_epoch_end = mc_epoch_end,
};

gb_callback *gb_model_checkpoint(const gb_model_checkpoint_options *o) {
    static const char *const WHO = "gb_model_checkpoint";
    if (!o || !o->filepath || !o->filepath[0] || strlen(o->filepath) >= PATH_BYTES) {
        gb__error(GB_ERR_VALUE, NULL, "%s: a filepath of 1 to %d characters is required", WHO,
                  PATH_BYTES - 1);
        return NULL;
    }
    char monitor[GB_LOGS_KEY_BYTES];
    int sign = gb__monitor_init(WHO, o->monitor, o->mode, monitor);
    gb_callback *cb = sign ? gb_callback_new(&MODEL_CHECKPOINT) : NULL;
    if (!cb) return NULL;
    model_checkpoint *m = gb_callback_state(cb);
    snprintf(m->pattern, sizeof m->pattern, "%s", o->filepath);
    memcpy(m->monitor, monitor, sizeof monitor);
    m->sign = sign;
    m->save_best_only = o->save_best_only;
    m->save_weights_only = o->save_weights_only;
    m->verbose = o->verbose;
    return cb;
}

const char *gb_model_checkpoint_last_path(gb_callback *cb) {
    return cb && cb->type == &MODEL_CHECKPOINT ? ((model_checkpoint *)gb_callback_state(cb))->last : "";
}
