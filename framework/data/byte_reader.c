/* data/byte_reader.c — reading bytes held in memory, plain or gzip-compressed.
 *
 * Loaders parse a buffer, not a file, so the file reading stays separate
 * and a fuzzer can feed them bytes directly. This gives them one
 * sequential reader over the buffer whatever its compression, as zlib's
 * gzread does for files: bytes starting with the gzip magic (1F 8B) are
 * inflated, anything else is read as is (an IDX file starts with 00 00,
 * so the two cannot be confused).
 *
 * As gzip(1) does, concatenated gzip members read as one stream and zero
 * padding after the last member is ignored; any other bytes after it are
 * an error rather than silently dropped, since they mean the file is not
 * what it seems.
 */
#include <limits.h>

#include "data/internal.h"

/* The largest expansion deflate allows (zlib's FAQ: "the maximum
 * compression ratio of deflate is 1032:1"). Output not produced yet is
 * encoded in the input left, in the few bytes inflate has already taken
 * into its bit buffer (at most 8), or is one match held back (at most
 * 258 bytes). */
enum { DEFLATE_MAX_RATIO = 1032, INFLATE_MAX_HELD_BYTES = 8, INFLATE_MAX_PENDING = 258 };

static bool is_gzip(const uint8_t *p, size_t n) { return n >= 2 && p[0] == 0x1F && p[1] == 0x8B; }

bool gb__byte_reader_open(gb__byte_reader *r, const void *bytes, size_t n) {
    *r = (gb__byte_reader){.next = bytes, .left = n};
    if (!is_gzip(r->next, r->left)) return true;
    r->gzip = true;
    /* 16 + MAX_WBITS: a gzip wrapper, whose CRC-32 and length inflate checks. */
    if (inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory starting gzip decompression");
        return false;
    }
    r->inflating = true;
    return true;
}

void gb__byte_reader_close(gb__byte_reader *r) {
    if (r->inflating) inflateEnd(&r->z);
    r->inflating = false;
}

static int64_t read_plain(gb__byte_reader *r, void *dst, int64_t n) {
    size_t k = (uint64_t)n < r->left ? (size_t)n : r->left;
    memcpy(dst, r->next, k);
    r->next += k;
    r->left -= k;
    return (int64_t)k;
}

/* After a complete member: skips zero padding, then starts the next
 * member. false at the end of the data, or after an error (r->error). */
static bool start_next_member(gb__byte_reader *r) {
    while (r->left && *r->next == 0) r->next++, r->left--;
    if (!r->left) return false;
    if (!is_gzip(r->next, r->left)) {
        r->error = "bytes after the end of the gzip stream that are neither gzip data nor zero "
                   "padding";
        return false;
    }
    inflateReset(&r->z);
    r->member_ended = false;
    return true;
}

/* One inflate call into dst[0..n); the bytes produced, or -1 (r->error). */
static int64_t inflate_some(gb__byte_reader *r, uint8_t *dst, int64_t n) {
    r->z.next_in = (Bytef *)r->next;
    r->z.avail_in = r->left > UINT_MAX ? UINT_MAX : (uInt)r->left;
    r->z.next_out = dst;
    r->z.avail_out = n > (1 << 30) ? (1 << 30) : (uInt)n;
    int ret = inflate(&r->z, Z_NO_FLUSH);
    size_t used = (size_t)(r->z.next_in - r->next);
    r->next += used;
    r->left -= used;
    if (ret == Z_STREAM_END) r->member_ended = true;
    /* No progress with all input used: the data stop inside a member. */
    if (ret == Z_BUF_ERROR && !r->left) r->ended_early = true;
    if (ret != Z_OK && ret != Z_STREAM_END && !r->ended_early) {
        r->error = r->z.msg ? r->z.msg : zError(ret);
        return -1;
    }
    return r->z.next_out - dst;
}

static int64_t read_gzip(gb__byte_reader *r, uint8_t *dst, int64_t n) {
    int64_t got = 0;
    while (got < n && !r->ended_early) {
        if (r->member_ended && !start_next_member(r)) break;
        int64_t k = inflate_some(r, dst + got, n - got);
        if (k < 0) return -1;
        got += k;
    }
    return r->error ? -1 : got;
}

int64_t gb__byte_reader_read(gb__byte_reader *r, void *dst, int64_t n) {
    if (r->error) return -1;
    return r->gzip ? read_gzip(r, dst, n) : read_plain(r, dst, n);
}

uint64_t gb__byte_reader_max_left(const gb__byte_reader *r) {
    if (!r->gzip) return r->left;
    uint64_t held = (uint64_t)r->left + INFLATE_MAX_HELD_BYTES;
    if (held > (UINT64_MAX - INFLATE_MAX_PENDING) / DEFLATE_MAX_RATIO) return UINT64_MAX;
    return held * DEFLATE_MAX_RATIO + INFLATE_MAX_PENDING;
}
