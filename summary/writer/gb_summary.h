/* gb_summary.h — the tf.summary-style writer of the glassbox event store.
 *
 * A writer appends events (scalars, histograms, images, text, graphs and
 * the engine's own events) for one run to an SQLite store file, creating
 * both as needed. Writing is cheap: the calling thread only validates its
 * arguments and appends to an in-memory queue; a background thread commits
 * batched transactions every `flush_every_events` events or `flush_every_ms`
 * milliseconds, and on gb_summary_flush() / gb_summary_writer_close().
 * Several processes may write to one store at once (WAL, busy timeout,
 * retries): no event is lost. A crash loses at most the unflushed tail and
 * never corrupts the file.
 *
 * Errors. Every call returns a gb_status (GB_OK on success) and never
 * exits; the message of this thread's last failure is
 * gb_summary_last_error(). A failure of the background thread (disk full,
 * I/O) is sticky on the writer: later writes, flush and close return it.
 *
 * The default writer. Calls take the writer first; NULL means the default
 * writer (gb_summary_set_default), as tf.summary calls use the writer of
 * `with writer.as_default()`. The default writer also subscribes to the
 * engine's observer events (traces, numerics alerts, op timings,
 * warnings, placements) and stores them.
 *
 * Steps. Pass GB_STEP_DEFAULT to use the global step of
 * gb_summary_set_step() (tf.summary.experimental.set_step). Steps must lie
 * within +-GB_STEP_LIMIT.
 *
 *     gb_summary_writer *w;
 *     if (gb_summary_writer_open("runs.db", "mlp-adam", NULL, &w) != GB_OK) {
 *         fprintf(stderr, "%s\n", gb_summary_last_error());
 *         return 1;
 *     }
 *     gb_summary_set_default(w);
 *     gb_summary_hparam_num(NULL, "learning_rate", 1e-3);
 *     for (int64_t step = 0; step < 1000; step++) {
 *         ...
 *         gb_summary_scalar(NULL, "loss", loss, step);
 *     }
 *     gb_summary_writer_close(w);      // flushes, stops being the default
 */
#ifndef GB_SUMMARY_H
#define GB_SUMMARY_H

#include "gb_base.h"
#include "gb_tensor.h"
#include "gb_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- steps ------------------------------------------------------------------ */

#define GB_STEP_DEFAULT INT64_MIN          /* "use the global step" */
#define GB_STEP_LIMIT ((int64_t)1 << 62)   /* |step| must not exceed this */

/* tf.summary.experimental.set_step: the process-wide default step. It is
 * the engine's step (gb_set_step in gb_observer.h), so numerics alerts and
 * other engine events carry it too. */
void gb_summary_set_step(int64_t step);
/* The global step into *out; false (and *out untouched) when none is set. */
bool gb_summary_get_step(int64_t *out);
void gb_summary_clear_step(void);

/* ---- errors -------------------------------------------------------------------- */

/* This thread's last failure, e.g. "gb_summary_image 'inputs': expected a
 * rank-4 tensor [N,H,W,C], got rank 2 [28,28]"; "" if none. */
const char *gb_summary_last_error(void);
void gb_summary_clear_error(void);

/* ---- writers --------------------------------------------------------------------- */

typedef struct gb_summary_writer gb_summary_writer;

/* Zero fields take the defaults shown. */
typedef struct gb_summary_options {
    int flush_every_events;    /* 10000: commit once this many are queued */
    int flush_every_ms;        /* 250: ... or this long after the oldest queued event */
    size_t max_queue_events;   /* 200000: writers block (never drop) beyond this backlog */
    size_t max_queue_bytes;    /* 256 MiB of queued payload (images, histograms, text) */
    int histogram_buckets;     /* 30, as TensorFlow 2 */
    int busy_timeout_ms;       /* 5000 per attempt; busy commits are retried forever */
    bool new_run;              /* false: a run that exists is continued; true: it is left
                                  alone and this writer starts "<run>_2" (or _3, ...) */
} gb_summary_options;

/* Opens (creating if needed) the store at `path` and the run `run` in it.
 * A run that exists is continued (its metadata kept), as a resumed
 * training wants, unless opts->new_run asks for a run of its own (a
 * program run twice into one store: two runs, never one merged series);
 * gb_summary_writer_run says which name it got. A new run records start
 * time, host, pid and command line. opts may be NULL. */
gb_status gb_summary_writer_open(const char *path, const char *run,
                                 const gb_summary_options *opts, gb_summary_writer **out);
/* The store this process writes into a logdir that `glassbox serve
 * --logdir` shows (several processes must not share one SQLite file over
 * a network file system): "<logdir>/<name>.db" for a job of one process,
 * "<logdir>/<name>/rank_<r>.db" for rank r of an MPI job (gb_dist_init
 * first), its directories made. The path goes into out (size bytes);
 * open it with gb_summary_writer_open. GB_ERR_VALUE for a NULL or empty
 * argument, a name with '/' or a path that does not fit; GB_ERR_IO when a
 * directory cannot be made. */
gb_status gb_summary_logdir_store(const char *logdir, const char *name, char *out, size_t size);
/* What gb_summary_import_tfevents read. */
typedef struct gb_tfevents_report {
    size_t files, events;                      /* event files and events read */
    size_t scalars, histograms, images, texts; /* values imported */
    size_t pr_curves;                          /* ... PR curves (the pr_curves plugin) */
    size_t audio;                              /* ... audio clips (WAV) */
    size_t hparams;     /* HParams plugin records: experiments, session starts and ends */
    size_t skipped;                            /* values of other kinds (audio, graphs...) */
    size_t resumed;     /* files read on from where an earlier import into the store stopped */
    size_t changed;     /* files left out: they no longer hold what an earlier import read */
    char notes[2048];   /* one line per file that could not be read to its end:
                           "<file>: stopped at byte N: <why>" (a torn or damaged record),
                           or that changed since it was imported */
} gb_tfevents_report;

/* Imports every TensorBoard event file (events.out.tfevents.*) under dir
 * into the store at db (made if missing): runs named by their directory
 * under dir (files in dir itself: dir's last component); scalars,
 * histograms, images (PNG) and text with their steps and wall times. A
 * file cut short or damaged is imported up to the bad record and noted in
 * report->notes. The store keeps how far it read each file: importing
 * again into it reads only the records added since (a file that changed
 * otherwise is noted and left out), so no event is stored twice.
 * GB_ERR_VALUE for NULL or empty arguments, GB_ERR_IO when dir is no
 * directory or the store cannot be read or written. */
gb_status gb_summary_import_tfevents(const char *dir, const char *db, gb_tfevents_report *report);
/* The same for the event files directly in dir (not below it), all into
 * one run named `run`: one TensorBoard run, as a logdir board follows it. */
gb_status gb_summary_import_tfevents_run(const char *dir, const char *run, const char *db,
                                         gb_tfevents_report *report);

/* The name of w's run: the one asked for, or with new_run the free name
 * it took ("mlp_2"). Owned by w. */
const char *gb_summary_writer_run(const gb_summary_writer *w);
/* Whether w continues a run that was in the store before it opened. */
bool gb_summary_writer_continues(const gb_summary_writer *w);
/* Commits everything queued, stops the background thread, closes the file
 * and frees w (even on error). Returns the writer's sticky error, if any.
 * A default writer stops being the default first; no other thread may
 * still be writing through w. */
gb_status gb_summary_writer_close(gb_summary_writer *w);
/* Blocks until every event queued before the call is committed. */
gb_status gb_summary_flush(gb_summary_writer *w);

/* Makes w the default writer (NULL: none) and subscribes it to the engine's
 * observer events; the previous default is unsubscribed. */
void gb_summary_set_default(gb_summary_writer *w);
gb_summary_writer *gb_summary_get_default(void);

/* Free-form hyperparameters of the run, to compare runs (upserted by key). */
gb_status gb_summary_hparam_str(gb_summary_writer *w, const char *key, const char *value);
gb_status gb_summary_hparam_num(gb_summary_writer *w, const char *key, double value);

/* ---- the experiment (TensorBoard's hp.hparams_config) and a run's status ----------- */

/* A hyperparameter of the experiment: the key runs record it under
 * (gb_summary_hparam_num / _str), its type and the values it may take. */
typedef struct gb_hparam_domain {
    const char *name;              /* required */
    const char *display_name;      /* NULL: none */
    const char *description;       /* NULL: none */
    gb_hparam_type type;
    gb_hparam_domain_kind domain;
    double min, max;               /* INTERVAL (real, int): finite, min <= max */
    size_t value_count;            /* DISCRETE: at least one value, */
    const double *values;          /* ... numbers for real, int and bool (0/1), */
    const char *const *strings;    /* ... or texts for string */
} gb_hparam_domain;

/* A metric: a scalar tag each run writes; whether higher is better. */
typedef struct gb_hparam_metric {
    const char *tag;               /* required */
    const char *display_name;      /* NULL: none */
    bool higher_is_better;
} gb_hparam_metric;

/* Declares the experiment's hyperparameters and metrics for the whole
 * store (any run's writer may do it; a name declared again is replaced),
 * as hp.hparams_config. Each run then records its own values with
 * gb_summary_hparam_num / _str (hp.hparams). Every entry is checked
 * first: a bad one fails the call naming it, and nothing is written. */
gb_status gb_summary_hparams_config(gb_summary_writer *w, const gb_hparam_domain *hparams,
                                    size_t hparam_count, const gb_hparam_metric *metrics,
                                    size_t metric_count);

typedef enum gb_run_status {
    GB_RUN_RUNNING = 0,   /* set by gb_summary_writer_open */
    GB_RUN_DONE,          /* set by gb_summary_writer_close unless the program said otherwise */
    GB_RUN_FAILED,
    GB_RUN_KILLED
} gb_run_status;

/* Says how the run ended (or that it runs again); close then keeps it. A
 * process killed by SIGKILL cannot say anything: its run stays "running"
 * in the store and readers on its host see it as "killed". */
gb_status gb_summary_run_status(gb_summary_writer *w, gb_run_status status);

/* ---- summaries --------------------------------------------------------------------- */

gb_status gb_summary_scalar(gb_summary_writer *w, const char *tag, double value, int64_t step);
/* The single element of a size-1 tensor of any dtype (e.g. a loss). */
gb_status gb_summary_scalar_tensor(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                                   int64_t step);
/* The values of t (any shape, any dtype, at least one element): exact
 * min, max, count, sum and sum of squares over the finite values, NaN and
 * Inf counted apart, and `histogram_buckets` equal-width buckets. */
gb_status gb_summary_histogram(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                               int64_t step);
/* Images from t, [N,H,W,C] with C 1, 3 or 4, uint8 or floating: the first
 * min(N, max_outputs) become PNGs. uint8 is stored as is. Floats, per image:
 * all >= 0: round(x*255) clipped to 255; with negatives: shifted so 0.0
 * maps to 127, scaled so the smallest is 0 or the largest 255; non-finite
 * pixels become 0 (gray) or red (colour). */
gb_status gb_summary_image(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                           int max_outputs, int64_t step);
gb_status gb_summary_text(gb_summary_writer *w, const char *tag, const char *text, int64_t step);
/* Attention weights as images, one per head (the Images page shows them
 * as several samples of one step): scores [heads, Tq, Tv], or [batch,
 * heads, Tq, Tv] of which the first sample is drawn (MultiHeadAttention's
 * return_attention_scores). Rows are queries, columns keys; each row is
 * scaled by its own largest weight (white: where that query looks most).
 * Weights must be >= 0. */
gb_status gb_summary_attention(gb_summary_writer *w, const char *tag, const gb_tensor *scores,
                               int64_t step);
/* A string tensor as text, as TensorBoard shows one: a scalar is its
 * markdown; rank 1 a one-column table, rank 2 a table of its rows and
 * columns (GFM markdown, header row the column numbers). Elements with NUL
 * bytes and ranks above 2 are refused by name. */
gb_status gb_summary_text_tensor(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                                 int64_t step);
/* A graph (e.g. gb_function_graph_text) under tag; format "text", "json"... */
gb_status gb_summary_graph(gb_summary_writer *w, const char *tag, const char *format,
                           const char *content, int64_t step);

/* A precision-recall curve, as TensorBoard's pr_curves summary: labels
 * (any dtype; nonzero is positive) and predictions (floating, each in
 * [0, 1]) of the same number of elements, optional weights (NULL, one
 * value, or one per element; finite, >= 0). At threshold i of
 * num_thresholds (2..10000), i / (num_thresholds - 1), a prediction p is
 * positive when floor(p * (num_thresholds - 1)) >= i; the store keeps the
 * weighted TP, FP, TN and FN per threshold, not the predictions. */
gb_status gb_summary_pr_curve(gb_summary_writer *w, const char *tag, const gb_tensor *labels,
                              const gb_tensor *predictions, int num_thresholds,
                              const gb_tensor *weights, int64_t step);
/* One curve per class of a classifier, under "<tag>/<class name>" (or
 * "<tag>/<index>" when class_names is NULL): probabilities [N, C], each in
 * [0, 1]; labels [N] of class indices in 0..C-1 (integer dtype) or [N, C]
 * one-hot. Class c's curve takes label == c as positive and column c as
 * the prediction. */
gb_status gb_summary_pr_curves(gb_summary_writer *w, const char *tag, const gb_tensor *labels,
                               const gb_tensor *probabilities, int num_thresholds,
                               const char *const *class_names, int64_t step);

/* Points for the embedding projector (TensorBoard's projector plugin): the
 * rows of values [N, D] (float32 or float64, finite; stored as float32,
 * N * D * 4 <= GB_SUMMARY_EMBEDDING_MAX_BYTES; the bounds are gb_reader.h's). metadata: NULL, or a
 * string tensor [N] (one column) or [N, C] (C columns; tabs and line
 * breaks inside a value become spaces) named by column_names (C names;
 * NULL: "label" for one column, "column 1" ... otherwise). sprite: NULL,
 * or one image per point [N, H, W, C] as gb_summary_image takes them,
 * tiled row-major into a square PNG atlas of at most
 * GB_SUMMARY_SPRITE_MAX_SIDE pixels a side. */
gb_status gb_summary_embedding(gb_summary_writer *w, const char *tag, const gb_tensor *values,
                               const gb_tensor *metadata, const char *const *column_names,
                               const gb_tensor *sprite, int64_t step);

/* tf.summary.audio: clips [k, frames, channels] (or [k, frames], one
 * channel), float32 or float64 in [-1, 1]; the first max_outputs (>= 1)
 * are stored, each as a 16-bit PCM WAV file at sample_rate Hz (1 ..
 * GB_SUMMARY_AUDIO_MAX_RATE), at most GB_SUMMARY_AUDIO_MAX_BYTES of samples.
 * A value outside [-1, 1] is clipped to it and counted (the Audio page
 * shows the count); a NaN or infinite value is refused by name. */
gb_status gb_summary_audio(gb_summary_writer *w, const char *tag, const gb_tensor *clips,
                           int sample_rate, int max_outputs, int64_t step);

/* tf.summary.trace_on / trace_export. From trace_on, the writer (which
 * must be the default one: it hears the engine's trace events) keeps the
 * graph of the last function traced; trace_export writes it under `name`
 * at step as a graph summary (format "json", the Graphs dashboard's) and
 * ends the tracing. profile: op timing stays on until the export, so the
 * Graphs dashboard can colour the nodes by compute time. Exporting with
 * nothing traced since trace_on is an error (GB_ERR_STATE) that says so. */
gb_status gb_summary_trace_on(gb_summary_writer *w, bool profile);
gb_status gb_summary_trace_export(gb_summary_writer *w, const char *name, int64_t step);

/* ---- engine events (normally written by the default writer's observer) ----- */

typedef struct gb_trace_record {
    const char *function;       /* required */
    bool is_retrace;
    const char *reason;         /* NULL: unknown */
    const char *signature;
    double duration_us;         /* NaN: unknown */
    int64_t nodes_before;       /* -1: unknown */
    int64_t nodes_after;
    const char *detail_json;    /* NULL or a JSON object for later fields */
} gb_trace_record;

/* A traced function's call counters (the engine's GB_EVENT_FUNCTION); the
 * store keeps the last report per run and function. */
typedef struct gb_function_record {
    const char *function;       /* required */
    int64_t calls, cache_hits, traces, concrete;
    double trace_ms;
} gb_function_record;
gb_status gb_summary_function_stats(gb_summary_writer *w, const gb_function_record *r);

typedef struct gb_numerics_record {
    const char *op_type;        /* required */
    const char *op_name;
    const char *function;
    const char *scope_path;
    const char *forward_op;     /* the forward op when found in a backward pass */
    int64_t nan_count, posinf_count, neginf_count;
    const char *message;
    const char *detail_json;
} gb_numerics_record;

/* For these, GB_STEP_DEFAULT with no global step records "no step". */
gb_status gb_summary_trace(gb_summary_writer *w, const gb_trace_record *r, int64_t step);
gb_status gb_summary_numerics(gb_summary_writer *w, const gb_numerics_record *r, int64_t step);

#ifdef __cplusplus
}
#endif
#endif
