/* fuzz_io_saved_model.c — the SavedModel loader (io/saved_model_load.c,
 * io/saved_model_graph.c) on an arbitrary saved_model.json, and the
 * graphs it accepts, run.
 *
 * The variables and constants files are a real model's, saved once at
 * start-up (a Dense-tanh-Dense MLP with a softmax signature scaled by a
 * constant, and a signature with a cond and a while loop, as the seeds
 * were written from); the input stands for the
 * JSON beside them, past its fingerprint, so the fuzzer meets the graph
 * parser and checker rather than the hash.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused input gets an error naming saved_model.json; an accepted one
 * runs every signature on inputs of its specs (-1 dims as 2, inputs of
 * at most 4096 elements), each call giving its outputs or an error —
 * hostile node attributes must reach the ops' own checks, never a kernel.
 */
#include <unistd.h>

#include "../cf_test_fns.h"
#include "fuzz_engine.h"
#include "io/internal.h"

static char dir[64];
static gb__ckpt_file vars;
static unsigned char *const_bytes;
static size_t const_size;

static int mlp_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_module_call(user, in[0], false);
    return 1;
}

static int probabilities_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                            int nst, gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_tensor *scale = gb_tensor_from(GB_F32, (float[]){2, 3, 4}, GB_SHAPE(3));
    out[0] = gb_mul(gb_softmax(gb_module_call(user, in[0], false), -1), scale);
    out[1] = gb_argmax(out[0], -1);
    return 2;
}

/* cond(pred, x^3, sin x) + x^n, the power by a loop of at most 16 trips. */
static int branchy_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                      gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *c;
    if (gb_cond(in[2], cf_cube, cf_sine, in, 1, NULL, &c) != 1) return -1;
    out[0] = gb_add(c, cf_power(in[0], in[1], 16));
    return out[0] ? 1 : -1;
}

/* Saves the model whose variables and constants every input is given. */
static void save_model(void) {
    snprintf(dir, sizeof dir, "%s", getenv("GB_FUZZ_SEED_DIR") ? getenv("GB_FUZZ_SEED_DIR") : "/tmp/gb-fuzz-sm-XXXXXX");
    FUZZ_CHECK(getenv("GB_FUZZ_SEED_DIR") || mkdtemp(dir) != NULL, "no temporary directory");
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 2}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 6));
    gb_tensor_spec spec[] = {GB_SPEC("features", GB_F32, -1, 6)};
    gb_function_options o = {.user = m, .input_signature = spec, .ninput_signature = 1};
    gb_function *a = gb_function_new("serving_default", mlp_fn, &o);
    gb_function *b = gb_function_new("probabilities", probabilities_fn, &o);
    gb_tensor_spec cf_spec[] = {GB_SPEC("x", GB_F64, -1), GB_SPEC_SCALAR("n", GB_I64),
                                GB_SPEC_SCALAR("pred", GB_BOOL)};
    gb_function *c = gb_function_new("branchy", branchy_fn, NULL);
    gb_saved_model_signature sigs[] = {{.name = "serving_default", .function = a, .inputs = spec, .ninputs = 1},
                                       {.name = "probabilities", .function = b, .inputs = spec, .ninputs = 1},
                                       {.name = "branchy", .function = c, .inputs = cf_spec, .ninputs = 3}};
    FUZZ_CHECK(gb_saved_model_save(dir, sigs, 3), "saving the base model: %s", gb_error_string());
    if (getenv("GB_FUZZ_SEED_DIR")) {   /* writing the seeds: keep the directory */
        gb_function_free(a), gb_function_free(b), gb_function_free(c), gb_module_free(m);
        return;
    }
    gb_function_free(a), gb_function_free(b), gb_function_free(c), gb_module_free(m);
    char path[128];
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_VARIABLES, dir);
    FUZZ_CHECK(gb__ckpt_read(path, &vars), "%s", gb_error_string());
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_CONSTANTS, dir);
    const_bytes = gb__file_read(path, "constants", &const_size);
    FUZZ_CHECK(const_bytes != NULL, "%s", gb_error_string());
    /* Everything needed is in memory now; the directory lives on only as
     * the name in messages. */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    FUZZ_CHECK(system(cmd) == 0, "cannot remove %s", dir);
}

/* GB_FUZZ_SEED_DIR=D: save the base model into D (to write seeds from
 * its saved_model.json) and stop. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    save_model();
    if (getenv("GB_FUZZ_SEED_DIR")) exit(0);
    return 0;
}

/* An input for spec: -1 dims as 2; NULL when it would be large. */
static gb_tensor *input_for(const gb_tensor_spec *s) {
    int64_t shape[GB_MAX_RANK], n = 1;
    for (int d = 0; d < s->rank; d++) {
        shape[d] = s->shape[d] < 0 ? 2 : s->shape[d];
        if (shape[d] > 4096 || (n *= shape[d]) > 4096) return NULL;
    }
    return gb_ones(s->dtype, s->rank, shape);
}

static void run_signatures(gb_saved_model *m) {
    for (int i = 0; i < gb_saved_model_signature_count(m); i++) {
        const char *name = gb_saved_model_signature_name(m, i);
        int nin = 0, nout = 0;
        const gb_tensor_spec *specs = gb_saved_model_inputs(m, name, &nin);
        gb_saved_model_outputs(m, name, &nout);
        gb_tensor *in[GB_FUNCTION_MAX_INPUTS], *out[GB_FUNCTION_MAX_OUTPUTS];
        bool small = true;
        for (int k = 0; k < nin && small; k++) small = (in[k] = input_for(&specs[k])) != NULL;
        if (!small) continue;
        int n = gb_saved_model_call(m, name, in, nin, out);
        FUZZ_CHECK(n == nout || (n < 0 && !gb_ok()), "signature '%s' gave %d outputs of %d: %s", name, n,
                   nout, gb_error_string());
        gb_clear_error();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    unsigned char *copy = malloc(const_size);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, const_bytes, const_size);
    gb__ckpt_file consts;
    FUZZ_CHECK(gb__ckpt_parse("constants.ckpt", copy, const_size, &consts), "%s", gb_error_string());
    gb_saved_model *m = gb__saved_model_assemble(dir, (const char *)data, size, &vars, &consts);
    if (!m) {
        const gb_error *e = gb_last_error();
        FUZZ_CHECK(e != NULL, "refused without an error");
        FUZZ_CHECK(strstr(e->message, "saved_model.json") != NULL, "the message does not name the file: %s",
                   e->message);
    } else {
        run_signatures(m);
        gb_saved_model_free(m);
    }
    fuzz_end();
    return 0;
}
