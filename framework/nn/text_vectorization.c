/* nn/text_vectorization.c — TextVectorization and StringLookup
 * (keras.layers): raw strings in, token ids or per-token counts out, with a
 * vocabulary learned by adapt() over a dataset of strings.
 *
 * adapt counts tokens batch by batch (gb__tv_adapt_batch: the dataset
 * loop is train/adapt.c's, since nn sits below data) and builds the
 * vocabulary at the end. The call is ops only, so it traces: standardize (StringLower, then
 * RegexReplace of Keras' punctuation class), split on whitespace
 * (StringSplitV2: ragged tokens and row_splits), with ngrams N the 1- to
 * N-grams of each row joined by a space (StringNGrams), LookupTableFindV2, then
 * RaggedToTensor (output_mode int, padded or cut to
 * output_sequence_length) or RaggedBincount (multi_hot, count; tf_idf
 * multiplies counts by the adapted idf weights). StringLookup is the same
 * layer with no standardization and no split: each element is one token,
 * its id (int) or counted per row (the other modes).
 *
 * The vocabulary, as Keras orders it: the mask token "" at 0 when there is
 * a mask (TextVectorization's int mode, where 0 is also the padding;
 * StringLookup with mask), then the out-of-vocabulary "[UNK]", then the
 * tokens by falling count, ties by their bytes (so two runs over the same
 * data agree). StringLookup has no mask unless asked, as Keras'
 * (mask_token=None): "[UNK]" is 0 and the first token 1. Its configs
 * written before the mask option had the mask always; a config without
 * "mask_token" is read that way, so those files keep their ids. It is in get_config (a
 * list of strings, as Keras writes a vocabulary given to the
 * constructor), so model files keep it; tokens holding NUL or invalid
 * UTF-8 are left out of it, since a config is JSON. Checkpoints keep it
 * whole, as the layer's assets (the vocabulary and the idf weights).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"
#include "nn/internal.h"
#include "ops/strings_internal.h"

/* Keras' DEFAULT_STRIP_REGEX. */
static const char strip_regex[] = "[!\"#$%&()\\*\\+,-\\./:;<=>?@\\[\\\\\\]^_`{|}~']";

typedef struct tv_state {
    gb_text_vectorization_options o;
    bool lookup;              /* StringLookup: no standardize, no split */
    int64_t vocab_size;       /* including the reserved entries */
    gb_string *vocab;         /* [vocab_size], bytes in vocab_bytes */
    char *vocab_bytes;
    float *idf;               /* tf_idf: [vocab_size] */
    gb_lookup_table *table;
    struct counter *counts;   /* during an adapt: tokens seen so far */
    int64_t docs;
} tv_state;

static const char *const mode_names[] = {"int", "multi_hot", "count", "tf_idf"};
static const char *const std_names[] = {"lower_and_strip_punctuation", "lower",
                                        "strip_punctuation", "none"};

/* The mask "" (when there is one) and "[UNK]". */
static int reserved(const tv_state *s) { return s->o.mask ? 2 : 1; }

static void clear_vocabulary(tv_state *s) {
    gb_lookup_table_free(s->table);
    free(s->vocab);
    free(s->vocab_bytes);
    free(s->idf);
    s->table = NULL;
    s->vocab = NULL;
    s->vocab_bytes = NULL;
    s->idf = NULL;
    s->vocab_size = 0;
}

/* Installs tokens[0..n) after the reserved entries, with idf weights
 * (tf_idf; NULL otherwise). */
static bool install(gb_module *m, const gb_string *tokens, int64_t n, const double *idf) {
    tv_state *s = gb_module_state(m);
    clear_vocabulary(s);
    int r = reserved(s);
    static const gb_string pad = {"", 0}, unk = {"[UNK]", 5};
    int64_t total = gb__strings_total(tokens, n) + 5;
    s->vocab_size = n + r;
    s->vocab = malloc((size_t)s->vocab_size * sizeof *s->vocab);
    s->vocab_bytes = malloc((size_t)total);
    if (idf) s->idf = malloc((size_t)s->vocab_size * sizeof *s->idf);
    if (!s->vocab || !s->vocab_bytes || (idf && !s->idf)) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory for a vocabulary of %lld tokens", (long long)n);
        clear_vocabulary(s);
        return false;
    }
    gb_string *v = s->vocab;
    if (r == 2) v[0] = pad;
    v[r - 1] = unk;
    gb__strings_pack(v + r - 1, &unk, 1, s->vocab_bytes);
    gb__strings_pack(v + r, tokens, n, s->vocab_bytes + 5);
    if (s->idf) {
        double mean = 0;
        for (int64_t k = 0; k < n; k++) mean += idf[k];
        for (int64_t k = 0; k < n; k++) s->idf[r + k] = (float)idf[k];
        for (int k = 0; k < r; k++) s->idf[k] = (float)(n ? mean / (double)n : 0.0); /* Keras: OOV gets the mean */
    }
    gb_scope_begin();
    int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (ids) for (int64_t k = 0; k < n; k++) ids[k] = r + k;
    gb_tensor *keys = ids ? gb_strings_from(tokens, 1, &n) : NULL;
    gb_tensor *vals = keys ? gb_tensor_from(GB_I64, ids, 1, &n) : NULL;
    s->table = vals ? gb_static_hash_table_new(keys, vals, r - 1) : NULL;
    free(ids);
    gb_scope_end();
    if (!s->table) {
        if (gb_ok()) gb__nn_error(m, GB_ERR_MEMORY, "out of memory for its lookup table");
        clear_vocabulary(s);
    }
    return s->table != NULL;
}

/* ---- the call --------------------------------------------------------------------------- */

/* x (rank 1) standardized and split: ragged tokens and row_splits; for
 * StringLookup and split none, each element alone. */
static bool tokenize(gb_module *m, gb_tensor *x, gb_tensor **tokens, gb_tensor **splits) {
    tv_state *s = gb_module_state(m);
    gb_tv_standardize st = s->o.standardize;
    if (st == GB_TV_LOWER_AND_STRIP_PUNCTUATION || st == GB_TV_LOWER) x = gb_strings_lower(x);
    if (st == GB_TV_LOWER_AND_STRIP_PUNCTUATION || st == GB_TV_STRIP_PUNCTUATION)
        x = gb_regex_replace(x, strip_regex, "", true);
    /* No split: maxsplit 0 keeps each string whole as its one token (an
     * empty string has none, as its mask token would count for nothing),
     * with splits made by the op, so a graph of any batch has them right. */
    bool whole = s->lookup || s->o.split == GB_TV_SPLIT_NONE;
    if (!gb_strings_split(x, whole ? " " : "", whole ? 0 : -1, tokens, splits)) return false;
    if (s->lookup || s->o.ngrams < 2) return *tokens && *splits;
    gb_tensor *t = *tokens, *sp = *splits;
    return t && sp && gb_strings_ngrams(t, sp, 1, s->o.ngrams, " ", tokens, splits);
}

/* StringLookup: int, ids of x's shape; the other modes, a row per
 * element of a rank-1 input or per row of a rank-2 one, counted through a
 * one-hot [rows, n, vocabulary] (StringLookup encodes categorical
 * features: rows of a few tokens). */
static gb_tensor *lookup_call(gb_module *m, gb_tensor *x) {
    tv_state *s = gb_module_state(m);
    gb_tensor *ids = gb_lookup_table_find(s->table, x);
    if (s->o.output_mode == GB_TV_INT || !ids) return ids;
    if (gb_rank(x) == 1) ids = gb_expand_dims(ids, 1);
    gb_tensor *hot = gb_one_hot(ids, s->vocab_size, 1, 0, GB_F32);
    int64_t steps = 1;
    if (s->o.output_mode == GB_TV_MULTI_HOT) return gb_reduce_max(hot, &steps, 1, false);
    gb_tensor *counts = gb_reduce_sum(hot, &steps, 1, false);
    if (s->o.output_mode == GB_TV_COUNT) return counts;
    return gb_mul(counts, gb_from_f32(s->idf, 1, &s->vocab_size));
}

static gb_tensor *tv_call(gb_module *m, gb_tensor *x, bool training) {
    (void)training;
    tv_state *s = gb_module_state(m);
    if (!s->table) {
        gb__nn_error(m, GB_ERR_STATE, "has no vocabulary: adapt it to data first "
                     "(gb_text_vectorization_adapt) or give one");
        return NULL;
    }
    if (!x) return NULL;
    if (gb_tensor_dtype(x) != GB_STRING) {
        gb__nn_error(m, GB_ERR_DTYPE, "expected string input, got %s", gb_dtype_name(gb_tensor_dtype(x)));
        return NULL;
    }
    if (s->lookup) return lookup_call(m, x);
    if (gb_rank(x) == 2 && gb_dim(x, 1) == 1) x = gb_reshape(x, 1, (int64_t[]){gb_dim(x, 0)});
    if (gb_rank(x) != 1) {
        char b[64];
        gb__nn_error(m, GB_ERR_SHAPE, "expected strings of shape [batch] or [batch, 1], got %s",
                     gb_shape_str(x, b, sizeof b));
        return NULL;
    }
    gb_tensor *tokens, *splits;
    if (!tokenize(m, x, &tokens, &splits)) return NULL;
    gb_tensor *ids = gb_lookup_table_find(s->table, tokens);
    switch (s->o.output_mode) {
    case GB_TV_INT: return gb_ragged_to_tensor(ids, splits, s->o.output_sequence_length);
    case GB_TV_MULTI_HOT: return gb_ragged_bincount(ids, splits, s->vocab_size, true);
    case GB_TV_COUNT: return gb_ragged_bincount(ids, splits, s->vocab_size, false);
    default: {
        gb_tensor *idf = gb_from_f32(s->idf, 1, &s->vocab_size);
        return gb_mul(gb_ragged_bincount(ids, splits, s->vocab_size, false), idf);
    }
    }
}

static bool tv_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank, int64_t *out) {
    tv_state *s = gb_module_state(m);
    if (s->lookup && s->o.output_mode == GB_TV_INT) {
        memcpy(out, in, (size_t)rank * sizeof *out);
        *out_rank = rank;
        return true;
    }
    if (s->lookup && rank != 1 && rank != 2) {
        char b[64];
        gb__nn_error(m, GB_ERR_SHAPE, "output_mode %s takes strings of shape [batch] or [batch, "
                     "tokens], got %s", mode_names[s->o.output_mode],
                     gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    if (!s->lookup && rank != 1 && !(rank == 2 && in[1] == 1)) {
        char b[64];
        gb__nn_error(m, GB_ERR_SHAPE, "expected strings of shape [batch] or [batch, 1], got %s",
                     gb__shape_fmt(rank, in, b, sizeof b));
        return false;
    }
    out[0] = in[0];
    out[1] = s->o.output_mode == GB_TV_INT ? s->o.output_sequence_length : s->vocab_size;
    *out_rank = 2;
    return true;
}

/* ---- adapt ---------------------------------------------------------------------------- */

typedef struct count_entry {
    gb_string token;   /* bytes malloc'd */
    int64_t count, docs, last_doc;
} count_entry;

typedef struct counter {
    count_entry *e;
    int64_t n, cap;    /* cap: a power of two, at most half full */
} counter;

static uint64_t hash_bytes(gb_string s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t k = 0; k < s.len; k++) h = (h ^ (unsigned char)s.data[k]) * 0x100000001b3ull;
    return h;
}

static bool counter_grow(counter *c) {
    int64_t cap = c->cap ? 2 * c->cap : 1024;
    count_entry *e = calloc((size_t)cap, sizeof *e);
    if (!e) return false;
    for (int64_t i = 0; i < c->cap; i++) {
        if (!c->e[i].token.data) continue;
        uint64_t j = hash_bytes(c->e[i].token) & (uint64_t)(cap - 1);
        while (e[j].token.data) j = (j + 1) & (uint64_t)(cap - 1);
        e[j] = c->e[i];
    }
    free(c->e);
    c->e = e;
    c->cap = cap;
    return true;
}

static bool counter_add(counter *c, gb_string t, int64_t doc) {
    if (2 * (c->n + 1) > c->cap && !counter_grow(c)) return false;
    uint64_t mask = (uint64_t)c->cap - 1, j = hash_bytes(t) & mask;
    while (c->e[j].token.data && !(c->e[j].token.len == t.len &&
                                   memcmp(c->e[j].token.data, t.data, (size_t)t.len) == 0))
        j = (j + 1) & mask;
    count_entry *e = &c->e[j];
    if (!e->token.data) {
        char *copy = malloc(t.len ? (size_t)t.len : 1);
        if (!copy) return false;
        if (t.len) memcpy(copy, t.data, (size_t)t.len);
        *e = (count_entry){.token = {copy, t.len}, .last_doc = -1};
        c->n++;
    }
    e->count++;
    if (e->last_doc != doc) e->docs++, e->last_doc = doc;
    return true;
}

static int by_count(const void *a, const void *b) {
    const count_entry *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    int64_t n = x->token.len < y->token.len ? x->token.len : y->token.len;
    int c = memcmp(x->token.data, y->token.data, (size_t)n);
    return c ? c : (x->token.len > y->token.len) - (x->token.len < y->token.len);
}

/* Whether a token can stand in a JSON config: no NUL, valid UTF-8. */
static bool config_safe(gb_string t) {
    const unsigned char *p = (const unsigned char *)t.data;
    for (int64_t k = 0; k < t.len;) {
        if (!p[k]) return false;
        int32_t cp;
        int len = gb__utf8_next(p + k, t.len - k, &cp);
        if (len < 0) return false;
        k += len;
    }
    return true;
}

static void counter_free(counter *c) {
    for (int64_t i = 0; c && i < c->cap; i++) free((char *)c->e[i].token.data);
    if (c) free(c->e);
    free(c);
}

bool gb__tv_adapt_batch(gb_module *m, gb_tensor *x) {
    tv_state *s = gb_module_state(m);
    if (!s->counts && !(s->counts = calloc(1, sizeof *s->counts))) {
        gb__nn_error(m, GB_ERR_MEMORY, "adapt: out of memory");
        return false;
    }
    if (gb_tensor_dtype(x) != GB_STRING || !gb_data(x)) {
        gb__nn_error(m, GB_ERR_DTYPE, "adapt: expected eager string tensors, got %s%s",
                     gb_dtype_name(gb_tensor_dtype(x)), gb_data(x) ? "" : " (symbolic)");
        return false;
    }
    gb_scope_begin();
    int64_t n = gb_size(x);
    gb_tensor *tokens = NULL, *splits = NULL;
    bool ok = tokenize(m, gb_reshape(x, 1, &n), &tokens, &splits);
    const gb_string *t = ok ? gb_data_strings(tokens) : NULL;
    const int64_t *sp = ok ? gb_data(splits) : NULL;
    for (int64_t d = 0; ok && d < n; d++, s->docs++)
        for (int64_t k = sp[d]; ok && k < sp[d + 1]; k++) ok = counter_add(s->counts, t[k], s->docs);
    if (ok != gb_ok() && !ok) gb__nn_error(m, GB_ERR_MEMORY, "adapt: out of memory");
    gb_scope_end();
    return ok;
}

bool gb__tv_adapt_finish(gb_module *m, bool ok) {
    tv_state *s = gb_module_state(m);
    counter *c = s->counts;
    int64_t docs = s->docs;
    s->counts = NULL;
    s->docs = 0;
    if (!c) c = calloc(1, sizeof *c); /* an empty dataset: an empty vocabulary */
    ok = ok && c;
    /* the most frequent first; reserved tokens and what JSON cannot hold left out */
    int64_t kept = 0;
    count_entry *sorted = ok ? malloc((size_t)(c->n ? c->n : 1) * sizeof *sorted) : NULL;
    for (int64_t i = 0; sorted && i < c->cap; i++) {
        gb_string t = c->e[i].token;
        if (!t.data || !t.len || !config_safe(t) || (t.len == 5 && !memcmp(t.data, "[UNK]", 5)))
            continue;
        sorted[kept++] = c->e[i];
    }
    if (sorted) qsort(sorted, (size_t)kept, sizeof *sorted, by_count);
    int64_t room = s->o.max_tokens > 0 ? s->o.max_tokens - reserved(s) : kept;
    if (kept > room) kept = room > 0 ? room : 0;
    gb_string *tokens = sorted ? malloc((size_t)(kept ? kept : 1) * sizeof *tokens) : NULL;
    double *idf = tokens ? malloc((size_t)(kept ? kept : 1) * sizeof *idf) : NULL;
    for (int64_t k = 0; idf && k < kept; k++) {
        tokens[k] = sorted[k].token;
        idf[k] = log(1.0 + (double)docs / (1.0 + (double)sorted[k].docs)); /* Keras' idf */
    }
    if (ok && !idf) gb__nn_error(m, GB_ERR_MEMORY, "adapt: out of memory");
    ok = ok && idf && install(m, tokens, kept, s->o.output_mode == GB_TV_TF_IDF ? idf : NULL);
    free(tokens);
    free(idf);
    free(sorted);
    counter_free(c);
    return ok;
}

bool gb_text_vectorization_adapt_tensor(gb_module *m, gb_tensor *x) {
    if (!m || !x) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_text_vectorization_adapt_tensor: %s is NULL",
                               m ? "the tensor" : "the layer");
        return false;
    }
    return gb__tv_adapt_finish(m, gb__tv_adapt_batch(m, x));
}

gb_tensor *gb_text_vectorization_vocabulary(gb_module *m) {
    tv_state *s = m ? gb_module_state(m) : NULL;
    if (!s || !s->vocab) {
        gb__error(GB_ERR_STATE, NULL, "gb_text_vectorization_vocabulary: %s",
                  s ? "the layer has no vocabulary yet" : "the layer is NULL");
        return NULL;
    }
    return gb_strings_from(s->vocab, 1, &s->vocab_size);
}

int64_t gb_text_vectorization_vocabulary_size(gb_module *m) {
    return m ? ((tv_state *)gb_module_state(m))->vocab_size : 0;
}

/* ---- config ------------------------------------------------------------------------------ */

static bool tv_get_config(gb_module *m, gb_config *c) {
    tv_state *s = gb_module_state(m);
    gb_config *v = gb_config_put_list(c, "vocabulary");
    bool ok = v && gb_config_put_int(c, "max_tokens", s->o.max_tokens) &&
              gb_config_put_string(c, "output_mode", mode_names[s->o.output_mode]) &&
              gb_config_put_string(c, "standardize", std_names[s->o.standardize]) &&
              gb_config_put_string(c, "split", s->o.split == GB_TV_SPLIT_NONE ? "none" : "whitespace") &&
              gb_config_put_int(c, "output_sequence_length", s->o.output_sequence_length) &&
              gb_config_put_int(c, "ngrams", s->o.ngrams) &&
              (!s->lookup || (s->o.mask ? gb_config_put_string(c, "mask_token", "")
                                        : gb_config_put_null(c, "mask_token")));
    /* the learned tokens only: the reserved ones follow from the mode */
    for (int64_t k = reserved(s); ok && k < s->vocab_size; k++) {
        char *t = malloc((size_t)s->vocab[k].len + 1);
        ok = t != NULL;
        if (t) {
            memcpy(t, s->vocab[k].data, (size_t)s->vocab[k].len);
            t[s->vocab[k].len] = '\0';
            ok = gb_config_put_string(v, NULL, t) != NULL;
            free(t);
        }
    }
    gb_config *idf = ok && s->idf ? gb_config_put_list(c, "idf_weights") : NULL;
    for (int64_t k = reserved(s); idf && ok && k < s->vocab_size; k++)
        ok = gb_config_put_number(idf, NULL, s->idf[k]) != NULL;
    return ok;
}

static int index_of(const char *const *names, int n, const char *v) {
    for (int i = 0; v && i < n; i++)
        if (!strcmp(names[i], v)) return i;
    return -1;
}

static gb_module *tv_from_config(const gb_config *c, bool lookup) {
    const char *who = lookup ? "StringLookup" : "TextVectorization";
    gb_text_vectorization_options o = {.name = gb__config_name(c, who)};
    const char *mode = gb_config_read_string(c, who, "output_mode", "int");
    const char *st = gb_config_read_string(c, who, "standardize", "lower_and_strip_punctuation");
    const char *split = gb_config_read_string(c, who, "split", "whitespace");
    if (!mode || !st || !split || !gb_config_read_int(c, who, "max_tokens", 0, &o.max_tokens) ||
        !gb_config_read_int(c, who, "output_sequence_length", 0, &o.output_sequence_length) ||
        !gb_config_read_int(c, who, "ngrams", 0, &o.ngrams))
        return NULL;
    const gb_config *mask = gb_config_get(c, "mask_token");
    const char *mask_token = mask ? gb_config_string(mask) : "";  /* absent: written before the option */
    if (mask && gb_config_kind_of(mask) != GB_CONFIG_NULL && (!mask_token || mask_token[0])) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'mask_token' must be null or \"\" (the only "
                  "mask token glassbox has)", who);
        return NULL;
    }
    o.mask = mask_token != NULL;
    int mi = index_of(mode_names, 4, mode), si = index_of(std_names, 4, st);
    if (mi < 0 || si < 0) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: unknown %s '%s'", who,
                  mi < 0 ? "output_mode" : "standardize", mi < 0 ? mode : st);
        return NULL;
    }
    o.output_mode = (gb_tv_output_mode)mi;
    o.standardize = (gb_tv_standardize)si;
    o.split = strcmp(split, "none") ? GB_TV_SPLIT_WHITESPACE : GB_TV_SPLIT_NONE;
    gb_module *m = lookup ? gb_string_lookup_new(&o) : gb_text_vectorization_new(&o);
    const gb_config *v = gb_config_get(c, "vocabulary"), *idf = gb_config_get(c, "idf_weights");
    if (!m || !v || gb_config_kind_of(v) != GB_CONFIG_LIST || !gb_config_len(v)) return m;
    int64_t n = gb_config_len(v);
    gb_string *t = malloc((size_t)n * sizeof *t);
    double *w = idf ? malloc((size_t)n * sizeof *w) : NULL;
    bool ok = t && (!idf || (w && gb_config_len(idf) == n));
    for (int64_t k = 0; ok && k < n; k++) {
        const char *s = gb_config_string(gb_config_at(v, (int)k));
        ok = s != NULL && (!w || gb_config_is_number(gb_config_at(idf, (int)k)));
        if (ok) t[k] = (gb_string){s, (int64_t)strlen(s)};
        if (ok && w) w[k] = gb_config_number(gb_config_at(idf, (int)k));
    }
    if (!ok) gb__error(GB_ERR_VALUE, NULL, "%s config: 'vocabulary' must be a list of strings "
                       "(and 'idf_weights' as many numbers)", who);
    ok = ok && install(m, t, n, w);
    free(t);
    free(w);
    if (!ok) {
        gb_module_free(m);
        return NULL;
    }
    return m;
}

static gb_module *text_from_config(const gb_config *c) { return tv_from_config(c, false); }
static gb_module *lookup_from_config(const gb_config *c) { return tv_from_config(c, true); }

/* ---- checkpoints: the vocabulary (reserved entries first, as
 * gb_text_vectorization_vocabulary gives it) and the idf weights ---- */

static int tv_assets(gb_module *m, gb_tensor_spec *specs) {
    tv_state *s = gb_module_state(m);
    specs[0] = GB_SPEC("vocabulary", GB_STRING, -1);
    if (s->o.output_mode != GB_TV_TF_IDF) return 1;
    specs[1] = GB_SPEC("idf_weights", GB_F32, -1);
    return 2;
}

static gb_tensor *tv_asset_value(gb_module *m, int i) {
    tv_state *s = gb_module_state(m);
    if (!s->vocab) return NULL;
    return i == 0 ? gb_strings_from(s->vocab, 1, &s->vocab_size) : gb_from_f32(s->idf, 1, &s->vocab_size);
}

/* A saved vocabulary must begin with this layer's reserved entries: one
 * saved with another output_mode or mask would shift every id. */
static bool reserved_match(const tv_state *s, const gb_tensor *v) {
    static const gb_string pad = {"", 0}, unk = {"[UNK]", 5};
    int r = reserved(s);
    if (gb_size(v) < r) return false;
    for (int k = 0; k < r; k++) {
        gb_string want = k == r - 1 ? unk : pad, got = gb_get_string(v, k);
        if (got.len != want.len || memcmp(got.data, want.data, (size_t)got.len)) return false;
    }
    return true;
}

static bool tv_set_assets(gb_module *m, gb_tensor *const *v) {
    tv_state *s = gb_module_state(m);
    if (!v[0]) return true; /* the checkpoint has none: the layer stays as it is */
    bool idf = s->o.output_mode == GB_TV_TF_IDF;
    if (gb_rank(v[0]) != 1 || !reserved_match(s, v[0])) {
        gb__nn_error(m, GB_ERR_VALUE, "the checkpoint's vocabulary does not start with this "
                     "layer's reserved tokens (%s): it was saved with another output_mode or mask",
                     reserved(s) == 2 ? "'', '[UNK]'" : "'[UNK]'");
        return false;
    }
    if (idf && (!v[1] || gb_rank(v[1]) != 1 || gb_size(v[1]) != gb_size(v[0]))) {
        gb__nn_error(m, GB_ERR_VALUE, "output_mode tf_idf needs idf_weights of the vocabulary's "
                     "%lld entries; the checkpoint has %s", (long long)gb_size(v[0]),
                     v[1] ? "another number" : "none");
        return false;
    }
    int r = reserved(s);
    int64_t n = gb_size(v[0]) - r;
    double *w = idf ? malloc((size_t)(n ? n : 1) * sizeof *w) : NULL;
    if (idf && !w) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory for %lld idf weights", (long long)n);
        return false;
    }
    for (int64_t k = 0; w && k < n; k++) w[k] = gb_get(v[1], r + k);
    bool ok = install(m, gb_data_strings(v[0]) + r, n, w);
    free(w);
    return ok;
}

static void tv_free(gb_module *m) {
    tv_state *s = gb_module_state(m);
    clear_vocabulary(s);
    counter_free(s->counts);
}

const gb_module_type gb__text_vectorization_type = {
    .class_name = "TextVectorization",
    .default_name = "text_vectorization",
    .state_size = sizeof(tv_state),
    .output_shape = tv_output_shape,
    .call = tv_call,
    .free = tv_free,
    .get_config = tv_get_config,
    .from_config = text_from_config,
    .assets = tv_assets,
    .asset_value = tv_asset_value,
    .set_assets = tv_set_assets,
};

const gb_module_type gb__string_lookup_type = {
    .class_name = "StringLookup",
    .default_name = "string_lookup",
    .state_size = sizeof(tv_state),
    .output_shape = tv_output_shape,
    .call = tv_call,
    .free = tv_free,
    .get_config = tv_get_config,
    .from_config = lookup_from_config,
    .assets = tv_assets,
    .asset_value = tv_asset_value,
    .set_assets = tv_set_assets,
};

static gb_module *make(const gb_module_type *type, const gb_text_vectorization_options *opts,
                       bool lookup) {
    static const gb_text_vectorization_options defaults;
    gb_text_vectorization_options o = opts ? *opts : defaults;
    const char *who = type->class_name;
    if ((unsigned)o.output_mode > GB_TV_TF_IDF || (unsigned)o.standardize > GB_TV_NO_STANDARDIZE) {
        gb__error(GB_ERR_VALUE, who, "%s: unknown output_mode or standardize", who);
        return NULL;
    }
    if (lookup) {
        o.standardize = GB_TV_NO_STANDARDIZE;
        o.split = GB_TV_SPLIT_NONE;
        o.ngrams = 0;
        if (o.output_mode != GB_TV_INT && o.mask) {
            gb__error(GB_ERR_VALUE, who, "%s: a mask is for output_mode int (the other modes count "
                      "no mask token)", who);
            return NULL;
        }
    } else if (o.output_mode == GB_TV_INT && o.output_sequence_length < 1) {
        gb__error(GB_ERR_VALUE, who, "%s: output_mode int needs output_sequence_length >= 1, "
                  "got %lld", who, (long long)o.output_sequence_length);
        return NULL;
    }
    if (!lookup) o.mask = o.output_mode == GB_TV_INT; /* Keras: "" pads the int mode's rows */
    if (o.ngrams < 0) {
        gb__error(GB_ERR_VALUE, who, "%s: ngrams must be >= 0 (0 or 1: single tokens), got %lld",
                  who, (long long)o.ngrams);
        return NULL;
    }
    if (o.max_tokens < 0 || (o.max_tokens > 0 && o.max_tokens <= (o.mask ? 2 : 1))) {
        gb__error(GB_ERR_VALUE, who, "%s: max_tokens %lld leaves no room for a token beyond "
                  "the reserved ones", who, (long long)o.max_tokens);
        return NULL;
    }
    gb_module *m = gb_module_new(type, o.name, 0);
    if (!m) return NULL;
    tv_state *s = gb_module_state(m);
    s->o = o;
    s->o.name = NULL;
    s->lookup = lookup;
    return m;
}

gb_module *gb_text_vectorization_new(const gb_text_vectorization_options *opts) {
    return make(&gb__text_vectorization_type, opts, false);
}

gb_module *gb_string_lookup_new(const gb_text_vectorization_options *opts) {
    return make(&gb__string_lookup_type, opts, true);
}
