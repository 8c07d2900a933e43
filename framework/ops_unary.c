/* ops_unary.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_neg = {.name = "Neg", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_abs = {.name = "Abs", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sign = {.name = "Sign", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_exp = {.name = "Exp", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_log = {.name = "Log", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_log1p = {.name = "Log1p", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sqrt = {.name = "Sqrt", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_rsqrt = {.name = "Rsqrt", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_square = {.name = "Square", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_reciprocal = {.name = "Reciprocal", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sin = {.name = "Sin", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_cos = {.name = "Cos", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_tanh = {.name = "Tanh", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sigmoid = {.name = "Sigmoid", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_relu = {.name = "Relu", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_leaky_relu = {.name = "LeakyRelu", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_elu = {.name = "Elu", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_gelu = {.name = "Gelu", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_softplus = {.name = "Softplus", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_cast = {.name = "Cast", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_identity = {.name = "Identity", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_stop_gradient = {.name = "StopGradient", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_relu_grad = {.name = "ReluGrad", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sigmoid_grad = {.name = "SigmoidGrad", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_tanh_grad = {.name = "TanhGrad", .arity = -1, .infer = pending};
