/* ops/op_table.c — the one table of op descriptors, indexed by gb_op_id.
 *
 * Built from ops.def, so the enum and the table cannot disagree; the
 * static_assert catches a descriptor list that drifted from the enum.
 * Registered gradients (gb_register_gradient) override the built-in ones.
 */
#include "ops/internal.h"

const gb_op_def *const gb_op_table[GB_OP_COUNT] = {
#define GB_OP(id, type_name, sym, attrs) [GB_OP_##id] = &gb_opdef_##sym,
#include "ops.def"
#undef GB_OP
};

static const char *const op_type_names[] = {
#define GB_OP(id, type_name, sym, attrs) type_name,
#include "ops.def"
#undef GB_OP
};

_Static_assert(sizeof op_type_names / sizeof op_type_names[0] == GB_OP_COUNT,
               "ops.def and the op table disagree");

static gb_grad_fn registered_grads[GB_OP_COUNT];

int gb_op_lookup(const char *op_type) {
    if (!op_type) return -1;
    for (int i = 0; i < GB_OP_COUNT; i++)
        if (strcmp(op_type_names[i], op_type) == 0) return i;
    return -1;
}

const char *gb_op_type_name(gb_op_id op) {
    return (unsigned)op < GB_OP_COUNT ? op_type_names[op] : "Unknown";
}

bool gb_register_gradient(const char *op_type, gb_grad_fn fn) {
    int id = gb_op_lookup(op_type);
    if (id < 0) {
        gb__error(GB_ERR_VALUE, NULL, "gb_register_gradient: no op type named '%s'",
                  op_type ? op_type : "(null)");
        return false;
    }
    registered_grads[id] = fn;
    return true;
}

gb_grad_fn gb__grad_fn(gb_op_id op) {
    return registered_grads[op] ? registered_grads[op] : gb_op_table[op]->grad;
}
