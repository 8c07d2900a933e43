/* summary_showcase.c — a small, deterministic store for every dashboard.
 *
 *     build/examples/summary_showcase --db showcase.db
 *
 * Writes three runs (different optimizers and learning rates, recorded as
 * hyperparameters) with loss / accuracy / learning-rate curves — one NaN
 * loss, one +Inf loss and one spike in the first run — weight histograms
 * every 10 steps, a few grayscale and colour images, markdown text, a
 * graph, traces and a numerics alert. The values depend only on the code
 * (a fixed-seed generator), so tests can assert on them; it runs in well
 * under a second. The file is replaced if it exists.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gb_summary.h"
#include "flags.h"
#include "glassbox.h"

enum { STEPS = 200, NAN_STEP = 57, INF_STEP = 58, SPIKE_STEP = 120 };

typedef struct run_spec {
    const char *name, *optimizer;
    double learning_rate, decay;
    int batch_size;
} run_spec;

static const run_spec runs[] = {
    {"mlp-adam-lr0.001", "adam", 1e-3, 0.020, 128},
    {"mlp-sgd-lr0.1", "sgd", 1e-1, 0.012, 64},
    {"cnn-adam-lr0.0003", "adam", 3e-4, 0.030, 128},
};

/* A fixed-seed generator: xorshift64* and Box-Muller. */
static uint64_t rng_state;
static double uniform(void) {
    rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double normal(void) {
    double u = uniform() + 1e-12, v = uniform();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static int check(gb_status st) {
    if (st != GB_OK) fprintf(stderr, "summary_showcase: %s\n", gb_summary_last_error());
    return st != GB_OK;
}

static int scalars(gb_summary_writer *w, const run_spec *r, int index, int64_t step) {
    double loss = 2.3 * exp(-r->decay * (double)step) + 0.25 + 0.03 * normal();
    if (index == 0 && step == NAN_STEP) loss = NAN;
    if (index == 0 && step == INF_STEP) loss = INFINITY;
    if (index == 0 && step == SPIKE_STEP) loss = 25.0;
    double accuracy = 0.1 + 0.8 * (1 - exp(-r->decay * (double)step)) + 0.01 * normal();
    double lr = r->learning_rate * pow(0.5, (double)(step / 100));
    return check(gb_summary_scalar(w, "loss", loss, step)) |
           check(gb_summary_scalar(w, "accuracy", accuracy, step)) |
           check(gb_summary_scalar(w, "learning_rate", lr, step));
}

/* Weights spreading out as training goes on. */
static int histograms(gb_summary_writer *w, int index, int64_t step) {
    float v[512];
    double spread = 0.05 + 0.002 * (double)step, shift = 0.1 * index;
    for (int i = 0; i < 512; i++) v[i] = (float)(shift + spread * normal());
    gb_tensor *t = gb_from_f32(v, GB_SHAPE(16, 32));
    return check(gb_summary_histogram(w, "dense_1/kernel", t, step));
}

/* Two 28x28 grayscale digits-like blobs (float) and one 16x16 RGB (uint8). */
static int images(gb_summary_writer *w, int64_t step) {
    static float gray[2 * 28 * 28];
    for (int n = 0; n < 2; n++)
        for (int y = 0; y < 28; y++)
            for (int x = 0; x < 28; x++) {
                double dx = x - 14 - 4 * n, dy = y - 14 + (double)step / 50;
                gray[(n * 28 + y) * 28 + x] = (float)exp(-(dx * dx + dy * dy) / 40.0);
            }
    static uint8_t rgb[16 * 16 * 3];
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) {
            uint8_t *p = &rgb[(y * 16 + x) * 3];
            p[0] = (uint8_t)(x * 16), p[1] = (uint8_t)(y * 16), p[2] = (uint8_t)(step % 256);
        }
    return check(gb_summary_image(w, "inputs", gb_from_f32(gray, GB_SHAPE(2, 28, 28, 1)), 2, step)) |
           check(gb_summary_image(w, "palette", gb_tensor_from(GB_U8, rgb, GB_SHAPE(1, 16, 16, 3)),
                                  1, step));
}

/* A small graph in the Graphs dashboard's JSON (webui/http_api.md): what
 * gb_summary_trace_export writes for a traced function. */
#define SHOWCASE_GRAPH                                                                          \
    "{\"nodes\":[{\"name\":\"x\",\"op\":\"Placeholder\",\"inputs\":[],\"outputs\":"            \
    "[{\"dtype\":\"float32\",\"shape\":[-1,784]}]},{\"name\":\"dense/kernel\",\"op\":"         \
    "\"ReadVariableOp\",\"inputs\":[],\"outputs\":[{\"dtype\":\"float32\",\"shape\":[784,10]}]}," \
    "{\"name\":\"dense/MatMul\",\"op\":\"MatMul\",\"inputs\":[\"x\",\"dense/kernel\"],"          \
    "\"outputs\":[{\"dtype\":\"float32\",\"shape\":[-1,10]}]}],\"outputs\":[\"dense/MatMul\"]}"

static int engine_events(gb_summary_writer *w) {
    gb_trace_record first = {.function = "train_step", .reason = "first call",
                             .signature = "(x: float32[128,784], y: int64[128])",
                             .duration_us = 5300, .nodes_before = 42, .nodes_after = 31};
    gb_trace_record again = first;
    again.is_retrace = true;
    again.reason = "input 0 (x) changed dim 0 from 128 to 96";
    again.signature = "(x: float32[96,784], y: int64[96])";
    gb_numerics_record alert = {.op_type = "Log", .op_name = "loss/Log",
                                .scope_path = "loss", .nan_count = 0, .neginf_count = 1,
                                .message = "Log produced -Inf from a zero input"};
    return check(gb_summary_trace(w, &first, 0)) | check(gb_summary_trace(w, &again, 190)) |
           check(gb_summary_numerics(w, &alert, NAN_STEP)) |
           check(gb_summary_graph(w, "train_step", "json", SHOWCASE_GRAPH, 0));
}

static int write_run(const char *db, int index) {
    const run_spec *r = &runs[index];
    gb_summary_writer *w;
    if (check(gb_summary_writer_open(db, r->name, NULL, &w))) return 1;
    gb_summary_set_default(w);   /* the calls below pass NULL: the default writer */
    int bad = check(gb_summary_hparam_str(NULL, "optimizer", r->optimizer)) |
              check(gb_summary_hparam_num(NULL, "learning_rate", r->learning_rate)) |
              check(gb_summary_hparam_num(NULL, "batch_size", r->batch_size)) |
              check(gb_summary_hparam_str(NULL, "model", index == 2 ? "cnn" : "mlp"));
    rng_state = 0x9E3779B97F4A7C15ull + (uint64_t)index;
    for (int64_t step = 0; step < STEPS && !bad; step++) {
        gb_scope_begin();
        bad |= scalars(NULL, r, index, step);
        if (step % 10 == 0) bad |= histograms(NULL, index, step);
        if (step % 50 == 0) bad |= images(NULL, step);
        gb_scope_end();
    }
    char notes[256];
    snprintf(notes, sizeof notes,
             "# %s\n\n*optimizer* `%s`, learning rate %g, batch %d.\n", r->name, r->optimizer,
             r->learning_rate, r->batch_size);
    bad |= check(gb_summary_text(NULL, "notes", notes, 0));
    if (index == 0) bad |= engine_events(NULL);
    bad |= check(gb_summary_writer_close(w));
    return bad;
}

int main(int argc, char **argv) {
    const char *db = NULL;
    const example_flag flags[] = {
        {"--db", "FILE", "the store to write (replaced: it is made anew)", EXAMPLE_STRING, &db},
    };
    const example_program p = {"summary_showcase", "Writes a store with every kind of summary, for the dashboards.",
                               flags, 1, NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (!db) return example_usage_error(&p, "--db FILE is required");
    char side[4096];
    unlink(db);
    snprintf(side, sizeof side, "%s-wal", db), unlink(side);
    snprintf(side, sizeof side, "%s-shm", db), unlink(side);
    for (int i = 0; i < (int)(sizeof runs / sizeof runs[0]); i++)
        if (write_run(db, i)) return 1;
    printf("summary_showcase: wrote %d runs to %s\n", (int)(sizeof runs / sizeof runs[0]), db);
    return 0;
}
