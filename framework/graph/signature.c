/* graph/signature.c — call signatures (TensorFlow's TraceType rules).
 *
 * A call's signature is each tensor input's dtype and shape and each
 * static argument's value. A cached signature accepts a call when dtypes,
 * ranks and static values are equal and every dim is equal or -1 there;
 * among those that accept it, the one with the fewest -1 dims is the most
 * specific and wins. Captured variables are checked apart (function.c): a
 * concrete function whose variable was freed accepts nothing.
 *
 * A static string is part of the signature whole, whatever its length:
 * two strings that share a prefix are two graphs. Signatures are copied
 * by value, so their strings are interned — one copy per distinct string
 * for the life of the process, compared by pointer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

const char *gb__input_name(const gb_function *f, int i, char *buf, size_t n) {
    if (i < f->ninput_signature && f->input_signature[i].name)
        snprintf(buf, n, "%s", f->input_signature[i].name);
    else if (i < f->ninput_names && f->input_names[i])
        snprintf(buf, n, "%s", f->input_names[i]);
    else
        snprintf(buf, n, "x%d", i);
    return buf;
}

/* ---- interned strings -------------------------------------------------------------- */

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char **interned;          /* open addressing, a power of two of slots */
static size_t interned_cap, interned_used;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool intern_grow(void) {
    size_t cap = interned_cap ? 2 * interned_cap : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < interned_cap; i++) {
        if (!interned[i]) continue;
        size_t k = hash_str(interned[i]) & (cap - 1);
        while (slots[k]) k = (k + 1) & (cap - 1);
        slots[k] = interned[i];
    }
    free(interned);
    interned = slots;
    interned_cap = cap;
    return true;
}

const char *gb__intern(const char *s) {
    pthread_mutex_lock(&intern_lock);
    const char *found = NULL;
    if (2 * (interned_used + 1) <= interned_cap || intern_grow()) {
        size_t k = hash_str(s) & (interned_cap - 1);
        while (interned[k] && strcmp(interned[k], s) != 0) k = (k + 1) & (interned_cap - 1);
        if (!interned[k]) {
            size_t n = strlen(s) + 1;
            if ((interned[k] = malloc(n))) {
                memcpy(interned[k], s, n);
                interned_used++;
            }
        }
        found = interned[k];
    }
    pthread_mutex_unlock(&intern_lock);
    return found;
}

/* ---- signatures ------------------------------------------------------------------------ */

static bool statics_of(const gb_value *st, int nst, gb_signature *out) {
    if (nst < 0 || nst > GB_FUNCTION_MAX_STATICS || (nst && !st)) {
        gb__error(GB_ERR_VALUE, NULL, "function call: %d static arguments (at most %d)", nst,
                  GB_FUNCTION_MAX_STATICS);
        return false;
    }
    out->nstatic = nst;
    for (int i = 0; i < nst; i++) {
        gb_sig_static *s = &out->st[i];
        memset(s, 0, sizeof *s);
        s->kind = st[i].kind;
        if (st[i].name)
            snprintf(s->name, sizeof s->name, "%s", st[i].name);
        else
            snprintf(s->name, sizeof s->name, "static%d", i);
        switch (st[i].kind) {
        case GB_VALUE_INT: s->i = st[i].as.i; break;
        case GB_VALUE_DOUBLE: s->d = st[i].as.d; break;
        case GB_VALUE_BOOL: s->b = st[i].as.b; break;
        case GB_VALUE_STRING:
            if (!(s->s = gb__intern(st[i].as.s ? st[i].as.s : ""))) {
                gb__error(GB_ERR_MEMORY, NULL, "function call: out of memory for static argument '%s'",
                          s->name);
                return false;
            }
            break;
        default:
            gb__error(GB_ERR_VALUE, NULL, "function call: static argument %d has kind %d",
                      i, (int)st[i].kind);
            return false;
        }
    }
    return true;
}

bool gb__sig_init(gb_signature *s, int nin) {
    *s = (gb_signature){.nin = nin};
    if ((s->in = calloc((size_t)(nin > 0 ? nin : 1), sizeof *s->in))) return true;
    gb__error(GB_ERR_MEMORY, NULL, "out of memory for the signature of %d tensor inputs", nin);
    return false;
}

void gb__sig_free(gb_signature *s) {
    free(s->in);
    s->in = NULL;
}

bool gb__sig_copy(gb_signature *dst, const gb_signature *src, int extra) {
    if (!gb__sig_init(dst, src->nin + extra)) return false;
    dst->nin = src->nin;
    dst->nstatic = src->nstatic;
    if (src->nin) memcpy(dst->in, src->in, (size_t)src->nin * sizeof *src->in);
    memcpy(dst->st, src->st, (size_t)src->nstatic * sizeof *src->st);
    return true;
}

/* A signature for n tensor inputs of f, when n is within the limit. */
static bool sig_begin(const gb_function *f, int n, gb_signature *out) {
    if (n < 0 || n > GB_FUNCTION_MAX_INPUTS) {
        gb__error(GB_ERR_VALUE, NULL, "function '%s' was called with %d tensor inputs (at most %d)",
                  f->name, n, GB_FUNCTION_MAX_INPUTS);
        return false;
    }
    return gb__sig_init(out, n);
}

/* The statics of a signature begun by sig_begin; frees it on an error. */
static bool sig_end(const gb_value *st, int nst, gb_signature *out) {
    if (statics_of(st, nst, out)) return true;
    gb__sig_free(out);
    return false;
}

bool gb__sig_of_call(const gb_function *f, gb_tensor *const *in, int nin, const gb_value *st,
                     int nst, gb_signature *out) {
    if (!sig_begin(f, nin, out)) return false;
    for (int i = 0; i < nin; i++) {
        if (!in[i]) {
            if (gb_ok()) {
                char name[64];
                gb__error(GB_ERR_VALUE, NULL, "function '%s': input %d ('%s') is NULL", f->name,
                          i, gb__input_name(f, i, name, sizeof name));
            }
            gb__sig_free(out);
            return false;
        }
        gb_tensor_spec *s = &out->in[i];
        s->dtype = in[i]->dtype;
        s->rank = in[i]->rank;
        memcpy(s->shape, in[i]->shape, (size_t)in[i]->rank * sizeof *s->shape);
    }
    return sig_end(st, nst, out);
}

bool gb__sig_of_specs(const gb_function *f, const gb_tensor_spec *specs, int n,
                      const gb_value *st, int nst, gb_signature *out) {
    if (!sig_begin(f, n, out)) return false;
    for (int i = 0; i < n; i++) {
        if (specs[i].rank < 0 || specs[i].rank > GB_MAX_RANK ||
            (unsigned)specs[i].dtype >= GB_DTYPE_COUNT) {
            gb__error(GB_ERR_VALUE, NULL, "tensor spec %d: dtype %d, rank %d are not valid", i,
                      (int)specs[i].dtype, specs[i].rank);
            gb__sig_free(out);
            return false;
        }
        out->in[i] = specs[i];
        out->in[i].name = NULL;
    }
    return sig_end(st, nst, out);
}

bool gb__static_equal(const gb_sig_static *a, const gb_sig_static *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case GB_VALUE_INT: return a->i == b->i;
    case GB_VALUE_DOUBLE: return a->d == b->d || (a->d != a->d && b->d != b->d);
    case GB_VALUE_BOOL: return a->b == b->b;
    default: return a->s == b->s; /* interned */
    }
}

bool gb__sig_statics_equal(const gb_signature *a, const gb_signature *b) {
    if (a->nstatic != b->nstatic) return false;
    for (int i = 0; i < a->nstatic; i++)
        if (!gb__static_equal(&a->st[i], &b->st[i])) return false;
    return true;
}

bool gb__sig_accepts(const gb_signature *general, const gb_signature *call) {
    if (general->nin != call->nin) return false;
    for (int i = 0; i < call->nin; i++) {
        const gb_tensor_spec *g = &general->in[i], *c = &call->in[i];
        if (g->dtype != c->dtype || g->rank != c->rank) return false;
        for (int d = 0; d < g->rank; d++)
            if (g->shape[d] >= 0 && g->shape[d] != c->shape[d]) return false;
    }
    return gb__sig_statics_equal(general, call);
}

int gb__sig_unknown_dims(const gb_signature *s) {
    int n = 0;
    for (int i = 0; i < s->nin; i++)
        for (int d = 0; d < s->in[i].rank; d++) n += s->in[i].shape[d] < 0;
    return n;
}

const char *gb__spec_text(const gb_tensor_spec *s, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s[", gb_dtype_name(s->dtype));
    for (int d = 0; d < s->rank && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)s->shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as d, so two
 * different doubles never print alike; an integral value keeps a ".0"
 * so it never reads as an int. */
static void double_text(double d, char *buf, size_t n) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, d);
        if (strtod(buf, NULL) == d || d != d) break;
    }
    if (!strpbrk(buf, ".eninf")) {
        size_t k = strlen(buf);
        if (k + 2 < n) memcpy(buf + k, ".0", 3);
    }
}

const char *gb__static_text(const gb_sig_static *s, char *buf, size_t n) {
    switch (s->kind) {
    case GB_VALUE_INT: snprintf(buf, n, "%lld", (long long)s->i); break;
    case GB_VALUE_DOUBLE: double_text(s->d, buf, n); break;
    case GB_VALUE_BOOL: snprintf(buf, n, "%s", s->b ? "true" : "false"); break;
    default: snprintf(buf, n, "\"%s\"", s->s); break;
    }
    return buf;
}
