/* ops/shape_util.h — small helpers shared by the shape and movement op files
 * (ops/movement.c, ops/shape_index.c): strides, element addressing,
 * filling, output descriptions and errors raised before dispatch. */
#ifndef GB_OPS_SHAPE_UTIL_H
#define GB_OPS_SHAPE_UTIL_H

#include <math.h>

#include "ops/internal.h"

/* Row-major element strides of a shape. */
static inline void strides_of(int rank, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i];
    }
}

static inline char *elem_ptr(const gb_tensor *t, int64_t i) {
    return (char *)t->data + (size_t)i * gb_dtype_size(t->dtype);
}

/* Fills t with value (converted to t's dtype). */
static inline void fill_value(gb_tensor *t, double value) {
    size_t es = gb_dtype_size(t->dtype);
    if (t->dtype == GB_STRING) { /* only 0 reaches here (Pad checks): empty strings */
        gb_string *e = t->data;
        for (int64_t i = 0; i < t->size; i++) e[i] = (gb_string){gb__empty_bytes, 0};
        return;
    }
    if (value == 0.0 && !signbit(value)) {
        memset(t->data, 0, (size_t)t->size * es);
        return;
    }
    if (t->size == 0) return;
    gb__store(t->dtype, t->data, 0, value);
    /* Doubling copies: log2(size) memcpy calls. */
    for (int64_t done = 1; done < t->size; done *= 2) {
        int64_t n = done < t->size - done ? done : t->size - done;
        memcpy(elem_ptr(t, done), t->data, (size_t)n * es);
    }
}

/* The dispatcher's view of a public call, for errors raised before it. */
static inline gb_op_call call_of(gb_op_id op) {
    return (gb_op_call){.op = op, .def = gb_op_table[op]};
}

static inline void set_desc(gb_out_desc *d, gb_dtype dt, int rank, const int64_t *shape) {
    d->dtype = dt;
    d->rank = rank;
    for (int i = 0; i < rank; i++) d->shape[i] = shape[i];
}

#endif
