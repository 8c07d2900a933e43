/* store/utf8.c — the one UTF-8 decoder of the store and the programs on
 * top of it (gb_reader.h): the JSON the store parses, the graphs the
 * writer accepts, the parameters and responses of the server and the
 * `glassbox` program's terminal output all agree on what is valid text.
 * (The engine keeps its own check of names: it never depends on the
 * store.) */
#include "gb_reader.h"

size_t gb_utf8_decode(const unsigned char *s, size_t n, unsigned *cp) {
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

bool gb_utf8_valid(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned cp;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] < 0x80 ? 1 : gb_utf8_decode(u + i, n - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}
