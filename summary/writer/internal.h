/* writer/internal.h — the summary writer's structure, shared by its files.
 *
 * writer.c          the public calls: validation, the queue, flush and close
 * tags.c            tag interning (name + kind -> index) for the callers
 * commit.c          the background thread: batched transactions
 * default_writer.c  the default writer, its observer subscription, the step
 * numerics_detail.c an engine numerics alert as the detail JSON the store keeps
 * checkpoint.c      WAL checkpoints on a thread of their own
 * histogram.c       statistics and buckets of a tensor's values
 * pr_curve.c        precision-recall counts per threshold (binary, per class)
 * experiment.c      the experiment's hyperparameters and metrics, a run's status
 * fit_hparams.c     the hparams fit's summary callback records by itself
 * image_png.c       image tensors to pixels to PNG
 * embedding.c       the projector's points: vectors, metadata, a sprite atlas
 * audio_wav.c       audio clips as 16-bit PCM WAV files, clipping counted
 * siblings.c        runs beside the writer's own, for engine scalars naming one
 * profile.c         a profiler capture (GB_EVENT_PROFILE) into profiles and profile_events
 * health.c          a training-health alert (GB_EVENT_HEALTH), its texts bounded
 * error.c           this thread's last error message, clocks
 *
 * The writer sits on the store (store/internal.h: schema, rollups, point
 * layout) and on the engine (tensors, observer events).
 *
 * Threads: callers append events to `queue` under `lock`; the background
 * thread swaps the queue out under the lock and writes it without it. The
 * SQLite connection and `bg` belong to the background thread alone once it
 * runs.
 */
#ifndef GB_WRITER_INTERNAL_H
#define GB_WRITER_INTERNAL_H

#include <pthread.h>

#include "gb_debug.h"
#include "gb_function.h"
#include "gb_observer.h"
#include "gb_summary.h"
#include "gb_tfevents.h"
#include "store/internal.h"

/* ---- errors and clocks (error.c) --------------------------------------------- */

/* Formats this thread's last writer error message (gb_summary_last_error). */
void gb__summary_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double gb__wall_now(void);       /* seconds since the epoch */
double gb__mono_ms(void);        /* monotonic milliseconds */

/* ---- histograms (histogram.c) -------------------------------------------------- */

typedef struct gb__histogram {
    double min, max, count, sum, sum_squares;
    int64_t nan_count, posinf_count, neginf_count;
    int bucket_count;
    double *edges;     /* bucket_count + 1, malloc'd with counts */
    double *counts;
} gb__histogram;

/* Statistics and equal-width buckets of n values of dtype dt (a gb_dtype);
 * false on allocation failure. Free with gb__histogram_free. */
bool gb__histogram_compute(int dt, const void *data, int64_t n, int buckets, gb__histogram *h);
void gb__histogram_free(gb__histogram *h);
/* Element i of a buffer of dtype dt (a gb_dtype), as a double. */
double gb__element(int dt, const void *data, int64_t i);

/* ---- images (image_png.c) ---------------------------------------------------------- */

/* Converts n_images images of h*w*c elements of dtype dt to uint8 pixels
 * (tf.summary.image's rules, per image) into out. */
void gb__image_to_u8(int dt, const void *data, int64_t n_images, int64_t h, int64_t w, int c,
                     unsigned char *out);
/* Encodes one image as PNG into a malloc'd buffer; false on failure. */
bool gb__png_encode(const unsigned char *pixels, int w, int h, int c, unsigned char **png,
                    size_t *size);

/* ---- JSON details (json_text.c) --------------------------------------------------- */

/* A JSON text being written: into buf[cap] (bounded), or on the heap when
 * `grows` (buf then malloc'd, the caller frees it). `failed`: a write did
 * not fit or memory ran out; the text must not be used. */
typedef struct gb__jtext {
    char *buf;
    size_t len, cap;
    bool grows, failed;
} gb__jtext;
void gb__jtext_put(gb__jtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb__jtext_string(gb__jtext *t, const char *s);
void gb__jtext_number(gb__jtext *t, double v);   /* null when not finite */
/* The same with the shortest digits that read back as v ("0.1"). */
void gb__jtext_shortest(gb__jtext *t, double v);
/* The shortest text (15 to 17 digits) that reads back as the same double. */
void gb__shortest_double(char *buf, size_t n, double v);
void gb__jtext_shape(gb__jtext *t, int rank, const int64_t *shape);

/* ---- traces (trace_detail.c) ------------------------------------------------------- */

/* What a trace event has beyond the traces table's columns — the call
 * site, the passes' node counts and costs, the planned bytes, the graph
 * before and after the passes — as a malloc'd JSON object:
 *   {"call_site":"train.c:42","concrete_id":3,"warning":false,
 *    "passes":[{"pass":"pruning","ran":true,"nodes":40,"ms":0.01},...],
 *    "arena_bytes":1072000,"naive_bytes":1950000,"inplace":1,
 *    "graph":{"nodes":[...],"outputs":[...]},"graph_traced":{...}}
 * (the graphs as the graph layer renders them: webui/http_api.md).
 * NULL when memory ran out. */
char *gb__trace_detail_json(const gb_trace_event *t, const char *call_site);

/* ---- numerics alerts (numerics_detail.c) -------------------------------------------- */

/* The fields of alert a that have no column of their own, as the JSON
 * object the store keeps in numerics.detail (parsed back by the reader:
 * gb_numerics_detail_parse), into out; "" when it does not fit n bytes. */
void gb__numerics_detail_json(const gb_numerics_alert *a, char *out, size_t n);

/* ---- the queue ------------------------------------------------------------------------ */

typedef enum gb__event_type {
    GB__EV_SCALAR,
    GB__EV_HISTOGRAM,    /* payload: gb__hist_payload */
    GB__EV_IMAGE,        /* payload: gb__image_payload */
    GB__EV_TEXT,         /* payload: the text (char *) */
    GB__EV_GRAPH,        /* payload: gb__strings {format, content} */
    GB__EV_PR_CURVE,     /* payload: gb__pr_payload */
    GB__EV_EMBEDDING,    /* payload: gb__embedding_payload */
    GB__EV_AUDIO,        /* payload: gb__audio_payload; the last kind with a tag */
    GB__EV_TRACE,        /* payload: gb__trace_payload */
    GB__EV_NUMERICS,     /* payload: gb__numerics_payload */
    GB__EV_OP_TIMING,    /* payload: gb__strings {op_type, op_name, device}; value: us */
    GB__EV_MESSAGE,      /* payload: gb__strings {kind, op_type, op_name, device, message} */
    GB__EV_HPARAM,       /* payload: gb__strings {key, text}; value: number or NaN, tag: is_number */
    GB__EV_FUNCTION,     /* payload: gb__function_payload */
    GB__EV_HPARAMS_CONFIG, /* payload: the experiment as JSON text (experiment.c) */
    GB__EV_RUN_STATUS,   /* payload: the status text */
    GB__EV_PROFILE,      /* payload: a reference to a gb_profile (profile.c) */
    GB__EV_HEALTH,       /* payload: gb__health_payload (health.c) */
    GB__EV_IMPORT_MARK   /* payload: gb__import_mark (import_marks.c) */
} gb__event_type;

typedef struct gb__event {
    uint8_t type;        /* gb__event_type */
    int32_t tag;         /* tag index for tag kinds; is_number for hparams */
    int64_t step;        /* GB_STEP_NONE when none */
    double wall_time;
    double value;
    void *payload;       /* malloc'd, owned by the event */
} gb__event;

/* n strings copied into one allocation: s[i] point inside it. */
typedef struct gb__strings {
    int n;
    const char *s[];
} gb__strings;
gb__strings *gb__strings_new(int n, const char *const *src, size_t *bytes);

typedef struct gb__hist_payload {
    gb__histogram h;     /* filled by the background thread (unless ready) */
    bool ready;          /* h given as it is (an imported histogram): no data */
    int dtype, buckets;
    int64_t n;
    _Alignas(16) unsigned char data[];
} gb__hist_payload;

typedef struct gb__image_payload {
    int n, h, w, c;
    bool ready;          /* png given (an imported image): no pixels to encode */
    unsigned char **png; /* n PNGs, filled by the background thread (unless ready) */
    size_t *png_size;
    unsigned char pixels[];
} gb__image_payload;

typedef struct gb__trace_payload {
    bool is_retrace;
    double duration_us;
    int64_t nodes_before, nodes_after;
    gb__strings *text;   /* function, reason, signature, detail ("" = none) */
} gb__trace_payload;

/* A curve's counts: TP, FP, TN, FN, num_thresholds doubles each. */
typedef struct gb__pr_payload {
    int num_thresholds;
    double counts[];
} gb__pr_payload;

/* One step's embedding, in one allocation: the vectors (n * dim float32),
 * then the metadata text (metadata_len bytes), then the sprite PNG. */
typedef struct gb__embedding_payload {
    int64_t n, dim;
    int sprite_w, sprite_h;      /* one point's image; 0: no sprite */
    size_t metadata_len, sprite_len;
    const char *metadata;        /* into bytes */
    const unsigned char *sprite; /* into bytes; NULL without a sprite */
    _Alignas(16) unsigned char bytes[];
} gb__embedding_payload;

/* One audio clip as a WAV file. */
typedef struct gb__audio_payload {
    int index, sample_rate, channels;
    int64_t frames, clipped;
    size_t wav_size;
    unsigned char wav[];
} gb__audio_payload;

typedef struct gb__function_payload {
    gb_function_record r;        /* r.function points into text */
    gb__strings *text;           /* function */
} gb__function_payload;

typedef struct gb__health_payload {
    int severity;
    double value, threshold;
    gb__strings *text;   /* kind, layer, variable, figures, message, advice */
} gb__health_payload;

/* How far an imported event file was read: the byte after its last
 * record whose values were queued before this mark, and that record's
 * last four bytes. A batch writes only its last mark. */
typedef struct gb__import_mark {
    int64_t bytes_read;
    uint32_t tail;
    char file[];
} gb__import_mark;

typedef struct gb__numerics_payload {
    int64_t nan_count, posinf_count, neginf_count;
    gb__strings *text;   /* op_type, op_name, function, scope_path, forward_op, message, detail */
} gb__numerics_payload;

/* An interned tag; immutable once created. */
typedef struct gb__wtag {
    char *name;
    gb_summary_kind kind;
    uint32_t hash;
} gb__wtag;

/* The background thread's state per tag. */
typedef struct gb__tag_state {
    const gb__wtag *tag;
    int64_t db_id;                          /* 0 until resolved */
    gb__point *points;                      /* scalars: the open chunk, grown on */
    int npoints, points_cap;                /* demand up to GB__CHUNK_POINTS */
    gb__rollup acc[GB__ROLLUP_LEVELS + 1];  /* open rollup bucket per stored level */
    int64_t acc_bucket[GB__ROLLUP_LEVELS + 1];
    /* what this batch adds to the tags row */
    int64_t d_count, d_min_step, d_max_step, d_span;
    double d_wall;
} gb__tag_state;

enum {
    GB__ST_CHUNK, GB__ST_ROLLUP, GB__ST_TAG_INSERT, GB__ST_TAG_SELECT, GB__ST_TAG_UPDATE,
    GB__ST_HISTOGRAM, GB__ST_IMAGE, GB__ST_TEXT, GB__ST_GRAPH, GB__ST_TRACE, GB__ST_TRACE_GRAPHS,
    GB__ST_NUMERICS,
    GB__ST_OP_TIMING, GB__ST_MESSAGE, GB__ST_HPARAM, GB__ST_FUNCTION, GB__ST_RUN_UPDATE,
    GB__ST_PR_CURVE, GB__ST_HPARAM_DOMAINS, GB__ST_HPARAM_METRICS, GB__ST_RUN_STATUS,
    GB__ST_PROFILE, GB__ST_PROFILE_EVENT, GB__ST_EMBEDDING, GB__ST_AUDIO, GB__ST_HEALTH,
    GB__ST_IMPORT_MARK,
    GB__ST_COUNT
};

/* checkpoint.c: a thread running PASSIVE WAL checkpoints on its own
 * connection when the writer's commits have grown the log. */
typedef struct gb__checkpointer {
    sqlite3 *db;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool initialized, started, stop, due;
} gb__checkpointer;

int gb__checkpointer_start(gb__checkpointer *c, sqlite3 *writer_db, const char *path,
                           int busy_timeout_ms);
/* Stops the thread and closes its connection (safe after a failed start). */
void gb__checkpointer_stop(gb__checkpointer *c, sqlite3 *writer_db);

struct gb_summary_writer {
    char *path, *run;
    gb_summary_options opt;
    sqlite3 *db;
    sqlite3_stmt *st[GB__ST_COUNT];
    int64_t run_id;
    bool continues;            /* the run was in the store before this writer opened it */
    bool status_said;          /* gb_summary_run_status was called: close keeps that status */
    pthread_t thread;
    bool thread_started;
    gb__checkpointer checkpointer;

    pthread_mutex_t lock;          /* guards everything below */
    pthread_cond_t work;           /* to the background thread */
    pthread_cond_t space;          /* to callers waiting for queue space */
    pthread_cond_t done;           /* to flush waiters */
    gb__event *queue;
    size_t queue_len, queue_cap, queue_bytes;
    double queue_since_ms;         /* monotonic time of the oldest queued event */
    uint64_t enqueued, committed;  /* event sequence numbers */
    bool flush_requested, closing;
    gb_status error;               /* sticky failure of the background thread */
    char error_message[512];
    gb__wtag **tags;               /* interned tags, by index */
    int ntags, tags_cap;
    int32_t *tag_slots;            /* open-addressing hash: index + 1, 0 empty */
    int tag_slots_cap;

    /* background thread only */
    gb__tag_state **bg;
    int nbg;
    double batch_wall;             /* latest wall time of the batch */
    const gb__event *batch_mark;   /* the batch's last import mark, written at its end */
    int observer_id;               /* while default: the observer subscription */
    /* trace_on .. trace_export: the graph of the last function traced
     * since trace_on (observer thread and caller: under lock). */
    bool tracing, profiling;
    bool owns_capture;             /* trace_on started the profiler's capture */
    char *traced_graph;
    /* Runs "<run>/<name>" beside this one (siblings.c), for engine
     * scalars that name a run (each rank's timings): writers of their
     * own, opened on first use, flushed and closed with this one. */
    pthread_mutex_t siblings_lock;
    gb_summary_writer **siblings;
    int nsiblings;
};

/* siblings.c: the writer of run "<w's run>/<name>" (opened now if need
 * be; NULL when it cannot be), and flushing / closing them all. */
gb_summary_writer *gb__writer_sibling(gb_summary_writer *w, const char *name);
gb_status gb__writer_siblings_flush(gb_summary_writer *w);
gb_status gb__writer_siblings_close(gb_summary_writer *w);

/* trace_export.c: between trace_on and trace_export, keeps a copy of the
 * graph of the last function traced (the default writer's observer). */
void gb__writer_note_traced_graph(gb_summary_writer *w, const char *graph_json);

/* tags.c (lock held): the index of (name, kind), interned on first
 * use; -1 when out of memory. */
int gb__writer_tag(gb_summary_writer *w, const char *name, gb_summary_kind kind);
void gb__writer_tags_free(gb_summary_writer *w);

/* writer.c: appends one event (payload owned by the queue from now on,
 * freed on failure). w may be NULL: the default writer. `what` names the
 * call in messages; tag may be NULL for non-tag events. */
gb_status gb__writer_push(gb_summary_writer *w, const char *what, const char *tag,
                          gb_summary_kind kind, gb__event ev, size_t payload_bytes);
void gb__event_free(gb__event *ev);
/* The message of a failed call ("what 'tag': msg", or "what: msg" when
 * tag is NULL) as this thread's last error; returns st. */
gb_status gb__writer_fail(gb_status st, const char *what, const char *tag, const char *msg);
/* An image batch [N,H,W,C] as gb_summary_image takes it. */
gb_status gb__writer_check_image(const char *what, const char *tag, const gb_tensor *t,
                                 int max_outputs);
/* The checks every summary makes: a tag, a step (resolved into *step). */
gb_status gb__writer_check_summary(const char *what, const char *tag, int64_t *step);
/* A tensor argument: present and with data (not symbolic). */
gb_status gb__writer_check_tensor(const char *what, const char *tag, const gb_tensor *t);
/* gb_summary_scalar with the time it was measured (engine scalars carry it). */
gb_status gb__writer_scalar_at(gb_summary_writer *w, const char *tag, double value, int64_t step,
                               double wall_time);
/* Summaries whose values arrive made (an event file's import), with their
 * own wall time: a histogram's statistics and buckets (copied), one PNG
 * image (copied), a text. */
gb_status gb__writer_histogram_at(gb_summary_writer *w, const char *tag, int64_t step,
                                  double wall_time, const gb__histogram *h);
gb_status gb__writer_png_at(gb_summary_writer *w, const char *tag, int64_t step, double wall_time,
                            const void *png, size_t size, int width, int height, int channels);
gb_status gb__writer_text_at(gb_summary_writer *w, const char *tag, const char *text, int64_t step,
                             double wall_time);
/* audio_wav.c: clip `index` of a step given as a WAV file (copied). */
gb_status gb__writer_wav_at(gb_summary_writer *w, const char *tag, int64_t step, double wall_time,
                            int index, const void *wav, size_t size);
/* pr_curve.c: a curve given by its counts (TP, FP, TN, FN; num_thresholds
 * each), as TensorBoard's pr_curves plugin stores them. */
gb_status gb__writer_pr_counts_at(gb_summary_writer *w, const char *tag, int64_t step,
                                  double wall_time, int num_thresholds, const double *counts);
/* Resolves GB_STEP_DEFAULT and checks the range; `required`: a step must
 * exist (summaries) or may be absent (engine events). */
gb_status gb__writer_step(const char *what, const char *tag, int64_t step, bool required,
                          int64_t *out);

/* profile.c: the observer's side (queues a reference) and the background
 * thread's (the rows); the payload's release. */
void gb__writer_on_profile(gb_summary_writer *w, const gb_event *ev);
int gb__writer_add_profile(gb_summary_writer *w, const gb__event *ev);
void gb__writer_profile_payload_free(void *payload);

/* health.c: the observer's side of a training-health alert (a bounded
 * copy queued; the row is commit.c's). */
void gb__writer_on_health(gb_summary_writer *w, const gb_event *ev);

/* commit.c */
void *gb__writer_thread(void *arg);
int gb__writer_prepare_statements(gb_summary_writer *w);

/* fit_hparams.c: the compile and fit arguments and the layer sizes of
 * s's model, as the run's hparams (fit's summary callback, at train begin). */
struct gb_train_state;
void gb__fit_record_hparams(gb_summary_writer *w, struct gb_train_state *s);

/* experiment.c: queues the run's status ("running", "done", ...). */
gb_status gb__writer_push_status(gb_summary_writer *w, const char *status);

/* tfevents_import.c: a NUL-terminated copy of a string field (NULL when
 * it holds a NUL, or memory ran out). tfevents_import_hparams.c: the
 * hparams plugin's experiment, session start or end, recorded through w
 * (the failure of gb_summary_hparams_config when a declaration is bad). */
char *gb__tf_text(gb_tf_bytes b);
gb_status gb__import_hparams(gb_summary_writer *w, const gb_tf_hparams *h);

/* import_marks.c: how far each event file was imported into a store.
 * load reads them all (none for a store that does not exist yet or
 * predates schema 8; false, with the failure recorded under `what`, when
 * the store's marks cannot be read); find looks one up by run and file
 * name; the writer's mark is queued behind the values it covers. */
typedef struct gb__import_row {
    char *run, *file;
    int64_t bytes_read;
    uint32_t tail;
    bool failed, killed;    /* the run's status, as an imported session's end set it */
} gb__import_row;
typedef struct gb__import_marks {
    gb__import_row *rows;   /* sorted by run, then file */
    size_t count, cap;
} gb__import_marks;
bool gb__import_marks_load(const char *what, const char *path, gb__import_marks *m);
const gb__import_row *gb__import_marks_find(const gb__import_marks *m, const char *run,
                                            const char *file);
void gb__import_marks_free(gb__import_marks *m);
gb_status gb__writer_import_mark(gb_summary_writer *w, const char *file, int64_t bytes_read,
                                 uint32_t tail);

/* default_writer.c: called by close when w is the default. */
void gb__writer_forget_default(gb_summary_writer *w);

#endif
