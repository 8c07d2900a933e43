/* nn/activation.c — activation functions and the Activation / ReLU layers.
 *
 * One table maps each gb_activation to its Keras name and the op(s) that
 * compute it; Dense and Conv2D apply it after their bias add, and the
 * Activation layer is nothing but the table entry as a module.
 */
#include "nn/internal.h"

static gb_tensor *act_linear(gb_tensor *x) { return x; }
static gb_tensor *act_softmax(gb_tensor *x) { return gb_softmax(x, -1); }
static gb_tensor *act_gelu(gb_tensor *x) { return gb_gelu(x, false); }
static gb_tensor *act_swish(gb_tensor *x) { return gb_mul(x, gb_sigmoid(x)); }

typedef struct activation_def {
    const char *name;
    gb_tensor *(*fn)(gb_tensor *x);
} activation_def;

static const activation_def activations[GB_ACT_COUNT] = {
    [GB_ACT_LINEAR] = {"linear", act_linear},
    [GB_ACT_RELU] = {"relu", gb_relu},
    [GB_ACT_SIGMOID] = {"sigmoid", gb_sigmoid},
    [GB_ACT_TANH] = {"tanh", gb_tanh},
    [GB_ACT_SOFTMAX] = {"softmax", act_softmax},
    [GB_ACT_ELU] = {"elu", gb_elu},
    [GB_ACT_GELU] = {"gelu", act_gelu},
    [GB_ACT_SOFTPLUS] = {"softplus", gb_softplus},
    [GB_ACT_SWISH] = {"swish", act_swish},
};

static bool valid_activation(gb_activation act) { return (unsigned)act < GB_ACT_COUNT; }

const char *gb_activation_name(gb_activation act) {
    return valid_activation(act) ? activations[act].name : "?";
}

bool gb_activation_from_name(const char *name, gb_activation *out) {
    for (int i = 0; name && i < GB_ACT_COUNT; i++) {
        if (strcmp(activations[i].name, name) == 0) {
            *out = (gb_activation)i;
            return true;
        }
    }
    gb__error(GB_ERR_VALUE, NULL,
              "unknown activation '%s' (known: linear, relu, sigmoid, tanh, softmax, elu, gelu, "
              "softplus, swish)",
              name ? name : "(null)");
    return false;
}

gb_tensor *gb_activation_apply(gb_activation act, gb_tensor *x) {
    if (!valid_activation(act)) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "activation %d is out of range", (int)act);
        return NULL;
    }
    return x ? activations[act].fn(x) : NULL;
}

/* ---- the layers --------------------------------------------------------------------- */

typedef struct activation_state {
    gb_activation act;
} activation_state;

static gb_tensor *activation_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    const activation_state *s = gb_module_state(m);
    return gb_activation_apply(s->act, x);
}

static bool activation_get_config(gb_module *m, gb_config *c) {
    const activation_state *s = gb_module_state(m);
    return gb_config_put_string(c, "activation", gb_activation_name(s->act)) != NULL;
}

static gb_module *activation_from_config(const gb_config *c) {
    gb_activation act = GB_ACT_LINEAR;
    if (!gb__config_read_activation(c, "Activation", &act)) return NULL;
    return gb_activation_new(act, gb__config_name(c, "Activation"));
}

static gb_module *relu_from_config(const gb_config *c) {
    return gb_relu_new(gb__config_name(c, "ReLU"));
}

const gb_module_type gb__activation_type = {
    .class_name = "Activation",
    .default_name = "activation",
    .state_size = sizeof(activation_state),
    .call = activation_call,
    .get_config = activation_get_config,
    .from_config = activation_from_config,
};

const gb_module_type gb__relu_type = {
    .class_name = "ReLU",
    .default_name = "re_lu",
    .state_size = sizeof(activation_state),
    .call = activation_call,
    .from_config = relu_from_config,
};

static gb_module *new_activation_layer(const gb_module_type *type, gb_activation act,
                                       const char *name) {
    if (!valid_activation(act)) {
        gb__error(GB_ERR_VALUE, type->class_name, "%s: activation %d is out of range",
                  type->class_name, (int)act);
        return NULL;
    }
    gb_module *m = gb_module_new(type, name, 0);
    if (m) ((activation_state *)gb_module_state(m))->act = act;
    return m;
}

gb_module *gb_activation_new(gb_activation act, const char *name) {
    return new_activation_layer(&gb__activation_type, act, name);
}

gb_module *gb_relu_new(const char *name) {
    return new_activation_layer(&gb__relu_type, GB_ACT_RELU, name);
}
