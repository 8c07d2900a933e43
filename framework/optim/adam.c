/* optim/adam.c — Adam and AdamW (keras Adam, AdamW), one ResourceApplyAdam per variable.
 *
 * AdamW is Adam with decoupled weight decay (var -= lr * weight_decay *
 * var before the Adam step, on the schedule's learning rate, not the
 * bias-corrected one), exactly as Keras 3 where AdamW only changes the
 * default weight_decay; the name keeps slot names Keras-like.
 */
#include <math.h>

#include "optim/internal.h"

gb_adam_options gb_adam_defaults(void) {
    return (gb_adam_options){
        .learning_rate = {.kind = GB_LR_CONSTANT, .initial_learning_rate = 0.001},
        .beta_1 = 0.9,
        .beta_2 = 0.999,
        .epsilon = 1e-7,
    };
}

gb_adam_options gb_adamw_defaults(void) {
    gb_adam_options o = gb_adam_defaults();
    o.weight_decay = 0.004;
    o.name = "AdamW";
    return o;
}

gb_optimizer *gb_adam_ex(const gb_adam_options *o) {
    const char *who = o && o->name ? o->name : "Adam";
    if (!o) {
        gb__error(GB_ERR_VALUE, NULL, "gb_adam_ex: options are NULL");
        return NULL;
    }
    if (!gb__optim_check_range(who, "beta_1", o->beta_1, 0, 1, false) ||
        !gb__optim_check_range(who, "beta_2", o->beta_2, 0, 1, false) ||
        !gb__optim_check_range(who, "epsilon", o->epsilon, 0, INFINITY, false) ||
        !gb__optim_check_range(who, "weight_decay", o->weight_decay, 0, INFINITY, false))
        return NULL;
    gb__optim_spec spec = {
        .name = who,
        .learning_rate = o->learning_rate,
        .op = GB_OP_APPLY_ADAM,
        .attrs = {.f = {o->beta_1, o->beta_2, o->epsilon, o->weight_decay}},
        .slot_names = {"m", "v"},
    };
    return gb__optimizer_new(&spec);
}

gb_optimizer *gb_adam(double learning_rate) {
    gb_adam_options o = gb_adam_defaults();
    o.learning_rate.initial_learning_rate = learning_rate;
    return gb_adam_ex(&o);
}

gb_optimizer *gb_adamw(double learning_rate, double weight_decay) {
    gb_adam_options o = gb_adamw_defaults();
    o.learning_rate.initial_learning_rate = learning_rate;
    o.weight_decay = weight_decay;
    return gb_adam_ex(&o);
}
