/* writer/histogram.c — histogram statistics and buckets of a tensor's values.
 *
 * Buckets follow TensorFlow 2's tf.summary.histogram: `k` equal-width
 * buckets from min to max (the last edge exactly max, values at max in the
 * last bucket), one bucket [v-0.5, v+0.5] when every value is v. Unlike
 * TensorFlow, NaN and Inf do not poison the statistics: they are counted
 * apart and everything else is over the finite values. This reads tensor
 * data by engine dtype, so it lives with the writer; the distributions
 * the reader derives from stored buckets are store/distribution.c.
 */
#include <math.h>
#include <stdlib.h>

#include "writer/internal.h"

double gb__element(int dt, const void *data, int64_t i) {
    switch ((gb_dtype)dt) {
    case GB_F32: return ((const float *)data)[i];
    case GB_F64: return ((const double *)data)[i];
    case GB_I32: return ((const int32_t *)data)[i];
    case GB_I64: return (double)((const int64_t *)data)[i];
    case GB_U8: return ((const uint8_t *)data)[i];
    case GB_BOOL: return ((const bool *)data)[i];
    default: return NAN;
    }
}

static void statistics(int dt, const void *data, int64_t n, gb__histogram *h) {
    double lo = INFINITY, hi = -INFINITY, count = 0, sum = 0, sq = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = gb__element(dt, data, i);
        if (isfinite(x)) {
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
            count += 1;
            sum += x;
            sq += x * x;
        } else if (isnan(x)) {
            h->nan_count++;
        } else if (x > 0) {
            h->posinf_count++;
        } else {
            h->neginf_count++;
        }
    }
    h->min = count ? lo : NAN;
    h->max = count ? hi : NAN;
    h->count = count;
    h->sum = sum;
    h->sum_squares = sq;
}

static void fill_buckets(int dt, const void *data, int64_t n, gb__histogram *h) {
    int k = h->bucket_count;
    if (k == 1) {   /* every value equal */
        h->edges[0] = h->min - 0.5;
        h->edges[1] = h->min + 0.5;
        h->counts[0] = h->count;
        return;
    }
    double range = h->max - h->min, width = range / k;
    for (int i = 0; i <= k; i++) h->edges[i] = h->min + i * (range / k);
    h->edges[k] = h->max;
    for (int64_t i = 0; i < n; i++) {
        double x = gb__element(dt, data, i);
        if (!isfinite(x)) continue;
        int64_t b = (int64_t)floor((x - h->min) / width);
        h->counts[b < 0 ? 0 : b >= k ? k - 1 : b] += 1;
    }
}

bool gb__histogram_compute(int dt, const void *data, int64_t n, int buckets, gb__histogram *h) {
    *h = (gb__histogram){0};
    statistics(dt, data, n, h);
    h->bucket_count = h->count == 0 ? 0 : h->min == h->max ? 1 : buckets;
    h->edges = calloc((size_t)(2 * h->bucket_count + 1), sizeof(double));
    if (!h->edges) return false;
    h->counts = h->edges + h->bucket_count + 1;
    if (h->bucket_count) fill_buckets(dt, data, n, h);
    return true;
}

void gb__histogram_free(gb__histogram *h) {
    free(h->edges);
    h->edges = h->counts = NULL;
}
