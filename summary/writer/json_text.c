/* writer/json_text.c — the string builder behind the JSON details the
 * writer stores (numerics alerts, traces).
 *
 * Bounded (into a caller's buffer: an alert's detail has a known size) or
 * growing (on the heap: a trace's detail carries whole graphs as text).
 * Either way a write that cannot complete marks the text failed instead
 * of leaving half a JSON value: callers store nothing then.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "writer/internal.h"

static bool grow(gb__jtext *t, size_t need) {
    if (!t->grows || t->failed) return false;
    size_t cap = t->cap ? 2 * t->cap : 4096;
    while (cap < need) cap *= 2;
    char *buf = realloc(t->buf, cap);
    if (!buf) return false;
    t->buf = buf;
    t->cap = cap;
    return true;
}

void gb__jtext_put(gb__jtext *t, const char *fmt, ...) {
    for (;;) {
        if (t->failed) return;
        va_list ap;
        va_start(ap, fmt);
        int n = t->cap > t->len ? vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap) : -2;
        va_end(ap);
        if (n == -1) {
            t->failed = true;
            return;
        }
        if (n >= 0 && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        /* Did not fit: grow and write again, or fail. */
        va_start(ap, fmt);
        int need = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (need < 0 || !grow(t, t->len + (size_t)need + 1)) {
            t->failed = true;
            return;
        }
    }
}

void gb__jtext_string(gb__jtext *t, const char *s) {
    gb__jtext_put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            gb__jtext_put(t, "\\%c", *p);
        else if (*p < 0x20)
            gb__jtext_put(t, "\\u%04x", *p);
        else
            gb__jtext_put(t, "%c", *p);
    }
    gb__jtext_put(t, "\"");
}

void gb__shortest_double(char *buf, size_t n, double v) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v || isnan(v)) break;
    }
}

void gb__jtext_shortest(gb__jtext *t, double v) {
    char text[40];
    gb__shortest_double(text, sizeof text, v);
    if (isfinite(v))
        gb__jtext_put(t, "%s", text);
    else
        gb__jtext_put(t, "null");
}

void gb__jtext_number(gb__jtext *t, double v) {
    if (isfinite(v))
        gb__jtext_put(t, "%.17g", v);
    else
        gb__jtext_put(t, "null");
}

void gb__jtext_shape(gb__jtext *t, int rank, const int64_t *shape) {
    gb__jtext_put(t, "[");
    for (int i = 0; i < rank; i++) gb__jtext_put(t, "%s%lld", i ? "," : "", (long long)shape[i]);
    gb__jtext_put(t, "]");
}
