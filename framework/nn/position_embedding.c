/* nn/position_embedding.c — PositionEmbedding, as Keras-NLP's layer: a
 * trainable table of one vector per position, for models (transformers)
 * whose attention is blind to order.
 *
 * Weight "embeddings" [sequence_length, dim], built from the input's last
 * axis (Glorot-uniform by default, as Keras-NLP). A call on x [..., T,
 * dim] with T <= sequence_length returns the table's first T rows
 * broadcast to x's shape; the model adds it to the token embeddings (an
 * Add layer), as Keras-NLP leaves that to the caller too. The rows are a
 * Slice of the variable, so the gradient of each position's row is the
 * sum over the batch of the output gradient at that position.
 */
#include <stdio.h>

#include "nn/internal.h"

typedef struct position_embedding_state {
    int64_t sequence_length, dim;   /* dim 0 until built */
    gb_initializer init;
    gb_variable *table;
} position_embedding_state;

/* x must be [..., T, dim] with 1 <= T <= sequence_length (T may be -1 while tracing). */
static bool time_axis_fits(gb_module *m, int rank, const int64_t *in) {
    const position_embedding_state *s = gb_module_state(m);
    char b[128];
    if (rank < 2 || in[rank - 1] <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "expected [..., time, features] with known features, got %s",
                     gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    if (s->dim && in[rank - 1] != s->dim) {
        gb__nn_error(m, GB_ERR_SHAPE, "input %s has %lld features, built for %lld",
                     gb__shape_fmt(rank, in, b, sizeof b), (long long)in[rank - 1], (long long)s->dim);
        return false;
    }
    if (in[rank - 2] > s->sequence_length || in[rank - 2] == 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "input %s has %lld positions; sequence_length is %lld",
                     gb__shape_fmt(rank, in, b, sizeof b), (long long)in[rank - 2],
                     (long long)s->sequence_length);
        return false;
    }
    return true;
}

static bool position_embedding_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                            int64_t *out) {
    if (!time_axis_fits(m, rank, in)) return false;
    memcpy(out, in, (size_t)rank * sizeof *out);
    *out_rank = rank;
    return true;
}

static bool position_embedding_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    position_embedding_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt) || !time_axis_fits(m, rank, shape)) return false;
    s->dim = shape[rank - 1];
    s->table = gb_module_add_weight(m, "embeddings", dt, 2, (int64_t[]){s->sequence_length, s->dim},
                                    s->init, true);
    return s->table != NULL;
}

static gb_tensor *position_embedding_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const position_embedding_state *s = gb_module_state(m);
    int rank = gb_rank(x);
    if (!time_axis_fits(m, rank, gb_shape(x))) return NULL;
    int64_t t = gb_dim(x, -2);
    if (t < 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "needs a known number of positions (the time axis), got -1");
        return NULL;
    }
    gb_tensor *rows = gb_slice(gb_variable_value(s->table), (int64_t[]){0, 0}, 2,
                               (int64_t[]){t, s->dim}, 2);
    /* A batch dim unknown while tracing comes from x when the graph runs. */
    return gb__broadcast_like(rows, x);
}

static bool position_embedding_get_config(gb_module *m, gb_config *c) {
    const position_embedding_state *s = gb_module_state(m);
    return gb_config_put_int(c, "sequence_length", s->sequence_length) &&
           gb__config_put_init(c, "initializer", s->init) &&
           gb_config_put_int(c, "seed", (int64_t)gb_module_seed(m));
}

static gb_module *position_embedding_from_config(const gb_config *c) {
    static const char who[] = "PositionEmbedding";
    int64_t length = 0, seed = 0;
    gb_position_embedding_options o = {.name = gb__config_name(c, who)};
    if (!gb_config_read_int(c, who, "sequence_length", 0, &length) ||
        !gb__config_read_init(c, who, "initializer", &o.initializer) ||
        !gb_config_read_int(c, who, "seed", 0, &seed))
        return NULL;
    o.seed = (uint64_t)seed;
    return gb_position_embedding_new(length, &o);
}

const gb_module_type gb__position_embedding_type = {
    .class_name = "PositionEmbedding",
    .default_name = "position_embedding",
    .state_size = sizeof(position_embedding_state),
    .build = position_embedding_build,
    .output_shape = position_embedding_output_shape,
    .call = position_embedding_call,
    .get_config = position_embedding_get_config,
    .from_config = position_embedding_from_config,
};

gb_module *gb_position_embedding_new(int64_t sequence_length, const gb_position_embedding_options *opts) {
    static const gb_position_embedding_options defaults;
    if (!opts) opts = &defaults;
    if (sequence_length <= 0) {
        gb__error(GB_ERR_VALUE, "PositionEmbedding",
                  "PositionEmbedding: sequence_length must be positive, got %lld",
                  (long long)sequence_length);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__position_embedding_type, opts->name, opts->seed);
    if (!m) return NULL;
    position_embedding_state *s = gb_module_state(m);
    s->sequence_length = sequence_length;
    s->init = gb__nn_init_or(opts->initializer, GB_INIT_GLOROT_UNIFORM);
    return m;
}
