/* ops/variable.c — variables: mutable tensors owned outside scopes.
 *
 * A variable's value sits in a reference-counted heap buffer. Reading it
 * (ReadVariableOp) hands out a view and a reference that the reading
 * scope releases. Assigning while such a reference is alive writes into a
 * fresh buffer (copy on write), so a value already read — for example by
 * a tape for its backward pass — never changes under it. Without readers
 * the assignment happens in place.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops/internal.h"

struct gb_variable {
    int64_t id;                /* its handle in graphs (variable_registry.c) */
    char name[192];
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
    int64_t size;
    bool trainable;
    gb_buffer *buf;
    uint64_t writes;              /* the initial value is write 1 */
    gb_variable_numerics numerics; /* kept by debug/'s numerics check */
};

/* Variable ops name their variable by id (attrs.vars[0]): a graph holds
 * no pointers, and a freed variable is an error, not a dangling read. */
struct gb_variable *gb__call_variable(const gb_op_call *c) {
    return gb__variable_by_id(c->attrs->vars[0]);
}

static gb_variable *live_variable(const gb_op_call *c) {
    gb_variable *v = gb__call_variable(c);
    if (!v)
        gb__op_error(c, GB_ERR_STATE, "%s: variable %lld was freed", c->def->name,
                     (long long)c->attrs->vars[0]);
    return v;
}

bool gb__variable_is_trainable(const struct gb_variable *v) { return v->trainable; }

gb_variable *gb_variable_new(const char *name, gb_tensor *initial, bool trainable) {
    if (!initial) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_variable_new: initial value is NULL");
        return NULL;
    }
    if (!initial->data) {
        gb__error(GB_ERR_STATE, NULL,
                  "gb_variable_new: the initial value is symbolic; create variables outside "
                  "traced functions");
        return NULL;
    }
    if (initial->dtype == GB_STRING) {
        /* A variable's heap buffer would hold the pairs but not the bytes. */
        gb__error(GB_ERR_DTYPE, NULL,
                  "gb_variable_new: string variables are not supported; keep strings in "
                  "tensors");
        return NULL;
    }
    gb_variable *v = calloc(1, sizeof *v);
    if (!v) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_variable_new: out of memory");
        return NULL;
    }
    const char *path = gb_name_scope_path();
    snprintf(v->name, sizeof v->name, "%s%s%s", path, path[0] ? "/" : "",
             name && name[0] ? name : "Variable");
    gb_variable_created_fn created = atomic_load(&gb__variable_created_hook);
    if ((created && !created(v->name)) || !(v->id = gb__variable_register(v))) {
        free(v);
        return NULL;
    }
    v->dtype = initial->dtype;
    v->rank = initial->rank;
    memcpy(v->shape, initial->shape, sizeof v->shape);
    v->size = initial->size;
    v->trainable = trainable;
    v->buf = gb__buffer_new_heap(gb_nbytes(initial));
    if (!v->buf) {
        gb__variable_unregister(v->id);
        free(v);
        return NULL;
    }
    memcpy(v->buf->data, initial->data, gb_nbytes(initial));
    v->writes = 1;
    return v;
}

_Atomic(gb_variable_created_fn) gb__variable_created_hook;

int64_t gb__variable_id(const gb_variable *v) { return v ? v->id : 0; }

void gb_variable_free(gb_variable *v) {
    if (!v) return;
    gb__variable_unregister(v->id);
    gb__buffer_unref(v->buf); /* readers keep their reference */
    free(v);
}

const char *gb_variable_name(const gb_variable *v) { return v ? v->name : ""; }
bool gb_variable_trainable(const gb_variable *v) { return v && v->trainable; }
void gb_variable_set_trainable(gb_variable *v, bool on) {
    if (v) v->trainable = on;
}
gb_dtype gb_variable_dtype(const gb_variable *v) { return v ? v->dtype : GB_DTYPE_COUNT; }
int gb_variable_rank(const gb_variable *v) { return v ? v->rank : -1; }
const int64_t *gb_variable_shape(const gb_variable *v) { return v ? v->shape : NULL; }
int64_t gb_variable_size(const gb_variable *v) { return v ? v->size : 0; }

/* ---- ReadVariableOp ----------------------------------------------------------- */

static int infer_read(const gb_op_call *c, gb_out_desc *out) {
    const gb_variable *v = live_variable(c);
    if (!v) return -1;
    out[0].dtype = v->dtype;
    out[0].rank = v->rank;
    memcpy(out[0].shape, v->shape, sizeof v->shape);
    return 1;
}

static bool kernel_read(const gb_op_call *c, gb_tensor **out) {
    gb_variable *v = live_variable(c);
    if (!v) return false;
    v->buf->refcount++;
    if (!gb__scope_defer((gb_defer_fn)gb__buffer_unref, v->buf)) {
        v->buf->refcount--;
        return false;
    }
    out[0]->buf = v->buf;
    out[0]->data = v->buf->data;
    return true;
}

bool gb__variable_borrow(const gb_op_call *c, gb_tensor *out) {
    gb_variable *v = live_variable(c);
    if (!v) return false;
    out->buf = NULL;
    out->data = v->buf->data;
    return true;
}

const gb_op_def gb_opdef_read_variable = {
    .name = "ReadVariableOp",
    .arity = 0,
    .flags = GB_OPF_STATEFUL | GB_OPF_VIEW,
    .infer = infer_read,
    .kernel = kernel_read,
    .grad = NULL, /* reads are gradient sources; the tape handles them */
};

gb_tensor *gb_variable_value(gb_variable *v) {
    if (!v) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "ReadVariableOp", "gb_variable_value: NULL variable");
        return NULL;
    }
    gb_attrs a = {.vars = {v->id}, .nvars = 1};
    return gb__op1(GB_OP_READ_VARIABLE, NULL, 0, &a);
}

/* ---- Assign*VariableOp ---------------------------------------------------------- */

static int infer_assign(const gb_op_call *c, gb_out_desc *out) {
    (void)out;
    const gb_variable *v = live_variable(c);
    if (!v) return -1;
    const gb_tensor *x = c->in[0];
    bool same = x->dtype == v->dtype && gb__shapes_match(x->rank, x->shape, v->rank, v->shape);
    if (!same) {
        char a[96], b[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: variable '%s' is %s %s but the value is %s %s",
                     c->def->name, v->name, gb_dtype_name(v->dtype),
                     gb__shape_fmt(v->rank, v->shape, a, sizeof a), gb_dtype_name(x->dtype),
                     gb__shape_fmt(x->rank, x->shape, b, sizeof b));
        return -1;
    }
    return 0;
}

/* The buffer to write the new value into: the current one when nobody
 * else holds it, else a fresh one (copy on write). */
static gb_buffer *writable_buffer(gb_variable *v) {
    if (v->buf->refcount == 1) return v->buf;
    return gb__buffer_new_heap(v->buf->nbytes);
}

gb_buffer *gb__variable_buffer(gb_variable *v) { return v->buf; }

void gb__variable_install(gb_variable *v, gb_buffer *b) {
    v->writes++;
    if (b == v->buf) return;
    gb__buffer_unref(v->buf);
    v->buf = b;
}

uint64_t gb__variable_writes(const gb_variable *v) { return v->writes; }

gb_variable_numerics *gb__variable_numerics(gb_variable *v) { return &v->numerics; }

#define UPDATE_LOOP(T, OP)                                                                    \
    do {                                                                                      \
        const T *o = (const T *)old;                                                          \
        const T *d = (const T *)x->data;                                                      \
        T *r = (T *)dst;                                                                      \
        for (int64_t i = 0; i < n; i++) r[i] = (T)(o[i] OP d[i]);                             \
    } while (0)

static bool kernel_assign_update(const gb_op_call *c, int sign) {
    gb_variable *v = live_variable(c);
    if (!v) return false;
    const gb_tensor *x = c->in[0];
    const void *old = v->buf->data;
    gb_buffer *b = writable_buffer(v);
    if (!b) return false;
    void *dst = b->data;
    int64_t n = v->size;
    if (sign == 0) {
        memcpy(dst, x->data, v->buf->nbytes);
    } else if (v->dtype == GB_F32) {
        if (sign > 0) UPDATE_LOOP(float, +); else UPDATE_LOOP(float, -);
    } else if (v->dtype == GB_F64) {
        if (sign > 0) UPDATE_LOOP(double, +); else UPDATE_LOOP(double, -);
    } else {
        for (int64_t i = 0; i < n; i++)
            gb__store(v->dtype, dst, i,
                      gb__load(v->dtype, old, i) + sign * gb__load(x->dtype, x->data, i));
    }
    gb__variable_install(v, b);
    return true;
}

static bool kernel_assign(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return kernel_assign_update(c, 0);
}
static bool kernel_assign_add(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return kernel_assign_update(c, +1);
}
static bool kernel_assign_sub(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    return kernel_assign_update(c, -1);
}

static int written_assign(const gb_op_call *c, gb_variable **vars, signed char *nonfinite) {
    vars[0] = gb__call_variable(c);
    nonfinite[0] = -1;
    return 1;
}

#define ASSIGN_OP(sym, type_name, kernel_fn)                                                  \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type_name,                                                                    \
        .arity = 1,                                                                           \
        .flags = GB_OPF_STATEFUL,                                                             \
        .infer = infer_assign,                                                                \
        .kernel = kernel_fn,                                                                  \
        .written = written_assign,                                                            \
    };
ASSIGN_OP(assign_variable, "AssignVariableOp", kernel_assign)
ASSIGN_OP(assign_add_variable, "AssignAddVariableOp", kernel_assign_add)
ASSIGN_OP(assign_sub_variable, "AssignSubVariableOp", kernel_assign_sub)

static bool assign_via(gb_op_id op, gb_variable *v, gb_tensor *value) {
    if (!v) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, gb_op_type_name(op), "assign to a NULL variable");
        return false;
    }
    gb_attrs a = {.vars = {v->id}, .nvars = 1};
    gb_tensor *out[1];
    return gb__dispatch(op, &value, 1, &a, out) >= 0;
}

bool gb_variable_assign(gb_variable *v, gb_tensor *value) {
    return assign_via(GB_OP_ASSIGN_VARIABLE, v, value);
}
bool gb_variable_assign_add(gb_variable *v, gb_tensor *delta) {
    return assign_via(GB_OP_ASSIGN_ADD_VARIABLE, v, delta);
}
bool gb_variable_assign_sub(gb_variable *v, gb_tensor *delta) {
    return assign_via(GB_OP_ASSIGN_SUB_VARIABLE, v, delta);
}
