/* gb_reader.h — reading the glassbox event store (read-only, no HTTP).
 *
 * The dashboards and `glassbox inspect|export` read the SQLite store only
 * through these functions, the public API of the store library
 * (summary/store/). It links SQLite and libc, never the engine: this
 * header includes none of the engine's headers.
 *
 * Handles. gb_store_open() opens a store file read-only. Calls on one
 * handle are serialized by an internal mutex, so a handle may be shared by
 * threads; for parallel queries open one handle per thread.
 *
 * Results. Every query fills `*out` with one result object (a struct with
 * a count and an array of rows, all strings and arrays inside it) that the
 * caller releases with ONE call to gb_store_free(), whatever its type.
 * On failure `*out` is NULL and the status says why; the message of the
 * thread's last failure is gb_store_last_error(). A query that meets a
 * damaged row (a file written by another tool, or changed on disk) fails
 * with GB_STORE_ERR_DATA naming the row, rather than return a guess;
 * queries of other tags and steps are not affected.
 *
 * Steps. Query bounds are inclusive; GB_STEP_MIN / GB_STEP_MAX leave a side
 * open. "Since step s" (live updates) is step_min = s + 1.
 *
 * Values. NaN, +Inf and -Inf scalars come back exactly as written.
 *
 * Example:
 *     gb_store *s;
 *     if (gb_store_open("runs.db", &s) != GB_STORE_OK) {
 *         fprintf(stderr, "%s\n", gb_store_last_error());
 *         return 1;
 *     }
 *     gb_scalar_series *loss;
 *     gb_query q = GB_QUERY_ALL;
 *     q.max_rows = 1000;                    // at most 1000 rows, envelopes kept
 *     if (gb_store_scalars(s, "run1", "loss", &q, &loss) == GB_STORE_OK) {
 *         for (size_t i = 0; i < loss->count; i++)
 *             printf("%lld %g [%g, %g]\n", (long long)loss->rows[i].step,
 *                    loss->rows[i].value, loss->rows[i].min, loss->rows[i].max);
 *         gb_store_free(loss);
 *     }
 *     gb_store_close(s);
 */
#ifndef GB_READER_H
#define GB_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this library writes and reads (PRAGMA user_version). */
#define GB_STORE_SCHEMA_VERSION 8
/* The scalar tag under which the engine's numerics checks count their
 * alerts (gb_debug.h's GB_NUMERICS_SEEN_TAG; a writer test keeps the two
 * equal): its last value is how many there were, stored or past the
 * limit, and its last step when the last one was. */
#define GB_STORE_NUMERICS_SEEN_TAG "numerics/alerts_seen"

/* ---- status and errors ------------------------------------------------- */

typedef enum gb_store_status {
    GB_STORE_OK = 0,
    GB_STORE_ERR_ARG,         /* NULL or invalid argument (message says which) */
    GB_STORE_ERR_NOT_FOUND,   /* the store file does not exist */
    GB_STORE_ERR_NOT_STORE,   /* the file is not a glassbox store */
    GB_STORE_ERR_NEWER,       /* written by a newer glassbox (schema version) */
    GB_STORE_ERR_NO_RUN,      /* no run of that name */
    GB_STORE_ERR_NO_TAG,      /* no tag of that name and kind in the run */
    GB_STORE_ERR_NO_ROW,      /* a single row asked for does not exist */
    GB_STORE_ERR_IO,          /* SQLite failed: I/O, locking, corruption */
    GB_STORE_ERR_MEMORY,
    GB_STORE_ERR_DATA         /* a stored row cannot be read as what it holds (an empty
                                 or foreign PNG, buckets of the wrong size, text that is
                                 a BLOB...): the message names the table, run, tag and
                                 step; nothing is guessed or left out silently */
} gb_store_status;

/* "GB_STORE_ERR_NO_RUN", ... */
const char *gb_store_status_name(gb_store_status st);
/* The message of this thread's last failed gb_store_* call ("" if none),
 * e.g. "store 'x.db': unknown run 'run7'". */
const char *gb_store_last_error(void);

/* ---- kinds of summaries -------------------------------------------------- */

typedef enum gb_summary_kind {
    GB_KIND_ANY = 0,          /* in queries: every kind */
    GB_KIND_SCALAR = 1,
    GB_KIND_HISTOGRAM = 2,
    GB_KIND_IMAGE = 3,
    GB_KIND_TEXT = 4,
    GB_KIND_GRAPH = 5,
    GB_KIND_PR_CURVE = 6,     /* precision-recall counts (schema 4) */
    GB_KIND_EMBEDDING = 7,    /* the projector's points (schema 6) */
    GB_KIND_AUDIO = 8         /* WAV clips (schema 6) */
} gb_summary_kind;

/* "scalar", "histogram", "image", "text", "graph", "pr_curve", "embedding",
 * "audio"; "any" for
 * GB_KIND_ANY. */
const char *gb_kind_name(gb_summary_kind kind);
/* The kind named `name`; false when there is none. */
bool gb_kind_from_name(const char *name, gb_summary_kind *out);

/* ---- steps and queries ----------------------------------------------------- */

#define GB_STEP_MIN INT64_MIN     /* open lower bound */
#define GB_STEP_MAX INT64_MAX     /* open upper bound */
#define GB_STEP_NONE INT64_MIN    /* in event rows: recorded without a step */

/* A step range and a row budget. */
typedef struct gb_query {
    int64_t step_min;   /* inclusive */
    int64_t step_max;   /* inclusive */
    size_t max_rows;    /* 0: every row. Scalars: at most this many rows,
                           downsampled with min/max envelopes when the range
                           holds more points. Other kinds: at most this many
                           rows evenly spread over the range, the last one
                           always included. */
} gb_query;
#define GB_QUERY_ALL ((gb_query){GB_STEP_MIN, GB_STEP_MAX, 0})

/* For event tables (traces, numerics, messages): rows with id > after_id,
 * oldest first, at most `limit` (0: all). Live views pass the last id seen. */
typedef struct gb_event_query {
    int64_t after_id;
    size_t limit;
} gb_event_query;
#define GB_EVENT_QUERY_ALL ((gb_event_query){0, 0})

/* ---- the store ---------------------------------------------------------------- */

typedef struct gb_store gb_store;

/* Opens `path` read-only: the handle never writes the store, and reads it
 * in a read-only directory too. Where the reader may not write beside the
 * store and no writer is live (someone else's finished runs), the file is
 * read as immutable: a writer that starts later is not seen by this handle
 * (see reader_open.c). Fails with NOT_FOUND, NOT_STORE (a directory, FIFO
 * or other non-regular file, not SQLite, or another application's
 * database), NEWER (schema version above GB_STORE_SCHEMA_VERSION) or IO. */
gb_store_status gb_store_open(const char *path, gb_store **out);
void gb_store_close(gb_store *s);            /* NULL is fine */
/* Creates an empty store at `path` (the schema, in WAL mode), as a writer
 * would, so a dashboard can be opened before training starts: `glassbox
 * serve` on a store that does not exist yet. *created says whether the
 * file was made here (false: it exists, and is left as it is). Fails
 * with NOT_STORE or NEWER for an existing file that is no store of this
 * glassbox, IO when the file cannot be made. */
gb_store_status gb_store_create(const char *path, bool *created);

/* Opens every store under the directories or glob patterns given (count of
 * them; "runs/", "sweep_*", "node[0-9]/ranks") as one read-only handle, as
 * `glassbox serve --logdir` serves them: directories are searched
 * recursively, and a file is a member when it is a glassbox store (found
 * by its header, whatever its name). A run's name is its store's path
 * under the directory, without the file's extension, a '/' and its name
 * there ("lr_0.1/trial/train"); with several patterns, or a pattern with
 * glob characters, the path begins with the directory as matched
 * ("sweep_a/lr_0.1/trial/train"). Every query of this API works on the
 * handle: one naming a run reads its store; runs, tags, summaries and the
 * experiment merge the stores' (the experiment declared by the first store
 * by path that declares one). Stores that appear, grow or disappear are
 * seen within about a second (inotify, and a scan every second for file
 * systems where it sees nothing); gb_store_data_version moves then.
 * Stores are opened when first read and closed when idle. Fails with
 * NOT_FOUND for a plain path that is not a directory; a pattern may match
 * nothing yet. Calls on the handle may come from several threads at once. */
gb_store_status gb_store_open_logdir(const char *const *patterns, size_t count, gb_store **out);

/* Releases any result object returned by a query below (NULL is fine). */
void gb_store_free(void *result);

/* The schema version of the open file. */
int gb_store_schema_version(gb_store *s);
/* Cheap change check (PRAGMA data_version): *out differs from the value of
 * the previous call on the same handle iff someone committed in between.
 * Values are only comparable within one handle. */
gb_store_status gb_store_data_version(gb_store *s, uint64_t *out);

/* ---- runs ------------------------------------------------------------------------ */

typedef struct gb_hparam {
    const char *key;
    const char *value;        /* as text, always set ("0.001", "adam") */
    bool is_number;
    double number;            /* when is_number */
} gb_hparam;

typedef struct gb_run_row {
    int64_t id;
    const char *name;
    double start_time;        /* seconds since the Unix epoch */
    double last_write_time;   /* of the last committed event (start_time if none) */
    const char *host;
    int64_t pid;              /* of the process that created the run */
    const char *command_line; /* arguments joined by spaces */
    size_t hparam_count;
    const gb_hparam *hparams; /* sorted by key */
    /* "running" (a writer has it open), "done" (closed), "failed" or
     * "killed" (as the program said: gb_summary_run_status), or "" in a
     * store older than schema 4. A "running" run whose process is gone —
     * the writer's host is this machine and its pid no longer exists, as
     * after SIGKILL — reads as "killed": it will never finish. */
    const char *status;
} gb_run_row;

typedef struct gb_runs {
    size_t count;
    const gb_run_row *rows;   /* sorted by name */
} gb_runs;

gb_store_status gb_store_runs(gb_store *s, gb_runs **out);

/* ---- the experiment: hyperparameter domains and metrics (schema 4) -------------- */

typedef enum gb_hparam_type {
    GB_HPARAM_REAL = 0,
    GB_HPARAM_INT,
    GB_HPARAM_STRING,
    GB_HPARAM_BOOL
} gb_hparam_type;

typedef enum gb_hparam_domain_kind {
    GB_DOMAIN_NONE = 0,       /* any value of the type */
    GB_DOMAIN_INTERVAL,       /* min <= value <= max (real, int) */
    GB_DOMAIN_DISCRETE        /* one of a list of values */
} gb_hparam_domain_kind;

/* "real", "int", "string", "bool"; "none", "interval", "discrete". */
const char *gb_hparam_type_name(gb_hparam_type t);
const char *gb_hparam_domain_name(gb_hparam_domain_kind d);

typedef struct gb_hparam_info {
    const char *name;
    const char *display_name;  /* "" when none was given */
    const char *description;
    gb_hparam_type type;
    gb_hparam_domain_kind domain;
    double min, max;           /* GB_DOMAIN_INTERVAL */
    const char *values_json;   /* GB_DOMAIN_DISCRETE: a JSON array; else "[]" */
} gb_hparam_info;

typedef struct gb_metric_info {
    const char *tag;           /* a scalar tag the runs write */
    const char *display_name;
    bool higher_is_better;
} gb_metric_info;

typedef struct gb_hparams_config {
    size_t hparam_count;
    const gb_hparam_info *hparams;   /* in declaration order */
    size_t metric_count;
    const gb_metric_info *metrics;   /* in declaration order */
} gb_hparams_config;

/* The experiment as declared by gb_summary_hparams_config (empty when
 * none was, and in a store older than schema 4). */
gb_store_status gb_store_hparams_config(gb_store *s, gb_hparams_config **out);

/* A scalar tag summed up per run, as the HParams table shows a metric:
 * its last point and its extremes, from the rollups (O(1) rows per run
 * whatever the series length). */
typedef struct gb_scalar_summary_row {
    const char *run;
    int64_t last_step;
    double last;               /* the value at last_step (NaN stays NaN) */
    double min, max;           /* over the finite values; NaN when none */
    int64_t count;             /* points, non-finite included */
} gb_scalar_summary_row;

typedef struct gb_scalar_summaries {
    size_t count;
    const gb_scalar_summary_row *rows;   /* by run name; runs without the tag left out */
} gb_scalar_summaries;

gb_store_status gb_store_scalar_summaries(gb_store *s, const char *tag,
                                          gb_scalar_summaries **out);

/* The HParams dashboard's table (and `glassbox export --hparams`): the
 * experiment — as declared, or when nothing was declared, inferred from
 * the runs: every hparam key (real when every run's value is a number,
 * else string; no domain) and every scalar tag of those runs but the
 * training-health figures (health/...) as a metric (up to
 * GB_EXPERIMENT_MAX_INFERRED_METRICS, by name, higher_is_better when the
 * tag's name holds "acc") — and one row per run that recorded
 * hparams, with each metric summed up (count 0: the run lacks the tag). */
#define GB_EXPERIMENT_MAX_INFERRED_METRICS 32

typedef struct gb_experiment_run {
    const gb_run_row *run;                  /* name, status, hparams */
    const gb_scalar_summary_row *metrics;   /* metric_count of them, in the metrics' order */
} gb_experiment_run;

typedef struct gb_experiment {
    bool declared;                          /* false: inferred from the runs */
    size_t hparam_count;
    const gb_hparam_info *hparams;
    size_t metric_count;
    const gb_metric_info *metrics;
    size_t run_count;
    const gb_experiment_run *runs;          /* by name */
} gb_experiment;

gb_store_status gb_store_experiment(gb_store *s, gb_experiment **out);

/* ---- what a store holds -------------------------------------------------------------- */

typedef enum gb_event_table {
    GB_EVENTS_TRACES = 0,     /* traces and retraces of functions */
    GB_EVENTS_PROFILES,       /* profiler captures (schema 5) */
    GB_EVENTS_NUMERICS,       /* numerics alerts */
    GB_EVENTS_HEALTH,         /* training health: alerts (schema 7) or health/ figures */
    GB_EVENTS_TABLES
} gb_event_table;

/* Whether any run of the store holds events of this table (*out): a
 * dashboard's tab asks it. One row read; a logdir handle answers from what
 * it read of each store, without opening them again. */
gb_store_status gb_store_has_events(gb_store *s, gb_event_table table, bool *out);

/* ---- tags ------------------------------------------------------------------------ */

typedef struct gb_tag_row {
    const char *run;
    const char *tag;
    gb_summary_kind kind;
    int64_t count;            /* events (scalar points, histograms, images...) */
    int64_t min_step, max_step;
    double last_wall_time;
} gb_tag_row;

typedef struct gb_tags {
    size_t count;
    const gb_tag_row *rows;   /* sorted by run, then tag */
} gb_tags;

/* The tags of `run` (NULL: of every run) of `kind` (GB_KIND_ANY: all).
 * NO_RUN if `run` is given and unknown. */
gb_store_status gb_store_tags(gb_store *s, const char *run, gb_summary_kind kind, gb_tags **out);

/* ---- scalars --------------------------------------------------------------------- */

/* One point, or one bucket of points when the series is downsampled.
 * min, max and mean are over the finite values (NaN when there is none);
 * non-finite values are counted, so no NaN/Inf is ever hidden. For a raw
 * point, first == last == value and step == step_last. */
typedef struct gb_scalar_row {
    int64_t step;             /* first step in the row */
    int64_t step_last;        /* last step in the row */
    double wall_time;         /* of the last point */
    double value;             /* raw: the value; bucket: the mean, or the
                                 last value when no point is finite */
    double first, last;       /* values at step and step_last */
    double min, max, mean;
    int64_t count;            /* points in the row, non-finite included */
    int64_t nan_count, posinf_count, neginf_count;
} gb_scalar_row;

typedef struct gb_scalar_series {
    bool downsampled;         /* rows are buckets (else one row per point) */
    int64_t total_points;     /* points in the step range */
    size_t count;
    const gb_scalar_row *rows; /* by step (points of one step: write order) */
} gb_scalar_series;

/* The scalar series run/tag over q->step_min..q->step_max (q NULL: all,
 * raw). With q->max_rows = N > 0 and more than N points in the range, the
 * range is cut into N equal step intervals and each non-empty one becomes a
 * bucket (its edges snap to the stored rollup blocks; step..step_last is
 * exact and rows never overlap); this costs O(N) whatever the series
 * length (rollups kept at write time). NO_RUN / NO_TAG for unknown names. */
gb_store_status gb_store_scalars(gb_store *s, const char *run, const char *tag,
                                 const gb_query *q, gb_scalar_series **out);

/* Streams the raw points of run/tag with step_min <= step <= step_max to
 * fn in step order (points of one step in write order); fn returns false
 * to stop early. Memory stays bounded whatever the series length (this is
 * what `glassbox export` uses). fn runs under the handle's lock: it must
 * not call back into the same handle. */
typedef bool (*gb_scalar_point_fn)(void *user, int64_t step, double wall_time, double value);
gb_store_status gb_store_scalar_points(gb_store *s, const char *run, const char *tag,
                                       int64_t step_min, int64_t step_max,
                                       gb_scalar_point_fn fn, void *user);

/* ---- histograms and distributions ------------------------------------------------- */

/* Statistics are exact and over the finite values; buckets are equal-width
 * from min to max (TensorFlow 2: 30 by default; one bucket [v-0.5, v+0.5]
 * when every value is v; none when no value is finite). */
typedef struct gb_histogram_row {
    int64_t step;
    double wall_time;
    double min, max;
    double count;             /* finite values */
    double sum, sum_squares;
    int64_t nan_count, posinf_count, neginf_count;
    size_t bucket_count;
    const double *edges;      /* bucket_count + 1 edges, ascending */
    const double *counts;     /* bucket_count counts */
} gb_histogram_row;

typedef struct gb_histograms {
    size_t count;
    const gb_histogram_row *rows;   /* by step */
} gb_histograms;

gb_store_status gb_store_histograms(gb_store *s, const char *run, const char *tag,
                                    const gb_query *q, gb_histograms **out);

/* TensorBoard's distribution: the values at these percentiles
 * (in basis points 0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000). */
#define GB_DISTRIBUTION_POINTS 9
extern const double gb_distribution_percentiles[GB_DISTRIBUTION_POINTS];

typedef struct gb_distribution_row {
    int64_t step;
    double wall_time;
    double values[GB_DISTRIBUTION_POINTS];   /* ascending */
} gb_distribution_row;

typedef struct gb_distributions {
    size_t count;
    const gb_distribution_row *rows;
} gb_distributions;

/* The distributions of a histogram tag (computed from its buckets). */
gb_store_status gb_store_distributions(gb_store *s, const char *run, const char *tag,
                                       const gb_query *q, gb_distributions **out);
/* The same computation on explicit buckets (TensorBoard's compressor:
 * linear interpolation inside the bucket holding each percentile). */
void gb_distribution_from_buckets(const double *edges, const double *counts,
                                  size_t bucket_count, double out[GB_DISTRIBUTION_POINTS]);

/* ---- images ------------------------------------------------------------------------ */

typedef struct gb_image_row {
    int64_t step;
    double wall_time;
    int index;                 /* sample within the step, 0 .. max_outputs-1 */
    int width, height;
    int channels;              /* 1 gray, 3 RGB, 4 RGBA */
    size_t png_size;
    const unsigned char *png;  /* the PNG file bytes; NULL unless with_png */
} gb_image_row;

typedef struct gb_images {
    size_t count;
    const gb_image_row *rows;  /* by step, then index */
} gb_images;

/* q->max_rows counts steps, not samples: every sample of a chosen step is
 * returned. */
gb_store_status gb_store_images(gb_store *s, const char *run, const char *tag,
                                const gb_query *q, bool with_png, gb_images **out);

typedef struct gb_blob {
    size_t size;
    const unsigned char *data;
} gb_blob;

/* The PNG of one image; NO_ROW if there is none at (step, index). */
gb_store_status gb_store_image_png(gb_store *s, const char *run, const char *tag,
                                   int64_t step, int index, gb_blob **out);

/* ---- embeddings (the projector) ------------------------------------------------------ */

/* Bounds of what one embedding or audio clip may store: the writer
 * refuses more, so one call cannot make a row the server will not send. */
#define GB_SUMMARY_EMBEDDING_MAX_BYTES ((int64_t)64 << 20)   /* N * D * 4 bytes of vectors */
#define GB_SUMMARY_METADATA_MAX_BYTES ((int64_t)16 << 20)    /* the metadata text */
#define GB_SUMMARY_SPRITE_MAX_SIDE 8192                      /* pixels a side of the atlas */
#define GB_SUMMARY_SPRITE_MAX_BYTES ((int64_t)64 << 20)      /* the atlas's PNG file */
#define GB_SUMMARY_AUDIO_MAX_BYTES ((int64_t)32 << 20)       /* one clip's PCM samples */
#define GB_SUMMARY_AUDIO_MAX_CHANNELS 16
#define GB_SUMMARY_AUDIO_MAX_RATE 384000


typedef struct gb_embedding_row {
    int64_t step;
    double wall_time;
    int64_t n, dim;               /* n points of dimension dim */
    size_t metadata_bytes;        /* 0: no metadata */
    size_t sprite_bytes;          /* 0: no sprite */
    int sprite_width, sprite_height;   /* one point's image; 0 without a sprite */
} gb_embedding_row;

typedef struct gb_embeddings {
    size_t count;
    const gb_embedding_row *rows;   /* by step */
} gb_embeddings;

gb_store_status gb_store_embeddings(gb_store *s, const char *run, const char *tag,
                                    const gb_query *q, gb_embeddings **out);

/* The parts of one step's embedding: the vectors (n * dim little-endian
 * float32, row-major), the metadata (a header line of column names, then
 * a line per point, fields separated by tabs; "" when none) and the
 * sprite (a PNG atlas, the points' images row-major in a square grid). */
typedef enum gb_embedding_part {
    GB_EMBEDDING_VECTORS,
    GB_EMBEDDING_METADATA,
    GB_EMBEDDING_SPRITE
} gb_embedding_part;

/* NO_ROW if the tag has no embedding at step, or (the sprite) one stored
 * without a sprite. */
gb_store_status gb_store_embedding_part(gb_store *s, const char *run, const char *tag,
                                        int64_t step, gb_embedding_part part, gb_blob **out);

/* ---- audio --------------------------------------------------------------------------------- */

typedef struct gb_audio_row {
    int64_t step;
    double wall_time;
    int index;                 /* clip within the step, 0 .. max_outputs-1 */
    int sample_rate, channels;
    int64_t frames;            /* samples per channel */
    int64_t clipped;           /* samples that were outside [-1, 1] */
    size_t wav_size;
} gb_audio_row;

typedef struct gb_audio_clips {
    size_t count;
    const gb_audio_row *rows;  /* by step, then index */
} gb_audio_clips;

/* q->max_rows counts steps, as for images. */
gb_store_status gb_store_audio(gb_store *s, const char *run, const char *tag, const gb_query *q,
                               gb_audio_clips **out);
/* The WAV file of one clip; NO_ROW if there is none at (step, index). */
gb_store_status gb_store_audio_wav(gb_store *s, const char *run, const char *tag, int64_t step,
                                   int index, gb_blob **out);

/* ---- text ----------------------------------------------------------------------------- */

typedef struct gb_text_row {
    int64_t step;
    double wall_time;
    const char *text;
} gb_text_row;

typedef struct gb_texts {
    size_t count;
    const gb_text_row *rows;
} gb_texts;

gb_store_status gb_store_texts(gb_store *s, const char *run, const char *tag,
                               const gb_query *q, gb_texts **out);

/* ---- graphs ----------------------------------------------------------------------------- */

typedef struct gb_graph_row {
    int64_t step;
    double wall_time;
    const char *format;        /* "text", "json", ... as written */
    const char *content;
} gb_graph_row;

typedef struct gb_graphs {
    size_t count;
    const gb_graph_row *rows;
} gb_graphs;

/* The graphs written under tag (kind GB_KIND_GRAPH), by step. */
gb_store_status gb_store_graphs(gb_store *s, const char *run, const char *tag,
                                const gb_query *q, gb_graphs **out);

/* ---- precision-recall curves (schema 4) ------------------------------------------ */

/* One curve at one step (TensorBoard's pr_curves): at threshold i of
 * num_thresholds, i / (num_thresholds - 1), a prediction p counts as
 * positive when floor(p * (num_thresholds - 1)) >= i. Counts are weighted
 * (plain counts with unit weights). precision = tp / (tp + fp) and
 * recall = tp / (tp + fn), each 0 where its denominator is 0 (TensorBoard's
 * convention), computed by the reader so every client shows the same
 * figures. */
typedef struct gb_pr_curve_row {
    int64_t step;
    double wall_time;
    size_t num_thresholds;
    const double *tp, *fp, *tn, *fn;     /* num_thresholds each */
    const double *precision, *recall;    /* num_thresholds each */
} gb_pr_curve_row;

typedef struct gb_pr_curves {
    size_t count;
    const gb_pr_curve_row *rows;   /* by step */
} gb_pr_curves;

/* q->max_rows counts steps, spread evenly with the last kept. */
gb_store_status gb_store_pr_curves(gb_store *s, const char *run, const char *tag,
                                   const gb_query *q, gb_pr_curves **out);

/* ---- engine events: traces, numerics alerts, op timings, messages ------------------- */

typedef struct gb_trace_row {
    int64_t id;
    int64_t step;              /* GB_STEP_NONE when none was set */
    double wall_time;
    const char *function;
    bool is_retrace;
    const char *reason;        /* "" when unknown */
    const char *signature;     /* "" when unknown */
    double duration_us;        /* NaN when unknown */
    int64_t nodes_before;      /* graph size before/after optimization; -1 unknown */
    int64_t nodes_after;
    const char *detail;        /* JSON or "" */
} gb_trace_row;

typedef struct gb_traces {
    size_t count;
    const gb_trace_row *rows;  /* by id */
} gb_traces;

/* Traces of `run`, of `function` (NULL: all functions). */
gb_store_status gb_store_traces(gb_store *s, const char *run, const char *function,
                                const gb_event_query *q, gb_traces **out);

/* A flag a detail may not state. */
typedef enum gb_tristate {
    GB_TRISTATE_UNKNOWN = -1,
    GB_TRISTATE_NO = 0,
    GB_TRISTATE_YES = 1
} gb_tristate;

/* The detail of a trace: what the writer stores as JSON in the row's
 * `detail` (writer/trace_detail.c), parsed. Scalars unknown are -1 (and
 * the warning UNKNOWN); the passes and graphs are spans of the detail
 * text (NULL when absent), each one well-formed JSON value: the passes an
 * array of {pass, ran, nodes, ms}, the graphs {"nodes": [...], "outputs":
 * [...]} (webui/http_api.md). */
typedef struct gb_trace_detail {
    char call_site[160];
    int64_t concrete_id;
    gb_tristate warning;       /* this trace raised the excessive-retracing warning */
    int64_t nodes_traced, arena_bytes, naive_bytes, inplace;
    /* The plan for the shapes of the call that traced it (with -1 dims:
     * what it runs with; gb_graph_stats), and those shapes ("" when every
     * dim was known). */
    int64_t call_arena_bytes, call_naive_bytes;
    char call_shapes[128];
    const char *passes, *graph, *graph_traced;
    size_t passes_len, graph_len, graph_traced_len;
    /* Whether a graph is stored with the trace: in the detail itself (a
     * store before schema 3, read without migrating it: the spans above),
     * or apart, in trace_graphs (gb_store_trace_graph reads it). */
    bool has_graph, has_graph_traced;
} gb_trace_detail;

typedef struct gb_numerics_row {
    int64_t id;
    int64_t step;              /* GB_STEP_NONE when none was set */
    double wall_time;
    const char *op_type;
    const char *op_name;
    const char *function;      /* "" outside traced functions */
    const char *scope_path;
    const char *forward_op;    /* in a backward pass: the forward op; else "" */
    int64_t nan_count, posinf_count, neginf_count;
    const char *message;
    const char *detail;        /* JSON or "": see gb_numerics_detail_parse */
} gb_numerics_row;

typedef struct gb_numerics {
    size_t count;
    const gb_numerics_row *rows;  /* by id: the first alert first */
} gb_numerics;

gb_store_status gb_store_numerics(gb_store *s, const char *run, const gb_event_query *q,
                                  gb_numerics **out);

/* The detail of a numerics alert: what the writer stores as JSON in the
 * row's `detail` (output dtype and shape, first bad index, created or
 * received, forward or backward, a summary of each input), parsed.
 * Fields the detail does not give keep their "unknown" value. */
#define GB_NUMERICS_DETAIL_MAX_RANK 8     /* as the engine's tensors */
#define GB_NUMERICS_DETAIL_MAX_INPUTS 8   /* inputs a detail summarizes */

typedef struct gb_numerics_detail_tensor {
    char dtype[16];            /* "float32"; "" when unknown */
    int rank;                  /* -1 when the shape is unknown */
    int64_t shape[GB_NUMERICS_DETAIL_MAX_RANK];
} gb_numerics_detail_tensor;

typedef struct gb_numerics_detail_input {
    gb_numerics_detail_tensor tensor;
    double min, max;           /* over finite values; NaN when none (or unknown) */
    int64_t nan_count, inf_count;
} gb_numerics_detail_input;

typedef struct gb_numerics_detail {
    int output_index;          /* -1 when unknown */
    gb_numerics_detail_tensor output;
    int64_t first_index;       /* flat index of the first bad element; -1 unknown */
    gb_tristate created;       /* YES: every input finite, the op made the NaN/Inf */
    gb_tristate backward;      /* YES: made by a gradient function */
    char forward_op_type[64];  /* backward: the forward op's type; "" unknown */
    int ninputs;               /* the first GB_NUMERICS_DETAIL_MAX_INPUTS at most */
    gb_numerics_detail_input inputs[GB_NUMERICS_DETAIL_MAX_INPUTS];
} gb_numerics_detail;

/* Parses a numerics row's detail (NULL or "" are fine) into *out. Unknown
 * fields are skipped. Anything that is not a well-formed JSON object of
 * the expected shape gives false and a detail of unknowns, never a half
 * filled one, so a row written by another tool or damaged on disk can
 * still be shown. Needs no store handle; thread-safe. */
bool gb_numerics_detail_parse(const char *json, gb_numerics_detail *out);

/* Parses a trace row's detail (NULL or "" are fine: all unknown) into
 * *out, whose spans point into json. false, and a detail of unknowns, when
 * it is not a well-formed object. Needs no store handle; thread-safe. */
bool gb_trace_detail_parse(const char *json, gb_trace_detail *out);

/* The graph stored with trace `id` of run — after the passes, or as traced
 * (traced = true) — as JSON text of len bytes; json is NULL when the trace
 * has no such graph. NO_ROW when run has no trace `id`. Reads that one
 * graph and nothing else of the run. */
typedef struct gb_trace_graph {
    const char *json;
    size_t len;
} gb_trace_graph;
gb_store_status gb_store_trace_graph(gb_store *s, const char *run, int64_t id, bool traced,
                                     gb_trace_graph **out);

/* How many database pages the reader has fetched since it was opened
 * (from its cache or the file): the work its queries did, to compare two
 * queries by what they read rather than by how long they took. */
int64_t gb_store_pages_read(gb_store *s);

/* Whether text is exactly one well-formed JSON value, its strings UTF-8
 * (a stored graph of format "json", say, before a server hands it on). */
bool gb_json_is_value(const char *text);

/* Decodes the UTF-8 sequence at s (n > 0 bytes readable): its code point
 * into *cp and its length 1..4, or 0 when the bytes there are not UTF-8
 * (a stray or cut-short sequence, an overlong form, a surrogate, past
 * U+10FFFF). */
size_t gb_utf8_decode(const unsigned char *s, size_t n, unsigned *cp);
/* Whether the n bytes at s are UTF-8 throughout. */
bool gb_utf8_valid(const char *s, size_t n);

/* Op timings aggregated per (op_name, op_type, device). */
typedef struct gb_op_timing_row {
    const char *op_name;
    const char *op_type;
    const char *device;
    int64_t calls;
    double total_us, max_us;
} gb_op_timing_row;

typedef struct gb_op_timings {
    size_t count;
    const gb_op_timing_row *rows;  /* by total_us, largest first */
} gb_op_timings;

gb_store_status gb_store_op_timings(gb_store *s, const char *run, gb_op_timings **out);
/* The same, of the ops one traced function's graph ran (every op of run
 * in a store before schema 3, which did not record the function). */
gb_store_status gb_store_function_op_timings(gb_store *s, const char *run, const char *function,
                                             gb_op_timings **out);

/* A traced function's call counters, as the engine last reported them. */
typedef struct gb_function_stats_row {
    const char *function;
    double wall_time;          /* of the last report */
    int64_t calls, cache_hits, traces, concrete;
    double trace_ms;
} gb_function_stats_row;

typedef struct gb_function_stats_list {
    size_t count;
    const gb_function_stats_row *rows;  /* by function name */
} gb_function_stats_list;

gb_store_status gb_store_function_stats(gb_store *s, const char *run,
                                        gb_function_stats_list **out);

/* Warnings and device placements emitted by the engine. */
typedef struct gb_message_row {
    int64_t id;
    int64_t step;              /* GB_STEP_NONE when none was set */
    double wall_time;
    const char *kind;          /* "warning", "placement" */
    const char *op_type;       /* "" when not about an op */
    const char *op_name;
    const char *device;
    const char *message;
} gb_message_row;

typedef struct gb_messages {
    size_t count;
    const gb_message_row *rows;
} gb_messages;

gb_store_status gb_store_messages(gb_store *s, const char *run, const gb_event_query *q,
                                  gb_messages **out);

/* ---- training health (schema 7) ------------------------------------------------------- */

/* What the engine's health checks (gb_health.h) leave in a store: alerts
 * in the health table, and each layer's figures as scalar tags
 * "health/<layer>/<figure>" (<layer> may hold '/', <figure> never does),
 * written in the model's order, so the order in which the store first
 * saw a figure's tags is the order of the layers, input side first. */

/* Bounds the writer keeps to: longer texts are cut (at a character, with
 * "..." at the end), figures longer than their bound, or not one JSON
 * object, are stored as "{}". */
#define GB_HEALTH_TEXT_MAX_BYTES 1024      /* kind, layer, variable, message, advice */
#define GB_HEALTH_FIGURES_MAX_BYTES 4096   /* the figures JSON object */
#define GB_HEALTH_FIGURE_MAX_BYTES 64      /* a figure's name (heat map queries) */

/* Severities, as gb_health.h numbers them. */
#define GB_HEALTH_SEVERITY_INFO 1
#define GB_HEALTH_SEVERITY_WARNING 2
#define GB_HEALTH_SEVERITY_CRITICAL 3
/* "info", "warning", "critical"; "unknown" for any other number. */
const char *gb_health_severity_name(int severity);

typedef struct gb_health_row {
    int64_t id;
    int64_t step;              /* GB_STEP_NONE when none was set */
    double wall_time;
    const char *kind;          /* "vanishing_gradient", "dead_units", ... */
    int severity;              /* GB_HEALTH_SEVERITY_* */
    const char *layer;         /* "" for the model (loss, global gradient norm) */
    const char *variable;      /* "" when about a layer's output */
    double value, threshold;   /* NaN stays NaN */
    const char *figures;       /* a JSON object, "{}" when none */
    const char *message;       /* the one-line report */
    const char *advice;        /* what it usually means and what to try */
} gb_health_row;

typedef struct gb_health_alerts {
    size_t count;
    const gb_health_row *rows; /* most severe first, then by step (none first), then id */
} gb_health_alerts;

/* The run's alerts with id > q->after_id, at most q->limit (0: all), in
 * the order above. None in a store before schema 7. */
gb_store_status gb_store_health_alerts(gb_store *s, const char *run, const gb_event_query *q,
                                       gb_health_alerts **out);

/* How many alerts a run has, by severity, and the steps they span. */
typedef struct gb_health_counts {
    int64_t total;
    int64_t by_severity[4];    /* index GB_HEALTH_SEVERITY_*; [0] other numbers */
    int64_t first_step, last_step;   /* GB_STEP_NONE when no alert has a step */
    int64_t last_id;           /* the newest alert's id; 0 when none */
} gb_health_counts;
gb_store_status gb_store_health_counts(gb_store *s, const char *run, gb_health_counts **out);

/* One cell of the heat map: the points of one layer's figure in one
 * column's steps. value is the worst of them (NaN or +Inf when any was;
 * else, for "grad_norm", the extreme farther from the cell's mean by
 * ratio, a drop or a spike; for "update_ratio" the one farther by ratio
 * from 1e-3, the healthy size of a step; for other figures, as
 * "dead_fraction", the largest). count 0: no point (value, min, max NaN). */
typedef struct gb_health_cell {
    double value;
    double min, max;           /* over the finite points */
    int64_t count;
} gb_health_cell;

typedef struct gb_health_heatmap {
    size_t figure_count;
    const char *const *figures;   /* the run's figures, in first-seen order */
    size_t layer_count;
    const char *const *layers;    /* the figure's layers, in first-seen order */
    size_t column_count;
    const int64_t *steps;         /* column k holds steps steps[k] .. steps_last[k] */
    const int64_t *steps_last;
    bool downsampled;             /* some column holds more than one step */
    const gb_health_cell *cells;  /* layer_count * column_count, by layer then column */
} gb_health_heatmap;

/* The heat map of run's figure over q's step range: a row per layer, a
 * column per step written, or, when there are more than q->max_rows
 * (0: GB_HEALTH_HEATMAP_MAX_COLUMNS) of them, per equal interval of
 * steps (empty intervals left out), read from the rollups in O(columns)
 * rows per layer whatever the run's length. ARG for a figure that is
 * empty, holds '/' or is longer than GB_HEALTH_FIGURE_MAX_BYTES; a figure
 * the run does not have gives no layers (figures says which it has). */
#define GB_HEALTH_HEATMAP_MAX_COLUMNS 2000
gb_store_status gb_store_health_heatmap(gb_store *s, const char *run, const char *figure,
                                        const gb_query *q, gb_health_heatmap **out);

/* ---- profiles (the profiler's captures; schema 5) ------------------------------------ */

/* One capture: its threads as a JSON array of names, by index. */
typedef struct gb_profile_info {
    int64_t id;
    double wall_time, duration_us;
    int rank;
    const char *threads_json;
    int nthreads;
    const char *const *threads;    /* the names, parsed from threads_json */
    int64_t record_count, dropped;
    double gemm_peak_flops;        /* a GEMM's FLOP/s at the start; 0 unknown */
} gb_profile_info;

typedef struct gb_profile_list {
    size_t count;
    const gb_profile_info *rows;   /* oldest first */
} gb_profile_list;

/* The run's captures (none in a store before schema 5). */
gb_store_status gb_store_profiles(gb_store *s, const char *run, gb_profile_list **out);

/* A recorded event; kind is gb_profiler.h's name ("op", "input_wait", ...). */
typedef struct gb_profile_event_row {
    double start_us, dur_us;       /* since the capture started */
    int64_t step;                  /* GB_STEP_NONE when none was set */
    int32_t thread;
    bool backward;
    const char *kind, *name, *op_type, *function, *shapes;
    double flops;
    int64_t bytes, live_bytes;
} gb_profile_event_row;

typedef struct gb_profile_events {
    gb_profile_info info;
    size_t count;
    const gb_profile_event_row *rows;   /* by thread, then start */
} gb_profile_events;

/* The events of capture `profile` of run from the offset-th on, at most
 * limit of them (0: all); NO_ROW when the run has no capture of that id. */
gb_store_status gb_store_profile_events(gb_store *s, const char *run, int64_t profile,
                                        size_t offset, size_t limit, gb_profile_events **out);

/* ---- what a capture says (profile_analysis.c) ------------------------------------------- */

/* Ops grouped by type or by name: calls, total time, self time (less the
 * ops nested in them on the same thread: a traced call's nodes), share of
 * all ops' self time, FLOPs. */
typedef struct gb_profile_op_row {
    const char *key;               /* the type, or the name */
    const char *op_type;           /* by name: the op's type */
    const char *function;          /* by name: its function ("" eager) */
    int64_t calls;
    double total_us, self_us, share, flops;
} gb_profile_op_row;

typedef struct gb_profile_ops {
    size_t count;
    double self_us;                /* over every op */
    const gb_profile_op_row *rows; /* by self time, largest first */
} gb_profile_ops;

/* The table owns its strings: it may outlive ev. */
gb_store_status gb_profile_ops_of(const gb_profile_events *ev, bool by_type, gb_profile_ops **out);

/* One step of the thread that set steps (the training thread), from one
 * step mark to the next: where its time went. compute_* are ops' self
 * time (optimizer: the optimizer's update ranges and ResourceApply* ops);
 * other = step - the rest. */
typedef struct gb_profile_step_row {
    int64_t step;
    double start_us, step_us;
    double input_us, forward_us, backward_us, optimizer_us, comm_us, other_us;
} gb_profile_step_row;

typedef struct gb_profile_steps {
    size_t count;
    const gb_profile_step_row *rows;
    /* over all steps: the largest part and its share, as a sentence:
     * "input-bound: 38 % of the step waiting for data" */
    const char *bound;             /* "input", "communication", "other", "compute" or "" */
    double bound_share;
    const char *sentence;
} gb_profile_steps;

gb_store_status gb_profile_steps_of(const gb_profile_events *ev, gb_profile_steps **out);

#ifdef __cplusplus
}
#endif
#endif
