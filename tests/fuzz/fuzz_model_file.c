/* fuzz_model_file.c — the model-file loader (train/model_file.c) on
 * arbitrary bytes.
 *
 * Two shapes of input:
 *   - starting with the container's magic ("GBCKPT\r\n"): the whole
 *     input as a model file (gb__model_parse), its header and index CRCs
 *     rewritten for even lengths (ckpt_crcs.h);
 *   - otherwise "<config.json text>\0<container>": the text (up to the
 *     first NUL, or all of it) as a model file's config and the rest as
 *     the container it came in, with the weights (gb__model_from_parts).
 *     The fuzzer then edits the JSON freely (lengths change, keys appear)
 *     without the container's offsets and CRCs refusing it at the door;
 *     a container part that does not parse stands for a file without
 *     tensors.
 * A config with a large number (a model of 10^12 weights is a valid
 * request) only meets the JSON parser (config_limits.h).
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused input has an error whose message starts with "input" — the
 * file is named whichever layer found the fault (the container, the JSON
 * parser, a layer's from_config, compile, the restore); an accepted one
 * is a model whose config can be written again, compiled when its file
 * says so, and which (built, of one input) runs on zeros of its shape.
 */
#include "ckpt_crcs.h"
#include "config_limits.h"
#include "fuzz_engine.h"
#include "io/internal.h"
#include "train/internal.h"

static const char *const NAME = "input";

/* After a refusal: an error naming the input (any code). */
static void check_refused(void) {
    const gb_error *e = gb_last_error();
    FUZZ_CHECK(e != NULL, "refused without an error");
    FUZZ_CHECK(strncmp(e->message, NAME, strlen(NAME)) == 0, "the message does not name the file: %s",
               e->message);
}

/* A built model of one input runs on a small batch of zeros of the
 * shape it was built for: a file the loader accepts gives a model that
 * works, not one that fails at its first call. */
static void check_runs(gb_module *m) {
    int64_t dims[GB_MAX_RANK], n = 1;
    int rank = gb_module_input_shape(m, dims);
    if (rank < 1 || gb_model_num_inputs(m) != 1) return;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) dims[d] = 2;
        n *= dims[d] ? dims[d] : 1;
        if (n > 4096) return;
    }
    gb_tensor *out[GB_NN_MAX_IO];
    gb_tensor *x = gb_zeros(gb_module_dtype(m), rank, dims);
    int k = gb_module_call_n(m, 1, &x, out, false);
    FUZZ_CHECK(k >= 1, "a loaded model does not run on zeros of its input shape: %s", gb_error_string());
}

static void check_loaded(gb_module *m, bool compiled) {
    if (!m) {
        check_refused();
        return;
    }
    FUZZ_CHECK(gb_ok(), "a model and an error: %s", gb_error_string());
    gb_config *c = gb_module_get_config(m);
    FUZZ_CHECK(c != NULL, "a loaded model has no config: %s", gb_error_string());
    FUZZ_CHECK(!compiled || gb_model_optimizer(m) != NULL, "the file was compiled, the model is not");
    check_runs(m);
    gb_config_free(c);
    gb_module_free(m);
}

/* Whether the text may be built (it does not parse, which the loader
 * must report, or its numbers are small); *compiled: it has a compile
 * config. */
static bool buildable(const char *json, size_t n, bool *compiled) {
    gb_config *c = gb_config_from_json(json, n, NAME);
    *compiled = false;
    if (!c) {
        gb_clear_error();
        return true;
    }
    bool small = config_small_values(c);
    *compiled = gb_config_kind_of(gb_config_get(c, "compile")) == GB_CONFIG_DICT;
    gb_config_free(c);
    return small;
}

/* A copy of bytes, CRCs rewritten for even lengths. */
static unsigned char *container_copy(const uint8_t *data, size_t size) {
    unsigned char *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    if (size) memcpy(copy, data, size);
    if (size % 2 == 0) ckpt_fix_crcs(copy, size);
    return copy;
}

static void split_input(const char *json, size_t n, const uint8_t *rest, size_t size) {
    bool compiled;
    if (!buildable(json, n, &compiled)) return;
    gb__ckpt_file f;
    if (!gb__ckpt_parse(NAME, container_copy(rest, size), size, &f)) {
        gb_clear_error();
        f = (gb__ckpt_file){0};   /* a file of no tensors */
        snprintf(f.path, sizeof f.path, "%s", NAME);
    }
    check_loaded(gb__model_from_parts(NAME, json, n, &f), compiled);
    gb__ckpt_close(&f);
}

static void whole_input(const uint8_t *data, size_t size) {
    /* The config inside, read first only to keep big models unbuilt. */
    gb__ckpt_file f;
    bool compiled = false, ok = true;
    if (gb__ckpt_parse(NAME, container_copy(data, size), size, &f)) {
        for (int i = 0; i < f.count; i++) {
            if (strcmp(f.entries[i].path, "config.json") != 0) continue;
            const char *json = gb__ckpt_data(&f, &f.entries[i]);
            ok = !json || buildable(json, (size_t)f.entries[i].nbytes, &compiled);
        }
        gb__ckpt_close(&f);
    }
    gb_clear_error();
    if (ok) check_loaded(gb__model_parse(NAME, container_copy(data, size), size), compiled);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    const uint8_t *nul = memchr(data, 0, size);
    if (size >= 8 && memcmp(data, "GBCKPT\r\n", 8) == 0)
        whole_input(data, size);
    else if (nul)
        split_input((const char *)data, (size_t)(nul - data), nul + 1, size - (size_t)(nul - data) - 1);
    else
        split_input((const char *)data, size, NULL, 0);
    fuzz_end();
    return 0;
}
