/* optim/rmsprop.c — RMSprop (keras RMSprop), one ResourceApplyRMSProp per variable.
 *
 * Slots: "velocity" always; "momentum" only when momentum > 0 and
 * "average_gradient" only when centered, so the plain variant costs one
 * slot, as in Keras.
 */
#include <math.h>

#include "optim/internal.h"

gb_rmsprop_options gb_rmsprop_defaults(void) {
    return (gb_rmsprop_options){
        .learning_rate = {.kind = GB_LR_CONSTANT, .initial_learning_rate = 0.001},
        .rho = 0.9,
        .epsilon = 1e-7,
    };
}

gb_optimizer *gb_rmsprop_ex(const gb_rmsprop_options *o) {
    const char *who = o && o->name ? o->name : "RMSprop";
    if (!o) {
        gb__error(GB_ERR_VALUE, NULL, "gb_rmsprop_ex: options are NULL");
        return NULL;
    }
    if (!gb__optim_check_range(who, "rho", o->rho, 0, 1, false) ||
        !gb__optim_check_range(who, "momentum", o->momentum, 0, 1, true) ||
        !gb__optim_check_range(who, "epsilon", o->epsilon, 0, INFINITY, false) ||
        !gb__optim_check_range(who, "weight_decay", o->weight_decay, 0, INFINITY, false))
        return NULL;
    gb__optim_spec spec = {
        .name = who,
        .learning_rate = o->learning_rate,
        .op = GB_OP_APPLY_RMSPROP,
        .attrs = {.f = {o->rho, o->momentum, o->epsilon, o->weight_decay},
                  .i = {[GB__OPTIM_I_FLAG] = o->centered}},
        .slot_names = {"velocity", o->momentum > 0 ? "momentum" : NULL,
                       o->centered ? "average_gradient" : NULL},
    };
    return gb__optimizer_new(&spec);
}

gb_optimizer *gb_rmsprop(double learning_rate) {
    gb_rmsprop_options o = gb_rmsprop_defaults();
    o.learning_rate.initial_learning_rate = learning_rate;
    return gb_rmsprop_ex(&o);
}
