/* train/reduce_lr.c — ReduceLROnPlateau: when the monitored value has
 * stopped improving for `patience` epochs, multiply the learning rate by
 * `factor` (never below min_lr), then give it `cooldown` epochs before
 * counting again. Keras 3's rules, in its order of checks.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/internal.h"

typedef struct reduce_lr {
    gb_reduce_lr_options o;
    char monitor[GB_LOGS_KEY_BYTES];
    int sign, wait, cooldown_left;
    double best;
    bool warned;
} reduce_lr;

static void rl_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)s, (void)logs;
    reduce_lr *r = gb_callback_state(cb);
    r->best = -r->sign * INFINITY;
    r->wait = r->cooldown_left = 0;
}

static void reduce(reduce_lr *r, gb_train_state *s, int epoch) {
    double old = gb_optimizer_learning_rate(s->optimizer);
    if (!(old > r->o.min_lr)) return;
    double lr = fmax(old * r->o.factor, r->o.min_lr);
    if (!gb_optimizer_set_learning_rate(s->optimizer, lr)) return;
    if (r->o.verbose) gb_train_print(s, "Epoch %d: ReduceLROnPlateau reducing learning rate to %g.", epoch + 1, lr);
    r->cooldown_left = r->o.cooldown;
    r->wait = 0;
}

static void rl_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    reduce_lr *r = gb_callback_state(cb);
    gb_logs_set(logs, "learning_rate", gb_optimizer_learning_rate(s->optimizer));
    double current;
    if (!gb__monitor_value("ReduceLROnPlateau", r->monitor, logs, &r->warned, &current)) return;
    if (r->cooldown_left > 0) {
        r->cooldown_left--;
        r->wait = 0;
    }
    if (gb__monitor_improved(r->sign, current, r->best, r->o.min_delta)) {
        r->best = current;
        r->wait = 0;
    } else if (r->cooldown_left == 0 && ++r->wait >= r->o.patience) {
        reduce(r, s, epoch);
    }
}

static const gb_callback_type REDUCE_LR = {
    .name = "ReduceLROnPlateau",
    .state_size = sizeof(reduce_lr),
    .on_train_begin = rl_train_begin,
    .on_epoch_end = rl_epoch_end,
};

gb_callback *gb_reduce_lr_on_plateau(const gb_reduce_lr_options *o) {
    static const char *const WHO = "gb_reduce_lr_on_plateau";
    gb_reduce_lr_options d = o ? *o : (gb_reduce_lr_options){0};
    if (d.factor == 0) d.factor = 0.1;
    if (d.patience == 0) d.patience = 10;
    if (d.min_delta == 0) d.min_delta = 1e-4;
    const char *why = !(d.factor > 0 && d.factor < 1) ? "factor must be in (0, 1)"
                      : d.patience < 0 || d.cooldown < 0 ? "patience and cooldown must be >= 0"
                      : d.min_lr < 0 ? "min_lr must be >= 0"
                                     : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO, why);
        return NULL;
    }
    char monitor[GB_LOGS_KEY_BYTES];
    int sign = gb__monitor_init(WHO, d.monitor, d.mode, monitor);
    gb_callback *cb = sign ? gb_callback_new(&REDUCE_LR) : NULL;
    if (!cb) return NULL;
    reduce_lr *r = gb_callback_state(cb);
    r->o = d;
    r->o.monitor = r->o.mode = NULL;
    memcpy(r->monitor, monitor, sizeof monitor);
    r->sign = sign;
    return cb;
}
