/* hparam_sweep.c — a hyperparameter sweep on Fashion-MNIST, one store,
 * for the HParams and PR Curves dashboards.
 *
 *   hparam_sweep --db sweep.db                  12 short runs, one after another
 *   hparam_sweep --db sweep.db --runs 24 --epochs 3 --serve 6006
 *
 * Each run trains an MLP (784-128-dropout-10) with `fit` over the grid of
 * learning rate (1e-4, 1e-3, 1e-2), batch size (32, 128), optimizer
 * (Adam, SGD with momentum 0.9) and dropout rate (0, 0.3), each run a
 * different point of it, on the first --limit training images with the
 * first --val-limit test images as validation data. The program writes
 * no hyperparameter itself: fit's summary callback records the compile
 * and fit arguments (optimizer and its config, loss, batch size, epochs)
 * and the layer sizes and dropout rate from the model's config; the
 * program only declares the experiment once (gb_summary_hparams_config:
 * the domains of what it varies, and the metrics to compare by), and asks
 * the callback for the ten classes' precision-recall curves on the
 * validation images at each epoch. A run that fails says so
 * (gb_summary_run_status). With --serve the dashboard is live while the
 * sweep runs: rows and lines arrive as runs finish epochs.
 */
#include <stdio.h>
#include <string.h>

#include "flags.h"
#include "fmnist_classes.h"
#include "gb_board.h"
#include "gb_summary_callback.h"
#include "glassbox.h"
#include "run_store.h"

typedef struct config {
    const char *db, *data_dir;
    int runs, epochs, serve_port, verbose;
    int64_t limit, val_limit;
    uint64_t seed;
} config;

/* The grid; run k takes lr k % 3, batch k % 2, optimizer (k / 2) % 2 and
 * dropout (k / 3) % 2 — twelve runs cover every value of each, in 12
 * different combinations. */
static const double lrs[] = {1e-4, 1e-3, 1e-2};
static const double batches[] = {32, 128};
static const char *const optimizers[] = {"Adam", "SGD"};
static const double dropouts[] = {0, 0.3};

typedef struct point {
    double lr, dropout;
    int64_t batch;
    const char *optimizer;
} point;

static point grid_point(int k) {
    return (point){lrs[k % 3], dropouts[(k / 3) % 2], (int64_t)batches[k % 2], optimizers[(k / 2) % 2]};
}

/* The experiment, under the names the summary callback records them. */
static gb_status declare(gb_summary_writer *w) {
    gb_hparam_domain hp[] = {
        {.name = "optimizer.learning_rate", .display_name = "learning rate", .type = GB_HPARAM_REAL,
         .domain = GB_DOMAIN_DISCRETE, .value_count = 3, .values = lrs},
        {.name = "batch_size", .type = GB_HPARAM_INT, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .values = batches},
        {.name = "optimizer", .type = GB_HPARAM_STRING, .domain = GB_DOMAIN_DISCRETE,
         .value_count = 2, .strings = optimizers},
        {.name = "dropout0.rate", .display_name = "dropout", .type = GB_HPARAM_REAL,
         .domain = GB_DOMAIN_DISCRETE, .value_count = 2, .values = dropouts},
    };
    gb_hparam_metric metrics[] = {
        {.tag = "epoch/val_accuracy", .display_name = "val accuracy", .higher_is_better = true},
        {.tag = "epoch/val_loss", .display_name = "val loss"},
        {.tag = "epoch/accuracy", .display_name = "accuracy", .higher_is_better = true},
        {.tag = "epoch/loss", .display_name = "loss"},
    };
    return gb_summary_hparams_config(w, hp, 4, metrics, 4);
}

static gb_module *mlp(double dropout, uint64_t seed) {
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dropout_new(dropout, seed, NULL));
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return m;
}

static gb_optimizer *optimizer(const point *p) {
    if (!strcmp(p->optimizer, "Adam")) return gb_adam(p->lr);
    return gb_sgd_momentum(p->lr, 0.9, false);
}

typedef struct data {
    gb_tensor *x, *y, *vx, *vy;
} data;

/* One run of the sweep: its writer, model, fit; its status at the end. */
static bool run_one(const config *c, const data *d, int k) {
    point p = grid_point(k);
    char name[96];
    snprintf(name, sizeof name, "%s_lr%g_bs%lld_do%g", p.optimizer, p.lr, (long long)p.batch, p.dropout);
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(c->db, name, &(gb_summary_options){.new_run = true}, &w) != GB_OK) {
        fprintf(stderr, "hparam_sweep: %s\n", gb_summary_last_error());
        return false;
    }
    gb_summary_set_default(w);
    if (k == 0 && declare(w) != GB_OK) fprintf(stderr, "hparam_sweep: %s\n", gb_summary_last_error());
    gb_nn_set_seed(c->seed + (uint64_t)k);
    gb_module *model = mlp(p.dropout, c->seed + (uint64_t)k);
    gb_optimizer *opt = optimizer(&p);
    gb_model_compile(model, &(gb_compile_options){
                                .optimizer = opt,
                                .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                .metrics = (const char *[]){"accuracy"},
                                .nmetrics = 1});
    gb_callback *cb = gb_summary_callback(w, &(gb_summary_callback_options){
                                                 .update_freq = -1, .no_graph = true,
                                                 .pr_x = d->vx, .pr_y = d->vy, .pr_from_logits = true,
                                                 .pr_class_names = fmnist_class_names});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = c->epochs;
    o.batch_size = p.batch;
    o.seed = c->seed;
    o.verbose = c->verbose;
    o.val_x = d->vx;
    o.val_y = d->vy;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(model, d->x, d->y, &o);
    bool ok = h != NULL;
    if (ok) {
        printf("%-32s val_accuracy %.4f\n", name,
               gb_history_value(h, "val_accuracy", gb_history_epochs(h) - 1));
    } else {
        fprintf(stderr, "hparam_sweep: %s: %s\n", name, gb_error_string());
        gb_summary_run_status(w, GB_RUN_FAILED);
        gb_clear_error();
    }
    fflush(stdout);
    gb_history_free(h);
    gb_callback_free(cb);
    gb_module_free(model);
    gb_optimizer_free(opt);
    gb_summary_writer_close(w);
    return ok;
}

static int parse(int argc, char **argv, config *c) {
    const example_flag flags[] = {
        {"--db", "FILE", "the store every run of the sweep writes into (required)", EXAMPLE_STRING, &c->db},
        {"--runs", "N", "runs of the sweep (points of the grid; at most 24)", EXAMPLE_INT, &c->runs},
        {"--epochs", "N", "epochs per run", EXAMPLE_INT, &c->epochs},
        {"--limit", "N", "train on the first N images", EXAMPLE_INT64, &c->limit},
        {"--val-limit", "N", "validate on the first N test images", EXAMPLE_INT64, &c->val_limit},
        {"--seed", "N", "initial weights and shuffling", EXAMPLE_UINT64, &c->seed},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &c->data_dir},
        {"--serve", "PORT", "serve the live dashboard on PORT (0: any free port, -1: none)", EXAMPLE_INT,
         &c->serve_port},
        {"--verbose", "0|1|2", "quiet, a progress bar, or a line per epoch", EXAMPLE_INT, &c->verbose},
    };
    const example_program p = {"hparam_sweep",
                               "Sweeps learning rate, batch size, optimizer and dropout on "
                               "Fashion-MNIST into one store.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (!c->db) return example_usage_error(&p, "--db FILE is required (the sweep's store)");
    if (c->runs < 1 || c->runs > 24 || c->epochs < 1 || c->limit < 1 || c->val_limit < 1)
        return example_usage_error(&p, "--runs must be 1..24, --epochs, --limit and --val-limit >= 1");
    return EXAMPLE_RUN;
}

static gb_tensor *first_rows(gb_tensor *t, int64_t n) {
    if (n >= gb_dim(t, 0)) return t;
    int64_t begin[GB_MAX_RANK] = {0}, size[GB_MAX_RANK];
    for (int i = 0; i < GB_MAX_RANK; i++) size[i] = i ? -1 : n;
    return gb_slice(t, begin, gb_rank(t), size, gb_rank(t));
}

int main(int argc, char **argv) {
    config c = {.runs = 12, .epochs = 2, .limit = 6000, .val_limit = 2000, .seed = 30,
                .data_dir = GB_FASHION_MNIST_DIR, .serve_port = -1, .verbose = 0};
    int rc = parse(argc, argv, &c);
    if (rc != EXAMPLE_RUN) return rc;
    gb_scope_begin();   /* the data set's tensors live until the end */
    gb_mnist m;
    if (!gb_mnist_load(c.data_dir, GB_MNIST_CLASSES, &m)) {
        fprintf(stderr, "hparam_sweep: %s\n", gb_error_string());
        return 1;
    }
    gb_board *board = NULL;
    if (c.serve_port >= 0 && !example_serve("hparam_sweep", c.db, c.serve_port, &board)) return 1;
    data d = {first_rows(gb_images_to_float(m.train_images, GB_IMAGES_FLAT), c.limit),
              first_rows(m.train_labels, c.limit),
              first_rows(gb_images_to_float(m.test_images, GB_IMAGES_FLAT), c.val_limit),
              first_rows(m.test_labels, c.val_limit)};
    int failed = 0;
    for (int k = 0; k < c.runs; k++) failed += !run_one(&c, &d, k);
    gb_board_stop(board);
    gb_scope_end();
    printf("%d runs, %d failed, in %s\n", c.runs, failed, c.db);
    return failed ? 1 : 0;
}
