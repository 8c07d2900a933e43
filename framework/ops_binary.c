/* ops_binary.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_add = {.name = "Add", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sub = {.name = "Sub", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_mul = {.name = "Mul", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_div = {.name = "Div", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_pow = {.name = "Pow", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_maximum = {.name = "Maximum", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_minimum = {.name = "Minimum", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_equal = {.name = "Equal", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_not_equal = {.name = "NotEqual", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_less = {.name = "Less", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_less_equal = {.name = "LessEqual", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_greater = {.name = "Greater", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_greater_equal = {.name = "GreaterEqual", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_select = {.name = "Select", .arity = -1, .infer = pending};
