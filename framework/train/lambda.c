/* train/lambda.c — LambdaCallback: plain functions at any of fit's
 * points, for what does not deserve a callback type of its own.
 */
#include "train/internal.h"

static gb_lambda_callback *fns(gb_callback *cb) { return gb_callback_state(cb); }

static void lb_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    if (fns(cb)->on_train_begin) fns(cb)->on_train_begin(s, logs, fns(cb)->user);
}
static void lb_train_end(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    if (fns(cb)->on_train_end) fns(cb)->on_train_end(s, logs, fns(cb)->user);
}
static void lb_epoch_begin(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    if (fns(cb)->on_epoch_begin) fns(cb)->on_epoch_begin(s, epoch, logs, fns(cb)->user);
}
static void lb_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    if (fns(cb)->on_epoch_end) fns(cb)->on_epoch_end(s, epoch, logs, fns(cb)->user);
}
static void lb_batch_begin(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    if (fns(cb)->on_batch_begin) fns(cb)->on_batch_begin(s, batch, logs, fns(cb)->user);
}
static void lb_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    if (fns(cb)->on_batch_end) fns(cb)->on_batch_end(s, batch, logs, fns(cb)->user);
}

static const gb_callback_type LAMBDA = {
    .name = "LambdaCallback",
    .state_size = sizeof(gb_lambda_callback),
    .on_train_begin = lb_train_begin,
    .on_train_end = lb_train_end,
    .on_epoch_begin = lb_epoch_begin,
    .on_epoch_end = lb_epoch_end,
    .on_batch_begin = lb_batch_begin,
    .on_batch_end = lb_batch_end,
};

gb_callback *gb_lambda(const gb_lambda_callback *f) {
    gb_callback *cb = gb_callback_new(&LAMBDA);
    if (cb && f) *fns(cb) = *f;
    return cb;
}
