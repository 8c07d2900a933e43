/* ops_reduce.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_sum = {.name = "Sum", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_mean = {.name = "Mean", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_max = {.name = "Max", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_min = {.name = "Min", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_prod = {.name = "Prod", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_argmax = {.name = "ArgMax", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_argmin = {.name = "ArgMin", .arity = -1, .infer = pending};
