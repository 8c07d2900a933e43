/* optim/sgd.c — stochastic gradient descent, with momentum and Nesterov (keras SGD).
 *
 * Without momentum the update is ResourceApplyGradientDescent
 * (var -= lr * g); with momentum it is ResourceApplyKerasMomentum, which
 * keeps a "momentum" slot per variable.
 */
#include <math.h>

#include "optim/internal.h"

gb_sgd_options gb_sgd_defaults(void) {
    return (gb_sgd_options){.learning_rate = {.kind = GB_LR_CONSTANT,
                                              .initial_learning_rate = 0.01}};
}

gb_optimizer *gb_sgd_ex(const gb_sgd_options *o) {
    const char *who = o && o->name ? o->name : "SGD";
    if (!o) {
        gb__error(GB_ERR_VALUE, NULL, "gb_sgd_ex: options are NULL");
        return NULL;
    }
    if (!gb__optim_check_range(who, "momentum", o->momentum, 0, 1, true) ||
        !gb__optim_check_range(who, "weight_decay", o->weight_decay, 0, INFINITY, false))
        return NULL;
    bool momentum = o->momentum > 0;
    gb__optim_spec spec = {
        .name = who,
        .learning_rate = o->learning_rate,
        .op = momentum ? GB_OP_APPLY_MOMENTUM : GB_OP_APPLY_GRADIENT_DESCENT,
        .attrs = {.f = {o->momentum, 0, 0, o->weight_decay},
                  .i = {[GB__OPTIM_I_FLAG] = o->nesterov}},
        .slot_names = {momentum ? "momentum" : NULL},
    };
    return gb__optimizer_new(&spec);
}

gb_optimizer *gb_sgd(double learning_rate) {
    gb_sgd_options o = gb_sgd_defaults();
    o.learning_rate.initial_learning_rate = learning_rate;
    return gb_sgd_ex(&o);
}

gb_optimizer *gb_sgd_momentum(double learning_rate, double momentum, bool nesterov) {
    gb_sgd_options o = gb_sgd_defaults();
    o.learning_rate.initial_learning_rate = learning_rate;
    o.momentum = momentum;
    o.nesterov = nesterov;
    return gb_sgd_ex(&o);
}
