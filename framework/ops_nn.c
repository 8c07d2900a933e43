/* ops_nn.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_softmax = {.name = "Softmax", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_log_softmax = {.name = "LogSoftmax", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_sparse_softmax_xent = {.name = "SparseSoftmaxCrossEntropyWithLogits", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_softmax_xent = {.name = "SoftmaxCrossEntropyWithLogits", .arity = -1, .infer = pending};
