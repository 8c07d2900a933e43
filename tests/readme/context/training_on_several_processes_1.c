/* The context of README.md's "in your own loop" lines (section "Training
 * on several processes"): a built model, a shuffled dataset, and one
 * step's tape and loss; run outside mpirun, it is a job of one, whose
 * averaged gradients are the tape's own. */
#include <stdio.h>

#include "glassbox.h"

int main(int argc, char **argv) {
    gb_scope_begin();
    gb_module *model = gb_sequential_new("m");
    gb_sequential_add(model, gb_dense_new(2, NULL));
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(16, 3), -1, 1, 1);
    gb_module_call(model, x, false);   /* builds the weights */
    gb_dataset *shuffled = gb_dataset_shuffle(gb_dataset_from_tensor_slices(1, &x), 16, 42), *ds;
    int n;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    gb_tensor *grads[2] = {NULL, NULL};
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_reduce_sum(gb_square(gb_module_call(model, x, true)), GB_ALL_AXES, false);
    gb_tape_end(tape);
    /* README_STATEMENTS */
    if (!gb_ok() || n != 2 || !grads[0] || !grads[1] || gb_dist_size() != 1) {
        fprintf(stderr, "%s\n", gb_ok() ? "no gradients" : gb_error_string());
        return 1;
    }
    printf("a job of %d: gradients of %d variables\n", gb_dist_size(), n);
    gb_dataset_free(ds);
    gb_module_free(model);
    gb_dist_finalize();
    gb_scope_end();
    return 0;
}
