/* io/saved_model_fingerprint.c — fingerprint.json: what a SavedModel's
 * files hashed to when it was saved (TensorFlow's fingerprint.pb).
 *
 *   {"saved_model.json": "9c1d…", "variables/variables.ckpt": "…",
 *    "constants.ckpt": "…", "model": "…"}
 *
 * Each value is the 64-bit FNV-1a hash of the file's bytes in 16 hex
 * digits; "model" hashes the three. It identifies a model (two saves of
 * the same graphs and values have the same "model") and lets the loader
 * refuse a directory whose files changed since, or were torn apart by a
 * crash between two of their writes: the JSON carries no checksum of its
 * own, and a graph that parses but is not the one saved must not run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/internal.h"

const char *const gb__saved_model_files[GB__SAVED_MODEL_NFILES] = {
    GB__SAVED_MODEL_JSON, GB__SAVED_MODEL_VARIABLES, GB__SAVED_MODEL_CONSTANTS};

uint64_t gb__fnv1a64(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t model_hash(const uint64_t *h) {
    return gb__fnv1a64(h, GB__SAVED_MODEL_NFILES * sizeof *h);
}

bool gb__fingerprint_write(const char *dir) {
    char path[4096], text[512];
    uint64_t h[GB__SAVED_MODEL_NFILES];
    for (int i = 0; i < GB__SAVED_MODEL_NFILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, gb__saved_model_files[i]);
        size_t size = 0;
        void *bytes = gb__file_read(path, "a SavedModel file", &size);
        if (!bytes) return false;
        h[i] = gb__fnv1a64(bytes, size);
        free(bytes);
    }
    snprintf(text, sizeof text,
             "{\n  \"%s\": \"%016" PRIx64 "\",\n  \"%s\": \"%016" PRIx64 "\",\n  \"%s\": \"%016" PRIx64
             "\",\n  \"model\": \"%016" PRIx64 "\"\n}\n",
             gb__saved_model_files[0], h[0], gb__saved_model_files[1], h[1], gb__saved_model_files[2],
             h[2], model_hash(h));
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_FINGERPRINT, dir);
    return gb__write_file_atomic(path, text, strlen(text), "fingerprint");
}

/* The hash under key, parsed from 16 hex digits. */
static bool read_hash(const gb_config *c, const char *key, const char *path, uint64_t *out) {
    const char *s = gb_config_string(gb_config_get(c, key));
    char *end = NULL;
    if (s && strlen(s) == 16) *out = strtoull(s, &end, 16);
    if (end && *end == '\0') return true;
    gb__error(GB_ERR_IO, NULL, "%s: '%s' must be a hash of 16 hex digits", path, key);
    return false;
}

bool gb__fingerprint_check(const char *dir, const uint64_t *hashes, char hex[17]) {
    char path[4096];
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_FINGERPRINT, dir);
    size_t size = 0;
    char *text = gb__file_read(path, "a fingerprint file", &size);
    if (!text) return false;
    gb_config *c = gb_config_from_json(text, size, path);
    free(text);
    if (!c) return false;
    bool ok = true;
    uint64_t want = 0;
    for (int i = 0; ok && i < GB__SAVED_MODEL_NFILES; i++) {
        ok = read_hash(c, gb__saved_model_files[i], path, &want);
        if (ok && want != hashes[i]) {
            gb__error(GB_ERR_IO, NULL,
                      "%s: %s has changed since the model was saved (its bytes hash to %016" PRIx64
                      ", the fingerprint says %016" PRIx64 "); save the model again",
                      path, gb__saved_model_files[i], hashes[i], want);
            ok = false;
        }
    }
    ok = ok && read_hash(c, "model", path, &want);
    if (ok && want != model_hash(hashes)) {
        gb__error(GB_ERR_IO, NULL, "%s: 'model' is not the hash of the files' hashes", path);
        ok = false;
    }
    if (ok) snprintf(hex, 17, "%016" PRIx64, want);
    gb_config_free(c);
    return ok;
}
