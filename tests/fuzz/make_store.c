/* make_store.c — writes the store the store and server fuzz targets start
 * from: tests/fuzz/stores/every_kind.sqlite.
 *
 *   make_fuzz_store FILE
 *
 * Two runs written through the summary writer, together holding every
 * kind of row the reader returns: hyperparameters (a number, a string),
 * scalars with NaN and +-Inf at steps spread far enough apart that the
 * rollup levels hold rows, histograms, images (several samples a step),
 * embeddings (one with metadata and a sprite, one without), an audio clip,
 * text, a graph, a precision-recall curve, the experiment's hparams and
 * metrics, a run's status, traces (a retrace with a detail), function counters, numerics alerts (with a
 * detail, without, and with a damaged one), op timings, a warning, a
 * placement, training-health alerts (of a layer, of the model) and the
 * health figures of two layers. fuzz_summary_reader_store.c damages a copy of it row by row;
 * fuzz_webui_router.c serves it as it is.
 *
 * Kept small (a few dozen 512-byte pages) so libFuzzer's byte patches land
 * on rows often: the file is then rewritten with 512-byte pages, a
 * rollback journal (a read-only reader opens it without side files, even
 * in the source tree) and no free pages. The run's host, pid and command
 * line are fixed so the file says nothing of the machine that wrote it.
 * Run it again when the schema changes (the targets refuse a base store of
 * another schema version), and copy FILE over the old one.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "gb_health.h"
#include "gb_observer.h"
#include "gb_summary.h"
#include "glassbox.h"

#define CHECK(call)                                                                      \
    do {                                                                                 \
        if ((call) != GB_OK) {                                                           \
            fprintf(stderr, "make_fuzz_store: %s: %s\n", #call, gb_summary_last_error()); \
            return false;                                                                \
        }                                                                                \
    } while (0)

/* Steps that reach rollup levels 2 to 5 (blocks of 256 to 1M steps). */
static const int64_t loss_steps[] = {0, 1, 2, 3, 300, 301, 4096, 70000, 1048576, 1048577};

static bool write_summaries(gb_summary_writer *w) {
    CHECK(gb_summary_hparam_num(w, "learning_rate", 0.001));
    CHECK(gb_summary_hparam_str(w, "optimizer", "adam"));
    for (size_t i = 0; i < sizeof loss_steps / sizeof loss_steps[0]; i++) {
        double v = i == 2 ? NAN : i == 5 ? INFINITY : i == 7 ? -INFINITY : 1.0 / (double)(i + 1);
        CHECK(gb_summary_scalar(w, "loss", v, loss_steps[i]));
    }
    for (int64_t s = 0; s < 3; s++) CHECK(gb_summary_scalar(w, "accuracy", 0.25 * (double)s, s));
    gb_scope_begin();
    bool ok = true;
    for (int64_t s = 0; s < 3 && ok; s++) {
        float values[6] = {0, 1, 2, 3, (float)s, s == 1 ? NAN : 5};
        unsigned char pixels[2 * 2 * 2 * 1];
        for (int i = 0; i < 8; i++) pixels[i] = (unsigned char)(i * 30 + s);
        ok = gb_summary_histogram(w, "weights", gb_tensor_from(GB_F32, values, 1, (int64_t[]){6}),
                                  s * 10) == GB_OK &&
             gb_summary_image(w, "inputs", gb_tensor_from(GB_U8, pixels, 4, (int64_t[]){2, 2, 2, 1}),
                              2, s * 10) == GB_OK &&
             gb_summary_text(w, "notes", s == 2 ? "caf\xc3\xa9 <b>\"x\"</b>\n" : "note", s * 10) ==
                 GB_OK;
    }
    gb_scope_end();
    if (!ok) {
        fprintf(stderr, "make_fuzz_store: %s\n", gb_summary_last_error());
        return false;
    }
    CHECK(gb_summary_graph(w, "model", "text", "x -> Dense -> y", 0));
    static const double lrs[] = {0.001, 0.01};
    static const char *const optimizers[] = {"adam", "sgd"};
    gb_hparam_domain hp[] = {
        {.name = "learning_rate", .type = GB_HPARAM_REAL, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .values = lrs},
        {.name = "optimizer", .type = GB_HPARAM_STRING, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .strings = optimizers},
        {.name = "dropout", .type = GB_HPARAM_REAL, .domain = GB_DOMAIN_INTERVAL, .max = 0.5}};
    gb_hparam_metric metrics[] = {{.tag = "accuracy", .higher_is_better = true}, {.tag = "loss"}};
    CHECK(gb_summary_hparams_config(w, hp, 3, metrics, 2));
    gb_scope_begin();
    float labels[4] = {1, 0, 1, 0}, predictions[4] = {0.9f, 0.4f, 0.3f, 0.0f};
    gb_status pr = gb_summary_pr_curve(w, "pr", gb_tensor_from(GB_F32, labels, 1, (int64_t[]){4}),
                                       gb_tensor_from(GB_F32, predictions, 1, (int64_t[]){4}), 3,
                                       NULL, 0);
    gb_scope_end();
    CHECK(pr);
    gb_scope_begin();
    const float points[6] = {1, 0, 0, 1, 0.5f, 0.5f};
    const char *names[] = {"a", "b", "a"};
    unsigned char px[3 * 2 * 2] = {0, 40, 80, 120, 160, 200, 240, 30, 60, 90, 120, 150};
    const float sound[4] = {0, 0.5f, 1.5f, -1};
    gb_status media = gb_summary_embedding(w, "points", gb_tensor_from(GB_F32, points, 2, (int64_t[]){3, 2}),
                                           gb_strings(names, 1, (int64_t[]){3}), NULL,
                                           gb_tensor_from(GB_U8, px, 4, (int64_t[]){3, 2, 2, 1}), 0);
    if (media == GB_OK)
        media = gb_summary_embedding(w, "points", gb_tensor_from(GB_F32, points, 2, (int64_t[]){3, 2}), NULL,
                                     NULL, NULL, 1);
    if (media == GB_OK)
        media = gb_summary_audio(w, "sound", gb_tensor_from(GB_F32, sound, 2, (int64_t[]){1, 4}), 8000, 1, 0);
    gb_scope_end();
    CHECK(media);
    return true;
}

static bool write_events(gb_summary_writer *w) {
    CHECK(gb_summary_trace(w, &(gb_trace_record){.function = "train_step", .duration_us = 120,
                                                  .nodes_before = 9, .nodes_after = 7}, 0));
    CHECK(gb_summary_trace(w, &(gb_trace_record){.function = "train_step", .is_retrace = true,
                                                  .reason = "new shape", .signature = "(f32[4])",
                                                  .duration_us = NAN, .nodes_before = -1,
                                                  .nodes_after = -1,
                                                  .detail_json = "{\"calls\":2}"}, 1));
    CHECK(gb_summary_numerics(
        w, &(gb_numerics_record){
               .op_type = "Log", .op_name = "loss/Log", .function = "train_step",
               .scope_path = "loss", .neginf_count = 1, .message = "Log made -Inf",
               .detail_json = "{\"output_index\":0,\"dtype\":\"float32\",\"shape\":[2],"
                              "\"first_index\":1,\"created\":true,\"backward\":false,"
                              "\"forward_op_type\":\"\",\"inputs\":[{\"dtype\":\"float32\","
                              "\"shape\":[2],\"min\":0,\"max\":1.5,\"nan_count\":0,"
                              "\"inf_count\":0}]}"},
        3));
    CHECK(gb_summary_numerics(w, &(gb_numerics_record){.op_type = "Mul", .nan_count = 2}, 2));
    CHECK(gb_summary_function_stats(w, &(gb_function_record){.function = "train_step", .calls = 64,
                                                             .cache_hits = 62, .traces = 2,
                                                             .concrete = 2, .trace_ms = 3.5}));
    CHECK(gb_summary_numerics(w, &(gb_numerics_record){.op_type = "Div", .forward_op = "loss/Log",
                                                        .posinf_count = 1,
                                                        .detail_json = "{\"created\": tru}"},
                              GB_STEP_DEFAULT));
    /* Op timings, a placement and a warning arrive as the engine's events. */
    gb_summary_set_default(w);
    gb_set_step(5);
    static const gb_event events[] = {
        {GB_EVENT_OP, 1e9, "MatMul", "dense/MatMul", "/device:CPU:0", "MatMul", 12.5, NULL},
        {GB_EVENT_OP, 1e9, "MatMul", "dense/MatMul", "/device:CPU:0", "MatMul", 7.5, NULL},
        {GB_EVENT_PLACEMENT, 1e9, "Add", "dense/Add", "/device:CPU:0", "Add on CPU", 0, NULL},
        {GB_EVENT_WARNING, 1e9, NULL, NULL, NULL, "5 retraces of train_step", 0, NULL},
    };
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) gb_observer_emit(&events[i]);
    /* Training health: two alerts (one with NaN figures) and two layers' figures. */
    static const gb_health_alert health[] = {
        {"vanishing_gradient", GB_HEALTH_CRITICAL, "dense", "dense/kernel", 4, 2e-9, 1e-3,
         "{\"grad_norm\":2e-9,\"above\":0.5}", "check the initialization"},
        {"loss_spike", GB_HEALTH_INFO, NULL, NULL, 6, NAN, 3, "{\"median\":0.7}", NULL},
    };
    for (size_t i = 0; i < sizeof health / sizeof health[0]; i++)
        gb_observer_emit(&(gb_event){.kind = GB_EVENT_HEALTH, .wall_time = 1e9,
                                     .message = health[i].kind, .detail = &health[i]});
    for (int64_t s = 0; s < 3; s++) {
        gb_scalar_event fig[] = {{"health/dense/grad_norm", 1e-9 * (double)(s + 1), s * 2, NULL},
                                 {"health/out/grad_norm", 0.25, s * 2, NULL}};
        for (size_t i = 0; i < 2; i++)
            gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .wall_time = 1e9,
                                         .message = fig[i].tag, .detail = &fig[i]});
    }
    gb_clear_step();
    gb_summary_set_default(NULL);
    return true;
}

static bool write_runs(const char *path) {
    gb_summary_writer *w = NULL;
    gb_summary_options opts = {.histogram_buckets = 3};
    CHECK(gb_summary_writer_open(path, "alpha", &opts, &w));
    bool ok = write_summaries(w) && write_events(w);
    CHECK(gb_summary_writer_close(w));
    if (!ok) return false;
    CHECK(gb_summary_writer_open(path, "beta", &opts, &w));
    CHECK(gb_summary_hparam_num(w, "learning_rate", 0.01));
    CHECK(gb_summary_scalar(w, "loss", 0.5, 7));
    CHECK(gb_summary_writer_close(w));
    return true;
}

/* Small pages, a rollback journal, no free pages, no trace of this machine. */
static bool compact(const char *path) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "UPDATE runs SET host = 'fuzz-host', pid = 1, status_host = 'fuzz-host', "
                          "status_pid = 1, "
                          "command_line = 'make_fuzz_store every_kind.sqlite';"
                          "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;",
                          NULL, NULL, NULL);
    if (rc != SQLITE_OK) fprintf(stderr, "make_fuzz_store: %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc == SQLITE_OK;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_fuzz_store FILE (a new file: the fuzz targets' base store)\n");
        return 2;
    }
    if (remove(argv[1]) != 0 && errno != ENOENT) {
        fprintf(stderr, "make_fuzz_store: cannot replace %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    return write_runs(argv[1]) && compact(argv[1]) ? 0 : 1;
}
