/* fmnist_common.h — the training loop shared by the Fashion-MNIST examples.
 *
 * fashion_mnist_mlp.c and fashion_mnist_cnn.c differ only in their model;
 * everything else — flags, data pipeline, the training step with a tape
 * and Adam, evaluation, and what a person watches in the dashboard — is
 * here, written as a user of glassbox would write it:
 *   per step   train/loss, learning_rate
 *   per epoch  train/accuracy, test/accuracy, weight and gradient
 *              histograms of every layer, three test images with their
 *              predicted labels in the text
 *   per run    the hyperparameters
 * Progress goes to stdout once per epoch, with samples/s.
 *
 * Under `mpirun -np N` the same program trains data-parallel (gb_dist.h):
 * rank 0's initial weights are broadcast, each rank takes every N-th image
 * of the shuffled epoch (--batch is per rank), gradients are averaged by
 * allreduce as backward makes them, the accuracies are combined over the
 * ranks, and only rank 0 writes the store and prints. Each rank's step
 * and allreduce times land in the store as runs "<run>/rank_<r>".
 *
 * With --traced the step's computation — forward, tape, gradients, Adam
 * update — is a gb_function (tf.function): traced into one graph on the
 * first step, then run as that graph (its first steps profiled and the
 * graph exported with the profile: trace_on / trace_export). Its input signature leaves the batch
 * dim -1, so the epoch's last, smaller batch runs the same graph; a static
 * with_grads also returns the gradients, for the histogram step (a second
 * trace, once). The metric and the summaries stay outside, eager, fed
 * from the function's outputs.
 */
#ifndef FMNIST_COMMON_H
#define FMNIST_COMMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flags.h"
#include "gb_board.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "fmnist_classes.h"
#include "run_store.h"

typedef struct fmnist_config {
    const char *model_name;    /* "mlp" or "cnn" */
    int epochs;
    int64_t batch;
    double lr;
    uint64_t seed;
    int64_t limit;             /* train on the first N images (0: all) */
    const char *data_dir;
    const char *db;            /* NULL: no summaries */
    const char *run;           /* --run: continued; NULL: the program's name, a new run */
    const char *program;       /* "fashion_mnist_mlp" */
    int serve_port;            /* -1: no dashboard; 0: any free port */
    bool keep_serving;         /* after training, serve until Ctrl-C */
    double min_test_accuracy;  /* exit non-zero below it (0: no check) */
    bool traced;               /* run the train step as a traced gb_function */
} fmnist_config;

/* Reads the flags into cfg (defaults already set). Returns EXAMPLE_RUN,
 * or the exit code after --help (0) or a mistake (2). */
static int fmnist_parse(const char *program, int argc, char **argv, fmnist_config *cfg) {
    const example_flag flags[] = {
        {"--epochs", "N", "passes over the training images", EXAMPLE_INT, &cfg->epochs},
        {"--batch", "N", "images per step (per process under mpirun)", EXAMPLE_INT64, &cfg->batch},
        {"--lr", "X", "Adam's learning rate", EXAMPLE_DOUBLE, &cfg->lr},
        {"--seed", "N", "initial weights and shuffling", EXAMPLE_UINT64, &cfg->seed},
        {"--limit", "N", "train on the first N images (0: all)", EXAMPLE_INT64, &cfg->limit},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &cfg->data_dir},
        {"--db", "FILE", "record the run into this store", EXAMPLE_STRING, &cfg->db},
        {"--run", "NAME", "the run to write or continue (default: a new run named after the program)",
         EXAMPLE_STRING, &cfg->run},
        {"--serve", "PORT", "serve the live dashboard on PORT (needs --db; 0: any free port, -1: none)", EXAMPLE_INT,
         &cfg->serve_port},
        {"--keep-serving", NULL, "after training, serve until Ctrl-C", EXAMPLE_SWITCH, &cfg->keep_serving},
        {"--min-accuracy", "X", "exit 1 below this test accuracy", EXAMPLE_DOUBLE, &cfg->min_test_accuracy},
        {"--traced", NULL, "run the train step as one traced function", EXAMPLE_SWITCH, &cfg->traced},
    };
    static const example_foreign_flag foreign[] = {
        {"--model", "the model is this program's own; fashion_mnist_fit --model mlp|cnn|cnn_bn picks one"},
        {"--eager", "the hand-written step runs eagerly unless --traced"},
    };
    const example_program p = {program,
                               "Trains a model on Fashion-MNIST with a hand-written loop (tape, Adam).",
                               flags, sizeof flags / sizeof flags[0], foreign,
                               sizeof foreign / sizeof foreign[0]};
    cfg->program = program;
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (cfg->serve_port >= 0 && !cfg->db)
        return example_usage_error(&p, "--serve needs --db FILE (the store the dashboard shows)");
    if (cfg->epochs < 1 || cfg->batch < 1 || !(cfg->lr > 0) || cfg->limit < 0)
        return example_usage_error(&p, "--epochs and --batch must be >= 1, --lr > 0, --limit >= 0");
    return EXAMPLE_RUN;
}

static double fmnist_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Everything one run holds. */
typedef struct fmnist_run {
    const fmnist_config *cfg;
    gb_module *model;
    gb_optimizer *opt;
    gb_mnist data;
    gb_tensor *test_x;         /* float32, the model's input layout */
    gb_image_layout layout;
    gb_summary_writer *writer;
    gb_board *board;
    gb_function *train_step;   /* with --traced: the step as a traced function */
    int64_t step;
} fmnist_run;

static bool fmnist_fail(const char *what) {
    fprintf(stderr, "fashion-mnist: %s: %s\n", what,
            gb_ok() ? gb_summary_last_error() : gb_error_string());
    return false;
}

/* Rank 0 writes the store and prints; the other ranks train quietly. */
static bool fmnist_speaks(void) { return gb_dist_rank() == 0; }

static bool fmnist_open_outputs(fmnist_run *r) {
    const fmnist_config *c = r->cfg;
    if (!c->db || !fmnist_speaks()) return true;
    if (!example_open_writer(c->program, c->db, c->run, &r->writer)) return false;
    gb_summary_set_default(r->writer);
    gb_summary_hparam_str(NULL, "model", c->model_name);
    gb_summary_hparam_str(NULL, "optimizer", "adam");
    gb_summary_hparam_num(NULL, "learning_rate", c->lr);
    gb_summary_hparam_num(NULL, "batch_size", (double)c->batch);
    gb_summary_hparam_num(NULL, "epochs", c->epochs);
    gb_summary_hparam_num(NULL, "seed", (double)c->seed);
    gb_summary_hparam_str(NULL, "train_step", c->traced ? "traced" : "eager");
    gb_summary_hparam_num(NULL, "ranks", gb_dist_size());
    if (c->serve_port >= 0) {
        r->board = gb_board_start(c->db, "127.0.0.1", c->serve_port, NULL);
        if (!r->board) {
            fprintf(stderr, "fashion-mnist: dashboard: %s\n", gb_board_last_error());
            return false;
        }
        printf("dashboard: %s\n", gb_board_url(r->board));
        fflush(stdout);
    }
    return true;
}

/* ---- training ---------------------------------------------------------------------- */

static gb_tensor *fmnist_loss(gb_tensor *labels, gb_tensor *logits) {
    /* Under "loss": the traced step's graph reads model, loss, gradients, Adam. */
    gb_name_scope_push("loss");
    gb_tensor *loss =
        gb_loss_sparse_categorical_crossentropy(labels, logits, true, GB_REDUCTION_MEAN);
    gb_name_scope_pop();
    return loss;
}

enum { FMNIST_MAX_VARS = 32 };

/* Forward, tape, gradients and the Adam update on a batch: the part of a
 * step that runs eagerly or traced alike. Returns the loss (NULL after an
 * error) and writes the logits and the gradients, one per trainable
 * variable (*nvars of them). On several ranks the gradients are averaged
 * over them first: eagerly by gb_dist_tape_gradient, overlapping backward;
 * a traced step (`apply` false) cannot talk to other processes from its
 * graph, so it returns its own gradients and the caller averages and
 * applies them (fmnist_update_traced). */
static gb_tensor *fmnist_update(fmnist_run *r, gb_tensor *x, gb_tensor *y, gb_tensor **logits,
                                gb_tensor **grads, int *nvars, bool apply) {
    gb_tape *tape = gb_tape_begin();
    *logits = gb_module_call(r->model, x, true);
    gb_tensor *loss = fmnist_loss(y, *logits);
    gb_tape_end(tape);
    gb_variable *const *vars = gb_module_trainable_variables(r->model, nvars);
    if (*nvars > FMNIST_MAX_VARS) {
        fmnist_fail("model has too many variables for this example");
        return NULL;
    }
    if (!apply) {
        gb_tape_gradient_vars(tape, loss, vars, *nvars, grads);
        return gb_ok() ? loss : NULL;
    }
    gb_dist_tape_gradient(tape, loss, vars, *nvars, grads);   /* one rank: the tape's own */
    gb_optimizer_apply_gradients(r->opt, grads, *nvars, vars, *nvars);
    return gb_ok() ? loss : NULL;
}

/* The traced step applies its update itself when it has nobody to agree with. */
static bool fmnist_traced_applies(void) { return gb_dist_size() == 1; }

/* The traced step, as a gb_function: inputs images and labels; outputs the
 * loss, the logits and, when the static with_grads is true, the gradients. */
static int fmnist_step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                          int nst, gb_tensor **out) {
    (void)nin, (void)nst;
    int nvars = 0;
    bool apply = fmnist_traced_applies();
    out[0] = fmnist_update(user, in[0], in[1], &out[1], out + 2, &nvars, apply);
    if (!out[0]) return -1;
    return st[0].as.b || !apply ? 2 + nvars : 2;
}

/* The step function for r's data: the batch dim -1 in the input signature,
 * the other dims as the test set has them. */
static gb_function *fmnist_traced_step_new(fmnist_run *r) {
    gb_tensor_spec sig[2] = {{.name = "images", .dtype = gb_tensor_dtype(r->test_x),
                              .rank = gb_rank(r->test_x)},
                             {.name = "labels", .dtype = gb_tensor_dtype(r->data.test_labels),
                              .rank = 1, .shape = {-1}}};
    for (int d = 0; d < sig[0].rank; d++) sig[0].shape[d] = d ? gb_dim(r->test_x, d) : -1;
    gb_function_options o = {.user = r, .input_signature = sig, .ninput_signature = 2};
    return gb_function_new("train_step", fmnist_step_fn, &o);
}

/* The traced step: same outputs as the eager one, from the graph. On
 * several ranks the graph returns its gradients and the update happens
 * here, after averaging them. */
static gb_tensor *fmnist_update_traced(fmnist_run *r, gb_tensor *x, gb_tensor *y,
                                       gb_tensor **logits, gb_tensor **grads, bool with_grads) {
    gb_tensor *out[2 + FMNIST_MAX_VARS];
    int n = gb_function_call(r->train_step, (gb_tensor *[]){x, y}, 2,
                             (gb_value[]){GB_BOOL("with_grads", with_grads)}, 1, out);
    if (n < 2) return NULL;
    *logits = out[1];
    if (!fmnist_traced_applies()) {
        int nvars = 0;
        gb_variable *const *vars = gb_module_trainable_variables(r->model, &nvars);
        gb_dist_average_gradients(out + 2, vars, nvars);
        gb_optimizer_apply_gradients(r->opt, out + 2, nvars, vars, nvars);
    }
    if (with_grads) memcpy(grads, out + 2, (size_t)(n - 2) * sizeof *grads);
    return gb_ok() ? out[0] : NULL;
}

/* One optimizer step on a batch, then what people watch of it: accuracy,
 * loss, learning rate. with_grads: write the gradients into grads (the
 * caller's scope keeps them). */
/* Steps profiled at the start of a traced run: op timing on for them, then
 * the step's graph exported with its profile (tf.summary.trace_on /
 * trace_export), so the Graphs dashboard colours it by compute time. */
#define FMNIST_PROFILED_STEPS 20

static bool fmnist_train_step(fmnist_run *r, gb_tensor *x, gb_tensor *y, gb_metric *acc,
                              gb_tensor **grads, bool with_grads) {
    gb_tensor *logits = NULL, *loss;
    int nvars = 0;
    if (r->train_step && r->writer && r->step == 0) gb_summary_trace_on(r->writer, true);
    if (r->train_step && r->writer && r->step == FMNIST_PROFILED_STEPS)
        gb_summary_trace_export(r->writer, "train_step", r->step);
    if (r->train_step)
        loss = fmnist_update_traced(r, x, y, &logits, grads, with_grads);
    else
        loss = fmnist_update(r, x, y, &logits, grads, &nvars, true);
    if (!loss) return fmnist_fail("training step");
    gb_metric_update_state(acc, y, logits);
    if (!gb_ok()) return fmnist_fail("training step");
    if (r->writer) {   /* rank 0's loss: its own batch's */
        gb_summary_scalar(NULL, "train/loss", gb_item(loss), r->step);
        gb_summary_scalar(NULL, "learning_rate", gb_optimizer_learning_rate(r->opt), r->step);
    }
    r->step++;
    return true;
}

/* Rows [first, first + count) of t, whatever its rank (images are flat or
 * NHWC, labels a vector): Python's t[first:first + count]. */
static gb_tensor *fmnist_rows(gb_tensor *t, int64_t first, int64_t count) {
    int64_t begin[GB_MAX_RANK] = {first}, size[GB_MAX_RANK];
    for (int i = 0; i < GB_MAX_RANK; i++) size[i] = i ? -1 : count;
    return gb_slice(t, begin, gb_rank(t), size, gb_rank(t));
}

/* Test accuracy over the whole test set, in batches, without dropout;
 * on several ranks each takes its slice and the metric is combined. */
static double fmnist_evaluate(fmnist_run *r) {
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new("test_accuracy");
    int64_t all = gb_dim(r->test_x, 0), bs = 1000, ranks = gb_dist_size(), me = gb_dist_rank();
    int64_t first = all * me / ranks, n = all * (me + 1) / ranks;
    for (int64_t i = first; i < n; i += bs) {
        gb_scope_begin();
        int64_t m = i + bs <= n ? bs : n - i;
        gb_tensor *x = fmnist_rows(r->test_x, i, m);
        gb_tensor *y = fmnist_rows(r->data.test_labels, i, m);
        gb_metric_update_state(acc, y, gb_module_call(r->model, x, false));
        gb_scope_end();
    }
    double result = gb_ok() ? gb_dist_metric_result(acc) : -1;
    gb_metric_free(acc);
    return gb_ok() ? result : -1;
}

/* Weight and gradient histograms of every layer, named by variable. */
static void fmnist_log_histograms(fmnist_run *r, gb_tensor *const *grads) {
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(r->model, &n);
    char tag[256];
    for (int i = 0; i < n; i++) {
        gb_scope_begin();
        snprintf(tag, sizeof tag, "weights/%s", gb_variable_name(vars[i]));
        gb_summary_histogram(NULL, tag, gb_variable_value(vars[i]), r->step);
        if (grads[i]) {
            snprintf(tag, sizeof tag, "gradients/%s", gb_variable_name(vars[i]));
            gb_summary_histogram(NULL, tag, grads[i], r->step);
        }
        gb_scope_end();
    }
}

/* Three test images and, in the text, what the model says they are. */
static void fmnist_log_samples(fmnist_run *r) {
    gb_scope_begin();
    gb_tensor *x = fmnist_rows(r->test_x, 0, 3);
    gb_tensor *pred = gb_argmax(gb_module_call(r->model, x, false), -1);
    gb_tensor *images = gb_reshape(fmnist_rows(r->data.test_images, 0, 3), GB_SHAPE(3, 28, 28, 1));
    gb_summary_image(NULL, "samples/test_images", images, 3, r->step);
    char text[512];
    size_t used = 0;
    for (int k = 0; k < 3 && pred; k++) {
        int p = (int)gb_get(pred, k), t = (int)gb_get(r->data.test_labels, k);
        used += (size_t)snprintf(text + used, sizeof text - used, "image %d: predicted %s, true %s%s\n",
                                 k, fmnist_class_names[p], fmnist_class_names[t],
                                 p == t ? "" : "  (wrong)");
    }
    if (pred) gb_summary_text(NULL, "samples/predictions", text, r->step);
    gb_scope_end();
}

static bool fmnist_epoch(fmnist_run *r, gb_dataset *ds, int epoch, double *test_acc) {
    gb_metric *acc = gb_metric_sparse_categorical_accuracy_new("train_accuracy");
    gb_iterator *it = gb_iterator_new(ds);
    int64_t steps = gb_dataset_cardinality(ds), samples = 0;
    gb_tensor *b[2], *grads[FMNIST_MAX_VARS];
    double t0 = fmnist_now();
    bool ok = it != NULL;
    for (int64_t i = 0; ok; i++) {
        gb_scope_begin(); /* one step: its tensors die at the end */
        if (!gb_iterator_next(it, b)) {
            gb_scope_end();
            break;
        }
        samples += gb_dim(b[0], 0);
        /* the epoch's last step also logs histograms (rank 0) */
        bool last = i == steps - 1 && fmnist_speaks();
        ok = fmnist_train_step(r, b[0], b[1], acc, grads, last);
        if (ok && last) fmnist_log_histograms(r, grads);
        gb_scope_end();
    }
    double secs = fmnist_now() - t0;
    ok = ok && gb_ok();
    /* Every rank's accuracies (collectives: all ranks call them). */
    double train_acc = ok ? gb_dist_metric_result(acc) : 0;
    if (ok) *test_acc = fmnist_evaluate(r);
    ok = ok && gb_ok();
    if (ok && r->writer) {
        gb_summary_scalar(NULL, "train/accuracy", train_acc, r->step);
        gb_summary_scalar(NULL, "test/accuracy", *test_acc, r->step);
        fmnist_log_samples(r);
    }
    if (ok && fmnist_speaks()) {   /* samples/s of all ranks together */
        printf("epoch %d/%d: train accuracy %.4f, test accuracy %.4f, %.0f samples/s (%.1f s)\n",
               epoch + 1, r->cfg->epochs, train_acc, *test_acc,
               (double)samples * gb_dist_size() / secs, secs);
        fflush(stdout);
    }
    gb_iterator_free(it);
    gb_metric_free(acc);
    return ok && gb_ok();
}

/* How often the traced step traced (twice: without and with gradients)
 * against how many steps it served, and the memory its newest trace
 * plans for the batch it runs with (its input signature's batch is -1). */
static void fmnist_print_trace_stats(const gb_function *f) {
    gb_function_stats s = gb_function_get_stats(f);
    printf("traced train step: %lld traces (%.0f ms) for %lld steps\n", (long long)s.traces,
           s.trace_ms, (long long)s.calls);
    gb_graph_stats g = gb_function_graph_stats(f);
    printf("memory plan: arena %zu bytes (naive %zu) for %s\n", g.call_arena_bytes,
           g.call_naive_bytes, g.call_shapes[0] ? g.call_shapes : "its declared shapes");
}

static volatile sig_atomic_t fmnist_stop;
static void fmnist_on_signal(int sig) {
    (void)sig;
    fmnist_stop = 1;
}

static void fmnist_wait_for_ctrl_c(const fmnist_run *r) {
    printf("training done; still serving %s — press Ctrl-C to stop\n", gb_board_url(r->board));
    fflush(stdout);
    signal(SIGINT, fmnist_on_signal);
    signal(SIGTERM, fmnist_on_signal);
    while (!fmnist_stop) pause();
}

static gb_dataset *fmnist_train_dataset(fmnist_run *r) {
    gb_tensor *x = gb_images_to_float(r->data.train_images, r->layout);
    gb_tensor *y = r->data.train_labels;
    if (r->cfg->limit > 0 && r->cfg->limit < gb_dim(x, 0)) {
        x = fmnist_rows(x, 0, r->cfg->limit);
        y = fmnist_rows(y, 0, r->cfg->limit);
    }
    gb_dataset *ds = gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, y});
    ds = gb_dataset_shuffle(ds, gb_dim(x, 0), r->cfg->seed); /* a full shuffle each epoch */
    if (gb_dist_size() > 1)   /* the same order on every rank: each takes every N-th image */
        ds = gb_dataset_shard(ds, gb_dist_size(), gb_dist_rank());
    ds = gb_dataset_batch(ds, r->cfg->batch, false);
    return gb_dataset_prefetch(ds, 2);
}

/* The model built for the test images' shape, and rank 0's initial
 * weights on every rank (a job of one: nothing to share). */
static bool fmnist_share_weights(fmnist_run *r) {
    int64_t shape[GB_MAX_RANK];
    int rank = gb_rank(r->test_x);
    for (int d = 0; d < rank; d++) shape[d] = d ? gb_dim(r->test_x, d) : -1;
    return gb_dist_size() == 1 || (gb_module_build(r->model, GB_F32, rank, shape) &&
                                   gb_dist_broadcast_model(r->model, NULL, 0));
}

/* ", 2 ranks" when there are several: --batch is then per rank. */
static const char *fmnist_ranks_text(void) {
    static char text[48];
    if (gb_dist_size() == 1) return "";
    snprintf(text, sizeof text, " per rank on %d ranks", gb_dist_size());
    return text;
}

/* Trains `model` as configured; returns the process exit code. Takes
 * over the model. */
static int fmnist_main(const fmnist_config *cfg, gb_module *model, gb_image_layout layout) {
    fmnist_run r = {.cfg = cfg, .model = model, .layout = layout};
    int code = 1;
    double test_acc = 0;
    gb_scope_begin();
    if (!fmnist_open_outputs(&r)) goto done;
    if (!gb_mnist_load(cfg->data_dir, GB_MNIST_CLASSES, &r.data)) {
        fmnist_fail("loading Fashion-MNIST");
        goto done;
    }
    r.test_x = gb_images_to_float(r.data.test_images, layout);
    if (!fmnist_share_weights(&r)) {
        fmnist_fail("broadcasting the initial weights");
        goto done;
    }
    r.opt = gb_adam(cfg->lr);
    gb_dataset *ds = fmnist_train_dataset(&r);
    if (cfg->traced && r.test_x) r.train_step = fmnist_traced_step_new(&r);
    if (!ds || !r.opt || !r.test_x || (cfg->traced && !r.train_step)) {
        fmnist_fail("setting up");
        goto done;
    }
    if (fmnist_speaks())
        printf("training %s on %lld images, batch %lld%s, Adam lr %g, %d epochs, %s train step\n",
               cfg->model_name,
               (long long)(cfg->limit ? cfg->limit : gb_dim(r.data.train_images, 0)),
               (long long)cfg->batch, fmnist_ranks_text(), cfg->lr, cfg->epochs,
               cfg->traced ? "traced" : "eager");
    fflush(stdout);
    bool ok = true;
    for (int e = 0; ok && e < cfg->epochs; e++) ok = fmnist_epoch(&r, ds, e, &test_acc);
    gb_dataset_free(ds);
    if (!ok) {
        fmnist_fail("training");
        goto done;
    }
    if (fmnist_speaks()) {
        gb_module_summary(model, stdout);
        if (r.train_step) fmnist_print_trace_stats(r.train_step);
        printf("final test accuracy %.4f\n", test_acc);
    }
    code = 0;
    if (cfg->min_test_accuracy > 0 && test_acc < cfg->min_test_accuracy) {
        fprintf(stderr, "test accuracy %.4f is below the required %.4f\n", test_acc,
                cfg->min_test_accuracy);
        code = 3;
    }
    gb_dist_flush_timings();   /* every rank's last step times, to rank 0's writer */
    if (r.writer) gb_summary_flush(r.writer);
    if (r.board && cfg->keep_serving) fmnist_wait_for_ctrl_c(&r);
done:
    gb_board_stop(r.board);
    if (r.writer) gb_summary_writer_close(r.writer);
    gb_function_free(r.train_step);
    gb_optimizer_free(r.opt);
    gb_module_free(model);
    gb_scope_end();
    /* After an error of this rank alone the others would wait for it: end
     * the whole job (the message is printed above). An UnavailableError
     * means the job lost a rank already; then this rank just leaves. */
    const gb_error *e = gb_last_error();
    if (code == 1 && gb_dist_size() > 1 && (!e || e->code != GB_ERR_UNAVAILABLE))
        gb_dist_abort(code);
    gb_dist_finalize();
    return code;
}

#endif
