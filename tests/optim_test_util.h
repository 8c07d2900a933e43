/* optim_test_util.h — helpers shared by the optimizer tests (test_optim_*.c).
 *
 * Variables made from C arrays of doubles in either float dtype, one
 * optimizer step with a given gradient in its own scope, reading a
 * variable's element, the sticky-error assertion, and a quadratic bowl
 * that every optimizer must roll to the bottom of.
 */
#ifndef GB_TEST_OPTIM_UTIL_H
#define GB_TEST_OPTIM_UTIL_H

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"

/* A tensor of dtype dt (float32 or float64) holding values[n], shape [n]. */
static inline gb_tensor *ot_tensor(gb_dtype dt, int n, const double *values) {
    if (dt == GB_F64) return gb_from_f64(values, 1, (const int64_t[]){n});
    float *f = malloc((size_t)n * sizeof *f);
    for (int i = 0; i < n; i++) f[i] = (float)values[i];
    gb_tensor *t = gb_from_f32(f, 1, (const int64_t[]){n});
    free(f);
    return t;
}

static inline gb_variable *ot_var(const char *name, gb_dtype dt, int n, const double *values) {
    gb_scope_begin();
    gb_variable *v = gb_variable_new(name, ot_tensor(dt, n, values), true);
    gb_scope_end();
    ck_assert_msg(v != NULL, "%s", gb_error_string());
    return v;
}

/* Element i of the variable's current value. */
static inline double ot_get(gb_variable *v, int64_t i) {
    gb_scope_begin();
    double x = gb_get(gb_variable_value(v), i);
    gb_scope_end();
    return x;
}

/* One apply_gradients of gradient g[n] to the single variable v. */
static inline bool ot_step(gb_optimizer *opt, gb_variable *v, int n, const double *g) {
    gb_scope_begin();
    gb_tensor *grad = ot_tensor(gb_variable_dtype(v), n, g);
    bool ok = gb_optimizer_apply_gradients(opt, &grad, 1, &v, 1);
    gb_scope_end();
    return ok;
}

#define OT_ASSERT_OK() ck_assert_msg(gb_ok(), "unexpected error: %s", gb_error_string())

#define OT_ASSERT_NEAR(got, want, tol)                                                        \
    do {                                                                                      \
        double g_ = (got), w_ = (want);                                                       \
        ck_assert_msg(fabs(g_ - w_) <= (tol), "%s = %.17g, expected %.17g", #got, g_, w_);    \
    } while (0)

/* The first error has this code and its message contains `part`. */
#define OT_ASSERT_ERROR(status, part)                                                           \
    do {                                                                                      \
        const gb_error *e_ = gb_last_error();                                                 \
        ck_assert_msg(e_ != NULL, "expected an error containing '%s'", (part));               \
        ck_assert_msg(e_->code == (status), "code %s, expected %s: %s",                       \
                      gb_status_name(e_->code), gb_status_name(status), e_->message);         \
        ck_assert_msg(strstr(e_->message, (part)) != NULL, "'%s' not in: %s", (part),         \
                      e_->message);                                                           \
    } while (0)

/* Minimizes 0.5 * |x|^2 (gradient x) from a fixed start over `steps`
 * steps and returns the final max |x|. Runs in float32 and float64. */
static inline double ot_minimize_bowl(gb_optimizer *opt, gb_dtype dt, int steps) {
    enum { N = 5 };
    const double start[N] = {3.0, -2.0, 1.5, -0.5, 0.25};
    gb_variable *v = ot_var("bowl", dt, N, start);
    for (int s = 0; s < steps; s++) {
        gb_scope_begin();
        gb_tensor *x = gb_variable_value(v);
        double g[N];
        for (int i = 0; i < N; i++) g[i] = gb_get(x, i);
        gb_tensor *grad = ot_tensor(dt, N, g);
        bool ok = gb_optimizer_apply_gradients(opt, &grad, 1, &v, 1);
        gb_scope_end();
        if (!ok) break;
    }
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(ot_get(v, i)));
    gb_variable_free(v);
    return worst;
}

/* Runs a suite, returning the process status. */
static inline int ot_run(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
