/* train/terminate_nan.c — TerminateOnNaN: stop training at the first
 * batch whose loss is NaN or infinite, as Keras does; the numerics
 * checks (gb_debug.h) then say which op made it.
 */
#include <math.h>
#include <stdio.h>

#include "train/internal.h"

static void tn_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)cb;
    double loss = gb_logs_get(logs, "loss");
    if (!gb_logs_has(logs, "loss") || isfinite(loss)) return;
    gb_train_print(s, "Batch %lld: Invalid loss, terminating training", (long long)batch);
    s->stop_training = true;
}

static const gb_callback_type TERMINATE_ON_NAN = {
    .name = "TerminateOnNaN",
    .on_batch_end = tn_batch_end,
};

gb_callback *gb_terminate_on_nan(void) { return gb_callback_new(&TERMINATE_ON_NAN); }
