/* gb_train.h — Keras training: compile, fit, evaluate, predict, callbacks
 * and the progress bar.
 *
 *   gb_model_compile(model, &(gb_compile_options){
 *       .optimizer = gb_adam(1e-3),
 *       .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
 *       .metrics = (const char *[]){"accuracy"}, .nmetrics = 1});
 *   gb_fit_options o = gb_fit_defaults();
 *   o.epochs = 5;
 *   o.validation_split = 0.1;
 *   gb_history *h = gb_model_fit(model, x, y, &o);
 *       Epoch 1/5
 *       422/422 ━━━━━━━━━━━━━━━━━━━━ 2s 4ms/step - accuracy: 0.8101 - loss: 0.5432 - val_accuracy: ...
 *   gb_history_value(h, "val_loss", 4);
 *
 * fit traces its train step into a graph (a gb_function, as Keras'
 * model.fit runs a tf.function) unless run_eagerly is set: forward, the
 * compiled loss weighted by the sample weights, the tape, apply_gradients.
 * Metrics are updated from the step's outputs, eagerly. The step can be
 * replaced (gb_compile_options.train_step), as the seeds' "customize what
 * happens in fit" does.
 *
 * Weights: class_weight[y] times sample_weight gives each sample's weight;
 * the loss is sum(loss_i * w_i) / batch (Keras' sum_over_batch_size), so a
 * zero weight masks a sample. validation_split takes the last fraction of
 * the samples before any shuffling, as Keras does.
 *
 * The compiled state belongs to the model: compiling again replaces it,
 * gb_module_free() releases it. The optimizer is the caller's and must
 * outlive the model's training.
 */
#ifndef GB_TRAIN_H
#define GB_TRAIN_H

#include <stdio.h>

#include "gb_data.h"
#include "gb_function.h"
#include "gb_io.h"
#include "gb_nn.h"
#include "gb_optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- logs and history ------------------------------------------------------------ */

enum { GB_LOGS_MAX = 32, GB_LOGS_KEY_BYTES = 48 };

/* Named numbers in insertion order ("loss", "accuracy", "val_loss"...). */
typedef struct gb_logs {
    int n;
    char key[GB_LOGS_MAX][GB_LOGS_KEY_BYTES];
    double value[GB_LOGS_MAX];
} gb_logs;

/* The value under key, or NAN when absent. */
double gb_logs_get(const gb_logs *logs, const char *key);
bool gb_logs_has(const gb_logs *logs, const char *key);
/* Sets (or adds) key; false when the logs are full or the key too long. */
bool gb_logs_set(gb_logs *logs, const char *key, double value);

/* Keras' History: the epoch-end logs of every epoch trained. */
typedef struct gb_history gb_history;
int gb_history_epochs(const gb_history *h);
/* The epoch number (0-based, counting initial_epoch) of entry i. */
int gb_history_epoch(const gb_history *h, int i);
/* The value of key at entry i (NAN when absent or out of range). */
double gb_history_value(const gb_history *h, const char *key, int i);
const gb_logs *gb_history_logs(const gb_history *h, int i);
void gb_history_free(gb_history *h);

/* ---- compile --------------------------------------------------------------------- */

typedef enum gb_loss_kind {
    GB_LOSS_NONE,
    GB_LOSS_MEAN_SQUARED_ERROR,
    GB_LOSS_MEAN_ABSOLUTE_ERROR,
    GB_LOSS_HUBER,
    GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY,
    GB_LOSS_CATEGORICAL_CROSSENTROPY,
    GB_LOSS_BINARY_CROSSENTROPY,
    GB_LOSS_CUSTOM,
} gb_loss_kind;

/* A custom loss: one value per sample ([batch]), which fit weights and
 * averages. user carries its parameters (the seeds' CustomMSE object). */
typedef gb_tensor *(*gb_loss_fn)(gb_tensor *y_true, gb_tensor *y_pred, void *user);

typedef struct gb_loss_spec {
    gb_loss_kind kind;
    bool from_logits;         /* cross-entropies */
    double delta;             /* Huber (0: 1.0) */
    gb_loss_fn fn;            /* GB_LOSS_CUSTOM */
    void *user;
    const char *name;         /* a custom loss's name in errors (NULL: "custom_loss") */
} gb_loss_spec;

typedef struct gb_train_state gb_train_state;

/* A replacement train step (Keras' Model.train_step): given a batch, run
 * forward, loss, gradients and the update, and return the loss (a scalar)
 * and the predictions in *y_pred for the compiled metrics; NULL after an
 * error. Runs traced unless run_eagerly. gb_train_compiled_loss() gives
 * the compiled, weighted loss. */
typedef gb_tensor *(*gb_train_step_fn)(gb_train_state *s, gb_tensor *x, gb_tensor *y,
                                       gb_tensor *sample_weight, gb_tensor **y_pred,
                                       void *user);

typedef struct gb_compile_options {
    gb_optimizer *optimizer;  /* required; the caller's */
    gb_loss_spec loss;        /* required, unless losses are given */
    /* Models of several outputs: one loss per output (kind GB_LOSS_NONE:
     * that output is not trained and takes no target); without them,
     * `loss` applies to every output. */
    const gb_loss_spec *losses;
    int nlosses;
    /* The total loss is sum(loss_weights[k] * loss_k); NULL: all 1. */
    const double *loss_weights;
    /* "accuracy" (sparse or categorical, from the loss), "mse", "mae",
     * "precision", "recall", "auc" (Keras' defaults: threshold 0.5, 200
     * thresholds); each appears in the logs under its name as given.
     * With several outputs each name watches every output whose loss it
     * fits, logged as "<output>_<name>". */
    const char *const *metrics;
    int nmetrics;
    /* Metric objects (built-in with options, or custom: gb_metric_new),
     * updated with (y, y_pred, sample_weight) after the named ones and
     * logged under gb_metric_name. Borrowed: they must outlive the
     * model's training; fit resets them. At most 16 metrics in all. */
    gb_metric *const *metric_objects;
    int nmetric_objects;
    bool run_eagerly;         /* no tracing: steps run op by op */
    gb_train_step_fn train_step;  /* NULL: the default step; one input and output only */
    void *train_step_user;
} gb_compile_options;

bool gb_model_compile(gb_module *model, const gb_compile_options *options);

/* The compiled loss of a batch: per-sample losses weighted by
 * sample_weight (NULL: all 1), summed, divided by the batch size. */
gb_tensor *gb_train_compiled_loss(gb_train_state *s, gb_tensor *y_true, gb_tensor *y_pred,
                                  gb_tensor *sample_weight);

/* ---- callbacks ------------------------------------------------------------------- */

/* What callbacks see: the model, its optimizer, the plan of the run, and
 * the flag that stops it (Keras' model.stop_training). */
struct gb_train_state {
    gb_module *model;
    gb_optimizer *optimizer;
    int epochs;               /* the last epoch + 1 (fit's epochs) */
    int64_t steps;            /* steps per epoch */
    int64_t batch_size;       /* fit's batch_size (per rank); 0 on a dataset (its own batches) */
    const char *loss;         /* the compiled loss (of the first output with one):
                                 "sparse_categorical_crossentropy", a custom loss's name... */
    int verbose;
    bool stop_training;
    /* A callback that wants a batch's gradients sets want_gradients in
     * on_batch_begin; in that batch's on_batch_end, gradients holds one
     * per trainable variable (NULL: none for it), ngradients of them,
     * alive until the hook returns. The default train step gives them (a
     * traced step traces once more, with them as outputs); a custom one
     * does not. */
    bool want_gradients;
    gb_tensor *const *gradients;
    int ngradients;
    /* This process's rank among num_ranks in a distributed fit (else 0
     * of 1): a callback that writes files writes on rank 0 only. */
    int rank, num_ranks;
    void *compiled;           /* private */
    struct gb_callback *progress_bar; /* private: fit's progress bar, for gb_train_print */
};

/* Prints a line (printf format; the newline is added) for the person
 * watching fit, as tqdm.write does: while a progress bar is live on a
 * terminal, its line is cleared, the text printed, and the bar drawn
 * again below it, so nothing lands in the middle of the bar. Without a
 * bar (verbose 0, another rank) the line goes to stdout; with one, to
 * the bar's stream (gb_fit_options.out). Callbacks call it with their s. */
void gb_train_print(gb_train_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct gb_callback gb_callback;
typedef struct gb_callback_type {
    const char *name;
    size_t state_size;        /* zeroed state at gb_callback_state() */
    void (*on_train_begin)(gb_callback *cb, gb_train_state *s, gb_logs *logs);
    void (*on_train_end)(gb_callback *cb, gb_train_state *s, gb_logs *logs);
    void (*on_epoch_begin)(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs);
    void (*on_epoch_end)(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs);
    void (*on_batch_begin)(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs);
    void (*on_batch_end)(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs);
    void (*free)(gb_callback *cb);
} gb_callback_type;

gb_callback *gb_callback_new(const gb_callback_type *type);
void *gb_callback_state(gb_callback *cb);
void gb_callback_free(gb_callback *cb);

/* EarlyStopping: stops when `monitor` ("val_loss") has not improved by
 * more than min_delta for `patience` epochs; mode "min", "max" or "auto"
 * (max for names with "acc"); restore_best_weights puts back the weights
 * of the best epoch at the end of training, stopped or not (Keras 3). */
typedef struct gb_early_stopping_options {
    const char *monitor;      /* NULL: "val_loss" */
    double min_delta;
    int patience;
    const char *mode;         /* NULL: "auto" */
    bool restore_best_weights;
    int start_from_epoch;     /* epochs to wait before watching at all */
    int verbose;              /* 1: say when it stops and restores */
} gb_early_stopping_options;
gb_callback *gb_early_stopping(const gb_early_stopping_options *o);
/* The epoch it stopped at (0-based), or -1. */
int gb_early_stopping_stopped_epoch(gb_callback *cb);

/* ReduceLROnPlateau: multiplies the learning rate by factor when monitor
 * has not improved for patience epochs, then waits cooldown epochs; never
 * below min_lr. Adds "learning_rate" to each epoch's logs. The optimizer
 * must have a constant learning rate (not a schedule). */
typedef struct gb_reduce_lr_options {
    const char *monitor;      /* NULL: "val_loss" */
    double factor;            /* 0: 0.1 */
    int patience;             /* 0: 10 */
    const char *mode;
    double min_delta;         /* 0: 1e-4 */
    int cooldown;
    double min_lr;
    int verbose;              /* 1: say when it reduces */
} gb_reduce_lr_options;
gb_callback *gb_reduce_lr_on_plateau(const gb_reduce_lr_options *o);

/* TerminateOnNaN: stops at the first batch whose loss is NaN or Inf. */
gb_callback *gb_terminate_on_nan(void);

/* LearningRateScheduler: lr = fn(epoch, lr) at each epoch's start;
 * "learning_rate" in each epoch's logs. */
typedef double (*gb_epoch_lr_fn)(int epoch, double lr, void *user);
gb_callback *gb_learning_rate_scheduler(gb_epoch_lr_fn fn, void *user);

/* ModelCheckpoint: at each epoch's end, saves the model to filepath,
 * where "{epoch}" becomes the 1-based epoch ("ckpt/epoch-{epoch}"); with
 * save_best_only only when monitor improved (mode as EarlyStopping's).
 * As Keras: the whole model as a model file (gb_model_save: architecture,
 * weights, compile arguments, optimizer state), or with save_weights_only
 * a checkpoint of the weights and the optimizer's state (gb_io.h: paths
 * "model/..." and "optimizer/..."). Every write is atomic. */
typedef struct gb_model_checkpoint_options {
    const char *filepath;     /* required */
    const char *monitor;      /* NULL: "val_loss" */
    const char *mode;         /* NULL: "auto" */
    bool save_best_only;
    bool save_weights_only;   /* false (Keras' default): a model file */
    int verbose;              /* 1: a line per epoch, as Keras */
} gb_model_checkpoint_options;
gb_callback *gb_model_checkpoint(const gb_model_checkpoint_options *o);
/* The path of the last save ("" before any). */
const char *gb_model_checkpoint_last_path(gb_callback *cb);

/* BackupAndRestore: fault tolerance for fit (keras.callbacks.
 * BackupAndRestore). Saves the training state — the model's weights, the
 * optimizer's state (and its constant learning rate, which a callback may
 * have changed), the epoch and the batch within it, the compiled
 * metrics so far and where fit is in its stream of batches (the shuffle's
 * seed and pass) — to one file in backup_dir, atomically, at each epoch's
 * end or every save_freq batches. A fit that starts with a backup there
 * restores it and continues from that epoch and batch, on the same data
 * in the same order: a run killed part way and started again ends with
 * the weights of a run never interrupted, bit for bit (datasets: the
 * batches already trained are read again and dropped, after replaying the
 * iterators made before; exact when the dataset's order depends only on
 * its seeds, as shuffle's does). When training ends (not after an error)
 * the backup is deleted, unless keep_checkpoint. The backup must come
 * from the same model, compile and data (sizes are checked). */
typedef struct gb_backup_and_restore_options {
    const char *backup_dir;   /* required; made when missing */
    int64_t save_freq;        /* 0: at each epoch's end ("epoch"); N > 0: every N batches */
    bool keep_checkpoint;     /* Keras delete_checkpoint=False */
} gb_backup_and_restore_options;
gb_callback *gb_backup_and_restore(const gb_backup_and_restore_options *o);
/* The backup file in backup_dir ("<backup_dir>/backup.ckpt"). */
const char *gb_backup_and_restore_path(gb_callback *cb);

/* LambdaCallback: any of the hooks as plain functions. */
typedef struct gb_lambda_callback {
    void (*on_epoch_begin)(gb_train_state *s, int epoch, gb_logs *logs, void *user);
    void (*on_epoch_end)(gb_train_state *s, int epoch, gb_logs *logs, void *user);
    void (*on_batch_begin)(gb_train_state *s, int64_t batch, gb_logs *logs, void *user);
    void (*on_batch_end)(gb_train_state *s, int64_t batch, gb_logs *logs, void *user);
    void (*on_train_begin)(gb_train_state *s, gb_logs *logs, void *user);
    void (*on_train_end)(gb_train_state *s, gb_logs *logs, void *user);
    void *user;
} gb_lambda_callback;
gb_callback *gb_lambda(const gb_lambda_callback *fns);

/* CSVLogger(filename, separator, append): a row per epoch, "epoch" (0-
 * based) then the first epoch's log keys sorted by name (a later epoch's
 * missing key: NA). append: add to an existing file, without a second
 * header; otherwise the file is rewritten when training begins.
 * separator 0: ','. A file that cannot be written stops fit (GB_ERR_IO). */
gb_callback *gb_csv_logger(const char *filename, char separator, bool append);

/* ---- fit, evaluate, predict ------------------------------------------------------- */

/* Data of a model of several inputs and outputs: x one tensor per input,
 * y one per output (NULL for an output compiled without a loss), all
 * with the same number of samples. */
typedef struct gb_data_arrays {
    int nx, ny;
    gb_tensor *const *x;
    gb_tensor *const *y;
} gb_data_arrays;

typedef struct gb_fit_options {
    int epochs;                   /* 1 */
    int64_t batch_size;           /* 32 */
    int verbose;                  /* 1: a progress bar; 2: a line per epoch; 0: quiet */
    bool shuffle;                 /* true */
    uint64_t seed;                /* the shuffle's; 0: from gb_nn_set_seed's sequence */
    double validation_split;      /* the last fraction of x, y; ignored with val_x */
    gb_tensor *val_x, *val_y;     /* validation_data */
    gb_data_arrays val_data;      /* validation_data of several inputs/outputs (nx 0: none) */
    gb_dataset *val_dataset;      /* validation_data as a dataset (borrowed) */
    const double *class_weight;   /* per class index (y int); NULL: none */
    int nclass_weight;
    gb_tensor *sample_weight;     /* [N] float; NULL: none */
    gb_callback *const *callbacks; /* borrowed; History and the progress bar are built in */
    int ncallbacks;
    int initial_epoch;
    int64_t steps_per_epoch;      /* 0: all the batches */
    FILE *out;                    /* the progress bar's; NULL: stdout */
    /* Data-parallel over the ranks of an MPI job (gb_dist.h; no effect in
     * a job of one): every rank passes the same x, y and seed; each global
     * batch of batch_size * ranks rows of the shuffled order is split
     * among the ranks (batch_size is per rank, as in Horovod); rank 0's
     * weights are broadcast first (the model built from x if need be);
     * gradients are averaged over the ranks — a traced step returns them
     * from its graph and the update runs outside it, so it averages after
     * backward, where an eager one (run_eagerly) overlaps it with
     * backward; metrics and validation (each rank takes a slice) are
     * combined over the ranks, so every rank sees the same logs and
     * callbacks decide alike; non-trainable variables (BatchNorm's
     * statistics) are averaged at each epoch's end. Only rank 0 shows the
     * progress bar, and the built-in callbacks that write files
     * (ModelCheckpoint, CSVLogger, the summary callback) write only there.
     * On datasets each rank iterates its own (gb_dataset_shard), which
     * must give every rank the same number of batches. */
    bool distributed;
} gb_fit_options;

gb_fit_options gb_fit_defaults(void);


/* Trains; the history of every epoch trained (also when a callback
 * stopped early), or NULL after an error (the sticky error says which). */
gb_history *gb_model_fit(gb_module *model, gb_tensor *x, gb_tensor *y, const gb_fit_options *o);

/* The compiled loss and metrics over x, y (sample_weight may be NULL),
 * written to *out ("loss", "accuracy"...). */
bool gb_model_evaluate(gb_module *model, gb_tensor *x, gb_tensor *y, gb_tensor *sample_weight,
                       int64_t batch_size, gb_logs *out);

/* The model's outputs for x, batch by batch (inference mode), as one
 * tensor in the current scope. */
gb_tensor *gb_model_predict(gb_module *model, gb_tensor *x, int64_t batch_size);

/* The same for models of several inputs and outputs (functional models):
 * fit and evaluate log the total loss, each output's "<output>_loss" and
 * its metrics; predict writes one tensor per output into out (room for
 * GB_NN_MAX_IO) and returns how many, or -1. class_weight needs a single
 * output, as in Keras. */
gb_history *gb_model_fit_arrays(gb_module *model, gb_data_arrays data, const gb_fit_options *o);
bool gb_model_evaluate_arrays(gb_module *model, gb_data_arrays data, gb_tensor *sample_weight,
                              int64_t batch_size, gb_logs *out);
int gb_model_predict_arrays(gb_module *model, int nx, gb_tensor *const *x, int64_t batch_size,
                            gb_tensor **out);

/* fit and evaluate on a dataset (borrowed): each element is a batch whose
 * components are the model's inputs, then the targets of the outputs
 * with a loss, then optionally the sample weights. batch_size, shuffle,
 * validation_split and sample_weight do not apply (the dataset decides);
 * class_weight does. A dataset of unknown length is counted in the first
 * epoch ("12/Unknown" in the progress bar); an infinite one needs
 * steps_per_epoch. */
gb_history *gb_model_fit_dataset(gb_module *model, gb_dataset *ds, const gb_fit_options *o);
bool gb_model_evaluate_dataset(gb_module *model, gb_dataset *ds, gb_logs *out);

/* ---- model files ------------------------------------------------------------------ */

/* Keras' model.save: one file holding the model's architecture (its
 * config: every layer's, the Sequential list or the functional graph),
 * its weights, and, when it is compiled, the compile arguments (the
 * optimizer's kind and hyperparameters, a loss per output, loss weights,
 * metric names and objects) and the optimizer's state (slots,
 * iterations). Written atomically; the format is documented in
 * framework/train/model_file.c. What is C code is saved by name and the
 * loading program supplies it (Keras' custom_objects): custom layer types
 * by class (gb_register_module_type), custom losses by their
 * gb_loss_spec.name (gb_register_loss), metric objects by class
 * (gb_register_metric). A model compiled with a custom train_step or a
 * custom learning-rate schedule cannot be saved: an error says so. */
bool gb_model_save(gb_module *model, const char *path);
/* keras.models.load_model: a new model (the caller frees it), built, its
 * weights from the file, and, when it was saved compiled, compiled again
 * with a new optimizer holding the saved state, which the model owns
 * (gb_model_optimizer): fit continues as the saved model would have. NULL
 * with an error naming the file and what is wrong (damaged, newer format,
 * an unregistered class, ...); nothing is left behind. */
gb_module *gb_model_load(const char *path);
/* model.optimizer: the optimizer the model is compiled with (NULL: not
 * compiled). A loaded model's belongs to the model. */
gb_optimizer *gb_model_optimizer(gb_module *model);

/* Keras' custom_objects for gb_model_load: a custom loss under the name
 * its gb_loss_spec gives, a factory for metric objects of a class
 * (gb_metric_type's class_name) that makes one named `name` (the saved
 * one). Registering a name again with the same function is harmless,
 * with another one an error. */
bool gb_register_loss(const char *name, gb_loss_fn fn, void *user);
typedef gb_metric *(*gb_metric_factory)(const char *name, void *user);
bool gb_register_metric(const char *class_name, gb_metric_factory make, void *user);

/* ---- preprocessing layers over datasets ------------------------------------------- */

/* TextVectorization / StringLookup's adapt (keras Layer.adapt) over every
 * element of ds, its first component strings of any shape. */
bool gb_text_vectorization_adapt(gb_module *layer, gb_dataset *ds);

#if !defined(GB_BUILDING_LIBRARY)
#define gb_model_save(...) GB_AT(gb_model_save, __VA_ARGS__)
#define gb_model_load(...) GB_AT(gb_model_load, __VA_ARGS__)
#define gb_register_loss(...) GB_AT(gb_register_loss, __VA_ARGS__)
#define gb_register_metric(...) GB_AT(gb_register_metric, __VA_ARGS__)
#define gb_backup_and_restore(...) GB_AT(gb_backup_and_restore, __VA_ARGS__)
#define gb_backup_and_restore_path(...) GB_AT(gb_backup_and_restore_path, __VA_ARGS__)
#define gb_model_optimizer(...) GB_AT(gb_model_optimizer, __VA_ARGS__)
#define gb_model_compile(...) GB_AT(gb_model_compile, __VA_ARGS__)
#define gb_model_fit(...) GB_AT(gb_model_fit, __VA_ARGS__)
#define gb_text_vectorization_adapt(...) GB_AT(gb_text_vectorization_adapt, __VA_ARGS__)
#define gb_model_evaluate(...) GB_AT(gb_model_evaluate, __VA_ARGS__)
#define gb_model_predict(...) GB_AT(gb_model_predict, __VA_ARGS__)
#define gb_model_fit_arrays(...) GB_AT(gb_model_fit_arrays, __VA_ARGS__)
#define gb_model_evaluate_arrays(...) GB_AT(gb_model_evaluate_arrays, __VA_ARGS__)
#define gb_model_predict_arrays(...) GB_AT(gb_model_predict_arrays, __VA_ARGS__)
#define gb_model_fit_dataset(...) GB_AT(gb_model_fit_dataset, __VA_ARGS__)
#define gb_model_evaluate_dataset(...) GB_AT(gb_model_evaluate_dataset, __VA_ARGS__)
#define gb_logs_set(...) GB_AT(gb_logs_set, __VA_ARGS__)
#define gb_train_compiled_loss(...) GB_AT(gb_train_compiled_loss, __VA_ARGS__)
#define gb_callback_new(...) GB_AT(gb_callback_new, __VA_ARGS__)
#define gb_callback_state(...) GB_AT(gb_callback_state, __VA_ARGS__)
#define gb_early_stopping(...) GB_AT(gb_early_stopping, __VA_ARGS__)
#define gb_reduce_lr_on_plateau(...) GB_AT(gb_reduce_lr_on_plateau, __VA_ARGS__)
#define gb_terminate_on_nan(...) GB_AT(gb_terminate_on_nan, __VA_ARGS__)
#define gb_learning_rate_scheduler(...) GB_AT(gb_learning_rate_scheduler, __VA_ARGS__)
#define gb_lambda(...) GB_AT(gb_lambda, __VA_ARGS__)
#define gb_model_checkpoint(...) GB_AT(gb_model_checkpoint, __VA_ARGS__)
#define gb_model_checkpoint_last_path(...) GB_AT(gb_model_checkpoint_last_path, __VA_ARGS__)
#define gb_csv_logger(...) GB_AT(gb_csv_logger, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
