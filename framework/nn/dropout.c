/* nn/dropout.c — the Dropout layer (keras.layers.Dropout).
 *
 * In training, each element is zeroed with probability `rate` and the rest
 * scaled by 1/(1-rate) so the expected value is unchanged; at inference
 * the input passes through untouched (no op at all). Each training call
 * draws a fresh mask from (layer seed, call count), so masks differ from
 * step to step yet a run repeats exactly.
 */

#include "nn/internal.h"

typedef struct dropout_state {
    double rate;
    uint64_t calls;
} dropout_state;

static gb_tensor *dropout_call(gb_module *m, gb_tensor *x, bool training) {
    dropout_state *s = gb_module_state(m);
    if (!training || s->rate == 0) return x;
    uint64_t seed = gb__nn_mix_seed(gb_module_seed(m), ++s->calls);
    return gb_dropout(x, s->rate, seed);
}

static bool dropout_get_config(gb_module *m, gb_config *c) {
    const dropout_state *s = gb_module_state(m);
    return gb_config_put_number(c, "rate", s->rate) &&
           gb_config_put_int(c, "seed", (int64_t)gb_module_seed(m));
}

static gb_module *dropout_from_config(const gb_config *c) {
    double rate = 0;
    int64_t seed = 0;
    if (!gb_config_read_number(c, "Dropout", "rate", 0, &rate) ||
        !gb_config_read_int(c, "Dropout", "seed", 0, &seed))
        return NULL;
    return gb_dropout_new(rate, (uint64_t)seed, gb__config_name(c, "Dropout"));
}

const gb_module_type gb__dropout_type = {
    .get_config = dropout_get_config,
    .from_config = dropout_from_config,
    .class_name = "Dropout",
    .default_name = "dropout",
    .state_size = sizeof(dropout_state),
    .call = dropout_call,
};

gb_module *gb_dropout_new(double rate, uint64_t seed, const char *name) {
    if (!(rate >= 0 && rate < 1)) {
        gb__error(GB_ERR_VALUE, "Dropout",
                  "Dropout: rate must be in [0, 1) (the fraction of inputs to drop), got %g", rate);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__dropout_type, name, seed);
    if (m) ((dropout_state *)gb_module_state(m))->rate = rate;
    return m;
}
