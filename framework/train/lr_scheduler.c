/* train/lr_scheduler.c — LearningRateScheduler: the learning rate of
 * each epoch from a function of the epoch and the current rate, set at
 * the epoch's start and shown in its logs.
 */
#include "train/internal.h"

typedef struct lr_scheduler {
    gb_epoch_lr_fn fn;
    void *user;
} lr_scheduler;

static void ls_epoch_begin(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)logs;
    lr_scheduler *l = gb_callback_state(cb);
    gb_optimizer_set_learning_rate(s->optimizer, l->fn(epoch, gb_optimizer_learning_rate(s->optimizer), l->user));
}

static void ls_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)cb, (void)epoch;
    gb_logs_set(logs, "learning_rate", gb_optimizer_learning_rate(s->optimizer));
}

static const gb_callback_type LR_SCHEDULER = {
    .name = "LearningRateScheduler",
    .state_size = sizeof(lr_scheduler),
    .on_epoch_begin = ls_epoch_begin,
    .on_epoch_end = ls_epoch_end,
};

gb_callback *gb_learning_rate_scheduler(gb_epoch_lr_fn fn, void *user) {
    if (!fn) {
        gb__error(GB_ERR_VALUE, NULL, "gb_learning_rate_scheduler: the schedule function is NULL");
        return NULL;
    }
    gb_callback *cb = gb_callback_new(&LR_SCHEDULER);
    if (cb) *(lr_scheduler *)gb_callback_state(cb) = (lr_scheduler){fn, user};
    return cb;
}
