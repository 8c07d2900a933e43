/* ckpt_crcs.h — for fuzz targets whose input is a checkpoint container
 * (io/checkpoint_file.c): rewrites the header's and the index's CRC-32s
 * to match the bytes, so a mutation that a CRC would refuse at the door
 * reaches the parser behind it.
 *
 * Targets apply it to inputs of even length only: odd lengths keep the
 * CRC checks themselves in play.
 */
#ifndef GB_FUZZ_CKPT_CRCS_H
#define GB_FUZZ_CKPT_CRCS_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

static inline void ckpt_put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t ckpt_get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The index CRC (bytes 32..35) and the header CRC (36..39) of d[size]. */
static inline void ckpt_fix_crcs(unsigned char *d, size_t size) {
    if (size < 40) return;
    uint64_t at = ckpt_get64(d + 16), n = ckpt_get64(d + 24);
    if (at <= size && n <= size - at)
        ckpt_put32(d + 32, (uint32_t)crc32(crc32(0L, Z_NULL, 0), d + at, (uInt)n));
    ckpt_put32(d + 36, (uint32_t)crc32(crc32(0L, Z_NULL, 0), d, 36));
}

#endif
