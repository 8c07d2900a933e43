/* gb_tfevents.h — TensorBoard's event files (events.out.tfevents.*), read
 * and written without TensorFlow: the record framing and the few fields of
 * the Event and Summary protocol buffers that summaries use.
 *
 * A file is a sequence of records: a little-endian uint64 length, the
 * masked CRC-32C of those 8 bytes (uint32), the data, the masked CRC-32C
 * of the data. Every CRC is checked; a record cut short at the end of the
 * file (a writer killed mid-record, or still writing) is "torn", told
 * apart from a damaged one, so an importer keeps everything before it and
 * a tail reader waits for the rest.
 *
 * The data of a record is an Event message. The decoder here is our own
 * (the protobuf wire format is small: varints, fixed 32/64-bit, and
 * length-delimited fields), written from the public field numbers of
 * tensorflow/core/util/event.proto and framework/summary.proto,
 * tensor.proto, tensor_shape.proto; it is fuzzed (tests/fuzz/
 * fuzz_summary_reader_tfevents.c) and borrows the record's bytes, never
 * copying them. Understood: scalars (simple_value, and rank-0 float,
 * double, int32 or int64 tensors as tf.summary v2 and PyTorch write them),
 * histograms (HistogramProto, and the [k, 3] tensors of tf.summary v2),
 * images (Summary.Image, and the string tensors [width, height, png...]
 * of v2), text (string tensors of the "text" plugin), PR curves (the
 * "pr_curves" plugin's [6, T] tensors), audio (Summary.Audio, and the
 * "audio" plugin's [k, 2] tensors of WAV and label) and the "hparams"
 * plugin's experiment and sessions. Other values are reported as GB_TF_OTHER, with
 * their tag, so an importer can say what it left out.
 */
#ifndef GB_TFEVENTS_H
#define GB_TFEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- records ----------------------------------------------------------------- */

uint32_t gb_crc32c(const void *data, size_t n);
/* TensorFlow's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8. */
uint32_t gb_tf_masked_crc(const void *data, size_t n);

typedef enum gb_tf_status {
    GB_TF_OK = 0,     /* a record */
    GB_TF_END,        /* the buffer ends exactly after the previous record */
    GB_TF_TORN,       /* the last record is cut short (its bytes are missing) */
    GB_TF_CORRUPT     /* a CRC does not match, or a length is impossible */
} gb_tf_status;

/* The record at buf[*offset..len): *data and *size borrow its bytes, and
 * *offset moves past it. On TORN or CORRUPT *offset stays at the record's
 * start and why (size bytes) says what is wrong. */
gb_tf_status gb_tf_record_next(const unsigned char *buf, size_t len, size_t *offset,
                               const unsigned char **data, size_t *size, char *why,
                               size_t why_size);

/* Appends one framed record of data to out (out_cap bytes from out_len);
 * the bytes needed: 16 + size. Returns the new length, or 0 when it does
 * not fit. */
size_t gb_tf_record_put(unsigned char *out, size_t out_cap, size_t out_len, const void *data,
                        size_t size);

/* ---- events -------------------------------------------------------------------- */

typedef enum gb_tf_kind {
    GB_TF_SCALAR = 1,
    GB_TF_HISTOGRAM,
    GB_TF_IMAGE,
    GB_TF_TEXT,
    GB_TF_OTHER,
    GB_TF_PR_CURVE,   /* the "pr_curves" plugin's [6, num_thresholds] tensor */
    GB_TF_HPARAMS,    /* the "hparams" plugin's data: gb_tf_hparams_decode */
    GB_TF_AUDIO       /* encoded clips: Summary.Audio, or the "audio" plugin's string tensor */
} gb_tf_kind;

typedef struct gb_tf_bytes {
    const unsigned char *data;   /* borrowed from the record */
    size_t size;
} gb_tf_bytes;

#define GB_TF_MAX_BUCKETS 4096   /* histogram buckets read; more: the value is OTHER */
#define GB_TF_MAX_THRESHOLDS 10000 /* a PR curve's thresholds read; more: the value is OTHER */

typedef struct gb_tf_value {
    gb_tf_bytes tag;
    gb_tf_bytes plugin;          /* metadata.plugin_data.plugin_name, or empty */
    gb_tf_bytes plugin_content;  /* metadata.plugin_data.content, or empty */
    gb_tf_kind kind;
    double scalar;               /* SCALAR */
    /* HISTOGRAM: bucket b holds counts[b] values in (edges[b], edges[b + 1]]
     * (the first bucket from min); buckets <= GB_TF_MAX_BUCKETS. */
    double min, max, count, sum, sum_squares;
    size_t buckets;
    double *edges, *counts;      /* filled by gb_tf_histogram_buckets */
    gb_tf_bytes hist;            /* the HistogramProto or tensor it reads them from */
    bool hist_v2;
    /* IMAGE: the encoded image (PNG) and its size. */
    int64_t width, height, channels;
    gb_tf_bytes image;
    /* TEXT: UTF-8 as written (the first string of the tensor). */
    gb_tf_bytes text;
    /* PR_CURVE: its thresholds (2 .. GB_TF_MAX_THRESHOLDS) and the tensor
     * gb_tf_pr_counts reads; HPARAMS: plugin_content is the message. */
    int64_t num_thresholds;
    gb_tf_bytes tensor;
    /* AUDIO: how many clips (gb_tf_audio_clip); a Summary.Audio's one clip
     * is audio, a plugin tensor's are in tensor. */
    int64_t clips;
    gb_tf_bytes audio;
} gb_tf_value;

#define GB_TF_MAX_VALUES 256     /* values of one event read; more: CORRUPT */

typedef struct gb_tf_event {
    double wall_time;
    int64_t step;
    gb_tf_bytes file_version;    /* "brain.Event:2" in a file's first event */
    size_t nvalues;
    gb_tf_value values[GB_TF_MAX_VALUES];
} gb_tf_event;

/* Decodes an Event message. false (and why) when it is no well-formed
 * Event; values of kinds not understood are kept as GB_TF_OTHER. */
bool gb_tf_event_decode(const unsigned char *data, size_t size, gb_tf_event *ev, char *why,
                        size_t why_size);

/* A histogram value's edges (*buckets + 1) and counts (*buckets) into the
 * caller's arrays (each GB_TF_MAX_BUCKETS + 1 doubles); false when the
 * stored buckets are inconsistent (why says how). */
bool gb_tf_histogram_buckets(const gb_tf_value *v, double *edges, double *counts,
                             size_t *buckets, char *why, size_t why_size);

/* A PR curve value's confusion counts into counts (6 * num_thresholds
 * doubles of room): TP, FP, TN, FN, num_thresholds each, as TensorBoard's
 * pr_curves plugin stores them (its precision and recall rows follow from
 * them and are not kept). false when they are not finite counts >= 0. */
bool gb_tf_pr_counts(const gb_tf_value *v, double *counts, char *why, size_t why_size);

/* An audio value's clip k (< v->clips) as its file's bytes (a WAV, as
 * TensorBoard writes them); false when the value holds no such clip. */
bool gb_tf_audio_clip(const gb_tf_value *v, int64_t k, gb_tf_bytes *clip);

/* What a clip's WAV file holds (wav_info.c): its rate, channels and
 * frames; false (and why) when it is no WAV a browser plays (PCM or IEEE
 * float, 1..GB_SUMMARY_AUDIO_MAX_CHANNELS channels). */
typedef struct gb_tf_wav {
    int sample_rate, channels;
    int64_t frames;
} gb_tf_wav;
bool gb_tf_wav_info(const unsigned char *wav, size_t size, gb_tf_wav *out, char *why, size_t why_size);

/* ---- the hparams plugin's data (tfevents_hparams.c) ----------------------------- */

/* TensorBoard's HParams dashboard reads three messages, each the content
 * of a value of the "hparams" plugin (HParamsPluginData): the experiment
 * (the hyperparameters and their domains, the metrics), written once;
 * each session's start (its hyperparameter values) and end (its status),
 * written in its run. */
typedef enum gb_tf_hparams_kind {
    GB_TF_HP_EXPERIMENT = 1,
    GB_TF_HP_SESSION_START,
    GB_TF_HP_SESSION_END
} gb_tf_hparams_kind;

/* A google.protobuf.Value: a number, a string or a bool (others: NONE). */
typedef enum gb_tf_hp_kind { GB_TF_HP_NONE = 0, GB_TF_HP_NUMBER, GB_TF_HP_STRING, GB_TF_HP_BOOL } gb_tf_hp_kind;
typedef struct gb_tf_hp_value {
    gb_tf_hp_kind kind;
    double number;               /* NUMBER; BOOL as 0 or 1 */
    gb_tf_bytes string;          /* STRING */
} gb_tf_hp_value;

/* An hparam of the experiment. type: DataType (0 unset, 1 string, 2 bool,
 * 3 float64); domain: 0 none, 1 discrete (domain_values[first ..
 * first + count)), 2 interval [min, max]. */
typedef struct gb_tf_hp_info {
    gb_tf_bytes name, display_name, description;
    int type, domain;
    double min, max;
    size_t first, count;
} gb_tf_hp_info;

#define GB_TF_MAX_HPARAMS 256      /* hparams, values or metrics of a message; more: refused */
#define GB_TF_MAX_HP_VALUES 4096   /* discrete domain values of an experiment, all together */

typedef struct gb_tf_hparams {
    gb_tf_hparams_kind kind;
    /* SESSION_START: the session's values, by name */
    size_t count;
    gb_tf_bytes names[GB_TF_MAX_HPARAMS];
    gb_tf_hp_value values[GB_TF_MAX_HPARAMS];
    /* SESSION_END: Status (0 unknown, 1 success, 2 failure, 3 running) */
    int status;
    /* EXPERIMENT */
    size_t info_count, metric_count, domain_value_count;
    gb_tf_hp_info infos[GB_TF_MAX_HPARAMS];
    gb_tf_bytes metric_tags[GB_TF_MAX_HPARAMS], metric_display_names[GB_TF_MAX_HPARAMS];
    gb_tf_hp_value domain_values[GB_TF_MAX_HP_VALUES];
} gb_tf_hparams;

/* Decodes an "hparams" plugin value's content (borrowing its bytes).
 * false (and why) when it is malformed, holds none of the three messages,
 * or more than the limits above. */
bool gb_tf_hparams_decode(gb_tf_bytes content, gb_tf_hparams *out, char *why, size_t why_size);

/* ---- writing events ------------------------------------------------------------------ */

/* A growing byte buffer for encoded messages. */
typedef struct gb_tf_buf {
    unsigned char *data;
    size_t len, cap;
    bool failed;                 /* out of memory: every later put does nothing */
} gb_tf_buf;
void gb_tf_buf_free(gb_tf_buf *b);

/* The Event of a file's start: file_version "brain.Event:2". */
void gb_tf_put_file_version(gb_tf_buf *b, double wall_time);
/* One Event holding one value: a rank-0 DT_DOUBLE tensor of the "scalars"
 * plugin (the value's 64 bits kept exactly), a HistogramProto, a PNG image
 * (Summary.Image) or a DT_STRING tensor of the "text" plugin. */
void gb_tf_put_scalar(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                      double value);
void gb_tf_put_histogram(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                         double min, double max, double count, double sum, double sum_squares,
                         const double *edges, const double *counts, size_t buckets);
void gb_tf_put_image(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                     const void *png, size_t size, int64_t width, int64_t height,
                     int64_t channels);
void gb_tf_put_text(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                    const char *text);

/* A PR curve of num_thresholds thresholds as the pr_curves plugin writes
 * it: a [6, T] tensor of rows TP, FP, TN, FN, precision, recall (float64,
 * so every count keeps its bits), num_thresholds in its plugin data. */
void gb_tf_put_pr_curve(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                        size_t num_thresholds, const double *const rows[6]);
/* A step's audio clips (WAV files) as the audio plugin writes them: a
 * [count, 2] string tensor of (clip, label ""), encoding WAV. */
void gb_tf_put_audio(gb_tf_buf *b, double wall_time, int64_t step, const char *tag,
                     const gb_tf_bytes *clips, size_t count);
/* A run's hyperparameters as the hparams plugin's session start (numbers
 * as numbers, the rest as strings), and its status ("done", "failed",
 * "killed", "running"; "": none) as the session's end: success, failure
 * (killed too), running. */
void gb_tf_put_hparams_session(gb_tf_buf *b, double wall_time, const gb_hparam *hparams,
                               size_t count, const char *status);
/* The store's experiment (gb_store_hparams_config) as the hparams
 * plugin's: each hparam's type and domain, each metric by its tag. */
void gb_tf_put_hparams_experiment(gb_tf_buf *b, double wall_time, const gb_hparams_config *c);

/* ---- a run of a store as an event file ------------------------------------------------ */

/* Writes run's scalars, histograms, images and text into the event file at
 * path (created or replaced), each value's bits, step and wall time kept;
 * *written counts the values. Fails as the reader API does (gb_reader.h),
 * IO when the file cannot be written. */
gb_store_status gb_store_export_tfevents(gb_store *s, const char *run, const char *path,
                                         size_t *written);

/* ---- event files in a logdir ---------------------------------------------------------- */

/* Imports the event files directly in dir (not below it) as run `run`
 * into a new store at db; false, and why, when it cannot. */
typedef bool (*gb_tfevents_converter)(const char *dir, const char *run, const char *db,
                                      char *why, size_t why_size);

/* How this process turns event files into stores, for logdirs opened
 * after (gb_store_open_logdir). With one set, a logdir serves every
 * directory holding events.out.tfevents.* files as one run named by its
 * path under the logdir (TensorBoard's run; "." for the logdir itself),
 * read through a private store the converter writes, and converted again
 * whenever the files change: records appended to a growing file appear,
 * and a record still being written (a torn tail) waits for its end. The
 * store library cannot import by itself (the importer is the writer's,
 * gb_summary_import_tfevents_run), so the program serving sets it; NULL:
 * event files are passed over, as without one. */
void gb_store_set_tfevents_converter(gb_tfevents_converter fn);

#ifdef __cplusplus
}
#endif

#endif
