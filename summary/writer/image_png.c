/* writer/image_png.c — image tensors to 8-bit pixels to PNG files.
 *
 * uint8 images are stored as they are. Float images follow tf.summary.image
 * per image: when no finite value is negative, round(x * 255) clipped to
 * [0, 255] (so [0, 1] spans the full range); with negative values, 0.0 is
 * shifted to 127 and the values scaled so that the smallest becomes 0 or
 * the largest 255, whichever comes first. A pixel with a non-finite
 * channel is drawn in a "bad" colour (red, or black in grayscale) so it
 * shows. PNG encoding uses libpng's simplified API.
 */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

static double element(int dt, const void *data, int64_t i) {
    return dt == GB_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
}

static unsigned char clip_round(double v) {
    v = floor(v + 0.5);
    return (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One float image of n pixels of c channels starting at element `first`. */
static void float_image(int dt, const void *data, int64_t first, int64_t n, int c,
                        unsigned char *out) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n * c; i++) {
        double x = element(dt, data, first + i);
        if (isfinite(x)) {
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
    }
    double scale = 255, offset = 0;
    if (lo < 0) {
        offset = 127;
        scale = 127 / -lo;
        if (hi > 0 && 128 / hi < scale) scale = 128 / hi;
    }
    static const unsigned char bad[4] = {255, 0, 0, 255};
    for (int64_t p = 0; p < n; p++) {
        bool finite = true;
        for (int k = 0; k < c; k++) {
            double x = element(dt, data, first + p * c + k);
            finite = finite && isfinite(x);
            out[p * c + k] = clip_round(offset + x * scale);
        }
        if (!finite) memcpy(out + p * c, c == 1 ? (const unsigned char[]){0} : bad, (size_t)c);
    }
}

void gb__image_to_u8(int dt, const void *data, int64_t n_images, int64_t h, int64_t w, int c,
                     unsigned char *out) {
    int64_t per_image = h * w * c;
    if (dt == GB_U8) {
        memcpy(out, data, (size_t)(n_images * per_image));
        return;
    }
    for (int64_t i = 0; i < n_images; i++)
        float_image(dt, data, i * per_image, h * w, c, out + i * per_image);
}

bool gb__png_encode(const unsigned char *pixels, int w, int h, int c, unsigned char **png,
                    size_t *size) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    img.format = c == 1 ? PNG_FORMAT_GRAY : c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    png_alloc_size_t n = 0;
    if (!png_image_write_get_memory_size(img, n, 0, pixels, 0, NULL)) return false;
    unsigned char *buf = malloc(n);
    if (!buf) return false;
    if (!png_image_write_to_memory(&img, buf, &n, 0, pixels, 0, NULL)) {
        free(buf);
        png_image_free(&img);
        return false;
    }
    *png = buf;
    *size = n;
    return true;
}
