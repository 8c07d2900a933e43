/* data/npy.c — NumPy's .npy files, read and written: how tensors travel
 * between glassbox and Python (`glassbox saved-model run` takes its inputs
 * and writes its outputs this way).
 *
 * A .npy file is the magic "\x93NUMPY", a major and minor version, the
 * header's length (2 bytes in version 1, 4 in versions 2 and 3), the
 * header — a Python dict literal {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), } padded with spaces to a multiple of 64 and ended by
 * '\n' — then the data, row-major. Only what glassbox's dtypes can hold
 * is read (float32/64, int32/64, uint8, bool, little-endian or one byte
 * wide, C order; byte strings 'S' and unicode strings 'U' as string
 * tensors); anything else is refused by name. The header parser
 * takes the dict's three keys in any order, as NumPy writes them in
 * different orders across versions, and nothing else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"
#include "data/internal.h"
#include "ops/strings_internal.h"

static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static const struct {
    const char *descr;
    gb_dtype dtype;
} descrs[] = {
    {"<f4", GB_F32}, {"<f8", GB_F64}, {"<i4", GB_I32}, {"<i8", GB_I64},
    {"|u1", GB_U8},  {"<u1", GB_U8},  {"|b1", GB_BOOL},
};

__attribute__((format(printf, 2, 3)))
static gb_tensor *bad(const char *name, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_IO, NULL, "%s: %s", name, msg);
    return NULL;
}

/* ---- the header dict ---------------------------------------------------------------------- */

typedef struct header {
    const char *p, *end;
    bool has_descr, has_order, has_shape;
    gb_dtype dtype;
    char text;        /* strings: 'S' (bytes) or 'U' (UTF-32LE code points); else 0 */
    int64_t width;    /* strings: bytes or code points per element */
    int rank;
    int64_t shape[GB_MAX_RANK];
} header;

/* NumPy's fixed-width strings, "|S5" or "<U5" ('U' is four bytes a code
 * point, so only little-endian); false when descr is no such dtype. */
static bool string_descr(header *h, const char *descr) {
    if (!((descr[0] == '|' && descr[1] == 'S') || ((descr[0] == '<' || descr[0] == '|') && descr[1] == 'U')))
        return false;
    int64_t w = 0;
    const char *p = descr + 2;
    for (; *p >= '0' && *p <= '9' && w < (INT64_C(1) << 32); p++) w = w * 10 + (*p - '0');
    if (*p || p == descr + 2) return false;
    h->text = descr[1];
    h->width = w;
    h->dtype = GB_STRING;
    return true;
}

static void skip_space(header *h) {
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t')) h->p++;
}

static bool eat(header *h, char c) {
    skip_space(h);
    if (h->p < h->end && *h->p == c) return h->p++, true;
    return false;
}

/* A quoted Python string into buf. */
static bool quoted(header *h, char *buf, size_t n) {
    skip_space(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return false;
    char q = *h->p++;
    size_t len = 0;
    while (h->p < h->end && *h->p != q) {
        if (len + 1 >= n) return false;
        buf[len++] = *h->p++;
    }
    buf[len] = '\0';
    return h->p < h->end && h->p++;
}

static bool word(header *h, const char *w) {
    skip_space(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) < n || strncmp(h->p, w, n) != 0) return false;
    h->p += n;
    return true;
}

/* (d0, d1, ...) with an optional trailing comma; () is a scalar. */
static bool shape_tuple(header *h) {
    if (!eat(h, '(')) return false;
    h->rank = 0;
    while (!eat(h, ')')) {
        skip_space(h);
        if (h->rank == GB_MAX_RANK || h->p >= h->end || *h->p < '0' || *h->p > '9') return false;
        int64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > (INT64_C(1) << 40)) return false;
            v = v * 10 + (*h->p++ - '0');
        }
        h->shape[h->rank++] = v;
        if (!eat(h, ',')) {
            if (!eat(h, ')')) return false;
            break;
        }
    }
    return true;
}

static const char *read_entry(header *h) {
    char key[32], descr[16];
    if (!quoted(h, key, sizeof key) || !eat(h, ':')) return "a key and ':' were expected";
    if (strcmp(key, "descr") == 0) {
        if (h->has_descr || !quoted(h, descr, sizeof descr)) return "'descr' must be a string, once";
        size_t i = 0, n = sizeof descrs / sizeof descrs[0];
        while (i < n && strcmp(descrs[i].descr, descr) != 0) i++;
        if (i == n && string_descr(h, descr)) return h->has_descr = true, NULL;
        if (i == n)
            return "its dtype is not one glassbox holds (float32/64, int32/64, uint8, bool, "
                   "byte strings 'S', little-endian unicode strings 'U')";
        h->dtype = descrs[i].dtype;
        return h->has_descr = true, NULL;
    }
    if (strcmp(key, "fortran_order") == 0) {
        if (h->has_order) return "'fortran_order' appears twice";
        if (word(h, "True")) return "Fortran (column-major) order is not read; save with order='C'";
        if (!word(h, "False")) return "'fortran_order' must be True or False";
        return h->has_order = true, NULL;
    }
    if (strcmp(key, "shape") == 0) {
        if (h->has_shape || !shape_tuple(h)) return "'shape' must be a tuple of at most 8 sizes, once";
        return h->has_shape = true, NULL;
    }
    return "the header has a key other than 'descr', 'fortran_order' and 'shape'";
}

static const char *parse_header(header *h) {
    if (!eat(h, '{')) return "the header is not a dict";
    while (!eat(h, '}')) {
        const char *why = read_entry(h);
        if (why) return why;
        if (!eat(h, ',')) {
            if (!eat(h, '}')) return "',' or '}' was expected in the header";
            break;
        }
    }
    if (!h->has_descr || !h->has_order || !h->has_shape)
        return "the header lacks 'descr', 'fortran_order' or 'shape'";
    skip_space(h);
    return h->p < h->end && *h->p == '\n' ? NULL : "the header does not end with a newline";
}

/* ---- reading and writing --------------------------------------------------------------------- */

/* count fixed-width strings at d as a string tensor: NumPy drops a
 * string's trailing NULs ('S') or NUL code points ('U') when it reads one,
 * and so does this; 'U' code points become UTF-8. */
static gb_tensor *decode_strings(const header *h, const unsigned char *d, uint64_t count,
                                 const char *name) {
    uint64_t elem = h->text == 'U' ? 4 * (uint64_t)h->width : (uint64_t)h->width;
    gb_string *e = malloc((size_t)(count ? count : 1) * sizeof *e);
    char *utf8 = h->text == 'U' ? malloc((size_t)(count * (uint64_t)h->width * 4 + 1)) : NULL;
    if (!e || (h->text == 'U' && !utf8)) {
        free(e), free(utf8);
        return bad(name, "out of memory for %llu strings", (unsigned long long)count);
    }
    char *at = utf8;
    gb_tensor *t = NULL;
    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *p = d + i * elem;
        int64_t len = h->width;
        if (h->text == 'S') {
            while (len > 0 && !p[len - 1]) len--;
            e[i] = (gb_string){(const char *)p, len};
            continue;
        }
        uint32_t cp = 0;
        while (len > 0 && !(cp = p[4 * (len - 1)] | (uint32_t)p[4 * len - 3] << 8 |
                                 (uint32_t)p[4 * len - 2] << 16 | (uint32_t)p[4 * len - 1] << 24))
            len--;
        e[i].data = at;
        for (int64_t k = 0; k < len; k++) {
            const unsigned char *q = p + 4 * k;
            cp = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                bad(name, "element %llu holds %#x at character %lld, which is no Unicode code point",
                    (unsigned long long)i, (unsigned)cp, (long long)k);
                goto done;
            }
            at += gb__utf8_put((int32_t)cp, at);
        }
        e[i].len = at - e[i].data;
    }
    t = gb_strings_from(e, h->rank, h->shape);
done:
    free(e);
    free(utf8);
    return t;
}

gb_tensor *gb_npy_decode(const void *data, size_t size, const char *name) {
    if (!gb_ok()) return NULL;
    name = name ? name : ".npy data";
    const unsigned char *d = data;
    if (!d || size < 10 || memcmp(d, MAGIC, 6) != 0) return bad(name, "not a .npy file (no \\x93NUMPY magic)");
    if (d[6] < 1 || d[6] > 3) return bad(name, ".npy format version %d.%d is not read (1 to 3)", d[6], d[7]);
    size_t at = d[6] == 1 ? 10 : 12;
    if (size < at) return bad(name, "truncated header");
    uint64_t hlen = d[8] | (uint64_t)d[9] << 8;
    if (d[6] > 1) hlen |= (uint64_t)d[10] << 16 | (uint64_t)d[11] << 24;
    if (hlen > size - at) return bad(name, "truncated header (%llu bytes announced)", (unsigned long long)hlen);
    header h = {.p = (const char *)d + at, .end = (const char *)d + at + hlen};
    const char *why = parse_header(&h);
    if (why) return bad(name, "%s", why);
    uint64_t count = 1, avail = size - at - hlen;
    uint64_t elem = !h.text          ? gb_dtype_size(h.dtype)
                    : h.text == 'U' ? 4 * (uint64_t)h.width
                                    : (uint64_t)h.width;
    /* Past a zero dim the data's length bounds nothing: [0, 2^40, 2^40]
     * holds no element, and a tensor refuses it as its strides would wrap. */
    const char *unit;
    if (!gb__shape_fits(h.rank, h.shape, gb_dtype_size(h.dtype), &unit))
        return bad(name, "its shape has more than 2^63 %s", unit);
    for (int i = 0; i < h.rank; i++) {
        if (h.shape[i] && count > avail / (uint64_t)h.shape[i]) return bad(name, "truncated data");
        count *= (uint64_t)h.shape[i];
    }
    if ((elem && count > avail / elem) || count * elem != avail)
        return bad(name, "%s data of shape with %llu elements needs %llu bytes, the file has %llu",
                   gb_dtype_name(h.dtype), (unsigned long long)count,
                   (unsigned long long)(count * elem), (unsigned long long)avail);
    if (h.text) return decode_strings(&h, d + at + hlen, count, name);
    return gb_tensor_from(h.dtype, d + at + hlen, h.rank, h.shape);
}

gb_tensor *gb_npy_read(const char *path) {
    if (!gb_ok()) return NULL;
    size_t size = 0;
    void *bytes = gb__file_read(path, "a .npy file", &size);
    if (!bytes) return NULL;
    gb_tensor *t = gb_npy_decode(bytes, size, path);
    free(bytes);
    return t;
}

static const char *descr_of(gb_dtype dt) {
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (descrs[i].dtype == dt) return descrs[i].descr;
    return NULL;
}

bool gb_npy_write(const char *path, gb_tensor *t) {
    if (!gb_ok()) return false;
    if (!path || !t) return gb__error(GB_ERR_VALUE, NULL, "gb_npy_write: NULL %s", t ? "path" : "tensor"), false;
    /* strings as NumPy's bytes 'S' of the longest one's width, NUL-padded
     * (so, as in NumPy, trailing NULs of a string do not come back) */
    bool text = gb_tensor_dtype(t) == GB_STRING;
    const gb_string *s = text ? gb_data_strings(t) : NULL;
    int64_t width = 1;
    for (int64_t i = 0; text && i < gb_size(t); i++) width = s[i].len > width ? s[i].len : width;
    char descr[32];
    if (text)
        snprintf(descr, sizeof descr, "|S%lld", (long long)width);
    else
        snprintf(descr, sizeof descr, "%s", descr_of(gb_tensor_dtype(t)));
    char dict[512], shape[256] = "";
    size_t n = 0;
    for (int i = 0; i < gb_rank(t); i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%lld, ", (long long)gb_shape(t)[i]);
    if (n) shape[n - (gb_rank(t) > 1 ? 2 : 1)] = '\0';   /* (2, 3), and (2,) */
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                       descr, shape);
    int padded = (10 + len + 1 + 63) / 64 * 64 - 10;   /* data starts 64-byte aligned */
    memset(dict + len, ' ', (size_t)(padded - len - 1));
    dict[padded - 1] = '\n';
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)padded, (unsigned char)(padded >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f) return gb__error(GB_ERR_IO, NULL, "%s: cannot create the file: %s", path, strerror(errno)), false;
    size_t bytes = (size_t)gb_size(t) * gb_dtype_size(gb_tensor_dtype(t));
    bool ok = fwrite(head, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)padded, f) == (size_t)padded &&
              (text || fwrite(gb_data(t), 1, bytes, f) == bytes);
    for (int64_t i = 0; text && ok && i < gb_size(t); i++) {
        ok = fwrite(s[i].data, 1, (size_t)s[i].len, f) == (size_t)s[i].len;
        for (int64_t k = s[i].len; ok && k < width; k++) ok = fputc(0, f) == 0;
    }
    ok = fclose(f) == 0 && ok;
    if (!ok) gb__error(GB_ERR_IO, NULL, "%s: cannot write the file: %s", path, strerror(errno));
    return ok;
}
