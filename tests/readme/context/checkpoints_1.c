/* The context of README.md's CheckpointManager example (section
 * "Checkpoints"): a built model and its optimizer, 3000 steps of no
 * training, so the loop's saves at 1000, 2000 and 3000 run; then what the
 * README says of the result: the manager keeps them, the latest last. */
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

int main(void) {
    gb_scope_begin();
    gb_module *model = gb_sequential_new("m");
    gb_sequential_add(model, gb_dense_new(4, NULL));
    gb_module_call(model, gb_zeros(GB_F32, GB_SHAPE(1, 3)), false);   /* builds the weights */
    gb_optimizer *opt = gb_adam(1e-3);
    int64_t steps = 3000;
    /* README_STATEMENTS */
    const char *latest = gb_checkpoint_manager_latest(mgr);
    if (!latest || !strstr(latest, "ckpt-3000")) {
        fprintf(stderr, "latest checkpoint: %s\n", latest ? latest : "(none)");
        return 1;
    }
    printf("latest %s\n", latest);
    gb_checkpoint_manager_free(mgr);
    gb_checkpoint_free(ck);
    gb_optimizer_free(opt);
    gb_module_free(model);
    gb_scope_end();
    return gb_ok() ? 0 : 1;
}
