/* data/text_files.c — text files as datasets of strings: one element per
 * line (tf.data.TextLineDataset) or per record between separator lines
 * (fortune files' "%"), from every file matching a glob pattern in
 * sorted order (tf.data.Dataset.list_files without the shuffle), with the
 * index of the file an element came from as an optional second component.
 *
 * The files are read when the dataset is made and kept by it: every
 * element's string points into its bytes, so iterating copies nothing and
 * a batch of strings holds pairs pointing there. Tensors an iterator hands
 * out are valid while the dataset lives (gb_keep copies their bytes).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/internal.h"

typedef struct text_ds {
    gb_dataset base;
    int64_t count;
    gb_string *elems;     /* one per element, into texts */
    int64_t *file_index;  /* per element */
    char **texts;         /* each file's bytes */
    int nfiles;
} text_ds;

typedef struct text_iter {
    gb__iter base;
    const text_ds *ds;
    int64_t next_index;
} text_iter;

static bool text_next(gb__iter *base, gb__element *out) {
    text_iter *it = (text_iter *)base;
    const text_ds *ds = it->ds;
    if (it->next_index >= ds->count) return false;
    int64_t i = it->next_index++;
    out->n = ds->base.ncomp;
    out->c[0] = (gb__component){.data = &ds->elems[i], .dtype = GB_STRING, .rank = 0};
    if (out->n > 1)
        out->c[1] = (gb__component){.data = &ds->file_index[i], .dtype = GB_I64, .rank = 0};
    return true;
}

static void text_iter_free(gb__iter *it) { free(it); }

static const gb__iter_ops text_iter_ops = {text_next, text_iter_free};

static gb__iter *text_iter_new(gb_dataset *ds, gb__pool *pool) {
    text_iter *it = gb__iter_alloc(sizeof *it, &text_iter_ops, pool);
    if (!it) return NULL;
    it->ds = (const text_ds *)ds;
    return &it->base;
}

static int64_t text_cardinality(const gb_dataset *ds) { return ((const text_ds *)ds)->count; }

static void text_destroy(gb_dataset *base) {
    text_ds *ds = (text_ds *)base;
    for (int f = 0; f < ds->nfiles; f++) free(ds->texts[f]);
    free(ds->texts);
    free(ds->elems);
    free(ds->file_index);
}

static const gb__dataset_ops text_ops = {"TextLineDataset", text_iter_new, text_cardinality,
                                         text_destroy};

/* ---- splitting a file ---------------------------------------------------------------------- */

static bool add_element(text_ds *ds, int64_t *cap, const char *p, int64_t len, int file) {
    if (ds->count == *cap) {
        int64_t n = *cap ? 2 * *cap : 1024;
        gb_string *e = realloc(ds->elems, (size_t)n * sizeof *e);
        if (e) ds->elems = e;
        int64_t *fi = e ? realloc(ds->file_index, (size_t)n * sizeof *fi) : NULL;
        if (!fi) {
            gb__error(GB_ERR_MEMORY, NULL, "text dataset: out of memory for %lld elements",
                      (long long)n);
            return false;
        }
        ds->file_index = fi;
        *cap = n;
    }
    ds->elems[ds->count] = (gb_string){len ? p : gb__empty_bytes, len};
    ds->file_index[ds->count++] = file;
    return true;
}

/* Lines of text (\n or \r\n; a last line without \n counts): each one an
 * element, or, with a separator, each run of lines between lines equal to
 * it (joined by \n; empty records skipped). */
static bool split_text(text_ds *ds, int64_t *cap, const char *text, size_t len, const char *sep,
                       int file) {
    size_t seplen = sep ? strlen(sep) : 0, start = 0, rec = 0;
    bool in_rec = false;
    while (start < len) {
        size_t end = start;
        while (end < len && text[end] != '\n') end++;
        size_t stop = end > start && text[end - 1] == '\r' ? end - 1 : end;
        if (!sep) {
            if (!add_element(ds, cap, text + start, (int64_t)(stop - start), file)) return false;
        } else if (stop - start == seplen && memcmp(text + start, sep, seplen) == 0) {
            size_t rend = start - 1; /* the \n before this line */
            if (rend > rec && text[rend - 1] == '\r') rend--;
            if (in_rec && !add_element(ds, cap, text + rec, (int64_t)(rend - rec), file))
                return false;
            in_rec = false;
        } else if (!in_rec) {
            rec = start;
            in_rec = true;
        }
        start = end + 1;
    }
    if (in_rec) {
        size_t stop = len;
        while (stop > rec && (text[stop - 1] == '\n' || text[stop - 1] == '\r')) stop--;
        if (!add_element(ds, cap, text + rec, (int64_t)(stop - rec), file)) return false;
    }
    return true;
}

gb_dataset *gb_dataset_from_text_files(const char *pattern, const gb_text_options *options) {
    const char *fn = "gb_dataset_from_text_files";
    gb_text_options o = options ? *options : (gb_text_options){0};
    if (!pattern) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the pattern is NULL", fn);
        return NULL;
    }
    if (o.record_separator && !o.record_separator[0]) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the record separator is empty (NULL: one element "
                  "per line)", fn);
        return NULL;
    }
    glob_t g;
    int rc = glob(pattern, GLOB_BRACE, NULL, &g);
    if (rc != 0) {
        gb__error(GB_ERR_IO, NULL, "%s: %s '%s'", fn,
                  rc == GLOB_NOMATCH ? "no file matches" : "cannot list the files of", pattern);
        if (rc != GLOB_NOMATCH) globfree(&g);
        return NULL;
    }
    text_ds *ds = (text_ds *)gb__dataset_new(sizeof *ds, &text_ops, NULL, o.with_file_index ? 2 : 1);
    if (ds && !(ds->texts = calloc(g.gl_pathc, sizeof *ds->texts))) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", fn);
        gb_dataset_free(&ds->base);
        ds = NULL;
    }
    int64_t cap = 0;
    for (size_t f = 0; ds && f < g.gl_pathc; f++) {
        size_t len;
        char *text = gb__file_read(g.gl_pathv[f], "text file", &len);
        if (text) ds->texts[ds->nfiles++] = text;
        if (!text || !split_text(ds, &cap, text, len, o.record_separator, (int)f)) {
            gb_dataset_free(&ds->base);
            ds = NULL;
        }
    }
    globfree(&g);
    return ds ? &ds->base : NULL;
}
