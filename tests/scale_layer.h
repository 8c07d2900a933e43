/* scale_layer.h — a custom layer type for the tests of configs and model
 * files: y = factor * x, with its factor in its config, registered (or
 * not) by the test as a user's custom layer would be.
 */
#ifndef GB_TEST_SCALE_LAYER_H
#define GB_TEST_SCALE_LAYER_H

#include "glassbox.h"

typedef struct scale_state {
    double factor;
} scale_state;

static inline gb_tensor *scale_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    return gb_mul_scalar(x, ((scale_state *)gb_module_state(m))->factor);
}

static inline bool scale_get_config(gb_module *m, gb_config *c) {
    return gb_config_put_number(c, "factor", ((scale_state *)gb_module_state(m))->factor) != NULL;
}

static gb_module *scale_from_config(const gb_config *c);
static const gb_module_type scale_type = {.class_name = "Scale", .default_name = "scale",
                                          .state_size = sizeof(scale_state), .call = scale_call,
                                          .get_config = scale_get_config,
                                          .from_config = scale_from_config};

static inline gb_module *scale_new(double factor, const char *name) {
    gb_module *m = gb_module_new(&scale_type, name, 0);
    if (m) ((scale_state *)gb_module_state(m))->factor = factor;
    return m;
}

static gb_module *scale_from_config(const gb_config *c) {
    double f = 1;
    if (!gb_config_read_number(c, "Scale", "factor", 1, &f)) return NULL;
    return scale_new(f, gb_config_read_string(c, "Scale", "name", ""));
}

#endif
