/* nn/embedding.c — Embedding (keras.layers.Embedding): integer indices to
 * rows of a trainable [input_dim, output_dim] table.
 *
 * The call is one GatherV2: an index outside [0, input_dim) is the
 * kernel's clear error (index, position, valid range), and the gradient
 * is ScatterAdd into the table's rows, repeated indices accumulating.
 * The table is float32 whatever the indices' integer type. With
 * mask_zero (Keras), index 0 is padding (TextVectorization's int mode pads
 * with it): the output's mask is ids != 0, which the layers after it in a
 * Sequential model receive; gb_embedding_compute_mask gives the same mask
 * explicitly, for a program that hands it to a recurrent layer itself.
 */
#include <stdio.h>

#include "nn/internal.h"

typedef struct embedding_state {
    int64_t input_dim, output_dim;
    gb_initializer init;
    gb_variable *table;
    bool mask_zero;
} embedding_state;

static bool embedding_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                                   int64_t *out) {
    const embedding_state *s = gb_module_state(m);
    if (rank + 1 > GB_MAX_RANK) {
        gb__nn_error(m, GB_ERR_SHAPE, "input rank %d leaves no room for the embedding axis", rank);
        return false;
    }
    memcpy(out, in, (size_t)rank * sizeof *out);
    out[rank] = s->output_dim;
    *out_rank = rank + 1;
    return true;
}

static bool embedding_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    (void)rank, (void)shape;
    embedding_state *s = gb_module_state(m);
    if (dt != GB_I32 && dt != GB_I64) {
        gb__nn_error(m, GB_ERR_DTYPE, "expected int32 or int64 indices, got %s", gb_dtype_name(dt));
        return false;
    }
    s->table = gb_module_add_weight(m, "embeddings", GB_F32, 2,
                                    (int64_t[]){s->input_dim, s->output_dim}, s->init, true);
    return s->table != NULL;
}

static gb_tensor *embedding_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const embedding_state *s = gb_module_state(m);
    return gb_gather(gb_variable_value(s->table), x, 0);
}

static gb_tensor *embedding_mask(gb_module *m, gb_tensor *x, gb_tensor *mask) {
    (void)mask;
    const embedding_state *s = gb_module_state(m);
    return s->mask_zero ? gb_not_equal(x, gb_scalar(gb_tensor_dtype(x), 0)) : NULL;
}

static bool embedding_get_config(gb_module *m, gb_config *c) {
    const embedding_state *s = gb_module_state(m);
    return gb_config_put_int(c, "input_dim", s->input_dim) &&
           gb_config_put_int(c, "output_dim", s->output_dim) &&
           gb__config_put_init(c, "embeddings_initializer", s->init) &&
           gb_config_put_int(c, "seed", (int64_t)gb_module_seed(m)) &&
           gb_config_put_bool(c, "mask_zero", s->mask_zero);
}

static gb_module *embedding_from_config(const gb_config *c) {
    static const char *const who = "Embedding";
    int64_t in = 0, out = 0, seed = 0;
    bool mask_zero = false;
    gb_initializer init;
    if (!gb_config_read_int(c, who, "input_dim", 0, &in) ||
        !gb_config_read_int(c, who, "output_dim", 0, &out) ||
        !gb__config_read_init(c, who, "embeddings_initializer", &init) ||
        !gb_config_read_int(c, who, "seed", 0, &seed) ||
        !gb_config_read_bool(c, who, "mask_zero", false, &mask_zero))
        return NULL;
    return gb_embedding_new(in, out, &(gb_embedding_options){.name = gb__config_name(c, who),
                                                             .embeddings_initializer = init,
                                                             .seed = (uint64_t)seed,
                                                             .mask_zero = mask_zero});
}

const gb_module_type gb__embedding_type = {
    .class_name = "Embedding",
    .default_name = "embedding",
    .state_size = sizeof(embedding_state),
    .build = embedding_build,
    .output_shape = embedding_output_shape,
    .call = embedding_call,
    .get_config = embedding_get_config,
    .from_config = embedding_from_config,
    .compute_mask = embedding_mask,
};

gb_module *gb_embedding_new(int64_t input_dim, int64_t output_dim, const gb_embedding_options *opts) {
    static const gb_embedding_options defaults;
    if (!opts) opts = &defaults;
    if (input_dim <= 0 || output_dim <= 0) {
        gb__error(GB_ERR_VALUE, "Embedding",
                  "Embedding: input_dim and output_dim must be positive, got %lld and %lld",
                  (long long)input_dim, (long long)output_dim);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__embedding_type, opts->name, opts->seed);
    if (!m) return NULL;
    embedding_state *s = gb_module_state(m);
    s->input_dim = input_dim;
    s->output_dim = output_dim;
    s->init = opts->embeddings_initializer;
    s->mask_zero = opts->mask_zero;
    if (s->init.kind == GB_INIT_DEFAULT)   /* Keras: uniform in [-0.05, 0.05) */
        s->init = (gb_initializer){.kind = GB_INIT_RANDOM_UNIFORM, .a = -0.05, .b = 0.05,
                                   .seed = s->init.seed};
    return m;
}

gb_tensor *gb_embedding_compute_mask(gb_module *layer, gb_tensor *ids) {
    if (!layer || !ids) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, "Embedding", "gb_embedding_compute_mask: %s is NULL",
                      layer ? "the input" : "the layer");
        return NULL;
    }
    if (gb_module_get_type(layer) != &gb__embedding_type) {
        gb__error(GB_ERR_VALUE, "Embedding", "gb_embedding_compute_mask: expected an Embedding layer, got %s",
                  gb_module_class_name(layer));
        return NULL;
    }
    const embedding_state *s = gb_module_state(layer);
    if (!s->mask_zero) {
        gb__nn_error(layer, GB_ERR_VALUE, "has no mask: create it with mask_zero");
        return NULL;
    }
    return gb_not_equal(ids, gb_scalar(gb_tensor_dtype(ids), 0));
}
