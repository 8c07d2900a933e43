/* ops/decode_csv.c — DecodeCSV (tf.io.decode_csv): each string a CSV
 * record, split into columns whose dtypes and defaults are given as
 * tensors, one scalar per column.
 *
 * A field may be quoted ("a, ""b""": the quotes go, a doubled quote is
 * one); spaces around a number are allowed. An empty field takes its
 * column's default; a column whose default is an empty tensor (shape [0])
 * is required, and an empty field there is an error naming the record and
 * the column, as is a record with the wrong number of fields or a number
 * that does not parse. String columns' bytes are new (a quoted field
 * changes), made in the current scope.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/strings_internal.h"

static int infer_decode_csv(const gb_op_call *c, gb_out_desc *out) {
    int ncols = c->nin - 1;
    if (!gb__need_strings(c, 0)) return -1;
    if (ncols < 1 || ncols > GB_MAX_OUTPUTS) {
        gb__op_error(c, GB_ERR_VALUE, "%s: needs 1 to %d columns (record defaults), got %d",
                     c->def->name, GB_MAX_OUTPUTS, ncols);
        return -1;
    }
    if (strlen(c->attrs->s) != 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: field_delim must be one byte, got \"%s\"", c->def->name,
                     c->attrs->s);
        return -1;
    }
    for (int k = 0; k < ncols; k++) {
        const gb_tensor *d = c->in[1 + k];
        bool scalar = d->rank == 0 || (d->rank == 1 && d->shape[0] <= 1);
        gb_dtype dt = d->dtype;
        if (!scalar || dt == GB_BOOL || dt == GB_U8) {
            char s[64];
            gb__op_error(c, GB_ERR_VALUE, "%s: the default of column %d must be a scalar (or [0]: "
                         "required) of float32/64, int32/64 or string, got %s %s", c->def->name, k,
                         gb_dtype_name(dt), gb__shape_fmt(d->rank, d->shape, s, sizeof s));
            return -1;
        }
        out[k].dtype = dt;
        out[k].rank = c->in[0]->rank;
        memcpy(out[k].shape, c->in[0]->shape, (size_t)c->in[0]->rank * sizeof *out[k].shape);
    }
    return ncols;
}

/* The next field of s from *at: its bytes (unquoted into buf) and whether
 * the record goes on after it; false after an error. */
typedef struct field {
    const char *p;
    int64_t len;
    bool quoted;
} field;

static bool next_field(const gb_op_call *c, gb_string s, int64_t *at, char delim, gb__strbuf *tmp,
                       field *f, bool *more, int64_t rec) {
    int64_t i = *at;
    tmp->len = tmp->mark = 0;
    if (i < s.len && s.data[i] == '"') {
        f->quoted = true;
        for (i++;; i++) {
            if (i >= s.len) {
                gb__op_error(c, GB_ERR_VALUE, "%s: record %lld has an unclosed quote", c->def->name,
                             (long long)rec);
                return false;
            }
            if (s.data[i] == '"' && i + 1 < s.len && s.data[i + 1] == '"') {
                if (!gb__strbuf_add(tmp, "\"", 1)) return false;
                i++;
            } else if (s.data[i] == '"') {
                i++;
                break;
            } else if (!gb__strbuf_add(tmp, s.data + i, 1)) {
                return false;
            }
        }
        if (i < s.len && s.data[i] != delim) {
            gb__op_error(c, GB_ERR_VALUE, "%s: record %lld has text after a closing quote",
                         c->def->name, (long long)rec);
            return false;
        }
        f->p = tmp->bytes ? tmp->bytes : "";
        f->len = tmp->len;
    } else {
        int64_t start = i;
        while (i < s.len && s.data[i] != delim) i++;
        *f = (field){s.data + start, i - start, false};
    }
    *more = i < s.len;
    *at = i + 1;
    return true;
}

static bool parse_field(field f, gb_dtype dt, void *out, int64_t r) {
    char text[128];
    int64_t a = 0, b = f.len;
    while (a < b && (f.p[a] == ' ' || f.p[a] == '\t')) a++;
    while (b > a && (f.p[b - 1] == ' ' || f.p[b - 1] == '\t')) b--;
    if (b - a <= 0 || b - a >= (int64_t)sizeof text || memchr(f.p + a, '\0', (size_t)(b - a))) return false;
    memcpy(text, f.p + a, (size_t)(b - a));
    text[b - a] = '\0';
    char *end;
    errno = 0;
    if (dt == GB_F32 || dt == GB_F64) {
        double v = strtod(text, &end);
        if (*end || (errno == ERANGE && fabs(v) > 1)) return false;
        if (dt == GB_F32) ((float *)out)[r] = (float)v;
        else ((double *)out)[r] = v;
        return true;
    }
    long long v = strtoll(text, &end, 10);
    if (*end || errno == ERANGE || (dt == GB_I32 && (v < INT32_MIN || v > INT32_MAX))) return false;
    if (dt == GB_I32) ((int32_t *)out)[r] = (int32_t)v;
    else ((int64_t *)out)[r] = v;
    return true;
}

static bool kernel_decode_csv(const gb_op_call *c, gb_tensor **out) {
    const gb_string *rec = c->in[0]->data;
    int64_t n = c->in[0]->size;
    int ncols = c->nin - 1;
    char delim = c->attrs->s[0];
    gb__strbuf strs[GB_MAX_OUTPUTS] = {{0}}, tmp = {0};
    bool ok = true;
    for (int64_t r = 0; ok && r < n; r++) {
        int64_t at = 0;
        bool more = true;
        for (int k = 0; ok && k < ncols; k++) {
            field f;
            if (!more) {
                gb__op_error(c, GB_ERR_VALUE, "%s: record %lld has %d fields, not %d", c->def->name,
                             (long long)r, k, ncols);
                ok = false;
                break;
            }
            ok = next_field(c, rec[r], &at, delim, &tmp, &f, &more, r);
            if (!ok) break;
            const gb_tensor *d = c->in[1 + k];
            gb_dtype dt = d->dtype;
            if (f.len == 0 && !f.quoted) { /* empty: the default */
                if (d->size == 0) {
                    gb__op_error(c, GB_ERR_VALUE, "%s: record %lld, column %d is empty and the "
                                 "column has no default", c->def->name, (long long)r, k);
                    ok = false;
                    break;
                }
                if (dt == GB_STRING) f = (field){((const gb_string *)d->data)->data,
                                                 ((const gb_string *)d->data)->len, false};
                else {
                    memcpy((char *)out[k]->data + r * (int64_t)gb_dtype_size(dt), d->data, gb_dtype_size(dt));
                    continue;
                }
            }
            if (dt == GB_STRING) {
                ok = gb__strbuf_add(&strs[k], f.p, f.len) &&
                     gb__strbuf_end_element(&strs[k], out[k]->data, r);
            } else if (!parse_field(f, dt, out[k]->data, r)) {
                gb__op_error(c, GB_ERR_VALUE, "%s: record %lld, column %d: '%.*s' is not a valid %s",
                             c->def->name, (long long)r, k, (int)(f.len < 40 ? f.len : 40), f.p,
                             gb_dtype_name(dt));
                ok = false;
            }
        }
        if (ok && more) {
            gb__op_error(c, GB_ERR_VALUE, "%s: record %lld has more than %d fields", c->def->name,
                         (long long)r, ncols);
            ok = false;
        }
    }
    gb__strbuf_free(&tmp);
    for (int k = 0; k < ncols; k++) {
        if (ok && c->in[1 + k]->dtype == GB_STRING) ok = gb__strbuf_finish(&strs[k], out[k]->data, n);
        gb__strbuf_free(&strs[k]);
    }
    return ok;
}

const gb_op_def gb_opdef_decode_csv = {
    .name = "DecodeCSV",
    .arity = -1,
    .inputs_doc = "records (strings), then one default per column (a scalar, or [0]: required)",
    .infer = infer_decode_csv,
    .kernel = kernel_decode_csv,
};

int gb_decode_csv(gb_tensor *records, gb_tensor *const *defaults, int ncols, char delim,
                  gb_tensor **columns) {
    gb_tensor *in[1 + GB_MAX_OUTPUTS];
    if (ncols < 1 || ncols > GB_MAX_OUTPUTS || !defaults || !columns) {
        gb__error(GB_ERR_VALUE, NULL, "gb_decode_csv: 1 to %d columns with their defaults, got %d%s",
                  GB_MAX_OUTPUTS, ncols, defaults && columns ? "" : " (NULL arrays)");
        return -1;
    }
    in[0] = records;
    for (int k = 0; k < ncols; k++) in[1 + k] = defaults[k];
    gb_attrs a = {0};
    a.s[0] = delim;
    return gb__dispatch(GB_OP_DECODE_CSV, in, 1 + ncols, &a, columns);
}
