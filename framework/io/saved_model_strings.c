/* io/saved_model_strings.c — string values in a SavedModel: how a string
 * Const and a lookup table's keys sit in constants.ckpt, whose entries are
 * numbers only.
 *
 * A string tensor of n elements is one uint8 entry: n little-endian int64
 * lengths, then the bytes one after the other. Decoding checks every
 * length against what is left before it copies, since the file is input.
 */
#include <stdlib.h>

#include "io/internal.h"

bool gb__strings_encode(const gb_string *s, int64_t n, unsigned char **blob, uint64_t *nbytes) {
    uint64_t total = 8 * (uint64_t)n + (uint64_t)gb__strings_total(s, n);
    unsigned char *b = malloc(total ? total : 1), *p = b;
    if (!b) return gb__error(GB_ERR_MEMORY, NULL, "SavedModel: out of memory for strings"), false;
    for (int64_t i = 0; i < n; i++, p += 8)
        for (int k = 0; k < 8; k++) p[k] = (unsigned char)((uint64_t)s[i].len >> (8 * k));
    for (int64_t i = 0; i < n; i++) {
        if (s[i].len) memcpy(p, s[i].data, (size_t)s[i].len);
        p += s[i].len;
    }
    *blob = b;
    *nbytes = total;
    return true;
}

gb_tensor *gb__strings_decode(const unsigned char *blob, uint64_t nbytes, int rank,
                              const int64_t *shape, const char *what) {
    int64_t n = gb__shape_size(rank, shape);
    if (n < 0 || (uint64_t)n > nbytes / 8) {
        gb__error(GB_ERR_IO, NULL, "%s: %llu bytes cannot hold %lld strings", what,
                  (unsigned long long)nbytes, (long long)n);
        return NULL;
    }
    gb_string *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    if (!e) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", what), NULL;
    uint64_t at = 8 * (uint64_t)n;
    for (int64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        for (int k = 0; k < 8; k++) len |= (uint64_t)blob[8 * i + k] << (8 * k);
        if (len > nbytes - at) {
            gb__error(GB_ERR_IO, NULL, "%s: string %lld of %llu bytes runs past the entry's end",
                      what, (long long)i, (unsigned long long)len);
            free(e);
            return NULL;
        }
        e[i] = (gb_string){(const char *)blob + at, (int64_t)len};
        at += len;
    }
    gb_tensor *t = at == nbytes ? gb_strings_from(e, rank, shape) : NULL;
    if (at != nbytes)
        gb__error(GB_ERR_IO, NULL, "%s: %llu bytes after the last string", what,
                  (unsigned long long)(nbytes - at));
    free(e);
    return t;
}
