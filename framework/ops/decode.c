/* ops/decode.c — bytes to numbers and code points, as tf.io.decode_raw and
 * tf.strings.unicode_decode / unicode_encode.
 *
 * UnicodeDecode gives the ragged form StringSplitV2 gives (values and
 * int64 row_splits): each string's code points (int32). Invalid UTF-8 is
 * an error naming the element and byte (errors = strict), U+FFFD for each
 * bad sequence (replace), or skipped (ignore). UnicodeEncode is the
 * reverse; a value that is no code point (negative, a surrogate, past
 * U+10FFFF) is treated by the same option. DecodeRaw reinterprets each
 * string's bytes as numbers of a dtype: every string must be as long as
 * the first, a whole number of elements.
 */
#include <stdio.h>

#include "ops/strings_internal.h"

enum { ERR_STRICT, ERR_REPLACE, ERR_IGNORE };

/* ---- UnicodeDecode ---------------------------------------------------------------------- */

static int infer_unicode_decode(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (!gb__need_strings(c, 0)) return -1;
    if (x->rank != 1) {
        char s[64];
        gb__op_error(c, GB_ERR_SHAPE, "%s: input must be rank 1, got %s", c->def->name,
                     gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return -1;
    }
    out[0] = (gb_out_desc){.dtype = GB_I32, .rank = 1, .shape = {-1}};
    out[1] = (gb_out_desc){.dtype = GB_I64, .rank = 1, .shape = {x->shape[0] < 0 ? -1 : x->shape[0] + 1}};
    return 2;
}

/* The code points of s into cp (NULL: count only); -1 after an error. */
static int64_t decode_one(const gb_op_call *c, gb_string s, int64_t k, int32_t *cp) {
    int64_t n = 0;
    const unsigned char *p = (const unsigned char *)s.data;
    for (int64_t at = 0; at < s.len;) {
        int32_t v;
        int len = gb__utf8_next(p + at, s.len - at, &v);
        if (len < 0) {
            if (c->attrs->i[0] == ERR_STRICT) {
                gb__op_error(c, GB_ERR_VALUE, "%s: element %lld is not valid UTF-8 (a bad "
                             "sequence at byte %lld)", c->def->name, (long long)k, (long long)at);
                return -1;
            }
            at++; /* one bad byte at a time, as Python's errors="replace" */
            if (c->attrs->i[0] == ERR_IGNORE) continue;
            v = 0xFFFD;
        } else {
            at += len;
        }
        if (cp) cp[n] = v;
        n++;
    }
    return n;
}

static bool kernel_unicode_decode(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    const gb_string *s = x->data;
    int64_t total = 0, rows = x->size + 1;
    for (int64_t k = 0; k < x->size; k++) {
        int64_t n = decode_one(c, s[k], k, NULL);
        if (n < 0) return false;
        total += n;
    }
    out[0] = gb__tensor_new(GB_I32, 1, &total, true);
    out[1] = gb__tensor_new(GB_I64, 1, &rows, true);
    if (!out[0] || !out[1]) return false;
    int32_t *cp = out[0]->data;
    int64_t *splits = out[1]->data;
    splits[0] = 0;
    for (int64_t k = 0; k < x->size; k++) splits[k + 1] = splits[k] + decode_one(c, s[k], k, cp + splits[k]);
    return true;
}

/* ---- UnicodeEncode ---------------------------------------------------------------------- */

static int infer_unicode_encode(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *v = c->in[0], *sp = c->in[1];
    if (v->dtype != GB_I32 || v->rank != 1 || sp->dtype != GB_I64 || sp->rank != 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: expected int32 code points [n] and int64 row_splits "
                     "[rows + 1], got %s and %s", c->def->name, gb_dtype_name(v->dtype),
                     gb_dtype_name(sp->dtype));
        return -1;
    }
    *out = (gb_out_desc){.dtype = GB_STRING, .rank = 1, .shape = {sp->shape[0] < 0 ? -1 : sp->shape[0] - 1}};
    if (sp->shape[0] == 0) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: row_splits is empty", c->def->name);
        return -1;
    }
    return 1;
}

static bool kernel_unicode_encode(const gb_op_call *c, gb_tensor **out) {
    const int32_t *cp = c->in[0]->data;
    const int64_t *sp = c->in[1]->data;
    int64_t rows = out[0]->size, nv = c->in[0]->size;
    gb_string *r = out[0]->data;
    for (int64_t b = 0; b <= rows; b++) {
        bool ok = (b == 0 ? sp[0] == 0 : sp[b] >= sp[b - 1]) && (b < rows || sp[b] == nv);
        if (!ok) {
            gb__op_error(c, GB_ERR_VALUE, "%s: row_splits[%lld] = %lld is not a split of %lld "
                         "values", c->def->name, (long long)b, (long long)sp[b], (long long)nv);
            return false;
        }
    }
    gb__strbuf buf = {0};
    for (int64_t b = 0; b < rows; b++) {
        for (int64_t i = sp[b]; i < sp[b + 1]; i++) {
            int32_t v = cp[i];
            char bytes[4];
            if (v < 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
                if (c->attrs->i[0] == ERR_STRICT) {
                    gb__strbuf_free(&buf);
                    gb__op_error(c, GB_ERR_VALUE, "%s: value %d at %lld is not a code point",
                                 c->def->name, (int)v, (long long)i);
                    return false;
                }
                if (c->attrs->i[0] == ERR_IGNORE) continue;
                v = 0xFFFD;
            }
            if (!gb__strbuf_add(&buf, bytes, gb__utf8_put(v, bytes))) {
                gb__strbuf_free(&buf);
                return false;
            }
        }
        gb__strbuf_end_element(&buf, r, b);
    }
    return gb__strbuf_finish(&buf, r, rows);
}

/* ---- DecodeRaw ---------------------------------------------------------------------- */

static int infer_decode_raw(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    gb_dtype dt = (gb_dtype)c->attrs->i[0];
    if (!gb__need_strings(c, 0)) return -1;
    if (!gb_dtype_is_numeric(dt)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: out_type must be a number type, got %s", c->def->name,
                     gb_dtype_name(dt));
        return -1;
    }
    if (x->rank + 1 > GB_MAX_RANK) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: input rank %d leaves no room for the values", c->def->name,
                     x->rank);
        return -1;
    }
    out->dtype = dt;
    out->rank = x->rank + 1;
    memcpy(out->shape, x->shape, (size_t)x->rank * sizeof *x->shape);
    out->shape[x->rank] = -1; /* known once the bytes are */
    return 1;
}

static bool kernel_decode_raw(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    const gb_string *s = x->data;
    gb_dtype dt = (gb_dtype)c->attrs->i[0];
    int64_t es = (int64_t)gb_dtype_size(dt), len = x->size ? s[0].len : 0;
    for (int64_t k = 0; k < x->size; k++) {
        if (s[k].len != len || len % es) {
            gb__op_error(c, GB_ERR_VALUE, "%s: element %lld has %lld bytes; every element needs "
                         "%lld, a multiple of %s's %lld", c->def->name, (long long)k,
                         (long long)s[k].len, (long long)len, gb_dtype_name(dt), (long long)es);
            return false;
        }
    }
    int64_t shape[GB_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    shape[x->rank] = len / es;
    if (!(out[0] = gb__tensor_new(dt, x->rank + 1, shape, true))) return false;
    char *r = out[0]->data;
    bool little = c->attrs->i[1] != 0, host_little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    bool swap = little != host_little;
    for (int64_t k = 0; k < x->size; k++) {
        if (len) memcpy(r + k * len, s[k].data, (size_t)len);
        for (int64_t e = 0; swap && es > 1 && e < len; e += es)
            for (int64_t a = 0, b = es - 1; a < b; a++, b--) {
                char t = r[k * len + e + a];
                r[k * len + e + a] = r[k * len + e + b];
                r[k * len + e + b] = t;
            }
    }
    return true;
}

const gb_op_def gb_opdef_unicode_decode = {
    .name = "UnicodeDecode", .arity = 1, .flags = GB_OPF_ALLOCATES,
    .infer = infer_unicode_decode, .kernel = kernel_unicode_decode,
};
const gb_op_def gb_opdef_unicode_encode = {
    .name = "UnicodeEncode", .arity = 2, .inputs_doc = "code points [n] (int32), row_splits [rows + 1] (int64)",
    .infer = infer_unicode_encode, .kernel = kernel_unicode_encode,
};
const gb_op_def gb_opdef_decode_raw = {
    .name = "DecodeRaw", .arity = 1, .flags = GB_OPF_ALLOCATES,
    .infer = infer_decode_raw, .kernel = kernel_decode_raw,
};

bool gb_unicode_decode(gb_tensor *x, gb_unicode_errors errors, gb_tensor **code_points,
                       gb_tensor **row_splits) {
    gb_attrs a = {.i = {errors}, .ni = 1};
    gb_tensor *out[GB_MAX_OUTPUTS];
    *code_points = *row_splits = NULL;
    if (gb__dispatch(GB_OP_UNICODE_DECODE, &x, 1, &a, out) != 2) return false;
    *code_points = out[0];
    *row_splits = out[1];
    return true;
}

gb_tensor *gb_unicode_encode(gb_tensor *code_points, gb_tensor *row_splits, gb_unicode_errors errors) {
    gb_tensor *in[2] = {code_points, row_splits};
    gb_attrs a = {.i = {errors}, .ni = 1};
    return gb__op1(GB_OP_UNICODE_ENCODE, in, 2, &a);
}

gb_tensor *gb_decode_raw(gb_tensor *x, gb_dtype out_type, bool little_endian) {
    gb_attrs a = {.i = {out_type, little_endian}, .ni = 2};
    return gb__op1(GB_OP_DECODE_RAW, &x, 1, &a);
}
