/* ops_random.c — PENDING: descriptors only, kernels to be written. */
#include "internal.h"

static int pending(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    gb__op_error(c, GB_ERR_INTERNAL, "%s is not implemented yet", c->def->name);
    return -1;
}

const gb_op_def gb_opdef_random_uniform = {.name = "RandomUniform", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_random_normal = {.name = "RandomStandardNormal", .arity = -1, .infer = pending};
const gb_op_def gb_opdef_truncated_normal = {.name = "TruncatedNormal", .arity = -1, .infer = pending};
