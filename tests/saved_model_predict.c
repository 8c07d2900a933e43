/* saved_model_predict.c — a program with none of the model's code: it
 * links the engine only, loads a SavedModel directory, runs its
 * serving_default signature on IDX images, and checks that the logits are
 * bit for bit the ones the program that trained and saved the model
 * wrote (fashion_mnist_fit --save-predictions), and that the predicted
 * classes are their argmax.
 *
 *   saved_model_predict DIR IMAGES.idx[.gz] EXPECTED.npy
 *
 * Exit 0 when every prediction matches; 1 with the first difference.
 */
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

static int fail(const char *what) {
    fprintf(stderr, "saved_model_predict: %s%s%s\n", what, gb_ok() ? "" : ": ", gb_error_string());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR IMAGES EXPECTED.npy\n", argv[0]);
        return 2;
    }
    gb_saved_model *m = gb_saved_model_load(argv[1]);
    gb_tensor *images = gb_idx_read(argv[2]), *expected = gb_npy_read(argv[3]);
    if (!m || !images || !expected) return fail("loading");
    gb_tensor *out[2];
    if (gb_saved_model_call(m, "serving_default", &images, 1, out) != 2) return fail("running serving_default");
    if (gb_size(out[0]) != gb_size(expected) || gb_tensor_dtype(out[0]) != gb_tensor_dtype(expected))
        return fail("the logits are not the shape of the expected ones");
    const float *got = gb_data(out[0]), *want = gb_data(expected);
    for (int64_t i = 0; i < gb_size(expected); i++)
        if (memcmp(&got[i], &want[i], sizeof *got) != 0) {
            fprintf(stderr, "saved_model_predict: logit %lld is %.9g, the saving program had %.9g\n",
                    (long long)i, got[i], want[i]);
            return 1;
        }
    gb_tensor *argmax = gb_argmax(expected, -1);
    if (!argmax || memcmp(gb_data(argmax), gb_data(out[1]), (size_t)gb_size(argmax) * sizeof(int64_t)) != 0)
        return fail("the classes are not the logits' argmax");
    printf("%lld predictions identical to the saving program's (fingerprint %s)\n",
           (long long)gb_dim(expected, 0), gb_saved_model_fingerprint(m));
    gb_saved_model_free(m);
    return 0;
}
