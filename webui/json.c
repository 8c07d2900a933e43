/* json.c — the bounded JSON writer behind every API response (gb_json.h). */
#include "gb_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void gb__json_init(gb__json *j, size_t limit) {
    memset(j, 0, sizeof *j);
    j->limit = limit;
}

void gb__json_free(gb__json *j) {
    free(j->buf);
    j->buf = NULL;
    j->len = j->cap = 0;
}

/* Makes room for n more bytes (plus the final NUL); false once failed. */
static bool reserve(gb__json *j, size_t n) {
    if (j->failed) return false;
    if (j->len + n + 1 > j->limit) {
        j->failed = true;
        return false;
    }
    if (j->len + n + 1 <= j->cap) return true;
    size_t cap = j->cap ? j->cap : 4096;
    while (cap < j->len + n + 1) cap *= 2;
    if (cap > j->limit) cap = j->limit;
    char *p = realloc(j->buf, cap);
    if (!p) {
        j->failed = true;
        return false;
    }
    j->buf = p;
    j->cap = cap;
    return true;
}

static void put(gb__json *j, const char *s, size_t n) {
    if (!reserve(j, n)) return;
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

/* Emits the separator a new value needs at the current level. */
static void begin_value(gb__json *j) {
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->need_comma[j->depth]) put(j, ",", 1);
    j->need_comma[j->depth] = true;
}

static void open_level(gb__json *j, char c) {
    begin_value(j);
    put(j, &c, 1);
    if (j->depth + 1 >= GB__JSON_MAX_DEPTH) {
        j->failed = true;
        return;
    }
    j->need_comma[++j->depth] = false;
}

static void close_level(gb__json *j, char c) {
    if (j->depth <= 0) {
        j->failed = true;
        return;
    }
    j->depth--;
    put(j, &c, 1);
}

void gb__json_obj(gb__json *j) { open_level(j, '{'); }
void gb__json_obj_end(gb__json *j) { close_level(j, '}'); }
void gb__json_arr(gb__json *j) { open_level(j, '['); }
void gb__json_arr_end(gb__json *j) { close_level(j, ']'); }

/* The escape of code point cp when a JSON string must not hold it as is
 * (into u, at least 7 bytes), or NULL. Control characters, C1 included
 * (a terminal showing the raw JSON would act on them), are \u escapes;
 * '<' too, so a string can never close a <script> if embedded. */
static const char *escape_of(unsigned cp, char *u) {
    static const char hex[] = "0123456789abcdef";
    switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '<': return "\\u003c";
    }
    if (!gb__is_control(cp)) return NULL;
    snprintf(u, 7, "\\u00%c%c", hex[cp >> 4], hex[cp & 15]);
    return u;
}

/* Writes s as a quoted JSON string. Stored names are emitted as stored,
 * but the result is always valid UTF-8: a byte that is not UTF-8 becomes
 * U+FFFD (the server only accepts valid UTF-8 parameters, so such a name
 * could not be asked for anyway). */
static void quoted(gb__json *j, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    put(j, "\"", 1);
    size_t run = 0;   /* bytes before i that pass as they are */
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t len = gb_utf8_decode(p + i, n - i, &cp);
        char u[8];
        const char *esc = len ? escape_of(cp, u) : "\\ufffd";
        if (!esc) {
            run += len;
            i += len;
            continue;
        }
        put(j, s + i - run, run);
        run = 0;
        put(j, esc, strlen(esc));
        i += len ? len : 1;
    }
    put(j, s + n - run, run);
    put(j, "\"", 1);
}

void gb__json_key(gb__json *j, const char *key) {
    begin_value(j);
    quoted(j, key, strlen(key));
    put(j, ":", 1);
    j->after_key = true;
}

void gb__json_strn(gb__json *j, const char *s, size_t n) {
    begin_value(j);
    if (!s) put(j, "null", 4);
    else quoted(j, s, n);
}

void gb__json_str(gb__json *j, const char *s) { gb__json_strn(j, s, s ? strlen(s) : 0); }

void gb__json_int(gb__json *j, int64_t v) {
    /* Digits by hand: integers (steps, counts) are most of a response. */
    char t[24], *p = t + sizeof t;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    begin_value(j);
    put(j, p, (size_t)(t + sizeof t - p));
}

void gb__json_num(gb__json *j, double v) {
    if (isnan(v)) {
        gb__json_str(j, "NaN");
        return;
    }
    if (isinf(v)) {
        gb__json_str(j, v > 0 ? "Infinity" : "-Infinity");
        return;
    }
    /* The shortest text that reads back exactly. Training values are
     * usually float32 widened to double: those are written as the shortest
     * float32 text ("0.1", not "0.10000000149011612"), which still reads
     * back to the same float32; any other double gets up to 17 digits.
     * Whole numbers print as integers ("50", not "5e+01"). */
    if (v == 0 && signbit(v)) {
        begin_value(j);
        put(j, "-0", 2);
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        gb__json_int(j, (int64_t)v);
        return;
    }
    /* %g drops trailing zeros, so the first precision that round-trips is
     * the shortest text: floats need 6..9 digits. A double that 15 digits
     * do not capture gets 17 at once (16 rarely helps; formatting numbers
     * is most of the cost of a series response). */
    static const char *const formats[] = {"%.6g", "%.7g", "%.8g", "%.9g", "%.15g", "%.17g"};
    bool is_float = (double)(float)v == v;
    char t[40];
    int n = 0;
    for (size_t k = is_float ? 0 : 4; k < sizeof formats / sizeof formats[0]; k++) {
        n = snprintf(t, sizeof t, formats[k], v);
        if (k + 1 == sizeof formats / sizeof formats[0]) break;
        double back = strtod(t, NULL);
        if (is_float ? (float)back == (float)v : back == v) break;
    }
    begin_value(j);
    put(j, t, (size_t)n);
}

void gb__json_time(gb__json *j, double seconds) {
    if (!isfinite(seconds)) {
        gb__json_num(j, seconds);
        return;
    }
    char t[40];
    int n = snprintf(t, sizeof t, "%.6f", seconds);
    begin_value(j);
    put(j, t, (size_t)n);
}

void gb__json_bool(gb__json *j, bool v) {
    begin_value(j);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

bool gb__json_raw(gb__json *j, const char *s, size_t n) {
    /* Checked JSON from the store's parser; its strings may still hold
     * bytes that are not UTF-8, which a response must not. */
    if (!gb_utf8_valid(s, n)) return false;
    begin_value(j);
    put(j, s, n);
    return true;
}

void gb__json_null(gb__json *j) {
    begin_value(j);
    put(j, "null", 4);
}

char *gb__json_finish(gb__json *j, size_t *len) {
    if (j->failed || j->depth != 0 || !reserve(j, 0)) {
        gb__json_free(j);
        return NULL;
    }
    j->buf[j->len] = '\0';
    char *out = j->buf;
    *len = j->len;
    j->buf = NULL;
    return out;
}
