/* core/repr.c — a tensor as TensorFlow prints it (gb_tensor_repr).
 *
 * Eager: "tf.Tensor(2.2, shape=(), dtype=float32)", values as NumPy's str
 * writes them (shortest digits that read back to the same float32 or
 * float64, bytes as b'...', bool as True/False, rows of a matrix on
 * lines of their own, an array of more than 1000 elements summarised with
 * three from each end of every axis). Symbolic (while tracing):
 * 'Tensor("a:0", shape=(), dtype=int32)', the node named through a hook
 * the tracer installs, since core knows nothing of graphs. Unlike NumPy,
 * columns are not padded to one width.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

_Atomic(gb_symbolic_name_fn) gb__symbolic_name_hook;

typedef struct out {
    char *buf;
    size_t n, k;
} out;

static void put(out *o, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++, o->k++)
        if (o->k + 1 < o->n) o->buf[o->k] = s[i];
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

/* The shortest %g that reads back to v in its dtype; "2.0" not "2". */
static void put_float(out *o, gb_dtype dt, double v, bool in_array) {
    char s[40];
    if (isnan(v)) {
        puts_(o, "nan");
        return;
    }
    if (isinf(v)) {
        puts_(o, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, v);
        if (dt == GB_F32 ? strtof(s, NULL) == (float)v : strtod(s, NULL) == v) break;
    }
    puts_(o, s);
    if (!strpbrk(s, ".e")) puts_(o, in_array ? "." : ".0");
}

static void put_element(out *o, const gb_tensor *t, int64_t i, bool in_array) {
    char s[32];
    switch (t->dtype) {
    case GB_STRING: {
        const gb_string *e = (const gb_string *)t->data + i;
        int need = gb__string_repr(e, NULL, 0);
        char *text = malloc((size_t)need + 1);
        if (!text) return;
        gb__string_repr(e, text, (size_t)need + 1);
        puts_(o, text);
        free(text);
        return;
    }
    case GB_F32:
    case GB_F64: put_float(o, t->dtype, gb__load(t->dtype, t->data, i), in_array); return;
    case GB_BOOL: puts_(o, ((const uint8_t *)t->data)[i] ? "True" : "False"); return;
    case GB_I64: snprintf(s, sizeof s, "%lld", (long long)((const int64_t *)t->data)[i]); break;
    default: snprintf(s, sizeof s, "%lld", (long long)gb__load(t->dtype, t->data, i)); break;
    }
    puts_(o, s);
}

/* Axis `axis` from flat offset base; rows after the first start on a new
 * line indented by the brackets open (`axis + 1` columns). */
static void put_axis(out *o, const gb_tensor *t, int axis, int64_t base, bool summarise) {
    if (axis == t->rank) {
        put_element(o, t, base, true);
        return;
    }
    int64_t n = t->shape[axis], inner = 1;
    for (int d = axis + 1; d < t->rank && d < GB_MAX_RANK; d++) inner *= t->shape[d];
    put(o, "[", 1);
    for (int64_t i = 0; i < n; i++) {
        if (summarise && n > 6 && i == 3) {
            puts_(o, axis + 1 == t->rank ? " ..." : "\n");
            if (axis + 1 < t->rank) {
                for (int s = 0; s <= axis; s++) put(o, " ", 1);
                puts_(o, "...");
            }
            i = n - 3;
        }
        if (i && axis + 1 == t->rank) {
            put(o, " ", 1);
        } else if (i) {
            for (int b = axis + 1; b < t->rank; b++) put(o, "\n", 1);
            for (int s = 0; s <= axis; s++) put(o, " ", 1);
        }
        put_axis(o, t, axis + 1, base + i * inner, summarise);
    }
    put(o, "]", 1);
}

static void put_shape(out *o, const gb_tensor *t) {
    char s[32];
    put(o, "(", 1);
    for (int d = 0; d < t->rank; d++) {
        if (t->shape[d] < 0)
            snprintf(s, sizeof s, "%sNone", d ? ", " : "");
        else
            snprintf(s, sizeof s, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
        puts_(o, s);
    }
    puts_(o, t->rank == 1 ? ",)" : ")");
}

const char *gb_tensor_repr(const gb_tensor *t, char *buf, size_t n) {
    out o = {buf, n, 0};
    if (!t) {
        puts_(&o, "None");
    } else if (!t->data) {
        char name[160] = "?";
        gb_symbolic_name_fn fn = atomic_load_explicit(&gb__symbolic_name_hook,
                                                      memory_order_acquire);
        if (fn) fn(t, name, sizeof name);
        puts_(&o, "Tensor(\"");
        puts_(&o, name);
        puts_(&o, "\", shape=");
        put_shape(&o, t);
    } else {
        /* Values on several lines start on a line of their own, as
         * TensorFlow prints them: when an outer axis has several rows. */
        bool lines = false;
        for (int d = 0; d + 1 < t->rank; d++) lines |= t->shape[d] > 1;
        puts_(&o, lines ? "tf.Tensor(\n" : "tf.Tensor(");
        if (t->rank == 0)
            put_element(&o, t, 0, false);
        else
            put_axis(&o, t, 0, 0, t->size > 1000);
        puts_(&o, ", shape=");
        put_shape(&o, t);
    }
    if (t) {
        puts_(&o, ", dtype=");
        puts_(&o, gb_dtype_name(t->dtype));
        puts_(&o, ")");
    }
    if (n) buf[o.k < n ? o.k : n - 1] = '\0';
    return buf;
}
