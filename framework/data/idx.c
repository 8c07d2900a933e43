/* data/idx.c — reading IDX files, the format of MNIST and Fashion-MNIST.
 *
 * An IDX file is a 4-byte magic number (two zero bytes, a type code, the
 * number of dimensions), one big-endian 32-bit size per dimension, then
 * the data, big-endian, row-major. zlib's gzread reads gzip files and,
 * transparently, plain ones.
 *
 * Every way a file can be wrong gets its own message naming the file:
 * missing, a directory, too short for a header, bad magic, unknown type
 * code, bad number of dimensions, truncated data, trailing bytes after the
 * data, corrupt gzip. The result is backed by a heap buffer, so a dataset
 * made from it shares the bytes instead of copying them.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>

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
    const char *path;
    gzFile f;
    const idx_type *type;
    int rank;
    int64_t dims[GB_MAX_RANK];
    int64_t count;   /* elements */
} idx_reader;

/* Reads up to n bytes; the count read, or -1 when zlib reports corrupt data. */
static int64_t read_up_to(gzFile f, void *dst, int64_t n) {
    int64_t got = 0;
    while (got < n) {
        int64_t left = n - got;
        int r = gzread(f, (char *)dst + got, (unsigned)(left > (1 << 30) ? (1 << 30) : left));
        if (r < 0) return -1;
        if (r == 0) break;
        got += r;
    }
    return got;
}

static bool corrupt(const idx_reader *r) {
    int errnum;
    const char *msg = gzerror(r->f, &errnum);
    /* zlib prefixes its message with the path, which ours already has. */
    size_t n = strlen(r->path);
    if (strncmp(msg, r->path, n) == 0 && strncmp(msg + n, ": ", 2) == 0) msg += n + 2;
    gb__error(GB_ERR_IO, NULL, "%s: corrupt gzip data: %s", r->path,
              errnum == Z_ERRNO ? strerror(errno) : msg);
    return false;
}

/* Why a read ended early, as a suffix for the truncation message. */
static const char *early_end(const idx_reader *r) {
    int errnum;
    gzerror(r->f, &errnum);
    return errnum == Z_BUF_ERROR ? " (the gzip stream ends early)" : "";
}

static bool open_file(idx_reader *r) {
    struct stat st;
    if (stat(r->path, &st) != 0) {
        gb__error(GB_ERR_IO, NULL, "%s: cannot open: %s", r->path, strerror(errno));
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        gb__error(GB_ERR_IO, NULL, "%s: is a directory, not an IDX file", r->path);
        return false;
    }
    r->f = gzopen(r->path, "rb");
    if (!r->f) {
        gb__error(GB_ERR_IO, NULL, "%s: cannot open: %s", r->path,
                  errno ? strerror(errno) : "out of memory");
        return false;
    }
    gzbuffer(r->f, 1 << 18);
    return true;
}

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Magic number, type, dims; sets type, rank, dims, count. */
static bool read_header(idx_reader *r) {
    uint8_t m[4];
    int64_t got = read_up_to(r->f, m, 4);
    if (got < 0) return corrupt(r);
    if (got < 4) {
        gb__error(GB_ERR_IO, NULL, "%s: not an IDX file: %s", r->path,
                  got ? "shorter than the 4-byte magic number" : "the file is empty");
        return false;
    }
    uint32_t magic = be32(m);
    if (m[0] || m[1]) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: bad magic number 0x%08X: not an IDX file (an IDX magic number is "
                  "0x0000TTNN: type code TT, NN dimensions; 0x00000803 for MNIST images)",
                  r->path, magic);
        return false;
    }
    for (size_t i = 0; i < sizeof idx_types / sizeof idx_types[0]; i++)
        if (idx_types[i].code == m[2]) r->type = &idx_types[i];
    if (!r->type) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: unknown IDX data type 0x%02X in magic number 0x%08X (known: 0x08 "
                  "ubyte, 0x09 byte, 0x0B short, 0x0C int, 0x0D float, 0x0E double)",
                  r->path, m[2], magic);
        return false;
    }
    r->rank = m[3];
    if (r->rank < 1 || r->rank > GB_MAX_RANK) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: %d dimensions in magic number 0x%08X; supported: 1 to %d", r->path,
                  r->rank, magic, GB_MAX_RANK);
        return false;
    }
    uint8_t d[4 * GB_MAX_RANK];
    got = read_up_to(r->f, d, 4 * r->rank);
    if (got < 0) return corrupt(r);
    if (got < 4 * r->rank) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: truncated header: expected %d dimension sizes (%d bytes), got %lld bytes",
                  r->path, r->rank, 4 * r->rank, (long long)got);
        return false;
    }
    /* Each dim < 2^32 and rank <= 8: check the product against 2^62. */
    r->count = 1;
    for (int i = 0; i < r->rank; i++) {
        r->dims[i] = be32(d + 4 * i);
        if (r->dims[i] && r->count > (INT64_C(1) << 62) / 8 / r->dims[i]) {
            gb__error(GB_ERR_IO, NULL, "%s: the dimensions in the header are implausibly large",
                      r->path);
            return false;
        }
        r->count *= r->dims[i];
    }
    return true;
}

/* Reads the data and makes sure nothing follows it. */
static bool read_data(idx_reader *r, void *dst) {
    int64_t want = r->count * r->type->file_size;
    int64_t got = read_up_to(r->f, dst, want);
    if (got < 0) return corrupt(r);
    if (got < want) {
        gb__error(GB_ERR_IO, NULL, "%s: truncated: expected %lld bytes of data, got %lld%s",
                  r->path, (long long)want, (long long)got, early_end(r));
        return false;
    }
    /* Reading on also runs gzip's final CRC check. */
    char scratch[4096];
    int64_t extra = 0;
    for (int64_t n; (n = read_up_to(r->f, scratch, sizeof scratch)) != 0; extra += n)
        if (n < 0) return corrupt(r);
    if (extra) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: %lld bytes of trailing data after the %lld bytes of data the header "
                  "announces (wrong dimensions in the header, or not an IDX file)",
                  r->path, (long long)extra, (long long)want);
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

gb_tensor *gb_idx_read(const char *path) {
    if (!path) {
        gb__error(GB_ERR_VALUE, NULL, "gb_idx_read: path is NULL");
        return NULL;
    }
    idx_reader r = {.path = path};
    gb_buffer *b = NULL;
    bool ok = open_file(&r) && read_header(&r) &&
              (b = gb__buffer_new_heap((size_t)r.count * gb_dtype_size(r.type->dtype))) &&
              read_data(&r, b->data);
    if (r.f) gzclose(r.f);
    if (!ok) {
        gb__buffer_unref(b);
        return NULL;
    }
    to_host(r.type, b->data, r.count);
    return gb__heap_tensor(b, true, r.type->dtype, r.rank, r.dims);
}
