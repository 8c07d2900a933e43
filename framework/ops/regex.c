/* ops/regex.c — RegexFullMatch and RegexReplace, as tf.strings, through
 * PCRE2 (a maintained engine; Debian's libpcre2-8).
 *
 * The pattern (and the rewrite) are scalar string inputs, as in
 * TensorFlow, so they may be any length and trace as constants. Patterns
 * are UTF-8 (PCRE2_UTF) and subjects that are not valid UTF-8 still match
 * byte-wise where they can (PCRE2_MATCH_INVALID_UTF) rather than failing
 * the op. The rewrite uses PCRE2's syntax: $1 or ${name} for a group, $$
 * for a dollar (TensorFlow's RE2 writes \1). A pattern is compiled once per
 * op call.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/elementwise_types.h"
#include "ops/strings_internal.h"

/* Input i is a scalar string tensor; false after an error naming it. */
static bool scalar_string(const gb_op_call *c, int i, const char *what) {
    if (!gb__need_strings(c, i)) return false;
    if (c->in[i]->rank == 0) return true;
    char s[96];
    gb__op_error(c, GB_ERR_SHAPE, "%s: the %s (input %d) must be a scalar, got shape %s",
                 c->def->name, what, i, gb__shape_fmt(c->in[i]->rank, c->in[i]->shape, s, sizeof s));
    return false;
}

static int infer_full_match(const gb_op_call *c, gb_out_desc *out) {
    if (!gb__need_strings(c, 0) || !scalar_string(c, 1, "pattern")) return -1;
    gb__ew_desc_like(out, c->in[0], GB_BOOL);
    return 1;
}

static int infer_replace(const gb_op_call *c, gb_out_desc *out) {
    if (!gb__need_strings(c, 0) || !scalar_string(c, 1, "pattern") ||
        !scalar_string(c, 2, "rewrite"))
        return -1;
    gb__ew_desc_like(out, c->in[0], GB_STRING);
    return 1;
}

/* The compiled pattern of input 1; NULL after an error quoting PCRE2's. */
static pcre2_code *compile(const gb_op_call *c) {
    gb_string p = ((const gb_string *)c->in[1]->data)[0];
    int code;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)(p.len ? p.data : ""), (PCRE2_SIZE)p.len,
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &at, NULL);
    if (re) return re;
    PCRE2_UCHAR why[160];
    pcre2_get_error_message(code, why, sizeof why);
    gb__op_error(c, GB_ERR_VALUE, "%s: the pattern '%.*s' does not compile: %s (at offset %zu)",
                 c->def->name, (int)(p.len < 200 ? p.len : 200), p.data, (const char *)why,
                 (size_t)at);
    return NULL;
}

static bool kernel_full_match(const gb_op_call *c, gb_tensor **out) {
    pcre2_code *re = compile(c);
    if (!re) return false;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    const gb_string *s = c->in[0]->data;
    uint8_t *r = out[0]->data;
    bool ok = md != NULL;
    for (int64_t k = 0; ok && k < out[0]->size; k++) {
        int rc = pcre2_match(re, (PCRE2_SPTR)(s[k].len ? s[k].data : ""), (PCRE2_SIZE)s[k].len, 0,
                             PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, NULL);
        r[k] = rc >= 0;
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
            PCRE2_UCHAR why[160];
            pcre2_get_error_message(rc, why, sizeof why);
            gb__op_error(c, GB_ERR_VALUE, "%s: matching element %lld failed: %s", c->def->name,
                         (long long)k, (const char *)why);
            ok = false;
        }
    }
    if (!md) gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory", c->def->name);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return ok;
}

/* Element k with every match (or the first) rewritten, into buf. */
static bool replace_one(const gb_op_call *c, pcre2_code *re, gb_string s, gb_string rw,
                        int64_t k, char **tmp, size_t *cap, gb__strbuf *buf) {
    uint32_t opts = PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | (c->attrs->i[0] ? PCRE2_SUBSTITUTE_GLOBAL : 0);
    for (;;) {
        PCRE2_SIZE n = *cap;
        int rc = pcre2_substitute(re, (PCRE2_SPTR)(s.len ? s.data : ""), (PCRE2_SIZE)s.len, 0,
                                  opts, NULL, NULL, (PCRE2_SPTR)(rw.len ? rw.data : ""),
                                  (PCRE2_SIZE)rw.len, (PCRE2_UCHAR *)*tmp, &n);
        if (rc >= 0) return gb__strbuf_add(buf, *tmp, (int64_t)n);
        if (rc == PCRE2_ERROR_NOMEMORY && n > *cap) { /* n: the length needed */
            char *bigger = realloc(*tmp, n + 1);
            if (!bigger) {
                gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory", c->def->name);
                return false;
            }
            *tmp = bigger;
            *cap = n + 1;
            continue;
        }
        PCRE2_UCHAR why[160];
        pcre2_get_error_message(rc, why, sizeof why);
        gb__op_error(c, GB_ERR_VALUE, "%s: rewriting element %lld failed: %s", c->def->name,
                     (long long)k, (const char *)why);
        return false;
    }
}

static bool kernel_replace(const gb_op_call *c, gb_tensor **out) {
    pcre2_code *re = compile(c);
    if (!re) return false;
    const gb_string *s = c->in[0]->data;
    gb_string rw = ((const gb_string *)c->in[2]->data)[0];
    gb_string *r = out[0]->data;
    size_t cap = 256;
    char *tmp = malloc(cap);
    gb__strbuf buf = {0};
    bool ok = tmp != NULL;
    for (int64_t k = 0; ok && k < out[0]->size; k++)
        ok = replace_one(c, re, s[k], rw, k, &tmp, &cap, &buf) &&
             gb__strbuf_end_element(&buf, r, k);
    free(tmp);
    pcre2_code_free(re);
    if (!ok) {
        gb__strbuf_free(&buf);
        return false;
    }
    return gb__strbuf_finish(&buf, r, out[0]->size);
}

const gb_op_def gb_opdef_regex_full_match = {
    .name = "RegexFullMatch",
    .arity = 2,
    .inputs_doc = "input (strings), pattern (a scalar string)",
    .infer = infer_full_match,
    .kernel = kernel_full_match,
};

const gb_op_def gb_opdef_regex_replace = {
    .name = "RegexReplace",
    .arity = 3,
    .inputs_doc = "input (strings), pattern, rewrite (scalar strings)",
    .infer = infer_replace,
    .kernel = kernel_replace,
};

gb_tensor *gb_regex_full_match(gb_tensor *x, const char *pattern) {
    gb_tensor *in[2] = {x, pattern ? gb_string_scalar(pattern) : NULL};
    return gb__op1(GB_OP_REGEX_FULL_MATCH, in, 2, NULL);
}

gb_tensor *gb_regex_replace(gb_tensor *x, const char *pattern, const char *rewrite,
                            bool replace_global) {
    gb_tensor *in[3] = {x, pattern ? gb_string_scalar(pattern) : NULL,
                        rewrite ? gb_string_scalar(rewrite) : NULL};
    gb_attrs a = {.i = {replace_global}, .ni = 1};
    return gb__op1(GB_OP_REGEX_REPLACE, in, 3, &a);
}
