/* data/csv.c — CSV files as datasets (tf.data.experimental.CsvDataset):
 * typed columns, an optional header, defaults for empty fields, a choice
 * of columns and of the delimiter.
 *
 * The whole file is parsed when the dataset is made, into one column
 * array per selected column, and the result is a slices dataset over
 * them: a bad record is reported at once, before training starts, rather
 * than ending some later epoch, and iterating copies nothing. The parser
 * works on bytes in memory (gb_dataset_from_csv only fetches the file), so
 * it is tested and fuzzed without files.
 *
 * Every way a file can be wrong has its own message naming the file, the
 * line and the column (number and, with a header, name): a field count
 * that differs from the header's, an empty field without a default, text
 * that is not a number of the column's type, a number out of its range, a
 * quote never closed, text after a closing quote. The parser never reads
 * past the buffer and never trusts a field's length.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "data/internal.h"

enum {
    MAX_FIELDS = 1 << 16,   /* per record: more is not a table but a runaway line */
    NAME_BYTES = 64,        /* of a column name kept for messages */
    NUMBER_BYTES = 128,     /* a longer field is not a number */
};

/* A field of the current record: raw bytes inside the input. */
typedef struct span {
    const char *s;
    size_t n;
    bool quoted;   /* "" inside stands for " */
} span;

typedef struct column {
    int index;                /* in the record */
    gb_dtype dtype;
    char name[NAME_BYTES];    /* "" without a header */
    bool has_default;
    union {
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
    } dflt;
    char *values;             /* rows * dtype size */
    size_t cap;               /* bytes */
} column;

typedef struct csv_reader {
    const char *name;
    const char *p, *end;
    char delim;
    int64_t line;          /* of p */
    int64_t record_line;   /* where the current record began */
    span *fields;
    int nfields, capfields;
} csv_reader;

static bool io_error(const csv_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "<file>:<line>: <message>" for the current record. */
static bool io_error(const csv_reader *r, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_IO, NULL, "%s:%lld: %s", r->name, (long long)r->record_line, msg);
    return false;
}

/* " ('name')" when the column has one. */
static const char *quoted_name(const column *c, char *buf, size_t n) {
    if (c->name[0]) snprintf(buf, n, " ('%s')", c->name);
    else buf[0] = 0;
    return buf;
}

/* ---- records --------------------------------------------------------------------------- */

static bool push_field(csv_reader *r, span f) {
    if (r->nfields == r->capfields) {
        if (r->capfields >= MAX_FIELDS)
            return io_error(r, "more than %d fields in one record", MAX_FIELDS);
        int cap = r->capfields ? 2 * r->capfields : 16;
        span *m = realloc(r->fields, (size_t)cap * sizeof *m);
        if (!m) {
            gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for the fields of a record", r->name);
            return false;
        }
        r->fields = m;
        r->capfields = cap;
    }
    r->fields[r->nfields++] = f;
    return true;
}

/* At a line end ("\n", "\r\n", or "\r" ending the input)? */
static bool at_line_end(const csv_reader *r, const char *p) {
    return p < r->end && (*p == '\n' || (*p == '\r' && (p + 1 == r->end || p[1] == '\n')));
}

/* A quoted field starting at r->p (on the quote). */
static bool read_quoted(csv_reader *r, span *f) {
    const char *p = r->p + 1;
    f->s = p;
    f->quoted = true;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(r->end - p));
        if (!q) {
            return io_error(r, "column %d: a quoted field is not closed before the end of the "
                               "file", r->nfields + 1);
        }
        for (const char *c = p; c < q; c++) r->line += *c == '\n';
        if (q + 1 < r->end && q[1] == '"') {   /* "" inside: a quote */
            p = q + 2;
            continue;
        }
        f->n = (size_t)(q - f->s);
        r->p = q + 1;
        if (r->p == r->end || *r->p == r->delim || at_line_end(r, r->p)) return true;
        return io_error(r, "column %d: text after the closing quote of a quoted field",
                        r->nfields + 1);
    }
}

/* The next record's fields into r->fields: 1 when there is one, 0 at the
 * end of the input, -1 after an error. Blank lines are skipped. */
static int read_record(csv_reader *r) {
    for (;;) {
        if (r->p >= r->end) return 0;
        if (!at_line_end(r, r->p)) break;
        r->p += *r->p == '\r' ? 2 : 1;
        if (r->p > r->end) r->p = r->end;
        r->line++;
    }
    r->record_line = r->line;
    r->nfields = 0;
    for (;;) {
        span f = {.s = r->p};
        if (r->p < r->end && *r->p == '"') {
            if (!read_quoted(r, &f)) return -1;
        } else {
            while (r->p < r->end && *r->p != r->delim && !at_line_end(r, r->p)) r->p++;
            f.n = (size_t)(r->p - f.s);
        }
        if (!push_field(r, f)) return -1;
        if (r->p < r->end && *r->p == r->delim) {
            r->p++;   /* a delimiter at the line's end gives an empty last field */
            continue;
        }
        if (r->p < r->end) {   /* the line end */
            r->p += *r->p == '\r' ? 2 : 1;
            if (r->p > r->end) r->p = r->end;
            r->line++;
        }
        return 1;
    }
}

/* A field's text, unquoted, into buf (NUL-terminated, at most n - 1
 * bytes, *len of them: a NUL byte in the field stays in); false when it
 * does not fit. */
static bool field_text(const span *f, char *buf, size_t n, size_t *len) {
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->quoted && f->s[i] == '"') i++;   /* the second of "" */
        if (k + 1 >= n) return false;
        buf[k++] = f->s[i];
    }
    buf[k] = 0;
    *len = k;
    return true;
}

/* ---- values ----------------------------------------------------------------------------- */

/* Parses text (trimmed of spaces and tabs) as dt into out. NULL on
 * success, else why not; *empty when there is nothing but spaces. */
static const char *parse_value(const char *text, size_t len, gb_dtype dt, void *out,
                               bool *empty) {
    while (len && (*text == ' ' || *text == '\t')) text++, len--;
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t')) len--;
    *empty = len == 0;
    if (*empty) return "empty";
    if (memchr(text, 0, len)) return "contains a NUL byte";
    char buf[NUMBER_BYTES];
    if (len >= sizeof buf) return "too long to be a number";
    memcpy(buf, text, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    if (dt == GB_F32 || dt == GB_F64) {
        double v = dt == GB_F32 ? strtof(buf, &end) : strtod(buf, &end);
        if (end != buf + len) return "not a number";
        /* ERANGE on overflow (an infinity from a finite text); underflow
         * to a tiny value or 0 is a fine reading. */
        if (errno == ERANGE && isinf(v)) return "out of range";
        if (dt == GB_F32) *(float *)out = (float)v;
        else *(double *)out = v;
        return NULL;
    }
    long long v = strtoll(buf, &end, 10);
    if (end != buf + len) return "not an integer";
    if (errno == ERANGE || (dt == GB_I32 && (v < INT32_MIN || v > INT32_MAX)))
        return "out of range";
    if (dt == GB_I32) *(int32_t *)out = (int32_t)v;
    else *(int64_t *)out = (int64_t)v;
    return NULL;
}

/* Row `row` of column c from field f (or the default). */
static bool store(csv_reader *r, column *c, const span *f, int64_t row) {
    size_t es = gb_dtype_size(c->dtype);
    size_t need = (size_t)(row + 1) * es;
    if (need > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64 * es;
        char *v = realloc(c->values, cap);
        if (!v) {
            gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory after %lld records", r->name,
                      (long long)row);
            return false;
        }
        c->values = v;
        c->cap = cap;
    }
    void *dst = c->values + (size_t)row * es;
    char text[NUMBER_BYTES + 1], nm[NAME_BYTES + 8];
    size_t len = 0;
    bool fits = field_text(f, text, sizeof text, &len), empty = false;
    const char *why = fits ? parse_value(text, len, c->dtype, dst, &empty) : "too long to be a number";
    if (!why) return true;
    if (empty && c->has_default) {
        memcpy(dst, &c->dflt, es);
        return true;
    }
    if (empty)
        return io_error(r, "column %d%s: the field is empty and the column has no default",
                        c->index + 1, quoted_name(c, nm, sizeof nm));
    return io_error(r, "column %d%s: cannot read '%.40s%s' as %s: %s", c->index + 1,
                    quoted_name(c, nm, sizeof nm), text, fits && len <= 40 ? "" : "...",
                    gb_dtype_name(c->dtype), why);
}

/* ---- options -------------------------------------------------------------------------- */

static bool check_option_columns(const char *fn, const gb_csv_options *o) {
    if (o->ncolumns < 0 || o->ncolumns > GB_DATA_MAX_COMPONENTS || (o->ncolumns && !o->columns)) {
        gb__error(GB_ERR_VALUE, NULL, "%s: need 0 to %d columns (one component each), got %d%s",
                  fn, GB_DATA_MAX_COMPONENTS, o->ncolumns,
                  o->ncolumns && !o->columns ? " and a NULL array" : "");
        return false;
    }
    if (o->delimiter == '"' || o->delimiter == '\n' || o->delimiter == '\r') {
        gb__error(GB_ERR_VALUE, NULL, "%s: the delimiter cannot be a quote or a line break", fn);
        return false;
    }
    for (int k = 0; k < o->ncolumns; k++) {
        const gb_csv_column *c = &o->columns[k];
        gb_dtype dt = c->dtype;
        if (dt != GB_F32 && dt != GB_F64 && dt != GB_I32 && dt != GB_I64) {
            gb__error(GB_ERR_DTYPE, NULL,
                      "%s: column %d: dtype %s is not float32, float64, int32 or int64", fn, k,
                      (unsigned)dt < GB_DTYPE_COUNT ? gb_dtype_name(dt) : "(invalid)");
            return false;
        }
        if (c->name && !o->header) {
            gb__error(GB_ERR_VALUE, NULL,
                      "%s: column %d is chosen by name ('%s') but the options say the file has "
                      "no header",
                      fn, k, c->name);
            return false;
        }
        if (!c->name && c->index < 0) {
            gb__error(GB_ERR_VALUE, NULL, "%s: column %d: index %d is negative", fn, k, c->index);
            return false;
        }
    }
    return true;
}

/* The options' columns (or every column) resolved against the first
 * record (the header or the first row), with defaults parsed. */
static bool resolve_columns(const char *fn, csv_reader *r, const gb_csv_options *o, column *cols,
                            int *ncols) {
    int nf = r->nfields;
    *ncols = o->ncolumns ? o->ncolumns : nf;
    if (*ncols > GB_DATA_MAX_COMPONENTS)
        return io_error(r, "%d columns, but an element holds at most %d components: choose the "
                           "columns to read (gb_csv_options.columns)",
                        nf, GB_DATA_MAX_COMPONENTS);
    for (int k = 0; k < *ncols; k++) {
        const gb_csv_column *oc = o->ncolumns ? &o->columns[k] : NULL;
        column *c = &cols[k];
        c->index = oc ? oc->index : k;
        c->dtype = oc ? oc->dtype : GB_F32;
        if (oc && oc->name) {
            c->index = -1;
            for (int i = 0; i < nf && c->index < 0; i++) {
                char h[NAME_BYTES];
                size_t len;
                if (field_text(&r->fields[i], h, sizeof h, &len) && len == strlen(h) &&
                    !strcmp(h, oc->name))
                    c->index = i;
            }
            if (c->index < 0) return io_error(r, "the header has no column named '%.60s'", oc->name);
        } else if (c->index >= nf) {
            return io_error(r, "column %d is chosen, but the %s has %d", c->index + 1,
                            o->header ? "header" : "first record", nf);
        }
        size_t len;
        if (o->header && !field_text(&r->fields[c->index], c->name, sizeof c->name - 3, &len))
            memcpy(c->name + NAME_BYTES - 4, "...", 4);   /* a long name, cut */
        if (oc && oc->default_value) {
            bool empty;
            const char *why = parse_value(oc->default_value, strlen(oc->default_value), c->dtype,
                                          &c->dflt, &empty);
            if (why && !empty) {
                gb__error(GB_ERR_VALUE, NULL, "%s: cannot read the default '%.40s' of column %d as "
                          "%s: %s", fn, oc->default_value, c->index + 1, gb_dtype_name(c->dtype),
                          why);
                return false;
            }
            c->has_default = !why;
        }
    }
    return true;
}

/* ---- the dataset ------------------------------------------------------------------------ */

/* The parsed columns as a slices dataset (which takes their bytes). */
static gb_dataset *make_dataset(column *cols, int ncols, int64_t rows) {
    gb_tensor *t[GB_DATA_MAX_COMPONENTS];
    gb_dataset *ds = NULL;
    gb_scope_begin();   /* the tensors are only the way in */
    int k = 0;
    for (; k < ncols; k++) {
        size_t nbytes = (size_t)rows * gb_dtype_size(cols[k].dtype);
        gb_buffer *b = gb__buffer_new_heap(nbytes);
        if (!b) break;
        if (nbytes) memcpy(b->data, cols[k].values, nbytes);
        t[k] = gb__heap_tensor(b, true, cols[k].dtype, 1, &rows);
        if (!t[k]) break;
    }
    if (k == ncols) ds = gb_dataset_from_tensor_slices(ncols, t);
    gb_scope_end();
    return ds;
}

static gb_dataset *parse(const char *fn, const char *data, size_t size, const char *name,
                         const gb_csv_options *o) {
    gb_csv_options none = {0};
    if (!o) o = &none;
    if (!check_option_columns(fn, o)) return NULL;
    csv_reader r = {.name = name, .p = data, .end = data + size,
                    .delim = o->delimiter ? o->delimiter : ',', .line = 1, .record_line = 1};
    if (size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) r.p += 3;   /* a UTF-8 byte order mark */
    column cols[GB_DATA_MAX_COMPONENTS] = {0};
    int ncols = 0, expected = 0;
    int64_t rows = 0;
    gb_dataset *ds = NULL;
    int got = read_record(&r);
    if (got == 0 && !o->header && o->ncolumns == 0) {
        io_error(&r, "the file has no records, so the columns are unknown; give them in the "
                     "options");
    } else if (got == 0 && o->header) {
        io_error(&r, "the file is empty: no header");
    } else if (got >= 0) {
        bool ok = true;
        if (got > 0) {
            ok = resolve_columns(fn, &r, o, cols, &ncols);
            expected = r.nfields;
            if (ok && o->header) got = read_record(&r);
        } else {   /* no records, columns given: an empty dataset of them */
            for (int k = 0; k < o->ncolumns; k++) cols[k].dtype = o->columns[k].dtype;
            ncols = o->ncolumns;
        }
        for (; ok && got > 0; rows++, got = read_record(&r)) {
            if (r.nfields != expected) {
                ok = io_error(&r, "%d fields, but the %s has %d", r.nfields,
                              o->header ? "header" : "first record", expected);
                break;
            }
            for (int k = 0; ok && k < ncols; k++)
                ok = store(&r, &cols[k], &r.fields[cols[k].index], rows);
        }
        if (ok && got == 0) ds = make_dataset(cols, ncols, rows);
    }
    for (int k = 0; k < GB_DATA_MAX_COMPONENTS; k++) free(cols[k].values);
    free(r.fields);
    return ds;
}

gb_dataset *gb_dataset_from_csv_data(const void *data, size_t size, const char *name,
                                     const gb_csv_options *options) {
    if (!data && size) {
        gb__error(GB_ERR_VALUE, NULL, "gb_dataset_from_csv_data: data is NULL but size is %zu",
                  size);
        return NULL;
    }
    return parse("gb_dataset_from_csv_data", data ? data : "", size, name ? name : "CSV data",
                 options);
}

gb_dataset *gb_dataset_from_csv(const char *path, const gb_csv_options *options) {
    if (!path) {
        gb__error(GB_ERR_VALUE, NULL, "gb_dataset_from_csv: path is NULL");
        return NULL;
    }
    size_t size;
    char *bytes = gb__file_read(path, "a CSV file", &size);
    if (!bytes) return NULL;
    gb_dataset *ds = parse("gb_dataset_from_csv", bytes, size, path, options);
    free(bytes);
    return ds;
}
