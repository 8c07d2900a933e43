/* data/idx.c — reading IDX files, the format of MNIST and Fashion-MNIST.
 *
 * An IDX file is a 4-byte magic number (two zero bytes, a type code, the
 * number of dimensions), one big-endian 32-bit size per dimension, then
 * the data, big-endian, row-major. The parser reads a buffer, gzip-
 * compressed or not (data/byte_reader.c); gb_idx_read only fetches the
 * file's bytes (core/file.c), so the parser can be tested and fuzzed
 * without files.
 *
 * Every way a file can be wrong gets its own message naming the file:
 * missing, not a regular file, too short for a header, bad magic, unknown
 * type code, bad number of dimensions, truncated data (checked against
 * what the input can hold before allocating), trailing bytes after the
 * data, corrupt gzip. The result is backed by a heap buffer, so a dataset
 * made from it shares the bytes instead of copying them.
 */
#include <stdlib.h>

#include "data/internal.h"

typedef struct idx_type {
    uint8_t code;
    uint8_t file_size;   /* bytes per element in the file */
    gb_dtype dtype;      /* in memory: narrow signed types widen to int32 */
} idx_type;

static const idx_type idx_types[] = {
    {0x08, 1, GB_U8},  {0x09, 1, GB_I32}, {0x0B, 2, GB_I32},
    {0x0C, 4, GB_I32}, {0x0D, 4, GB_F32}, {0x0E, 8, GB_F64},
};

typedef struct idx_reader {
    const char *name;    /* the file's path (or the caller's name for the bytes) */
    gb__byte_reader in;
    const idx_type *type;
    int rank;
    int64_t dims[GB_MAX_RANK];
    int64_t count;   /* elements */
} idx_reader;

static bool corrupt(const idx_reader *r) {
    gb__error(GB_ERR_IO, NULL, "%s: corrupt gzip data: %s", r->name, r->in.error);
    return false;
}

/* Why a read ended early, as a suffix for the truncation message. */
static const char *early_end(const idx_reader *r) {
    return r->in.ended_early ? " (the gzip stream ends early)" : "";
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Magic number, type, dims; sets type, rank, dims, count. */
static bool read_header(idx_reader *r) {
    uint8_t m[4];
    int64_t got = gb__byte_reader_read(&r->in, m, 4);
    if (got < 0) return corrupt(r);
    if (got < 4) {
        gb__error(GB_ERR_IO, NULL, "%s: not an IDX file: %s", r->name,
                  got ? "shorter than the 4-byte magic number" : "the file is empty");
        return false;
    }
    uint32_t magic = be32(m);
    if (m[0] || m[1]) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: bad magic number 0x%08X: not an IDX file (an IDX magic number is "
                  "0x0000TTNN: type code TT, NN dimensions; 0x00000803 for MNIST images)",
                  r->name, magic);
        return false;
    }
    for (size_t i = 0; i < sizeof idx_types / sizeof idx_types[0]; i++)
        if (idx_types[i].code == m[2]) r->type = &idx_types[i];
    if (!r->type) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: unknown IDX data type 0x%02X in magic number 0x%08X (known: 0x08 "
                  "ubyte, 0x09 byte, 0x0B short, 0x0C int, 0x0D float, 0x0E double)",
                  r->name, m[2], magic);
        return false;
    }
    r->rank = m[3];
    if (r->rank < 1 || r->rank > GB_MAX_RANK) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: %d dimensions in magic number 0x%08X; supported: 1 to %d", r->name,
                  r->rank, magic, GB_MAX_RANK);
        return false;
    }
    uint8_t d[4 * GB_MAX_RANK];
    got = gb__byte_reader_read(&r->in, d, 4 * r->rank);
    if (got < 0) return corrupt(r);
    if (got < 4 * r->rank) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: truncated header: expected %d dimension sizes (%d bytes), got %lld bytes",
                  r->name, r->rank, 4 * r->rank, (long long)got);
        return false;
    }
    /* Each dim < 2^32 and rank <= 8: check the product against 2^62. */
    r->count = 1;
    for (int i = 0; i < r->rank; i++) {
        r->dims[i] = be32(d + 4 * i);
        if (r->dims[i] && r->count > (INT64_C(1) << 62) / 8 / r->dims[i]) {
            gb__error(GB_ERR_IO, NULL, "%s: the dimensions in the header are implausibly large",
                      r->name);
            return false;
        }
        r->count *= r->dims[i];
    }
    return true;
}

/* Refuses, before allocating for it, a header announcing more data than
 * the rest of the input can hold: a 20-byte file must not make the loader
 * ask for terabytes. */
static bool data_fits(const idx_reader *r) {
    int64_t want = r->count * r->type->file_size;
    uint64_t most = gb__byte_reader_max_left(&r->in);
    if ((uint64_t)want <= most) return true;
    if (r->in.gzip)
        gb__error(GB_ERR_IO, NULL,
                  "%s: truncated: expected %lld bytes of data, but the %zu bytes of gzip data "
                  "left can hold at most %llu",
                  r->name, (long long)want, r->in.left, (unsigned long long)most);
    else
        gb__error(GB_ERR_IO, NULL, "%s: truncated: expected %lld bytes of data, got %llu",
                  r->name, (long long)want, (unsigned long long)most);
    return false;
}

/* Reads the data and makes sure nothing follows it. */
static bool read_data(idx_reader *r, void *dst) {
    int64_t want = r->count * r->type->file_size;
    int64_t got = gb__byte_reader_read(&r->in, dst, want);
    if (got < 0) return corrupt(r);
    if (got < want) {
        gb__error(GB_ERR_IO, NULL, "%s: truncated: expected %lld bytes of data, got %lld%s",
                  r->name, (long long)want, (long long)got, early_end(r));
        return false;
    }
    /* Reading on also runs gzip's final CRC check. */
    char scratch[4096];
    int64_t extra = 0;
    for (int64_t n; (n = gb__byte_reader_read(&r->in, scratch, sizeof scratch)) != 0; extra += n)
        if (n < 0) return corrupt(r);
    if (extra) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: %lld bytes of trailing data after the %lld bytes of data the header "
                  "announces (wrong dimensions in the header, or not an IDX file)",
                  r->name, (long long)extra, (long long)want);
        return false;
    }
    return true;
}

/* Big-endian file elements to host order, widening narrow signed types to
 * int32 in place (from the end, so no element is overwritten unread). */
static void to_host(const idx_type *t, void *data, int64_t n) {
    uint8_t *p = data;
    switch (t->code) {
    case 0x09:
        for (int64_t i = n - 1; i >= 0; i--) ((int32_t *)data)[i] = (int8_t)p[i];
        break;
    case 0x0B:
        for (int64_t i = n - 1; i >= 0; i--)
            ((int32_t *)data)[i] = (int16_t)((uint16_t)p[2 * i] << 8 | p[2 * i + 1]);
        break;
    case 0x0C:
    case 0x0D:
        for (int64_t i = 0; i < n; i++) {
            uint32_t v = be32(p + 4 * i);
            memcpy(p + 4 * i, &v, 4);
        }
        break;
    case 0x0E:
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)be32(p + 8 * i) << 32 | be32(p + 8 * i + 4);
            memcpy(p + 8 * i, &v, 8);
        }
        break;
    default:
        break;
    }
}

gb_tensor *gb_idx_decode(const void *data, size_t size, const char *name) {
    if (!data && size) {
        gb__error(GB_ERR_VALUE, NULL, "gb_idx_decode: data is NULL but size is %zu", size);
        return NULL;
    }
    idx_reader r = {.name = name ? name : "IDX data"};
    gb_buffer *b = NULL;
    bool ok = gb__byte_reader_open(&r.in, data ? data : "", size) && read_header(&r) &&
              data_fits(&r) &&
              (b = gb__buffer_new_heap((size_t)r.count * gb_dtype_size(r.type->dtype))) &&
              read_data(&r, b->data);
    gb__byte_reader_close(&r.in);
    if (!ok) {
        gb__buffer_unref(b);
        return NULL;
    }
    to_host(r.type, b->data, r.count);
    return gb__heap_tensor(b, true, r.type->dtype, r.rank, r.dims);
}

gb_tensor *gb_idx_read(const char *path) {
    if (!path) {
        gb__error(GB_ERR_VALUE, NULL, "gb_idx_read: path is NULL");
        return NULL;
    }
    size_t size;
    void *bytes = gb__file_read(path, "an IDX file", &size);
    if (!bytes) return NULL;
    gb_tensor *t = gb_idx_decode(bytes, size, path);
    free(bytes);
    return t;
}
