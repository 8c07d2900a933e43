/* store/numerics_detail.c — reads the JSON detail stored with a numerics
 * alert (gb_numerics_detail_parse).
 *
 * The summary writer stores what has no column of its own as one JSON
 * object per alert (writer/numerics_detail.c writes it):
 *   {"output_index":0,"dtype":"float32","shape":[64,10],"first_index":197,
 *    "created":true,"backward":false,"forward_op_type":"",
 *    "inputs":[{"dtype":"float32","shape":[64,10],"min":0,"max":0.98,
 *               "nan_count":0,"inf_count":0}]}
 * (min/max null: no finite value). Readers get typed fields rather than
 * stored text, so the dashboard re-emits them with its own JSON writer and
 * a row written by another tool or damaged on disk can never make a
 * response invalid. This is a small strict pull parser for exactly that:
 * known fields are read with their types checked, unknown ones are
 * skipped, and anything malformed rejects the whole detail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

#define MAX_DEPTH 16   /* of skipped values: the detail is two levels deep */

typedef struct parser {
    const char *p;
    int depth;
} parser;

/* ---- tokens --------------------------------------------------------------- */

static void ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

/* Consumes c (after white space) if it is next. */
static bool eat(parser *ps, char c) {
    ws(ps);
    if (*ps->p != c) return false;
    ps->p++;
    return true;
}

static bool word(parser *ps, const char *w) {
    ws(ps);
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
static long escape(parser *ps) {
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
static long string(parser *ps, char *out, size_t size) {
    if (!eat(ps, '"')) return -1;
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
            if (out && len + 1 < size) out[len] = (char)c;
            len++;
        }
    }
    ps->p++;
    if (out && size) out[len < size ? len : size - 1] = '\0';
    return (long)len;
}

/* A string that must fit out entirely. */
static bool string_into(parser *ps, char *out, size_t size) {
    long n = string(ps, out, size);
    return n >= 0 && (size_t)n < size;
}

/* A JSON number (strict grammar); null reads as NaN when allow_null. */
static bool number(parser *ps, double *out, bool allow_null) {
    if (allow_null && word(ps, "null")) {
        *out = NAN;
        return true;
    }
    ws(ps);
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
static bool integer(parser *ps, int64_t lo, int64_t hi, int64_t *out) {
    double v;
    if (!number(ps, &v, false) || v != floor(v) || v < (double)lo || v > (double)hi ||
        fabs(v) > 9007199254740992.0)
        return false;
    *out = (int64_t)v;
    return true;
}

static bool boolean(parser *ps, gb_tristate *out) {
    if (word(ps, "true")) *out = GB_TRISTATE_YES;
    else if (word(ps, "false")) *out = GB_TRISTATE_NO;
    else return false;
    return true;
}

/* ---- structure ---------------------------------------------------------------- */

static bool skip_value(parser *ps);

/* Calls member(ps, key, ctx) for each member of an object; member must
 * consume the value. */
typedef bool (*member_fn)(parser *ps, const char *key, void *ctx);

static bool object(parser *ps, member_fn member, void *ctx) {
    if (!eat(ps, '{')) return false;
    if (eat(ps, '}')) return true;
    do {
        char key[32];
        long n = string(ps, key, sizeof key);
        if (n < 0 || !eat(ps, ':')) return false;
        /* A key too long for the buffer is no field we know. */
        if (!((size_t)n < sizeof key ? member(ps, key, ctx) : skip_value(ps))) return false;
    } while (eat(ps, ','));
    return eat(ps, '}');
}

/* Calls element(ps, i, ctx) for each element of an array. */
typedef bool (*element_fn)(parser *ps, size_t i, void *ctx);

static bool array(parser *ps, element_fn element, void *ctx) {
    if (!eat(ps, '[')) return false;
    if (eat(ps, ']')) return true;
    size_t i = 0;
    do
        if (!element(ps, i++, ctx)) return false;
    while (eat(ps, ','));
    return eat(ps, ']');
}

static bool skip_member(parser *ps, const char *key, void *ctx) {
    (void)key, (void)ctx;
    return skip_value(ps);
}

static bool skip_element(parser *ps, size_t i, void *ctx) {
    (void)i, (void)ctx;
    return skip_value(ps);
}

static bool skip_value(parser *ps) {
    ws(ps);
    double d;
    switch (*ps->p) {
    case '"': return string(ps, NULL, 0) >= 0;
    case '{':
    case '[': {
        if (++ps->depth > MAX_DEPTH) return false;
        bool ok = *ps->p == '{' ? object(ps, skip_member, NULL) : array(ps, skip_element, NULL);
        ps->depth--;
        return ok;
    }
    case 't': return word(ps, "true");
    case 'f': return word(ps, "false");
    case 'n': return word(ps, "null");
    default: return number(ps, &d, false);
    }
}

/* ---- the detail's fields -------------------------------------------------------- */

static bool shape_dim(parser *ps, size_t i, void *ctx) {
    gb_numerics_detail_tensor *t = ctx;
    if (i >= GB_NUMERICS_DETAIL_MAX_RANK) return false;
    t->rank = (int)i + 1;
    return integer(ps, 0, INT64_MAX, &t->shape[i]);
}

static bool shape(parser *ps, gb_numerics_detail_tensor *t) {
    t->rank = 0;
    return array(ps, shape_dim, t);
}

static bool input_member(parser *ps, const char *key, void *ctx) {
    gb_numerics_detail_input *in = ctx;
    if (!strcmp(key, "dtype")) return string_into(ps, in->tensor.dtype, sizeof in->tensor.dtype);
    if (!strcmp(key, "shape")) return shape(ps, &in->tensor);
    if (!strcmp(key, "min")) return number(ps, &in->min, true);
    if (!strcmp(key, "max")) return number(ps, &in->max, true);
    if (!strcmp(key, "nan_count")) return integer(ps, 0, INT64_MAX, &in->nan_count);
    if (!strcmp(key, "inf_count")) return integer(ps, 0, INT64_MAX, &in->inf_count);
    return skip_value(ps);
}

static const gb_numerics_detail_tensor unknown_tensor = {.rank = -1};

static bool input(parser *ps, size_t i, void *ctx) {
    gb_numerics_detail *d = ctx;
    if (i >= GB_NUMERICS_DETAIL_MAX_INPUTS) return skip_value(ps);   /* summarized: the first ones */
    gb_numerics_detail_input *in = &d->inputs[i];
    *in = (gb_numerics_detail_input){unknown_tensor, NAN, NAN, 0, 0};
    d->ninputs = (int)i + 1;
    return object(ps, input_member, in);
}

static bool detail_member(parser *ps, const char *key, void *ctx) {
    gb_numerics_detail *d = ctx;
    int64_t v;
    if (!strcmp(key, "output_index")) {
        if (!integer(ps, 0, 1 << 20, &v)) return false;
        d->output_index = (int)v;
        return true;
    }
    if (!strcmp(key, "dtype")) return string_into(ps, d->output.dtype, sizeof d->output.dtype);
    if (!strcmp(key, "shape")) return shape(ps, &d->output);
    if (!strcmp(key, "first_index")) return integer(ps, -1, INT64_MAX, &d->first_index);
    if (!strcmp(key, "created")) return boolean(ps, &d->created);
    if (!strcmp(key, "backward")) return boolean(ps, &d->backward);
    if (!strcmp(key, "forward_op_type"))
        return string_into(ps, d->forward_op_type, sizeof d->forward_op_type);
    if (!strcmp(key, "inputs")) {
        d->ninputs = 0;
        return array(ps, input, d);
    }
    return skip_value(ps);
}

static void unknown(gb_numerics_detail *d) {
    memset(d, 0, sizeof *d);
    d->output_index = -1;
    d->output = unknown_tensor;
    d->first_index = -1;
    d->created = GB_TRISTATE_UNKNOWN;
    d->backward = GB_TRISTATE_UNKNOWN;
}

bool gb_numerics_detail_parse(const char *json, gb_numerics_detail *out) {
    unknown(out);
    if (!json || !*json) return false;
    parser ps = {json, 0};
    bool ok = object(&ps, detail_member, out);
    ws(&ps);
    if (ok && *ps.p == '\0') return true;
    unknown(out);
    return false;
}
