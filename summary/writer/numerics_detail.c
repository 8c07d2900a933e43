/* writer/numerics_detail.c — an engine numerics alert as the JSON detail
 * the store keeps with it.
 *
 * The numerics table has a column for what every alert has (op, scope,
 * counts, message); the rest of gb_numerics_alert goes into its `detail`
 * column as one JSON object:
 *   {"output_index":0,"dtype":"float32","shape":[64,10],"first_index":197,
 *    "created":true,"backward":false,"forward_op_type":"",
 *    "inputs":[{"dtype":"float32","shape":[64,10],"min":0,"max":0.98,
 *               "nan_count":0,"inf_count":0}]}
 * (min/max null: no finite value). The store's reader parses exactly this
 * (store/numerics_detail.c, gb_numerics_detail in gb_reader.h): a field
 * added here is added there.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "gb_debug.h"
#include "writer/internal.h"

/* A bounded string builder for the JSON details. */
typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    if (t->len >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len = n < 0 ? t->cap : t->len + (size_t)n;
}

static void put_json_string(text *t, const char *s) {
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            put(t, "\\%c", *p);
        else if (*p < 0x20)
            put(t, "\\u%04x", *p);
        else
            put(t, "%c", *p);
    }
    put(t, "\"");
}

static void put_number(text *t, double v) {
    if (isfinite(v))
        put(t, "%.17g", v);
    else
        put(t, "null");
}

static void put_shape(text *t, int rank, const int64_t *shape) {
    put(t, "[");
    for (int i = 0; i < rank; i++) put(t, "%s%lld", i ? "," : "", (long long)shape[i]);
    put(t, "]");
}

void gb__numerics_detail_json(const gb_numerics_alert *a, char *out, size_t n) {
    text storage = {out, 0, n}, *t = &storage;
    if (!n) return;
    out[0] = 0;
    put(t, "{\"output_index\":%d,\"dtype\":", a->output_index);
    put_json_string(t, gb_dtype_name(a->dtype));
    put(t, ",\"shape\":");
    put_shape(t, a->rank, a->shape);
    put(t, ",\"first_index\":%lld,\"created\":%s,\"backward\":%s,\"forward_op_type\":",
        (long long)a->first_index, a->created ? "true" : "false", a->backward ? "true" : "false");
    put_json_string(t, a->forward_op_type);
    put(t, ",\"inputs\":[");
    for (int i = 0; i < a->ninputs && i < GB_NUMERICS_MAX_INPUTS; i++) {
        const gb_numerics_input *in = &a->inputs[i];
        put(t, "%s{\"dtype\":", i ? "," : "");
        put_json_string(t, gb_dtype_name(in->dtype));
        put(t, ",\"shape\":");
        put_shape(t, in->rank, in->shape);
        put(t, ",\"min\":");
        put_number(t, in->min);
        put(t, ",\"max\":");
        put_number(t, in->max);
        put(t, ",\"nan_count\":%lld,\"inf_count\":%lld}", (long long)in->nan_count,
            (long long)in->inf_count);
    }
    put(t, "]}");
    if (t->len >= t->cap) t->buf[0] = 0;   /* truncated JSON is worse than none */
}

