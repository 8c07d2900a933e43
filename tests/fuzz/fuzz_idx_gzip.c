/* fuzz_idx_gzip.c — the IDX parser's gzip path (data/byte_reader.c).
 *
 * The first byte chooses how the rest is used:
 *   odd   the rest is a gzip file as stored on disk, fed as is: the
 *         fuzzer mutates compressed bytes, headers, trailers, member
 *         boundaries and padding (seeds: real .gz IDX files);
 *   even  the rest is the IDX content, which the target compresses
 *         itself, as one gzip member or, at a point the first byte picks,
 *         two: the fuzzer explores IDX content behind valid compression.
 * What must hold: no crash, leak or undefined behaviour; a refused input
 * gets an I/O error naming it; and in the even mode decoding the
 * compressed bytes agrees with decoding the content plainly — both
 * refuse, or both give the same dtype, shape and bytes.
 */
#include <zlib.h>

#include "fuzz_engine.h"

/* n bytes as one gzip member appended at out + *len; false if it fails. */
static bool gzip_member(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *len) {
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out + *len;
    z.avail_out = (uInt)(cap - *len);
    int ret = deflate(&z, Z_FINISH);
    *len = cap - z.avail_out;
    deflateEnd(&z);
    return ret == Z_STREAM_END;
}

static bool same_tensor(gb_tensor *a, gb_tensor *b) {
    if (gb_tensor_dtype(a) != gb_tensor_dtype(b) || gb_rank(a) != gb_rank(b)) return false;
    for (int i = 0; i < gb_rank(a); i++)
        if (gb_dim(a, i) != gb_dim(b, i)) return false;
    return gb_nbytes(a) == gb_nbytes(b) && memcmp(gb_data(a), gb_data(b), gb_nbytes(a)) == 0;
}

/* The even mode: compress `content` (split at `split` into two members
 * when inside it), decode both ways, compare. */
static void check_against_plain(const uint8_t *content, size_t n, size_t split) {
    /* Content starting with the gzip magic decodes differently on purpose. */
    if (n >= 2 && content[0] == 0x1F && content[1] == 0x8B) return;
    size_t cap = 2 * (size_t)deflateBound(NULL, (uLong)n) + 64, len = 0;
    uint8_t *gz = malloc(cap);
    FUZZ_CHECK(gz != NULL, "out of memory");
    if (split > n) split = n;
    bool ok = gzip_member(content, split, gz, cap, &len) &&
              (split == n || gzip_member(content + split, n - split, gz, cap, &len));
    FUZZ_CHECK(ok, "compressing %zu bytes failed", n);

    gb_tensor *plain = gb_idx_decode(content, n, "input");
    gb_clear_error();
    gb_tensor *unzipped = gb_idx_decode(gz, len, "input");
    if (!unzipped) fuzz_check_refused("input");
    FUZZ_CHECK(!plain == !unzipped, "plain %s but gzip %s", plain ? "accepted" : "refused",
               unzipped ? "accepted" : "refused");
    FUZZ_CHECK(!plain || same_tensor(plain, unzipped), "gzip and plain decode differently");
    free(gz);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fuzz_begin();
    if (data[0] & 1) {
        if (!gb_idx_decode(data + 1, size - 1, "input")) fuzz_check_refused("input");
    } else {
        check_against_plain(data + 1, size - 1, (size_t)(data[0] >> 1) * 8);
    }
    fuzz_end();
    return 0;
}
