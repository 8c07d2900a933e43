/* core/name_check.c — names a person will select by: well-formed UTF-8,
 * no control characters, and short enough to be kept whole.
 *
 * A name the engine keeps in a fixed buffer and the dashboard selects by
 * (a function's, in the Traces and Graphs pages' ?function=) must arrive
 * there as given: cut short, two names could become one; with a control
 * character or a byte that is not UTF-8, the server's parameter check
 * refuses it, so the page could never select it. Refused when made. */
#include <stdio.h>

#include "core/internal.h"

/* Bytes of the UTF-8 sequence starting at s (1 to 4), or 0 when it is
 * not well formed (overlong, a surrogate, past U+10FFFF, cut short). */
static int utf8_length(const unsigned char *s) {
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n <= 1) return n;
    unsigned cp = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return cp >= 0x80 && cp < 0xA0 ? 0 : n; /* C1 controls */
}

const char *gb__name_problem(const char *name, size_t max_bytes, char *buf, size_t n) {
    size_t len = strlen(name);
    if (len > max_bytes) {
        snprintf(buf, n, "the name is %zu bytes; at most %zu are kept", len, max_bytes);
        return buf;
    }
    for (const unsigned char *p = (const unsigned char *)name; *p;) {
        int k = *p < 0x20 || *p == 0x7F ? 0 : utf8_length(p);
        if (!k) {
            snprintf(buf, n,
                     "the name has %s at byte %zu; names are UTF-8 text without control "
                     "characters",
                     *p < 0x80 ? "a control character" : "a byte that is not UTF-8",
                     (size_t)(p - (const unsigned char *)name));
            return buf;
        }
        p += k;
    }
    return NULL;
}

bool gb__name_check(const char *what, const char *name, size_t max_bytes) {
    char why[160];
    if (!gb__name_problem(name, max_bytes, why, sizeof why)) return true;
    gb__error(GB_ERR_VALUE, NULL, "%s: %s", what, why);
    return false;
}
