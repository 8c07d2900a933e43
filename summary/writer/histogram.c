/* histogram.c — histogram statistics, buckets and distributions.
 *
 * Buckets follow TensorFlow 2's tf.summary.histogram: `k` equal-width
 * buckets from min to max (the last edge exactly max, values at max in the
 * last bucket), one bucket [v-0.5, v+0.5] when every value is v. Unlike
 * TensorFlow, NaN and Inf do not poison the statistics: they are counted
 * apart and everything else is over the finite values. Distributions are
 * TensorBoard's compressed histograms (its compressor.py, same arithmetic).
 */
#include <math.h>
#include <stdlib.h>

#include "gb_base.h"
#include "store_internal.h"

const double gb_distribution_percentiles[GB_DISTRIBUTION_POINTS] = {
    0, 6.68, 15.87, 30.85, 50, 69.15, 84.13, 93.32, 100};

/* Element i of a buffer of dtype dt, as a double. */
static double element(int dt, const void *data, int64_t i) {
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
        double x = element(dt, data, i);
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
        double x = element(dt, data, i);
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

/* ---- distributions (TensorBoard's compress_histogram) ------------------------ */

static double lerp(double x, double x0, double x1, double y0, double y1) {
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0);
}

void gb_distribution_from_buckets(const double *edges, const double *counts, size_t n,
                                  double out[GB_DISTRIBUTION_POINTS]) {
    if (n == 0) {
        for (int p = 0; p < GB_DISTRIBUTION_POINTS; p++) out[p] = NAN;
        return;
    }
    double total = 0;
    for (size_t i = 0; i < n; i++) total += counts[i];
    double minmin = edges[0], maxmax = edges[n], cum = 0;
    double stack[64];
    double *weights = n <= 64 ? stack : malloc(n * sizeof *weights);
    if (!weights) {   /* out of memory: say "unknown" rather than guess */
        for (int p = 0; p < GB_DISTRIBUTION_POINTS; p++) out[p] = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++) weights[i] = cum += counts[i] * 10000.0 / (total ? total : 1);
    int p = 0;
    while (p < GB_DISTRIBUTION_POINTS) {
        double bp = gb_distribution_percentiles[p] * 100;
        size_t i = 0;
        while (i < n && weights[i] <= bp) i++;   /* searchsorted(side="right") */
        for (; i < n; i++) {
            double c = weights[i], prev = i ? weights[i - 1] : 0;
            if (c == prev) continue;
            double lhs = (!i || !prev) ? minmin : fmax(edges[i], minmin);
            double rhs = fmin(edges[i + 1], maxmax);
            out[p++] = lerp(bp, prev, c, lhs, rhs);
            break;
        }
        if (i >= n) break;
    }
    for (; p < GB_DISTRIBUTION_POINTS; p++) out[p] = maxmax;
    if (weights != stack) free(weights);
}
