/* ops/lookup_table.c — static hash tables from strings to int64 ids
 * (tf.lookup.StaticHashTable), the LookupTableFindV2 op that reads them,
 * and vocabulary files (one token per line, its id the line number, as
 * tf.lookup.TextFileInitializer with LINE_NUMBER / WHOLE_LINE).
 *
 * A table owns copies of its keys (one block) and is immutable once made,
 * so lookups from any thread need no lock. Graphs name it by id (core/
 * handles.c), as they name variables: a node of a freed table fails by
 * name instead of reading freed memory. Open addressing with linear
 * probing over a power-of-two array at most half full, keyed by the
 * string ops' hash (gb__string_hash).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"
#include "ops/strings_internal.h"

struct gb_lookup_table {
    int64_t id;
    int64_t n, cap;       /* entries; slots (a power of two) */
    gb_string *keys;      /* slot -> key; data NULL when empty */
    int64_t *values;
    int64_t default_value;
    char *bytes;          /* every key's bytes */
};

static gb_handles tables;

/* The slot of key in t: where it is, or the empty slot where it belongs. */
static int64_t probe(const gb_lookup_table *t, gb_string key) {
    uint64_t mask = (uint64_t)t->cap - 1, i = gb__string_hash(key) & mask;
    while (t->keys[i].data && !(t->keys[i].len == key.len &&
                                memcmp(t->keys[i].data, key.data, (size_t)key.len) == 0))
        i = (i + 1) & mask;
    return (int64_t)i;
}

void gb_lookup_table_free(gb_lookup_table *t) {
    if (!t) return;
    gb__handle_remove(&tables, t->id);
    free(t->keys);
    free(t->values);
    free(t->bytes);
    free(t);
}

/* A table of n keys (values[i] for keys[i]); NULL after an error naming
 * `fn` (a repeated key, memory). */
static gb_lookup_table *table_new(const char *fn, const gb_string *keys, const int64_t *values,
                                  int64_t n, int64_t default_value) {
    gb_lookup_table *t = calloc(1, sizeof *t);
    int64_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    int64_t total = gb__strings_total(keys, n);
    if (t) {
        t->cap = cap;
        t->default_value = default_value;
        t->keys = calloc((size_t)cap, sizeof *t->keys);
        t->values = calloc((size_t)cap, sizeof *t->values);
        t->bytes = malloc(total ? (size_t)total : 1);
    }
    if (!t || !t->keys || !t->values || !t->bytes) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for %lld keys", fn, (long long)n);
        gb_lookup_table_free(t);
        return NULL;
    }
    char *at = t->bytes;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = probe(t, keys[k]);
        if (t->keys[i].data) {
            char shown[120];
            gb__string_repr(&keys[k], shown, sizeof shown);
            gb__error(GB_ERR_VALUE, NULL, "%s: key %lld, %s, is a repeat of an earlier key",
                      fn, (long long)k, shown);
            gb_lookup_table_free(t);
            return NULL;
        }
        if (keys[k].len) memcpy(at, keys[k].data, (size_t)keys[k].len);
        t->keys[i] = (gb_string){at, keys[k].len};
        t->values[i] = values[k];
        at += keys[k].len;
        t->n++;
    }
    if (!(t->id = gb__handle_add(&tables, t, "a lookup table"))) {
        gb_lookup_table_free(t);
        return NULL;
    }
    return t;
}

gb_lookup_table *gb_static_hash_table_new(gb_tensor *keys, gb_tensor *values,
                                          int64_t default_value) {
    const char *fn = "gb_static_hash_table_new";
    if (!keys || !values) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: keys or values is NULL", fn);
        return NULL;
    }
    if (keys->dtype != GB_STRING || values->dtype != GB_I64 || !keys->data || !values->data ||
        keys->rank != 1 || !gb_same_shape(keys, values)) {
        char s1[64], s2[64];
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: keys must be an eager rank-1 string tensor and values int64 of its "
                  "shape, got %s %s and %s %s", fn, gb_dtype_name(keys->dtype),
                  gb_shape_str(keys, s1, sizeof s1), gb_dtype_name(values->dtype),
                  gb_shape_str(values, s2, sizeof s2));
        return NULL;
    }
    return table_new(fn, keys->data, values->data, keys->size, default_value);
}

int64_t gb_lookup_table_size(const gb_lookup_table *t) { return t ? t->n : 0; }

int64_t gb__lookup_table_id(const gb_lookup_table *t) { return t ? t->id : 0; }

gb_lookup_table *gb__lookup_table_by_id(int64_t id) { return gb__handle_get(&tables, id); }

gb_lookup_table *gb__lookup_table_make(const char *what, const gb_string *keys, const int64_t *values,
                                       int64_t n, int64_t default_value) {
    return table_new(what, keys, values, n, default_value);
}

bool gb__lookup_table_export(const gb_lookup_table *t, gb_string *keys, int64_t *values,
                             int64_t *default_value) {
    int64_t k = 0;
    for (int64_t i = 0; i < t->cap; i++) {
        if (!t->keys[i].data) continue;
        keys[k] = t->keys[i];
        values[k++] = t->values[i];
    }
    *default_value = t->default_value;
    return k == t->n;
}

/* ---- vocabulary files ---------------------------------------------------------------- */

gb_lookup_table *gb__vocabulary_parse(const char *what, const char *text, size_t len,
                                      int64_t default_value) {
    /* Lines split on \n (a \r before it dropped); a last line without \n
     * counts; an empty line is an error, since it is no token. */
    int64_t n = 0;
    for (size_t i = 0; i < len; i++) n += text[i] == '\n';
    if (len && text[len - 1] != '\n') n++;
    gb_string *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    int64_t *ids = malloc((size_t)(n ? n : 1) * sizeof *ids);
    gb_lookup_table *t = NULL;
    if (!keys || !ids) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for %lld tokens", what, (long long)n);
        goto done;
    }
    size_t start = 0;
    for (int64_t k = 0; k < n; k++) {
        size_t end = start;
        while (end < len && text[end] != '\n') end++;
        size_t stop = end > start && text[end - 1] == '\r' ? end - 1 : end;
        if (stop == start) {
            gb__error(GB_ERR_VALUE, NULL, "%s: line %lld is empty; every line is one token", what,
                      (long long)k + 1);
            goto done;
        }
        keys[k] = (gb_string){text + start, (int64_t)(stop - start)};
        ids[k] = k;
        start = end + 1;
    }
    t = table_new(what, keys, ids, n, default_value);
done:
    free(keys);
    free(ids);
    return t;
}

gb_lookup_table *gb_lookup_table_from_file(const char *path, int64_t default_value) {
    if (!path) {
        gb__error(GB_ERR_VALUE, NULL, "gb_lookup_table_from_file: path is NULL");
        return NULL;
    }
    size_t len;
    char *text = gb__file_read(path, "vocabulary", &len);
    if (!text) return NULL;
    char what[300];
    snprintf(what, sizeof what, "vocabulary %s", path);
    gb_lookup_table *t = gb__vocabulary_parse(what, text, len, default_value);
    free(text);
    return t;
}

/* ---- LookupTableFindV2 ------------------------------------------------------------------ */

static int infer_find(const gb_op_call *c, gb_out_desc *out) {
    if (!gb__need_strings(c, 0)) return -1;
    if (!gb__handle_get(&tables, c->attrs->i[0])) {
        gb__op_error(c, GB_ERR_STATE, "%s: lookup table %lld was freed (or never made)",
                     c->def->name, (long long)c->attrs->i[0]);
        return -1;
    }
    const gb_tensor *x = c->in[0];
    out->dtype = GB_I64;
    out->rank = x->rank;
    memcpy(out->shape, x->shape, (size_t)x->rank * sizeof *x->shape);
    return 1;
}

static bool kernel_find(const gb_op_call *c, gb_tensor **out) {
    const gb_lookup_table *t = gb__handle_get(&tables, c->attrs->i[0]);
    if (!t) {
        gb__op_error(c, GB_ERR_STATE, "%s: lookup table %lld was freed", c->def->name,
                     (long long)c->attrs->i[0]);
        return false;
    }
    const gb_string *s = c->in[0]->data;
    int64_t *r = out[0]->data;
    for (int64_t k = 0; k < out[0]->size; k++) {
        int64_t i = probe(t, s[k]);
        r[k] = t->keys[i].data ? t->values[i] : t->default_value;
    }
    return true;
}

const gb_op_def gb_opdef_lookup_table_find = {
    .name = "LookupTableFindV2",
    .arity = 1,
    .inputs_doc = "keys (strings); the table is the table_id attribute",
    .infer = infer_find,
    .kernel = kernel_find,
};

gb_tensor *gb_lookup_table_find(gb_lookup_table *t, gb_tensor *keys) {
    if (!t) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_lookup_table_find: the table is NULL");
        return NULL;
    }
    gb_attrs a = {.i = {t->id}, .ni = 1};
    return gb__op1(GB_OP_LOOKUP_TABLE_FIND, &keys, 1, &a);
}
