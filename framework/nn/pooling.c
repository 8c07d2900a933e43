/* nn/pooling.c — MaxPooling2D and AveragePooling2D layers (NHWC).
 *
 * Both are one pooling op with a window, strides (default: the window)
 * and padding; they share everything but the op and their names, so one
 * state, one shape check and two small type descriptors.
 */
#include <stdio.h>

#include "nn/internal.h"

typedef gb_tensor *(*pool_op_fn)(gb_tensor *x, const int64_t *ksize, int nksize,
                                 const int64_t *strides, int nstrides, gb_padding padding);

typedef struct pool_state {
    pool_op_fn op;
    int64_t ksize[2], strides[2];
    gb_padding padding;
} pool_state;

static bool pool_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                              int64_t *out) {
    const pool_state *s = gb_module_state(m);
    char buf[128];
    if (rank != 4) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "expected a rank-4 NHWC input [batch, height, width, channels], got shape "
                     "%s (rank %d)",
                     gb__shape_fmt(rank, in, buf, sizeof buf), rank);
        return false;
    }
    out[0] = in[0];
    out[3] = in[3];
    for (int i = 0; i < 2; i++) {
        out[1 + i] = gb__nn_window_out(in[1 + i], s->ksize[i], s->strides[i], 1, s->padding);
        if (out[1 + i] == 0) {
            gb__nn_error(m, GB_ERR_SHAPE,
                         "input %s is smaller than the %lldx%lld pool window with valid padding",
                         gb__shape_fmt(rank, in, buf, sizeof buf), (long long)s->ksize[0],
                         (long long)s->ksize[1]);
            return false;
        }
    }
    *out_rank = 4;
    return true;
}

static gb_tensor *pool_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const pool_state *s = gb_module_state(m);
    return s->op(x, s->ksize, 2, s->strides, 2, s->padding);
}

static bool pool_get_config(gb_module *m, gb_config *c) {
    const pool_state *s = gb_module_state(m);
    return gb_config_put_ints(c, "pool_size", 2, s->ksize) &&
           gb_config_put_ints(c, "strides", 2, s->strides) && gb__config_put_padding(c, s->padding);
}

static gb_module *max_pool_from_config(const gb_config *c);
static gb_module *avg_pool_from_config(const gb_config *c);

const gb_module_type gb__max_pool_type = {
    .class_name = "MaxPooling2D",
    .default_name = "max_pooling2d",
    .state_size = sizeof(pool_state),
    .output_shape = pool_output_shape,
    .call = pool_call,
    .get_config = pool_get_config,
    .from_config = max_pool_from_config,
};

const gb_module_type gb__avg_pool_type = {
    .class_name = "AveragePooling2D",
    .default_name = "average_pooling2d",
    .state_size = sizeof(pool_state),
    .output_shape = pool_output_shape,
    .call = pool_call,
    .get_config = pool_get_config,
    .from_config = avg_pool_from_config,
};

static gb_module *new_pool(const gb_module_type *type, pool_op_fn op,
                           const gb_pool2d_options *opts) {
    static const gb_pool2d_options defaults;
    if (!opts) opts = &defaults;
    int64_t ksize[2], strides[2];
    bool ok = gb__nn_pair(opts->pool_size, 2, ksize) && gb__nn_pair(opts->strides, 0, strides);
    if (ok && !strides[0]) strides[0] = ksize[0];
    if (ok && !strides[1]) strides[1] = ksize[1];
    if (!ok || (opts->padding != GB_PADDING_VALID && opts->padding != GB_PADDING_SAME)) {
        gb__error(GB_ERR_VALUE, type->class_name,
                  "%s: pool size and strides must be positive and padding valid or same",
                  type->class_name);
        return NULL;
    }
    gb_module *m = gb_module_new(type, opts->name, 0);
    if (!m) return NULL;
    pool_state *s = gb_module_state(m);
    s->op = op;
    memcpy(s->ksize, ksize, sizeof ksize);
    memcpy(s->strides, strides, sizeof strides);
    s->padding = opts->padding;
    return m;
}

gb_module *gb_max_pool2d_new(const gb_pool2d_options *opts) {
    return new_pool(&gb__max_pool_type, gb_max_pool2d, opts);
}

gb_module *gb_avg_pool2d_new(const gb_pool2d_options *opts) {
    return new_pool(&gb__avg_pool_type, gb_avg_pool2d, opts);
}

/* Both kinds read the same config. */
static gb_module *pool_from(const gb_config *c, const gb_module_type *type) {
    const char *who = type->class_name;
    int64_t pool[2], strides[2];
    gb_padding padding = GB_PADDING_VALID;
    if (!gb__config_read_pair(c, who, "pool_size", 2, pool) ||
        !gb__config_read_pair(c, who, "strides", 0, strides) ||
        !gb__config_read_padding(c, who, &padding))
        return NULL;
    gb_pool2d_options o = {.name = gb__config_name(c, who), .pool_size = {pool[0], pool[1]},
                           .strides = {strides[0], strides[1]}, .padding = padding};
    return type == &gb__avg_pool_type ? gb_avg_pool2d_new(&o) : gb_max_pool2d_new(&o);
}

static gb_module *max_pool_from_config(const gb_config *c) { return pool_from(c, &gb__max_pool_type); }
static gb_module *avg_pool_from_config(const gb_config *c) { return pool_from(c, &gb__avg_pool_type); }
