/* optim/schedule.c — learning-rate schedules: the rate as a function of the step.
 *
 * The formulas are those of keras.optimizers.schedules (ExponentialDecay,
 * CosineDecay with its optional linear warmup). A schedule is a plain
 * value; constructors validate it and record an error for bad parameters,
 * and optimizers validate it again (it may have been built by hand).
 */
#include <math.h>

#include "optim/internal.h"

/* ---- validation ----------------------------------------------------------------- */

bool gb__optim_check_range(const char *who, const char *what, double v, double lo, double hi,
                           bool hi_inclusive) {
    bool ok = v >= lo && (hi_inclusive ? v <= hi : v < hi); /* false for NaN */
    if (!ok) {
        if (isinf(hi))
            gb__error(GB_ERR_VALUE, NULL, "%s: %s must be >= %g and finite, got %g", who, what,
                      lo, v);
        else
            gb__error(GB_ERR_VALUE, NULL, "%s: %s must be in [%g, %g%s, got %g", who, what, lo,
                      hi, hi_inclusive ? "]" : ")", v);
    }
    return ok;
}

static bool check_steps(const char *who, const char *what, int64_t v, int64_t min) {
    if (v >= min) return true;
    gb__error(GB_ERR_VALUE, NULL, "%s: %s must be >= %lld, got %lld", who, what, (long long)min,
              (long long)v);
    return false;
}

bool gb__lr_schedule_check(const gb_lr_schedule *s, const char *who) {
    if (!s) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the learning-rate schedule is NULL", who);
        return false;
    }
    switch (s->kind) {
    case GB_LR_CONSTANT:
        return gb__optim_check_range(who, "learning_rate", s->initial_learning_rate, 0, INFINITY,
                                     false);
    case GB_LR_EXPONENTIAL_DECAY:
        return gb__optim_check_range(who, "initial_learning_rate", s->initial_learning_rate, 0,
                                     INFINITY, false) &&
               check_steps(who, "decay_steps", s->decay_steps, 1) &&
               gb__optim_check_range(who, "decay_rate", s->decay_rate, 0, INFINITY, false);
    case GB_LR_COSINE_DECAY:
        return gb__optim_check_range(who, "initial_learning_rate", s->initial_learning_rate, 0,
                                     INFINITY, false) &&
               check_steps(who, "decay_steps", s->decay_steps, 1) &&
               gb__optim_check_range(who, "alpha", s->alpha, 0, 1, true) &&
               check_steps(who, "warmup_steps", s->warmup_steps, 0) &&
               (s->warmup_steps == 0 ||
                gb__optim_check_range(who, "warmup_target", s->warmup_target, 0, INFINITY,
                                      false));
    case GB_LR_CUSTOM:
        if (s->fn) return true;
        gb__error(GB_ERR_VALUE, NULL, "%s: a custom learning-rate schedule needs a function",
                  who);
        return false;
    }
    gb__error(GB_ERR_VALUE, NULL, "%s: unknown learning-rate schedule kind %d", who,
              (int)s->kind);
    return false;
}

/* ---- evaluation ------------------------------------------------------------------- */

static double exponential(const gb_lr_schedule *s, int64_t step) {
    double p = (double)step / (double)s->decay_steps;
    if (s->staircase) p = floor(p);
    return s->initial_learning_rate * pow(s->decay_rate, p);
}

/* Cosine from `from` down to alpha * from over decay_steps, then flat. */
static double cosine_part(const gb_lr_schedule *s, double from, int64_t step) {
    double done = (double)(step < s->decay_steps ? step : s->decay_steps) / (double)s->decay_steps;
    double cosine = 0.5 * (1.0 + cos(M_PI * done));
    return from * ((1.0 - s->alpha) * cosine + s->alpha);
}

static double cosine(const gb_lr_schedule *s, int64_t step) {
    if (s->warmup_steps <= 0) return cosine_part(s, s->initial_learning_rate, step);
    if (step < s->warmup_steps) {
        double done = (double)step / (double)s->warmup_steps;
        return s->initial_learning_rate + (s->warmup_target - s->initial_learning_rate) * done;
    }
    return cosine_part(s, s->warmup_target, step - s->warmup_steps);
}

/* The user's function, which must not leave its lines as the call site. */
static double custom(const gb_lr_schedule *s, int64_t step) {
    gb_call_site site = gb__call_site();
    double lr = s->fn(step, s->user);
    gb__call_site_restore(site);
    return lr;
}

double gb__lr_schedule_eval(const gb_lr_schedule *s, int64_t step) {
    switch (s->kind) {
    case GB_LR_CONSTANT: return s->initial_learning_rate;
    case GB_LR_EXPONENTIAL_DECAY: return exponential(s, step);
    case GB_LR_COSINE_DECAY: return cosine(s, step);
    case GB_LR_CUSTOM: return custom(s, step);
    }
    return NAN;
}

double gb_lr_schedule_value(const gb_lr_schedule *s, int64_t step) {
    if (!gb__lr_schedule_check(s, "gb_lr_schedule_value") ||
        !check_steps("gb_lr_schedule_value", "step", step, 0))
        return NAN;
    return gb__lr_schedule_eval(s, step);
}

/* ---- constructors ------------------------------------------------------------------- */

/* Returns s after validating it for `who` (the error stays recorded). */
static gb_lr_schedule checked(gb_lr_schedule s, const char *who) {
    gb__lr_schedule_check(&s, who);
    return s;
}

gb_lr_schedule gb_lr_constant(double learning_rate) {
    return checked((gb_lr_schedule){.kind = GB_LR_CONSTANT, .initial_learning_rate = learning_rate},
                   "gb_lr_constant");
}

gb_lr_schedule gb_lr_exponential_decay(double initial, int64_t decay_steps, double decay_rate,
                                       bool staircase) {
    return checked((gb_lr_schedule){.kind = GB_LR_EXPONENTIAL_DECAY,
                                    .initial_learning_rate = initial,
                                    .decay_steps = decay_steps,
                                    .decay_rate = decay_rate,
                                    .staircase = staircase},
                   "gb_lr_exponential_decay");
}

gb_lr_schedule gb_lr_cosine_decay(double initial, int64_t decay_steps, double alpha) {
    return checked((gb_lr_schedule){.kind = GB_LR_COSINE_DECAY,
                                    .initial_learning_rate = initial,
                                    .decay_steps = decay_steps,
                                    .alpha = alpha},
                   "gb_lr_cosine_decay");
}

gb_lr_schedule gb_lr_cosine_decay_warmup(double initial, int64_t decay_steps, double alpha,
                                         double warmup_target, int64_t warmup_steps) {
    return checked((gb_lr_schedule){.kind = GB_LR_COSINE_DECAY,
                                    .initial_learning_rate = initial,
                                    .decay_steps = decay_steps,
                                    .alpha = alpha,
                                    .warmup_target = warmup_target,
                                    .warmup_steps = warmup_steps},
                   "gb_lr_cosine_decay_warmup");
}

gb_lr_schedule gb_lr_custom(gb_lr_fn fn, void *user) {
    return checked((gb_lr_schedule){.kind = GB_LR_CUSTOM, .fn = fn, .user = user},
                   "gb_lr_custom");
}
