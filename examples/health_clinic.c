/* health_clinic.c — five short Fashion-MNIST trainings, four of them sick
 * in one classic way each, and what the training-health checks say.
 *
 *   health_clinic                          prints each run's alert kinds
 *   health_clinic --db clinic.db           ... and records the runs (the Health page)
 *   health_clinic --db clinic.db --serve 6006
 *
 * The runs (Adam, --steps steps of --batch images):
 *   healthy        an MLP of two ReLU layers of 64, learning rate 1e-3
 *   lr_too_large   the same at 3e-1, 300x too large: the first steps move
 *                  each weight by a large part of itself (large_update)
 *                  and the loss spikes (loss_spike); on the way the
 *                  weights balloon (weight_growth), most ReLUs die
 *                  (dead_units), the loss falls back (loss_recovered) and
 *                  the biases may drift (bias_drift): consequences it may
 *                  raise too. At 100x (1e-1) Adam often rides it out
 *                  without a spike: half the seeds tried showed none.
 *   deep_sigmoid   ten sigmoid layers of 32, the first drawn from N(0, 1):
 *                  it starts saturated (saturated_units) and the gradient
 *                  fades toward the input (vanishing_gradient)
 *   dead_relu      the healthy MLP with its first layer's biases at -1:
 *                  most of its units are zero for every image (dead_units)
 *   lr_tiny        the healthy MLP at 1e-7: the weights barely move
 *                  (not_learning)
 * Each run is its own run in the store ("healthy", ...; a second program
 * run into the same store makes "healthy_2", ...). The health checks are
 * on because a summary writer is the default (or, without --db, because
 * this program listens for their events); every 20 steps they measure
 * each layer and report what looks wrong, once per onset. The program
 * counts the GB_EVENT_HEALTH events of each run and prints their kinds;
 * it exits 3 when a run lacks a kind of its diagnosis or raises one that
 * is neither its diagnosis nor a consequence of it, so a test can hold the
 * checks to their diagnosis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "fmnist_classes.h"
#include "gb_board.h"
#include "gb_summary.h"
#include "gb_summary_callback.h"
#include "glassbox.h"
#include "run_store.h"

typedef struct config {
    const char *db, *data_dir;
    int steps, serve_port;
    int64_t batch;
    uint64_t seed;
    bool alerts;
} config;

/* ---- the five patients -------------------------------------------------------------- */

typedef struct patient {
    const char *name;
    double lr;
    gb_module *(*model)(void);
    const char *expected;     /* the alert kinds it must raise, space-separated */
    const char *consequences; /* kinds it may raise too: what its illness leads to */
} patient;

static gb_module *mlp(gb_activation act, double first_bias) {
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(64, &(gb_dense_options){
                                              .name = "hidden1", .activation = act,
                                              .bias_initializer = {.kind = GB_INIT_CONSTANT, .a = first_bias}}));
    gb_sequential_add(m, gb_dense_new(64, &(gb_dense_options){.name = "hidden2", .activation = act}));
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, &(gb_dense_options){.name = "logits"}));
    return m;
}

static gb_module *healthy(void) { return mlp(GB_ACT_RELU, 0); }
static gb_module *dead_relu(void) { return mlp(GB_ACT_RELU, -1); }

/* Ten sigmoid layers: each passes back at most a quarter of the gradient
 * it gets, so the first layers get a millionth of the last one's; the
 * first layer, drawn from N(0, 1) on 784 raw pixels, starts saturated. */
static gb_module *deep_sigmoid(void) {
    gb_module *m = gb_sequential_new("sigmoid_stack");
    for (int i = 0; i < 10; i++) {
        char name[24];
        snprintf(name, sizeof name, "sigmoid%d", i + 1);
        gb_initializer too_large = {.kind = GB_INIT_RANDOM_NORMAL, .b = 1};
        gb_sequential_add(m, gb_dense_new(32, &(gb_dense_options){
                                                  .name = name, .activation = GB_ACT_SIGMOID,
                                                  .kernel_initializer = i ? (gb_initializer){0} : too_large}));
    }
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, &(gb_dense_options){.name = "logits"}));
    return m;
}

static const patient patients[] = {
    {"healthy", 1e-3, healthy, "", ""},
    {"lr_too_large", 3e-1, healthy, "large_update loss_spike",
     "bias_drift dead_units loss_recovered weight_growth"},
    {"deep_sigmoid", 1e-3, deep_sigmoid, "saturated_units vanishing_gradient", ""},
    {"dead_relu", 1e-3, dead_relu, "dead_units", ""},
    {"lr_tiny", 1e-7, healthy, "not_learning", ""},
};
enum { NPATIENTS = sizeof patients / sizeof patients[0] };

/* ---- what the checks said ------------------------------------------------------------ */

enum { MAX_KINDS = 16 };

typedef struct diagnosis {
    char kinds[MAX_KINDS][32];
    int nkinds, alerts;
    bool print;               /* --alerts: each alert's line as it comes */
} diagnosis;

static void on_health(const gb_event *ev, void *user) {
    diagnosis *d = user;
    const gb_health_alert *a = ev->detail;
    d->alerts++;
    if (d->print) printf("  %s\n", ev->message);
    for (int i = 0; i < d->nkinds; i++)
        if (!strcmp(d->kinds[i], a->kind)) return;
    if (d->nkinds < MAX_KINDS) snprintf(d->kinds[d->nkinds++], sizeof d->kinds[0], "%s", a->kind);
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

/* The kinds, sorted, space-separated. */
static void kinds_text(diagnosis *d, char *out, size_t n) {
    qsort(d->kinds, (size_t)d->nkinds, sizeof d->kinds[0], by_name);
    out[0] = 0;
    for (int i = 0; i < d->nkinds; i++) {
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", i ? " " : "", d->kinds[i]);
    }
}

/* Whether `kind` is one of the space-separated words of `list`. */
static bool listed(const char *list, const char *kind) {
    const size_t n = strlen(kind);
    for (const char *p = list; (p = strstr(p, kind)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return true;
    return false;
}

/* Every kind of the diagnosis raised, and nothing beyond it and its
 * consequences. */
static bool as_diagnosed(const diagnosis *d, const patient *p) {
    for (int i = 0; i < d->nkinds; i++)
        if (!listed(p->expected, d->kinds[i]) && !listed(p->consequences, d->kinds[i])) return false;
    for (const char *k = p->expected; *k;) {
        const size_t n = strcspn(k, " ");
        bool seen = false;
        for (int i = 0; i < d->nkinds && !seen; i++)
            seen = strlen(d->kinds[i]) == n && !strncmp(d->kinds[i], k, n);
        if (!seen) return false;
        k += n + (k[n] == ' ');
    }
    return true;
}

/* ---- one run ---------------------------------------------------------------------------- */

typedef struct data {
    gb_tensor *x, *y;
} data;

/* Trains one patient; true when its alerts are the expected ones. */
static bool run_one(const config *c, const data *d, const patient *p, bool *ok) {
    gb_summary_writer *w = NULL;
    if (c->db) {
        if (!example_open_writer(p->name, c->db, NULL, &w)) return *ok = false;
        gb_summary_set_default(w);
    }
    diagnosis dx = {.print = c->alerts};
    int obs = gb_observer_add(on_health, &dx, GB_EVENT_HEALTH);
    gb_nn_clear_session();
    gb_nn_set_seed(c->seed);
    gb_module *model = p->model();
    gb_optimizer *opt = gb_adam(p->lr);
    gb_model_compile(model, &(gb_compile_options){
                                .optimizer = opt,
                                .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                .metrics = (const char *[]){"accuracy"},
                                .nmetrics = 1});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1;
    o.batch_size = c->batch;
    o.steps_per_epoch = c->steps;
    o.seed = c->seed;
    o.verbose = 0;
    gb_callback *cb = w ? gb_summary_callback(w, NULL) : NULL;
    o.callbacks = cb ? &cb : NULL;
    o.ncallbacks = cb ? 1 : 0;
    gb_history *h = gb_model_fit(model, d->x, d->y, &o);
    gb_observer_remove(obs);
    *ok = h != NULL;
    char kinds[512];
    kinds_text(&dx, kinds, sizeof kinds);
    bool as_expected = *ok && as_diagnosed(&dx, p);
    if (*ok)
        printf("%-13s loss %.4f  %d alert%s: %s%s\n", p->name,
               gb_history_value(h, "loss", gb_history_epochs(h) - 1), dx.alerts,
               dx.alerts == 1 ? "" : "s", dx.nkinds ? kinds : "none",
               as_expected ? "" : "  (not what this run should raise)");
    else
        fprintf(stderr, "health_clinic: %s: %s\n", p->name, gb_error_string());
    fflush(stdout);
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(model);
    gb_optimizer_free(opt);
    if (w) gb_summary_writer_close(w);
    return as_expected;
}

/* ---- flags and main ---------------------------------------------------------------------- */

static int parse(int argc, char **argv, config *c) {
    const example_flag flags[] = {
        {"--db", "FILE", "record the five runs into this store", EXAMPLE_STRING, &c->db},
        {"--steps", "N", "train steps per run", EXAMPLE_INT, &c->steps},
        {"--batch", "N", "images per step", EXAMPLE_INT64, &c->batch},
        {"--seed", "N", "initial weights and shuffling", EXAMPLE_UINT64, &c->seed},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &c->data_dir},
        {"--alerts", NULL, "print each alert's report as it comes", EXAMPLE_SWITCH, &c->alerts},
        {"--serve", "PORT", "serve the live dashboard on PORT (needs --db; 0: any free port, -1: none)",
         EXAMPLE_INT, &c->serve_port},
    };
    const example_program p = {"health_clinic",
                               "Trains five small Fashion-MNIST models, four of them failing in one "
                               "classic way each, and prints what the training-health checks found.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (c->steps < 100 || c->batch < 1)
        return example_usage_error(&p, "--steps must be >= 100 (a weight's growth shows over five "
                                       "checks, 20 steps apart) and --batch >= 1");
    if (c->serve_port >= 0 && !c->db)
        return example_usage_error(&p, "--serve needs --db FILE (what the dashboard shows)");
    return EXAMPLE_RUN;
}

int main(int argc, char **argv) {
    config c = {.steps = 300, .batch = 64, .seed = 1, .data_dir = GB_FASHION_MNIST_DIR,
                .serve_port = -1};
    int rc = parse(argc, argv, &c);
    if (rc != EXAMPLE_RUN) return rc;
    gb_scope_begin();   /* the data set's tensors live until the end */
    gb_mnist m;
    if (!gb_mnist_load(c.data_dir, GB_MNIST_CLASSES, &m)) {
        fprintf(stderr, "health_clinic: %s\n", gb_error_string());
        return 1;
    }
    gb_board *board = NULL;
    if (c.serve_port >= 0 && !example_serve("health_clinic", c.db, c.serve_port, &board)) return 1;
    data d = {gb_images_to_float(m.train_images, GB_IMAGES_FLAT), m.train_labels};
    int wrong = 0, failed = 0;
    for (int i = 0; i < NPATIENTS; i++) {
        bool ok;
        wrong += !run_one(&c, &d, &patients[i], &ok);
        failed += !ok;
        gb_clear_error();
    }
    gb_board_stop(board);
    gb_scope_end();
    if (c.db) printf("the runs are in %s\n", c.db);
    return failed ? 1 : wrong ? 3 : 0;
}
