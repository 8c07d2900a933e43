/* train/internal.h — what the train/ sources share: the compiled state a
 * model carries after gb_model_compile, the steps fit runs, the batching,
 * the callback list and the progress bar.
 */
#ifndef GB_TRAIN_INTERNAL_H
#define GB_TRAIN_INTERNAL_H

#include "gb_train.h"
#include "io/internal.h"
#include "nn/internal.h"

enum { GB__MAX_METRICS = 16 };

typedef enum gb__metric_kind {
    GB__METRIC_SPARSE_ACCURACY,
    GB__METRIC_CATEGORICAL_ACCURACY,
    GB__METRIC_MSE,
    GB__METRIC_MAE,
    GB__METRIC_PRECISION,
    GB__METRIC_RECALL,
    GB__METRIC_AUC,
    GB__METRIC_OBJECT,      /* the caller's (metric_objects): not freed */
} gb__metric_kind;

/* A group of tensors, one per model input or output (NULL where an
 * output has no loss and so no target). */
typedef struct gb__io {
    int n;
    gb_tensor *t[GB_NN_MAX_IO];
} gb__io;

static inline gb__io gb__io_one(gb_tensor *t) { return (gb__io){.n = 1, .t = {t}}; }

/* fit's position in a run (fit.c keeps it current before the callbacks
 * of each batch's and epoch's end; BackupAndRestore saves it): the epoch,
 * the batches of it trained, and the stream of batches — arrays: the
 * pass over the (shuffled) rows, the offset in it, the shuffle's seed;
 * datasets: the iterators made so far and the batches taken from the
 * live one (-1: none live). samples, batch_size and steps say which run
 * it belongs to. All int64, so it is saved as it is. */
typedef struct gb__fit_position {
    int64_t epoch, batch;
    int64_t pass, pos;
    int64_t seed;             /* the uint64 seed's bits */
    int64_t samples, batch_size, steps;
} gb__fit_position;

/* Where the next fit starts instead of initial_epoch, set by a callback
 * in on_train_begin (BackupAndRestore): the position to continue from,
 * and the compiled metrics' states then (gb__metrics_state_get), put
 * back when the epoch resumes part way. fit consumes it. */
/* Whether fit, now at `now` (before training: its data and batching),
 * can continue from `saved`: the same samples, batch size and steps per
 * epoch, and a position inside them; false with an error saying which
 * differs. */
bool gb__fit_resumable(const gb__fit_position *now, const gb__fit_position *saved);

typedef struct gb__resume {
    bool pending;
    gb__fit_position at;
    unsigned char *metrics;   /* malloc'd; NULL: none */
    size_t nmetrics;
} gb__resume;

typedef struct gb__compiled {
    gb_module *model;
    gb_compile_options opts;          /* metrics and losses pointers not kept */
    /* What compile was given, for model files: the metric names. */
    char metric_names[GB__MAX_METRICS][GB_LOGS_KEY_BYTES];
    int nmetric_names;
    /* Owned by the compiled state (a model loaded from a file): freed with it. */
    bool owns_optimizer;
    bool owns_metric[GB__MAX_METRICS];
    gb__fit_position at;
    gb__resume resume;
    int nout;                         /* the model's outputs */
    gb_loss_spec loss[GB_NN_MAX_IO];  /* per output; GB_LOSS_NONE: none */
    double loss_weight[GB_NN_MAX_IO];
    int nlossy;                       /* outputs with a loss */
    gb_metric *loss_tracker;          /* "loss": batch losses weighted by batch size */
    gb_metric *out_loss[GB_NN_MAX_IO];  /* "<output>_loss" of a model of several outputs */
    int nmetrics;
    gb__metric_kind metric_kind[GB__MAX_METRICS];
    int metric_out[GB__MAX_METRICS];  /* the output each metric watches */
    gb_metric *metric[GB__MAX_METRICS];
    /* The traced steps, made for one input signature (the inputs' and
     * targets' dtypes and inner shapes), remade when another comes. */
    gb_function *train_fn[2], *test_fn[2], *predict_fn;   /* [weighted] */
    gb_tensor_spec specs[2 * GB_NN_MAX_IO + 1];           /* x..., y..., sample weight */
    int nspec_x, nspec_y;
    gb_train_state state;             /* what steps and callbacks see */
    /* A distributed fit on several ranks is under way (gb_fit_options); the
     * traced train functions were made for `traced_dist` (a distributed
     * step returns its gradients instead of applying them). */
    bool dist, traced_dist;
    /* The default step's gradients when the state wants them: eagerly
     * the tensors themselves, traced the function's extra outputs. */
    gb_tensor **grads;
    int ngrads, capgrads;
    /* Where a traced step's outputs land (GB_FUNCTION_MAX_OUTPUTS of
     * them: the loss, the predictions, their losses, the health figures
     * and a gradient per trainable variable). */
    gb_tensor **step_out;
    /* The training-health checks' measures of this model (health_fit.c);
     * NULL until a fit checks it. */
    struct gb__health_fit *health;
} gb__compiled;

/* The model's compiled state, or NULL with an error naming `who`. */
gb__compiled *gb__compiled_of(gb_module *model, const char *who);
/* gb_model_compile, the model then owning o->optimizer and the metric
 * objects (a model loaded from a file): they are freed with its compiled
 * state, or at once when compiling fails. */
bool gb__model_compile_owned(gb_module *model, const gb_compile_options *o);

/* ---- custom objects (custom_objects.c) --------------------------------------------- */

/* The loss registered under name (gb_register_loss) into *spec; false
 * with an error naming it and saying how to register it. */
bool gb__custom_loss(const char *name, gb_loss_spec *spec);
/* A new metric from the factory registered for class_name
 * (gb_register_metric), named name; NULL with an error saying how. */
gb_metric *gb__custom_metric(const char *class_name, const char *name);

/* ---- compile arguments as a config (compile_config.c) ------------------------------- */

/* The name a loss is saved under ("huber", a custom loss's name). */
const char *gb__loss_name(const gb_loss_spec *l);
/* c's compile arguments into dict out (the optimizer's config, a loss per
 * output, loss weights, metric names and objects, run_eagerly); false
 * with an error naming what a file cannot hold (a custom train_step, an
 * unnamed custom loss, a custom learning-rate schedule). */
bool gb__compile_get_config(const gb__compiled *c, gb_config *out);
/* Compiles model from such a config; the model owns the optimizer and
 * metric objects made for it. */
bool gb__compile_from_config(gb_module *model, const gb_config *c);

/* ---- the training state in a checkpoint (training_state.c) -------------------------- */

/* The model's variables ("model/...") and, unless opt is NULL, the
 * optimizer's state ("optimizer/...") with extra entries, written to
 * path atomically. */
bool gb__state_write(gb_module *model, gb_optimizer *opt, const char *path,
                     const gb__ckpt_entry *extra, int nextra);
/* Restores them from f, all or nothing: every tensor of f must be the
 * model's or the optimizer's but the caller's own entries own[0..nown).
 * The optimizer's slots are made first when f has some. */
bool gb__state_restore(gb_module *model, gb_optimizer *opt, const gb__ckpt_file *f,
                       const char *const *own, int nown);
/* The entry at path in f, its CRC checked and its dtype and rank as
 * wanted (rank 1: any length; a scalar otherwise); NULL with an error
 * naming the file and the entry. */
const void *gb__state_entry(const gb__ckpt_file *f, const char *path, gb_dtype dt, int rank,
                            size_t *nbytes);

/* ---- model files (model_file.c) ------------------------------------------------------ */

/* gb_model_load's work on a model file's parts: the config.json text
 * (n bytes) and the container f it came with; path names them in errors. */
gb_module *gb__model_from_parts(const char *path, const char *json, size_t n,
                                const gb__ckpt_file *f);
/* gb_model_load on bytes already read (malloc'd; taken over). */
gb_module *gb__model_parse(const char *path, unsigned char *bytes, size_t size);

/* The compiled loss of a batch: sum over the outputs with a loss of
 * loss_weight * that output's weighted mean loss; each output's own into
 * per_output[k] when per_output is not NULL. */
gb_tensor *gb__compiled_loss(gb__compiled *c, const gb__io *y, const gb__io *y_pred,
                             gb_tensor *sw, gb_tensor **per_output);

/* ---- steps (steps.c) --------------------------------------------------------------- */

/* One batch through the train (or test) step: the loss (scalar), the
 * predictions (one per output) and each output's loss (several outputs
 * only); false after an error. Traced unless run_eagerly. */
typedef struct gb__step_out {
    gb_tensor *loss;
    gb__io y_pred;
    gb_tensor *out_loss[GB_NN_MAX_IO];
    gb_tensor *health;        /* a check step's activation figures (health_fit.c), or NULL */
} gb__step_out;
bool gb__train_batch(gb__compiled *c, const gb__io *x, const gb__io *y, gb_tensor *sw,
                     bool training, gb__step_out *out);
bool gb__predict_batch(gb__compiled *c, const gb__io *x, gb__io *out);
/* The compiled metrics and loss tracker: reset, update, and their results
 * into logs with an optional prefix ("val_"). */
void gb__metrics_reset(gb__compiled *c);
bool gb__metrics_update(gb__compiled *c, const gb__step_out *r, const gb__io *y, gb_tensor *sw);
/* ---- training health (health_fit.c) ------------------------------------------------ */

typedef struct gb__health_fit gb__health_fit;
/* Before a train step: on a check step, arms the optimizer's measure of
 * its updates (optim/measure.h) and, when the optimizer clips, asks the
 * step for the gradients; false after an error. */
bool gb__health_fit_before(gb__compiled *c);
/* The step's variant for the checks: 0 on the steps between checks; on a
 * check step the generation of the model's map (1, 2, ...: a traced
 * step made for one map never serves another), whose step also returns
 * its activations' figures. */
int64_t gb__health_fit_variant(const gb__compiled *c);
/* Inside the step body of a check step (`variant` not 0, traced or
 * eager): watch the layers' outputs of the forward pass, then, after it,
 * the activation figures as one tensor (NULL when no layer has any). */
gb__output_watch gb__health_fit_watch(gb__compiled *c, int64_t variant);
gb_tensor *gb__health_fit_unwatch(gb__compiled *c, gb__output_watch was);
/* After it: the loss to the spike detector; on a check step, the
 * figures measured (out->health, the updates' sums) and the rules run. */
void gb__health_fit_after(gb__compiled *c, const gb__io *x, const gb__step_out *out);
void gb__health_fit_free(gb__health_fit *h);
/* A distributed fit's start, on every rank: whether rank 0 checks,
 * agreed by all (one allreduce). */
bool gb__health_fit_dist_begin(gb__compiled *c);
/* A traced distributed step's gradients, before the averaging, on every
 * rank: on a check step, each rank's per-layer norms gathered to rank 0. */
bool gb__health_fit_rank_norms(gb__compiled *c, gb_tensor *const *grads, int n);

/* ---- a distributed fit (fit_dist.c) --------------------------------------------------- */

/* Readies a distributed fit on several ranks (c->dist): the model built
 * from x (NULL: it must be built), rank 0's weights broadcast. A job of
 * one leaves c->dist false. false after an error. */
bool gb__dist_fit_begin(gb__compiled *c, const gb__io *x);
void gb__dist_fit_end(gb__compiled *c);
/* This rank's slice of n rows: [*first, *first + *count). All of them
 * unless c->dist. */
void gb__dist_slice(const gb__compiled *c, int64_t n, int64_t *first, int64_t *count);
int64_t gb__dist_ranks(const gb__compiled *c);
/* A traced step's gradients averaged over the ranks, then applied. */
bool gb__dist_apply_averaged(gb__compiled *c, gb_tensor **grads, int n);
/* Non-trainable variables averaged (an epoch's end). */
bool gb__dist_epoch_end(gb__compiled *c);
/* The metrics' results, combined over the ranks when c->dist. */
bool gb__dist_metric_values(gb__compiled *c, gb_metric *const *metrics, int n, double *out);
/* The traced functions, dropped (the next call traces again). */
void gb__steps_free(gb__compiled *c);
void gb__metrics_logs(gb__compiled *c, const char *prefix, gb_logs *logs);
/* Every compiled metric's state (the loss trackers, then the metrics)
 * one after the other: their total size, a copy into out (that many
 * bytes), and back; set refuses (an error) a size that does not fit. */
size_t gb__metrics_state_size(gb__compiled *c);
void gb__metrics_state_get(gb__compiled *c, unsigned char *out);
bool gb__metrics_state_set(gb__compiled *c, const unsigned char *in, size_t n);

/* ---- datasets (fit_dataset.c) ------------------------------------------------------- */

/* fit's option checks, shared by arrays and datasets. */
bool gb__check_fit_options(gb__compiled *c, const gb_fit_options *o);
bool gb__check_fit_dataset(gb__compiled *c, gb_dataset *ds, const gb_fit_options *o);
/* Batches per epoch of ds, or -1 when unknown (counted as it runs). */
int64_t gb__dataset_steps(gb_dataset *ds);
/* The next element as a batch: 1, 0 at the end, -1 after an error.
 * With options, class_weight weighs it. */
int gb__dataset_batch(gb__compiled *c, gb_iterator *it, const gb_fit_options *o, gb__io *x,
                      gb__io *y, gb_tensor **sw);
bool gb__evaluate_dataset_into(gb__compiled *c, gb_dataset *ds, const char *prefix,
                               gb_logs *logs);

/* ---- batches (batches.c) ------------------------------------------------------------ */

int64_t gb__num_samples(gb_tensor *t);
/* Rows [begin, begin + n) of t (along axis 0). */
gb_tensor *gb__rows(gb_tensor *t, int64_t begin, int64_t n);
/* Rows idx[0..n) of t. */
gb_tensor *gb__gather_rows(gb_tensor *t, const int64_t *idx, int64_t n);
/* Each sample's weight: class_weight[y] times sample_weight (either may
 * be absent); NULL when both are, or after an error (which says why). */
gb_tensor *gb__sample_weights(gb_tensor *y, const double *class_weight, int nclass,
                              gb_tensor *sample_weight, int64_t n);

/* ---- the callback list (callbacks.c) ------------------------------------------------ */

struct gb_callback {
    const gb_callback_type *type;
    _Alignas(max_align_t) unsigned char state[];
};

typedef struct gb__callbacks {
    gb_callback *const *user;
    int nuser;
    gb_callback *progbar;             /* NULL when verbose is 0 */
} gb__callbacks;

void gb__cb_train_begin(gb__callbacks *l, gb_train_state *s, gb_logs *logs);
void gb__cb_train_end(gb__callbacks *l, gb_train_state *s, gb_logs *logs);
void gb__cb_epoch_begin(gb__callbacks *l, gb_train_state *s, int epoch, gb_logs *logs);
void gb__cb_epoch_end(gb__callbacks *l, gb_train_state *s, int epoch, gb_logs *logs);
void gb__cb_batch_begin(gb__callbacks *l, gb_train_state *s, int64_t batch, gb_logs *logs);
void gb__cb_batch_end(gb__callbacks *l, gb_train_state *s, int64_t batch, gb_logs *logs);

/* A monitored value's direction: +1 when bigger is better ("max", or
 * "auto" on an accuracy, AUC, precision or recall), -1 when smaller is;
 * 0 after an error naming who (a mode that is none of min, max, auto). */
int gb__monitor_sign(const char *who, const char *monitor, const char *mode);
/* The same for a callback's options: monitor (NULL: "val_loss") copied
 * into name[GB_LOGS_KEY_BYTES]; 0 after an error naming who. */
int gb__monitor_init(const char *who, const char *monitor, const char *mode, char *name);
/* current beats best by more than min_delta in the sign's direction. */
bool gb__monitor_improved(int sign, double current, double best, double min_delta);
/* logs[monitor] into *value; false (with a one-time warning naming who
 * and the keys there are) when absent. */
bool gb__monitor_value(const char *who, const char *monitor, const gb_logs *logs, bool *warned,
                       double *value);

/* ProgbarLogger: Keras' progress bar, to out (a terminal: redrawn in place;
 * otherwise the last line of each epoch only). */
gb_callback *gb__progbar_logger(FILE *out, int verbose);
/* Tests: every progress bar made after this redraws in place as on a
 * terminal, whatever its stream. */
void gb__progbar_force_terminal(bool on);

/* The progress bar's clock (seconds); tests set a fake one (NULL: the
 * monotonic clock). */
void gb__train_set_clock(double (*now)(void));
double gb__train_now(void);

/* One line of the bar: current of target steps, the logs (printed sorted
 * by name), elapsed seconds since the start, the time per step; finalize
 * for the epoch's last line. Writes at most n bytes of buf. */
void gb__progbar_format(char *buf, size_t n, int verbose, int64_t current, int64_t target,
                        double elapsed, double per_step, bool finalize, const gb_logs *logs,
                        bool colour);

/* ---- history (logs.c) --------------------------------------------------------------- */

gb_history *gb__history_new(void);
bool gb__history_append(gb_history *h, int epoch, const gb_logs *logs);

/* The model's variables, copied out, and put back (EarlyStopping). */
typedef struct gb__weights gb__weights;
gb__weights *gb__weights_save(gb_module *model);
bool gb__weights_restore(gb_module *model, const gb__weights *w);
void gb__weights_free(gb__weights *w);

#endif
