/* store/tfevents_export.c — a run of the store written as a TensorBoard
 * event file (`glassbox export --format tfevents`), so TensorBoard, or
 * anything reading event files, shows what glassbox recorded.
 *
 * Every value keeps its bits: scalars are rank-0 float64 tensors of the
 * "scalars" plugin (not simple_value, a float32), with their own steps and
 * wall times; histograms keep their statistics and every bucket edge;
 * images are the stored PNG bytes; text is the "text" plugin's string
 * tensor; PR curves are the pr_curves plugin's [6, T] tensors (float64),
 * audio the audio plugin's WAV clips, and the run's hyperparameters and
 * status the hparams plugin's session, with the store's experiment.
 * Graphs, traces and the other glassbox-only events have no place in an
 * event file and are left out (the count of what was written is
 * returned).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_tfevents.h"
#include "store/internal.h"

typedef struct scalar_sink {
    gb_tf_buf *buf;
    const char *tag;
} scalar_sink;

static bool put_point(void *user, int64_t step, double wall_time, double value) {
    scalar_sink *s = user;
    gb_tf_put_scalar(s->buf, wall_time, step, s->tag, value);
    return !s->buf->failed;
}

static gb_store_status put_pr_curves(gb_store *s, const char *run, const char *tag, gb_tf_buf *b,
                                     size_t *written) {
    gb_pr_curves *c = NULL;
    gb_store_status st = gb_store_pr_curves(s, run, tag, NULL, &c);
    for (size_t i = 0; st == GB_STORE_OK && i < c->count; i++) {
        const gb_pr_curve_row *r = &c->rows[i];
        const double *rows[6] = {r->tp, r->fp, r->tn, r->fn, r->precision, r->recall};
        gb_tf_put_pr_curve(b, r->wall_time, r->step, tag, r->num_thresholds, rows);
        (*written)++;
    }
    gb_store_free(c);
    return st;
}

/* One event per step, holding that step's clips in their order (a step
 * of more clips than an event takes here continues in the next). */
enum { CLIPS_PER_EVENT = 16 };

static gb_store_status put_audio(gb_store *s, const char *run, const char *tag, gb_tf_buf *b,
                                 size_t *written) {
    gb_audio_clips *a = NULL;
    gb_store_status st = gb_store_audio(s, run, tag, NULL, &a);
    gb_blob *wav[CLIPS_PER_EVENT];
    gb_tf_bytes clips[CLIPS_PER_EVENT];
    for (size_t i = 0, n = 0; st == GB_STORE_OK && i < a->count; i++) {
        const gb_audio_row *r = &a->rows[i];
        st = gb_store_audio_wav(s, run, tag, r->step, r->index, &wav[n]);
        if (st != GB_STORE_OK) break;
        clips[n] = (gb_tf_bytes){wav[n]->data, wav[n]->size};
        n++;
        if (i + 1 == a->count || a->rows[i + 1].step != r->step || n == CLIPS_PER_EVENT) {
            gb_tf_put_audio(b, r->wall_time, r->step, tag, clips, n);
            *written += n;
            while (n) gb_store_free(wav[--n]);
        }
    }
    gb_store_free(a);
    return st;
}

static gb_store_status put_tag(gb_store *s, const char *run, const gb_tag_row *t, gb_tf_buf *b,
                               size_t *written) {
    gb_store_status st = GB_STORE_OK;
    size_t i;
    if (t->kind == GB_KIND_SCALAR) {
        scalar_sink sink = {b, t->tag};
        st = gb_store_scalar_points(s, run, t->tag, GB_STEP_MIN, GB_STEP_MAX, put_point, &sink);
        if (st == GB_STORE_OK) *written += (size_t)t->count;
    } else if (t->kind == GB_KIND_HISTOGRAM) {
        gb_histograms *h = NULL;
        st = gb_store_histograms(s, run, t->tag, NULL, &h);
        for (i = 0; st == GB_STORE_OK && i < h->count; i++) {
            const gb_histogram_row *r = &h->rows[i];
            if (!r->bucket_count) continue;   /* no finite value: nothing to bucket */
            gb_tf_put_histogram(b, r->wall_time, r->step, t->tag, r->min, r->max, r->count, r->sum,
                                r->sum_squares, r->edges, r->counts, r->bucket_count);
            (*written)++;
        }
        gb_store_free(h);
    } else if (t->kind == GB_KIND_IMAGE) {
        gb_images *im = NULL;
        st = gb_store_images(s, run, t->tag, NULL, true, &im);
        for (i = 0; st == GB_STORE_OK && i < im->count; i++) {
            const gb_image_row *r = &im->rows[i];
            gb_tf_put_image(b, r->wall_time, r->step, t->tag, r->png, r->png_size, r->width,
                            r->height, r->channels);
            (*written)++;
        }
        gb_store_free(im);
    } else if (t->kind == GB_KIND_PR_CURVE) {
        st = put_pr_curves(s, run, t->tag, b, written);
    } else if (t->kind == GB_KIND_AUDIO) {
        st = put_audio(s, run, t->tag, b, written);
    } else if (t->kind == GB_KIND_TEXT) {
        gb_texts *tx = NULL;
        st = gb_store_texts(s, run, t->tag, NULL, &tx);
        for (i = 0; st == GB_STORE_OK && i < tx->count; i++) {
            gb_tf_put_text(b, tx->rows[i].wall_time, tx->rows[i].step, t->tag, tx->rows[i].text);
            (*written)++;
        }
        gb_store_free(tx);
    }
    if (st == GB_STORE_OK && b->failed) {
        gb__store_fail("exporting run '%s': out of memory", run);
        st = GB_STORE_ERR_MEMORY;
    }
    return st;
}

/* The run's hyperparameters and status as the hparams plugin's session,
 * and the store's experiment beside them, when the run has any (a run
 * that records none, in a store of a sweep, is no session of it). */
static gb_store_status put_hparams(gb_store *s, const char *run, double wall_time, gb_tf_buf *b,
                                   size_t *written) {
    gb_runs *runs = NULL;
    gb_hparams_config *c = NULL;
    gb_store_status st = gb_store_runs(s, &runs);
    if (st == GB_STORE_OK) st = gb_store_hparams_config(s, &c);
    for (size_t i = 0; st == GB_STORE_OK && i < runs->count; i++) {
        const gb_run_row *r = &runs->rows[i];
        if (strcmp(r->name, run) || !r->hparam_count) continue;   /* no session of a sweep */
        if (c->hparam_count || c->metric_count) {
            gb_tf_put_hparams_experiment(b, wall_time, c);
            (*written)++;
        }
        gb_tf_put_hparams_session(b, wall_time, r->hparams, r->hparam_count, r->status);
        (*written)++;
    }
    gb_store_free(runs);
    gb_store_free(c);
    if (st == GB_STORE_OK && b->failed) {
        gb__store_fail("exporting run '%s': out of memory", run);
        st = GB_STORE_ERR_MEMORY;
    }
    return st;
}

gb_store_status gb_store_export_tfevents(gb_store *s, const char *run, const char *path,
                                         size_t *written) {
    if (!s || !run || !path || !written) return gb__store_null_args("gb_store_export_tfevents");
    *written = 0;
    gb_tags *tags = NULL;
    gb_store_status st = gb_store_tags(s, run, GB_KIND_ANY, &tags);
    if (st != GB_STORE_OK) return st;
    gb_tf_buf b = {0};
    double first = tags->count ? tags->rows[0].last_wall_time : 0;
    gb_tf_put_file_version(&b, first);
    for (size_t i = 0; st == GB_STORE_OK && i < tags->count; i++)
        st = put_tag(s, run, &tags->rows[i], &b, written);
    gb_store_free(tags);
    if (st == GB_STORE_OK) st = put_hparams(s, run, first, &b, written);
    FILE *f = st == GB_STORE_OK ? fopen(path, "wb") : NULL;
    if (st == GB_STORE_OK && (!f || fwrite(b.data, 1, b.len, f) != b.len)) {
        gb__store_fail("cannot write '%s'", path);
        st = GB_STORE_ERR_IO;
    }
    if (f && fclose(f) && st == GB_STORE_OK) {
        gb__store_fail("cannot write '%s'", path);
        st = GB_STORE_ERR_IO;
    }
    gb_tf_buf_free(&b);
    return st;
}
