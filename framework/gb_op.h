/* gb_op.h — op identities, attributes and gradient functions.
 *
 * Every computation in glassbox is an op from ops.def going through one
 * dispatcher. This header exposes what a user needs to extend that: the op
 * ids, the attribute block an op call carries, the context a gradient
 * function receives, and gb_register_gradient() to give an op a gradient
 * (or replace one). Gradient functions are written with the public ops, so
 * they nest for higher-order derivatives.
 */
#ifndef GB_OP_H
#define GB_OP_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gb_op_id {
#define GB_OP(id, type_name, sym, attrs) GB_OP_##id,
#include "ops.def"
#undef GB_OP
    GB_OP_COUNT
} gb_op_id;

/* The attributes of one op call. Each op declares its attributes in
 * ops.def (name, type and slot); a fixed block keeps calls allocation-free
 * and makes attributes trivially hashable and serializable for tracing. */
#define GB_MAX_ATTR_INTS 24
typedef struct gb_attrs {
    int64_t i[GB_MAX_ATTR_INTS];
    int ni;
    double f[4];
    char s[64];              /* a string (Print's message, CheckNumerics' text) */
    int64_t vars[4];         /* resource handles: ids of the variables it touches */
    int nvars;
} gb_attrs;

/* What a gradient function sees: the forward call and its results. */
typedef struct gb_grad_ctx {
    gb_op_id op;
    const char *op_type;
    const gb_attrs *attrs;
    gb_tensor *const *inputs;
    int nin;
    gb_tensor *const *outputs;
    int nout;
    gb_tensor *const *dys;   /* gradient of each output (never NULL for a gradient
                              * registered with gb_register_gradient) */
    const bool *needs_grad;  /* needs_grad[i]: dx[i] will be used; skip the others */
} gb_grad_ctx;

/* Writes dx[i] for each input (NULL: no gradient flows to input i) and
 * returns false on error. dx[i] must have the shape of input i. */
typedef bool (*gb_grad_fn)(const gb_grad_ctx *ctx, gb_tensor **dx);

/* Gives the op named `op_type` ("MatMul") a gradient, replacing any. */
bool gb_register_gradient(const char *op_type, gb_grad_fn fn);
/* The id of an op type name, or -1. */
int gb_op_lookup(const char *op_type);
const char *gb_op_type_name(gb_op_id op);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_register_gradient(...) GB_AT(gb_register_gradient, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
