/* nn/sequential.c — the Sequential model: layers called one after another.
 *
 * Its layers are its submodules (it owns them). Each layer builds on its
 * first call, inside the model's name scope, so weights are named
 * "sequential/dense_1/kernel"; gb_module_build() on a model runs it once on
 * zeros to build them all, as Keras does. Keras rules: layer names in a
 * model are unique; adding a layer to a built model builds it at once.
 * A layer's output mask (Embedding's mask_zero) goes to the next layer,
 * as Keras passes it (to a recurrent layer too: its call_n takes the mask
 * after x); a layer that makes none, or takes several inputs, ends it.
 */
#include "nn/internal.h"

static gb_tensor *sequential_call(gb_module *m, gb_tensor *x, bool training) {
    int n = gb_module_num_submodules(m);
    if (n == 0) {
        gb__nn_error(m, GB_ERR_STATE, "the model has no layers; add some with gb_sequential_add()");
        return NULL;
    }
    gb_tensor *mask = NULL;
    for (int i = 0; x && i < n; i++) {
        gb_module *layer = gb_module_submodule(m, i);
        const gb_module_type *t = gb_module_get_type(layer);
        if (t->call || t->call_n_takes_mask) {
            x = gb_module_call_masked(layer, x, mask, training, &mask);
        } else {
            x = gb_module_call(layer, x, training);
            mask = NULL;
        }
    }
    return x;
}

/* Its layers in order, and the input it was built for (so a model made
 * from the config builds its weights at once, ready for loading). */
static bool sequential_get_config(gb_module *m, gb_config *c) {
    gb_config *layers = gb_config_put_list(c, "layers");
    for (int i = 0; layers && i < gb_module_num_submodules(m); i++) {
        gb_config *item = gb_config_put_dict(layers, NULL);
        if (!item || !gb__module_config_into(gb_module_submodule(m, i), item)) return false;
    }
    int64_t dims[GB_MAX_RANK];
    int rank = gb_module_input_shape(m, dims);
    if (!layers || rank < 0) return layers != NULL;
    return gb_config_put_ints(c, "build_input_shape", rank, dims) &&
           gb_config_put_string(c, "build_dtype", gb_dtype_name(gb_module_dtype(m)));
}

static gb_module *sequential_from_config(const gb_config *c) {
    const gb_config *layers = gb_config_get(c, "layers");
    if (gb_config_kind_of(layers) != GB_CONFIG_LIST) {
        gb__error(GB_ERR_VALUE, NULL, "Sequential config: 'layers' is missing or not a list");
        return NULL;
    }
    gb_module *m = gb_sequential_new(gb__config_name(c, "Sequential"));
    for (int i = 0; m && i < gb_config_len(layers); i++)
        if (!gb_sequential_add(m, gb_module_from_config(gb_config_at(layers, i)))) break;
    int64_t dims[GB_MAX_RANK];
    int rank = gb_config_read_ints(c, "Sequential", "build_input_shape", GB_MAX_RANK, dims);
    gb_dtype dt = GB_F32;
    if (m && gb_ok() && gb_config_get(c, "build_input_shape") &&
        gb__config_read_dtype(c, "Sequential", "build_dtype", &dt) && rank >= 0)
        gb_module_build(m, dt, rank, dims);
    if (gb_ok()) return m;
    gb_module_free(m);
    return NULL;
}

const gb_module_type gb__sequential_type = {
    .class_name = "Sequential",
    .default_name = "sequential",
    .call = sequential_call,
    .get_config = sequential_get_config,
    .from_config = sequential_from_config,
};

gb_module *gb_sequential_new(const char *name) { return gb_module_new(&gb__sequential_type, name, 0); }

bool gb_is_sequential(const gb_module *m) { return gb_module_get_type(m) == &gb__sequential_type; }

bool gb_sequential_add(gb_module *model, gb_module *layer) {
    if (model && !gb_is_sequential(model)) {
        gb__nn_error(model, GB_ERR_VALUE, "gb_sequential_add: not a Sequential model");
        gb_module_free(layer);
        return false;
    }
    for (int i = 0; model && layer && i < gb_module_num_submodules(model); i++) {
        if (strcmp(gb_module_name(gb_module_submodule(model, i)), gb_module_name(layer)) == 0) {
            gb__nn_error(model, GB_ERR_VALUE,
                         "all layers added to a Sequential model should have unique names; "
                         "'%s' is already in it",
                         gb_module_name(layer));
            gb_module_free(layer);
            return false;
        }
    }
    return gb_module_add_submodule(model, layer) && gb__module_rebuild(model);
}

int gb_sequential_num_layers(const gb_module *model) { return gb_module_num_submodules(model); }

gb_module *gb_sequential_layer(const gb_module *model, int i) {
    return gb_module_submodule(model, i);
}
