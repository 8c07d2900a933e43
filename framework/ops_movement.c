/* ops_movement.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_reshape = {.name = "Reshape", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_transpose = {.name = "Transpose", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_broadcast_to = {.name = "BroadcastTo", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_slice = {.name = "Slice", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_concat = {.name = "ConcatV2", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_pad = {.name = "Pad", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_gather = {.name = "GatherV2", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_scatter_add = {.name = "ScatterAdd", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_one_hot = {.name = "OneHot", .arity = -1, .infer = pending};
