/* The context of README.md's gb_function example (section "Functions"):
 * a stand-in for the examples' fmnist_step_fn (a linear model's loss,
 * and its gradient when the static with_grads is true), a batch of 8, and
 * the checks its comments promise: any batch size runs the one trace. */
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

typedef struct run {
    gb_variable *w;
} run;

static int fmnist_step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                          gb_tensor **out) {
    run *r = user;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *logits = gb_matmul(in[0], gb_variable_value(r->w));
    out[0] = gb_loss_sparse_categorical_crossentropy(in[1], logits, true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    if (nst == 1 && st[0].as.b) {
        gb_tape_gradient_vars(tape, out[0], &r->w, 1, &out[1]);
        return 2;
    }
    return 1;
}

int main(void) {
    gb_scope_begin();
    run state = {gb_variable_new("w", gb_zeros(GB_F32, GB_SHAPE(784, 10)), true)}, *r = &state;
    gb_tensor *out[2];
    for (int64_t batch = 8; batch <= 9; batch++) {
        gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(batch, 784), 0, 1, 1);
        gb_tensor *y = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(batch), 0, 10, 2), GB_I32);
        /* README_STATEMENTS */
        /* Zero weights: every class alike, the loss is log(10). */
        if (!gb_ok() || gb_item(out[0]) < 2.3025 || gb_item(out[0]) > 2.3026 ||
            gb_function_tracing_count(step) != 1) {
            fprintf(stderr, "batch %lld: %s\n", (long long)batch, gb_ok() ? "wrong loss or retraced" : gb_error_string());
            return 1;
        }
        gb_function_free(step);
    }
    printf("loss log(10), one trace for each function\n");
    gb_variable_free(state.w);
    gb_scope_end();
    return 0;
}
