/* test_optim_clipping.c — gradient clipping (gb_optimizer_set_clipping:
 * Keras' clipnorm, global_clipnorm, clipvalue) against hand-computed
 * values, with SGD at learning rate 1 so a variable starting at 0 holds
 * minus the clipped gradient. Also: only one kind at a time and finite
 * values; a non-finite joint norm makes every gradient NaN, as
 * tf.clip_by_global_norm; the config keeps the clipping (Keras' nulls
 * read as off); a traced step clips as the eager one, bit for bit, with
 * its clipping ops under "SGD/clip/".
 */
#include "optim_test_util.h"

/* v = 0 - clipped(g) after one SGD(1) step with the optimizer's clipping. */
static void assert_clipped(gb_gradient_clipping c, int n, const double *g, const float *want) {
    gb_optimizer *opt = gb_sgd(1.0);
    ck_assert_msg(gb_optimizer_set_clipping(opt, c), "%s", gb_error_string());
    gb_variable *v = ot_var("v", GB_F32, n, (const double[8]){0});
    ck_assert_msg(ot_step(opt, v, n, g), "%s", gb_error_string());
    for (int i = 0; i < n; i++) ck_assert_msg((float)ot_get(v, i) == -want[i], "element %d: %.9g, want %.9g", i, ot_get(v, i), -want[i]);
    gb_variable_free(v);
    gb_optimizer_free(opt);
}

START_TEST(test_clipnorm) {
    /* ||(3, 4)|| = 5 > 1: scaled by 1 / 5. */
    assert_clipped((gb_gradient_clipping){.clipnorm = 1}, 2, (const double[]){3, 4},
                   (const float[]){3.0f * (1.0f / 5.0f), 4.0f * (1.0f / 5.0f)});
    /* ||(0.3, 0.4)|| = 0.5 <= 1: unchanged. */
    assert_clipped((gb_gradient_clipping){.clipnorm = 1}, 2, (const double[]){0.3, 0.4},
                   (const float[]){0.3f, 0.4f});
}
END_TEST

START_TEST(test_clipvalue) {
    assert_clipped((gb_gradient_clipping){.clipvalue = 1}, 4, (const double[]){-5, 0.5, 5, -1},
                   (const float[]){-1, 0.5f, 1, -1});
}
END_TEST

/* Two variables, gradients (3, 4) and (12): joint norm 13, clip 1. */
START_TEST(test_global_clipnorm) {
    gb_optimizer *opt = gb_sgd(1.0);
    ck_assert(gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.global_clipnorm = 1}));
    gb_variable *vars[2] = {ot_var("a", GB_F32, 2, (const double[]){0, 0}),
                            ot_var("b", GB_F32, 1, (const double[]){0})};
    gb_scope_begin();
    gb_tensor *g[2] = {ot_tensor(GB_F32, 2, (const double[]){3, 4}),
                       ot_tensor(GB_F32, 1, (const double[]){12})};
    ck_assert_msg(gb_optimizer_apply_gradients(opt, g, 2, vars, 2), "%s", gb_error_string());
    gb_scope_end();
    const float scale = (float)(1.0 / 13.0); /* the factor is computed in float64 */
    ck_assert((float)ot_get(vars[0], 0) == -(3.0f * scale));
    ck_assert((float)ot_get(vars[0], 1) == -(4.0f * scale));
    ck_assert((float)ot_get(vars[1], 0) == -(12.0f * scale));
    /* An infinite gradient: every gradient NaN, so nothing passes as clipped. */
    gb_scope_begin();
    gb_tensor *h[2] = {ot_tensor(GB_F32, 2, (const double[]){INFINITY, 1}),
                       ot_tensor(GB_F32, 1, (const double[]){1})};
    ck_assert(gb_optimizer_apply_gradients(opt, h, 2, vars, 2));
    gb_scope_end();
    ck_assert(isnan(ot_get(vars[0], 1)) && isnan(ot_get(vars[1], 0)));
    gb_variable_free(vars[0]), gb_variable_free(vars[1]);
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_one_kind_and_finite_values) {
    gb_optimizer *opt = gb_sgd(1.0);
    ck_assert(!gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.clipnorm = 1, .clipvalue = 2}));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "SGD: only one of clipnorm, global_clipnorm and clipvalue can be "
                                  "set, got 1, 0 and 2");
    gb_clear_error();
    ck_assert(!gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.global_clipnorm = -1}));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "SGD: global_clipnorm must be a finite number >= 0 (0: off), got -1");
    gb_clear_error();
    ck_assert(!gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.clipvalue = NAN}));
    OT_ASSERT_ERROR(GB_ERR_VALUE, "clipvalue must be a finite number");
    gb_clear_error();
    ck_assert(gb_optimizer_clipping(opt).clipvalue == 0); /* refused: nothing changed */
    gb_optimizer_free(opt);
}
END_TEST

START_TEST(test_config_keeps_the_clipping) {
    gb_optimizer *opt = gb_sgd(0.5);
    ck_assert(gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.global_clipnorm = 2.5}));
    gb_config *c = gb_optimizer_get_config(opt);
    ck_assert_ptr_nonnull(c);
    gb_optimizer *back = gb_optimizer_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    gb_gradient_clipping got = gb_optimizer_clipping(back);
    ck_assert(got.global_clipnorm == 2.5 && got.clipnorm == 0 && got.clipvalue == 0);
    gb_config_free(c);
    gb_optimizer_free(back);
    /* Keras writes the unset ones as null. */
    const char *keras = "{\"class_name\": \"Adam\", \"config\": {\"clipnorm\": null, "
                        "\"global_clipnorm\": null, \"clipvalue\": 0.5}}";
    c = gb_config_from_json(keras, strlen(keras), "keras.json");
    ck_assert_msg(c != NULL, "%s", gb_error_string());
    back = gb_optimizer_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    ck_assert(gb_optimizer_clipping(back).clipvalue == 0.5);
    gb_config_free(c);
    gb_optimizer_free(back);
    gb_optimizer_free(opt);
}
END_TEST

/* ---- traced ---------------------------------------------------------------------------- */

typedef struct step_ctx {
    gb_optimizer *opt;
    gb_variable *v;
} step_ctx;

/* One step on gradient in[0]. */
static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    step_ctx *s = user;
    gb_tensor *g = in[0];
    if (!gb_optimizer_apply_gradients(s->opt, &g, 1, &s->v, 1)) return -1;
    out[0] = gb_variable_value(s->v);
    return 1;
}

START_TEST(test_traced_clips_as_eager) {
    const double g[3] = {3, -4, 12};
    step_ctx eager = {gb_sgd(1.0), ot_var("v", GB_F32, 3, (const double[]){1, 2, 3})};
    step_ctx traced = {gb_sgd(1.0), ot_var("v", GB_F32, 3, (const double[]){1, 2, 3})};
    ck_assert(gb_optimizer_set_clipping(eager.opt, (gb_gradient_clipping){.clipnorm = 2}));
    ck_assert(gb_optimizer_set_clipping(traced.opt, (gb_gradient_clipping){.clipnorm = 2}));
    gb_function *f = gb_function_new("step", step_fn, &(gb_function_options){.user = &traced});
    for (int t = 0; t < 2; t++) {
        gb_scope_begin();
        gb_tensor *grad = ot_tensor(GB_F32, 3, g), *y;
        ck_assert(ot_step(eager.opt, eager.v, 3, g));
        ck_assert_msg(gb_function_call(f, &grad, 1, NULL, 0, &y) == 1, "%s", gb_error_string());
        gb_scope_end();
        for (int i = 0; i < 3; i++) ck_assert(ot_get(eager.v, i) == ot_get(traced.v, i));
    }
    ck_assert_msg(strstr(gb_function_traced_graph_text(f), "SGD/clip/") != NULL, "%s",
                  gb_function_traced_graph_text(f));
    gb_function_free(f);
    gb_variable_free(eager.v), gb_variable_free(traced.v);
    gb_optimizer_free(eager.opt), gb_optimizer_free(traced.opt);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("optim_clipping");
    TCase *tc = tcase_create("clipping");
    tcase_add_test(tc, test_clipnorm);
    tcase_add_test(tc, test_clipvalue);
    tcase_add_test(tc, test_global_clipnorm);
    tcase_add_test(tc, test_one_kind_and_finite_values);
    tcase_add_test(tc, test_config_keeps_the_clipping);
    tcase_add_test(tc, test_traced_clips_as_eager);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ot_run(suite()); }
