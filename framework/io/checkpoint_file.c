/* io/checkpoint_file.c — the checkpoint file: tensors by path, versioned,
 * every byte that is read covered by a CRC, written atomically.
 *
 * Layout (all integers little-endian):
 *
 *   header, 40 bytes
 *     0  magic "GBCKPT\r\n"   (a text-mode transfer that rewrites \r\n shows)
 *     8  u32 version          (1; a newer one is refused, naming both)
 *    12  u32 count            tensors in the index
 *    16  u64 index_offset     where the index starts
 *    24  u64 index_bytes
 *    32  u32 index_crc        CRC-32 of the index bytes
 *    36  u32 header_crc       CRC-32 of bytes 0..35
 *   data: each tensor's bytes, little-endian, at 64-byte aligned offsets;
 *         the zeros padding one tensor to the next offset are in no CRC,
 *         as nothing reads them (the index says where each tensor is)
 *   index: per tensor
 *     u16 path length, path bytes (no NUL), u8 dtype, u8 rank,
 *     i64 dims[rank], u64 offset, u64 nbytes, u32 crc (of the data bytes)
 *
 * Writing goes through io/atomic_file.c ("<path>.tmp", fsync, rename over
 * path, fsync of the directory), so a reader sees the old file or the new
 * one, never a torn one. Reading checks the header on its own first (a
 * big file that is no checkpoint costs 40 bytes), then takes the whole
 * file into memory and checks the index and every entry's bounds before
 * anything is used; a tensor's data CRC is checked when it is taken, so a flipped
 * byte names the tensor it hit.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "io/internal.h"

enum { HEADER_BYTES = GB__CKPT_HEADER_BYTES, ALIGN = 64 };
static const unsigned char MAGIC[8] = {'G', 'B', 'C', 'K', 'P', 'T', '\r', '\n'};

static uint32_t crc(const void *p, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    const unsigned char *b = p;
    while (n > 0) {   /* zlib takes uInt lengths */
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, chunk);
        b += chunk, n -= chunk;
    }
    return (uint32_t)c;
}

static void put_u(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* ---- writing ------------------------------------------------------------------------------- */

typedef struct out_file {
    FILE *f;
    uint64_t pos;
    bool failed;
} out_file;

static void emit(out_file *o, const void *p, size_t n) {
    if (o->failed || n == 0) return;
    if (fwrite(p, 1, n, o->f) != n) o->failed = true;
    o->pos += n;
}

static void pad_to(out_file *o, uint64_t align) {
    static const unsigned char zeros[ALIGN];
    uint64_t rem = o->pos % align;
    if (rem) emit(o, zeros, (size_t)(align - rem));
}

/* The index bytes for the entries (their offsets already set). */
static unsigned char *encode_index(const gb__ckpt_entry *e, int n, size_t *bytes) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += 2 + strlen(e[i].path) + 2 + 8 * (size_t)e[i].rank + 20;
    unsigned char *buf = malloc(total ? total : 1), *p = buf;
    if (!buf) return NULL;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(e[i].path);
        put_u(p, len, 2), p += 2;
        memcpy(p, e[i].path, len), p += len;
        *p++ = (unsigned char)e[i].dtype;
        *p++ = (unsigned char)e[i].rank;
        for (int d = 0; d < e[i].rank; d++) put_u(p, (uint64_t)e[i].dims[d], 8), p += 8;
        put_u(p, e[i].offset, 8), p += 8;
        put_u(p, e[i].nbytes, 8), p += 8;
        put_u(p, e[i].crc, 4), p += 4;
    }
    *bytes = total;
    return buf;
}

bool gb__ckpt_write(const char *path, gb__ckpt_entry *e, int n) {
    for (int i = 0; i < n; i++) {
        if (e[i].dtype == GB_STRING) { /* pairs of pointers mean nothing in a file */
            gb__error(GB_ERR_DTYPE, NULL, "checkpoint %s: '%s' is a string tensor; checkpoints "
                      "hold numeric tensors only", path, e[i].path);
            return false;
        }
    }
    gb__atomic_file a;
    if (!gb__atomic_open(&a, path, "checkpoint")) return false;
    out_file o = {.f = a.f};
    unsigned char header[HEADER_BYTES] = {0};
    emit(&o, header, sizeof header);   /* rewritten at the end */
    for (int i = 0; i < n; i++) {
        pad_to(&o, ALIGN);
        e[i].offset = o.pos;
        e[i].crc = crc(e[i].data, e[i].nbytes);
        emit(&o, e[i].data, e[i].nbytes);
    }
    size_t index_bytes = 0;
    unsigned char *index = encode_index(e, n, &index_bytes);
    uint64_t index_offset = o.pos;
    if (!index) o.failed = true;
    else emit(&o, index, index_bytes);
    memcpy(header, MAGIC, 8);
    put_u(header + 8, GB__CKPT_VERSION, 4);
    put_u(header + 12, (uint64_t)n, 4);
    put_u(header + 16, index_offset, 8);
    put_u(header + 24, index_bytes, 8);
    put_u(header + 32, index ? crc(index, index_bytes) : 0, 4);
    put_u(header + 36, crc(header, 36), 4);
    free(index);
    bool written = !o.failed && fseek(o.f, 0, SEEK_SET) == 0 &&
                   fwrite(header, 1, sizeof header, o.f) == sizeof header;
    return gb__atomic_commit(&a, written);
}

/* ---- reading -------------------------------------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static void bad(const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_IO, NULL, "%s: %s", path, msg);
}

/* The header's own checks, on its 40 bytes and the file's size: magic,
 * CRC, version, and an index that lies inside the file. */
static bool check_head(const char *path, const unsigned char *d, size_t n, uint64_t size,
                       uint64_t *index_at, uint64_t *index_bytes, uint32_t *count) {
    if (n < HEADER_BYTES) {
        bad(path, "truncated: the file has %llu bytes, fewer than a checkpoint header's %d",
            (unsigned long long)size, HEADER_BYTES);
        return false;
    }
    if (memcmp(d, MAGIC, 8) != 0) {
        bad(path, "not a glassbox checkpoint (bad magic)");
        return false;
    }
    if (get_u(d + 36, 4) != crc(d, 36)) {
        bad(path, "corrupt header (CRC mismatch)");
        return false;
    }
    uint32_t version = (uint32_t)get_u(d + 8, 4);
    if (version == 0) {
        bad(path, "corrupt header: format version 0 does not exist");
        return false;
    }
    if (version > GB__CKPT_VERSION) {
        bad(path, "written by a newer glassbox (format version %u; this build reads up to %d)",
            version, GB__CKPT_VERSION);
        return false;
    }
    *count = (uint32_t)get_u(d + 12, 4);
    *index_at = get_u(d + 16, 8);
    *index_bytes = get_u(d + 24, 8);
    if (*index_at < HEADER_BYTES) {
        bad(path, "corrupt header: the index starts at byte %llu, inside the header",
            (unsigned long long)*index_at);
        return false;
    }
    if (*index_at > size || *index_bytes > size - *index_at) {
        uint64_t end = *index_bytes > UINT64_MAX - *index_at ? UINT64_MAX : *index_at + *index_bytes;
        bad(path, "truncated: the file has %llu bytes but its index ends at byte %llu",
            (unsigned long long)size, (unsigned long long)end);
        return false;
    }
    return true;
}

bool gb__ckpt_head_ok(const char *path, const unsigned char *head, size_t n, uint64_t file_size) {
    uint64_t index_at, index_bytes;
    uint32_t count;
    return check_head(path, head, n, file_size, &index_at, &index_bytes, &count);
}

/* The whole header, the index's CRC included, on the file's bytes. */
static bool check_header(const char *path, const unsigned char *d, size_t size, uint64_t *index_at,
                         uint64_t *index_bytes, uint32_t *count) {
    if (!check_head(path, d, size < HEADER_BYTES ? size : HEADER_BYTES, size, index_at,
                    index_bytes, count))
        return false;
    if (get_u(d + 32, 4) != crc(d + *index_at, (size_t)*index_bytes)) {
        bad(path, "corrupt index (CRC mismatch)");
        return false;
    }
    return true;
}

/* One index entry at *p (within [*, end)); false (with an error) when malformed. */
static bool decode_entry(const char *path, const unsigned char **pp, const unsigned char *end,
                         uint64_t data_end, gb__ckpt_entry *e) {
    const unsigned char *p = *pp;
    size_t len = end - p >= 2 ? (size_t)get_u(p, 2) : SIZE_MAX;
    if (len == SIZE_MAX || len == 0 || len >= sizeof e->path || (size_t)(end - p) < 2 + len + 2) {
        bad(path, "corrupt index: a bad path length");
        return false;
    }
    memcpy(e->path, p + 2, len);
    e->path[len] = '\0';
    p += 2 + len;
    e->dtype = (gb_dtype)p[0];
    e->rank = p[1];
    p += 2;
    if (memchr(e->path, '\0', len) || !gb_dtype_is_numeric(e->dtype) || e->rank > GB_MAX_RANK ||
        (size_t)(end - p) < 8 * (size_t)e->rank + 20) {
        bad(path, "corrupt index entry for '%s'", e->path);
        return false;
    }
    uint64_t count = 1;
    bool negative = false;
    for (int d = 0; d < e->rank; d++, p += 8) {
        e->dims[d] = (int64_t)get_u(p, 8);
        negative |= e->dims[d] < 0;
        count *= (uint64_t)e->dims[d];
    }
    /* Every dim counts, those past a zero too: a tensor of the shape is
     * refused if its strides would wrap, even with no element. */
    const char *unit;
    if (negative || !gb__shape_fits(e->rank, e->dims, gb_dtype_size(e->dtype), &unit)) {
        bad(path, "corrupt index entry for '%s': bad dims", e->path);
        return false;
    }
    e->offset = get_u(p, 8);
    e->nbytes = get_u(p + 8, 8);
    e->crc = (uint32_t)get_u(p + 16, 4);
    p += 20;
    if (e->nbytes != count * gb_dtype_size(e->dtype) ||
        e->offset < HEADER_BYTES || e->offset > data_end || e->nbytes > data_end - e->offset) {
        bad(path, "corrupt index entry for '%s': its data lies outside the file", e->path);
        return false;
    }
    *pp = p;
    return true;
}

static int by_path(const void *a, const void *b) {
    return strcmp((*(const gb__ckpt_entry *const *)a)->path, (*(const gb__ckpt_entry *const *)b)->path);
}

/* No path twice: sorted, a duplicate sits next to its twin — O(n log n);
 * comparing every pair took a minute for 100,000 entries. */
static bool unique_paths(const char *path, const gb__ckpt_file *f) {
    if (f->count < 2) return true;
    const gb__ckpt_entry **sorted = malloc((size_t)f->count * sizeof *sorted);
    if (!sorted) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", path);
        return false;
    }
    for (int i = 0; i < f->count; i++) sorted[i] = &f->entries[i];
    qsort(sorted, (size_t)f->count, sizeof *sorted, by_path);
    const char *twice = NULL;
    for (int i = 1; i < f->count && !twice; i++)
        if (strcmp(sorted[i - 1]->path, sorted[i]->path) == 0) twice = sorted[i]->path;
    if (twice) bad(path, "corrupt index: '%s' appears twice", twice);
    free(sorted);
    return !twice;
}

bool gb__ckpt_read(const char *path, gb__ckpt_file *out) {
    unsigned char *bytes = NULL;
    size_t size = 0;
    *out = (gb__ckpt_file){0};
    /* Regular files only (core/file.c): a FIFO would block the read. */
    bytes = gb__file_read_checked(path, "a checkpoint", HEADER_BYTES, gb__ckpt_head_ok, &size);
    return bytes && gb__ckpt_parse(path, bytes, size, out);
}

bool gb__ckpt_parse(const char *path, unsigned char *bytes, size_t size, gb__ckpt_file *out) {
    *out = (gb__ckpt_file){.bytes = bytes, .size = size};
    snprintf(out->path, sizeof out->path, "%s", path);
    uint64_t index_at, index_bytes;
    uint32_t count;
    if (!check_header(path, out->bytes, out->size, &index_at, &index_bytes, &count)) goto fail;
    if (count > index_bytes / 24) {   /* every entry takes at least 24 bytes */
        bad(path, "corrupt index: %u entries cannot fit in %llu bytes", count,
            (unsigned long long)index_bytes);
        goto fail;
    }
    out->entries = calloc(count ? count : 1, sizeof *out->entries);
    if (!out->entries) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", path);
        goto fail;
    }
    const unsigned char *p = out->bytes + index_at, *end = p + index_bytes;
    for (uint32_t i = 0; i < count; i++) {
        if (!decode_entry(path, &p, end, index_at, &out->entries[i])) goto fail;
        out->count++;
    }
    if (!unique_paths(path, out)) goto fail;
    return true;
fail:
    gb__ckpt_close(out);
    return false;
}

const void *gb__ckpt_data(const gb__ckpt_file *f, const gb__ckpt_entry *e) {
    const unsigned char *d = f->bytes + e->offset;
    if (crc(d, (size_t)e->nbytes) == e->crc) return d;
    gb__error(GB_ERR_IO, NULL, "%s: tensor '%s' is corrupt (CRC mismatch)", f->path, e->path);
    return NULL;
}

static const char *spec_text(gb_dtype dt, int rank, const int64_t *dims, char *buf, size_t n) {
    char shape[160];
    snprintf(buf, n, "%s%s", gb_dtype_name(dt), gb__shape_fmt(rank, dims, shape, sizeof shape));
    return buf;
}

bool gb__ckpt_fits(const char *file, const gb__ckpt_entry *e, gb_dtype dt, int rank,
                   const int64_t *dims, const char *note) {
    if (dt == e->dtype && rank == e->rank &&
        (rank == 0 || memcmp(dims, e->dims, (size_t)rank * sizeof *dims) == 0))
        return true;
    char want[200], got[200];
    gb__error(dt != e->dtype ? GB_ERR_DTYPE : GB_ERR_SHAPE, NULL,
              "%s: tensor '%s' is %s in the file but %s in the program%s%s", file, e->path,
              spec_text(e->dtype, e->rank, e->dims, got, sizeof got),
              spec_text(dt, rank, dims, want, sizeof want), note ? " " : "", note ? note : "");
    return false;
}

void gb__ckpt_close(gb__ckpt_file *f) {
    free(f->bytes);
    free(f->entries);
    f->bytes = NULL;
    f->entries = NULL;
    f->count = 0;
}
