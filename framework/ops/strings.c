/* ops/strings.c — ops on string tensors, as tf.strings: StringJoin,
 * StringLength, Substr, StringLower/Upper, StringSplitV2 (ragged),
 * StringToHashBucketFast; conversions as tf.strings / tf.io:
 * StringToNumber and AsString. The binary ops on strings (Add concatenates,
 * Equal, NotEqual) are ops/binary.c's, with their run kernels here.
 *
 * New bytes go into the current scope through a gb__strbuf (core/strings.c);
 * an op that only selects bytes (Substr, a split's tokens) points into its
 * input's, which live at least as long as its output. Strings are never
 * differentiable: no op here has a gradient, and tapes never record an op
 * whose outputs are not floating point.
 *
 * The ragged form of a split is TensorFlow's RaggedTensor encoding: the
 * flat tokens and int64 row_splits (row i is tokens[row_splits[i] ..
 * row_splits[i+1])). Row splits rather than row lengths because a row is
 * then found in O(1), and it is what RaggedTensor.from_row_splits and the
 * Keras text layers consume; the lengths are one Sub away.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/elementwise_types.h"
#include "ops/strings_internal.h"

/* ---- shared checks ------------------------------------------------------------------ */

bool gb__need_strings(const gb_op_call *c, int i) {
    if (c->in[i]->dtype == GB_STRING) return true;
    gb__op_error(c, GB_ERR_DTYPE, "%s: input %d must be a string tensor, got %s", c->def->name, i,
                 gb_dtype_name(c->in[i]->dtype));
    return false;
}

/* Outputs like input 0 with dtype dt. */
static int like_input(const gb_op_call *c, gb_out_desc *out, gb_dtype dt) {
    const gb_tensor *x = c->in[0];
    out->dtype = dt;
    out->rank = x->rank;
    memcpy(out->shape, x->shape, (size_t)x->rank * sizeof *x->shape);
    return 1;
}

static int infer_string_map(const gb_op_call *c, gb_out_desc *out) {
    return gb__need_strings(c, 0) ? like_input(c, out, GB_STRING) : -1;
}

static const gb_string *strs(const gb_tensor *t) { return t->data; }

/* ---- UTF-8 ------------------------------------------------------------------------------ */

int gb__utf8_put(int32_t v, char *b) {
    if (v < 0x80) return b[0] = (char)v, 1;
    if (v < 0x800) return b[0] = (char)(0xC0 | v >> 6), b[1] = (char)(0x80 | (v & 0x3F)), 2;
    if (v < 0x10000) {
        b[0] = (char)(0xE0 | v >> 12), b[1] = (char)(0x80 | (v >> 6 & 0x3F)), b[2] = (char)(0x80 | (v & 0x3F));
        return 3;
    }
    b[0] = (char)(0xF0 | v >> 18), b[1] = (char)(0x80 | (v >> 12 & 0x3F));
    b[2] = (char)(0x80 | (v >> 6 & 0x3F)), b[3] = (char)(0x80 | (v & 0x3F));
    return 4;
}


int gb__utf8_next(const unsigned char *p, int64_t n, int32_t *cp) {
    if (n <= 0) return -1;
    unsigned c = p[0];
    int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
            : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || len > n) return -1;
    uint32_t v = len == 1 ? c : c & (0x7Fu >> len);
    for (int k = 1; k < len; k++) {
        if ((p[k] & 0xC0) != 0x80) return -1;
        v = (v << 6) | (p[k] & 0x3F);
    }
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_of_len[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return -1;
    *cp = (int32_t)v;
    return len;
}

/* Code points of s up to byte `upto` in *count; false after an error
 * naming element i and the byte offset of the bad sequence. */
static bool utf8_count(const gb_op_call *c, const gb_string *s, int64_t i, int64_t *count) {
    int64_t k = 0, chars = 0;
    const unsigned char *p = (const unsigned char *)s->data;
    while (k < s->len) {
        int32_t cp;
        int len = gb__utf8_next(p + k, s->len - k, &cp);
        if (len < 0) {
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: element %lld is not valid UTF-8 (a bad sequence at byte %lld)",
                         c->def->name, (long long)i, (long long)k);
            return false;
        }
        k += len;
        chars++;
    }
    *count = chars;
    return true;
}

/* Byte offset of code point `chars` of s (s->len past the end); s is valid. */
static int64_t utf8_offset(const gb_string *s, int64_t chars) {
    int64_t k = 0;
    const unsigned char *p = (const unsigned char *)s->data;
    for (; chars > 0 && k < s->len; chars--) {
        int32_t cp;
        k += gb__utf8_next(p + k, s->len - k, &cp);
    }
    return k;
}

/* ---- Add, Equal, NotEqual on strings (ops/binary.c's run kernels) ------------------------ */

/* Element k of a run's operand: the same one throughout for a scalar side. */
#define RUN_A(k) (layout == GB_EW_RUN_SV ? a[0] : a[k])
#define RUN_B(k) (layout == GB_EW_RUN_VS ? b[0] : b[k])

void gb__string_concat_run(int layout, int64_t n, const void *av, const void *bv, void *rv) {
    const gb_string *a = av, *b = bv;
    gb_string *r = rv;
    gb__strbuf buf = {0};
    bool ok = true;
    for (int64_t k = 0; k < n && ok; k++) {
        gb_string x = RUN_A(k), y = RUN_B(k);
        ok = gb__strbuf_add(&buf, x.data, x.len) && gb__strbuf_add(&buf, y.data, y.len) &&
             gb__strbuf_end_element(&buf, r, k);
    }
    if (!ok || !gb__strbuf_finish(&buf, r, n)) {
        gb__strbuf_free(&buf);
        for (int64_t k = 0; k < n; k++) r[k] = (gb_string){gb__empty_bytes, 0};
    }
}

static bool same_bytes(gb_string x, gb_string y) {
    return x.len == y.len && (x.len == 0 || memcmp(x.data, y.data, (size_t)x.len) == 0);
}

void gb__string_equal_run(int layout, int64_t n, const void *av, const void *bv, void *rv) {
    const gb_string *a = av, *b = bv;
    uint8_t *r = rv;
    for (int64_t k = 0; k < n; k++) r[k] = same_bytes(RUN_A(k), RUN_B(k));
}

void gb__string_not_equal_run(int layout, int64_t n, const void *av, const void *bv, void *rv) {
    const gb_string *a = av, *b = bv;
    uint8_t *r = rv;
    for (int64_t k = 0; k < n; k++) r[k] = !same_bytes(RUN_A(k), RUN_B(k));
}

/* ---- StringJoin ---------------------------------------------------------------------- */

/* Inputs of one shape, or scalars, which repeat (as tf.strings.join). */
static int infer_join(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: needs at least one input", c->def->name);
        return -1;
    }
    int ref = -1; /* the first input that is not a scalar gives the shape */
    for (int i = 0; i < c->nin; i++) {
        if (!gb__need_strings(c, i)) return -1;
        if (c->in[i]->rank > 0 && ref < 0) ref = i;
    }
    const gb_tensor *shape = c->in[ref < 0 ? 0 : ref];
    for (int i = ref + 1; ref >= 0 && i < c->nin; i++) {
        const gb_tensor *x = c->in[i];
        if (x->rank == 0 || gb__shapes_match(x->rank, x->shape, shape->rank, shape->shape))
            continue;
        char s1[96], s2[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: input %d has shape %s, input %d %s: inputs must be "
                     "of one shape or scalars",
                     c->def->name, i, gb__shape_fmt(x->rank, x->shape, s1, sizeof s1), ref,
                     gb__shape_fmt(shape->rank, shape->shape, s2, sizeof s2));
        return -1;
    }
    out->dtype = GB_STRING;
    out->rank = shape->rank;
    memcpy(out->shape, shape->shape, (size_t)shape->rank * sizeof *shape->shape);
    return 1;
}

static bool kernel_join(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *r = out[0];
    gb_string *o = r->data;
    const char *sep = c->attrs->s;
    int64_t seplen = (int64_t)strlen(sep);
    gb__strbuf buf = {0};
    for (int64_t k = 0; k < r->size; k++) {
        for (int i = 0; i < c->nin; i++) {
            gb_string s = strs(c->in[i])[c->in[i]->rank ? k : 0];
            if ((i && !gb__strbuf_add(&buf, sep, seplen)) || !gb__strbuf_add(&buf, s.data, s.len)) {
                gb__strbuf_free(&buf);
                return false;
            }
        }
        gb__strbuf_end_element(&buf, o, k);
    }
    return gb__strbuf_finish(&buf, o, r->size);
}

/* ---- StringLength ---------------------------------------------------------------------- */

enum { UNIT_BYTE, UNIT_UTF8_CHAR };

static int infer_length(const gb_op_call *c, gb_out_desc *out) {
    return gb__need_strings(c, 0) ? like_input(c, out, GB_I32) : -1;
}

static bool kernel_length(const gb_op_call *c, gb_tensor **out) {
    const gb_string *s = strs(c->in[0]);
    int32_t *r = out[0]->data;
    for (int64_t k = 0; k < out[0]->size; k++) {
        int64_t n = s[k].len;
        if (c->attrs->i[0] == UNIT_UTF8_CHAR && !utf8_count(c, &s[k], k, &n)) return false;
        if (n > INT32_MAX) {
            gb__op_error(c, GB_ERR_VALUE, "%s: element %lld is %lld long, past int32",
                         c->def->name, (long long)k, (long long)n);
            return false;
        }
        r[k] = (int32_t)n;
    }
    return true;
}

/* ---- Substr ----------------------------------------------------------------------------- */

static bool kernel_substr(const gb_op_call *c, gb_tensor **out) {
    const gb_string *s = strs(c->in[0]);
    gb_string *r = out[0]->data;
    int64_t pos = c->attrs->i[0], len = c->attrs->i[1];
    bool chars = c->attrs->i[2] == UNIT_UTF8_CHAR;
    if (len < 0) {
        gb__op_error(c, GB_ERR_VALUE, "%s: len must be >= 0, got %lld", c->def->name,
                     (long long)len);
        return false;
    }
    for (int64_t k = 0; k < out[0]->size; k++) {
        int64_t size = s[k].len;
        if (chars && !utf8_count(c, &s[k], k, &size)) return false;
        /* A negative pos counts from the end, as TensorFlow's. */
        int64_t p = pos < 0 ? size + pos : pos;
        if (p < 0 || p > size) {
            gb__op_error(c, GB_ERR_VALUE,
                         "%s: pos %lld is out of range for element %lld of %lld %s",
                         c->def->name, (long long)pos, (long long)k, (long long)size,
                         chars ? "characters" : "bytes");
            return false;
        }
        int64_t n = len < size - p ? len : size - p;
        int64_t from = chars ? utf8_offset(&s[k], p) : p;
        int64_t to = chars ? from + utf8_offset(&(gb_string){s[k].data + from, s[k].len - from}, n)
                           : p + n;
        /* The input's bytes, shared: they outlive this output. */
        r[k] = (gb_string){to > from ? s[k].data + from : gb__empty_bytes, to - from};
    }
    return true;
}

/* ---- StringLower, StringUpper (ASCII, as TensorFlow's default encoding) -------------------- */

static bool change_case(const gb_op_call *c, gb_tensor **out, bool upper) {
    const gb_string *s = strs(c->in[0]);
    gb_string *r = out[0]->data;
    int64_t n = out[0]->size;
    int64_t total = gb__strings_total(s, n);
    char *blob = total ? gb__scope_alloc((size_t)total) : NULL;
    if (total && !blob) return false;
    for (int64_t k = 0, at = 0; k < n; k++) {
        for (int64_t j = 0; j < s[k].len; j++) {
            char ch = s[k].data[j];
            blob[at + j] = upper ? (ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch)
                                 : (ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch);
        }
        r[k] = (gb_string){s[k].len ? blob + at : gb__empty_bytes, s[k].len};
        at += s[k].len;
    }
    return true;
}

static bool kernel_lower(const gb_op_call *c, gb_tensor **out) { return change_case(c, out, false); }
static bool kernel_upper(const gb_op_call *c, gb_tensor **out) { return change_case(c, out, true); }

/* ---- StringSplitV2 ----------------------------------------------------------------------- */

static int infer_split(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (!gb__need_strings(c, 0)) return -1;
    if (x->rank != 1) {
        char s[96];
        gb__op_error(c, GB_ERR_SHAPE, "%s: input must be rank 1 (a batch of strings), got %s",
                     c->def->name, gb__shape_fmt(x->rank, x->shape, s, sizeof s));
        return -1;
    }
    out[0] = (gb_out_desc){.dtype = GB_STRING, .rank = 1, .shape = {-1}};
    out[1] = (gb_out_desc){.dtype = GB_I64, .rank = 1, .shape = {x->shape[0] < 0 ? -1 : x->shape[0] + 1}};
    return 2;
}

static bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Calls emit(ctx, token) for each token of s: on runs of whitespace when
 * sep is empty (leading and trailing ignored), else on every sep (empty
 * tokens kept); at most maxsplit splits when maxsplit >= 0. */
typedef void (*token_fn)(void *ctx, gb_string token);

static void split_one(gb_string s, const char *sep, int64_t maxsplit, token_fn emit, void *ctx) {
    int64_t seplen = (int64_t)strlen(sep), k = 0, splits = 0;
    if (!seplen) {
        while (k < s.len) {
            while (k < s.len && is_space(s.data[k])) k++;
            if (k == s.len) return;
            int64_t start = k;
            bool last = maxsplit >= 0 && splits == maxsplit;
            while (k < s.len && (last || !is_space(s.data[k]))) k++;
            if (last) /* the rest, trailing whitespace dropped */
                while (k > start && is_space(s.data[k - 1])) k--;
            emit(ctx, (gb_string){s.data + start, k - start});
            splits++;
            if (last) return;
        }
        return;
    }
    int64_t start = 0;
    while (k + seplen <= s.len && (maxsplit < 0 || splits < maxsplit)) {
        if (memcmp(s.data + k, sep, (size_t)seplen) == 0) {
            emit(ctx, (gb_string){s.data + start, k - start});
            splits++;
            k += seplen;
            start = k;
        } else {
            k++;
        }
    }
    emit(ctx, (gb_string){s.data + start, s.len - start});
}

typedef struct token_list {
    gb_string *v;
    int64_t n;
} token_list;

static void count_token(void *ctx, gb_string t) { (void)t, ((token_list *)ctx)->n++; }
static void store_token(void *ctx, gb_string t) {
    token_list *k = ctx;
    k->v[k->n++] = (gb_string){t.len ? t.data : gb__empty_bytes, t.len};
}

static bool kernel_split(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    const gb_string *s = strs(x);
    const char *sep = c->attrs->s;
    int64_t maxsplit = c->attrs->i[0];
    /* Counted first, so each output is allocated once at its size. */
    token_list count = {0};
    for (int64_t k = 0; k < x->size; k++)
        if (s[k].len) split_one(s[k], sep, maxsplit, count_token, &count);
    int64_t nrows = x->size + 1;
    out[0] = gb__tensor_new(GB_STRING, 1, &count.n, true);
    out[1] = gb__tensor_new(GB_I64, 1, &nrows, true);
    if (!out[0] || !out[1]) return false;
    token_list store = {out[0]->data, 0};
    int64_t *splits = out[1]->data;
    splits[0] = 0;
    for (int64_t k = 0; k < x->size; k++) {
        /* An empty string has no tokens, as in TensorFlow (not one empty one). */
        if (s[k].len) split_one(s[k], sep, maxsplit, store_token, &store);
        splits[k + 1] = store.n;
    }
    return true;
}

/* ---- StringToHashBucketFast ---------------------------------------------------------------- */

uint64_t gb__string_hash(gb_string s) {
    /* FNV-1a, 64-bit: stable across runs and machines, so buckets saved
     * with a model mean the same after loading. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t k = 0; k < s.len; k++) h = (h ^ (unsigned char)s.data[k]) * 0x100000001b3ull;
    return h;
}

static int infer_hash_bucket(const gb_op_call *c, gb_out_desc *out) {
    if (!gb__need_strings(c, 0)) return -1;
    if (c->attrs->i[0] < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: num_buckets must be >= 1, got %lld", c->def->name,
                     (long long)c->attrs->i[0]);
        return -1;
    }
    return like_input(c, out, GB_I64);
}

static bool kernel_hash_bucket(const gb_op_call *c, gb_tensor **out) {
    const gb_string *s = strs(c->in[0]);
    int64_t *r = out[0]->data;
    uint64_t buckets = (uint64_t)c->attrs->i[0];
    for (int64_t k = 0; k < out[0]->size; k++) r[k] = (int64_t)(gb__string_hash(s[k]) % buckets);
    return true;
}

/* ---- StringToNumber ------------------------------------------------------------------------- */

static int infer_to_number(const gb_op_call *c, gb_out_desc *out) {
    if (!gb__need_strings(c, 0)) return -1;
    gb_dtype dt = (gb_dtype)c->attrs->i[0];
    if (dt != GB_F32 && dt != GB_F64 && dt != GB_I32 && dt != GB_I64) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: out_type must be float32, float64, int32 or int64, got %s",
                     c->def->name, gb_dtype_name(dt));
        return -1;
    }
    return like_input(c, out, dt);
}

/* s as a number of dt, the whole string (no spaces, in range): a double
 * in *d, or the exact integer in *i. */
static bool parse_number(gb_string s, gb_dtype dt, double *d, int64_t *i) {
    char text[128];
    if (s.len <= 0 || s.len >= (int64_t)sizeof text || memchr(s.data, '\0', (size_t)s.len))
        return false;
    memcpy(text, s.data, (size_t)s.len);
    text[s.len] = '\0';
    if (is_space(text[0])) return false;
    char *end;
    errno = 0;
    if (dt == GB_F32 || dt == GB_F64) {
        *d = strtod(text, &end);
        /* Underflow to 0 or a denormal is a value; overflow is not. */
        if (*end || (errno == ERANGE && fabs(*d) > 1.0)) return false;
        return dt == GB_F64 || !isfinite(*d) || fabs(*d) <= 3.4028234663852886e38;
    }
    long long v = strtoll(text, &end, 10);
    if (*end || errno == ERANGE || (dt == GB_I32 && (v < INT32_MIN || v > INT32_MAX))) return false;
    *i = v;
    return true;
}

static bool kernel_to_number(const gb_op_call *c, gb_tensor **out) {
    const gb_string *s = strs(c->in[0]);
    gb_tensor *r = out[0];
    for (int64_t k = 0; k < r->size; k++) {
        double d = 0;
        int64_t i = 0;
        if (!parse_number(s[k], r->dtype, &d, &i)) {
            char shown[200];
            gb_string head = {s[k].data, s[k].len < 40 ? s[k].len : 40};
            gb__string_repr(&head, shown, sizeof shown);
            gb__op_error(c, GB_ERR_VALUE, "%s: element %lld, %s%s, is not a valid %s",
                         c->def->name, (long long)k, shown, s[k].len > 40 ? " (cut)" : "",
                         gb_dtype_name(r->dtype));
            return false;
        }
        if (r->dtype == GB_I64)
            ((int64_t *)r->data)[k] = i;
        else if (r->dtype == GB_I32)
            ((int32_t *)r->data)[k] = (int32_t)i;
        else
            gb__store(r->dtype, r->data, k, d);
    }
    return true;
}

/* ---- AsString --------------------------------------------------------------------------- */

static int infer_as_string(const gb_op_call *c, gb_out_desc *out) {
    if (c->in[0]->dtype == GB_STRING) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: input is a string tensor already", c->def->name);
        return -1;
    }
    if (c->attrs->i[0] < -1 || c->attrs->i[0] > 60) {
        gb__op_error(c, GB_ERR_VALUE, "%s: precision must be -1 (6 digits) to 60, got %lld",
                     c->def->name, (long long)c->attrs->i[0]);
        return -1;
    }
    return like_input(c, out, GB_STRING);
}

/* Numbers as TensorFlow's AsString writes them: "%f" with the precision
 * (6 by default) for floats, decimal integers, "true" / "false". */
static bool kernel_as_string(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0];
    gb_string *r = out[0]->data;
    int prec = c->attrs->i[0] < 0 ? 6 : (int)c->attrs->i[0];
    gb__strbuf buf = {0};
    for (int64_t k = 0; k < x->size; k++) {
        char text[400];
        int n;
        if (x->dtype == GB_BOOL)
            n = snprintf(text, sizeof text, "%s", ((const uint8_t *)x->data)[k] ? "true" : "false");
        else if (x->dtype == GB_I64)
            n = snprintf(text, sizeof text, "%lld", (long long)((const int64_t *)x->data)[k]);
        else if (gb_dtype_is_integer(x->dtype))
            n = snprintf(text, sizeof text, "%lld", (long long)gb__load(x->dtype, x->data, k));
        else
            n = snprintf(text, sizeof text, "%.*f", prec, gb__load(x->dtype, x->data, k));
        if (n >= (int)sizeof text) n = (int)sizeof text - 1; /* 1e308 at 60 digits */
        if (!gb__strbuf_add(&buf, text, n)) {
            gb__strbuf_free(&buf);
            return false;
        }
        gb__strbuf_end_element(&buf, r, k);
    }
    return gb__strbuf_finish(&buf, r, x->size);
}

bool gb__attr_string(gb_attrs *a, const char *fn, const char *what, const char *value) {
    if (!value) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the %s is NULL", fn, what);
        return false;
    }
    if (strlen(value) >= sizeof a->s) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the %s is %zu bytes, more than the %zu an op holds",
                  fn, what, strlen(value), sizeof a->s - 1);
        return false;
    }
    snprintf(a->s, sizeof a->s, "%s", value);
    return true;
}

/* ---- descriptors ------------------------------------------------------------------------ */

#define STRING_OP(sym, type, n, fl, inf, ker, doc)                                            \
    const gb_op_def gb_opdef_##sym = {                                                        \
        .name = type, .arity = n, .flags = fl, .inputs_doc = doc, .infer = inf, .kernel = ker, \
    };
STRING_OP(string_join, "StringJoin", -1, 0, infer_join, kernel_join, "inputs: strings of one shape or scalars")
STRING_OP(string_length, "StringLength", 1, 0, infer_length, kernel_length, NULL)
STRING_OP(substr, "Substr", 1, 0, infer_string_map, kernel_substr, NULL)
STRING_OP(string_lower, "StringLower", 1, 0, infer_string_map, kernel_lower, NULL)
STRING_OP(string_upper, "StringUpper", 1, 0, infer_string_map, kernel_upper, NULL)
STRING_OP(string_split, "StringSplitV2", 1, GB_OPF_ALLOCATES, infer_split, kernel_split, NULL)
STRING_OP(string_to_hash_bucket, "StringToHashBucketFast", 1, 0, infer_hash_bucket, kernel_hash_bucket, NULL)
STRING_OP(string_to_number, "StringToNumber", 1, 0, infer_to_number, kernel_to_number, NULL)
STRING_OP(as_string, "AsString", 1, 0, infer_as_string, kernel_as_string, NULL)

/* ---- public functions ---------------------------------------------------------------------- */

gb_tensor *gb_strings_join(gb_tensor *const *inputs, int n, const char *separator) {
    gb_attrs a = {0};
    if (!gb__attr_string(&a, "gb_strings_join", "separator", separator)) return NULL;
    return gb__op1(GB_OP_STRING_JOIN, inputs, n, &a);
}

gb_tensor *gb_strings_length(gb_tensor *x, bool utf8_chars) {
    gb_attrs a = {.i = {utf8_chars ? UNIT_UTF8_CHAR : UNIT_BYTE}, .ni = 1};
    return gb__op1(GB_OP_STRING_LENGTH, &x, 1, &a);
}

gb_tensor *gb_substr(gb_tensor *x, int64_t pos, int64_t len, bool utf8_chars) {
    gb_attrs a = {.i = {pos, len, utf8_chars ? UNIT_UTF8_CHAR : UNIT_BYTE}, .ni = 3};
    return gb__op1(GB_OP_SUBSTR, &x, 1, &a);
}

gb_tensor *gb_strings_lower(gb_tensor *x) { return gb__op_unary(GB_OP_STRING_LOWER, x); }
gb_tensor *gb_strings_upper(gb_tensor *x) { return gb__op_unary(GB_OP_STRING_UPPER, x); }

bool gb_strings_split(gb_tensor *x, const char *separator, int64_t maxsplit, gb_tensor **tokens,
                      gb_tensor **row_splits) {
    gb_attrs a = {.i = {maxsplit}, .ni = 1};
    *tokens = *row_splits = NULL;
    if (!gb__attr_string(&a, "gb_strings_split", "separator", separator)) return false;
    gb_tensor *out[GB_MAX_OUTPUTS];
    if (gb__dispatch(GB_OP_STRING_SPLIT, &x, 1, &a, out) != 2) return false;
    *tokens = out[0];
    *row_splits = out[1];
    return true;
}

gb_tensor *gb_strings_to_hash_bucket(gb_tensor *x, int64_t num_buckets) {
    gb_attrs a = {.i = {num_buckets}, .ni = 1};
    return gb__op1(GB_OP_STRING_TO_HASH_BUCKET, &x, 1, &a);
}

gb_tensor *gb_string_to_number(gb_tensor *x, gb_dtype out_type) {
    gb_attrs a = {.i = {out_type}, .ni = 1};
    return gb__op1(GB_OP_STRING_TO_NUMBER, &x, 1, &a);
}

gb_tensor *gb_as_string(gb_tensor *x, int precision) {
    gb_attrs a = {.i = {precision}, .ni = 1};
    return gb__op1(GB_OP_AS_STRING, &x, 1, &a);
}
