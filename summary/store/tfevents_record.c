/* store/tfevents_record.c — the record framing of TensorBoard's event
 * files: length, masked CRC-32C of the length, data, masked CRC-32C of the
 * data (gb_tfevents.h). Every CRC is checked, and a record cut short at the
 * end of the buffer is told apart from a damaged one: the writer may have
 * been killed mid-record, or still be writing it. */
#include <stdio.h>
#include <string.h>

#include "gb_tfevents.h"

/* CRC-32C (Castagnoli, reflected 0x82F63B78), one table built once. */
static uint32_t crc_table[256];
static void build_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
}

uint32_t gb_crc32c(const void *data, size_t n) {
    if (!crc_table[1]) build_table();   /* idempotent: racing threads write the same words */
    const unsigned char *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t gb_tf_masked_crc(const void *data, size_t n) {
    uint32_t c = gb_crc32c(data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static uint64_t load_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void store_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++, v >>= 8) p[i] = (unsigned char)v;
}

gb_tf_status gb_tf_record_next(const unsigned char *buf, size_t len, size_t *offset,
                               const unsigned char **data, size_t *size, char *why,
                               size_t why_size) {
    size_t at = *offset;
    if (at >= len) return GB_TF_END;
    if (len - at < 12) {
        snprintf(why, why_size, "a record's header is cut short (%zu of 12 bytes)", len - at);
        return GB_TF_TORN;
    }
    uint64_t n = load_le(buf + at, 8);
    if ((uint32_t)load_le(buf + at + 8, 4) != gb_tf_masked_crc(buf + at, 8)) {
        snprintf(why, why_size, "the CRC of a record's length does not match");
        return GB_TF_CORRUPT;
    }
    if (n > len - at - 12 || len - at - 12 - n < 4) {
        snprintf(why, why_size, "a record of %llu bytes is cut short (%zu bytes follow its header)",
                 (unsigned long long)n, len - at - 12);
        return GB_TF_TORN;
    }
    const unsigned char *d = buf + at + 12;
    if ((uint32_t)load_le(d + n, 4) != gb_tf_masked_crc(d, (size_t)n)) {
        snprintf(why, why_size, "the CRC of a record's %llu data bytes does not match",
                 (unsigned long long)n);
        return GB_TF_CORRUPT;
    }
    *data = d;
    *size = (size_t)n;
    *offset = at + 16 + (size_t)n;
    return GB_TF_OK;
}

size_t gb_tf_record_put(unsigned char *out, size_t out_cap, size_t out_len, const void *data,
                        size_t size) {
    if (out_len > out_cap || out_cap - out_len < 16 || out_cap - out_len - 16 < size) return 0;
    unsigned char *p = out + out_len;
    store_le(p, size, 8);
    store_le(p + 8, gb_tf_masked_crc(p, 8), 4);
    if (size) memcpy(p + 12, data, size);
    store_le(p + 12 + size, gb_tf_masked_crc(p + 12, size), 4);
    return out_len + 16 + size;
}
