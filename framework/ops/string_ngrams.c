/* ops/string_ngrams.c — StringNGrams, as tf.strings.ngrams: the n-grams of
 * ragged rows of tokens (StringSplitV2's tokens and row_splits), joined by
 * a separator, as ragged rows again.
 *
 * Widths min_width..max_width; each row holds its 1-grams (if min_width is
 * 1), then its 2-grams, and so on, each width in token order: the order
 * TensorFlow gives for ngram_width=(1, ..., N) and so the order Keras'
 * TextVectorization(ngrams=N) counts tokens in. A row shorter than a width
 * has no n-gram of it (no padding). The splits are checked before any
 * token is read (ragged.c's check), so a bad split is an error naming it.
 */
#include <stdio.h>

#include "ops/strings_internal.h"

static int infer_ngrams(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *t = c->in[0], *s = c->in[1];
    if (!gb__need_strings(c, 0)) return -1;
    if (t->rank != 1 || s->rank != 1 || s->dtype != GB_I64 || s->shape[0] == 0) {
        char a[64], b[64];
        gb__op_error(c, GB_ERR_SHAPE, "%s: expected tokens [n] and int64 row_splits [rows + 1], "
                     "got %s and %s %s", c->def->name, gb__shape_fmt(t->rank, t->shape, a, sizeof a),
                     gb_dtype_name(s->dtype), gb__shape_fmt(s->rank, s->shape, b, sizeof b));
        return -1;
    }
    int64_t lo = c->attrs->i[0], hi = c->attrs->i[1];
    if (lo < 1 || hi < lo) {
        gb__op_error(c, GB_ERR_VALUE, "%s: widths must satisfy 1 <= min_width <= max_width, got "
                     "%lld and %lld", c->def->name, (long long)lo, (long long)hi);
        return -1;
    }
    out[0] = (gb_out_desc){.dtype = GB_STRING, .rank = 1, .shape = {-1}};
    out[1] = (gb_out_desc){.dtype = GB_I64, .rank = 1, .shape = {s->shape[0]}};
    return 2;
}

/* The n-grams of a row of len tokens, widths lo..hi. */
static int64_t ngrams_of(int64_t len, int64_t lo, int64_t hi) {
    int64_t n = 0;
    for (int64_t w = lo; w <= hi && w <= len; w++) n += len - w + 1;
    return n;
}

static bool kernel_ngrams(const gb_op_call *c, gb_tensor **out) {
    if (!gb__check_row_splits(c)) return false;
    const gb_string *tok = c->in[0]->data;
    const int64_t *sp = c->in[1]->data;
    int64_t rows = c->in[1]->size - 1, lo = c->attrs->i[0], hi = c->attrs->i[1], total = 0;
    for (int64_t r = 0; r < rows; r++) total += ngrams_of(sp[r + 1] - sp[r], lo, hi);
    int64_t nsplits = rows + 1;
    out[0] = gb__tensor_new(GB_STRING, 1, &total, true);
    out[1] = gb__tensor_new(GB_I64, 1, &nsplits, true);
    if (!out[0] || !out[1]) return false;
    gb_string *g = out[0]->data;
    int64_t *osp = out[1]->data, k = 0, seplen = (int64_t)strlen(c->attrs->s);
    gb__strbuf buf = {0};
    bool ok = true;
    osp[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t w = lo; ok && w <= hi; w++)
            for (int64_t i = sp[r]; ok && i + w <= sp[r + 1]; i++) {
                for (int64_t j = 0; ok && j < w; j++)
                    ok = (!j || gb__strbuf_add(&buf, c->attrs->s, seplen)) &&
                         gb__strbuf_add(&buf, tok[i + j].data, tok[i + j].len);
                ok = ok && gb__strbuf_end_element(&buf, g, k++);
            }
        osp[r + 1] = k;
    }
    if (!ok || !gb__strbuf_finish(&buf, g, total)) {
        gb__strbuf_free(&buf);
        if (gb_ok()) gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory", c->def->name);
        return false;
    }
    return true;
}

const gb_op_def gb_opdef_string_ngrams = {
    .name = "StringNGrams",
    .arity = 2,
    .flags = GB_OPF_ALLOCATES,
    .inputs_doc = "tokens [n] (string), row_splits [rows + 1] (int64)",
    .infer = infer_ngrams,
    .kernel = kernel_ngrams,
};

bool gb_strings_ngrams(gb_tensor *tokens, gb_tensor *row_splits, int64_t min_width, int64_t max_width,
                       const char *separator, gb_tensor **ngrams, gb_tensor **ngram_splits) {
    gb_attrs a = {.i = {min_width, max_width}, .ni = 2};
    *ngrams = *ngram_splits = NULL;
    if (!gb__attr_string(&a, "gb_strings_ngrams", "separator", separator)) return false;
    gb_tensor *in[2] = {tokens, row_splits}, *out[GB_MAX_OUTPUTS];
    if (gb__dispatch(GB_OP_STRING_NGRAMS, in, 2, &a, out) != 2) return false;
    *ngrams = out[0];
    *ngram_splits = out[1];
    return true;
}
