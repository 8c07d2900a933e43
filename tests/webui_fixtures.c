/* webui_fixtures.c — writes the stores the dashboard's Check tests read.
 *
 * test_webui_* link the server and the store's reader only, never the
 * writer or the engine, so the linker keeps them (and the server) honest;
 * this program, which links the writer, writes their stores instead:
 *
 *   webui_fixtures api DB             runs alpha and beta: hparams, scalars with
 *                                     NaN/+Inf/-Inf, histograms, images, text;
 *                                     alpha also an embedding "points" (steps 0
 *                                     and 10, metadata, a sprite) and an audio
 *                                     clip "tone" (step 0, 2 samples clipped)
 *   webui_fixtures numerics DB QUIET  run alpha: six alerts through the writer
 *                                     API; run engine: the engine's own alerts
 *                                     through the default writer; run quiet
 *                                     (no alerts) in DB and alone in QUIET
 *   webui_fixtures cli DB             run run-a: an hparam, six scalars
 *                                     (non-finite ones too), a histogram
 *   webui_fixtures traces DB          run engine: a function traced twice (a dim
 *                                     changed), called five times, profiled and
 *                                     exported between trace_on/trace_export; run
 *                                     damaged: a trace whose detail is not JSON;
 *                                     untraced: a scalar, no trace
 *   webui_fixtures profile DB         run prof: three steps of a traced function
 *                                     profiled (trace_on(profile) / trace_export)
 *   webui_fixtures graph DB [SHAPE]   run big: graph summary "generated" of a
 *                                     generated shape (graph_shapes.c; default
 *                                     10k100: 10,000 ops in 100 scopes)
 *   webui_fixtures many_traces DB T N run many: T traces of function step, each
 *                                     with an N-op graph (N a multiple of 100)
 *   webui_fixtures hparams DB         runs a, b, c of an experiment (lr, optimizer; acc,
 *                                     loss), done, failed, killed; PR curves of run a
 *   webui_fixtures health DB QUIET    through the default writer, as the engine's
 *                                     health checks emit them: run alpha, two
 *                                     alerts and two layers' figures at steps
 *                                     0, 10, 20; run beta, one critical alert
 *                                     and one layer; run quiet, a scalar only
 *                                     (in DB, and alone in QUIET)
 *   webui_fixtures evil DB            a run, its hparams and a tag named with
 *                                     terminal escapes, C1 controls and bytes
 *                                     that are not UTF-8 (see write_evil)
 *
 * Exit 0 on success; 1 with the writer's message; 2 for bad arguments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_health.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "graph_shapes.h"

#define CHECK(call)                                                                     \
    do {                                                                                \
        if ((call) != GB_OK) {                                                          \
            fprintf(stderr, "webui_fixtures: %s: %s\n", #call, gb_summary_last_error()); \
            return false;                                                               \
        }                                                                               \
    } while (0)

/* ---- api --------------------------------------------------------------------------- */

static bool write_api_run(const char *db, const char *run, double lr) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, run, NULL, &w));
    CHECK(gb_summary_hparam_num(w, "learning_rate", lr));
    CHECK(gb_summary_hparam_str(w, "optimizer", "adam"));
    for (int64_t s = 0; s < 100; s++) {
        double v = 1.0 / (double)(s + 1);
        if (s == 50) v = NAN;
        if (s == 60) v = INFINITY;
        if (s == 70) v = -INFINITY;
        CHECK(gb_summary_scalar(w, "loss", v, s));
        CHECK(gb_summary_scalar(w, "accuracy", (double)s / 100.0, s));
    }
    gb_scope_begin();
    bool ok = true;
    for (int64_t s = 0; s < 5 && ok; s++) {
        float vals[64];
        for (int i = 0; i < 64; i++) vals[i] = (float)i / 8.0f + (float)s;
        gb_tensor *t = gb_tensor_from(GB_F32, vals, 1, (int64_t[]){64});
        unsigned char px[2 * 4 * 4 * 1];
        for (int i = 0; i < 32; i++) px[i] = (unsigned char)(i * 8 + s);
        gb_tensor *img = gb_tensor_from(GB_U8, px, 4, (int64_t[]){2, 4, 4, 1});
        char text[64];
        snprintf(text, sizeof text, "<b>note</b> %d \"quoted\"\n", (int)s);
        ok = gb_summary_histogram(w, "weights", t, s * 10) == GB_OK &&
             gb_summary_image(w, "inputs", img, 3, s * 10) == GB_OK &&
             gb_summary_text(w, "notes", text, s * 10) == GB_OK;
    }
    gb_scope_end();
    if (!ok) fprintf(stderr, "webui_fixtures: %s\n", gb_summary_last_error());
    CHECK(gb_summary_writer_close(w));
    return ok;
}

/* Run alpha's embedding (three points in 2D, steps 0 and 10) and clip. */
static bool write_api_media(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "alpha", NULL, &w));
    gb_scope_begin();
    const float v[6] = {1, 0, 0, 1, 0.5f, 0.25f};
    const char *cells[] = {"cat", "dog", "cat"};
    const char *columns[] = {"animal"};
    unsigned char px[3 * 2 * 2 * 1] = {0, 50, 100, 150, 200, 250, 10, 20, 30, 40, 50, 60};
    gb_tensor *values = gb_tensor_from(GB_F32, v, 2, (int64_t[]){3, 2});
    gb_tensor *meta = gb_strings(cells, 1, (int64_t[]){3});
    gb_tensor *sprite = gb_tensor_from(GB_U8, px, 4, (int64_t[]){3, 2, 2, 1});
    const float tone[6] = {0, 0.5f, 1.25f, -0.5f, -3, 0};
    bool ok = gb_summary_embedding(w, "points", values, meta, columns, sprite, 0) == GB_OK &&
              gb_summary_embedding(w, "points", values, NULL, NULL, NULL, 10) == GB_OK &&
              gb_summary_audio(w, "tone", gb_tensor_from(GB_F32, tone, 2, (int64_t[]){1, 6}), 8000, 1, 0) == GB_OK;
    gb_scope_end();
    if (!ok) fprintf(stderr, "webui_fixtures: %s\n", gb_summary_last_error());
    CHECK(gb_summary_writer_close(w));
    return ok;
}

static bool write_api(const char *db) {
    return write_api_run(db, "alpha", 0.001) && write_api_run(db, "beta", 0.01) && write_api_media(db);
}

/* ---- numerics ------------------------------------------------------------------------ */

#define LOG_DETAIL                                                                          \
    "{\"output_index\":0,\"dtype\":\"float32\",\"shape\":[4],\"first_index\":2,"           \
    "\"created\":true,\"backward\":false,\"forward_op_type\":\"\",\"inputs\":[{\"dtype\":" \
    "\"float32\",\"shape\":[4],\"min\":0,\"max\":2.5,\"nan_count\":0,\"inf_count\":0}]}"

/* Alerts of run "alpha", written in this order (ids 1..6) with steps out
 * of order, one without a step and one with a damaged detail. */
static const struct {
    int64_t step;
    gb_numerics_record r;
} alpha[] = {
    {7, {.op_type = "Log", .op_name = "loss/Log", .function = "train_step", .scope_path = "loss",
         .neginf_count = 3, .message = "Log made -Inf", .detail_json = LOG_DETAIL}},
    {5, {.op_type = "Mul", .op_name = "loss/Mul", .scope_path = "loss", .nan_count = 2,
         .message = "Mul got NaN",
         .detail_json = "{\"created\":false,\"inputs\":[{\"dtype\":\"float32\",\"shape\":[2],"
                        "\"min\":null,\"max\":null,\"nan_count\":2,\"inf_count\":0}]}"}},
    {GB_STEP_DEFAULT, {.op_type = "Sqrt", .op_name = "pre/Sqrt", .nan_count = 1}},
    {7, {.op_type = "Div", .op_name = "gradients/loss/Log_grad/Div", .forward_op = "loss/Log",
         .posinf_count = 1,
         .detail_json = "{\"backward\":true,\"created\":true,\"forward_op_type\":\"Log\"}"}},
    {5, {.op_type = "Log", .op_name = "loss/Log_1", .neginf_count = 1,
         .detail_json = "{\"created\": tru}"}},
    {9, {.op_type = "Mul", .op_name = "odd/Mul", .forward_op = "odd/Exp", .nan_count = 5,
         .detail_json = "{\"future\":{\"a\":[1,{\"b\":null}]},\"dtype\":\"f\\u00e9\"}"}},
};

static bool write_alpha(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "alpha", NULL, &w));
    for (size_t i = 0; i < sizeof alpha / sizeof alpha[0]; i++)
        CHECK(gb_summary_numerics(w, &alpha[i].r, alpha[i].step));
    CHECK(gb_summary_writer_close(w));
    return true;
}

/* Run "engine": the engine's RECORD-mode checks reach the store through
 * the default writer: log(0) creates -Inf, 0 * -Inf receives it as NaN,
 * and d sqrt(x)/dx at 0 is +Inf in the backward pass of model/Sqrt. */
static bool write_engine(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "engine", NULL, &w));
    gb_summary_set_default(w);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 0);
    gb_scope_begin();
    gb_set_step(3);
    gb_name_scope_push("net");
    gb_tensor *y = gb_log(gb_tensor_from(GB_F32, (float[]){1, 0, 4}, 1, (int64_t[]){3}));
    gb_mul(y, gb_zeros(GB_F32, 1, (int64_t[]){3}));
    gb_name_scope_pop();
    gb_set_step(4);
    gb_tensor *x = gb_scalar(GB_F64, 0);
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_name_scope_push("model");
    gb_tensor *s = gb_sqrt(x);
    gb_name_scope_pop();
    gb_tape_end(tape);
    bool ok = gb_tape_gradient(tape, s, x) != NULL;
    gb_scope_end();
    gb_disable_check_numerics();
    gb_clear_step();
    if (!ok) fprintf(stderr, "webui_fixtures: engine: %s\n", gb_error_string());
    CHECK(gb_summary_writer_close(w));
    return ok;
}

static bool write_quiet(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "quiet", NULL, &w));
    CHECK(gb_summary_scalar(w, "loss", 1.0, 0));
    CHECK(gb_summary_writer_close(w));
    return true;
}

/* ---- training health ------------------------------------------------------------------ */

static void emit_health(const gb_health_alert *a, const char *message, double wall) {
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_HEALTH, .wall_time = wall, .message = message,
                                 .detail = a});
}

static void emit_figure(const char *tag, int64_t step, double value) {
    gb_scalar_event s = {tag, value, step, NULL};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .wall_time = 100 + (double)step,
                                 .message = tag, .detail = &s});
}

static bool write_health_run(const char *db, const char *run, const gb_health_alert *alerts,
                             int nalerts, int nlayers) {
    static const char *const tags[][2] = {{"health/enc/dense/grad_norm", "health/enc/dense/dead_fraction"},
                                          {"health/out/grad_norm", "health/out/dead_fraction"}};
    gb_summary_writer *w;
    CHECK(gb_summary_writer_open(db, run, NULL, &w));
    gb_summary_set_default(w);
    for (int i = 0; i < nalerts; i++) emit_health(&alerts[i], alerts[i].kind, 50 + i);
    for (int64_t step = 0; step <= 20; step += 10)
        for (int l = 0; l < nlayers; l++) {
            emit_figure(tags[l][0], step, l ? 0.5 : 1e-6 * (double)(step + 1));
            emit_figure(tags[l][1], step, l ? 0 : 0.25);
        }
    gb_summary_set_default(NULL);
    CHECK(gb_summary_writer_close(w));
    return true;
}

static bool write_health(const char *db, const char *quiet) {
    static const gb_health_alert alpha_alerts[] = {
        {"dead_units", GB_HEALTH_WARNING, "enc/dense", NULL, 20, 0.25, 0.2,
         "{\"dead_fraction\":0.25}", "Use LeakyReLU."},
        {"vanishing_gradient", GB_HEALTH_CRITICAL, "enc/dense", "enc/dense/kernel", 10, 1.1e-5,
         1e-3, "{\"grad_norm\":1.1e-5,\"above\":0.5}", "Check the initialization."},
    };
    static const gb_health_alert beta_alerts[] = {
        {"loss_spike", GB_HEALTH_CRITICAL, NULL, NULL, 2, 9.5, 3, "{\"median\":0.7}",
         "Lower the learning rate."},
    };
    gb_summary_writer *w;
    if (!write_health_run(db, "alpha", alpha_alerts, 2, 2) ||
        !write_health_run(db, "beta", beta_alerts, 1, 1))
        return false;
    for (int i = 0; i < 2; i++) {
        CHECK(gb_summary_writer_open(i ? quiet : db, "quiet", NULL, &w));
        CHECK(gb_summary_scalar(w, "loss", 1, 0));
        CHECK(gb_summary_writer_close(w));
    }
    return true;
}

static bool write_numerics(const char *db, const char *quiet) {
    return write_alpha(db) && write_engine(db) && write_quiet(db) && write_quiet(quiet);
}

/* ---- cli ------------------------------------------------------------------------------ */

static bool write_cli(const char *db) {
    gb_summary_writer *w;
    CHECK(gb_summary_writer_open(db, "run-a", NULL, &w));
    CHECK(gb_summary_hparam_num(w, "lr", 0.01));
    const double values[] = {0.5, NAN, INFINITY, -INFINITY, 0.1, -2.25e-300};
    for (int i = 0; i < 6; i++) CHECK(gb_summary_scalar(w, "loss", values[i], i));
    gb_scope_begin();
    bool ok = gb_summary_histogram(w, "w", gb_ones(GB_F32, GB_SHAPE(3)), 0) == GB_OK;
    gb_scope_end();
    if (!ok) fprintf(stderr, "webui_fixtures: %s\n", gb_summary_last_error());
    CHECK(gb_summary_writer_close(w));
    return ok;
}

/* ---- traces --------------------------------------------------------------------------- */

static int square_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("model");
    out[0] = gb_add_scalar(gb_mul(in[0], in[0]), 1);
    gb_name_scope_pop();
    return 1;
}

static bool write_traces(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "engine", NULL, &w));
    gb_summary_set_default(w);
    CHECK(gb_summary_trace_on(w, true));
    gb_scope_begin();
    gb_function *f = gb_function_new("square", square_fn, NULL);
    gb_tensor *y;
    const int64_t sizes[] = {3, 3, 4, 4, 4};
    for (int i = 0; i < 5; i++)
        gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, 1, &sizes[i])}, 1, NULL, 0, &y);
    bool ok = gb_ok();
    gb_function_free(f); /* its last counters */
    gb_scope_end();
    if (!ok) fprintf(stderr, "webui_fixtures: traces: %s\n", gb_error_string());
    CHECK(gb_summary_trace_export(w, "square_graph", 7));
    gb_summary_set_default(NULL);
    CHECK(gb_summary_writer_close(w));
    CHECK(gb_summary_writer_open(db, "damaged", NULL, &w));
    CHECK(gb_summary_trace(w, &(gb_trace_record){.function = "broken", .reason = "first call",
                                                  .detail_json = "{\"graph\": [1, 2"}, 0));
    CHECK(gb_summary_graph(w, "text_graph", "text", "a = Add(b, c)", 1));
    CHECK(gb_summary_writer_close(w));
    /* A run that traced nothing: not among the Traces page's runs. */
    CHECK(gb_summary_writer_open(db, "untraced", NULL, &w));
    CHECK(gb_summary_scalar(w, "loss", 0.5, 1));
    CHECK(gb_summary_writer_close(w));
    return ok;
}

/* ---- profile ----------------------------------------------------------------------------- */

static int dense_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_name_scope_push("dense");
    out[0] = gb_reduce_sum(gb_matmul(in[0], in[0]), NULL, 0, false);
    gb_name_scope_pop();
    return 1;
}

static bool write_profile(const char *db) {
    gb_summary_writer *w = NULL;
    CHECK(gb_summary_writer_open(db, "prof", NULL, &w));
    gb_summary_set_default(w);
    CHECK(gb_summary_trace_on(w, true));
    gb_scope_begin();
    gb_function *f = gb_function_new("step", dense_fn, NULL);
    gb_tensor *y, *x = gb_ones(GB_F32, GB_SHAPE(8, 8));
    for (int64_t step = 1; step <= 3; step++) {
        gb_set_step(step);
        gb_function_call(f, &x, 1, NULL, 0, &y);
    }
    bool ok = gb_ok();
    gb_function_free(f);
    gb_scope_end();
    gb_clear_step();
    if (!ok) fprintf(stderr, "webui_fixtures: profile: %s\n", gb_error_string());
    CHECK(gb_summary_trace_export(w, "step_graph", 3));
    gb_summary_set_default(NULL);
    CHECK(gb_summary_writer_close(w));
    return ok;
}

/* ---- generated graphs (graph_shapes.c) ------------------------------------------------ */

static bool write_graph(const char *db, const char *shape) {
    char *json = graph_shape_json(shape, NULL);
    if (!json) {
        fprintf(stderr, "webui_fixtures: graph: no shape '%s' (10k100, 10x1000, flat5k, scope5k, "
                        "repeat12)\n", shape);
        return false;
    }
    gb_summary_writer *w = NULL;
    bool ok = gb_summary_writer_open(db, "big", NULL, &w) == GB_OK &&
              gb_summary_graph(w, "generated", "json", json, 0) == GB_OK;
    if (!ok) fprintf(stderr, "webui_fixtures: graph: %s\n", gb_summary_last_error());
    if (w) gb_summary_writer_close(w);
    free(json);
    return ok;
}

/* Run many: `traces` traces of function step, each a concrete function of
 * its own (a signature per trace) with an `nodes`-op graph stored after
 * the passes and as traced — what the list routes must answer without
 * reading. */
static bool write_many_traces(const char *db, int traces, int nodes) {
    char *graph = graph_chain_json(nodes, NULL);
    size_t cap = graph ? 2 * strlen(graph) + 256 : 0;
    char *detail = graph ? malloc(cap) : NULL;
    gb_summary_writer *w = NULL;
    bool ok = detail && gb_summary_writer_open(db, "many", NULL, &w) == GB_OK;
    for (int i = 0; ok && i < traces; i++) {
        snprintf(detail, cap, "{\"call_site\":\"many.c:%d\",\"concrete_id\":%d,\"warning\":false,"
                              "\"graph\":%s,\"graph_traced\":%s}", i, i + 1, graph, graph);
        char signature[64], reason[64];
        snprintf(signature, sizeof signature, "step(x0: float32[%d])", i + 1);
        snprintf(reason, sizeof reason, "input 0 'x0' changed dim 0: %d -> %d", i, i + 1);
        gb_trace_record r = {.function = "step", .is_retrace = i > 0, .reason = i ? reason : "first call",
                             .signature = signature, .duration_us = 1000, .nodes_before = nodes + 1,
                             .nodes_after = nodes + 1, .detail_json = detail};
        ok = gb_summary_trace(w, &r, i) == GB_OK;
    }
    if (!ok) fprintf(stderr, "webui_fixtures: many_traces: %s\n", gb_summary_last_error());
    if (w && gb_summary_writer_close(w) != GB_OK) ok = false;
    free(detail);
    free(graph);
    return ok;
}

/* ---- evil ----------------------------------------------------------------------------- */

/* Names that would drive a terminal if printed raw: ESC sequences (colour,
 * window title), BEL, a newline that forges a line, a C1 CSI (U+009B),
 * a byte that is not UTF-8; "caf\u00e9 \\o/" must pass unharmed but for
 * the backslash. */
#define EVIL "evil\x1b[31mred\x07\nline"

static bool write_evil(const char *db) {
    gb_summary_writer *w;
    CHECK(gb_summary_writer_open(db, EVIL, NULL, &w));
    CHECK(gb_summary_hparam_str(w, "note", EVIL));
    CHECK(gb_summary_hparam_str(w, "c1", "a\xc2\x9b" "2J"));
    CHECK(gb_summary_hparam_str(w, "bad", "x\xff" "y"));
    CHECK(gb_summary_hparam_str(w, "ok", "caf\xc3\xa9 \\o/"));
    CHECK(gb_summary_scalar(w, "tag\x1b]0;title\x07", 1.0, 0));
    CHECK(gb_summary_writer_close(w));
    return true;
}

/* ---- hparams and PR curves ------------------------------------------------------------- */

/* The experiment (lr, optimizer; metric acc, higher better, and loss) and
 * three runs: a (lr 0.001, adam: acc 0.5 then 0.75, loss 0.25, done, with
 * a PR curve at steps 1 and 2 over the hand case of
 * test_summary_hparams.c), b (lr 0.01, sgd: acc 0.25, failed) and c
 * (lr 0.1, no metric, still open when its writer is closed as killed). */
static bool write_hparams(const char *db) {
    static const double lrs[] = {0.001, 0.01, 0.1};
    static const char *const opts[] = {"adam", "sgd"};
    gb_hparam_domain hp[] = {
        {.name = "lr", .type = GB_HPARAM_REAL, .domain = GB_DOMAIN_DISCRETE, .value_count = 3,
         .values = lrs},
        {.name = "optimizer", .type = GB_HPARAM_STRING, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .strings = opts}};
    gb_hparam_metric metrics[] = {{.tag = "acc", .higher_is_better = true}, {.tag = "loss"}};
    gb_summary_writer *w;
    CHECK(gb_summary_writer_open(db, "a", NULL, &w));
    CHECK(gb_summary_hparams_config(w, hp, 2, metrics, 2));
    CHECK(gb_summary_hparam_num(w, "lr", 0.001));
    CHECK(gb_summary_hparam_str(w, "optimizer", "adam"));
    CHECK(gb_summary_scalar(w, "acc", 0.5, 1));
    CHECK(gb_summary_scalar(w, "acc", 0.75, 2));
    CHECK(gb_summary_scalar(w, "loss", 0.25, 2));
    static const float labels[] = {1, 1, 0, 1, 0, 0}, preds[] = {0.9f, 0.5f, 0.6f, 0.2f, 0.1f, 1.0f};
    gb_scope_begin();
    int64_t n[] = {6};
    gb_status st = GB_OK;
    for (int64_t step = 1; step <= 2 && st == GB_OK; step++)
        st = gb_summary_pr_curve(w, "pr/cat", gb_tensor_from(GB_F32, labels, 1, n),
                                 gb_tensor_from(GB_F32, preds, 1, n), 5, NULL, step);
    gb_scope_end();
    CHECK(st);
    CHECK(gb_summary_writer_close(w));
    CHECK(gb_summary_writer_open(db, "b", NULL, &w));
    CHECK(gb_summary_hparam_num(w, "lr", 0.01));
    CHECK(gb_summary_hparam_str(w, "optimizer", "sgd"));
    CHECK(gb_summary_scalar(w, "acc", 0.25, 1));
    CHECK(gb_summary_run_status(w, GB_RUN_FAILED));
    CHECK(gb_summary_writer_close(w));
    CHECK(gb_summary_writer_open(db, "c", NULL, &w));
    CHECK(gb_summary_hparam_num(w, "lr", 0.1));
    CHECK(gb_summary_run_status(w, GB_RUN_KILLED));
    CHECK(gb_summary_writer_close(w));
    return true;
}

int main(int argc, char **argv) {
    const char *kind = argc > 1 ? argv[1] : "";
    bool ok;
    if (!strcmp(kind, "api") && argc == 3) ok = write_api(argv[2]);
    else if (!strcmp(kind, "numerics") && argc == 4) ok = write_numerics(argv[2], argv[3]);
    else if (!strcmp(kind, "health") && argc == 4) ok = write_health(argv[2], argv[3]);
    else if (!strcmp(kind, "cli") && argc == 3) ok = write_cli(argv[2]);
    else if (!strcmp(kind, "evil") && argc == 3) ok = write_evil(argv[2]);
    else if (!strcmp(kind, "hparams") && argc == 3) ok = write_hparams(argv[2]);
    else if (!strcmp(kind, "traces") && argc == 3) ok = write_traces(argv[2]);
    else if (!strcmp(kind, "profile") && argc == 3) ok = write_profile(argv[2]);
    else if (!strcmp(kind, "graph") && (argc == 3 || argc == 4))
        ok = write_graph(argv[2], argc == 4 ? argv[3] : "10k100");
    else if (!strcmp(kind, "many_traces") && argc == 5)
        ok = write_many_traces(argv[2], atoi(argv[3]), atoi(argv[4]));
    else {
        fprintf(stderr, "usage: webui_fixtures api DB | numerics DB QUIET_DB | health DB QUIET_DB | cli DB | evil DB | "
                        "hparams DB | traces DB | profile DB | graph DB [SHAPE] | many_traces DB TRACES NODES\n");
        return 2;
    }
    return ok ? 0 : 1;
}
