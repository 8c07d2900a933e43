/* json_check.h — whether bytes are one well-formed JSON text (RFC 8259),
 * for fuzz targets that check what a server sends.
 *
 * Strict where a browser's JSON.parse is: no trailing commas, no
 * comments, no bare NaN, no control characters in strings, escapes as
 * listed, and the whole input one value between optional white space.
 * Stricter where the server promises more (http_api.md): strings must be
 * valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF), and a \u escape must not leave half a surrogate pair.
 */
#ifndef GB_FUZZ_JSON_CHECK_H
#define GB_FUZZ_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct json_cursor {
    const unsigned char *p, *end;
    int depth;
} json_cursor;

#define JSON_MAX_DEPTH 64

static bool json_value(json_cursor *c);

static void json_ws(json_cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool json_eat(json_cursor *c, char ch) {
    json_ws(c);
    if (c->p == c->end || *c->p != (unsigned char)ch) return false;
    c->p++;
    return true;
}

static bool json_literal(json_cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n)) return false;
    c->p += n;
    return true;
}

static bool json_digits(json_cursor *c) {
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    return c->p > start;
}

static bool json_number(json_cursor *c) {
    if (c->p < c->end && *c->p == '-') c->p++;
    if (c->p < c->end && *c->p == '0') c->p++;
    else if (!json_digits(c)) return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!json_digits(c)) return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
        if (!json_digits(c)) return false;
    }
    return true;
}

static int json_hex4(const unsigned char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int d = s[i] >= '0' && s[i] <= '9'   ? s[i] - '0'
                : s[i] >= 'a' && s[i] <= 'f' ? s[i] - 'a' + 10
                : s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 10
                                             : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* One \u escape (after the backslash, at the 'u'): a whole code point,
 * a surrogate pair taken together. */
static bool json_unicode(json_cursor *c) {
    if (c->end - c->p < 5) return false;
    int cp = json_hex4(c->p + 1);
    c->p += 5;
    if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff)) return false;
    if (cp < 0xd800 || cp > 0xdbff) return true;
    if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u') return false;
    int lo = json_hex4(c->p + 2);
    c->p += 6;
    return lo >= 0xdc00 && lo <= 0xdfff;
}

/* One UTF-8 sequence of 2 to 4 bytes, at its lead byte. */
static bool json_utf8(json_cursor *c) {
    unsigned char b = *c->p;
    int n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0 || c->end - c->p <= n) return false;
    unsigned cp = b & (0x3f >> n);
    for (int i = 1; i <= n; i++) {
        if ((c->p[i] & 0xc0) != 0x80) return false;
        cp = cp << 6 | (c->p[i] & 0x3fu);
    }
    static const unsigned least[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    c->p += n + 1;
    return true;
}

static bool json_string(json_cursor *c) {
    if (!json_eat(c, '"')) return false;
    while (c->p < c->end && *c->p != '"') {
        unsigned char b = *c->p;
        if (b < 0x20) return false;
        if (b >= 0x80) {
            if (!json_utf8(c)) return false;
        } else if (b == '\\') {
            if (++c->p == c->end) return false;
            if (*c->p == 'u') {
                if (!json_unicode(c)) return false;
            } else if (*c->p && strchr("\"\\/bfnrt", *c->p)) {
                c->p++;
            } else {
                return false;
            }
        } else {
            c->p++;
        }
    }
    return json_eat(c, '"');
}

/* Members (object) or elements (array) up to the closing bracket. */
static bool json_container(json_cursor *c, bool object) {
    char close = object ? '}' : ']';
    if (++c->depth > JSON_MAX_DEPTH) return false;
    if (!json_eat(c, close)) {
        do {
            if (object && (!json_string(c) || !json_eat(c, ':'))) return false;
            if (!json_value(c)) return false;
        } while (json_eat(c, ','));
        if (!json_eat(c, close)) return false;
    }
    c->depth--;
    return true;
}

static bool json_value(json_cursor *c) {
    json_ws(c);
    if (c->p == c->end) return false;
    switch (*c->p) {
    case '{': c->p++; return json_container(c, true);
    case '[': c->p++; return json_container(c, false);
    case '"': return json_string(c);
    case 't': return json_literal(c, "true");
    case 'f': return json_literal(c, "false");
    case 'n': return json_literal(c, "null");
    default: return json_number(c);
    }
}

/* Whether s[0..n) is exactly one JSON value, white space around it allowed. */
static bool json_valid(const char *s, size_t n) {
    json_cursor c = {(const unsigned char *)s, (const unsigned char *)s + n, 0};
    if (!json_value(&c)) return false;
    json_ws(&c);
    return c.p == c.end;
}

#endif
