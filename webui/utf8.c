/* utf8.c — decoding one UTF-8 sequence (utf8.h). */
#include "utf8.h"

size_t gb__utf8_decode(const unsigned char *s, size_t n, unsigned *cp) {
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t len;
    unsigned v;
    if ((s[0] & 0xe0) == 0xc0) len = 2, v = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0) len = 3, v = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0) len = 4, v = s[0] & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_cp[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}
