/* test_optim_measure.c — what an update measures for the health checks
 * (optim/measure.h): the sums of squares of the gradient and of the
 * variable before, after and across the update, exact on a small SGD
 * step in both float dtypes, equal to the same sums taken from reads
 * before and after over many blocks, whether the update runs in place or
 * into a fresh buffer and with numerics checks on or off; nothing
 * measured outside an armed measure or for a variable the step did not
 * update; the same bits at every ISA level this CPU runs.
 */
#include <stdio.h>

#include "core/isa.h"
#include "optim/measure.h"
#include "optim_test_util.h"

#define REL_EQ(got, want)                                                                         \
    ck_assert_msg(fabs((got) - (want)) <= 1e-12 * fmax(1, fabs(want)), "%s = %.17g, expected %.17g", \
                  #got, (double)(got), (double)(want))

/* One SGD step at lr 0.5 of w = [1, 2, 3] with g = [0.5, -1, 2]: w' =
 * [0.75, 2.5, 2], update [-0.25, 0.5, -1] (every value exact in float32):
 * grad 0.25 + 1 + 4 = 5.25, before 1 + 4 + 9 = 14, after 0.5625 + 6.25 +
 * 4 = 10.8125, update 0.0625 + 0.25 + 1 = 1.3125. */
static void small_sgd_step(gb_dtype dt) {
    gb_optimizer *opt = gb_sgd(0.5);
    gb_variable *v = ot_var("w", dt, 3, (const double[]){1, 2, 3});
    gb__optimizer_measure_begin(opt);
    ck_assert(ot_step(opt, v, 3, (const double[]){0.5, -1, 2}));
    gb__optimizer_measure_end(opt);
    gb__update_sums s;
    ck_assert(gb__optimizer_measured(opt, v, &s));
    ck_assert(s.grad == 5.25 && s.before == 14 && s.after == 10.8125 && s.update == 1.3125);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}

START_TEST(test_small_sgd_step_exact_in_float32) { small_sgd_step(GB_F32); }
END_TEST

START_TEST(test_small_sgd_step_exact_in_float64) { small_sgd_step(GB_F64); }
END_TEST

/* ---- many blocks, against sums taken from reads ------------------------------------------ */

enum { N = 5000 }; /* more than two of the kernel's blocks, and a tail */

static double value_at(int i, int salt) { return sin(0.37 * i + salt) * (1 + (i % 7)); }

/* Sums of squares of a[i], b[i] and a[i] - b[i] over N doubles. */
static void sums_of(const double *a, const double *b, double *aa, double *bb, double *dd) {
    *aa = *bb = *dd = 0;
    for (int i = 0; i < N; i++) *aa += a[i] * a[i], *bb += b[i] * b[i], *dd += (a[i] - b[i]) * (a[i] - b[i]);
}

static void read_into(gb_variable *v, double *out) {
    for (int i = 0; i < N; i++) out[i] = ot_get(v, i);
}

/* Two Adam steps, the second measured; held: a read of the value is
 * alive during it (the update then writes a fresh buffer). */
static void adam_over_blocks(gb_dtype dt, bool held, bool numerics) {
    static double w[N], g[N], before[N], after[N];
    for (int i = 0; i < N; i++) w[i] = value_at(i, 1), g[i] = value_at(i, 2);
    gb_optimizer *opt = gb_adam(0.01);
    gb_variable *v = ot_var("w", dt, N, w);
    ck_assert(ot_step(opt, v, N, g));
    read_into(v, before);
    for (int i = 0; i < N; i++) g[i] = value_at(i, 3);
    if (numerics) gb_enable_check_numerics();
    gb_scope_begin();
    gb_tensor *alive = held ? gb_variable_value(v) : NULL;
    gb__optimizer_measure_begin(opt);
    ck_assert(ot_step(opt, v, N, g));
    gb__optimizer_measure_end(opt);
    if (held) ck_assert_ptr_ne(gb_data(alive), gb_data(gb_variable_value(v)));
    gb_scope_end();
    if (numerics) gb_disable_check_numerics();
    read_into(v, after);
    gb__update_sums s;
    ck_assert(gb__optimizer_measured(opt, v, &s));
    double gg = 0, aa, bb, dd;
    gb_scope_begin();
    gb_tensor *gt = ot_tensor(dt, N, g); /* the gradient as the kernel saw it (rounded to dt) */
    for (int i = 0; i < N; i++) gg += gb_get(gt, i) * gb_get(gt, i);
    gb_scope_end();
    sums_of(after, before, &aa, &bb, &dd);
    REL_EQ(s.grad, gg);
    REL_EQ(s.after, aa);
    REL_EQ(s.before, bb);
    REL_EQ(s.update, dd);
    ck_assert(s.update > 0);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}

START_TEST(test_in_place_over_blocks) {
    adam_over_blocks(GB_F32, false, false);
    adam_over_blocks(GB_F64, false, false);
}
END_TEST

START_TEST(test_fresh_buffer_over_blocks) {
    adam_over_blocks(GB_F32, true, false);
    adam_over_blocks(GB_F64, true, false);
}
END_TEST

START_TEST(test_with_numerics_checks_on) {
    adam_over_blocks(GB_F32, false, true);
    adam_over_blocks(GB_F32, true, true);
}
END_TEST

/* ---- every ISA level ------------------------------------------------------------------------ */

/* One measured SGD step of N elements of dtype dt at the level given. */
static gb__update_sums measured_at(gb_isa_level level, gb_dtype dt) {
    static double w[N], g[N];
    for (int i = 0; i < N; i++) w[i] = value_at(i, 4), g[i] = value_at(i, 5);
    gb__isa_force(level);
    gb_optimizer *opt = gb_sgd(0.1);
    gb_variable *v = ot_var("w", dt, N, w);
    gb__optimizer_measure_begin(opt);
    ck_assert(ot_step(opt, v, N, g));
    gb__optimizer_measure_end(opt);
    gb__update_sums s;
    ck_assert(gb__optimizer_measured(opt, v, &s));
    gb_variable_free(v);
    gb_optimizer_free(opt);
    return s;
}

START_TEST(test_the_same_bits_at_every_level) {
    gb_isa_level best = gb__isa_force(GB_ISA_V4);
    for (int d = 0; d < 2; d++) {
        gb_dtype dt = d ? GB_F64 : GB_F32;
        gb__update_sums base = measured_at(GB_ISA_V2, dt);
        for (gb_isa_level l = GB_ISA_V3; l <= best; l++) {
            gb__update_sums s = measured_at(l, dt);
            ck_assert_msg(!memcmp(&s, &base, sizeof s), "%s differs at %s", gb_dtype_name(dt),
                          gb__isa_level_name(l));
        }
    }
    gb__isa_force(best);
}
END_TEST

/* ---- only what an armed measure saw ---------------------------------------------------------- */

START_TEST(test_only_updates_under_the_armed_measure) {
    gb_optimizer *opt = gb_sgd(0.5);
    gb_variable *a = ot_var("a", GB_F32, 1, (const double[]){1});
    gb_variable *b = ot_var("b", GB_F32, 1, (const double[]){1});
    gb__update_sums s;
    ck_assert(ot_step(opt, a, 1, (const double[]){2}));   /* not armed */
    ck_assert(!gb__optimizer_measured(opt, a, &s));
    gb__optimizer_measure_begin(opt);
    ck_assert(ot_step(opt, a, 1, (const double[]){2}));   /* a: 0 -> -1 */
    gb__optimizer_measure_end(opt);
    ck_assert(gb__optimizer_measured(opt, a, &s));
    ck_assert(s.grad == 4 && s.before == 0 && s.after == 1 && s.update == 1);
    ck_assert(!gb__optimizer_measured(opt, b, &s));       /* b had no update under it */
    ck_assert(ot_step(opt, a, 1, (const double[]){2}));   /* after the end: not measured */
    ck_assert(gb__optimizer_measured(opt, a, &s) && s.after == 1);
    gb__optimizer_measure_begin(opt);                     /* a later measure without a's update */
    ck_assert(ot_step(opt, b, 1, (const double[]){2}));
    gb__optimizer_measure_end(opt);
    ck_assert(!gb__optimizer_measured(opt, a, &s));
    ck_assert(gb__optimizer_measured(opt, b, &s) && s.before == 1 && s.after == 0);
    gb_variable_free(a);
    gb_variable_free(b);
    gb_optimizer_free(opt);
}
END_TEST

static Suite *measure_suite(void) {
    Suite *s = suite_create("optim_measure");
    TCase *tc = tcase_create("measure");
    tcase_add_test(tc, test_small_sgd_step_exact_in_float32);
    tcase_add_test(tc, test_small_sgd_step_exact_in_float64);
    tcase_add_test(tc, test_in_place_over_blocks);
    tcase_add_test(tc, test_fresh_buffer_over_blocks);
    tcase_add_test(tc, test_with_numerics_checks_on);
    tcase_add_test(tc, test_the_same_bits_at_every_level);
    tcase_add_test(tc, test_only_updates_under_the_armed_measure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(measure_suite()); }
