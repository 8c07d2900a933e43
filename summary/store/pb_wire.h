/* store/pb_wire.h — the protocol buffer wire format: read, the four
 * encodings (varints, fixed 32/64-bit, length-delimited) and a walk over a
 * message's fields, borrowing the bytes; written, into a growing
 * gb_tf_buf. Shared by the decoders and encoders of TensorBoard's event
 * files (tfevents_proto.c) and of the plugin data they carry
 * (tfevents_hparams.c); internal to the store layer.
 */
#ifndef GB_STORE_PB_WIRE_H
#define GB_STORE_PB_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gb_tfevents.h"

/* ---- the wire format ---------------------------------------------------------------- */

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

typedef struct pb {
    const unsigned char *p, *end;
} pb;

typedef struct pb_field {
    uint32_t number;
    int wire;
    uint64_t v;              /* VARINT, I64, I32 */
    gb_tf_bytes bytes;       /* LEN */
} pb_field;

static inline bool read_varint(pb *r, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static inline uint64_t load_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The next field of the message, or false at its end or on malformed bytes
 * (*bad set then). */
static inline bool next_field(pb *r, pb_field *f, bool *bad) {
    if (r->p >= r->end) return false;
    uint64_t key;
    *bad = true;
    if (!read_varint(r, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX) return false;
    f->number = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    size_t left;
    switch (f->wire) {
    case WIRE_VARINT:
        if (!read_varint(r, &f->v)) return false;
        break;
    case WIRE_I64:
    case WIRE_I32:
        left = (size_t)(r->end - r->p);
        if (left < (f->wire == WIRE_I64 ? 8u : 4u)) return false;
        f->v = load_le(r->p, f->wire == WIRE_I64 ? 8 : 4);
        r->p += f->wire == WIRE_I64 ? 8 : 4;
        break;
    case WIRE_LEN: {
        uint64_t n;
        if (!read_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return false;
        f->bytes = (gb_tf_bytes){r->p, (size_t)n};
        r->p += n;
        break;
    }
    default:
        return false;   /* groups (3, 4) are not used by these messages */
    }
    *bad = false;
    return true;
}

static inline double as_double(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline float as_float(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline bool bytes_eq(gb_tf_bytes b, const char *s) {
    return b.size == strlen(s) && !memcmp(b.data, s, b.size);
}

/* Walks a message's fields: fn per field; false on malformed bytes or when
 * fn says so. */
typedef bool (*field_fn)(void *ctx, const pb_field *f);
static inline bool walk(gb_tf_bytes msg, field_fn fn, void *ctx) {
    if (!msg.size) return true;   /* no fields (and maybe no bytes at all: data NULL) */
    pb r = {msg.data, msg.data + msg.size};
    pb_field f = {0};
    bool bad = false;
    while (next_field(&r, &f, &bad))
        if (!fn(ctx, &f)) return false;
    return !bad;
}

/* ---- writing (tfevents_proto.c) ------------------------------------------------------ */

/* Appends to b (which grows; b->failed once memory runs out, and every
 * later call does nothing): raw bytes, a varint, a field's key, a double
 * field (I64), a length-delimited field, an embedded message (inner is
 * freed), packed doubles. */
void gb__pb_bytes(gb_tf_buf *b, const void *data, size_t n);
void gb__pb_varint(gb_tf_buf *b, uint64_t v);
void gb__pb_key(gb_tf_buf *b, uint32_t number, int wire);
void gb__pb_fixed64(gb_tf_buf *b, uint32_t number, double d);
void gb__pb_len(gb_tf_buf *b, uint32_t number, const void *data, size_t n);
void gb__pb_message(gb_tf_buf *b, uint32_t number, gb_tf_buf *inner);
void gb__pb_packed_doubles(gb_tf_buf *b, uint32_t number, const double *v, size_t n);
/* A Summary.Value's metadata: SummaryMetadata { plugin_data { plugin_name,
 * content (when given; freed) } }. */
void gb__tf_plugin(gb_tf_buf *value, const char *plugin, gb_tf_buf *content);
/* Frames the encoded Event as one record at the end of out (event freed). */
void gb__tf_record(gb_tf_buf *out, gb_tf_buf *event);
/* Event { wall_time, step, summary { value } } as a record onto out (value freed). */
void gb__tf_event(gb_tf_buf *out, double wall_time, int64_t step, gb_tf_buf *value);

#endif
