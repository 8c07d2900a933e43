/* ops_pool.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_max_pool = {.name = "MaxPool", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_max_pool_grad = {.name = "MaxPoolGrad", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_avg_pool = {.name = "AvgPool", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_avg_pool_grad = {.name = "AvgPoolGrad", .arity = -1, .infer = pending};
