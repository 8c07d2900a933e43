/* test_summary_tfevents_plugins.c — the plugin data of TensorBoard event
 * files imported: a PR curve (the pr_curves plugin's [6, T] tensor) keeps
 * its confusion counts exactly; the HParams plugin's experiment (hparams
 * with interval and discrete domains of numbers, strings and bools, and
 * the metrics), a session's start (its values) and its end (its status)
 * become the store's experiment, the run's hyperparameters and its
 * status, as the HParams page reads them for glassbox's own runs; an
 * audio clip (tf.summary.audio's tensor of WAV and label, PyTorch's
 * Summary.Audio) is kept byte for byte with its rate, channels and frames
 * read from its WAV header. The events are encoded here by hand, field by field, in the layout
 * TensorBoard's summary ops write; a bad count or a refused declaration
 * is left out and said, never stored. The other way, a glassbox run's PR
 * curve, audio, hyperparameters, experiment and status exported as an
 * event file come back the same through an import.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gb_tfevents.h"
#include "run_suite.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_tfplugins")

/* ---- a protocol buffer encoder, enough for these messages ---------------------------- */

typedef struct msg {
    unsigned char b[4096];
    size_t n;
} msg;

static void raw_varint(msg *m, uint64_t v) {
    do {
        ck_assert_uint_lt(m->n, sizeof m->b);
        m->b[m->n++] = (unsigned char)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void bytes_field(msg *m, unsigned number, const void *data, size_t size) {
    raw_varint(m, number << 3 | 2);
    raw_varint(m, size);
    ck_assert_uint_le(m->n + size, sizeof m->b);
    memcpy(m->b + m->n, data, size);
    m->n += size;
}

static void str_field(msg *m, unsigned number, const char *s) { bytes_field(m, number, s, strlen(s)); }
static void msg_field(msg *m, unsigned number, const msg *inner) { bytes_field(m, number, inner->b, inner->n); }

static void varint_field(msg *m, unsigned number, uint64_t v) {
    raw_varint(m, number << 3);
    raw_varint(m, v);
}

static void double_field(msg *m, unsigned number, double d) {
    raw_varint(m, number << 3 | 1);
    ck_assert_uint_le(m->n + 8, sizeof m->b);
    memcpy(m->b + m->n, &d, 8);
    m->n += 8;
}

/* Summary.Value{tag, metadata{plugin_data{plugin_name, content}}, tensor}. */
static msg value(const char *tag, const char *plugin, const msg *content, const msg *tensor) {
    msg pd = {0}, md = {0}, v = {0};
    str_field(&pd, 1, plugin);
    if (content) msg_field(&pd, 2, content);
    msg_field(&md, 1, &pd);
    str_field(&v, 1, tag);
    msg_field(&v, 9, &md);
    msg_field(&v, 8, tensor);
    return v;
}

/* Appends the record of Event{wall_time, step, summary{value}} to dir/<sub>/events.out.tfevents.1.t. */
static void write_event(const char *sub, int64_t step, const msg *v) {
    msg sum = {0}, ev = {0};
    msg_field(&sum, 1, v);
    double_field(&ev, 1, 1.7e9 + (double)step);
    varint_field(&ev, 2, (uint64_t)step);
    msg_field(&ev, 5, &sum);
    char path[600];
    snprintf(path, sizeof path, "%s/tb/%s", dir, sub);
    mkdir(path, 0700);
    snprintf(path + strlen(path), sizeof path - strlen(path), "/events.out.tfevents.1.t");
    unsigned char rec[4200];
    size_t n = gb_tf_record_put(rec, sizeof rec, 0, ev.b, ev.n);
    ck_assert_uint_gt(n, 0);
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(rec, 1, n, f), n);
    fclose(f);
}

static char tb[400];

/* The event directory dir/tb, where each test writes its runs. */
static void make_tb(void) {
    snprintf(tb, sizeof tb, "%s/tb", dir);
    mkdir(tb, 0700);
}

static gb_tfevents_report import_all(void) {
    gb_tfevents_report r;
    ck_assert_msg(gb_summary_import_tfevents(tb, db, &r) == GB_OK, "%s", gb_summary_last_error());
    return r;
}

/* ---- PR curves ------------------------------------------------------------------------------ */

/* TensorProto{dtype DT_FLOAT, shape [6, T], tensor_content} of rows. */
static msg pr_tensor(int T, const float *rows) {
    msg t = {0}, shape = {0}, d0 = {0}, d1 = {0};
    varint_field(&d0, 1, 6);
    varint_field(&d1, 1, (uint64_t)T);
    msg_field(&shape, 2, &d0);
    msg_field(&shape, 2, &d1);
    varint_field(&t, 1, 1);
    msg_field(&t, 2, &shape);
    bytes_field(&t, 4, rows, 6 * (size_t)T * sizeof(float));
    return t;
}

START_TEST(test_pr_curves_keep_their_counts) {
    make_tb();
    /* TP, FP, TN, FN, precision, recall at thresholds 0, 0.5, 1 */
    const float rows[18] = {3, 2, 1, 2, 1, 0, 0, 1, 2, 0, 1, 2, 0.6f, 2 / 3.0f, 1, 1, 2 / 3.0f, 1 / 3.0f};
    msg t = pr_tensor(3, rows), v = value("pr/cat", "pr_curves", NULL, &t);
    write_event("eval", 7, &v);
    float bad[18];
    memcpy(bad, rows, sizeof bad);
    bad[4] = -1;   /* a false positive count below 0: not a curve */
    t = pr_tensor(3, bad), v = value("pr/cat", "pr_curves", NULL, &t);
    write_event("eval", 8, &v);
    gb_tfevents_report r = import_all();
    ck_assert_uint_eq(r.pr_curves, 1);
    ck_assert_uint_eq(r.skipped, 1);

    gb_store *s = open_store();
    gb_pr_curves *c;
    ck_assert_int_eq(gb_store_pr_curves(s, "eval", "pr/cat", NULL, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->count, 1);
    const gb_pr_curve_row *row = &c->rows[0];
    ck_assert_int_eq(row->step, 7);
    ck_assert(row->wall_time == 1.7e9 + 7);
    ck_assert_uint_eq(row->num_thresholds, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert(row->tp[i] == rows[i] && row->fp[i] == rows[3 + i]);
        ck_assert(row->tn[i] == rows[6 + i] && row->fn[i] == rows[9 + i]);
    }
    ck_assert(row->precision[0] == 0.6 && row->recall[1] == 2 / 3.0);
    gb_store_free(c);
    gb_store_close(s);
}
END_TEST

/* ---- audio ------------------------------------------------------------------------------------ */

/* A 16-bit PCM WAV of `frames` frames of 2 channels at 8000 Hz, with a LIST
 * chunk before its data (players skip it; so must the importer). */
static size_t make_wav(unsigned char *w, int frames, int seed) {
    static const unsigned char fmt[24] = {'f', 'm', 't', ' ', 16, 0, 0, 0, 1, 0, 2, 0,
                                          0x40, 0x1f, 0, 0, 0x00, 0x7d, 0, 0, 4, 0, 16, 0};
    size_t n = 12;
    memcpy(w + n, fmt, sizeof fmt), n += sizeof fmt;
    memcpy(w + n, "LIST\4\0\0\0INFO", 12), n += 12;
    uint32_t data = (uint32_t)frames * 4;
    memcpy(w + n, "data", 4);
    for (int i = 0; i < 4; i++) w[n + 4 + i] = (unsigned char)(data >> (8 * i));
    n += 8;
    for (uint32_t i = 0; i < data; i++) w[n++] = (unsigned char)(seed + 7 * i);
    memcpy(w, "RIFF", 4);
    for (int i = 0; i < 4; i++) w[4 + i] = (unsigned char)((n - 8) >> (8 * i));
    memcpy(w + 8, "WAVE", 4);
    return n;
}

/* gb_tf_wav_info on a clip (make_wav's layout: "fmt " at 12, its
 * format at 20 and channels at 22; LIST at 36; "data" at 48, samples
 * from 56), whole or edited; the message when refused, else the figures. */
static const char *wav_says(const unsigned char *w, size_t n) {
    static char out[200];
    gb_tf_wav info;
    if (!gb_tf_wav_info(w, n, &info, out, sizeof out)) return out;
    snprintf(out, sizeof out, "%d Hz, %d channels, %lld frames", info.sample_rate, info.channels,
             (long long)info.frames);
    return out;
}

/* A clip's header is read past chunks a player skips, and refused by
 * what is wrong with it. */
START_TEST(test_wav_headers) {
    unsigned char w[256];
    size_t n = make_wav(w, 5, 1);
    ck_assert_str_eq(wav_says(w, n), "8000 Hz, 2 channels, 5 frames");
    ck_assert_str_eq(wav_says(w, n - 4), "8000 Hz, 2 channels, 4 frames");   /* data cut short */
    ck_assert_str_eq(wav_says(w, 48), "the WAV file has no data chunk");
    ck_assert_str_eq(wav_says((const unsigned char *)"OggS and more bytes", 19),
                     "not a WAV file (no RIFF/WAVE header)");
    w[20] = 2;   /* ADPCM */
    ck_assert_str_eq(wav_says(w, n), "WAV format 2 is neither PCM nor IEEE float");
    w[20] = 3;   /* IEEE float is played */
    ck_assert_str_eq(wav_says(w, n), "8000 Hz, 2 channels, 5 frames");
    w[22] = 0;
    ck_assert_str_eq(wav_says(w, n), "a WAV of 0 channels at 8000 Hz, 4 bytes a frame, is not played");
    memcpy(w + 12, "junk", 4);
    ck_assert_str_eq(wav_says(w, n), "the WAV file has no format chunk");
}
END_TEST

START_TEST(test_audio_keeps_its_clips) {
    make_tb();
    unsigned char a[256], b[256], c[256];
    size_t na = make_wav(a, 5, 1), nb = make_wav(b, 3, 2), nc = make_wav(c, 4, 3);
    /* tf.summary.audio: the audio plugin's [2, 2] string tensor of (WAV, label) */
    msg t = {0}, shape = {0}, d0 = {0}, d1 = {0};
    varint_field(&d0, 1, 2);
    varint_field(&d1, 1, 2);
    msg_field(&shape, 2, &d0);
    msg_field(&shape, 2, &d1);
    varint_field(&t, 1, 7);
    msg_field(&t, 2, &shape);
    bytes_field(&t, 8, a, na);
    str_field(&t, 8, "first");
    bytes_field(&t, 8, b, nb);
    str_field(&t, 8, "second");
    msg v = value("voice", "audio", NULL, &t);
    write_event("gen", 1, &v);
    /* PyTorch's add_audio: a Summary.Audio */
    msg au = {0}, v1 = {0};
    raw_varint(&au, 1 << 3 | 5);
    float rate = 8000;
    memcpy(au.b + au.n, &rate, 4), au.n += 4;
    varint_field(&au, 2, 2);
    varint_field(&au, 3, 4);
    bytes_field(&au, 4, c, nc);
    str_field(&au, 5, "audio/wav");
    str_field(&v1, 1, "voice");
    msg_field(&v1, 6, &au);
    write_event("gen", 2, &v1);
    /* a clip that is no WAV is left out */
    msg au2 = {0}, v2 = {0};
    str_field(&au2, 4, "OggS not a wav file at all");
    str_field(&v2, 1, "voice");
    msg_field(&v2, 6, &au2);
    write_event("gen", 3, &v2);
    gb_tfevents_report r = import_all();
    ck_assert_uint_eq(r.audio, 3);
    ck_assert_uint_eq(r.skipped, 1);

    gb_store *s = open_store();
    gb_audio_clips *clips;
    ck_assert_int_eq(gb_store_audio(s, "gen", "voice", NULL, &clips), GB_STORE_OK);
    ck_assert_uint_eq(clips->count, 3);
    const struct {
        int64_t step;
        int index;
        int64_t frames;
        const unsigned char *wav;
        size_t size;
    } want[] = {{1, 0, 5, a, na}, {1, 1, 3, b, nb}, {2, 0, 4, c, nc}};
    for (size_t i = 0; i < 3; i++) {
        const gb_audio_row *row = &clips->rows[i];
        ck_assert_int_eq(row->step, want[i].step);
        ck_assert_int_eq(row->index, want[i].index);
        ck_assert_int_eq(row->sample_rate, 8000);
        ck_assert_int_eq(row->channels, 2);
        ck_assert_int_eq(row->frames, want[i].frames);
        ck_assert_uint_eq(row->wav_size, want[i].size);
        gb_blob *wav;
        ck_assert_int_eq(gb_store_audio_wav(s, "gen", "voice", row->step, row->index, &wav), GB_STORE_OK);
        ck_assert(wav->size == want[i].size && !memcmp(wav->data, want[i].wav, wav->size));
        gb_store_free(wav);
    }
    gb_store_free(clips);
    gb_store_close(s);
}
END_TEST

/* ---- HParams ------------------------------------------------------------------------------- */

static msg pb_value_string(const char *s) {
    msg v = {0};
    str_field(&v, 3, s);
    return v;
}

static msg pb_value_bool(bool b) {
    msg v = {0};
    varint_field(&v, 4, b);
    return v;
}

static msg pb_value_number(double d) {
    msg v = {0};
    double_field(&v, 2, d);
    return v;
}

/* HParamInfo{name, type} with a discrete domain of n values (n > 0) or an
 * interval [lo, hi] (n == 0). */
static msg hparam_info(const char *name, int type, const msg *values, int n, double lo, double hi) {
    msg info = {0}, domain = {0};
    str_field(&info, 1, name);
    varint_field(&info, 4, (uint64_t)type);
    for (int i = 0; i < n; i++) msg_field(&domain, 1, &values[i]);
    if (!n) double_field(&domain, 1, lo), double_field(&domain, 2, hi);
    msg_field(&info, n ? 5 : 6, &domain);
    return info;
}

static msg experiment(double lr_lo, double lr_hi) {
    msg e = {0}, metric = {0}, name = {0};
    msg opts[2] = {pb_value_string("adam"), pb_value_string("sgd")}, bools[2] = {pb_value_bool(true), pb_value_bool(false)};
    msg i1 = hparam_info("lr", 3, NULL, 0, lr_lo, lr_hi), i2 = hparam_info("optimizer", 1, opts, 2, 0, 0),
        i3 = hparam_info("batch_norm", 2, bools, 2, 0, 0);
    msg_field(&e, 4, &i1);
    msg_field(&e, 4, &i2);
    msg_field(&e, 4, &i3);
    str_field(&name, 1, "");
    str_field(&name, 2, "accuracy");
    msg_field(&metric, 1, &name);
    str_field(&metric, 3, "Accuracy");
    msg_field(&e, 5, &metric);
    msg data = {0};
    varint_field(&data, 1, 0);
    msg_field(&data, 2, &e);
    return data;
}

static void session_entry(msg *start, const char *key, const msg *v) {
    msg entry = {0};
    str_field(&entry, 1, key);
    msg_field(&entry, 2, v);
    msg_field(start, 1, &entry);
}

static msg session_start(void) {
    msg start = {0}, data = {0};
    msg lr = pb_value_number(0.01), opt = pb_value_string("adam"), bn = pb_value_bool(true);
    session_entry(&start, "lr", &lr);
    session_entry(&start, "optimizer", &opt);
    session_entry(&start, "batch_norm", &bn);
    msg_field(&data, 3, &start);
    return data;
}

static msg session_end(int status) {
    msg end = {0}, data = {0};
    varint_field(&end, 1, (uint64_t)status);
    msg_field(&data, 4, &end);
    return data;
}

static msg empty_tensor(void) {
    msg t = {0};
    varint_field(&t, 1, 1);
    return t;
}

static void write_hparams(const char *sub, const char *tag, const msg *data) {
    msg t = empty_tensor(), v = value(tag, "hparams", data, &t);
    write_event(sub, 0, &v);
}

START_TEST(test_hparams_become_the_experiment_and_runs) {
    make_tb();
    /* As hp.hparams_config writes it: the experiment in the logdir itself;
     * each session in its run, as hp.hparams and the session's end. */
    msg e = experiment(1e-4, 0.1), start = session_start(), end = session_end(2);
    write_hparams(".", "_hparams_/experiment", &e);
    write_hparams("run1", "_hparams_/session_start_info", &start);
    write_hparams("run1", "_hparams_/session_end_info", &end);
    gb_tfevents_report r = import_all();
    ck_assert_uint_eq(r.hparams, 3);
    ck_assert_str_eq(r.notes, "");

    gb_store *s = open_store();
    gb_hparams_config *c;
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->hparam_count, 3);
    const gb_hparam_info *h = c->hparams;
    ck_assert_str_eq(h[0].name, "lr");
    ck_assert_int_eq(h[0].type, GB_HPARAM_REAL);
    ck_assert_int_eq(h[0].domain, GB_DOMAIN_INTERVAL);
    ck_assert(h[0].min == 1e-4 && h[0].max == 0.1);
    ck_assert_str_eq(h[1].name, "optimizer");
    ck_assert_int_eq(h[1].type, GB_HPARAM_STRING);
    ck_assert_str_eq(h[1].values_json, "[\"adam\",\"sgd\"]");
    ck_assert_str_eq(h[2].name, "batch_norm");
    ck_assert_int_eq(h[2].type, GB_HPARAM_BOOL);
    ck_assert_str_eq(h[2].values_json, "[true,false]");
    ck_assert_uint_eq(c->metric_count, 1);
    ck_assert_str_eq(c->metrics[0].tag, "accuracy");
    ck_assert_str_eq(c->metrics[0].display_name, "Accuracy");
    gb_store_free(c);

    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    const gb_run_row *run1 = NULL;
    for (size_t i = 0; i < runs->count; i++)
        if (!strcmp(runs->rows[i].name, "run1")) run1 = &runs->rows[i];
    ck_assert_ptr_nonnull(run1);
    ck_assert_str_eq(run1->status, "failed");
    ck_assert_uint_eq(run1->hparam_count, 3);   /* by key */
    ck_assert(!strcmp(run1->hparams[0].key, "batch_norm") && run1->hparams[0].number == 1);
    ck_assert(!strcmp(run1->hparams[1].key, "lr") && run1->hparams[1].number == 0.01);
    ck_assert(!strcmp(run1->hparams[2].key, "optimizer") && !run1->hparams[2].is_number);
    ck_assert_str_eq(run1->hparams[2].value, "adam");
    gb_store_free(runs);
    gb_store_close(s);

    /* The run's file grows (a scalar after the end): read on, the run keeps the end it had. */
    gb_tf_buf b = {0};
    gb_tf_put_scalar(&b, 1.7e9 + 9, 9, "accuracy", 0.5);
    char path[600];
    snprintf(path, sizeof path, "%s/run1/events.out.tfevents.1.t", tb);
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b.data, 1, b.len, f), b.len);
    fclose(f);
    gb_tf_buf_free(&b);
    r = import_all();
    ck_assert_uint_eq(r.scalars, 1);
    ck_assert_uint_eq(r.hparams, 0);
    s = open_store();
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    for (size_t i = 0; i < runs->count; i++)
        if (!strcmp(runs->rows[i].name, "run1")) ck_assert_str_eq(runs->rows[i].status, "failed");
    gb_store_free(runs);
    gb_store_close(s);
}
END_TEST

/* An experiment glassbox refuses (an interval upside down) is left out and said. */
START_TEST(test_a_refused_experiment_is_said) {
    make_tb();
    msg e = experiment(0.1, 1e-4);
    write_hparams(".", "_hparams_/experiment", &e);
    gb_tfevents_report r = import_all();
    ck_assert_uint_eq(r.hparams, 0);
    ck_assert_uint_eq(r.skipped, 1);
    char want[800];
    snprintf(want, sizeof want,
             "%s/tb/events.out.tfevents.1.t: the hparams record '_hparams_/experiment' is left out: "
             "gb_summary_hparams_config: hparam 'lr': an interval needs finite min <= max\n",
             dir);
    ck_assert_str_eq(r.notes, want);
    gb_store *s = open_store();
    gb_hparams_config *c;
    ck_assert_int_eq(gb_store_hparams_config(s, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->hparam_count, 0);
    gb_store_free(c);
    gb_store_close(s);
}
END_TEST

/* ---- the other way: a glassbox run exported, then imported ---------------------------- */

/* A run with a PR curve, two audio clips, hyperparameters, the experiment
 * and a failed end, in the store at path. */
static void write_source(const char *path) {
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(path, "src", NULL, &w), GB_OK);
    const float labels[6] = {1, 0, 1, 1, 0, 0}, preds[6] = {0.9f, 0.8f, 0.35f, 0.6f, 0.1f, 0.55f};
    ck_assert_int_eq(gb_summary_pr_curve(w, "pr", gb_tensor_from(GB_F32, labels, GB_SHAPE(6)),
                                         gb_tensor_from(GB_F32, preds, GB_SHAPE(6)), 5, NULL, 4),
                     GB_OK);
    float clips[2 * 6];
    for (int i = 0; i < 12; i++) clips[i] = (float)(i - 6) / 7;
    ck_assert_int_eq(gb_summary_audio(w, "voice", gb_tensor_from(GB_F32, clips, GB_SHAPE(2, 3, 2)), 16000, 2, 5),
                     GB_OK);
    ck_assert_int_eq(gb_summary_hparam_num(w, "lr", 0.003), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_str(w, "optimizer", "adam"), GB_OK);
    const char *opts[] = {"adam", "sgd"};
    const gb_hparam_domain hp[] = {
        {.name = "lr", .type = GB_HPARAM_REAL, .domain = GB_DOMAIN_INTERVAL, .min = 1e-4, .max = 0.1},
        {.name = "optimizer", .display_name = "Optimizer", .type = GB_HPARAM_STRING,
         .domain = GB_DOMAIN_DISCRETE, .value_count = 2, .strings = opts}};
    const gb_hparam_metric metrics[] = {{.tag = "accuracy", .display_name = "Accuracy"}};
    ck_assert_int_eq(gb_summary_hparams_config(w, hp, 2, metrics, 1), GB_OK);
    ck_assert_int_eq(gb_summary_run_status(w, GB_RUN_FAILED), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

static const gb_run_row *find_run(const gb_runs *runs, const char *name) {
    for (size_t i = 0; i < runs->count; i++)
        if (!strcmp(runs->rows[i].name, name)) return &runs->rows[i];
    ck_abort_msg("no run %s", name);
    return NULL;
}

START_TEST(test_exported_plugins_come_back) {
    char src[400], file[600];
    snprintf(src, sizeof src, "%s/src.db", dir);
    write_source(src);
    make_tb();
    snprintf(file, sizeof file, "%s/src", tb);
    mkdir(file, 0700);
    snprintf(file + strlen(file), sizeof file - strlen(file), "/events.out.tfevents.1.glassbox");
    gb_store *a = NULL;
    ck_assert_int_eq(gb_store_open(src, &a), GB_STORE_OK);
    size_t written = 0;
    ck_assert_int_eq(gb_store_export_tfevents(a, "src", file, &written), GB_STORE_OK);
    ck_assert_uint_eq(written, 1 + 2 + 2);   /* a curve, two clips, experiment and session */
    /* A run of the same store that records no hyperparameters is no session of the sweep. */
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(src, "plain", NULL, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", 0.5, 1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    char plain[600];
    snprintf(plain, sizeof plain, "%s/plain.tfevents", dir);
    gb_store_close(a);
    ck_assert_int_eq(gb_store_open(src, &a), GB_STORE_OK);
    ck_assert_int_eq(gb_store_export_tfevents(a, "plain", plain, &written), GB_STORE_OK);
    ck_assert_uint_eq(written, 1);
    gb_tfevents_report r = import_all();
    ck_assert_uint_eq(r.pr_curves, 1);
    ck_assert_uint_eq(r.audio, 2);
    ck_assert_uint_eq(r.hparams, 3);   /* experiment, session start and end */
    gb_store *b = open_store();

    gb_pr_curves *ca, *cb;
    ck_assert_int_eq(gb_store_pr_curves(a, "src", "pr", NULL, &ca), GB_STORE_OK);
    ck_assert_int_eq(gb_store_pr_curves(b, "src", "pr", NULL, &cb), GB_STORE_OK);
    ck_assert(ca->count == 1 && cb->count == 1 && cb->rows[0].num_thresholds == 5 && cb->rows[0].step == 4);
    for (int k = 0; k < 5; k++)
        ck_assert(ca->rows[0].tp[k] == cb->rows[0].tp[k] && ca->rows[0].fp[k] == cb->rows[0].fp[k] &&
                  ca->rows[0].tn[k] == cb->rows[0].tn[k] && ca->rows[0].fn[k] == cb->rows[0].fn[k]);
    gb_store_free(ca);
    gb_store_free(cb);

    for (int k = 0; k < 2; k++) {
        gb_blob *wa, *wb;
        ck_assert_int_eq(gb_store_audio_wav(a, "src", "voice", 5, k, &wa), GB_STORE_OK);
        ck_assert_int_eq(gb_store_audio_wav(b, "src", "voice", 5, k, &wb), GB_STORE_OK);
        ck_assert(wa->size == wb->size && !memcmp(wa->data, wb->data, wa->size));
        gb_store_free(wa);
        gb_store_free(wb);
    }

    gb_runs *ra, *rb;
    ck_assert_int_eq(gb_store_runs(a, &ra), GB_STORE_OK);
    ck_assert_int_eq(gb_store_runs(b, &rb), GB_STORE_OK);
    const gb_run_row *x = find_run(ra, "src"), *y = find_run(rb, "src");
    ck_assert_str_eq(y->status, "failed");
    ck_assert_uint_eq(y->hparam_count, x->hparam_count);
    for (size_t i = 0; i < x->hparam_count; i++) {
        ck_assert_str_eq(y->hparams[i].key, x->hparams[i].key);
        ck_assert_str_eq(y->hparams[i].value, x->hparams[i].value);
    }
    gb_store_free(ra);
    gb_store_free(rb);

    gb_hparams_config *xa, *xb;
    ck_assert_int_eq(gb_store_hparams_config(a, &xa), GB_STORE_OK);
    ck_assert_int_eq(gb_store_hparams_config(b, &xb), GB_STORE_OK);
    ck_assert_uint_eq(xb->hparam_count, 2);
    for (size_t i = 0; i < 2; i++) {
        const gb_hparam_info *p = &xa->hparams[i], *q = &xb->hparams[i];
        ck_assert_str_eq(q->name, p->name);
        ck_assert_str_eq(q->display_name, p->display_name);
        ck_assert_int_eq(q->type, p->type);
        ck_assert_int_eq(q->domain, p->domain);
        ck_assert_msg(p->domain != GB_DOMAIN_INTERVAL || (q->min == p->min && q->max == p->max), "%g %g vs %g %g", q->min, q->max, p->min, p->max);
        ck_assert_str_eq(q->values_json, p->values_json);
    }
    ck_assert_uint_eq(xb->metric_count, 1);
    ck_assert_str_eq(xb->metrics[0].tag, "accuracy");
    ck_assert_str_eq(xb->metrics[0].display_name, "Accuracy");
    gb_store_free(xa);
    gb_store_free(xb);
    gb_store_close(a);
    gb_store_close(b);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_tfevents_plugins");
    TCase *tc = tcase_create("plugins");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_pr_curves_keep_their_counts);
    tcase_add_test(tc, test_wav_headers);
    tcase_add_test(tc, test_audio_keeps_its_clips);
    tcase_add_test(tc, test_hparams_become_the_experiment_and_runs);
    tcase_add_test(tc, test_a_refused_experiment_is_said);
    tcase_add_test(tc, test_exported_plugins_come_back);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
