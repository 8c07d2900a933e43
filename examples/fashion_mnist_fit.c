/* fashion_mnist_fit.c — Fashion-MNIST the Keras way: a model, compile,
 * fit with the test set as validation data, evaluate.
 *
 *   fashion_mnist_fit --model mlp --epochs 5
 *   fashion_mnist_fit --model cnn --epochs 3 --db runs.db --serve 6006
 *   mpirun -np 2 fashion_mnist_fit --epochs 1 --logdir logs   (logs/mlp/rank_<r>.db)
 *
 * Models: mlp (784-256-128-10, ReLU), cnn (two 3x3 convolutions with max
 * pooling, Dense 128), cnn_bn (the same with BatchNormalization after each
 * convolution). Adam, sparse categorical cross-entropy on logits,
 * accuracy; the train and test steps are traced (--eager: op by op).
 * With --db the summary callback records the run (scalars per batch and
 * epoch, histograms every epoch, the train step's graph with op times,
 * each trace with its reason); --projector N adds, every epoch, the
 * penultimate layer's activations on the first N test images with their
 * class names and sprites (the Projector page: embeddings/dense for the
 * CNN); --serve PORT shows it live, the address
 * printed first. The hand-written loop of fashion_mnist_mlp.c is the
 * custom-training version of the same thing.
 *
 * Under `mpirun -np N` fit trains data-parallel (gb_fit_options.distributed):
 * --batch per rank, gradients averaged over the ranks, the logs combined
 * over them, and rank 0 alone printing and writing the store (with each
 * rank's step and allreduce times as runs "<run>/rank_<r>"); with --logdir
 * every rank writes a store of its own instead (logs/<run>/rank_<r>.db),
 * which `glassbox serve --logdir logs` shows as one board.
 *
 * --save-model DIR writes the trained model as a SavedModel whose
 * serving_default signature takes the raw uint8 images [N,28,28] (the
 * scaling to [0,1] is in the graph) and returns logits [N,10] and class
 * [N]; `glassbox saved-model run --dir DIR --input images=t10k-images-
 * idx3-ubyte.gz` runs it with no code of this program. --save-predictions
 * FILE writes this program's own logits for the test images as .npy, so a
 * test can check that the loaded model predicts the same.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flags.h"
#include "fmnist_classes.h"
#include "gb_board.h"
#include "gb_summary_callback.h"
#include "glassbox.h"
#include "run_store.h"

typedef struct config {
    const char *model, *data_dir, *db, *run, *save_model, *save_predictions, *logdir;
    char logdir_db[4096];   /* with --logdir: this process's store there (db points here) */
    int epochs, serve_port, verbose;
    int64_t batch, limit, projector;
    double lr, lr_decay, min_accuracy;
    uint64_t seed;
    bool eager, keep_serving, no_validation;
} config;

/* ---- the models ------------------------------------------------------------------- */

static gb_module *mlp(void) {
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return m;
}

static gb_module *conv(int64_t filters) {
    return gb_conv2d_new(filters, 3, 3,
                         &(gb_conv2d_options){.padding = GB_PADDING_SAME, .activation = GB_ACT_RELU});
}

static gb_module *cnn(void) {
    gb_module *m = gb_sequential_new("cnn");
    gb_sequential_add(m, conv(32));
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    gb_sequential_add(m, conv(64));
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    gb_sequential_add(m, gb_flatten_new(NULL));
    gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return m;
}

/* Conv -> BatchNorm -> ReLU: the convolution needs no bias (beta shifts). */
static void conv_bn_relu(gb_module *m, int64_t filters) {
    gb_sequential_add(m, gb_conv2d_new(filters, 3, 3,
                                       &(gb_conv2d_options){.padding = GB_PADDING_SAME, .no_bias = true}));
    gb_sequential_add(m, gb_batch_norm_new(NULL));
    gb_sequential_add(m, gb_relu_new(NULL));
}

static gb_module *cnn_bn(void) {
    gb_module *m = gb_sequential_new("cnn_bn");
    conv_bn_relu(m, 32);
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    conv_bn_relu(m, 64);
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    gb_sequential_add(m, gb_flatten_new(NULL));
    gb_sequential_add(m, gb_dropout_new(0.3, 0, NULL));
    gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return m;
}

static gb_module *model_for(const char *name) {
    if (!strcmp(name, "mlp")) return mlp();
    if (!strcmp(name, "cnn")) return cnn();
    if (!strcmp(name, "cnn_bn")) return cnn_bn();
    return NULL;
}

static bool model_known(const char *name) {
    return !strcmp(name, "mlp") || !strcmp(name, "cnn") || !strcmp(name, "cnn_bn");
}

/* ---- flags ------------------------------------------------------------------------------ */

/* Reads the flags into c (defaults already set). Returns EXAMPLE_RUN, or
 * the exit code after --help (0) or a mistake (2). */
static int parse(int argc, char **argv, config *c) {
    const example_flag flags[] = {
        {"--model", "NAME", "mlp, cnn or cnn_bn", EXAMPLE_STRING, &c->model},
        {"--epochs", "N", "passes over the training images", EXAMPLE_INT, &c->epochs},
        {"--batch", "N", "images per step (per process under mpirun)", EXAMPLE_INT64, &c->batch},
        {"--lr", "X", "Adam's learning rate", EXAMPLE_DOUBLE, &c->lr},
        {"--lr-decay", "X", "the rate times X each epoch (0: constant)", EXAMPLE_DOUBLE, &c->lr_decay},
        {"--seed", "N", "initial weights and shuffling", EXAMPLE_UINT64, &c->seed},
        {"--limit", "N", "train on the first N images (0: all)", EXAMPLE_INT64, &c->limit},
        {"--projector", "N", "record the penultimate layer's activations on N test images each epoch (needs --db)",
         EXAMPLE_INT64, &c->projector},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &c->data_dir},
        {"--db", "FILE", "record the run into this store", EXAMPLE_STRING, &c->db},
        {"--logdir", "DIR", "record the run into a store of this process's own under DIR (every "
                            "rank of an MPI job writes one); 'glassbox serve --logdir DIR' shows them",
         EXAMPLE_STRING, &c->logdir},
        {"--run", "NAME", "the run to write or continue (default: a new run named after the model)",
         EXAMPLE_STRING, &c->run},
        {"--serve", "PORT", "serve the live dashboard on PORT (needs --db; 0: any free port, -1: none)", EXAMPLE_INT,
         &c->serve_port},
        {"--keep-serving", NULL, "after training, serve until Ctrl-C", EXAMPLE_SWITCH, &c->keep_serving},
        {"--verbose", "0|1|2", "quiet, a progress bar, or a line per epoch", EXAMPLE_INT, &c->verbose},
        {"--min-accuracy", "X", "exit 3 below this test accuracy", EXAMPLE_DOUBLE, &c->min_accuracy},
        {"--eager", NULL, "run the train and test steps op by op (run_eagerly)", EXAMPLE_SWITCH, &c->eager},
        {"--no-validation", NULL, "no validation data", EXAMPLE_SWITCH, &c->no_validation},
        {"--save-model", "DIR", "save a SavedModel taking raw uint8 images", EXAMPLE_STRING, &c->save_model},
        {"--save-predictions", "FILE.npy", "the test images' logits as .npy", EXAMPLE_STRING,
         &c->save_predictions},
    };
    static const example_foreign_flag foreign[] = {
        {"--traced", "fit traces its train and test steps already (--eager runs them op by op); "
                     "--traced is for the hand-written loops of fashion_mnist_mlp and fashion_mnist_cnn"},
    };
    const example_program p = {"fashion_mnist_fit",
                               "Trains a model on Fashion-MNIST the Keras way: compile, fit, evaluate.",
                               flags, sizeof flags / sizeof flags[0], foreign,
                               sizeof foreign / sizeof foreign[0]};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (!model_known(c->model))
        return example_usage_error(&p, "--model is mlp, cnn or cnn_bn, not '%s'", c->model);
    if (c->db && c->logdir) return example_usage_error(&p, "give --db or --logdir, not both");
    if (c->serve_port >= 0 && !c->db && !c->logdir)
        return example_usage_error(&p, "--serve needs --db FILE or --logdir DIR (what the dashboard shows)");
    if (c->epochs < 1 || c->batch < 1 || !(c->lr > 0) || c->lr_decay < 0 || c->limit < 0)
        return example_usage_error(&p, "--epochs and --batch must be >= 1, --lr > 0, --lr-decay and "
                                       "--limit >= 0");
    if (c->projector < 0 || c->projector > 10000)
        return example_usage_error(&p, "--projector is a number of test images in 0..10000, not %lld",
                                   (long long)c->projector);
    if (c->projector && !c->db) return example_usage_error(&p, "--projector needs --db FILE");
    return EXAMPLE_RUN;
}

/* ---- the run ------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_serving;
static void on_signal(int sig) {
    (void)sig;
    stop_serving = 1;
}

/* The store and the dashboard, the address printed before training. */
static bool open_outputs(const config *c, gb_summary_writer **w, gb_board **board) {
    /* Rank 0 writes the run into --db; with --logdir every rank writes its own store. */
    if (!c->db || (gb_dist_rank() != 0 && !c->logdir)) return true;
    if (!example_open_writer(c->model, c->db, c->run, w)) return false;
    gb_summary_set_default(*w);
    gb_summary_hparam_str(NULL, "model", c->model);
    gb_summary_hparam_num(NULL, "learning_rate", c->lr);
    gb_summary_hparam_num(NULL, "batch_size", (double)c->batch);
    gb_summary_hparam_num(NULL, "epochs", c->epochs);
    gb_summary_hparam_num(NULL, "seed", (double)c->seed);
    gb_summary_hparam_num(NULL, "ranks", gb_dist_size());
    /* What the run is, in markdown: the Text page renders it. */
    char about[1024];
    snprintf(about, sizeof about,
             "# %s, Adam\n\n"
             "Fashion-MNIST through `compile` / `fit`, the test set as validation data.\n\n"
             "| setting | value |\n|---|---|\n"
             "| *optimizer* | Adam, learning rate %g%s |\n| *batch* | %lld per process, %d process%s |\n"
             "| *epochs* | %d |\n| *train step* | %s |\n",
             c->model, c->lr, c->lr_decay > 0 ? ", decayed each epoch" : "", (long long)c->batch,
             gb_dist_size(), gb_dist_size() == 1 ? "" : "es", c->epochs, c->eager ? "eager" : "traced");
    gb_summary_text(NULL, "run/about", about, 0);
    if (c->serve_port < 0 || gb_dist_rank() != 0) return true;
    *board = c->logdir ? gb_board_start_logdir(&c->logdir, 1, "127.0.0.1", c->serve_port, NULL)
                       : gb_board_start(c->db, "127.0.0.1", c->serve_port, NULL);
    if (!*board) {
        fprintf(stderr, "fashion_mnist_fit: dashboard: %s\n", gb_board_last_error());
        return false;
    }
    printf("dashboard: %s\n", gb_board_url(*board));
    fflush(stdout);
    return true;
}

/* t[:n] along the first axis, whatever the rank. */
static gb_tensor *first_rows(gb_tensor *t, int64_t n) {
    int64_t begin[GB_MAX_RANK] = {0}, size[GB_MAX_RANK];
    for (int i = 0; i < GB_MAX_RANK; i++) size[i] = i ? -1 : n;
    return gb_slice(t, begin, gb_rank(t), size, gb_rank(t));
}

/* A LambdaCallback: each epoch's training throughput, validation left
 * out (the hand-written loop prints the same figure). */
typedef struct throughput {
    double start, last;
    int64_t samples, batch;
} throughput;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void tp_epoch_begin(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    (void)s, (void)epoch, (void)logs;
    throughput *t = user;
    t->start = now_s();
    t->samples = 0;
}

static void tp_batch_end(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)s, (void)batch, (void)logs;
    throughput *t = user;
    t->last = now_s();
    t->samples += t->batch;   /* the last batch may be smaller: close enough for a rate */
}

static void tp_epoch_end(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    (void)logs;
    throughput *t = user;
    if (s->rank != 0) return;   /* every rank's samples together: */
    /* Through the bar: a plain printf would land in the middle of its line. */
    gb_train_print(s, "epoch %d/%d: %.0f samples/s", epoch + 1, s->epochs,
                   (double)t->samples * s->num_ranks / (t->last - t->start));
}

/* What the projector shows of the first n test images: their class name
 * and label as metadata columns, the images themselves as sprites. */
typedef struct projector_sample {
    gb_tensor *x, *metadata, *sprite;
} projector_sample;

static const char *const projector_columns[] = {"class", "label"};

static projector_sample projector_sample_of(gb_tensor *x_test, gb_mnist *data, int64_t n) {
    static const char *const digits[GB_MNIST_CLASSES] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    projector_sample ps = {first_rows(x_test, n), NULL,
                           first_rows(gb_images_to_float(data->test_images, GB_IMAGES_NHWC), n)};
    gb_string *cells = malloc((size_t)n * 2 * sizeof *cells);
    if (!cells) return ps;
    const int32_t *labels = gb_data(data->test_labels);
    for (int64_t i = 0; i < n; i++) {
        const char *name = fmnist_class_names[labels[i]];
        cells[2 * i] = (gb_string){name, (int64_t)strlen(name)};
        cells[2 * i + 1] = (gb_string){digits[labels[i]], 1};
    }
    ps.metadata = gb_strings_from(cells, 2, (int64_t[]){n, 2});
    free(cells);
    return ps;
}

static bool train(const config *c, gb_module *model, gb_mnist *data, double *test_acc) {
    gb_image_layout layout = strcmp(c->model, "mlp") ? GB_IMAGES_NHWC : GB_IMAGES_FLAT;
    gb_tensor *x = gb_images_to_float(data->train_images, layout), *y = data->train_labels;
    if (c->limit > 0 && c->limit < gb_dim(x, 0)) {
        x = first_rows(x, c->limit);
        y = first_rows(y, c->limit);
    }
    gb_tensor *tx = gb_images_to_float(data->test_images, layout);
    /* --lr-decay r: the rate times r per epoch (Keras' ExponentialDecay
     * with decay_steps one epoch), which steadies the last epoch. */
    gb_adam_options ao = gb_adam_defaults();
    int64_t steps = (gb_dim(x, 0) + c->batch - 1) / c->batch;
    ao.learning_rate = c->lr_decay > 0 ? gb_lr_exponential_decay(c->lr, steps, c->lr_decay, false)
                                       : gb_lr_constant(c->lr);
    gb_optimizer *opt = gb_adam_ex(&ao);
    gb_model_compile(model, &(gb_compile_options){
                                .optimizer = opt,
                                .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                .metrics = (const char *[]){"accuracy"},
                                .nmetrics = 1,
                                .run_eagerly = c->eager});
    projector_sample ps = {0};
    if (c->projector) ps = projector_sample_of(tx, data, c->projector);
    gb_callback *summary = c->db ? gb_summary_callback(NULL, &(gb_summary_callback_options){
                                                                 .histogram_freq = 1,
                                                                 .embeddings_freq = c->projector ? 1 : 0,
                                                                 .embeddings_x = ps.x,
                                                                 .embeddings_layer = -2,
                                                                 .embeddings_metadata = ps.metadata,
                                                                 .embeddings_columns = projector_columns,
                                                                 .embeddings_sprite = ps.sprite,
                                                                 .every_rank = c->logdir != NULL})
                                 : NULL;
    throughput tp = {.batch = c->batch};
    gb_callback *cbs[2] = {gb_lambda(&(gb_lambda_callback){.on_epoch_begin = tp_epoch_begin,
                                                           .on_batch_end = tp_batch_end,
                                                           .on_epoch_end = tp_epoch_end,
                                                           .user = &tp}),
                           summary};
    gb_fit_options o = gb_fit_defaults();
    o.epochs = c->epochs;
    o.batch_size = c->batch;
    o.seed = c->seed;
    o.verbose = c->verbose;
    o.val_x = tx;
    o.val_y = data->test_labels;
    o.callbacks = cbs;
    o.ncallbacks = summary ? 2 : 1;
    o.distributed = true;   /* under mpirun; one process trains alone as before */
    if (c->no_validation) o.val_x = o.val_y = NULL;
    gb_history *h = gb_model_fit(model, x, y, &o);
    gb_logs test = {0};
    if (h) gb_model_evaluate(model, tx, data->test_labels, NULL, 1000, &test);
    *test_acc = gb_logs_get(&test, "accuracy");
    gb_history_free(h);
    gb_callback_free(cbs[0]);
    gb_callback_free(summary);
    gb_optimizer_free(opt);
    return gb_ok();
}

/* ---- serving: the SavedModel's signature ---------------------------------------------- */

typedef struct serving {
    gb_module *model;
    bool flat;                   /* the MLP takes [N,784], the CNNs [N,28,28,1] */
} serving;

/* Raw images in, as a deployed model receives them: scaling and layout
 * are part of the graph, so its user needs no code of ours. */
static int serve_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    const serving *s = user;
    gb_tensor *x = gb_div(gb_cast(in[0], GB_F32), gb_scalar(GB_F32, 255));
    x = s->flat ? gb_reshape(x, GB_SHAPE(-1, 28 * 28)) : gb_reshape(x, GB_SHAPE(-1, 28, 28, 1));
    out[0] = gb_module_call(s->model, x, false);
    out[1] = gb_argmax(out[0], -1);
    return 2;
}

static bool save_serving(const config *c, gb_module *model, gb_tensor *test_images) {
    serving s = {.model = model, .flat = !strcmp(c->model, "mlp")};
    gb_tensor_spec spec[] = {GB_SPEC("images", GB_U8, -1, 28, 28)};
    gb_function *f = gb_function_new("serve", serve_fn,
                                     &(gb_function_options){.user = &s, .input_signature = spec,
                                                            .ninput_signature = 1});
    gb_saved_model_signature sig = {.name = "serving_default", .function = f, .inputs = spec, .ninputs = 1,
                                    .output_names = (const char *[]){"logits", "class"}};
    bool ok = !c->save_model || gb_saved_model_save(c->save_model, &sig, 1);
    if (ok && c->save_model) printf("saved the model to %s\n", c->save_model);
    gb_tensor *out[2];
    if (ok && c->save_predictions)
        ok = gb_function_call(f, &test_images, 1, NULL, 0, out) == 2 && gb_npy_write(c->save_predictions, out[0]);
    gb_function_free(f);
    return ok;
}

int main(int argc, char **argv) {
    if (!gb_dist_init(&argc, &argv)) {   /* mpirun -np N: data-parallel */
        fprintf(stderr, "fashion_mnist_fit: %s\n", gb_error_string());
        return 1;
    }
    config c = {.model = "mlp", .epochs = 5, .batch = 128, .lr = 1e-3, .seed = 42,
                .data_dir = GB_FASHION_MNIST_DIR, .serve_port = -1, .verbose = 1};
    int rc = parse(argc, argv, &c);
    if (rc != EXAMPLE_RUN) return rc;
    if (c.logdir) {
        if (gb_summary_logdir_store(c.logdir, c.run ? c.run : c.model, c.logdir_db,
                                    sizeof c.logdir_db) != GB_OK) {
            fprintf(stderr, "fashion_mnist_fit: %s\n", gb_summary_last_error());
            return 1;
        }
        c.db = c.logdir_db;
    }
    gb_nn_set_seed(c.seed);
    gb_module *model = model_for(c.model);
    gb_summary_writer *w = NULL;
    gb_board *board = NULL;
    gb_mnist data;
    double acc = 0;
    int code = 1;
    gb_scope_begin();
    if (!open_outputs(&c, &w, &board)) goto done;
    if (!gb_mnist_load(c.data_dir, GB_MNIST_CLASSES, &data) || !train(&c, model, &data, &acc)) {
        fprintf(stderr, "fashion_mnist_fit: %s\n", gb_error_string());
        goto done;
    }
    bool speaks = gb_dist_rank() == 0;   /* the ranks hold the same model */
    if (speaks) {
        gb_module_summary(model, stdout);
        printf("final test accuracy %.4f\n", acc);
    }
    if (speaks && !save_serving(&c, model, data.test_images)) {
        fprintf(stderr, "fashion_mnist_fit: %s\n", gb_error_string());
        goto done;
    }
    code = c.min_accuracy > 0 && acc < c.min_accuracy ? 3 : 0;
    if (code) fprintf(stderr, "test accuracy %.4f is below the required %.4f\n", acc, c.min_accuracy);
    if (w) gb_summary_flush(w);
    if (board && c.keep_serving) {
        printf("training done; still serving %s — press Ctrl-C to stop\n", gb_board_url(board));
        fflush(stdout);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        while (!stop_serving) pause();
    }
done:
    gb_board_stop(board);
    if (w) gb_summary_writer_close(w);
    gb_module_free(model);
    gb_scope_end();
    /* An error of this rank alone would leave the others waiting: end the
     * job. After an UnavailableError (a lost rank) just leave. */
    const gb_error *e = gb_last_error();
    if (code == 1 && gb_dist_size() > 1 && (!e || e->code != GB_ERR_UNAVAILABLE)) gb_dist_abort(1);
    gb_dist_finalize();
    return code;
}
