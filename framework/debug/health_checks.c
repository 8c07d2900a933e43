/* debug/health_checks.c — the rules of the training-health checks, and
 * what each alert says.
 *
 * Run once per check over the layers fit measured, in the model's order
 * (input side first). Every finding is keyed by (kind, layer, variable)
 * and reported once per onset: it fires when its condition turns true and
 * stays silent while the condition holds at the next checks; a check
 * where it is false ends it, and a later return is a new onset.
 *
 *   vanishing_gradient  a layer's gradient norm < vanishing_ratio times the
 *                       largest of the layers above it (toward the output;
 *                       its neighbour is the first of them)
 *   exploding_gradient  ... > exploding_ratio times the smallest nonzero one
 *   gradient_jump       the global norm > jump_factor times the last check's
 *   not_learning        a weight's ||w_after - w_before|| / ||w_before||
 *   large_update          below min_update_ratio / above max_update_ratio;
 *                       weights only (rank >= 2, not named "bias"): a bias or a
 *                       BatchNorm scale starts at 0 or 1, where the ratio says nothing
 *   dead_units          a ReLU layer's units zero on the whole check batch,
 *                       as a fraction, above max_dead_fraction
 *   saturated_units     a sigmoid's outputs within saturation_eps of 0 or 1,
 *                       a tanh's of -1 or 1, above max_saturated_fraction
 *   weight_growth       a weight's norm rose growth_checks checks in a row
 *                       and by more than growth_factor over them
 *   bias_drift          a bias's RMS moved more than bias_drift from its
 *                       first check's
 *   variance_collapse   a BatchNorm moving variance below min_variance
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "debug/health_internal.h"

static const char vanishing_advice[] =
    "The gradient fades on its way to the input, so the first layers barely learn. Usual causes: "
    "saturating activations (sigmoid, tanh) in a deep stack, or weights initialized too small. "
    "Try ReLU-family activations with He initialization, batch or layer normalization, or "
    "residual connections.";
static const char exploding_advice[] =
    "The gradient grows on its way to the input, so the first layers take huge steps. Usual "
    "causes: weights initialized too large, or a learning rate too high. Clip gradients by "
    "global norm, lower the learning rate, check the initialization, add normalization.";
static const char jump_advice[] =
    "The whole gradient grew more than the jump factor since the last check: training may be "
    "leaving a stable region. Lower the learning rate or clip gradients by global norm, and look "
    "for an outlier batch.";
static const char not_learning_advice[] =
    "These weights barely move (healthy update-to-weight ratios are near 1e-3): the learning "
    "rate is likely far too small, or the gradient does not reach them (a frozen layer, dead "
    "units, a vanishing gradient). Raise the learning rate; check the layer is trainable.";
static const char large_update_advice[] =
    "Each step changes these weights by more than a tenth of their size (healthy "
    "update-to-weight ratios are near 1e-3): the learning rate is likely too large. Lower it "
    "(by 10x to start), add warm-up, or clip gradients.";
static const char dead_advice[] =
    "These ReLU units output zero for every sample, so they get no gradient and cannot recover. "
    "Usual causes: a large negative bias, a learning rate too high, a poor initialization. Use "
    "LeakyReLU or ELU, He initialization and zero biases, or a lower learning rate.";
static const char saturated_advice[] =
    "Most outputs sit on the flat ends of the sigmoid or tanh, where the gradient is nearly "
    "zero. Usual causes: inputs not normalized, weights initialized too large. Normalize the "
    "inputs, use Glorot initialization or batch normalization, or ReLU-family activations.";
static const char growth_advice[] =
    "These weights' norm keeps growing from check to check; without a bound it ends in "
    "overflow. Add weight decay or L2 regularization, lower the learning rate, or normalize.";
static const char drift_advice[] =
    "This bias moved far from where it started: the layer may be compensating for inputs that "
    "are not centred, or the learning rate is too high. Normalize the inputs or lower the "
    "learning rate.";
static const char collapse_advice[] =
    "A BatchNorm moving variance fell to almost 0: its channel is constant, and inference divides "
    "by a near-zero variance. Look for dead inputs to the layer (dead ReLUs upstream), raise "
    "epsilon, or lower the learning rate.";

static double layer_grad_norm(const gb__health_layer *l, bool *has) {
    double s = 0;
    *has = false;
    for (int i = 0; i < l->nvars; i++)
        if (l->vars[i].has_grad) *has = true, s += l->vars[i].grad_sumsq;
    return sqrt(s);
}

/* Vanishing and exploding: each layer against the layers above it. */
static void gradient_flow(gb__health *h, int64_t step, const gb__health_layer *layers, int n,
                          const bool *dead, bool *vanishing) {
    const gb_health_options *o = gb__health_options();
    for (int i = 0; i < n; i++) {
        bool has;
        double g = layer_grad_norm(&layers[i], &has);
        vanishing[i] = false;
        if (!has) continue;
        int hi = -1, lo = -1;
        double gmax = 0, gmin = 0;
        for (int j = i + 1; j < n; j++) {
            bool hj;
            double gj = layer_grad_norm(&layers[j], &hj);
            if (!hj || !(gj > 0)) continue;
            if (hi < 0 || gj > gmax) hi = j, gmax = gj;
            if (lo < 0 || gj < gmin) lo = j, gmin = gj;
        }
        /* Dead units on the way (this layer or one up to the reference)
         * stop the gradient: that finding is the cause, reported already. */
        bool blocked = false;
        for (int j = i; hi >= 0 && j <= hi; j++) blocked |= dead[j];
        char figures[512];
        double r = hi >= 0 ? g / gmax : 0;
        vanishing[i] = hi >= 0 && r < o->vanishing_ratio && !blocked;
        snprintf(figures, sizeof figures, "{\"grad_norm\":%.9g,\"above_grad_norm\":%.9g,\"ratio\":%.9g}",
                 g, gmax, r);
        gb_health_alert a = {.kind = "vanishing_gradient", .severity = GB_HEALTH_WARNING,
                             .layer = layers[i].name, .step = step, .value = r,
                             .threshold = o->vanishing_ratio, .figures = figures,
                             .advice = vanishing_advice};
        gb__health_finding(h, vanishing[i], &a,
                           "vanishing gradient in layer '%s' at step %lld: gradient norm %.3g is "
                           "%.3g times that of layer '%s' above it (below %g)",
                           layers[i].name, (long long)step, g, r,
                           hi >= 0 ? layers[hi].name : "", o->vanishing_ratio);
        r = lo >= 0 ? g / gmin : 0;
        snprintf(figures, sizeof figures, "{\"grad_norm\":%.9g,\"above_grad_norm\":%.9g,\"ratio\":%.9g}",
                 g, gmin, r);
        a = (gb_health_alert){.kind = "exploding_gradient", .severity = GB_HEALTH_CRITICAL,
                              .layer = layers[i].name, .step = step, .value = r,
                              .threshold = o->exploding_ratio, .figures = figures,
                              .advice = exploding_advice};
        gb__health_finding(h, lo >= 0 && r > o->exploding_ratio, &a,
                           "exploding gradient in layer '%s' at step %lld: gradient norm %.3g is "
                           "%.3g times that of layer '%s' above it (above %g)",
                           layers[i].name, (long long)step, g, r,
                           lo >= 0 ? layers[lo].name : "", o->exploding_ratio);
    }
}

/* The global norm against the last check's. */
static void gradient_jump(gb__health *h, int64_t step, const gb__health_layer *layers, int n) {
    const gb_health_options *o = gb__health_options();
    double s = 0;
    bool any = false;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < layers[i].nvars; k++)
            if (layers[i].vars[k].has_grad) any = true, s += layers[i].vars[k].grad_sumsq;
    if (!any) return;
    double now = sqrt(s), prev = gb__health_swap_global(h, now);
    double r = prev > 0 ? now / prev : 0;
    char figures[256];
    snprintf(figures, sizeof figures, "{\"global_norm\":%.9g,\"previous_global_norm\":%.9g,\"factor\":%.9g}",
             now, prev > 0 ? prev : 0, r);
    gb_health_alert a = {.kind = "gradient_jump", .severity = GB_HEALTH_WARNING, .step = step,
                         .value = r, .threshold = o->jump_factor, .figures = figures,
                         .advice = jump_advice};
    gb__health_finding(h, prev > 0 && r > o->jump_factor, &a,
                       "gradient jump at step %lld: the global gradient norm grew from %.3g to "
                       "%.3g, %.3g times (above %g)",
                       (long long)step, prev, now, r, o->jump_factor);
}

/* not_learning and large_update of one weight. */
static void update_ratio(gb__health *h, int64_t step, const char *layer, const gb__health_var *v,
                         bool starved) {
    const gb_health_options *o = gb__health_options();
    if (v->role != GB__HEALTH_WEIGHT || !v->has_update || !(v->before_sumsq > 0)) return;
    double r = sqrt(v->update_sumsq / v->before_sumsq);
    char figures[256];
    snprintf(figures, sizeof figures, "{\"update_norm\":%.9g,\"weight_norm\":%.9g,\"ratio\":%.9g}",
             sqrt(v->update_sumsq), sqrt(v->before_sumsq), r);
    gb_health_alert a = {.kind = "not_learning", .severity = GB_HEALTH_WARNING, .layer = layer,
                         .variable = v->name, .step = step, .value = r,
                         .threshold = o->min_update_ratio, .figures = figures,
                         .advice = not_learning_advice};
    gb__health_finding(h, r < o->min_update_ratio && !starved, &a,
                       "not learning: variable '%s' of layer '%s' at step %lld: update-to-weight "
                       "ratio %.3g (below %g)",
                       v->name, layer, (long long)step, r, o->min_update_ratio);
    a.kind = "large_update";
    a.threshold = o->max_update_ratio;
    a.advice = large_update_advice;
    gb__health_finding(h, r > o->max_update_ratio, &a,
                       "large update: variable '%s' of layer '%s' at step %lld: update-to-weight "
                       "ratio %.3g (above %g)",
                       v->name, layer, (long long)step, r, o->max_update_ratio);
}

/* weight_growth: a run of rises, measured from the norm it started at. */
static void weight_growth(gb__health *h, int64_t step, const char *layer, const gb__health_var *v) {
    const gb_health_options *o = gb__health_options();
    if (v->role != GB__HEALTH_WEIGHT) return;
    gb__health_history *hist = gb__health_history_of(h, v->name);
    if (!hist) return;
    double norm = sqrt(v->weight_sumsq);
    if (!hist->seen) {
        *hist = (gb__health_history){.first_rms = v->size ? norm / sqrt((double)v->size) : 0,
                                     .streak_start = norm, .last_norm = norm, .seen = true};
        return;
    }
    if (norm > hist->last_norm) {
        if (!hist->rises) hist->streak_start = hist->last_norm;
        hist->rises++;
    } else {
        hist->rises = 0;
    }
    hist->last_norm = norm;
    double factor = hist->streak_start > 0 ? norm / hist->streak_start : 0;
    char figures[256];
    snprintf(figures, sizeof figures, "{\"weight_norm\":%.9g,\"from\":%.9g,\"checks\":%d,\"factor\":%.9g}",
             norm, hist->streak_start, hist->rises, factor);
    gb_health_alert a = {.kind = "weight_growth", .severity = GB_HEALTH_WARNING, .layer = layer,
                         .variable = v->name, .step = step, .value = factor,
                         .threshold = o->growth_factor, .figures = figures, .advice = growth_advice};
    gb__health_finding(h, hist->rises >= o->growth_checks && factor > o->growth_factor, &a,
                       "weight growth: variable '%s' of layer '%s' at step %lld: its norm rose %d "
                       "checks in a row, from %.3g to %.3g (more than %gx)",
                       v->name, layer, (long long)step, hist->rises, hist->streak_start, norm,
                       o->growth_factor);
}

/* bias_drift: the RMS now against the first check's. */
static void bias_drift(gb__health *h, int64_t step, const char *layer, const gb__health_var *v) {
    const gb_health_options *o = gb__health_options();
    if (v->role != GB__HEALTH_BIAS || v->size <= 0) return;
    gb__health_history *hist = gb__health_history_of(h, v->name);
    if (!hist) return;
    double rms = sqrt(v->weight_sumsq / (double)v->size);
    if (!hist->seen) {
        *hist = (gb__health_history){.first_rms = rms, .last_norm = rms, .seen = true};
        return;
    }
    double moved = fabs(rms - hist->first_rms);
    char figures[256];
    snprintf(figures, sizeof figures, "{\"rms\":%.9g,\"first_rms\":%.9g,\"moved\":%.9g}", rms,
             hist->first_rms, moved);
    gb_health_alert a = {.kind = "bias_drift", .severity = GB_HEALTH_WARNING, .layer = layer,
                         .variable = v->name, .step = step, .value = moved,
                         .threshold = o->bias_drift, .figures = figures, .advice = drift_advice};
    gb__health_finding(h, moved > o->bias_drift, &a,
                       "bias drift: variable '%s' of layer '%s' at step %lld: its RMS moved from "
                       "%.3g to %.3g (by more than %g)",
                       v->name, layer, (long long)step, hist->first_rms, rms, o->bias_drift);
}

static void variance_collapse(gb__health *h, int64_t step, const char *layer,
                              const gb__health_var *v) {
    const gb_health_options *o = gb__health_options();
    if (v->role != GB__HEALTH_MOVING_VARIANCE) return;
    char figures[128];
    snprintf(figures, sizeof figures, "{\"min_variance\":%.9g}", v->min_value);
    gb_health_alert a = {.kind = "variance_collapse", .severity = GB_HEALTH_CRITICAL,
                         .layer = layer, .variable = v->name, .step = step, .value = v->min_value,
                         .threshold = o->min_variance, .figures = figures,
                         .advice = collapse_advice};
    gb__health_finding(h, v->min_value < o->min_variance, &a,
                       "variance collapse: variable '%s' of layer '%s' at step %lld: smallest "
                       "moving variance %.3g (below %g)",
                       v->name, layer, (long long)step, v->min_value, o->min_variance);
}

/* dead_units and saturated_units of a layer's output. */
static void activations(gb__health *h, int64_t step, const gb__health_layer *l) {
    const gb_health_options *o = gb__health_options();
    if (!l->has_output) return;
    char figures[256];
    if (l->act == GB__HEALTH_ACT_RELU && l->units > 0) {
        double f = (double)l->dead_units / (double)l->units;
        snprintf(figures, sizeof figures, "{\"dead_units\":%lld,\"units\":%lld,\"fraction\":%.9g}",
                 (long long)l->dead_units, (long long)l->units, f);
        gb_health_alert a = {.kind = "dead_units", .severity = GB_HEALTH_WARNING, .layer = l->name,
                             .step = step, .value = f, .threshold = o->max_dead_fraction,
                             .figures = figures, .advice = dead_advice};
        gb__health_finding(h, f > o->max_dead_fraction, &a,
                           "dead units in layer '%s' at step %lld: %lld of %lld units (%.1f%%) were "
                           "zero for the whole batch (above %g%%)",
                           l->name, (long long)step, (long long)l->dead_units, (long long)l->units,
                           100 * f, 100 * o->max_dead_fraction);
    }
    if ((l->act == GB__HEALTH_ACT_SIGMOID || l->act == GB__HEALTH_ACT_TANH) && l->values > 0) {
        double f = (double)l->saturated_values / (double)l->values;
        snprintf(figures, sizeof figures,
                 "{\"saturated\":%lld,\"outputs\":%lld,\"fraction\":%.9g,\"eps\":%.9g}",
                 (long long)l->saturated_values, (long long)l->values, f, o->saturation_eps);
        gb_health_alert a = {.kind = "saturated_units", .severity = GB_HEALTH_WARNING,
                             .layer = l->name, .step = step, .value = f,
                             .threshold = o->max_saturated_fraction, .figures = figures,
                             .advice = saturated_advice};
        gb__health_finding(h, f > o->max_saturated_fraction, &a,
                           "saturated units in layer '%s' at step %lld: %.1f%% of its outputs are "
                           "within %g of an asymptote (above %g%%)",
                           l->name, (long long)step, 100 * f, o->saturation_eps,
                           100 * o->max_saturated_fraction);
    }
}

/* Whether a ReLU layer's dead share is past the bound (what dead_units reports). */
static bool is_dead(const gb__health_layer *l) {
    return l->has_output && l->act == GB__HEALTH_ACT_RELU && l->units > 0 &&
           (double)l->dead_units / (double)l->units > gb__health_options()->max_dead_fraction;
}

/* Causes before consequences: a vanishing gradient is not reported where
 * dead units block it, and a weight that does not learn is not reported
 * where its gradient vanishes or while a layer has dead units (below it
 * they starve its inputs, above it they stop its gradient) — the dead
 * units or the vanishing gradient are named already, and the rest
 * follows from them. */
void gb__health_rules(gb__health *h, int64_t step, const gb__health_layer *layers, int n) {
    bool small_dead[64], small_vanishing[64];
    bool *dead = n <= 64 ? small_dead : calloc((size_t)n, sizeof *dead);
    bool *vanishing = n <= 64 ? small_vanishing : calloc((size_t)n, sizeof *vanishing);
    if (!dead || !vanishing) goto done;   /* out of memory: no check this time */
    for (int i = 0; i < n; i++) dead[i] = is_dead(&layers[i]);
    gradient_flow(h, step, layers, n, dead, vanishing);
    gradient_jump(h, step, layers, n);
    bool any_dead = false;
    for (int i = 0; i < n; i++) any_dead |= dead[i];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < layers[i].nvars; k++) {
            const gb__health_var *v = &layers[i].vars[k];
            update_ratio(h, step, layers[i].name, v, vanishing[i] || any_dead);
            weight_growth(h, step, layers[i].name, v);
            bias_drift(h, step, layers[i].name, v);
            variance_collapse(h, step, layers[i].name, v);
        }
        activations(h, step, &layers[i]);
    }
done:
    if (dead != small_dead) free(dead);
    if (vanishing != small_vanishing) free(vanishing);
}
