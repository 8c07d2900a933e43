/* nn/merge.c — merging layers: Add and Concatenate (keras.layers.Add,
 * keras.layers.Concatenate), the joints of multi-input functional models.
 *
 * Both take two or more inputs of one dtype and rank; Add needs equal
 * shapes, Concatenate equal shapes but along its axis. One shape check
 * serves both, on symbols (output_specs) and on tensors (each call), so a
 * mismatch is the same clear error either way — never a silent broadcast.
 */
#include <stdio.h>

#include "nn/internal.h"

typedef struct merge_state {
    int64_t axis;             /* Concatenate's as given (-1: last); unused by Add */
    bool concat;
} merge_state;

/* The axis of rank-r inputs, or -1 (with an error) when out of range or 0. */
static int concat_axis(gb_module *m, int rank) {
    const merge_state *s = gb_module_state(m);
    int64_t a = s->axis < 0 ? s->axis + rank : s->axis;
    if (a >= 1 && a < rank) return (int)a;
    gb__nn_error(m, GB_ERR_VALUE,
                 a == 0 ? "cannot concatenate along axis 0, the batch"
                        : "axis %lld is out of range for inputs of rank %d",
                 (long long)s->axis, rank);
    return -1;
}

/* dims a and b agree (either may be unknown); the known one, or -1. */
static bool unify(int64_t a, int64_t b, int64_t *out) {
    *out = a < 0 ? b : a;
    return a < 0 || b < 0 || a == b;
}

static int merge_specs(gb_module *m, int nin, const gb_tensor_spec *in, gb_tensor_spec *out) {
    const merge_state *s = gb_module_state(m);
    char a[128], b[128];
    if (nin < 2) {
        gb__nn_error(m, GB_ERR_VALUE, "needs at least 2 inputs, got %d", nin);
        return -1;
    }
    int axis = s->concat ? concat_axis(m, in[0].rank) : -1;
    if (s->concat && axis < 0) return -1;
    out[0] = in[0];
    out[0].name = NULL;
    for (int i = 1; i < nin; i++) {
        bool ok = in[i].dtype == in[0].dtype && in[i].rank == in[0].rank;
        for (int d = 0; ok && d < in[0].rank; d++) {
            if (d == axis) {
                bool known = out[0].shape[d] >= 0 && in[i].shape[d] >= 0;
                out[0].shape[d] = known ? out[0].shape[d] + in[i].shape[d] : -1;
            } else {
                ok = unify(out[0].shape[d], in[i].shape[d], &out[0].shape[d]);
            }
        }
        if (ok) continue;
        gb__nn_error(m, GB_ERR_SHAPE,
                     "input %d is %s %s but input 0 is %s %s; %s", i, gb_dtype_name(in[i].dtype),
                     gb__shape_fmt(in[i].rank, in[i].shape, a, sizeof a),
                     gb_dtype_name(in[0].dtype), gb__shape_fmt(in[0].rank, in[0].shape, b, sizeof b),
                     s->concat ? "inputs must match in dtype, rank and every dim but the "
                                 "concatenation axis"
                               : "inputs must have the same dtype and shape");
        return -1;
    }
    return 1;
}

static int merge_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training) {
    (void)training;
    const merge_state *s = gb_module_state(m);
    gb_tensor_spec specs[GB_NN_MAX_IO], result;
    for (int i = 0; i < nin; i++) {
        specs[i] = (gb_tensor_spec){.dtype = gb_tensor_dtype(in[i]), .rank = gb_rank(in[i])};
        memcpy(specs[i].shape, gb_shape(in[i]), (size_t)specs[i].rank * sizeof(int64_t));
    }
    if (merge_specs(m, nin, specs, &result) < 0) return -1;
    if (s->concat) {
        out[0] = gb_concat(in, nin, concat_axis(m, gb_rank(in[0])));
    } else {
        out[0] = in[0];
        for (int i = 1; i < nin; i++) out[0] = gb_add(out[0], in[i]);
    }
    return out[0] ? 1 : -1;
}

static bool merge_get_config(gb_module *m, gb_config *c) {
    const merge_state *s = gb_module_state(m);
    return !s->concat || gb_config_put_int(c, "axis", s->axis);
}

static gb_module *add_from_config(const gb_config *c) { return gb_add_layer_new(gb__config_name(c, "Add")); }

static gb_module *concatenate_from_config(const gb_config *c) {
    int64_t axis = -1;
    if (!gb_config_read_int(c, "Concatenate", "axis", -1, &axis)) return NULL;
    return gb_concatenate_new(axis, gb__config_name(c, "Concatenate"));
}

const gb_module_type gb__add_type = {
    .get_config = merge_get_config,
    .from_config = add_from_config,
    .class_name = "Add",
    .default_name = "add",
    .state_size = sizeof(merge_state),
    .call_n = merge_call,
    .output_specs = merge_specs,
};

const gb_module_type gb__concatenate_type = {
    .get_config = merge_get_config,
    .from_config = concatenate_from_config,
    .class_name = "Concatenate",
    .default_name = "concatenate",
    .state_size = sizeof(merge_state),
    .call_n = merge_call,
    .output_specs = merge_specs,
};

gb_module *gb_add_layer_new(const char *name) { return gb_module_new(&gb__add_type, name, 0); }

gb_module *gb_concatenate_new(int64_t axis, const char *name) {
    gb_module *m = gb_module_new(&gb__concatenate_type, name, 0);
    if (!m) return NULL;
    merge_state *s = gb_module_state(m);
    s->axis = axis;
    s->concat = true;
    return m;
}
