/* ops_optim.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_apply_gradient_descent = {.name = "ResourceApplyGradientDescent", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_apply_momentum = {.name = "ResourceApplyKerasMomentum", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_apply_adam = {.name = "ResourceApplyAdam", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_apply_rmsprop = {.name = "ResourceApplyRMSProp", .arity = -1, .infer = pending};
