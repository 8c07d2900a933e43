/* test_summary_health.c — training health through the default writer's
 * observer into the store and back: alerts (GB_EVENT_HEALTH, as the
 * engine's checks emit them) stored field for field, bounded, ordered
 * most severe first then earliest, counted; the heat map of the figures
 * (GB_EVENT_SCALAR events tagged health/<layer>/<figure>) with its layers
 * in first-seen order, a column per step written, and the worst value of
 * each cell when columns hold several steps — on raw points and on the
 * rollups of a long run, in a store and through a logdir. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "gb_health.h"
#include "gb_observer.h"
#include "gb_reader.h"
#include "gb_summary.h"
#include "summary_test_util.h"

static char dir[256], db[320];

static void setup(void) { SUMMARY_TEMP_STORE(dir, db, "gb_health"); }
static void teardown(void) { summary_remove_dir(dir); }

/* ---- writing as the engine does ----------------------------------------------------- */

static gb_summary_writer *open_default(const char *path, const char *run) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(path, run, NULL, &w), GB_OK);
    gb_summary_set_default(w);
    return w;
}

static void close_writer(gb_summary_writer *w) {
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static void emit_alert(const gb_health_alert *a, const char *message, double wall) {
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_HEALTH, .wall_time = wall, .message = message,
                                 .detail = a});
}

/* One figure of one layer at one step: the engine's scalar event. */
static void emit_figure(const char *layer, const char *figure, int64_t step, double value) {
    char tag[256];
    snprintf(tag, sizeof tag, "health/%s/%s", layer, figure);
    gb_scalar_event s = {tag, value, step, NULL};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .wall_time = 1000 + (double)step,
                                 .message = tag, .detail = &s});
}

static gb_store *open_store(const char *path) {
    gb_store *s;
    ck_assert_msg(gb_store_open(path, &s) == GB_STORE_OK, "%s", gb_store_last_error());
    return s;
}

/* ---- alerts --------------------------------------------------------------------------- */

static const gb_health_alert dead = {"dead_units", GB_HEALTH_WARNING, "block/conv", NULL, 30,
                                     0.62, 0.5, "{\"dead_fraction\":0.62,\"units\":64}",
                                     "Use LeakyReLU, or a smaller learning rate."};
static const gb_health_alert vanishing = {"vanishing_gradient", GB_HEALTH_CRITICAL, "dense",
                                          "dense/kernel", 10, 2e-9, 1e-3,
                                          "{\"grad_norm\":2e-9,\"above\":0.5}",
                                          "Check the initialization."};
static const gb_health_alert exploding = {"exploding_gradient", GB_HEALTH_CRITICAL, "out",
                                          "out/bias", 20, 4e4, 1e3, "{\"grad_norm\":4e4}",
                                          "Clip gradients."};
static const gb_health_alert spike = {"loss_spike", GB_HEALTH_INFO, NULL, NULL, 5, NAN, 3,
                                      "{\"median\":0.7,\"robust_sd\":0.05}", NULL};

static void write_four_alerts(void) {
    gb_summary_writer *w = open_default(db, "run");
    emit_alert(&dead, "dead units: 62% of block/conv", 1234.5);
    emit_alert(&vanishing, "vanishing gradient in dense/kernel", 1235.25);
    emit_alert(&exploding, "exploding gradient in out/bias", 1236);
    emit_alert(&spike, "loss spike at step 5", 1237);
    /* No longer the default: the writer hears no more alerts. */
    gb_summary_set_default(NULL);
    emit_alert(&dead, "not stored", 1238);
    close_writer(w);
}

static void assert_alert(const gb_health_row *r, int64_t id, const gb_health_alert *a,
                         const char *layer, const char *variable, const char *message,
                         double wall) {
    ck_assert_int_eq(r->id, id);
    ck_assert_int_eq(r->step, a->step);
    ck_assert(r->wall_time == wall);
    ck_assert_str_eq(r->kind, a->kind);
    ck_assert_int_eq(r->severity, (int)a->severity);
    ck_assert_str_eq(r->layer, layer);
    ck_assert_str_eq(r->variable, variable);
    ck_assert(isnan(a->value) ? isnan(r->value) : r->value == a->value);
    ck_assert(r->threshold == a->threshold);
    ck_assert_str_eq(r->figures, a->figures);
    ck_assert_str_eq(r->message, message);
    ck_assert_str_eq(r->advice, a->advice ? a->advice : "");
}

/* Every field as the engine gave it; most severe first, then earliest. */
START_TEST(test_alerts_stored_and_ordered) {
    write_four_alerts();
    gb_store *s = open_store(db);
    gb_health_alerts *a;
    ck_assert_int_eq(gb_store_health_alerts(s, "run", NULL, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 4);
    assert_alert(&a->rows[0], 2, &vanishing, "dense", "dense/kernel",
                 "vanishing gradient in dense/kernel", 1235.25);
    assert_alert(&a->rows[1], 3, &exploding, "out", "out/bias", "exploding gradient in out/bias",
                 1236);
    assert_alert(&a->rows[2], 1, &dead, "block/conv", "", "dead units: 62% of block/conv", 1234.5);
    assert_alert(&a->rows[3], 4, &spike, "", "", "loss spike at step 5", 1237);
    gb_store_free(a);

    /* A live page's window (after id 2), and a limit. */
    gb_event_query q = {2, 0};
    ck_assert_int_eq(gb_store_health_alerts(s, "run", &q, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 2);
    ck_assert_int_eq(a->rows[0].id, 3);
    ck_assert_int_eq(a->rows[1].id, 4);
    gb_store_free(a);
    q = (gb_event_query){0, 1};
    ck_assert_int_eq(gb_store_health_alerts(s, "run", &q, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 1);
    ck_assert_int_eq(a->rows[0].id, 2);
    gb_store_free(a);

    gb_health_counts *c;
    ck_assert_int_eq(gb_store_health_counts(s, "run", &c), GB_STORE_OK);
    ck_assert_int_eq(c->total, 4);
    ck_assert_int_eq(c->by_severity[GB_HEALTH_SEVERITY_CRITICAL], 2);
    ck_assert_int_eq(c->by_severity[GB_HEALTH_SEVERITY_WARNING], 1);
    ck_assert_int_eq(c->by_severity[GB_HEALTH_SEVERITY_INFO], 1);
    ck_assert_int_eq(c->by_severity[0], 0);
    ck_assert_int_eq(c->first_step, 5);
    ck_assert_int_eq(c->last_step, 30);
    ck_assert_int_eq(c->last_id, 4);
    gb_store_free(c);

    ck_assert_int_eq(gb_store_health_alerts(s, "nope", NULL, &a), GB_STORE_ERR_NO_RUN);
    ck_assert_ptr_null(a);
    ck_assert_str_eq(gb_health_severity_name(GB_HEALTH_SEVERITY_CRITICAL), "critical");
    ck_assert_str_eq(gb_health_severity_name(GB_HEALTH_SEVERITY_WARNING), "warning");
    ck_assert_str_eq(gb_health_severity_name(GB_HEALTH_SEVERITY_INFO), "info");
    ck_assert_str_eq(gb_health_severity_name(7), "unknown");
    bool any = false;
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_HEALTH, &any), GB_STORE_OK);
    ck_assert(any);
    gb_store_close(s);
}
END_TEST

/* Texts are cut at a character with "..." at GB_HEALTH_TEXT_MAX_BYTES;
 * figures that are too long or not one JSON object are "{}". */
START_TEST(test_alert_texts_and_figures_are_bounded) {
    static char long_advice[2000], accented[1100], big_figures[5000];
    memset(long_advice, 'a', sizeof long_advice - 1);
    /* 1020 bytes, then "é" across the cut (bytes 1020-1021), then more. */
    memset(accented, 'b', sizeof accented - 1);
    memcpy(accented + 1020, "\xc3\xa9", 2);
    size_t n = (size_t)snprintf(big_figures, sizeof big_figures, "{\"x\":\"");
    memset(big_figures + n, 'c', sizeof big_figures - n - 3);
    memcpy(big_figures + sizeof big_figures - 3, "\"}", 3);
    const gb_health_alert alerts[] = {
        {"not_learning", GB_HEALTH_WARNING, accented, NULL, 1, 1e-7, 1e-5, big_figures, long_advice},
        {NULL, GB_HEALTH_WARNING, "a", NULL, 2, 0, 0, "not json", NULL},
        {"k", GB_HEALTH_WARNING, "a", NULL, 3, 0, 0, "[1, 2]", NULL},
        {"k", GB_HEALTH_WARNING, "a", NULL, 4, 0, 0, NULL, NULL},
        {"k", GB_HEALTH_WARNING, "a", NULL, 5, 0, 0, " {\"ok\": true}", NULL},
    };
    gb_summary_writer *w = open_default(db, "run");
    for (size_t i = 0; i < sizeof alerts / sizeof alerts[0]; i++) emit_alert(&alerts[i], "m", 1);
    close_writer(w);

    gb_store *s = open_store(db);
    gb_health_alerts *a;
    ck_assert_int_eq(gb_store_health_alerts(s, "run", NULL, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 5);
    const gb_health_row *r = &a->rows[0];
    ck_assert_uint_eq(strlen(r->advice), GB_HEALTH_TEXT_MAX_BYTES);
    ck_assert_str_eq(r->advice + GB_HEALTH_TEXT_MAX_BYTES - 3, "...");
    ck_assert(strspn(r->advice, "a") == GB_HEALTH_TEXT_MAX_BYTES - 3);
    /* The cut fell inside "é": the whole character goes. */
    ck_assert_uint_eq(strlen(r->layer), 1023);
    ck_assert(strspn(r->layer, "b") == 1020);
    ck_assert_str_eq(r->layer + 1020, "...");
    ck_assert_str_eq(r->figures, "{}");
    ck_assert_str_eq(a->rows[1].kind, "unknown");
    ck_assert_str_eq(a->rows[1].figures, "{}");
    ck_assert_str_eq(a->rows[2].figures, "{}");
    ck_assert_str_eq(a->rows[3].figures, "{}");
    ck_assert_str_eq(a->rows[4].figures, "{\"ok\": true}");
    gb_store_free(a);
    gb_store_close(s);
}
END_TEST

/* ---- the heat map ------------------------------------------------------------------------ */

static double conv_grad(int64_t s) { return s == 5 ? 1e-9 : 1e-6 * (double)(s + 1); }
static double dense_grad(int64_t s) { return 1e-3 * (double)(s + 1); }
static const double dense_update[8] = {1e-3, 2e-3, 1e-6, 1e-3, 5e-2, 1e-3, 1e-3, 1e-3};

/* Three layers over steps 0..7, in the model's order at every step: the
 * conv block's gradient norm drops to 1e-9 at step 5, out's is NaN at 6. */
static void write_figures(void) {
    gb_summary_writer *w = open_default(db, "run");
    for (int64_t s = 0; s < 8; s++) {
        emit_figure("block/conv", "grad_norm", s, conv_grad(s));
        emit_figure("block/conv", "dead_fraction", s, (double)s / 10);
        emit_figure("dense", "grad_norm", s, dense_grad(s));
        emit_figure("dense", "update_ratio", s, dense_update[s]);
        emit_figure("dense", "dead_fraction", s, 0);
        emit_figure("out", "grad_norm", s, s == 6 ? NAN : 0.5);
    }
    gb_summary_writer *other;   /* not the default: its tags are its own */
    ck_assert_int_eq(gb_summary_writer_open(db, "sparse", NULL, &other), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(other, "loss", 1, 0), GB_OK);
    for (int64_t s = 0; s <= 300; s += 100)
        ck_assert_int_eq(gb_summary_scalar(other, "health/a/grad_norm", 0.1, s), GB_OK);
    close_writer(other);
    close_writer(w);
}

static gb_health_heatmap *heatmap(gb_store *s, const char *run, const char *figure, size_t columns,
                                  int64_t lo, int64_t hi) {
    gb_health_heatmap *m;
    gb_query q = {lo, hi, columns};
    ck_assert_msg(gb_store_health_heatmap(s, run, figure, &q, &m) == GB_STORE_OK, "%s",
                  gb_store_last_error());
    return m;
}

static const gb_health_cell *cell(const gb_health_heatmap *m, size_t layer, size_t col) {
    return &m->cells[layer * m->column_count + col];
}

START_TEST(test_heatmap_one_column_per_step) {
    write_figures();
    gb_store *s = open_store(db);
    gb_health_heatmap *m = heatmap(s, "run", "grad_norm", 0, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->figure_count, 3);   /* first seen: grad_norm, dead_fraction, update_ratio */
    ck_assert_str_eq(m->figures[0], "grad_norm");
    ck_assert_str_eq(m->figures[1], "dead_fraction");
    ck_assert_str_eq(m->figures[2], "update_ratio");
    ck_assert_uint_eq(m->layer_count, 3);
    ck_assert_str_eq(m->layers[0], "block/conv");
    ck_assert_str_eq(m->layers[1], "dense");
    ck_assert_str_eq(m->layers[2], "out");
    ck_assert_uint_eq(m->column_count, 8);
    ck_assert(!m->downsampled);
    for (int64_t k = 0; k < 8; k++) {
        ck_assert_int_eq(m->steps[k], k);
        ck_assert_int_eq(m->steps_last[k], k);
        ck_assert(cell(m, 0, (size_t)k)->value == conv_grad(k));
        ck_assert(cell(m, 1, (size_t)k)->value == dense_grad(k));
        ck_assert(cell(m, 1, (size_t)k)->min == dense_grad(k));
        ck_assert(cell(m, 1, (size_t)k)->max == dense_grad(k));
        ck_assert_int_eq(cell(m, 1, (size_t)k)->count, 1);
    }
    ck_assert(isnan(cell(m, 2, 6)->value));
    ck_assert(isnan(cell(m, 2, 6)->min) && isnan(cell(m, 2, 6)->max));
    ck_assert_int_eq(cell(m, 2, 6)->count, 1);
    gb_store_free(m);

    /* A step range. */
    m = heatmap(s, "run", "grad_norm", 0, 2, 5);
    ck_assert_uint_eq(m->column_count, 4);
    ck_assert_int_eq(m->steps[0], 2);
    ck_assert_int_eq(m->steps_last[3], 5);
    ck_assert(cell(m, 0, 3)->value == 1e-9);
    gb_store_free(m);

    /* Steps every 100: a column each, none for the steps between. */
    m = heatmap(s, "sparse", "grad_norm", 0, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->layer_count, 1);
    ck_assert_str_eq(m->layers[0], "a");
    ck_assert_uint_eq(m->column_count, 4);
    for (size_t k = 0; k < 4; k++) ck_assert_int_eq(m->steps[k], (int64_t)k * 100);
    gb_store_free(m);

    /* A figure the run does not have: no layers, and the ones it has. */
    m = heatmap(s, "run", "saturated_fraction", 0, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->layer_count, 0);
    ck_assert_uint_eq(m->column_count, 0);
    ck_assert_uint_eq(m->figure_count, 3);
    gb_store_free(m);
    gb_store_close(s);
}
END_TEST

/* Four columns of two steps: each cell is its worst point for its figure. */
START_TEST(test_heatmap_cells_keep_the_worst_point) {
    write_figures();
    gb_store *s = open_store(db);
    gb_health_heatmap *m = heatmap(s, "run", "grad_norm", 4, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->column_count, 4);
    ck_assert(m->downsampled);
    for (size_t k = 0; k < 4; k++) {
        ck_assert_int_eq(m->steps[k], 2 * (int64_t)k);
        ck_assert_int_eq(m->steps_last[k], 2 * (int64_t)k + 1);
    }
    /* grad_norm: the extreme farther from the cell's mean by ratio. Steps
     * 0-1 (1e-6, 2e-6, mean 1.5e-6): 1.5 below against 1.33 above. */
    ck_assert(cell(m, 0, 0)->value == 1e-6);
    ck_assert(cell(m, 0, 2)->value == 1e-9);   /* the drop at step 5 */
    ck_assert(cell(m, 0, 2)->min == 1e-9);
    ck_assert(cell(m, 0, 2)->max == conv_grad(4));
    ck_assert_int_eq(cell(m, 0, 2)->count, 2);
    ck_assert(cell(m, 1, 3)->value == 7e-3);   /* 7e-3, 8e-3: 1.071 below, 1.067 above */
    ck_assert(isnan(cell(m, 2, 3)->value));     /* a NaN is the worst of all */
    ck_assert(cell(m, 2, 3)->min == 0.5 && cell(m, 2, 3)->max == 0.5);
    gb_store_free(m);

    /* update_ratio: the one farther from 1e-3 by ratio. */
    m = heatmap(s, "run", "update_ratio", 4, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->layer_count, 1);
    ck_assert(cell(m, 0, 0)->value == 2e-3);
    ck_assert(cell(m, 0, 1)->value == 1e-6);
    ck_assert(cell(m, 0, 2)->value == 5e-2);
    ck_assert(cell(m, 0, 3)->value == 1e-3);
    gb_store_free(m);

    /* dead_fraction (and any other figure): the largest. */
    m = heatmap(s, "run", "dead_fraction", 4, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->layer_count, 2);
    for (size_t k = 0; k < 4; k++) {
        ck_assert(cell(m, 0, k)->value == (double)(2 * k + 1) / 10);
        ck_assert(cell(m, 1, k)->value == 0);
    }
    gb_store_free(m);
    gb_store_close(s);
}
END_TEST

/* 40,000 steps of two layers squeezed into 10 columns: read from the
 * rollups (blocks of 256 steps, each in the column of its first step),
 * exact, and the one dead step of layer b is not averaged away; reading
 * it costs a small part of the pages the raw points fill. */
START_TEST(test_heatmap_of_a_long_run_from_rollups) {
    gb_summary_writer *w = open_default(db, "long");
    for (int64_t s = 0; s < 40000; s++) {
        emit_figure("a", "dead_fraction", s, (double)(s % 1000) / 1000);
        emit_figure("b", "dead_fraction", s, s == 12345 ? 1.0 : 0.0);
    }
    close_writer(w);
    gb_store *s = open_store(db);
    int64_t before = gb_store_pages_read(s);
    gb_health_heatmap *m = heatmap(s, "long", "dead_fraction", 10, GB_STEP_MIN, GB_STEP_MAX);
    int64_t heat_pages = gb_store_pages_read(s) - before;
    before = gb_store_pages_read(s);
    for (int i = 0; i < 2; i++) {
        gb_scalar_series *raw;
        ck_assert_int_eq(gb_store_scalars(s, "long", i ? "health/b/dead_fraction" : "health/a/dead_fraction",
                                          NULL, &raw), GB_STORE_OK);
        ck_assert_int_eq(raw->count, 40000);
        gb_store_free(raw);
    }
    int64_t raw_pages = gb_store_pages_read(s) - before;
    ck_assert_msg(heat_pages * 10 < raw_pages, "heat map %lld pages, raw points %lld",
                  (long long)heat_pages, (long long)raw_pages);
    ck_assert_uint_eq(m->column_count, 10);
    ck_assert(m->downsampled);
    for (int64_t k = 0; k < 10; k++) {
        /* Interval k is steps 4000k..4000k+3999; a block joins the one
         * holding its first step, so column k starts at the first block
         * boundary at or after 4000k. */
        int64_t first = (4000 * k + 255) / 256 * 256;
        int64_t last = k == 9 ? 39999 : (4000 * (k + 1) + 255) / 256 * 256 - 1;
        ck_assert_int_eq(m->steps[k], first);
        ck_assert_int_eq(m->steps_last[k], last);
        ck_assert(cell(m, 0, (size_t)k)->value == 0.999);
        ck_assert_int_eq(cell(m, 0, (size_t)k)->count, last - first + 1);
        ck_assert(cell(m, 1, (size_t)k)->value == (k == 3 ? 1.0 : 0.0));
    }
    gb_store_free(m);
    gb_store_close(s);
}
END_TEST

START_TEST(test_heatmap_arguments) {
    write_figures();
    gb_store *s = open_store(db);
    gb_health_heatmap *m = (gb_health_heatmap *)1;
    ck_assert_int_eq(gb_store_health_heatmap(s, "run", "a/b", NULL, &m), GB_STORE_ERR_ARG);
    ck_assert_ptr_null(m);
    ck_assert_str_eq(gb_store_last_error(),
                     "gb_store_health_heatmap: 'a/b' is not a figure's name (1 to 64 bytes, no '/')");
    ck_assert_int_eq(gb_store_health_heatmap(s, "run", "", NULL, &m), GB_STORE_ERR_ARG);
    ck_assert_int_eq(gb_store_health_heatmap(s, "run", NULL, NULL, &m), GB_STORE_ERR_ARG);
    char long_name[80];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ck_assert_int_eq(gb_store_health_heatmap(s, "run", long_name, NULL, &m), GB_STORE_ERR_ARG);
    ck_assert_int_eq(gb_store_health_heatmap(s, "nope", "grad_norm", NULL, &m), GB_STORE_ERR_NO_RUN);
    ck_assert_msg(strstr(gb_store_last_error(), "unknown run 'nope'"), "%s", gb_store_last_error());
    bool any = false;
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_HEALTH, &any), GB_STORE_OK);
    ck_assert(any);   /* figures alone, no alert: the tab shows */
    gb_store_close(s);
}
END_TEST

/* A logdir: each query naming a run goes to its member store. */
START_TEST(test_health_through_a_logdir) {
    char member[400];
    snprintf(member, sizeof member, "%s/m.db", dir);
    gb_summary_writer *w = open_default(member, "r");
    emit_alert(&vanishing, "vanishing", 1);
    emit_figure("dense", "grad_norm", 3, 0.25);
    close_writer(w);
    gb_store *s;
    const char *dirs[] = {dir};
    ck_assert_int_eq(gb_store_open_logdir(dirs, 1, &s), GB_STORE_OK);
    gb_health_alerts *a;
    ck_assert_int_eq(gb_store_health_alerts(s, "m/r", NULL, &a), GB_STORE_OK);
    ck_assert_uint_eq(a->count, 1);
    ck_assert_str_eq(a->rows[0].kind, "vanishing_gradient");
    gb_store_free(a);
    gb_health_counts *c;
    ck_assert_int_eq(gb_store_health_counts(s, "m/r", &c), GB_STORE_OK);
    ck_assert_int_eq(c->total, 1);
    gb_store_free(c);
    gb_health_heatmap *m = heatmap(s, "m/r", "grad_norm", 0, GB_STEP_MIN, GB_STEP_MAX);
    ck_assert_uint_eq(m->layer_count, 1);
    ck_assert(cell(m, 0, 0)->value == 0.25);
    gb_store_free(m);
    bool any = false;
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_HEALTH, &any), GB_STORE_OK);
    ck_assert(any);
    gb_store_close(s);
}
END_TEST

/* A store with scalars and no health: the tab stays hidden. */
START_TEST(test_no_health_no_tab) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "healthy/loss", 1, 0), GB_OK);
    close_writer(w);
    gb_store *s = open_store(db);
    bool any = true;
    ck_assert_int_eq(gb_store_has_events(s, GB_EVENTS_HEALTH, &any), GB_STORE_OK);
    ck_assert(!any);
    gb_store_close(s);
}
END_TEST

static Suite *health_suite(void) {
    Suite *s = suite_create("summary_health");
    TCase *t = tcase_create("health");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_alerts_stored_and_ordered);
    tcase_add_test(t, test_alert_texts_and_figures_are_bounded);
    tcase_add_test(t, test_heatmap_one_column_per_step);
    tcase_add_test(t, test_heatmap_cells_keep_the_worst_point);
    tcase_add_test(t, test_heatmap_of_a_long_run_from_rollups);
    tcase_add_test(t, test_heatmap_arguments);
    tcase_add_test(t, test_health_through_a_logdir);
    tcase_add_test(t, test_no_health_no_tab);
    suite_add_tcase(s, t);
    return s;
}

int main(void) {
    SRunner *r = srunner_create(health_suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
