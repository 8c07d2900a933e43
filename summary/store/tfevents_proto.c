/* store/tfevents_proto.c — the Event and Summary protocol buffers of
 * TensorBoard's event files, decoded and encoded by hand (gb_tfevents.h).
 *
 * Why not protobuf-c: the messages used are few and shallow, the wire
 * format is four encodings, and a decoder of our own borrows the record's
 * bytes (no allocation per event: a file of a million scalars decodes in
 * one pass), is fuzzed with the rest of the store's readers, and needs no
 * code generator in the build. Field numbers are TensorFlow's public ones
 * (event.proto, summary.proto, tensor.proto, tensor_shape.proto,
 * types.proto); unknown fields are skipped, as protobuf readers must.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_tfevents.h"
#include "store/pb_wire.h"

/* ---- numbers of repeated fields (packed or not) --------------------------------------- */

/* Appends field `number`'s numbers in msg to out (at most max; *n counts
 * them all): doubles (I64), floats (I32) or integers (VARINT), packed or
 * one per field. */
typedef struct numbers {
    uint32_t number;
    int wire;                /* the element encoding */
    bool is_signed;
    double *out;
    size_t max, n;
    bool bad;
} numbers;

static void push_number(numbers *c, double v) {
    if (c->n < c->max) c->out[c->n] = v;
    c->n++;
}

static double element(const numbers *c, uint64_t v) {
    if (c->wire == WIRE_I64) return as_double(v);
    if (c->wire == WIRE_I32) return as_float((uint32_t)v);
    return c->is_signed ? (double)(int64_t)v : (double)v;
}

static bool collect_number(void *ctx, const pb_field *f) {
    numbers *c = ctx;
    if (f->number != c->number) return true;
    if (f->wire == c->wire) {
        push_number(c, element(c, f->v));
        return true;
    }
    if (f->wire != WIRE_LEN) return (c->bad = true, false);
    pb r = {f->bytes.data, f->bytes.data + f->bytes.size};
    while (r.p < r.end) {
        uint64_t v;
        if (c->wire == WIRE_VARINT) {
            if (!read_varint(&r, &v)) return (c->bad = true, false);
        } else {
            int w = c->wire == WIRE_I64 ? 8 : 4;
            if (r.end - r.p < w) return (c->bad = true, false);
            v = load_le(r.p, w);
            r.p += w;
        }
        push_number(c, element(c, v));
    }
    return true;
}

static bool gather(gb_tf_bytes msg, uint32_t number, int wire, bool is_signed, double *out,
                   size_t max, size_t *n) {
    numbers c = {number, wire, is_signed, out, max, 0, false};
    bool ok = walk(msg, collect_number, &c) && !c.bad;
    *n = c.n;
    return ok;
}

/* ---- tensors ------------------------------------------------------------------------------ */

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_STRING = 7, DT_INT64 = 9 };

typedef struct tensor {
    int64_t dtype;
    int rank;
    int64_t dims[8];
    bool content_given;
    gb_tf_bytes content;     /* tensor_content */
    gb_tf_bytes msg;         /* the whole TensorProto, for the *_val fields */
    size_t nstrings;
    gb_tf_bytes strings[3];  /* the first string_val elements */
} tensor;

static bool dim_field(void *ctx, const pb_field *f) {
    int64_t *size = ctx;
    if (f->number == 1 && f->wire == WIRE_VARINT) *size = (int64_t)f->v;
    return true;
}

static bool shape_field(void *ctx, const pb_field *f) {
    tensor *t = ctx;
    if (f->number != 2 || f->wire != WIRE_LEN) return true;
    if (t->rank == 8) return false;
    int64_t size = -1;
    if (!walk(f->bytes, dim_field, &size)) return false;
    t->dims[t->rank++] = size;
    return true;
}

static bool tensor_field(void *ctx, const pb_field *f) {
    tensor *t = ctx;
    if (f->number == 1 && f->wire == WIRE_VARINT) t->dtype = (int64_t)f->v;
    else if (f->number == 2 && f->wire == WIRE_LEN) return walk(f->bytes, shape_field, t);
    else if (f->number == 4 && f->wire == WIRE_LEN) t->content = f->bytes, t->content_given = true;
    else if (f->number == 8 && f->wire == WIRE_LEN && t->nstrings < 3)
        t->strings[t->nstrings++] = f->bytes;
    return true;
}

static bool parse_tensor(gb_tf_bytes msg, tensor *t) {
    *t = (tensor){.msg = msg};
    return walk(msg, tensor_field, t);
}

static int64_t elements(const tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0 || (t->dims[d] && n > INT64_MAX / t->dims[d])) return -1;
        n *= t->dims[d];
    }
    return n;
}

/* A numeric tensor's elements into out (max of them); *n = how many it has. */
static bool tensor_numbers(const tensor *t, double *out, size_t max, size_t *n) {
    int width = t->dtype == DT_FLOAT || t->dtype == DT_INT32 ? 4
                : t->dtype == DT_DOUBLE || t->dtype == DT_INT64 ? 8 : 0;
    if (!width) return false;
    if (t->content_given) {
        if (t->content.size % (size_t)width) return false;
        *n = t->content.size / (size_t)width;
        for (size_t i = 0; i < *n && i < max; i++) {
            uint64_t v = load_le(t->content.data + i * (size_t)width, width);
            out[i] = t->dtype == DT_FLOAT   ? as_float((uint32_t)v)
                     : t->dtype == DT_DOUBLE ? as_double(v)
                     : t->dtype == DT_INT32  ? (double)(int32_t)v
                                             : (double)(int64_t)v;
        }
        return true;
    }
    switch (t->dtype) {
    case DT_FLOAT: return gather(t->msg, 5, WIRE_I32, false, out, max, n);
    case DT_DOUBLE: return gather(t->msg, 6, WIRE_I64, false, out, max, n);
    case DT_INT32: return gather(t->msg, 7, WIRE_VARINT, true, out, max, n);
    default: return gather(t->msg, 10, WIRE_VARINT, true, out, max, n);
    }
}

/* ---- summary values --------------------------------------------------------------------- */

typedef struct value_parts {
    gb_tf_value *v;
    bool has_simple, has_histo, has_image, has_audio, has_tensor;
    float simple;
    gb_tf_bytes histo, image, audio, tensor, metadata;
} value_parts;

static bool plugin_data_field(void *ctx, const pb_field *f) {
    gb_tf_value *v = ctx;
    if (f->number == 1 && f->wire == WIRE_LEN) v->plugin = f->bytes;
    else if (f->number == 2 && f->wire == WIRE_LEN) v->plugin_content = f->bytes;
    return true;
}

static bool metadata_field(void *ctx, const pb_field *f) {
    if (f->number == 1 && f->wire == WIRE_LEN) return walk(f->bytes, plugin_data_field, ctx);
    return true;
}

static bool value_field(void *ctx, const pb_field *f) {
    value_parts *p = ctx;
    if (f->number == 1 && f->wire == WIRE_LEN) p->v->tag = f->bytes;
    else if (f->number == 2 && f->wire == WIRE_I32) p->has_simple = true, p->simple = as_float((uint32_t)f->v);
    else if (f->number == 4 && f->wire == WIRE_LEN) p->has_image = true, p->image = f->bytes;
    else if (f->number == 5 && f->wire == WIRE_LEN) p->has_histo = true, p->histo = f->bytes;
    else if (f->number == 6 && f->wire == WIRE_LEN) p->has_audio = true, p->audio = f->bytes;
    else if (f->number == 8 && f->wire == WIRE_LEN) p->has_tensor = true, p->tensor = f->bytes;
    else if (f->number == 9 && f->wire == WIRE_LEN) p->metadata = f->bytes;
    return true;
}

static bool histo_field(void *ctx, const pb_field *f) {
    gb_tf_value *v = ctx;
    if (f->wire != WIRE_I64 || f->number > 5) return true;
    double d = as_double(f->v);
    switch (f->number) {
    case 1: v->min = d; break;
    case 2: v->max = d; break;
    case 3: v->count = d; break;
    case 4: v->sum = d; break;
    case 5: v->sum_squares = d; break;
    }
    return true;
}

static bool image_field(void *ctx, const pb_field *f) {
    gb_tf_value *v = ctx;
    if (f->number == 1 && f->wire == WIRE_VARINT) v->height = (int64_t)f->v;
    else if (f->number == 2 && f->wire == WIRE_VARINT) v->width = (int64_t)f->v;
    else if (f->number == 3 && f->wire == WIRE_VARINT) v->channels = (int64_t)f->v;
    else if (f->number == 4 && f->wire == WIRE_LEN) v->image = f->bytes;
    return true;
}

static bool audio_field(void *ctx, const pb_field *f) {
    gb_tf_value *v = ctx;
    if (f->number == 4 && f->wire == WIRE_LEN) v->audio = f->bytes;
    return true;
}

/* A decimal integer of a string tensor element ("28"), or -1. */
static int64_t decimal(gb_tf_bytes b) {
    int64_t v = 0;
    if (!b.size || b.size > 12) return -1;
    for (size_t i = 0; i < b.size; i++) {
        if (b.data[i] < '0' || b.data[i] > '9') return -1;
        v = v * 10 + (b.data[i] - '0');
    }
    return v;
}

/* A tensor value: a scalar, a v2 histogram [k, 3], a v2 image, text. */
static bool classify_tensor(gb_tf_value *v, gb_tf_bytes msg) {
    tensor t;
    if (!parse_tensor(msg, &t)) return false;
    v->kind = GB_TF_OTHER;
    if (t.dtype == DT_STRING) {
        if (bytes_eq(v->plugin, "audio") && (t.rank == 1 || (t.rank == 2 && t.dims[1] == 2)) &&
            t.dims[0] >= 1 && elements(&t) >= 1) {
            v->kind = GB_TF_AUDIO;
            v->clips = t.dims[0];
            v->tensor = msg;
        } else if (bytes_eq(v->plugin, "text") && t.nstrings >= 1) {
            v->kind = GB_TF_TEXT;
            v->text = t.strings[0];
        } else if (bytes_eq(v->plugin, "images") && t.nstrings >= 3 && decimal(t.strings[0]) >= 0 &&
                   decimal(t.strings[1]) >= 0) {
            v->kind = GB_TF_IMAGE;
            v->width = decimal(t.strings[0]);
            v->height = decimal(t.strings[1]);
            v->image = t.strings[2];
        }
        return true;
    }
    if (t.rank == 0 && elements(&t) == 1) {
        double x;
        size_t n = 0;
        if (tensor_numbers(&t, &x, 1, &n) && n == 1) v->kind = GB_TF_SCALAR, v->scalar = x;
        return true;
    }
    if (bytes_eq(v->plugin, "pr_curves") && t.rank == 2 && t.dims[0] == 6 && t.dims[1] >= 2 &&
        t.dims[1] <= GB_TF_MAX_THRESHOLDS && (t.dtype == DT_FLOAT || t.dtype == DT_DOUBLE)) {
        v->kind = GB_TF_PR_CURVE;
        v->tensor = msg;
        v->num_thresholds = t.dims[1];
        return true;
    }
    if (bytes_eq(v->plugin, "histograms") && t.rank == 2 && t.dims[1] == 3 && t.dims[0] >= 1 &&
        t.dims[0] <= GB_TF_MAX_BUCKETS && (t.dtype == DT_DOUBLE || t.dtype == DT_FLOAT)) {
        v->kind = GB_TF_HISTOGRAM;
        v->hist = msg;
        v->hist_v2 = true;
        v->buckets = (size_t)t.dims[0];
    }
    return true;
}

static bool decode_value(gb_tf_bytes msg, gb_tf_value *v) {
    *v = (gb_tf_value){.kind = GB_TF_OTHER};
    value_parts p = {.v = v};
    if (!walk(msg, value_field, &p)) return false;
    if (p.metadata.data && !walk(p.metadata, metadata_field, v)) return false;
    if (bytes_eq(v->plugin, "hparams")) {   /* its data is the content; the tensor is empty */
        v->kind = GB_TF_HPARAMS;
    } else if (p.has_simple) {
        v->kind = GB_TF_SCALAR;
        v->scalar = p.simple;
    } else if (p.has_histo) {
        if (!walk(p.histo, histo_field, v)) return false;
        size_t nl = 0, nc = 0;
        double scratch;
        if (!gather(p.histo, 6, WIRE_I64, false, &scratch, 0, &nl) ||
            !gather(p.histo, 7, WIRE_I64, false, &scratch, 0, &nc))
            return false;
        if (nl == nc && nl >= 1 && nl <= GB_TF_MAX_BUCKETS) {
            v->kind = GB_TF_HISTOGRAM;
            v->hist = p.histo;
            v->buckets = nl;
        }
    } else if (p.has_image) {
        if (!walk(p.image, image_field, v)) return false;
        v->kind = GB_TF_IMAGE;
    } else if (p.has_audio) {   /* Summary.Audio: the clip is encoded_audio_string (4) */
        if (!walk(p.audio, audio_field, v)) return false;
        v->kind = GB_TF_AUDIO;
        v->clips = 1;
    } else if (p.has_tensor) {
        return classify_tensor(v, p.tensor);
    }
    return true;
}

/* ---- events ------------------------------------------------------------------------------ */

typedef struct event_ctx {
    gb_tf_event *ev;
    gb_tf_bytes summary;
} event_ctx;

static bool event_field(void *ctx, const pb_field *f) {
    event_ctx *c = ctx;
    if (f->number == 1 && f->wire == WIRE_I64) c->ev->wall_time = as_double(f->v);
    else if (f->number == 2 && f->wire == WIRE_VARINT) c->ev->step = (int64_t)f->v;
    else if (f->number == 3 && f->wire == WIRE_LEN) c->ev->file_version = f->bytes;
    else if (f->number == 5 && f->wire == WIRE_LEN) c->summary = f->bytes;
    return true;
}

static bool summary_field(void *ctx, const pb_field *f) {
    gb_tf_event *ev = ctx;
    if (f->number != 1 || f->wire != WIRE_LEN) return true;
    if (ev->nvalues == GB_TF_MAX_VALUES) return false;
    return decode_value(f->bytes, &ev->values[ev->nvalues++]);
}

bool gb_tf_event_decode(const unsigned char *data, size_t size, gb_tf_event *ev, char *why,
                        size_t why_size) {
    ev->wall_time = 0;
    ev->step = 0;
    ev->file_version = (gb_tf_bytes){NULL, 0};
    ev->nvalues = 0;
    event_ctx c = {ev, {NULL, 0}};
    if (!walk((gb_tf_bytes){data, size}, event_field, &c)) {
        snprintf(why, why_size, "the record is no Event message (malformed protocol buffer)");
        return false;
    }
    if (c.summary.data && !walk(c.summary, summary_field, ev)) {
        snprintf(why, why_size, ev->nvalues == GB_TF_MAX_VALUES
                                    ? "an Event holds more than %d summary values"
                                    : "a summary value of the Event is malformed",
                 GB_TF_MAX_VALUES);
        return false;
    }
    return true;
}

bool gb_tf_histogram_buckets(const gb_tf_value *v, double *edges, double *counts,
                             size_t *buckets, char *why, size_t why_size) {
    size_t k = v->buckets, n = 0;
    if (v->kind != GB_TF_HISTOGRAM || k < 1 || k > GB_TF_MAX_BUCKETS) {
        snprintf(why, why_size, "not a histogram");
        return false;
    }
    if (v->hist_v2) {
        /* rows of (left, right, count), as tf.summary.histogram (v2) writes */
        double *rows = malloc(3 * k * sizeof *rows);
        tensor t;
        bool ok = rows && parse_tensor(v->hist, &t) && tensor_numbers(&t, rows, 3 * k, &n) &&
                  n == 3 * k;
        for (size_t b = 0; ok && b < k; b++) {
            if (!b) edges[0] = rows[0];
            edges[b + 1] = rows[3 * b + 1];
            counts[b] = rows[3 * b + 2];
        }
        free(rows);
        if (!ok) {
            snprintf(why, why_size, "the histogram tensor does not hold %zu rows of 3", k);
            return false;
        }
    } else {
        /* HistogramProto: bucket b ends at bucket_limit[b], the first starts below
         * everything (-DBL_MAX). An empty first bucket ending at or below min gives the
         * left edge (as gb_tf_put_histogram writes it); otherwise the first bucket
         * starts at min. TensorFlow's last limit is DBL_MAX (and its first bucket may
         * end at -DBL_MAX): those become max (the first edge). */
        edges[0] = v->min;
        if (!gather(v->hist, 6, WIRE_I64, false, edges + 1, k, &n) || n != k ||
            !gather(v->hist, 7, WIRE_I64, false, counts, k, &n) || n != k) {
            snprintf(why, why_size, "the histogram's limits and counts differ in number");
            return false;
        }
        if (k > 1 && counts[0] == 0 && edges[1] <= v->min) {
            memmove(edges, edges + 1, k * sizeof *edges);
            memmove(counts, counts + 1, (k - 1) * sizeof *counts);
            k--;
        }
        for (size_t b = 1; b <= k; b++)
            if (fabs(edges[b]) >= DBL_MAX) edges[b] = edges[b] > 0 ? fmax(v->max, edges[b - 1]) : edges[0];
    }
    for (size_t b = 0; b < k; b++)
        if (!(edges[b + 1] >= edges[b]) || !isfinite(edges[b + 1]) || !(counts[b] >= 0) ||
            !isfinite(counts[b])) {
            snprintf(why, why_size, "bucket %zu of the histogram is not a bucket (edges %g, %g; count %g)",
                     b, edges[b], edges[b + 1], counts[b]);
            return false;
        }
    *buckets = k;
    return isfinite(edges[0]) || (snprintf(why, why_size, "the histogram's minimum is not finite"), false);
}

bool gb_tf_pr_counts(const gb_tf_value *v, double *counts, char *why, size_t why_size) {
    int64_t T = v->num_thresholds;
    size_t n = 0;
    tensor t;
    if (v->kind != GB_TF_PR_CURVE || T < 2 || T > GB_TF_MAX_THRESHOLDS || !parse_tensor(v->tensor, &t) ||
        !tensor_numbers(&t, counts, 6 * (size_t)T, &n) || n != 6 * (size_t)T) {
        snprintf(why, why_size, "the PR curve tensor does not hold 6 rows of %lld thresholds", (long long)T);
        return false;
    }
    for (int64_t i = 0; i < 4 * T; i++)
        if (!(counts[i] >= 0) || !isfinite(counts[i])) {
            snprintf(why, why_size, "the PR curve's %s count at threshold %lld is %g",
                     (const char *[]){"true positive", "false positive", "true negative", "false negative"}[i / T],
                     (long long)(i % T), counts[i]);
            return false;
        }
    return true;
}

typedef struct nth_string {
    int64_t want, seen;
    gb_tf_bytes found;
} nth_string;

static bool string_field(void *ctx, const pb_field *f) {
    nth_string *c = ctx;
    if (f->number == 8 && f->wire == WIRE_LEN && c->seen++ == c->want) c->found = f->bytes;
    return true;
}

bool gb_tf_audio_clip(const gb_tf_value *v, int64_t k, gb_tf_bytes *clip) {
    if (v->kind != GB_TF_AUDIO || k < 0 || k >= v->clips) return false;
    if (!v->tensor.data) {   /* Summary.Audio */
        *clip = v->audio;
        return v->audio.size > 0;
    }
    tensor t;   /* [k, 2] of (clip, label), or [k] */
    if (!parse_tensor(v->tensor, &t)) return false;
    nth_string c = {t.rank == 2 ? 2 * k : k, 0, {NULL, 0}};
    if (!walk(v->tensor, string_field, &c) || !c.found.size) return false;
    *clip = c.found;
    return true;
}

/* ---- encoding ----------------------------------------------------------------------------- */

void gb_tf_buf_free(gb_tf_buf *b) {
    free(b->data);
    *b = (gb_tf_buf){0};
}

void gb__pb_bytes(gb_tf_buf *b, const void *data, size_t n) {
    if (b->failed) return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) cap *= 2;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
}

void gb__pb_varint(gb_tf_buf *b, uint64_t v) {
    unsigned char tmp[10];
    int n = 0;
    do {
        tmp[n] = (unsigned char)(v & 0x7F);
        v >>= 7;
        if (v) tmp[n] |= 0x80;
        n++;
    } while (v);
    gb__pb_bytes(b, tmp, (size_t)n);
}

void gb__pb_key(gb_tf_buf *b, uint32_t number, int wire) {
    gb__pb_varint(b, (uint64_t)number << 3 | (uint64_t)wire);
}

void gb__pb_fixed64(gb_tf_buf *b, uint32_t number, double d) {
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    unsigned char tmp[8];
    for (int i = 0; i < 8; i++, v >>= 8) tmp[i] = (unsigned char)v;
    gb__pb_key(b, number, WIRE_I64);
    gb__pb_bytes(b, tmp, 8);
}

void gb__pb_len(gb_tf_buf *b, uint32_t number, const void *data, size_t n) {
    gb__pb_key(b, number, WIRE_LEN);
    gb__pb_varint(b, n);
    gb__pb_bytes(b, data, n);
}

void gb__pb_message(gb_tf_buf *b, uint32_t number, gb_tf_buf *inner) {
    if (inner->failed) b->failed = true;
    gb__pb_len(b, number, inner->data, inner->len);
    gb_tf_buf_free(inner);
}

void gb__pb_packed_doubles(gb_tf_buf *b, uint32_t number, const double *v, size_t n) {
    gb_tf_buf inner = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        unsigned char tmp[8];
        for (int k = 0; k < 8; k++, bits >>= 8) tmp[k] = (unsigned char)bits;
        gb__pb_bytes(&inner, tmp, 8);
    }
    gb__pb_message(b, number, &inner);
}

void gb__tf_plugin(gb_tf_buf *value, const char *plugin, gb_tf_buf *content) {
    gb_tf_buf data = {0}, meta = {0};
    gb__pb_len(&data, 1, plugin, strlen(plugin));
    if (content) gb__pb_message(&data, 2, content);
    gb__pb_message(&meta, 1, &data);
    gb__pb_message(value, 9, &meta);
}

/* Frames the encoded Event as one record at the end of out (event freed). */
void gb__tf_record(gb_tf_buf *out, gb_tf_buf *event) {
    size_t at = out->len;
    gb__pb_bytes(out, NULL, 0);
    if (event->failed) out->failed = true;
    if (!out->failed) {
        /* room for the frame: grow by writing the bytes, then frame in place */
        gb__pb_bytes(out, event->data, event->len);
        gb__pb_bytes(out, event->data, 16 < event->len ? 16 : event->len);
        while (!out->failed && out->len - at < event->len + 16) gb__pb_bytes(out, "", 1);
        if (!out->failed) out->len = gb_tf_record_put(out->data, out->cap, at, event->data, event->len);
    }
    gb_tf_buf_free(event);
}

/* Event { wall_time, step, summary { value } } as a record onto out. */
void gb__tf_event(gb_tf_buf *out, double wall_time, int64_t step, gb_tf_buf *value) {
    gb_tf_buf summary = {0}, event = {0};
    gb__pb_message(&summary, 1, value);
    gb__pb_fixed64(&event, 1, wall_time);
    gb__pb_key(&event, 2, WIRE_VARINT);
    gb__pb_varint(&event, (uint64_t)step);
    gb__pb_message(&event, 5, &summary);
    gb__tf_record(out, &event);
}

void gb_tf_put_file_version(gb_tf_buf *b, double wall_time) {
    gb_tf_buf event = {0};
    gb__pb_fixed64(&event, 1, wall_time);
    gb__pb_len(&event, 3, "brain.Event:2", 13);
    gb__tf_record(b, &event);
}

void gb_tf_put_scalar(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                      double value) {
    gb_tf_buf v = {0}, t = {0}, shape = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    gb__tf_plugin(&v, "scalars", NULL);
    gb__pb_key(&t, 1, WIRE_VARINT);
    gb__pb_varint(&t, DT_DOUBLE);
    gb__pb_message(&t, 2, &shape);              /* rank 0: an empty shape */
    gb__pb_packed_doubles(&t, 6, &value, 1);
    gb__pb_message(&v, 8, &t);
    gb__tf_event(b, wall_time, step, &v);
}

void gb_tf_put_histogram(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                         double min, double max, double count, double sum, double sum_squares,
                         const double *edges, const double *counts, size_t buckets) {
    gb_tf_buf v = {0}, h = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    gb__pb_fixed64(&h, 1, min);
    gb__pb_fixed64(&h, 2, max);
    gb__pb_fixed64(&h, 3, count);
    gb__pb_fixed64(&h, 4, sum);
    gb__pb_fixed64(&h, 5, sum_squares);
    /* An empty first bucket ending at the first edge carries that edge
     * exactly (TensorFlow's first bucket has no lower bound). */
    double *limits = malloc((buckets + 1) * sizeof *limits);
    double *cnt = malloc((buckets + 1) * sizeof *cnt);
    if (!limits || !cnt) {
        b->failed = true;
    } else {
        memcpy(limits, edges, (buckets + 1) * sizeof *limits);
        cnt[0] = 0;
        memcpy(cnt + 1, counts, buckets * sizeof *cnt);
        gb__pb_packed_doubles(&h, 6, limits, buckets + 1);
        gb__pb_packed_doubles(&h, 7, cnt, buckets + 1);
    }
    free(limits);
    free(cnt);
    gb__pb_message(&v, 5, &h);
    gb__tf_event(b, wall_time, step, &v);
}

void gb_tf_put_image(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                     const void *png, size_t size, int64_t width, int64_t height,
                     int64_t channels) {
    gb_tf_buf v = {0}, im = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    gb__pb_key(&im, 1, WIRE_VARINT);
    gb__pb_varint(&im, (uint64_t)height);
    gb__pb_key(&im, 2, WIRE_VARINT);
    gb__pb_varint(&im, (uint64_t)width);
    gb__pb_key(&im, 3, WIRE_VARINT);
    gb__pb_varint(&im, (uint64_t)channels);
    gb__pb_len(&im, 4, png, size);
    gb__pb_message(&v, 4, &im);
    gb__tf_event(b, wall_time, step, &v);
}

void gb_tf_put_text(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                    const char *text) {
    gb_tf_buf v = {0}, t = {0}, shape = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    gb__tf_plugin(&v, "text", NULL);
    gb__pb_key(&t, 1, WIRE_VARINT);
    gb__pb_varint(&t, DT_STRING);
    gb__pb_message(&t, 2, &shape);
    gb__pb_len(&t, 8, text, strlen(text));
    gb__pb_message(&v, 8, &t);
    gb__tf_event(b, wall_time, step, &v);
}

/* A tensor of dtype and shape [d0, d1] (d1 0: [d0]) into t. */
static void put_tensor_head(gb_tf_buf *t, int64_t dtype, int64_t d0, int64_t d1) {
    gb_tf_buf shape = {0}, dim = {0};
    gb__pb_key(t, 1, WIRE_VARINT);
    gb__pb_varint(t, (uint64_t)dtype);
    gb__pb_key(&dim, 1, WIRE_VARINT);
    gb__pb_varint(&dim, (uint64_t)d0);
    gb__pb_message(&shape, 2, &dim);
    if (d1) {
        gb__pb_key(&dim, 1, WIRE_VARINT);
        gb__pb_varint(&dim, (uint64_t)d1);
        gb__pb_message(&shape, 2, &dim);
    }
    gb__pb_message(t, 2, &shape);
}

/* The plugin data content { version 0 (1), field 2: v } of the pr_curves
 * (num_thresholds) and audio (encoding) plugins. */
static void put_plugin_u32(gb_tf_buf *value, const char *plugin, uint64_t v) {
    gb_tf_buf content = {0};
    gb__pb_key(&content, 2, WIRE_VARINT);
    gb__pb_varint(&content, v);
    gb__tf_plugin(value, plugin, &content);
}

void gb_tf_put_pr_curve(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                        size_t num_thresholds, const double *const rows[6]) {
    gb_tf_buf v = {0}, t = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    put_plugin_u32(&v, "pr_curves", num_thresholds);
    put_tensor_head(&t, DT_DOUBLE, 6, (int64_t)num_thresholds);
    double *all = malloc(6 * num_thresholds * sizeof *all);
    if (!all) b->failed = true;
    for (int r = 0; all && r < 6; r++) memcpy(all + r * num_thresholds, rows[r], num_thresholds * sizeof *all);
    if (all) gb__pb_packed_doubles(&t, 6, all, 6 * num_thresholds);   /* double_val */
    free(all);
    gb__pb_message(&v, 8, &t);
    gb__tf_event(b, wall_time, step, &v);
}

void gb_tf_put_audio(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                     const gb_tf_bytes *clips, size_t count) {
    enum { WAV = 11 };
    gb_tf_buf v = {0}, t = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    put_plugin_u32(&v, "audio", WAV);
    put_tensor_head(&t, DT_STRING, (int64_t)count, 2);
    for (size_t k = 0; k < count; k++) {
        gb__pb_len(&t, 8, clips[k].data, clips[k].size);
        gb__pb_len(&t, 8, "", 0);   /* its label */
    }
    gb__pb_message(&v, 8, &t);
    gb__tf_event(b, wall_time, step, &v);
}
