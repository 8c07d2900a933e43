/* nn/config_json.c — configs as JSON text, both ways.
 *
 * The writer prints dict keys in insertion order, integers exactly and
 * other numbers with 17 significant digits (so a double reads back
 * bit-equal); indent 0 gives one line, indent k pretty-prints. The
 * reader is a strict RFC 8259 recursive-descent parser with a nesting
 * limit, for text that may come from a damaged or hostile file: every
 * error names the line and column and what was expected, and nothing it
 * reads can crash it or make it allocate without bound.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/config_internal.h"

enum { MAX_DEPTH = 64 };

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *s, size_t len) {
    if (t->failed) return;
    if (t->n + len + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->n + len + 1) cap *= 2;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, len);
    t->n += len;
    t->s[t->n] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void put_string(text *t, const char *s) {
    puts_(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p, esc[2] = '\0';
            puts_(t, esc);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(t, esc);
        } else {
            put(t, (const char *)p, 1);
        }
    }
    puts_(t, "\"");
}

static void newline(text *t, int indent, int depth) {
    if (!indent) return;
    puts_(t, "\n");
    for (int i = 0; i < indent * depth; i++) puts_(t, " ");
}

/* Pretty-prints (indent > 0) the containers above depth `flat`, and
 * everything from there down on one line. */
static void put_value(text *t, const gb_config *c, int indent, int depth, int flat) {
    char num[40];
    if (depth >= flat) indent = 0;
    switch (c->kind) {
    case GB_CONFIG_NULL: puts_(t, "null"); return;
    case GB_CONFIG_BOOL: puts_(t, c->b ? "true" : "false"); return;
    case GB_CONFIG_INT: snprintf(num, sizeof num, "%lld", (long long)c->i), puts_(t, num); return;
    case GB_CONFIG_NUMBER:
        snprintf(num, sizeof num, "%.17g", c->d);
        /* Keep it a number with a fraction, so it reads back as one. */
        if (!strpbrk(num, ".eEn")) strcat(num, ".0");
        puts_(t, num);
        return;
    case GB_CONFIG_STRING: put_string(t, c->str); return;
    default: break;
    }
    bool dict = c->kind == GB_CONFIG_DICT;
    puts_(t, dict ? "{" : "[");
    for (int i = 0; i < c->n; i++) {
        if (i) puts_(t, indent ? "," : ", ");
        newline(t, indent, depth + 1);
        if (dict) {
            put_string(t, c->keys[i]);
            puts_(t, ": ");
        }
        put_value(t, c->items[i], indent, depth + 1, flat);
    }
    if (c->n) newline(t, indent, depth);
    puts_(t, dict ? "}" : "]");
}

char *gb_config_to_json(const gb_config *c, int indent) { return gb_config_to_json_flat(c, indent, INT_MAX); }

char *gb_config_to_json_flat(const gb_config *c, int indent, int flat_depth) {
    if (!c) {
        gb__error(GB_ERR_VALUE, "config", "gb_config_to_json: the config is NULL");
        return NULL;
    }
    text t = {0};
    put_value(&t, c, indent < 0 ? 0 : indent, 0, flat_depth);
    if (t.failed) {
        free(t.s);
        gb__error(GB_ERR_MEMORY, "config", "gb_config_to_json: out of memory");
        return NULL;
    }
    return t.s;
}

/* ---- reading -------------------------------------------------------------------------------- */

typedef struct parser {
    const char *s, *end, *p;
    const char *what;         /* the text's name in errors ("model.json") */
} parser;

static void parse_error(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void parse_error(parser *ps, const char *fmt, ...) {
    if (!gb_ok()) return;
    int line = 1, col = 1;
    for (const char *q = ps->s; q < ps->p; q++) {
        if (*q == '\n') line++, col = 1;
        else col++;
    }
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_VALUE, "config", "%s: line %d, column %d: %s", ps->what, line, col, msg);
}

static void skip_space(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool literal(parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
        ps->p += n;
        return true;
    }
    return false;
}

static int hex4(parser *ps) {
    if (ps->end - ps->p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = ps->p[i];
        int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    ps->p += 4;
    return v;
}

static void put_utf8(text *t, unsigned cp) {
    char b[4];
    size_t n;
    if (cp < 0x80) b[0] = (char)cp, n = 1;
    else if (cp < 0x800) b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    put(t, b, n);
}

/* \uXXXX (a surrogate pair when it is one), after the "\u". */
static bool unicode_escape(parser *ps, text *t) {
    int hi = hex4(ps);
    if (hi < 0) return false;
    unsigned cp = (unsigned)hi;
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        int lo = literal(ps, "\\u") ? hex4(ps) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) return false;
        cp = 0x10000 + (((unsigned)hi - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
    } else if (hi >= 0xDC00 && hi <= 0xDFFF) {
        return false;
    }
    if (cp == 0) return false;   /* strings are C strings: no NUL inside */
    put_utf8(t, cp);
    return true;
}

/* A string after its opening quote, into a new heap string. */
static char *parse_string(parser *ps) {
    text t = {0};
    put(&t, "", 0);
    while (ps->p < ps->end && *ps->p != '"' && !t.failed) {
        unsigned char ch = (unsigned char)*ps->p;
        if (ch < 0x20) {
            parse_error(ps, "a control character inside a string (escape it)");
            free(t.s);
            return NULL;
        }
        ps->p++;
        if (ch != '\\') {
            put(&t, (const char *)&ch, 1);
            continue;
        }
        const char *backslash = ps->p - 1;
        char e = ps->p < ps->end ? *ps->p++ : '\0';
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            put(&t, &out[simple - "\"\\/bfnrt"], 1);
        } else if (e != 'u' || !unicode_escape(ps, &t)) {
            ps->p = backslash;
            parse_error(ps, "a bad escape sequence in a string");
            free(t.s);
            return NULL;
        }
    }
    if (t.failed || ps->p >= ps->end) {
        if (t.failed) gb__error(GB_ERR_MEMORY, "config", "%s: out of memory", ps->what);
        else parse_error(ps, "the text ends inside a string");
        free(t.s);
        return NULL;
    }
    ps->p++;
    return t.s;
}

static gb_config *parse_value(parser *ps, int depth);

static gb_config *parse_number(parser *ps) {
    const char *start = ps->p;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    const char *digits = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    bool ok = ps->p > digits && !(*digits == '0' && ps->p - digits > 1);
    bool integer = true;
    if (ok && ps->p < ps->end && *ps->p == '.') {
        integer = false;
        const char *f = ++ps->p;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
        ok = ps->p > f;
    }
    if (ok && ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integer = false;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        const char *x = ps->p;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
        ok = ps->p > x;
    }
    char buf[64];
    size_t len = (size_t)(ps->p - start);
    if (!ok || len >= sizeof buf) {
        ps->p = start;
        parse_error(ps, ok ? "a number longer than 63 characters" : "a malformed number");
        return NULL;
    }
    memcpy(buf, start, len);
    buf[len] = '\0';
    gb_config *v = calloc(1, sizeof *v);
    if (!v) {
        gb__error(GB_ERR_MEMORY, "config", "%s: out of memory", ps->what);
        return NULL;
    }
    errno = 0;
    long long i = integer ? strtoll(buf, NULL, 10) : 0;
    if (integer && errno == 0) {
        v->kind = GB_CONFIG_INT;
        v->i = i;
    } else {
        v->kind = GB_CONFIG_NUMBER;
        v->d = strtod(buf, NULL);
        if (!isfinite(v->d)) {
            free(v);
            ps->p = start;
            parse_error(ps, "a number out of range");
            return NULL;
        }
    }
    return v;
}

/* The items of a list or dict after its opening bracket. */
static gb_config *parse_container(parser *ps, bool dict, int depth) {
    gb_config *c = calloc(1, sizeof *c);
    if (!c) {
        gb__error(GB_ERR_MEMORY, "config", "%s: out of memory", ps->what);
        return NULL;
    }
    c->kind = dict ? GB_CONFIG_DICT : GB_CONFIG_LIST;
    char close = dict ? '}' : ']';
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return c;
    }
    for (;;) {
        char *key = NULL;
        skip_space(ps);
        if (dict) {
            if (ps->p >= ps->end || *ps->p != '"') {
                parse_error(ps, "expected a key (a string)");
                break;
            }
            ps->p++;
            if (!(key = parse_string(ps))) break;
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                parse_error(ps, "expected ':' after the key \"%.40s\"", key);
                free(key);
                break;
            }
            if (gb_config_get(c, key)) {
                parse_error(ps, "the key \"%.40s\" is given twice", key);
                free(key);
                break;
            }
            ps->p++;
        }
        gb_config *v = parse_value(ps, depth + 1);
        bool attached = v && gb__config_attach(c, key, v);
        free(key);
        if (!attached) break;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return c;
        }
        parse_error(ps, "expected ',' or '%c'", close);
        break;
    }
    gb_config_free(c);
    return NULL;
}

static gb_config *parse_value(parser *ps, int depth) {
    if (depth > MAX_DEPTH) {
        parse_error(ps, "nested deeper than %d levels", MAX_DEPTH);
        return NULL;
    }
    skip_space(ps);
    if (ps->p >= ps->end) {
        parse_error(ps, "the text ends where a value was expected");
        return NULL;
    }
    char ch = *ps->p;
    if (ch == '{' || ch == '[') {
        ps->p++;
        return parse_container(ps, ch == '{', depth);
    }
    if (ch == '"') {
        ps->p++;
        char *s = parse_string(ps);
        gb_config *v = s ? calloc(1, sizeof *v) : NULL;
        if (s && !v) gb__error(GB_ERR_MEMORY, "config", "%s: out of memory", ps->what);
        if (!v) {
            free(s);
            return NULL;
        }
        v->kind = GB_CONFIG_STRING;
        v->str = s;
        return v;
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) return parse_number(ps);
    gb_config *v = NULL;
    bool is_true = literal(ps, "true");
    if (is_true || literal(ps, "false")) {
        if ((v = calloc(1, sizeof *v))) v->kind = GB_CONFIG_BOOL, v->b = is_true;
    } else if (literal(ps, "null")) {
        if ((v = calloc(1, sizeof *v))) v->kind = GB_CONFIG_NULL;
    } else {
        parse_error(ps, "unexpected character '%c' where a value was expected", ch);
        return NULL;
    }
    if (!v) gb__error(GB_ERR_MEMORY, "config", "%s: out of memory", ps->what);
    return v;
}

gb_config *gb_config_from_json(const char *json, size_t n, const char *what) {
    if (!gb_ok()) return NULL;
    if (!json) {
        gb__error(GB_ERR_VALUE, "config", "gb_config_from_json: the text is NULL");
        return NULL;
    }
    parser ps = {.s = json, .end = json + n, .p = json, .what = what ? what : "JSON"};
    gb_config *v = parse_value(&ps, 0);
    skip_space(&ps);
    if (v && ps.p < ps.end) {
        parse_error(&ps, "unexpected text after the value");
        gb_config_free(v);
        return NULL;
    }
    return v;
}
