/* fuzz_vocabulary_checkpoint.c — a text layer's vocabulary restored from
 * a checkpoint (io/checkpoint.c's string assets: a count, then encoded
 * strings, in a uint8 entry) on arbitrary bytes.
 *
 * The input's first byte picks the layer (StringLookup with or without a
 * mask, a TextVectorization in tf_idf mode); the rest is the bytes of its
 * vocabulary entry, written into an otherwise well-formed checkpoint (for
 * tf_idf beside idf weights of the count the entry announces). What must
 * hold for any input: no crash, leak or undefined behaviour; a refused
 * restore is an I/O error naming the entry, or a value error naming the
 * layer or the repeated token, and leaves the layer without a vocabulary; an accepted one gives
 * the layer exactly the entry's strings, each token finding its own id.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "fuzz_engine.h"
#include "io/internal.h"

enum { MAX_IDF = 1 << 16 };

static char path[64];

static uint64_t count_of(const uint8_t *p, size_t n) {
    uint64_t c = 0;
    for (int k = 0; k < 8 && (size_t)k < n; k++) c |= (uint64_t)p[k] << (8 * k);
    return n >= 8 ? c : 0;
}

/* The layer's vocabulary against the entry it came from. */
static void check_accepted(gb_module *layer, bool lookup, const uint8_t *entry, size_t n) {
    gb_tensor *v = gb_text_vectorization_vocabulary(layer);
    FUZZ_CHECK(v != NULL, "an accepted vocabulary cannot be read: %s", gb_error_string());
    FUZZ_CHECK((uint64_t)gb_size(v) == count_of(entry, n), "%lld tokens for a count of %llu",
               (long long)gb_size(v), (unsigned long long)count_of(entry, n));
    gb_tensor *ids = lookup ? gb_module_call(layer, v, false) : NULL;
    int reserved = lookup && gb_size(v) > 1 && gb_get_string(v, 0).len == 0 ? 2 : 1;
    for (int64_t k = reserved; ids && k < gb_size(v); k++) /* "" and [UNK] are not in the table */
        FUZZ_CHECK(gb_get(ids, k) == (double)k, "token %lld finds id %g", (long long)k, gb_get(ids, k));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_vocabulary_%d.ckpt", (int)getpid());
    if (size < 1) return 0;
    fuzz_begin();
    int kind = data[0] % 3;
    const uint8_t *entry = data + 1;
    size_t n = size - 1;
    gb_module *layer = kind < 2 ? gb_string_lookup_new(&(gb_text_vectorization_options){
                                      .name = "vocab", .mask = kind == 1})
                                : gb_text_vectorization_new(&(gb_text_vectorization_options){
                                      .name = "vocab", .output_mode = GB_TV_TF_IDF});
    FUZZ_CHECK(layer != NULL, "%s", gb_error_string());
    gb__ckpt_entry e[2] = {{.path = "model/vocab/vocabulary", .dtype = GB_U8, .rank = 1,
                            .dims = {(int64_t)n}, .data = entry, .nbytes = n}};
    uint64_t nidf = count_of(entry, n) < MAX_IDF ? count_of(entry, n) : MAX_IDF;
    float *idf = calloc(nidf ? nidf : 1, sizeof *idf);
    for (uint64_t k = 0; k < nidf; k++) idf[k] = 0.5f;
    e[1] = (gb__ckpt_entry){.path = "model/vocab/idf_weights", .dtype = GB_F32, .rank = 1,
                            .dims = {(int64_t)nidf}, .data = idf, .nbytes = nidf * sizeof *idf};
    FUZZ_CHECK(gb__ckpt_write(path, e, kind == 2 ? 2 : 1), "%s", gb_error_string());
    free(idf);
    gb_checkpoint *ck = gb_checkpoint_new();
    FUZZ_CHECK(gb_checkpoint_track_module(ck, "model", layer), "%s", gb_error_string());
    gb_restore_status st;
    if (gb_checkpoint_restore(ck, path, &st)) {
        check_accepted(layer, kind < 2, entry, n);
    } else {
        const gb_error *err = gb_last_error();
        FUZZ_CHECK(err != NULL, "refused without an error");
        FUZZ_CHECK((err->code == GB_ERR_IO && strstr(err->message, "model/vocab/vocabulary")) ||
                       (err->code == GB_ERR_VALUE && (strstr(err->message, "'vocab'") ||
                                                      strstr(err->message, "is a repeat of an earlier key"))),
                   "code %s: %s", gb_status_name(err->code), err->message);
        gb_clear_error();
        FUZZ_CHECK(gb_text_vectorization_vocabulary_size(layer) == 0, "a refused restore changed it");
    }
    gb_checkpoint_free(ck);
    gb_module_free(layer);
    unlink(path);
    fuzz_end();
    return 0;
}
