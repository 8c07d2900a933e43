/* writer/embedding.c — gb_summary_embedding: points for the projector.
 *
 * One step's embedding becomes one row: the vectors as float32 (what the
 * browser computes with; a float64 tensor is rounded once, here), the
 * metadata as the text TensorBoard's projector reads (a header line of
 * column names, then one line per point, fields separated by tabs), and
 * an optional sprite: every point's image tiled row-major into a square
 * atlas, one PNG. Everything is built on the caller's thread, because the
 * tensors may change once the call returns, and every part is bounded
 * here (gb_summary.h), so a stored embedding is always one the server
 * can hand on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

static const char what[] = "gb_summary_embedding";

static gb_status check_values(const char *tag, const gb_tensor *t) {
    char shape[96], msg[256];
    gb_dtype dt = gb_tensor_dtype(t);
    if (dt != GB_F32 && dt != GB_F64)
        return gb__writer_fail(GB_ERR_DTYPE, what, tag, "values must be float32 or float64");
    if (gb_rank(t) != 2 || gb_shape(t)[0] < 1 || gb_shape(t)[1] < 1) {
        snprintf(msg, sizeof msg, "values must be [N, D] with N, D >= 1, got %s",
                 gb_shape_str(t, shape, sizeof shape));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    int64_t n = gb_shape(t)[0], d = gb_shape(t)[1];
    if (n > GB_SUMMARY_EMBEDDING_MAX_BYTES / 4 / d) {
        snprintf(msg, sizeof msg, "values %s hold %lld float32 bytes, more than the %lld allowed",
                 gb_shape_str(t, shape, sizeof shape), (long long)(n * d * 4),
                 (long long)GB_SUMMARY_EMBEDDING_MAX_BYTES);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    const void *data = gb_data(t);
    for (int64_t i = 0; i < n * d; i++) {
        double v = gb__element(dt, data, i);
        if (!isfinite(v) || (dt == GB_F64 && fabs(v) > 3.4028234663852886e38)) {
            snprintf(msg, sizeof msg, "value [%lld, %lld] is %g: points must be finite float32",
                     (long long)(i / d), (long long)(i % d), v);
            return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
        }
    }
    return GB_OK;
}

static gb_status check_metadata(const char *tag, const gb_tensor *m, int64_t n) {
    char shape[96], msg[256];
    if (gb_tensor_dtype(m) != GB_STRING)
        return gb__writer_fail(GB_ERR_DTYPE, what, tag, "metadata must be a string tensor");
    if ((gb_rank(m) != 1 && gb_rank(m) != 2) || gb_shape(m)[0] != n ||
        (gb_rank(m) == 2 && gb_shape(m)[1] < 1)) {
        snprintf(msg, sizeof msg, "metadata must be [N] or [N, C] with N = %lld points, got %s",
                 (long long)n, gb_shape_str(m, shape, sizeof shape));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    return GB_OK;
}

/* ---- metadata text -------------------------------------------------------------------------- */

/* A value as a field: tabs and line breaks become spaces, so a field
 * stays a field (TensorBoard's metadata has no quoting either). */
static char *put_field(char *out, const char *s, int64_t len) {
    for (int64_t i = 0; i < len; i++) {
        char c = s[i];
        *out++ = c == '\t' || c == '\n' || c == '\r' ? ' ' : c;
    }
    return out;
}

/* The metadata text into a malloc'd buffer (*len bytes, no NUL counted);
 * "" without metadata. Fails when it would exceed its bound. */
static gb_status metadata_text(const char *tag, const gb_tensor *m, const char *const *names,
                               char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (!m) return GB_OK;
    int64_t n = gb_shape(m)[0], c = gb_rank(m) == 2 ? gb_shape(m)[1] : 1;
    char default_name[32];
    /* Bytes first: fields, names, separators. */
    int64_t bytes = 0;
    for (int64_t k = 0; k < c; k++) {
        bytes += names && names[k] ? (int64_t)strlen(names[k])
                                   : snprintf(default_name, sizeof default_name,
                                              c == 1 ? "label" : "column %lld", (long long)k + 1);
        bytes += 1;
    }
    for (int64_t i = 0; i < n * c; i++) bytes += gb_get_string(m, i).len + 1;
    if (bytes > GB_SUMMARY_METADATA_MAX_BYTES) {
        char msg[160];
        snprintf(msg, sizeof msg, "the metadata text is %lld bytes, more than the %lld allowed",
                 (long long)bytes, (long long)GB_SUMMARY_METADATA_MAX_BYTES);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    char *buf = malloc((size_t)bytes + 1), *p = buf;
    if (!buf) return gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    for (int64_t k = 0; k < c; k++) {
        if (names && names[k]) {
            p = put_field(p, names[k], (int64_t)strlen(names[k]));
        } else {
            int w = snprintf(default_name, sizeof default_name,
                             c == 1 ? "label" : "column %lld", (long long)k + 1);
            p = put_field(p, default_name, w);
        }
        *p++ = k + 1 < c ? '\t' : '\n';
    }
    for (int64_t i = 0; i < n * c; i++) {
        gb_string s = gb_get_string(m, i);
        p = put_field(p, s.data, s.len);
        *p++ = (i + 1) % c ? '\t' : '\n';
    }
    *text = buf;
    *len = (size_t)(p - buf);
    return GB_OK;
}

/* ---- the sprite atlas ------------------------------------------------------------------------ */

/* Tiles the N images of t into a grid of ceil(sqrt(N)) columns and
 * encodes it as PNG (*png malloc'd). */
static gb_status sprite_png(const char *tag, const gb_tensor *t, int64_t n, unsigned char **png,
                            size_t *png_size, int *tile_w, int *tile_h) {
    char shape[96], msg[256];
    gb_status st = gb__writer_check_image(what, tag, t, 1);
    if (st != GB_OK) return st;
    const int64_t *d = gb_shape(t);
    if (d[0] != n) {
        snprintf(msg, sizeof msg, "sprite must hold one image per point (%lld), got %s",
                 (long long)n, gb_shape_str(t, shape, sizeof shape));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    int64_t h = d[1], w = d[2], c = d[3];
    int64_t cols = (int64_t)ceil(sqrt((double)n)), rows = (n + cols - 1) / cols;
    if (cols * w > GB_SUMMARY_SPRITE_MAX_SIDE || rows * h > GB_SUMMARY_SPRITE_MAX_SIDE) {
        snprintf(msg, sizeof msg,
                 "a sprite atlas of %lld x %lld images of %lldx%lld is %lldx%lld pixels, more "
                 "than %d a side", (long long)cols, (long long)rows, (long long)w, (long long)h,
                 (long long)(cols * w), (long long)(rows * h), GB_SUMMARY_SPRITE_MAX_SIDE);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    size_t tile = (size_t)(h * w * c), atlas_w = (size_t)(cols * w);
    unsigned char *pixels = malloc((size_t)n * tile);
    unsigned char *atlas = calloc((size_t)(rows * h) * atlas_w * (size_t)c, 1);
    if (!pixels || !atlas) {
        free(pixels);
        free(atlas);
        return gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    }
    gb__image_to_u8(gb_tensor_dtype(t), gb_data(t), n, h, w, (int)c, pixels);
    for (int64_t i = 0; i < n; i++) {
        int64_t x0 = (i % cols) * w, y0 = (i / cols) * h;
        for (int64_t y = 0; y < h; y++)
            memcpy(atlas + ((size_t)(y0 + y) * atlas_w + (size_t)x0) * (size_t)c,
                   pixels + (size_t)i * tile + (size_t)(y * w * c), (size_t)(w * c));
    }
    free(pixels);
    bool ok = gb__png_encode(atlas, (int)(cols * w), (int)(rows * h), (int)c, png, png_size);
    free(atlas);
    if (!ok) return gb__writer_fail(GB_ERR_MEMORY, what, tag, "encoding the sprite PNG failed");
    if ((int64_t)*png_size > GB_SUMMARY_SPRITE_MAX_BYTES) {
        snprintf(msg, sizeof msg, "the sprite PNG is %zu bytes, more than the %lld allowed",
                 *png_size, (long long)GB_SUMMARY_SPRITE_MAX_BYTES);
        free(*png);
        *png = NULL;
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    *tile_w = (int)w;
    *tile_h = (int)h;
    return GB_OK;
}

/* ---- the call ------------------------------------------------------------------------------- */

static gb_status push(gb_summary_writer *w, const char *tag, const gb_tensor *values,
                      const char *meta, size_t meta_len, const unsigned char *png,
                      size_t png_len, int tile_w, int tile_h, int64_t step) {
    int64_t n = gb_shape(values)[0], d = gb_shape(values)[1];
    size_t vec_bytes = (size_t)(n * d) * 4;
    size_t bytes = sizeof(gb__embedding_payload) + vec_bytes + meta_len + png_len;
    gb__embedding_payload *p = malloc(bytes);
    if (!p) return gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    *p = (gb__embedding_payload){.n = n, .dim = d, .sprite_w = tile_w, .sprite_h = tile_h,
                                 .metadata_len = meta_len, .sprite_len = png_len};
    float *v = (float *)p->bytes;
    gb_dtype dt = gb_tensor_dtype(values);
    for (int64_t i = 0; i < n * d; i++) v[i] = (float)gb__element(dt, gb_data(values), i);
    char *m = (char *)p->bytes + vec_bytes;
    if (meta_len) memcpy(m, meta, meta_len);
    p->metadata = m;
    if (png) {
        memcpy(m + meta_len, png, png_len);
        p->sprite = (unsigned char *)m + meta_len;
    }
    gb__event ev = {.type = GB__EV_EMBEDDING, .step = step, .wall_time = gb__wall_now(),
                    .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_EMBEDDING, ev, bytes);
}

gb_status gb_summary_embedding(gb_summary_writer *w, const char *tag, const gb_tensor *values,
                               const gb_tensor *metadata, const char *const *column_names,
                               const gb_tensor *sprite, int64_t step) {
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, values);
    if (st == GB_OK) st = check_values(tag, values);
    if (st == GB_OK && metadata) st = gb__writer_check_tensor(what, tag, metadata);
    if (st == GB_OK && metadata) st = check_metadata(tag, metadata, gb_shape(values)[0]);
    if (st == GB_OK && sprite) st = gb__writer_check_tensor(what, tag, sprite);
    if (st != GB_OK) return st;
    char *meta = NULL;
    size_t meta_len = 0;
    unsigned char *png = NULL;
    size_t png_len = 0;
    int tile_w = 0, tile_h = 0;
    st = metadata_text(tag, metadata, column_names, &meta, &meta_len);
    if (st == GB_OK && sprite)
        st = sprite_png(tag, sprite, gb_shape(values)[0], &png, &png_len, &tile_w, &tile_h);
    if (st == GB_OK) st = push(w, tag, values, meta, meta_len, png, png_len, tile_w, tile_h, step);
    free(meta);
    free(png);
    return st;
}
