/* core/strings.c — the bytes of string tensors: who owns them, and moving them.
 *
 * A GB_STRING tensor's data is an array of gb_string (pointer, length),
 * fixed-size elements, so every op that only moves elements (Reshape,
 * Gather, Slice, Concat, Transpose, Select, ...) works on strings
 * unchanged: it copies the pairs and shares the bytes. That is safe
 * because the bytes sit in the memory scope of the op that made them, and
 * a result lives in the scope of its inputs or an inner one. Where a
 * value moves somewhere that outlives its bytes — gb_keep to the parent
 * scope, a function's outputs into the caller's scope, a constant into a
 * graph — gb__strings_pack copies the bytes there once, in one block.
 *
 * Ops that make new bytes collect them in a gb__strbuf (one malloc'd
 * buffer that grows) and place them in the current scope in one
 * allocation at the end: scopes align every allocation to 64 bytes, so
 * one allocation per string would waste most of the memory of short ones.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

/* Where every empty string points: never NULL, so memcpy of 0 bytes from
 * it is defined. */
const char gb__empty_bytes[1] = "";

int64_t gb__strings_total(const gb_string *s, int64_t n) {
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += s[i].len;
    return total;
}

void gb__strings_pack(gb_string *dst, const gb_string *src, int64_t n, char *blob) {
    for (int64_t i = 0; i < n; i++) {
        int64_t len = src[i].len;
        const char *from = src[i].data;
        if (len) memcpy(blob, from, (size_t)len);
        dst[i] = (gb_string){len ? blob : gb__empty_bytes, len};
        if (len) blob += len; /* blob is NULL when every string is empty */
    }
}

bool gb__strings_pack_in(struct gb_scope *s, gb_string *dst, const gb_string *src, int64_t n) {
    int64_t total = gb__strings_total(src, n);
    char *blob = total ? gb__scope_alloc_in(s, (size_t)total) : NULL;
    if (total && !blob) return false;
    gb__strings_pack(dst, src, n, blob);
    return true;
}

/* ---- building new strings ------------------------------------------------------------ */

bool gb__strbuf_add(gb__strbuf *b, const char *p, int64_t len) {
    if (len < 0 || (uint64_t)len > (uint64_t)INT64_MAX - (uint64_t)b->len) {
        gb__error(GB_ERR_VALUE, NULL, "a string of more than 2^63 bytes");
        return false;
    }
    if (b->len + len > b->cap) {
        int64_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len) cap = cap > INT64_MAX / 2 ? INT64_MAX : cap * 2;
        char *q = realloc(b->bytes, (size_t)cap);
        if (!q) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory building a %lld-byte string",
                      (long long)(b->len + len));
            return false;
        }
        b->bytes = q;
        b->cap = cap;
    }
    if (len) memcpy(b->bytes + b->len, p, (size_t)len);
    b->len += len;
    return true;
}

bool gb__strbuf_end_element(gb__strbuf *b, gb_string *out, int64_t i) {
    /* The offset goes into the data pointer's place for now: the buffer
     * may still move; gb__strbuf_finish turns it into a pointer. */
    out[i] = (gb_string){(const char *)(uintptr_t)b->mark, b->len - b->mark};
    b->mark = b->len;
    return true;
}

bool gb__strbuf_finish(gb__strbuf *b, gb_string *out, int64_t n) {
    char *blob = b->len ? gb__scope_alloc((size_t)b->len) : NULL;
    bool ok = !b->len || blob;
    if (ok) {
        if (b->len) memcpy(blob, b->bytes, (size_t)b->len);
        for (int64_t i = 0; i < n; i++) {
            uintptr_t off = (uintptr_t)out[i].data;
            out[i].data = out[i].len ? blob + off : gb__empty_bytes;
        }
    }
    gb__strbuf_free(b);
    return ok;
}

void gb__strbuf_free(gb__strbuf *b) {
    free(b->bytes);
    *b = (gb__strbuf){0};
}

/* ---- printing ---------------------------------------------------------------------- */

int gb__string_repr(const gb_string *s, char *buf, size_t n) {
    /* Python's bytes repr: b'...' with \\, \', \t, \n, \r and \xNN escapes. */
    size_t k = 0;
    int64_t need = 3;
#define PUT(c)                                    \
    do {                                          \
        if (k + 1 < n) buf[k] = (char)(c);        \
        k++;                                      \
    } while (0)
    PUT('b');
    PUT('\'');
    for (int64_t i = 0; i < s->len; i++) {
        unsigned char c = (unsigned char)s->data[i];
        const char *esc = c == '\\' ? "\\\\" : c == '\'' ? "\\'" : c == '\n' ? "\\n"
                        : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
        char hex[5];
        if (!esc && (c < 0x20 || c >= 0x7f)) {
            snprintf(hex, sizeof hex, "\\x%02x", c);
            esc = hex;
        }
        if (esc) {
            for (const char *e = esc; *e; e++) PUT(*e);
            need += (int64_t)strlen(esc);
        } else {
            PUT(c);
            need++;
        }
    }
    PUT('\'');
#undef PUT
    if (n) buf[k < n ? k : n - 1] = '\0';
    return (int)(need < INT32_MAX ? need : INT32_MAX);
}
