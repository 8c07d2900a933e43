/* fuzz_summary_reader_tfevents.c — TensorBoard event files as the
 * importer and a logdir board read them: the record framing
 * (gb_tf_record_next), every record's Event decoded (gb_tf_event_decode)
 * and every histogram's buckets (gb_tf_histogram_buckets). The input is an
 * event file's bytes, and is decoded as one Event as well (mutations
 * rarely keep a record's CRC right). This links the store library alone.
 *
 * What must hold: no crash, leak or undefined behaviour, and no read past
 * the input; a record stays inside the input and the offset only moves
 * forward; a stop says why; decoded values borrow bytes inside the record;
 * a histogram read has ascending, finite edges and finite counts >= 0, at
 * most GB_TF_MAX_BUCKETS of them; a PR curve's counts are finite and >= 0;
 * the hparams plugin's data (gb_tf_hparams_decode) borrows bytes inside
 * the record and keeps to its limits; an audio clip lies inside the record
 * and its WAV header (gb_tf_wav_info) reads as frames that fit the clip.
 */
#include <math.h>

#include "fuzz_target.h"
#include "gb_tfevents.h"

static bool inside(gb_tf_bytes b, const unsigned char *data, size_t size) {
    return !b.size || (b.data >= data && b.size <= size && b.data - data <= (ptrdiff_t)(size - b.size));
}

static double edges[GB_TF_MAX_BUCKETS + 1], counts[GB_TF_MAX_BUCKETS + 1];
static double pr[6 * GB_TF_MAX_THRESHOLDS];
static gb_tf_hparams hp;

/* A PR curve's counts are finite and >= 0, or refused with a reason. */
static void check_pr_curve(const gb_tf_value *v) {
    char why[256] = "";
    if (!gb_tf_pr_counts(v, pr, why, sizeof why)) {
        FUZZ_CHECK(why[0], "a refused PR curve says why");
        return;
    }
    FUZZ_CHECK(v->num_thresholds >= 2 && v->num_thresholds <= GB_TF_MAX_THRESHOLDS, "%lld thresholds",
               (long long)v->num_thresholds);
    for (int64_t i = 0; i < 4 * v->num_thresholds; i++)
        FUZZ_CHECK(pr[i] >= 0 && isfinite(pr[i]), "count %lld is %g", (long long)i, pr[i]);
}

/* Each clip of an audio value lies inside the record, and its WAV header
 * reads as a playable clip or is refused with a reason. */
static void check_audio(const gb_tf_value *v, const unsigned char *data, size_t size) {
    FUZZ_CHECK(v->clips >= 1, "%lld clips", (long long)v->clips);
    for (int64_t k = 0; k < v->clips && k < 8; k++) {
        gb_tf_bytes clip;
        if (!gb_tf_audio_clip(v, k, &clip)) continue;
        FUZZ_CHECK(clip.size && inside(clip, data, size), "clip %lld outside the record", (long long)k);
        gb_tf_wav wav;
        char why[160] = "";
        if (gb_tf_wav_info(clip.data, clip.size, &wav, why, sizeof why))
            FUZZ_CHECK(wav.channels >= 1 && wav.sample_rate >= 1 && wav.frames >= 0 &&
                           (uint64_t)wav.frames * (uint64_t)wav.channels <= clip.size,
                       "a WAV of %d channels, %d Hz, %lld frames in %zu bytes", wav.channels,
                       wav.sample_rate, (long long)wav.frames, clip.size);
        else
            FUZZ_CHECK(why[0], "a refused WAV says why");
    }
}

/* The hparams plugin's data borrows bytes of the record and stays within its limits. */
static void check_hparams(const gb_tf_value *v, const unsigned char *data, size_t size) {
    char why[256] = "";
    if (!gb_tf_hparams_decode(v->plugin_content, &hp, why, sizeof why)) {
        FUZZ_CHECK(why[0], "refused hparams data says why");
        return;
    }
    FUZZ_CHECK(hp.kind >= GB_TF_HP_EXPERIMENT && hp.kind <= GB_TF_HP_SESSION_END, "kind %d", (int)hp.kind);
    FUZZ_CHECK(hp.count <= GB_TF_MAX_HPARAMS && hp.info_count <= GB_TF_MAX_HPARAMS &&
                   hp.metric_count <= GB_TF_MAX_HPARAMS && hp.domain_value_count <= GB_TF_MAX_HP_VALUES,
               "over a limit");
    for (size_t i = 0; i < hp.count; i++)
        FUZZ_CHECK(inside(hp.names[i], data, size) && inside(hp.values[i].string, data, size),
                   "session value %zu outside the record", i);
    for (size_t i = 0; hp.kind == GB_TF_HP_EXPERIMENT && i < hp.info_count; i++) {
        const gb_tf_hp_info *info = &hp.infos[i];
        FUZZ_CHECK(inside(info->name, data, size) && inside(info->display_name, data, size) &&
                       inside(info->description, data, size),
                   "hparam %zu outside the record", i);
        FUZZ_CHECK(info->first + info->count <= hp.domain_value_count, "hparam %zu's values", i);
    }
}

static void check_event(const gb_tf_event *ev, const unsigned char *data, size_t size) {
    FUZZ_CHECK(ev->nvalues <= GB_TF_MAX_VALUES, "%zu values", ev->nvalues);
    FUZZ_CHECK(inside(ev->file_version, data, size), "file_version outside the record");
    for (size_t i = 0; i < ev->nvalues; i++) {
        const gb_tf_value *v = &ev->values[i];
        FUZZ_CHECK(v->kind >= GB_TF_SCALAR && v->kind <= GB_TF_AUDIO, "kind %d", (int)v->kind);
        FUZZ_CHECK(inside(v->tag, data, size) && inside(v->plugin, data, size) &&
                       inside(v->plugin_content, data, size) && inside(v->image, data, size) &&
                       inside(v->text, data, size) && inside(v->hist, data, size) &&
                       inside(v->tensor, data, size) && inside(v->audio, data, size),
                   "value %zu borrows bytes outside its record", i);
        if (v->kind == GB_TF_PR_CURVE) check_pr_curve(v);
        if (v->kind == GB_TF_HPARAMS) check_hparams(v, data, size);
        if (v->kind == GB_TF_AUDIO) check_audio(v, data, size);
        if (v->kind != GB_TF_HISTOGRAM) continue;
        size_t k = 0;
        char why[256] = "";
        if (!gb_tf_histogram_buckets(v, edges, counts, &k, why, sizeof why)) {
            FUZZ_CHECK(why[0], "a refused histogram says why");
            continue;
        }
        FUZZ_CHECK(k >= 1 && k <= GB_TF_MAX_BUCKETS, "%zu buckets", k);
        for (size_t b = 0; b < k; b++)
            FUZZ_CHECK(isfinite(edges[b]) && edges[b + 1] >= edges[b] && isfinite(edges[b + 1]) &&
                           counts[b] >= 0 && isfinite(counts[b]),
                       "bucket %zu: %g..%g count %g", b, edges[b], edges[b + 1], counts[b]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gb_tf_event *ev = malloc(sizeof *ev);
    FUZZ_CHECK(ev != NULL, "out of memory");
    size_t at = 0, n = 0;
    const unsigned char *rec;
    char why[256];
    gb_tf_status st;
    while ((st = gb_tf_record_next(data, size, &at, &rec, &n, why, sizeof why)) == GB_TF_OK) {
        FUZZ_CHECK(rec >= data && n <= size && at <= size && rec + n <= data + size,
                   "record of %zu bytes outside the input", n);
        why[0] = '\0';
        if (gb_tf_event_decode(rec, n, ev, why, sizeof why)) check_event(ev, rec, n);
        else FUZZ_CHECK(why[0], "a refused event says why");
    }
    FUZZ_CHECK(st == GB_TF_END || why[0], "a stop says why");
    FUZZ_CHECK(at <= size, "offset %zu past %zu", at, size);
    /* The whole input as one Event too: random bytes rarely pass a CRC, and
     * the decoder deserves the fuzzer's mutations directly. */
    why[0] = '\0';
    if (gb_tf_event_decode(data, size, ev, why, sizeof why)) check_event(ev, data, size);
    else FUZZ_CHECK(why[0], "a refused event says why");
    free(ev);
    return 0;
}
