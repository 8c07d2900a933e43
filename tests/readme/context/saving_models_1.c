/* The context of README.md's model-file example (section "Saving
 * models"): an MLP compiled and trained 2 epochs (seed 42) on random data;
 * the README saves it, loads it and trains a third epoch. What its last
 * comment promises is checked: the same predictions as 3 epochs straight. */
#include <stdio.h>

#include "glassbox.h"

static gb_module *compiled_mlp(gb_optimizer *opt) {
    gb_nn_set_seed(7);
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(3, NULL));
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = opt,
                            .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    return m;
}

static gb_history *fit_epochs(gb_module *m, gb_tensor *x, gb_tensor *y, int epochs) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs, o.seed = 42, o.verbose = 0;
    return gb_model_fit(m, x, y, &o);
}

int main(void) {
    gb_scope_begin();
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(96, 5), -1, 1, 1);
    gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(96), 0, 3, 2), GB_I32);
    gb_optimizer *opt = gb_adam(1e-2), *opt3 = gb_adam(1e-2);
    gb_module *model = compiled_mlp(opt);
    gb_history_free(fit_epochs(model, x, y, 2));
    /* README_STATEMENTS */
    gb_module *straight = compiled_mlp(opt3);
    gb_history_free(fit_epochs(straight, x, y, 3));
    gb_tensor *diff = gb_reduce_max(gb_abs(gb_sub(gb_module_call(m, x, false),
                                                  gb_module_call(straight, x, false))),
                                    GB_ALL_AXES, false);
    if (!gb_ok() || gb_item(diff) != 0) {
        fprintf(stderr, "resumed against straight: %s %g\n", gb_ok() ? "max difference" : gb_error_string(),
                gb_ok() ? gb_item(diff) : 0.0);
        return 1;
    }
    printf("loaded, trained a third epoch: the predictions of 3 epochs straight\n");
    gb_module_free(m);
    gb_module_free(straight);
    gb_module_free(model);
    gb_optimizer_free(opt);
    gb_optimizer_free(opt3);
    gb_scope_end();
    return 0;
}
