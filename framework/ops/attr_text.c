/* ops/attr_text.c — the one printer and the one parser of op attributes,
 * both driven by the schema of ops.def (ops/attr_schema.c).
 *
 * Two styles of one syntax: graph text reads like the model,
 *     {axes=[2], keepdims=true}      {strides=[2,2], dilations=[1,1], padding=SAME}
 * and JSON (the stored graphs, SavedModel files) is the same object,
 *     {"axes":[2],"keepdims":true}   {"strides":[2,2],"dilations":[1,1],"padding":"SAME"}
 * The parser reads both, so a test can give an op's attributes as they
 * print, and a file's are checked attribute by attribute against the
 * schema. Doubles print in the shortest form that reads back to the same
 * bits (JSON: NaN and infinities as the strings "nan", "inf", "-inf").
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/internal.h"

/* Where list attribute d lives: i[*start ..] (vars[] for VARS), *count
 * entries (ints; a PAIRS list has twice its pairs). */
static void span(const gb_attr_def *d, const gb_attrs *a, int *start, int *count) {
    int ni = a->ni < 0 ? 0 : a->ni > GB_MAX_ATTR_INTS ? GB_MAX_ATTR_INTS : a->ni;
    int rest = ni > d->slot ? ni - d->slot : 0;
    *start = d->slot;
    if (d->type == GB_ATTR_VARS) {
        int nv = a->nvars < 0 ? 0 : a->nvars > 4 ? 4 : a->nvars;
        *count = nv > d->slot ? nv - d->slot : 0;
    } else if (d->type == GB_ATTR_PAIRS || (d->type == GB_ATTR_INTS && d->len == GB_ALEN_REST)) {
        *count = rest;
    } else if (d->type == GB_ATTR_INTS && d->len < 0) {
        *count = rest / 2;
        if (d->len == GB_ALEN_HALF2) *start += rest / 2;
    } else {
        *count = d->len;
    }
}

/* ---- printing -------------------------------------------------------------------------- */

typedef struct out {
    char *buf;
    size_t n;
    size_t len; /* what the whole text needs, beyond n too */
} out;

__attribute__((format(printf, 2, 3))) static void emit(out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->len < o->n ? o->buf + o->len : NULL, o->len < o->n ? o->n - o->len : 0,
                      fmt, ap);
    va_end(ap);
    if (k > 0) o->len += (size_t)k;
}

static void emit_string(out *o, const char *s, char quote) {
    emit(o, "%c", quote);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == (unsigned char)quote || *p == '\\') emit(o, "\\%c", *p);
        else if (*p < 0x20) emit(o, "\\u%04x", *p);
        else emit(o, "%c", *p);
    }
    emit(o, "%c", quote);
}

/* A bare word in text, a string in JSON. */
static void emit_word(out *o, const char *w, bool json) {
    if (json) emit_string(o, w, '"');
    else emit(o, "%s", w);
}

static void emit_double(out *o, double x, bool json) {
    if (isnan(x) || isinf(x)) {
        emit_word(o, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf", json);
        return;
    }
    char b[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, x);
        if (strtod(b, NULL) == x) break;
    }
    emit(o, "%s", b);
}

static bool emit_variable(out *o, int64_t id, const gb_attrs_style *st) {
    char b[256];
    if (st->var) {
        if (!st->var(st->user, id, b, sizeof b)) return false;
        emit(o, "%s", b);
        return true;
    }
    struct gb_variable *v = gb__variable_by_id(id);
    emit_string(o, v ? gb_variable_name(v) : "(freed variable)", st->json ? '"' : '\'');
    return true;
}

static void emit_ints(out *o, const int64_t *v, int n, int group) {
    emit(o, "[");
    for (int k = 0; k < n; k++) {
        if (group > 1 && k % group == 0) emit(o, "%s[", k ? "," : "");
        else if (k) emit(o, ",");
        emit(o, "%lld", (long long)v[k]);
        if (group > 1 && k % group == group - 1) emit(o, "]");
    }
    emit(o, "]");
}

static bool emit_value(out *o, const gb_attr_def *d, const gb_attrs *a, const gb_attrs_style *st) {
    int64_t x = d->slot < GB_MAX_ATTR_INTS ? a->i[d->slot] : 0;
    int start, count;
    switch (d->type) {
    case GB_ATTR_INT: emit(o, "%lld", (long long)x); break;
    case GB_ATTR_BOOL: emit(o, "%s", x ? "true" : "false"); break;
    case GB_ATTR_INTS:
    case GB_ATTR_PAIRS:
        span(d, a, &start, &count);
        emit_ints(o, a->i + start, count, d->type == GB_ATTR_PAIRS ? 2 : 1);
        break;
    case GB_ATTR_AXES: {
        int64_t axes[64];
        int n = 0;
        for (int k = 0; k < 64; k++)
            if ((uint64_t)x >> k & 1) axes[n++] = k;
        emit_ints(o, axes, n, 1);
        break;
    }
    case GB_ATTR_ENUM: {
        int n = 0;
        while (d->names[n]) n++;
        if (x >= 0 && x < n) emit_word(o, d->names[x], st->json);
        else emit(o, "%lld", (long long)x);
        break;
    }
    case GB_ATTR_DTYPE: emit_word(o, gb_dtype_name((gb_dtype)x), st->json); break;
    case GB_ATTR_DOUBLE: emit_double(o, a->f[d->slot], st->json); break;
    case GB_ATTR_STRING: emit_string(o, a->s, '"'); break;
    case GB_ATTR_VAR: return emit_variable(o, a->vars[d->slot], st);
    case GB_ATTR_VARS:
        span(d, a, &start, &count);
        emit(o, "[");
        for (int k = 0; k < count; k++) {
            if (k) emit(o, ",");
            if (!emit_variable(o, a->vars[start + k], st)) return false;
        }
        emit(o, "]");
        break;
    case GB_ATTR_COUNT: break;
    }
    return true;
}

int gb__attrs_print(gb_op_id op, const gb_attrs *a, const gb_attrs_style *st, char *buf,
                    size_t n) {
    out o = {buf, n, 0};
    if (n) buf[0] = '\0';
    int nd;
    const gb_attr_def *d = gb__op_attrs(op, &nd);
    bool first = true;
    for (int k = 0; k < nd; k++) {
        if (d[k].type == GB_ATTR_COUNT || (st->omit_variable && d[k].type == GB_ATTR_VAR)) continue;
        emit(&o, "%s", first ? "{" : st->json ? "," : ", ");
        first = false;
        if (st->json) emit(&o, "\"%s\":", d[k].name);
        else emit(&o, "%s=", d[k].name);
        if (!emit_value(&o, &d[k], a, st)) return -1;
    }
    if (!first) emit(&o, "}");
    else if (st->json) emit(&o, "{}");
    return (int)o.len;
}

const char *gb__attrs_variable_label(gb_op_id op, const gb_attrs *a, char *buf, size_t n) {
    int nd;
    const gb_attr_def *d = gb__op_attrs(op, &nd);
    out o = {buf, n, 0};
    if (n) buf[0] = '\0';
    for (int k = 0; k < nd; k++)
        if (d[k].type == GB_ATTR_VAR) {
            emit_variable(&o, a->vars[d[k].slot], &(gb_attrs_style){0});
            break;
        }
    return buf;
}

/* ---- parsing --------------------------------------------------------------------------- */

enum { WORD_MAX = 64 };

/* One value as written: a number, a bare word (true, SAME, float32, nan),
 * a quoted string, or a list of integers or of integer pairs. */
typedef struct pval {
    enum { PV_NUM, PV_WORD, PV_STR, PV_LIST } kind;
    bool integral;
    int64_t i;
    double d;
    char s[WORD_MAX];
    bool long_string; /* did not fit s */
    int n;
    int64_t v[GB_MAX_ATTR_INTS];
    bool pairs;
} pval;

typedef struct parser {
    const char *p, *start, *what, *op;
} parser;

__attribute__((format(printf, 2, 3))) static bool syntax(const parser *ps, const char *fmt, ...) {
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_VALUE, NULL, "%s: %s attributes: %s at offset %d", ps->what, ps->op, why,
              (int)(ps->p - ps->start));
    return false;
}

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-' || c == '+';
}

static bool parse_word(parser *ps, char *w) {
    int k = 0;
    while (is_word_char(*ps->p)) {
        if (k == WORD_MAX - 1) return syntax(ps, "a word longer than %d bytes", WORD_MAX - 1);
        w[k++] = *ps->p++;
    }
    w[k] = '\0';
    return k > 0 || syntax(ps, "a value or name is expected");
}

static bool parse_string(parser *ps, pval *v) {
    char quote = *ps->p++;
    int k = 0;
    for (;;) {
        char c = *ps->p++;
        if (!c) return syntax(ps, "a string is not closed");
        if (c == quote) break;
        if (c == '\\') {
            char e = *ps->p++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == 'u') {
                unsigned cp = 0;
                for (int h = 0; h < 4; h++) {
                    char x = *ps->p++;
                    int dv = x >= '0' && x <= '9' ? x - '0' : x >= 'a' && x <= 'f' ? x - 'a' + 10
                           : x >= 'A' && x <= 'F' ? x - 'A' + 10 : -1;
                    if (dv < 0) return syntax(ps, "a \\u escape needs 4 hex digits");
                    cp = cp * 16 + (unsigned)dv;
                }
                if (cp >= 0x80) return syntax(ps, "a \\u escape beyond ASCII");
                c = (char)cp;
            } else if (e == '"' || e == '\'' || e == '\\' || e == '/') c = e;
            else return syntax(ps, "an unknown escape");
        }
        if (k < WORD_MAX - 1) v->s[k++] = c;
        else v->long_string = true;
    }
    v->s[k] = '\0';
    v->kind = PV_STR;
    return true;
}

static bool parse_int(parser *ps, int64_t *x) {
    char w[WORD_MAX], *end;
    if (!parse_word(ps, w)) return false;
    long long v = strtoll(w, &end, 10);
    if (*end || end == w) return syntax(ps, "'%s' is not an integer", w);
    *x = v;
    return true;
}

static bool parse_list(parser *ps, pval *v) {
    v->kind = PV_LIST;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == ']') return ps->p++, true;
    for (int item = 0;; item++) {
        skip_ws(ps);
        bool pair = *ps->p == '[';
        if (item && pair != v->pairs) return syntax(ps, "a list mixes integers and pairs");
        v->pairs = pair;
        int need = pair ? 2 : 1;
        if (v->n + need > GB_MAX_ATTR_INTS) return syntax(ps, "a list longer than %d", GB_MAX_ATTR_INTS);
        if (pair) ps->p++;
        for (int k = 0; k < need; k++) {
            skip_ws(ps);
            if (k && *ps->p++ != ',') return syntax(ps, "a pair needs two integers");
            skip_ws(ps);
            if (!parse_int(ps, &v->v[v->n++])) return false;
        }
        skip_ws(ps);
        if (pair && *ps->p++ != ']') return syntax(ps, "a pair needs two integers");
        skip_ws(ps);
        if (*ps->p == ']') return ps->p++, true;
        if (*ps->p++ != ',') return syntax(ps, "',' or ']' is expected in a list");
    }
}

static bool parse_value(parser *ps, pval *v) {
    *v = (pval){0};
    skip_ws(ps);
    if (*ps->p == '[') return parse_list(ps, v);
    if (*ps->p == '"' || *ps->p == '\'') return parse_string(ps, v);
    if (!parse_word(ps, v->s)) return false;
    char *end;
    long long i = strtoll(v->s, &end, 10);
    if (!*end) return v->kind = PV_NUM, v->integral = true, v->i = i, v->d = (double)i, true;
    double d = strtod(v->s, &end);
    bool word = (v->s[0] >= 'a' && v->s[0] <= 'z') || (v->s[0] >= 'A' && v->s[0] <= 'Z') ||
                (v->s[0] == '-' && v->s[1] >= 'a' && v->s[1] <= 'z');
    if (!*end && !word) return v->kind = PV_NUM, v->d = d, true;
    v->kind = PV_WORD;
    return true;
}

/* ---- values into slots ----------------------------------------------------------------- */

typedef struct setter {
    const char *what, *op;
    gb_attrs *a;
    int ni;       /* slots the attributes set so far reach */
    int half[2];  /* lengths of the HALF1 and HALF2 lists, -1 before */
} setter;

__attribute__((format(printf, 3, 4))) static bool bad(const setter *st, const gb_attr_def *d,
                                                     const char *fmt, ...) {
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_VALUE, NULL, "%s: %s attribute '%s': %s", st->what, st->op, d->name, why);
    return false;
}

static void reach(setter *st, int end) {
    if (end > st->ni) st->ni = end;
}

static bool want_word(const setter *st, const gb_attr_def *d, const pval *v) {
    return v->kind == PV_WORD || v->kind == PV_STR ||
           bad(st, d, "must be a name, not %s", v->kind == PV_LIST ? "a list" : "a number");
}

static bool set_double(setter *st, const gb_attr_def *d, const pval *v) {
    double x = v->d;
    if (v->kind != PV_NUM) {
        if (!want_word(st, d, v)) return false;
        if (strcmp(v->s, "nan") == 0) x = NAN;
        else if (strcmp(v->s, "inf") == 0) x = INFINITY;
        else if (strcmp(v->s, "-inf") == 0) x = -INFINITY;
        else return bad(st, d, "must be a number, not '%s'", v->s);
    }
    st->a->f[d->slot] = x;
    return true;
}

static bool set_list(setter *st, const gb_attr_def *d, const pval *v) {
    /* An empty list is both (a rank-0 Pad has no pairs). */
    if (v->kind != PV_LIST || (v->n && v->pairs != (d->type == GB_ATTR_PAIRS)))
        return bad(st, d, "must be a list of %s", d->type == GB_ATTR_PAIRS ? "[before, after] pairs" : "integers");
    if (d->type == GB_ATTR_INTS && d->len > 0 && v->n != d->len)
        return bad(st, d, "must have %d entries, not %d", d->len, v->n);
    int start = d->slot, end = d->slot + v->n;
    if (d->type == GB_ATTR_INTS && d->len < 0) {
        st->half[-1 - d->len] = v->n;
        if (d->len == GB_ALEN_HALF2) start += v->n;
        end = d->slot + 2 * v->n;
    }
    if (end > GB_MAX_ATTR_INTS) return bad(st, d, "has more entries than an op holds");
    memcpy(st->a->i + start, v->v, (size_t)v->n * sizeof *v->v);
    reach(st, end);
    return true;
}

static bool set_scalar_int(setter *st, const gb_attr_def *d, const pval *v) {
    int64_t x = 0;
    if (d->type == GB_ATTR_INT) {
        if (v->kind != PV_NUM || !v->integral) return bad(st, d, "must be an integer");
        x = v->i;
    } else if (d->type == GB_ATTR_BOOL) {
        if (v->kind != PV_WORD || (strcmp(v->s, "true") && strcmp(v->s, "false")))
            return bad(st, d, "must be true or false");
        x = strcmp(v->s, "true") == 0;
    } else if (d->type == GB_ATTR_AXES) {
        if (v->kind != PV_LIST || v->pairs) return bad(st, d, "must be a list of axes");
        for (int k = 0; k < v->n; k++) {
            if (v->v[k] < 0 || v->v[k] >= GB_MAX_RANK) return bad(st, d, "axis %lld is not in 0..%d", (long long)v->v[k], GB_MAX_RANK - 1);
            if (x >> v->v[k] & 1) return bad(st, d, "axis %lld is listed twice", (long long)v->v[k]);
            x |= INT64_C(1) << v->v[k];
        }
    } else if (d->type == GB_ATTR_ENUM) {
        if (!want_word(st, d, v)) return false;
        for (x = 0; d->names[x] && strcmp(d->names[x], v->s); x++) {}
        if (!d->names[x]) return bad(st, d, "'%s' is not one of its values", v->s);
    } else { /* DTYPE */
        if (!want_word(st, d, v)) return false;
        for (x = 0; x < GB_DTYPE_COUNT && strcmp(gb_dtype_name((gb_dtype)x), v->s); x++) {}
        if (x == GB_DTYPE_COUNT) return bad(st, d, "'%s' is not a dtype", v->s);
    }
    st->a->i[d->slot] = x;
    reach(st, d->slot + 1);
    return true;
}

static bool set_vars(setter *st, const gb_attr_def *d, const pval *v) {
    int n = 1;
    const int64_t *ids = &v->i;
    if (d->type == GB_ATTR_VARS) {
        if (v->kind != PV_LIST || v->pairs) return bad(st, d, "must be a list of variables (integers)");
        n = v->n, ids = v->v;
    } else if (v->kind != PV_NUM || !v->integral) {
        return bad(st, d, "must be a variable (an integer)");
    }
    if (d->slot + n > 4) return bad(st, d, "names more variables than an op holds (4)");
    for (int k = 0; k < n; k++) {
        if (ids[k] < 0) return bad(st, d, "variable %lld is negative", (long long)ids[k]);
        st->a->vars[d->slot + k] = ids[k];
    }
    if (d->slot + n > st->a->nvars) st->a->nvars = d->slot + n;
    return true;
}

static bool set_value(setter *st, const gb_attr_def *d, const pval *v) {
    switch (d->type) {
    case GB_ATTR_INTS:
    case GB_ATTR_PAIRS: return set_list(st, d, v);
    case GB_ATTR_DOUBLE: return set_double(st, d, v);
    case GB_ATTR_STRING:
        if (v->kind != PV_STR) return bad(st, d, "must be a quoted string");
        if (v->long_string || strlen(v->s) >= sizeof st->a->s)
            return bad(st, d, "is longer than %zu bytes", sizeof st->a->s - 1);
        snprintf(st->a->s, sizeof st->a->s, "%s", v->s);
        return true;
    case GB_ATTR_VAR:
    case GB_ATTR_VARS: return set_vars(st, d, v);
    case GB_ATTR_COUNT: return bad(st, d, "follows from its list; it is not given");
    default: return set_scalar_int(st, d, v);
    }
}

/* What follows the values: every attribute given, the counts and ni. */
static bool finish(setter *st, const gb_attr_def *d, int nd, const bool *given) {
    for (int k = 0; k < nd; k++) {
        if (d[k].type == GB_ATTR_COUNT) {
            for (int j = 0; j < nd; j++)
                if (d[j].slot == d[k].len && d[j].type == GB_ATTR_INTS) {
                    int start, count;
                    st->a->ni = st->ni;
                    span(&d[j], st->a, &start, &count);
                    st->a->i[d[k].slot] = count;
                }
            reach(st, d[k].slot + 1);
        } else if (!given[k]) {
            return bad(st, &d[k], "is missing");
        }
    }
    if (st->half[0] != st->half[1]) {
        for (int k = 0; k < nd; k++)
            if (d[k].type == GB_ATTR_INTS && d[k].len == GB_ALEN_HALF2)
                return bad(st, &d[k], "has %d entries where the list before it has %d", st->half[1],
                           st->half[0]);
    }
    st->a->ni = st->ni;
    return true;
}

bool gb__attrs_parse(gb_op_id op, const char *text, gb_attrs *a, const char *what) {
    *a = (gb_attrs){0};
    parser ps = {text ? text : "", text ? text : "", what, gb_op_type_name(op)};
    setter st = {what, ps.op, a, 0, {-1, -1}};
    int nd;
    const gb_attr_def *d = gb__op_attrs(op, &nd);
    bool given[GB_MAX_ATTR_INTS + 8] = {0};
    skip_ws(&ps);
    if (!*ps.p && nd == 0) return true; /* the text style prints nothing for none */
    if (*ps.p++ != '{') return ps.p--, syntax(&ps, "'{' is expected");
    skip_ws(&ps);
    bool more = *ps.p != '}';
    if (!more) ps.p++;
    while (more) {
        pval key, v;
        skip_ws(&ps);
        if (*ps.p == '"') {
            if (!parse_string(&ps, &key)) return false;
        } else if (!parse_word(&ps, key.s)) {
            return false;
        }
        skip_ws(&ps);
        if (*ps.p != '=' && *ps.p != ':') return syntax(&ps, "'=' or ':' is expected after '%s'", key.s);
        ps.p++;
        if (!parse_value(&ps, &v)) return false;
        int k = 0;
        while (k < nd && strcmp(d[k].name, key.s)) k++;
        if (k == nd) {
            gb__error(GB_ERR_VALUE, NULL, "%s: %s has no attribute '%s'", what, ps.op, key.s);
            return false;
        }
        if (given[k]) return bad(&st, &d[k], "is given twice");
        given[k] = true;
        if (!set_value(&st, &d[k], &v)) return false;
        skip_ws(&ps);
        char c = *ps.p++;
        if (c == '}') break;
        if (c != ',') return ps.p--, syntax(&ps, "',' or '}' is expected");
    }
    skip_ws(&ps);
    if (*ps.p) return syntax(&ps, "text after the attributes");
    return finish(&st, d, nd, given);
}
