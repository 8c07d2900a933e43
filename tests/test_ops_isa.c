/* test_ops_isa.c — one build, the same results at every instruction-set
 * level this CPU runs (framework/core/isa.h).
 *
 * Every op of ops.def (through tests/op_cases.h's generators, at a batch
 * big enough that the vector loops run whole vectors and a tail) runs at
 * x86-64-v2, then at each higher level the CPU has, in one process: the
 * kernels are switched with gb__isa_force(), the inputs are made anew from
 * the same seeds. Floats run both as generated (float64) and cast to
 * float32, where the fast approximations live (Tanh).
 *
 * The levels compute the same expressions in the same order (the build
 * neither contracts into FMA nor reassociates), so results agree to the
 * last bit — except convolution, whose kernels let GCC contract a*b+c
 * (ops/conv/isa/), so at v3 and v4 its sums round once where v2 rounds
 * twice: there the documented tolerance is float rounding of the sums,
 * 1e-5 (float32) and 1e-13 (float64) relative to the largest magnitude —
 * and float32 tanh (Tanh, Gelu's tanh form, the LSTM cell's tanh and
 * sigmoid), whose polynomial uses FMA at v3 and v4: 2e-7 for Tanh, 1e-6
 * for Gelu, GeluGrad (erf's likewise) and BlockLSTMGrad, relative
 * likewise. (Softmax's exp rounds twice at every level,
 * ops/isa/softmax_rows.c: its results are exact.)
 * Winograd's path, which the generated cases are too small to take, is
 * checked on its own with a forward and both gradients.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>

#include "core/isa.h"
#include "op_cases.h"
#include "run_suite.h"
#include "test_util.h"

enum { BATCH = 37 }; /* dim 0 of the batched inputs: 37 x 3 = 111 elements */

/* The outputs of one case at one level. */
typedef struct level_run {
    int n;
    gb_tensor *out[OC_MAX_OUT];
} level_run;

static bool contracts_fma(gb_op_id op) {
    return op == GB_OP_CONV2D || op == GB_OP_CONV2D_BACKPROP_INPUT ||
           op == GB_OP_CONV2D_BACKPROP_FILTER;
}

/* float32 tanh (ops/fast_math.h) evaluates its polynomial with FMA at v3
 * and v4: each level is within 8.9e-8 of the true tanh, so two levels are
 * within 2e-7 of each other; Gelu scales that by at most its input, the
 * LSTM cell's derivatives (BlockLSTMGrad: tanh of the cell state) by
 * products of gates and gradients below 1 in its case. (BlockLSTM's case
 * runs through its layer call, which the float32 pass skips.) */
static double fast_tanh_tolerance(gb_op_id op, bool f32) {
    if (!f32) return 0;
    return op == GB_OP_TANH ? 2e-7 : op == GB_OP_GELU || op == GB_OP_GELU_GRAD || op == GB_OP_BLOCK_LSTM_GRAD ? 1e-6 : 0;
}

/* got agrees with want (x86-64-v2's): bit for bit when tol is 0, else
 * within tol times want's largest magnitude. */
static void assert_agrees(const gb_tensor *want, const gb_tensor *got, double tol,
                          const char *what) {
    ck_assert_msg(gb_tensor_dtype(want) == gb_tensor_dtype(got) && gb_same_shape(want, got),
                  "%s: dtype or shape differs from x86-64-v2's", what);
    if (gb_tensor_dtype(want) == GB_STRING) { /* the bytes, not where they are */
        for (int64_t i = 0; i < gb_size(want); i++) {
            gb_string a = gb_get_string(want, i), b = gb_get_string(got, i);
            ck_assert_msg(a.len == b.len && memcmp(a.data, b.data, (size_t)a.len) == 0,
                          "%s: string element %lld differs from x86-64-v2's", what, (long long)i);
        }
        return;
    }
    size_t es = gb_dtype_size(gb_tensor_dtype(want));
    const char *dw = gb_data(want), *dg = gb_data(got);
    double scale = 0;
    for (int64_t i = 0; i < gb_size(want); i++) scale = fmax(scale, fabs(gb_get(want, i)));
    for (int64_t i = 0; i < gb_size(want); i++) {
        bool same = tol == 0 ? memcmp(dw + (size_t)i * es, dg + (size_t)i * es, es) == 0
                             : fabs(gb_get(got, i) - gb_get(want, i)) <= tol * scale;
        ck_assert_msg(same, "%s: element %lld is %.17g, %.17g at x86-64-v2", what, (long long)i,
                      gb_get(got, i), gb_get(want, i));
    }
}

/* The case's float64 inputs as float32 (in place); false when it has none. */
static bool to_float32(op_case *c) {
    bool any = false;
    for (int i = 0; i < c->nin; i++)
        if (gb_tensor_dtype(c->in[i]) == GB_F64) {
            c->in[i] = gb_cast(c->in[i], GB_F32);
            any = true;
        }
    return any;
}

/* Makes the case afresh (same seeds: same inputs, fresh variables) and
 * runs it eagerly at `level`; false when it does not run (a float32
 * variant the op refuses, an op that exists only in graphs). */
static bool run_at(gb_op_id op, bool f32, gb_isa_level level, op_case *c, level_run *r) {
    char why[256];
    gb__isa_force(level);
    ck_assert_msg(op_case_make(op, BATCH, c, why, sizeof why), "%s: %s", gb_op_type_name(op), why);
    /* Print's kernel is a copy, and it would print at every level. */
    if (c->graph_only || op == GB_OP_PRINT || (f32 && (c->run || !to_float32(c)))) return false;
    r->n = op_case_run(c, 0, c->in, r->out);
    if (r->n < 0 && f32) { /* the op has no float32 kernel */
        gb_clear_error();
        return false;
    }
    ck_assert_msg(r->n >= 0 && gb_ok(), "%s at %s: %s", gb_op_type_name(op),
                  gb__isa_level_name(level), gb_error_string());
    return true;
}

static void assert_levels_agree(gb_op_id op, bool f32) {
    gb_isa_level best = gb__isa_supported();
    op_case base_case;
    level_run base;
    bool runs = run_at(op, f32, GB_ISA_V2, &base_case, &base);
    for (gb_isa_level l = GB_ISA_V3; runs && l <= best; l++) {
        op_case c;
        level_run r;
        ck_assert(run_at(op, f32, l, &c, &r));
        ck_assert_int_eq(r.n, base.n);
        double tol = contracts_fma(op) ? (f32 ? 1e-5 : 1e-13) : fast_tanh_tolerance(op, f32);
        for (int k = 0; k < r.n; k++) {
            char what[160];
            snprintf(what, sizeof what, "%s (%s) output %d at %s", gb_op_type_name(op),
                     f32 ? "float32" : "as generated", k, gb__isa_level_name(l));
            assert_agrees(base.out[k], r.out[k], tol, what);
        }
        op_case_free(&c);
    }
    op_case_free(&base_case);
    gb__isa_force(best);
}

START_TEST(test_every_op_agrees_across_levels) {
    assert_levels_agree((gb_op_id)_i, false);
}
END_TEST

START_TEST(test_every_op_agrees_across_levels_in_float32) {
    assert_levels_agree((gb_op_id)_i, true);
}
END_TEST

/* ---- Winograd: 3x3, 32 channels in, 32 out ------------------------------------------------- */

/* y = conv(x, w) and d(sum y^2)/dx, d(sum y^2)/dw: the forward, input
 * gradient and filter gradient all take the Winograd path at this depth. */
static void winograd_run(gb_isa_level level, gb_tensor **out) {
    gb__isa_force(level);
    gb_tensor *x = gb_random_normal(GB_F32, GB_SHAPE(2, 10, 9, 32), 0, 1, 11);
    gb_tensor *w = gb_random_normal(GB_F32, GB_SHAPE(3, 3, 32, 32), 0, 0.1, 12);
    gb_tape *tape = gb_tape_begin_ex(true, false);
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, w);
    out[0] = gb_conv2d(x, w, NULL, 0, GB_PADDING_SAME, NULL, 0);
    gb_tensor *loss = gb_reduce_sum(gb_square(out[0]), NULL, 0, false);
    out[1] = gb_tape_gradient(tape, loss, x);
    out[2] = gb_tape_gradient(tape, loss, w);
    gb_tape_end(tape);
    ck_assert_msg(gb_ok(), "%s", gb_error_string());
}

START_TEST(test_winograd_agrees_across_levels) {
    gb_tensor *base[3], *got[3];
    winograd_run(GB_ISA_V2, base);
    gb_isa_level best = gb__isa_supported();
    for (gb_isa_level l = GB_ISA_V3; l <= best; l++) {
        winograd_run(l, got);
        for (int k = 0; k < 3; k++) {
            char what[96];
            snprintf(what, sizeof what, "Winograd %s at %s", (const char *[]){"y", "dx", "dw"}[k],
                     gb__isa_level_name(l));
            assert_agrees(base[k], got[k], 1e-5, what);
        }
    }
    gb__isa_force(best);
}
END_TEST

/* GB_ISA names the level in force, and gb_cpu_isa() says it. */
START_TEST(test_the_level_in_force_is_named) {
    const char *env = getenv("GB_ISA");
    gb_isa_level best = gb__isa_supported();
    if (env && *env) {
        char want[32];
        snprintf(want, sizeof want, "x86-64-%s", env);
        gb_isa_level asked = strcmp(want, "x86-64-v2") == 0   ? GB_ISA_V2
                             : strcmp(want, "x86-64-v3") == 0 ? GB_ISA_V3
                                                               : GB_ISA_V4;
        ck_assert_str_eq(gb_cpu_isa(), gb__isa_level_name(asked <= best ? asked : best));
    } else {
        ck_assert_str_eq(gb_cpu_isa(), gb__isa_level_name(best));
    }
    ck_assert_int_eq(gb__isa_force(GB_ISA_V2), GB_ISA_V2);
    ck_assert_str_eq(gb_cpu_isa(), "x86-64-v2");
    ck_assert_int_eq(gb__isa_force(GB_ISA_V4), best); /* never above what the CPU runs */
    ck_assert_str_eq(gb_cpu_isa(), gb__isa_level_name(best));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("ops_isa");
    TCase *tc = tcase_create("levels");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_every_op_agrees_across_levels, 0, GB_OP_COUNT);
    tcase_add_loop_test(tc, test_every_op_agrees_across_levels_in_float32, 0, GB_OP_COUNT);
    tcase_add_test(tc, test_winograd_agrees_across_levels);
    tcase_add_test(tc, test_the_level_in_force_is_named);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
