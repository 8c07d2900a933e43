/* store/rollup.c — aggregates of scalar points (rollup rows and query buckets).
 *
 * An aggregate keeps what a chart needs to draw a bucket without hiding
 * anything: first and last value, min, max and sum of the finite values,
 * and counts of NaN, +Inf and -Inf. Aggregates merge associatively, which
 * lets writers add deltas to stored rollups (flush after flush, process
 * after process) and lets the reader combine rollup rows of any level.
 */
#include <math.h>

#include "store/internal.h"

void gb__rollup_point(gb__rollup *r, const gb__point *p) {
    double v = p->value;
    *r = (gb__rollup){.first_step = p->step, .last_step = p->step, .first_value = v,
                      .last_value = v, .min = v, .max = v, .sum = 0, .count = 1,
                      .last_wall_time = p->wall_time};
    if (isfinite(v)) {
        r->sum = v;
        return;
    }
    r->min = r->max = NAN;
    if (isnan(v))
        r->nan_count = 1;
    else if (v > 0)
        r->posinf_count = 1;
    else
        r->neginf_count = 1;
}

void gb__rollup_merge(gb__rollup *r, const gb__rollup *o) {
    if (o->count == 0) return;
    if (r->count == 0) {
        *r = *o;
        return;
    }
    if (gb__rollup_finite(o) > 0) {
        if (gb__rollup_finite(r) == 0) {
            r->min = o->min;
            r->max = o->max;
        } else {
            r->min = fmin(r->min, o->min);
            r->max = fmax(r->max, o->max);
        }
    }
    r->sum += o->sum;
    if (o->first_step < r->first_step) {
        r->first_step = o->first_step;
        r->first_value = o->first_value;
    }
    if (o->last_step >= r->last_step) {
        r->last_step = o->last_step;
        r->last_value = o->last_value;
    }
    r->count += o->count;
    r->nan_count += o->nan_count;
    r->posinf_count += o->posinf_count;
    r->neginf_count += o->neginf_count;
    if (o->last_wall_time > r->last_wall_time) r->last_wall_time = o->last_wall_time;
}
