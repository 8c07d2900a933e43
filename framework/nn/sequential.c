/* nn/sequential.c — the Sequential model: layers called one after another.
 *
 * Its layers are its submodules (it owns them). Each layer builds on its
 * first call, inside the model's name scope, so weights are named
 * "sequential/dense_1/kernel"; gb_module_build() on a model runs it once on
 * zeros to build them all, as Keras does. Keras rules: layer names in a
 * model are unique; adding a layer to a built model builds it at once.
 */
#include "nn/internal.h"

static gb_tensor *sequential_call(gb_module *m, gb_tensor *x, bool training) {
    int n = gb_module_num_submodules(m);
    if (n == 0) {
        gb__nn_error(m, GB_ERR_STATE, "the model has no layers; add some with gb_sequential_add()");
        return NULL;
    }
    for (int i = 0; x && i < n; i++) x = gb_module_call(gb_module_submodule(m, i), x, training);
    return x;
}

static const gb_module_type sequential_type = {
    .class_name = "Sequential",
    .default_name = "sequential",
    .call = sequential_call,
};

gb_module *gb_sequential_new(const char *name) { return gb_module_new(&sequential_type, name, 0); }

bool gb_is_sequential(const gb_module *m) { return gb_module_get_type(m) == &sequential_type; }

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
