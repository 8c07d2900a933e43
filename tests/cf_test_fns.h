/* cf_test_fns.h — branch, cond and body functions of gb_cond and
 * gb_while_loop that several tests trace: cube / sine (the two branches
 * of a cond) and x^n by a loop (loop variables i, acc, x, n).
 */
#ifndef GB_TEST_CF_FNS_H
#define GB_TEST_CF_FNS_H

#include "glassbox.h"

static inline int cf_cube(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_mul(gb_mul(in[0], in[0]), in[0]);
    return 1;
}

static inline int cf_sine(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_sin(in[0]);
    return 1;
}

/* The cond of x^n: i < n. */
static inline int cf_i_less_n(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_less(v[0], v[3]);
    return 1;
}

/* The body of x^n: i + 1, acc * x. */
static inline int cf_times_x(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)u, (void)n;
    out[0] = gb_add_scalar(v[0], 1);
    out[1] = gb_mul(v[1], v[2]);
    out[2] = v[2];
    out[3] = v[3];
    return 4;
}

/* x^n (n an int64 scalar) by a while loop of at most max_iterations trips
 * (0: no limit); NULL after an error. */
static inline gb_tensor *cf_power(gb_tensor *x, gb_tensor *n, int64_t max_iterations) {
    gb_tensor *v[4] = {gb_scalar(GB_I64, 0), gb_ones_like(x), x, n};
    gb_while_options o = {.max_iterations = max_iterations};
    return gb_while_loop(cf_i_less_n, cf_times_x, v, 4, &o, v) == 4 ? v[1] : NULL;
}

#endif
