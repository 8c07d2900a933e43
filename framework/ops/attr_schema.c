/* ops/attr_schema.c — each op's attributes by name and type, from ops.def.
 *
 * ops.def declares an op's attributes once, beside the op: A_<TYPE>(name,
 * slot[, ...]). This file expands those declarations into one table of
 * gb_attr_def arrays indexed by op, and says where a list attribute lives
 * in gb_attrs (its span), which is all the printer and parser of
 * ops/attr_text.c need: nothing else in glassbox reads a slot to show or
 * store an attribute.
 */
#include "ops/internal.h"

static const char *const padding_names[] = {"VALID", "SAME", NULL};
static const char *const unit_names[] = {"BYTE", "UTF8_CHAR", NULL};
static const char *const unicode_error_names[] = {"strict", "replace", "ignore", NULL};

/* The attribute types of ops.def, each one gb_attr_def initializer. */
#define A_INT(nm, sl) {.name = #nm, .type = GB_ATTR_INT, .slot = sl},
#define A_BOOL(nm, sl) {.name = #nm, .type = GB_ATTR_BOOL, .slot = sl},
#define A_INTS(nm, sl, n) {.name = #nm, .type = GB_ATTR_INTS, .slot = sl, .len = n},
#define A_PAIRS(nm, sl) {.name = #nm, .type = GB_ATTR_PAIRS, .slot = sl},
#define A_AXES(nm, sl) {.name = #nm, .type = GB_ATTR_AXES, .slot = sl},
#define A_ENUM(nm, sl, values) {.name = #nm, .type = GB_ATTR_ENUM, .slot = sl, .names = values},
#define A_DTYPE(nm, sl) {.name = #nm, .type = GB_ATTR_DTYPE, .slot = sl},
#define A_COUNT(nm, sl, of) {.name = #nm, .type = GB_ATTR_COUNT, .slot = sl, .len = of},
#define A_DOUBLE(nm, sl) {.name = #nm, .type = GB_ATTR_DOUBLE, .slot = sl},
#define A_STRING(nm) {.name = #nm, .type = GB_ATTR_STRING},
#define A_VAR(nm, sl) {.name = #nm, .type = GB_ATTR_VAR, .slot = sl},
#define A_VARS(nm, sl) {.name = #nm, .type = GB_ATTR_VARS, .slot = sl},

/* Groups that several ops of ops.def share. Convolutions and pools are
 * NHWC, their lists {h, w}; the backprop ops add the shape they produce.
 * Random ops: the dtype, seed and shape they draw (rank is the shape's
 * length). The fused optimizer updates (optim/update_ops.c): weight
 * decay, the slot variables they also write, the optimizer whose learning
 * rate and step they read when they run, and whether the call is the
 * step's last update (which counts the optimizer's iteration). */
#define A_CONV A_INTS(strides, 0, 2) A_INTS(dilations, 2, 2) A_ENUM(padding, 4, padding_names)
#define A_POOL A_INTS(ksize, 0, 2) A_INTS(strides, 2, 2) A_ENUM(padding, 4, padding_names)
#define A_RANDOM A_DTYPE(dtype, 0) A_INT(seed, 1) A_COUNT(rank, 2, 3) A_INTS(shape, 3, GB_ALEN_REST)
#define A_UPDATE                                                                                   \
    A_DOUBLE(weight_decay, 3) A_VARS(slots, 1) A_INT(optimizer_id, 2) A_BOOL(last_of_step, 0)

/* One array per op; the empty entry ends it (and keeps an op without
 * attributes from being an empty initializer). */
#define GB_OP(id, type_name, sym, attrs) static const gb_attr_def attrs_##sym[] = {attrs{0}};
#include "ops.def"
#undef GB_OP

static const gb_attr_def *const op_attrs[GB_OP_COUNT] = {
#define GB_OP(id, type_name, sym, attrs) [GB_OP_##id] = attrs_##sym,
#include "ops.def"
#undef GB_OP
};

static const gb_attr_def no_attrs[] = {{0}};

const gb_attr_def *gb__op_attrs(gb_op_id op, int *n) {
    const gb_attr_def *d = (unsigned)op < GB_OP_COUNT ? op_attrs[op] : no_attrs;
    int k = 0;
    while (d[k].name) k++;
    *n = k;
    return d;
}

/* The value an attribute of def's type cannot hold, described in msg. */
static bool attr_value_ok(const gb_attr_def *d, int64_t x, char *msg, size_t size) {
    switch (d->type) {
    case GB_ATTR_ENUM: {
        int n = 0;
        while (d->names[n]) n++;
        if (x >= 0 && x < n) return true;
        size_t len = (size_t)snprintf(msg, size, "is %lld, not one of", (long long)x);
        for (int k = 0; k < n && len < size; k++)
            len += (size_t)snprintf(msg + len, size - len, "%s %s", k ? "," : "", d->names[k]);
        return false;
    }
    case GB_ATTR_BOOL:
        if (x == 0 || x == 1) return true;
        snprintf(msg, size, "is %lld, not 0 (false) or 1 (true)", (long long)x);
        return false;
    case GB_ATTR_DTYPE:
        if (x >= 0 && x < GB_DTYPE_COUNT) return true;
        snprintf(msg, size, "is %lld, not a dtype", (long long)x);
        return false;
    case GB_ATTR_AXES:
        if (!((uint64_t)x >> GB_MAX_RANK)) return true;
        snprintf(msg, size, "names an axis past %d", GB_MAX_RANK - 1);
        return false;
    default: return true;
    }
}

bool gb__attrs_valid(const gb_op_call *c) {
    const gb_attr_def *d = (unsigned)c->op < GB_OP_COUNT ? op_attrs[c->op] : no_attrs;
    for (; d->name; d++) {
        if (d->slot >= GB_MAX_ATTR_INTS) continue;
        char msg[160];
        if (!attr_value_ok(d, c->attrs->i[d->slot], msg, sizeof msg)) {
            gb__op_error(c, GB_ERR_VALUE, "%s: attribute '%s' %s", c->def->name, d->name, msg);
            return false;
        }
    }
    return true;
}
