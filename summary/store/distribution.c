/* store/distribution.c — distributions from histogram buckets.
 *
 * A distribution is TensorBoard's compressed histogram: the values at
 * fixed percentiles, found by linear interpolation inside the bucket that
 * holds each one (its compressor.py, same arithmetic). The reader derives
 * them from the buckets the writer stored (writer/histogram.c).
 */
#include <math.h>
#include <stdlib.h>

#include "store/internal.h"

const double gb_distribution_percentiles[GB_DISTRIBUTION_POINTS] = {
    0, 6.68, 15.87, 30.85, 50, 69.15, 84.13, 93.32, 100};

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
