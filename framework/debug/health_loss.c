/* debug/health_loss.c — loss spikes, judged robustly, and their recovery.
 *
 * A loss is a spike when it lies more than k robust standard deviations
 * above the median of the losses before it: sigma = 1.4826 * MAD (the
 * median absolute deviation, scaled to equal the standard deviation of
 * normal noise). Median and MAD ignore the outliers they are meant to
 * find, where a mean and a standard deviation would be dragged up by the
 * very spike. A flat window (MAD 0) gets a floor of 1e-6 of the median,
 * so round-off is no spike. The window needs half its size before it
 * judges, so the first steps' fall is never called a spike.
 *
 * A spike is one onset: the next losses above the band do not repeat it.
 * The first loss back under the band (the median + k sigma of the spike's
 * window) reports loss_recovered (INFO) with the steps it took.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "debug/health_internal.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sorted_median(const double *s, int n) {
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void gb__median_mad(const double *x, int n, double *tmp, double *median, double *mad) {
    memcpy(tmp, x, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    double m = sorted_median(tmp, n);
    for (int i = 0; i < n; i++) tmp[i] = fabs(x[i] - m);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    *median = m;
    *mad = sorted_median(tmp, n);
}

void gb__loss_watch_free(gb__loss_watch *w) {
    free(w->ring);
    *w = (gb__loss_watch){0};
}

static void push(gb__loss_watch *w, double loss) {
    w->ring[w->head] = loss;
    w->head = (w->head + 1) % w->cap;
    if (w->n < w->cap) w->n++;
}

gb__loss_verdict gb__loss_watch_push(gb__loss_watch *w, double loss, double k, int window,
                                     gb__loss_figures *f) {
    *f = (gb__loss_figures){0};
    if (!isfinite(loss)) return GB__LOSS_OK;   /* a NaN is the numerics check's to report */
    if (w->cap != window) {                     /* first loss, or a new window size */
        gb__loss_watch_free(w);
        w->ring = malloc(2 * (size_t)window * sizeof *w->ring);
        if (!w->ring) return GB__LOSS_OK;
        w->cap = window;
    }
    gb__loss_verdict v = GB__LOSS_OK;
    if (w->n >= (w->cap + 1) / 2) {
        double median, mad;
        gb__median_mad(w->ring, w->n, w->ring + w->cap, &median, &mad);
        double sigma = 1.4826 * mad, floor = 1e-6 * fabs(median);
        if (sigma < floor) sigma = floor;
        *f = (gb__loss_figures){median, mad, sigma, median + k * sigma, w->n};
        if (!w->in_spike && loss > f->threshold) {
            w->in_spike = true;
            w->band = f->threshold;
            w->spike_loss = loss;
            v = GB__LOSS_SPIKE;
        } else if (w->in_spike && loss <= w->band) {
            w->in_spike = false;
            v = GB__LOSS_RECOVERED;
        }
    }
    push(w, loss);
    return v;
}

/* ---- the alerts ----------------------------------------------------------------------- */

static const char spike_advice[] =
    "A loss that jumps far above its recent level usually means a step too large for the "
    "curvature it met: lower the learning rate (or warm it up), clip gradients by global norm, "
    "and look for bad batches (mislabelled or extreme samples).";
static const char recovered_advice[] =
    "The loss came back after a spike. One spike is often harmless; spikes that recur mean the "
    "learning rate is near its edge of stability: lower it or clip gradients.";

void gb__health_loss(gb__health *h, int64_t step, double loss) {
    if (!h) return;
    const gb_health_options *o = gb__health_options();
    gb__loss_watch *w = gb__health_loss_watch(h);
    int64_t spike_step = w->spike_step;
    double spike_loss = w->spike_loss, band = w->band;
    gb__loss_figures f;
    gb__loss_verdict v = gb__loss_watch_push(w, loss, o->spike_k, o->loss_window, &f);
    char figures[512];
    if (v == GB__LOSS_SPIKE) {
        w->spike_step = step;
        snprintf(figures, sizeof figures,
                 "{\"loss\":%.9g,\"median\":%.9g,\"mad\":%.9g,\"sigma\":%.9g,\"k\":%.9g,"
                 "\"threshold\":%.9g,\"window\":%d}",
                 loss, f.median, f.mad, f.sigma, o->spike_k, f.threshold, f.window);
        gb_health_alert a = {.kind = "loss_spike", .severity = GB_HEALTH_WARNING, .step = step,
                             .value = loss, .threshold = f.threshold, .figures = figures,
                             .advice = spike_advice};
        gb__health_emit(&a, "loss spike at step %lld: loss %.4g is %.1f robust standard deviations "
                            "above the median %.4g of the last %d losses (threshold %.4g)",
                        (long long)step, loss, (loss - f.median) / f.sigma, f.median, f.window,
                        f.threshold);
    } else if (v == GB__LOSS_RECOVERED) {
        snprintf(figures, sizeof figures,
                 "{\"loss\":%.9g,\"spike_loss\":%.9g,\"spike_step\":%lld,\"band\":%.9g,"
                 "\"steps\":%lld}",
                 loss, spike_loss, (long long)spike_step, band, (long long)(step - spike_step));
        gb_health_alert a = {.kind = "loss_recovered", .severity = GB_HEALTH_INFO, .step = step,
                             .value = loss, .threshold = band, .figures = figures,
                             .advice = recovered_advice};
        int64_t took = step - spike_step;
        gb__health_emit(&a, "loss recovered at step %lld: %.4g is back under %.4g, %lld step%s "
                            "after the spike to %.4g at step %lld",
                        (long long)step, loss, band, (long long)took, took == 1 ? "" : "s",
                        spike_loss, (long long)spike_step);
    }
}
