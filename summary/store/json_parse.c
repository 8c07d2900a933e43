/* store/json_parse.c — a small strict pull parser for the JSON details the
 * writer stores (numerics alerts, traces).
 *
 * Readers get typed fields rather than stored text, so the dashboard
 * re-emits them with its own JSON writer and a row written by another
 * tool or damaged on disk can never make a response invalid: known fields
 * are read with their types checked, unknown ones skipped (and checked),
 * anything malformed rejects the whole detail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/json_parse.h"

/* ---- tokens --------------------------------------------------------------- */

void gb__jp_ws(gb__jp *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

/* Consumes c (after white space) if it is next. */
bool gb__jp_eat(gb__jp *ps, char c) {
    gb__jp_ws(ps);
    if (*ps->p != c) return false;
    ps->p++;
    return true;
}

bool gb__jp_word(gb__jp *ps, const char *w) {
    gb__jp_ws(ps);
    size_t n = strlen(w);
    if (strncmp(ps->p, w, n)) return false;
    ps->p += n;
    return true;
}

static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Appends code point cp as UTF-8 to out[*len] (dropped past size - 1). */
static void put_utf8(char *out, size_t size, size_t *len, unsigned cp) {
    unsigned char b[4];
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0, 0xc0, 0xe0, 0xf0};
    for (size_t i = n; i-- > 1;) {
        b[i] = (unsigned char)(0x80 | (cp & 0x3f));
        cp >>= 6;
    }
    b[0] = (unsigned char)(lead[n] | cp);
    for (size_t i = 0; i < n; i++, (*len)++)
        if (out && *len + 1 < size) out[*len] = (char)b[i];
}

/* One escape after the backslash; returns the code point or -1. */
static long escape(gb__jp *ps) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = *ps->p ? strchr(from, *ps->p) : NULL;
    if (e) {
        ps->p++;
        return to[e - from];
    }
    if (*ps->p != 'u') return -1;
    long cp = hex4(ps->p + 1);
    if (cp < 0) return -1;
    ps->p += 5;
    if (cp >= 0xdc00 && cp <= 0xdfff) return -1;   /* a lone low surrogate */
    if (cp >= 0xd800 && cp <= 0xdbff) {             /* a pair */
        int lo = ps->p[0] == '\\' && ps->p[1] == 'u' ? hex4(ps->p + 2) : -1;
        if (lo < 0xdc00 || lo > 0xdfff) return -1;
        ps->p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    return cp == 0 ? -1 : cp;   /* no NUL inside C strings */
}

/* A string into out (NULL: skipped). Returns its decoded length in bytes
 * (out holds at most size - 1 of them, NUL-terminated), or -1 if it is
 * not a valid JSON string. */
long gb__jp_string(gb__jp *ps, char *out, size_t size) {
    if (!gb__jp_eat(ps, '"')) return -1;
    size_t len = 0;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') break;
        if (c < 0x20) return -1;   /* the end of the text, or a raw control character */
        ps->p++;
        if (c == '\\') {
            long cp = escape(ps);
            if (cp < 0) return -1;
            put_utf8(out, size, &len, (unsigned)cp);
        } else {
            /* JSON text is UTF-8: a stray byte rejects the string. The
             * decoder stops at the text's NUL, a continuation byte it is not. */
            const char *at = ps->p - 1;
            unsigned cp;
            size_t k = c < 0x80 ? 1 : gb_utf8_decode((const unsigned char *)at, 4, &cp);
            if (!k) return -1;
            for (size_t b = 0; b < k; b++, len++)
                if (out && len + 1 < size) out[len] = at[b];
            ps->p = at + k;
        }
    }
    ps->p++;
    if (out && size) out[len < size ? len : size - 1] = '\0';
    return (long)len;
}

/* A string that must fit out entirely. */
bool gb__jp_string_into(gb__jp *ps, char *out, size_t size) {
    long n = gb__jp_string(ps, out, size);
    return n >= 0 && (size_t)n < size;
}

/* A JSON number (strict grammar); null reads as NaN when allow_null. */
bool gb__jp_number(gb__jp *ps, double *out, bool allow_null) {
    if (allow_null && gb__jp_word(ps, "null")) {
        *out = NAN;
        return true;
    }
    gb__jp_ws(ps);
    const char *s = ps->p, *q = s;
#define DIGITS(q) while (*(q) >= '0' && *(q) <= '9') (q)++
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') DIGITS(q);
    else return false;
    if (*q == '.') {
        if (*++q < '0' || *q > '9') return false;
        DIGITS(q);
    }
    if (*q == 'e' || *q == 'E') {
        if (*++q == '+' || *q == '-') q++;
        if (*q < '0' || *q > '9') return false;
        DIGITS(q);
    }
#undef DIGITS
    char buf[64];
    if ((size_t)(q - s) >= sizeof buf) return false;
    memcpy(buf, s, (size_t)(q - s));
    buf[q - s] = '\0';
    *out = strtod(buf, NULL);
    ps->p = q;
    return true;
}

/* An integer in [lo, hi] (whole numbers only; exact below 2^53). */
bool gb__jp_integer(gb__jp *ps, int64_t lo, int64_t hi, int64_t *out) {
    double v;
    if (!gb__jp_number(ps, &v, false) || v != floor(v) || v < (double)lo || v > (double)hi ||
        fabs(v) > 9007199254740992.0)
        return false;
    *out = (int64_t)v;
    return true;
}

bool gb__jp_boolean(gb__jp *ps, gb_tristate *out) {
    if (gb__jp_word(ps, "true")) *out = GB_TRISTATE_YES;
    else if (gb__jp_word(ps, "false")) *out = GB_TRISTATE_NO;
    else return false;
    return true;
}

/* ---- structure ---------------------------------------------------------------- */

bool gb__jp_skip_value(gb__jp *ps);

bool gb__jp_object(gb__jp *ps, gb__jp_member_fn member, void *ctx) {
    if (!gb__jp_eat(ps, '{')) return false;
    if (gb__jp_eat(ps, '}')) return true;
    do {
        char key[32];
        long n = gb__jp_string(ps, key, sizeof key);
        if (n < 0 || !gb__jp_eat(ps, ':')) return false;
        /* A key too long for the buffer is no field we know. */
        if (!((size_t)n < sizeof key ? member(ps, key, ctx) : gb__jp_skip_value(ps))) return false;
    } while (gb__jp_eat(ps, ','));
    return gb__jp_eat(ps, '}');
}

bool gb__jp_array(gb__jp *ps, gb__jp_element_fn element, void *ctx) {
    if (!gb__jp_eat(ps, '[')) return false;
    if (gb__jp_eat(ps, ']')) return true;
    size_t i = 0;
    do
        if (!element(ps, i++, ctx)) return false;
    while (gb__jp_eat(ps, ','));
    return gb__jp_eat(ps, ']');
}

static bool skip_member(gb__jp *ps, const char *key, void *ctx) {
    (void)key, (void)ctx;
    return gb__jp_skip_value(ps);
}

static bool skip_element(gb__jp *ps, size_t i, void *ctx) {
    (void)i, (void)ctx;
    return gb__jp_skip_value(ps);
}

bool gb__jp_skip_value(gb__jp *ps) {
    gb__jp_ws(ps);
    double d;
    switch (*ps->p) {
    case '"': return gb__jp_string(ps, NULL, 0) >= 0;
    case '{':
    case '[': {
        if (++ps->depth > GB__JP_MAX_DEPTH) return false;
        bool ok = *ps->p == '{' ? gb__jp_object(ps, skip_member, NULL)
                                    : gb__jp_array(ps, skip_element, NULL);
        ps->depth--;
        return ok;
    }
    case 't': return gb__jp_word(ps, "true");
    case 'f': return gb__jp_word(ps, "false");
    case 'n': return gb__jp_word(ps, "null");
    default: return gb__jp_number(ps, &d, false);
    }
}

