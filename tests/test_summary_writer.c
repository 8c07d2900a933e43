/* test_summary_writer.c — every writer call, read back through the reader.
 *
 * Scalars (NaN and ±Inf exact), histograms against hand-computed
 * statistics and buckets, distributions, images decoded back from their
 * PNG, text, graphs, hyperparameters and run metadata, engine events via
 * the default writer's observer (the numerics detail parsed back by the
 * reader; a gb_function's traces with their reasons), the global step,
 * flush and batching, and every bad input with its exact status and
 * message. Distributions by hand: test_summary_reader.c.
 */
#include <check.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gb_debug.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"
#include "summary_writer_fixture.h"

/* ---- fixtures ------------------------------------------------------------------------- */

SUMMARY_WRITER_FIXTURE("gb_summary_writer")

#define ASSERT_ERROR(call, status, part)                                                 \
    do {                                                                                  \
        ck_assert_int_eq((call), (status));                                               \
        ck_assert_msg(strstr(gb_summary_last_error(), (part)), "message '%s' lacks '%s'", \
                      gb_summary_last_error(), (part));                                   \
    } while (0)

/* ---- scalars ------------------------------------------------------------------------------ */

START_TEST(test_scalars_round_trip_nan_and_inf) {
    gb_summary_writer *w = open_writer("run");
    for (int i = 0; i < 100; i++) ck_assert_int_eq(gb_summary_scalar(w, "loss", i * 0.5, i), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", NAN, 100), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", INFINITY, 101), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", -INFINITY, 102), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", -0.0, 103), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "loss", 1e-308 / 1e10, 104), GB_OK);   /* subnormal */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", "loss", NULL, &ser), GB_STORE_OK);
    ck_assert(!ser->downsampled);
    ck_assert_int_eq(ser->count, 105);
    ck_assert_int_eq(ser->total_points, 105);
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(ser->rows[i].step, i);
        ck_assert(ser->rows[i].value == i * 0.5);
        ck_assert_int_eq(ser->rows[i].count, 1);
    }
    ck_assert(isnan(ser->rows[100].value));
    ck_assert_int_eq(ser->rows[100].nan_count, 1);
    ck_assert(isnan(ser->rows[100].min) && isnan(ser->rows[100].mean));
    ck_assert(ser->rows[101].value == INFINITY);
    ck_assert_int_eq(ser->rows[101].posinf_count, 1);
    ck_assert(ser->rows[102].value == -INFINITY);
    ck_assert_int_eq(ser->rows[102].neginf_count, 1);
    ck_assert(ser->rows[103].value == 0 && signbit(ser->rows[103].value));
    ck_assert(ser->rows[104].value == 1e-308 / 1e10);
    ck_assert(ser->rows[0].wall_time > 1e9 && ser->rows[0].wall_time <= ser->rows[104].wall_time);
    gb_store_free(ser);

    /* a step range, and "since step 101" for live updates */
    gb_query q = {10, 12, 0};
    ck_assert_int_eq(gb_store_scalars(s, "run", "loss", &q, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 3);
    ck_assert_int_eq(ser->rows[0].step, 10);
    ck_assert(ser->rows[2].value == 6.0);
    gb_store_free(ser);
    q = (gb_query){101 + 1, GB_STEP_MAX, 0};
    ck_assert_int_eq(gb_store_scalars(s, "run", "loss", &q, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 3);
    ck_assert(ser->rows[0].value == -INFINITY);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

START_TEST(test_scalar_tensor) {
    gb_summary_writer *w = open_writer("run");
    ck_assert_int_eq(gb_summary_scalar_tensor(w, "t", gb_scalar(GB_F32, 2.5), 3), GB_OK);
    const int32_t v[] = {-7};
    ck_assert_int_eq(gb_summary_scalar_tensor(w, "t", gb_tensor_from(GB_I32, v, GB_SHAPE(1, 1)), 4),
                     GB_OK);
    ASSERT_ERROR(gb_summary_scalar_tensor(w, "t", gb_zeros(GB_F32, GB_SHAPE(2)), 5), GB_ERR_SHAPE,
                 "gb_summary_scalar_tensor 't': expected one element, got shape [2]");
    ASSERT_ERROR(gb_summary_scalar_tensor(w, "t", NULL, 5), GB_ERR_VALUE, "tensor is NULL");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", "t", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 2);
    ck_assert(ser->rows[0].value == 2.5 && ser->rows[1].value == -7);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

/* ---- histograms ------------------------------------------------------------------------------ */

START_TEST(test_histogram_statistics_and_buckets) {
    gb_summary_writer *w = open_writer("run");
    const double v[] = {1, 2, 2, 3, 10, NAN, INFINITY};
    ck_assert_int_eq(gb_summary_histogram(w, "h", gb_from_f64(v, GB_SHAPE(7)), 5), GB_OK);
    const float c[] = {5, 5, 5, 5};
    ck_assert_int_eq(gb_summary_histogram(w, "h", gb_from_f32(c, GB_SHAPE(2, 2)), 6), GB_OK);
    const int32_t ints[] = {-3, 3};
    ck_assert_int_eq(gb_summary_histogram(w, "h", gb_tensor_from(GB_I32, ints, GB_SHAPE(2)), 7),
                     GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_histograms *h;
    ck_assert_int_eq(gb_store_histograms(s, "run", "h", NULL, &h), GB_STORE_OK);
    ck_assert_int_eq(h->count, 3);
    const gb_histogram_row *r = &h->rows[0];
    ck_assert_int_eq(r->step, 5);
    ck_assert(r->min == 1 && r->max == 10 && r->count == 5);
    ck_assert(r->sum == 18 && r->sum_squares == 118);
    ck_assert_int_eq(r->nan_count, 1);
    ck_assert_int_eq(r->posinf_count, 1);
    ck_assert_int_eq(r->neginf_count, 0);
    ck_assert_int_eq(r->bucket_count, 30);   /* TensorFlow 2's default */
    ck_assert(r->edges[0] == 1 && r->edges[30] == 10);
    ck_assert_double_eq_tol(r->edges[1], 1.3, 1e-12);
    double total = 0;
    for (int i = 0; i < 30; i++) {
        double want = i == 0 ? 1 : i == 3 ? 2 : i == 6 ? 1 : i == 29 ? 1 : 0;
        ck_assert_msg(r->counts[i] == want, "bucket %d: %g, want %g", i, r->counts[i], want);
        total += r->counts[i];
    }
    ck_assert(total == 5);
    r = &h->rows[1];   /* every value equal: one bucket [v-0.5, v+0.5] */
    ck_assert_int_eq(r->bucket_count, 1);
    ck_assert(r->edges[0] == 4.5 && r->edges[1] == 5.5 && r->counts[0] == 4);
    ck_assert(r->min == 5 && r->max == 5 && r->sum == 20 && r->sum_squares == 100);
    r = &h->rows[2];
    ck_assert(r->min == -3 && r->max == 3 && r->counts[0] == 1 && r->counts[29] == 1);
    gb_store_free(h);
    gb_store_close(s);
}
END_TEST

START_TEST(test_histogram_bucket_option_and_distribution) {
    gb_summary_options o = {.histogram_buckets = 2};
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    const double v[] = {0.5, 1.5};
    ck_assert_int_eq(gb_summary_histogram(w, "h", gb_from_f64(v, GB_SHAPE(2)), 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_histograms *h;
    ck_assert_int_eq(gb_store_histograms(s, "run", "h", NULL, &h), GB_STORE_OK);
    ck_assert_int_eq(h->rows[0].bucket_count, 2);
    ck_assert(h->rows[0].edges[1] == 1.0 && h->rows[0].counts[0] == 1 && h->rows[0].counts[1] == 1);
    gb_store_free(h);
    /* uniform mass over [0.5, 1.5]: each percentile p maps to 0.5 + p/100 */
    gb_distributions *d;
    ck_assert_int_eq(gb_store_distributions(s, "run", "h", NULL, &d), GB_STORE_OK);
    ck_assert_int_eq(d->count, 1);
    for (int p = 0; p < GB_DISTRIBUTION_POINTS; p++)
        ck_assert_double_eq_tol(d->rows[0].values[p], 0.5 + gb_distribution_percentiles[p] / 100,
                                1e-12);
    gb_store_free(d);
    gb_store_close(s);
}
END_TEST

/* ---- images ------------------------------------------------------------------------------------ */

/* Decodes a PNG with libpng into `channels`-channel 8-bit pixels. */
static unsigned char *decode_png(const unsigned char *png, size_t n, int channels, int *w, int *h) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    ck_assert(png_image_begin_read_from_memory(&img, png, n));
    img.format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    ck_assert(png_image_finish_read(&img, NULL, px, 0, NULL));
    *w = (int)img.width;
    *h = (int)img.height;
    return px;
}

START_TEST(test_image_uint8_png_round_trip) {
    gb_summary_writer *w = open_writer("run");
    enum { N = 3, H = 5, W = 7, C = 3 };
    uint8_t px[N * H * W * C];
    for (int i = 0; i < N * H * W * C; i++) px[i] = (uint8_t)(i * 37 + 11);
    gb_tensor *t = gb_tensor_from(GB_U8, px, GB_SHAPE(N, H, W, C));
    ck_assert_int_eq(gb_summary_image(w, "img", t, 2, 9), GB_OK);   /* max_outputs 2 of 3 */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_images *im;
    ck_assert_int_eq(gb_store_images(s, "run", "img", NULL, true, &im), GB_STORE_OK);
    ck_assert_int_eq(im->count, 2);
    for (int k = 0; k < 2; k++) {
        const gb_image_row *r = &im->rows[k];
        ck_assert_int_eq(r->step, 9);
        ck_assert_int_eq(r->index, k);
        ck_assert(r->width == W && r->height == H && r->channels == C);
        ck_assert(r->png_size > 8 && !memcmp(r->png, "\x89PNG", 4));
        int dw, dh;
        unsigned char *dec = decode_png(r->png, r->png_size, C, &dw, &dh);
        ck_assert(dw == W && dh == H);
        ck_assert(!memcmp(dec, px + k * H * W * C, H * W * C));
        free(dec);
    }
    gb_store_free(im);
    /* metadata only, and one PNG by (step, index) */
    ck_assert_int_eq(gb_store_images(s, "run", "img", NULL, false, &im), GB_STORE_OK);
    ck_assert(im->count == 2 && im->rows[1].png == NULL && im->rows[1].png_size > 0);
    size_t size1 = im->rows[1].png_size;
    gb_store_free(im);
    gb_blob *b;
    ck_assert_int_eq(gb_store_image_png(s, "run", "img", 9, 1, &b), GB_STORE_OK);
    ck_assert_int_eq(b->size, size1);
    gb_store_free(b);
    ck_assert_int_eq(gb_store_image_png(s, "run", "img", 9, 2, &b), GB_STORE_ERR_NO_ROW);
    ck_assert_ptr_null(b);
    ck_assert(strstr(gb_store_last_error(), "no image 2 at step 9"));
    gb_store_close(s);
}
END_TEST

START_TEST(test_image_float_scaling) {
    gb_summary_writer *w = open_writer("run");
    const float pos[] = {0, 0.5f, 1, 2};             /* >= 0: x*255, clipped */
    const float neg[] = {-1, 0, 0.5f, 1};            /* 0 -> 127, -1 -> 0 */
    const double rgba[] = {0.2, 0.4, NAN, 1, 0, 0, 0, 0};   /* a NaN pixel turns red */
    ck_assert_int_eq(gb_summary_image(w, "pos", gb_from_f32(pos, GB_SHAPE(1, 2, 2, 1)), 3, 0), GB_OK);
    ck_assert_int_eq(gb_summary_image(w, "neg", gb_from_f32(neg, GB_SHAPE(1, 2, 2, 1)), 3, 0), GB_OK);
    ck_assert_int_eq(gb_summary_image(w, "rgba", gb_from_f64(rgba, GB_SHAPE(1, 1, 2, 4)), 3, 0),
                     GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    const struct {
        const char *tag;
        int c, n;
        unsigned char want[8];
    } cases[] = {
        {"pos", 1, 4, {0, 128, 255, 255}},
        {"neg", 1, 4, {0, 127, 191, 254}},
        {"rgba", 4, 8, {255, 0, 0, 255, 0, 0, 0, 0}},
    };
    for (int i = 0; i < 3; i++) {
        gb_blob *b;
        ck_assert_int_eq(gb_store_image_png(s, "run", cases[i].tag, 0, 0, &b), GB_STORE_OK);
        int dw, dh;
        unsigned char *dec = decode_png(b->data, b->size, cases[i].c, &dw, &dh);
        for (int k = 0; k < cases[i].n; k++)
            ck_assert_msg(dec[k] == cases[i].want[k], "%s[%d] = %d, want %d", cases[i].tag, k,
                          dec[k], cases[i].want[k]);
        free(dec);
        gb_store_free(b);
    }
    gb_store_close(s);
}
END_TEST

/* Attention weights: one image per head of the first sample, each query's
 * row scaled by its own largest weight; bad scores are refused by name. */
START_TEST(test_attention_images) {
    gb_summary_writer *w = open_writer("run");
    /* [batch 2, heads 2, Tq 2, Tv 3]: sample 1 must not show */
    const float sc[] = {0.5f, 0.25f, 0, 1, 0, 0,   0.1f, 0.1f, 0.05f, 0, 0.2f, 0,
                        9, 9, 9, 9, 9, 9,           9, 9, 9, 9, 9, 9};
    ck_assert_int_eq(gb_summary_attention(w, "attention/block0", gb_from_f32(sc, GB_SHAPE(2, 2, 2, 3)), 4),
                     GB_OK);
    const float neg[] = {0.5f, -0.25f};
    ck_assert_int_eq(gb_summary_attention(w, "bad", gb_from_f32(neg, GB_SHAPE(1, 1, 2)), 4), GB_ERR_VALUE);
    ck_assert_str_eq(gb_summary_last_error(),
                     "gb_summary_attention 'bad': attention weights are >= 0 and finite; element 1 is -0.25");
    ck_assert_int_eq(gb_summary_attention(w, "bad", gb_from_f32(neg, GB_SHAPE(2)), 4), GB_ERR_SHAPE);
    ck_assert_str_eq(gb_summary_last_error(),
                     "gb_summary_attention 'bad': expected scores [heads, Tq, Tv] or [batch, heads, Tq, Tv], got [2]");
    ck_assert_int_eq(gb_summary_attention(w, "bad", gb_zeros(GB_I32, GB_SHAPE(1, 1, 1)), 4), GB_ERR_DTYPE);
    ck_assert_str_eq(gb_summary_last_error(), "gb_summary_attention 'bad': expected float32 or float64 scores, got int32");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_images *im;
    ck_assert_int_eq(gb_store_images(s, "run", "attention/block0", NULL, true, &im), GB_STORE_OK);
    ck_assert_int_eq(im->count, 2);
    const unsigned char want[2][6] = {{255, 128, 0, 255, 0, 0}, {255, 255, 128, 0, 255, 0}};
    for (int h = 0; h < 2; h++) {
        const gb_image_row *r = &im->rows[h];
        ck_assert(r->step == 4 && r->index == h && r->width == 3 && r->height == 2 && r->channels == 1);
        int dw, dh;
        unsigned char *dec = decode_png(r->png, r->png_size, 1, &dw, &dh);
        for (int k = 0; k < 6; k++)
            ck_assert_msg(dec[k] == want[h][k], "head %d pixel %d = %d, want %d", h, k, dec[k], want[h][k]);
        free(dec);
    }
    gb_store_free(im);
    gb_store_close(s);
}
END_TEST

/* ---- text, graphs, hyperparameters, runs, tags ------------------------------------------------- */

/* A string tensor: a scalar is its text, a matrix a markdown table. */
START_TEST(test_text_tensor) {
    gb_summary_writer *w = open_writer("run");
    gb_scope_begin();
    ck_assert_int_eq(gb_summary_text_tensor(w, "t", gb_string_scalar("**bold**"), 1), GB_OK);
    gb_tensor *m = gb_strings((const char *const[]){"a", "b|c", "two\nlines", ""}, GB_SHAPE(2, 2));
    ck_assert_int_eq(gb_summary_text_tensor(w, "t", m, 2), GB_OK);
    ASSERT_ERROR(gb_summary_text_tensor(w, "t", gb_zeros(GB_STRING, GB_SHAPE(1, 1, 1)), 3),
                 GB_ERR_SHAPE, "a rank-3 tensor; text summaries take rank 0 (markdown), 1 or 2 (a table)");
    ASSERT_ERROR(gb_summary_text_tensor(w, "t", gb_string_bytes("a\0b", 3), 3), GB_ERR_VALUE,
                 "element 0 holds a NUL byte");
    ASSERT_ERROR(gb_summary_text_tensor(w, "t", gb_scalar(GB_F32, 1), 3), GB_ERR_VALUE,
                 "the tensor must be an eager string tensor");
    gb_scope_end();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_texts *t;
    ck_assert_int_eq(gb_store_texts(s, "run", "t", NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 2);
    ck_assert_str_eq(t->rows[0].text, "**bold**");
    ck_assert_str_eq(t->rows[1].text, "| 0 | 1 |\n|---|---|\n| a | b\\|c |\n| two lines |  |\n");
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

START_TEST(test_text_and_graph) {
    gb_summary_writer *w = open_writer("run");
    const char *text = "# Notes\n\"quoted\" — ünïcode\n";
    ck_assert_int_eq(gb_summary_text(w, "notes", text, 4), GB_OK);
    ck_assert_int_eq(gb_summary_text(w, "notes", "", 5), GB_OK);
    ck_assert_int_eq(gb_summary_graph(w, "train_step", "text", "y = MatMul(x, w)", 0), GB_OK);
    ck_assert_int_eq(gb_summary_graph(w, "train_step", "json", "{\"nodes\":[\"\xc3\xbc\"]}", 1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_texts *t;
    ck_assert_int_eq(gb_store_texts(s, "run", "notes", NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 2);
    ck_assert_str_eq(t->rows[0].text, text);
    ck_assert_int_eq(t->rows[0].step, 4);
    ck_assert_str_eq(t->rows[1].text, "");
    gb_store_free(t);
    gb_graphs *g;
    ck_assert_int_eq(gb_store_graphs(s, "run", "train_step", NULL, &g), GB_STORE_OK);
    ck_assert_int_eq(g->count, 2);
    ck_assert_str_eq(g->rows[0].format, "text");
    ck_assert_str_eq(g->rows[0].content, "y = MatMul(x, w)");
    ck_assert_str_eq(g->rows[1].format, "json");
    ck_assert_str_eq(g->rows[1].content, "{\"nodes\":[\"\xc3\xbc\"]}");
    gb_store_free(g);
    gb_store_close(s);
}
END_TEST

START_TEST(test_runs_metadata_and_hparams) {
    double before = (double)time(NULL) - 1;
    gb_summary_writer *w = open_writer("b-run");
    ck_assert_int_eq(gb_summary_hparam_num(w, "learning_rate", 0.1), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_str(w, "optimizer", "adam"), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_num(w, "layers", 3), GB_OK);
    ck_assert_int_eq(gb_summary_hparam_str(w, "optimizer", "sgd"), GB_OK);   /* upsert */
    ck_assert_int_eq(gb_summary_scalar(w, "x", 1, 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    w = open_writer("a-run");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    w = open_writer("b-run");   /* continued: same run, metadata kept */
    ck_assert_int_eq(gb_summary_scalar(w, "x", 2, 1), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_int_eq(runs->count, 2);
    ck_assert_str_eq(runs->rows[0].name, "a-run");
    const gb_run_row *r = &runs->rows[1];
    ck_assert_str_eq(r->name, "b-run");
    ck_assert_int_eq(r->pid, getpid());
    ck_assert(r->start_time >= before && r->last_write_time >= r->start_time);
    ck_assert(strlen(r->host) > 0);
    ck_assert_msg(strstr(r->command_line, "test_summary_writer"), "%s", r->command_line);
    ck_assert_int_eq(r->hparam_count, 3);   /* sorted by key */
    ck_assert_str_eq(r->hparams[0].key, "layers");
    ck_assert(r->hparams[0].is_number && r->hparams[0].number == 3);
    ck_assert_str_eq(r->hparams[0].value, "3");
    ck_assert_str_eq(r->hparams[1].key, "learning_rate");
    ck_assert_str_eq(r->hparams[1].value, "0.1");
    ck_assert(r->hparams[1].number == 0.1);
    ck_assert_str_eq(r->hparams[2].value, "sgd");
    ck_assert(!r->hparams[2].is_number);
    gb_store_free(runs);
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "b-run", "x", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 2);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

/* A program run twice into one store with new_run: two runs, the second
 * named "<run>_2", then "_3"; each keeps its own series. */
START_TEST(test_new_run_takes_a_free_name) {
    const gb_summary_options fresh = {.new_run = true};
    const char *expect[] = {"mlp", "mlp_2", "mlp_3"};
    for (int i = 0; i < 3; i++) {
        gb_summary_writer *w = NULL;
        ck_assert_msg(gb_summary_writer_open(db, "mlp", &fresh, &w) == GB_OK, "%s", gb_summary_last_error());
        ck_assert_str_eq(gb_summary_writer_run(w), expect[i]);
        ck_assert(!gb_summary_writer_continues(w));
        ck_assert_int_eq(gb_summary_scalar(w, "loss", i, 1), GB_OK);
        ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    }
    gb_summary_writer *w = open_writer("mlp");   /* without new_run: continued */
    ck_assert_str_eq(gb_summary_writer_run(w), "mlp");
    ck_assert(gb_summary_writer_continues(w));
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(s, &runs), GB_STORE_OK);
    ck_assert_int_eq(runs->count, 3);
    gb_store_free(runs);
    for (int i = 0; i < 3; i++) {
        gb_scalar_series *ser;
        ck_assert_int_eq(gb_store_scalars(s, expect[i], "loss", NULL, &ser), GB_STORE_OK);
        ck_assert_int_eq(ser->count, 1);
        ck_assert(ser->rows[0].value == i);
        gb_store_free(ser);
    }
    gb_store_close(s);
}
END_TEST

START_TEST(test_tags_by_run_and_kind) {
    gb_summary_writer *w = open_writer("r1");
    for (int i = 0; i < 5; i++) gb_summary_scalar(w, "loss", i, 10 + i);
    gb_summary_text(w, "loss", "a text tag may share a scalar's name", 3);
    gb_summary_histogram(w, "w", gb_ones(GB_F32, GB_SHAPE(3)), 2);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    w = open_writer("r2");
    gb_summary_scalar(w, "acc", 1, 0);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_ANY, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 4);
    ck_assert_str_eq(t->rows[0].run, "r1");
    ck_assert_str_eq(t->rows[0].tag, "loss");
    ck_assert_int_eq(t->rows[0].kind, GB_KIND_SCALAR);
    ck_assert_int_eq(t->rows[0].count, 5);
    ck_assert(t->rows[0].min_step == 10 && t->rows[0].max_step == 14);
    ck_assert_int_eq(t->rows[1].kind, GB_KIND_TEXT);
    ck_assert_str_eq(t->rows[3].run, "r2");
    gb_store_free(t);
    ck_assert_int_eq(gb_store_tags(s, "r1", GB_KIND_HISTOGRAM, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 1);
    ck_assert_str_eq(t->rows[0].tag, "w");
    ck_assert_str_eq(gb_kind_name(t->rows[0].kind), "histogram");
    gb_store_free(t);
    ck_assert_int_eq(gb_store_tags(s, "r3", GB_KIND_ANY, &t), GB_STORE_ERR_NO_RUN);
    ck_assert(strstr(gb_store_last_error(), "unknown run 'r3'"));
    gb_summary_kind k;
    ck_assert(gb_kind_from_name("image", &k) && k == GB_KIND_IMAGE);
    ck_assert(!gb_kind_from_name("movie", &k));
    gb_store_close(s);
}
END_TEST

/* ---- bad inputs -------------------------------------------------------------------------------- */

START_TEST(test_bad_inputs_have_clear_errors) {
    gb_summary_writer *w = open_writer("run");
    ASSERT_ERROR(gb_summary_image(w, "img", gb_zeros(GB_U8, GB_SHAPE(28, 28)), 1, 0), GB_ERR_SHAPE,
                 "gb_summary_image 'img': expected a rank-4 tensor [N,H,W,C], got rank 2 [28,28]");
    ASSERT_ERROR(gb_summary_image(w, "img", gb_zeros(GB_U8, GB_SHAPE(1, 4, 4, 2)), 1, 0),
                 GB_ERR_SHAPE, "expected C = 1, 3 or 4 channels");
    ASSERT_ERROR(gb_summary_image(w, "img", gb_zeros(GB_I32, GB_SHAPE(1, 4, 4, 3)), 1, 0),
                 GB_ERR_DTYPE, "expected uint8, float32 or float64 pixels, got int32");
    ASSERT_ERROR(gb_summary_image(w, "img", gb_zeros(GB_U8, GB_SHAPE(1, 4, 4, 3)), 0, 0),
                 GB_ERR_VALUE, "max_outputs must be >= 1, got 0");
    ASSERT_ERROR(gb_summary_histogram(w, "h", gb_zeros(GB_F32, GB_SHAPE(0)), 0), GB_ERR_VALUE,
                 "gb_summary_histogram 'h': the tensor is empty");
    ASSERT_ERROR(gb_summary_histogram(w, "h", NULL, 0), GB_ERR_VALUE, "tensor is NULL");
    ASSERT_ERROR(gb_summary_scalar(w, NULL, 1, 0), GB_ERR_VALUE, "gb_summary_scalar: tag is NULL");
    ASSERT_ERROR(gb_summary_histogram(w, NULL, gb_ones(GB_F32, GB_SHAPE(2)), 0), GB_ERR_VALUE,
                 "gb_summary_histogram: tag is NULL");
    ASSERT_ERROR(gb_summary_text(w, "", "x", 0), GB_ERR_VALUE, "tag is empty");
    ASSERT_ERROR(gb_summary_text(w, "t", NULL, 0), GB_ERR_VALUE, "text is NULL");
    ASSERT_ERROR(gb_summary_graph(w, "g", NULL, "x", 0), GB_ERR_VALUE, "format is NULL");
    /* A graph the server could only answer with a 500 is refused here. */
    ASSERT_ERROR(gb_summary_graph(w, "g", "json", "{\"nodes\":[\"\xff\"]}", 0), GB_ERR_VALUE,
                 "gb_summary_graph 'g': content of format 'json' is not one JSON value in UTF-8");
    ASSERT_ERROR(gb_summary_graph(w, "g", "json", "{\"nodes\":[\"\xc3\"]}", 0), GB_ERR_VALUE,
                 "not one JSON value in UTF-8");
    ASSERT_ERROR(gb_summary_graph(w, "g", "json", "{\"nodes\":[]} x", 0), GB_ERR_VALUE,
                 "not one JSON value in UTF-8");
    ASSERT_ERROR(gb_summary_graph(w, "g", "text", "a \xed\xa0\x80 b", 0), GB_ERR_VALUE,
                 "gb_summary_graph 'g': format or content is not UTF-8");
    ASSERT_ERROR(gb_summary_scalar(w, "x", 1, GB_STEP_LIMIT + 1), GB_ERR_VALUE, "out of range");
    gb_summary_clear_step();
    ASSERT_ERROR(gb_summary_scalar(w, "x", 1, GB_STEP_DEFAULT), GB_ERR_STATE,
                 "no step: pass one, or set the global step with gb_summary_set_step()");
    ASSERT_ERROR(gb_summary_hparam_str(w, NULL, "v"), GB_ERR_VALUE, "key is NULL");
    gb_trace_record tr = {0};
    ASSERT_ERROR(gb_summary_trace(w, &tr, 0), GB_ERR_VALUE, "function name is NULL");
    ASSERT_ERROR(gb_summary_numerics(w, NULL, 0), GB_ERR_VALUE, "op_type is NULL");
    gb_summary_clear_error();
    ck_assert_str_eq(gb_summary_last_error(), "");
    /* nothing bad was written */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_ANY, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 0);
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

START_TEST(test_open_errors_and_no_default) {
    gb_summary_writer *w = (gb_summary_writer *)1;
    ASSERT_ERROR(gb_summary_writer_open(NULL, "r", NULL, &w), GB_ERR_VALUE, "path is NULL");
    ck_assert_ptr_null(w);
    ASSERT_ERROR(gb_summary_writer_open(db, "", NULL, &w), GB_ERR_VALUE, "run name is NULL or empty");
    gb_summary_options bad = {.flush_every_ms = -1};
    ASSERT_ERROR(gb_summary_writer_open(db, "r", &bad, &w), GB_ERR_VALUE, "invalid options");
    ASSERT_ERROR(gb_summary_writer_open(dir, "r", NULL, &w), GB_ERR_IO, "cannot open store");
    char missing[400];
    snprintf(missing, sizeof missing, "%s/no/such/dir.db", dir);
    ASSERT_ERROR(gb_summary_writer_open(missing, "r", NULL, &w), GB_ERR_IO, "no/such/dir.db");
    gb_summary_set_default(NULL);
    ck_assert_ptr_null(gb_summary_get_default());
    ASSERT_ERROR(gb_summary_scalar(NULL, "x", 1, 0), GB_ERR_STATE,
                 "no summary writer: pass one, or make one the default");
    ASSERT_ERROR(gb_summary_flush(NULL), GB_ERR_STATE, "no default");
    ASSERT_ERROR(gb_summary_writer_close(NULL), GB_ERR_VALUE, "writer is NULL");
}
END_TEST

/* ---- default writer, global step, observer events ----------------------------------------------- */

START_TEST(test_default_writer_and_global_step) {
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    ck_assert_ptr_eq(gb_summary_get_default(), w);
    gb_summary_set_step(41);
    int64_t step = 0;
    ck_assert(gb_summary_get_step(&step) && step == 41);
    ck_assert_int_eq(gb_summary_scalar(NULL, "x", 1.5, GB_STEP_DEFAULT), GB_OK);
    gb_summary_set_step(42);
    ck_assert_int_eq(gb_summary_text(NULL, "t", "hi", GB_STEP_DEFAULT), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(NULL, "x", 2.5, 7), GB_OK);   /* explicit wins */
    gb_summary_clear_step();
    ck_assert(!gb_summary_get_step(&step));
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_ptr_null(gb_summary_get_default());   /* closing clears the default */

    gb_store *s = open_store();
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", "x", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 2);
    ck_assert(ser->rows[0].step == 7 && ser->rows[1].step == 41 && ser->rows[1].value == 1.5);
    gb_store_free(ser);
    gb_texts *t;
    ck_assert_int_eq(gb_store_texts(s, "run", "t", NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->rows[0].step, 42);
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

START_TEST(test_observer_events_reach_the_default_writer) {
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    gb_summary_set_step(3);
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_WARNING, .message = "retracing train_step"});
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_PLACEMENT, .op_type = "MatMul",
                                 .op_name = "dense/MatMul", .device = "/device:CPU:0",
                                 .message = "placed"});
    for (int i = 0; i < 3; i++)
        gb_observer_emit(&(gb_event){.kind = GB_EVENT_OP, .op_type = "MatMul",
                                     .op_name = "dense/MatMul", .device = "/device:CPU:0",
                                     .message = "", .duration_us = 10 * (i + 1)});
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_TRACE, .op_name = "train_step",
                                 .message = "first call"});
    gb_numerics_alert a = {.op_type = "Log", .op_name = "loss/Log", .scope = "loss",
                           .function = "train_step", .has_step = true, .step = 12,
                           .backward = true, .forward_op = "loss/Log", .forward_op_type = "Log",
                           .dtype = GB_F32, .rank = 1, .shape = {4}, .nan_count = 2,
                           .pos_inf_count = 1, .neg_inf_count = 0, .first_index = 1,
                           .created = true, .ninputs = 1,
                           .inputs = {{.dtype = GB_F32, .rank = 1, .shape = {4}, .min = NAN,
                                       .max = NAN, .nan_count = 4}}};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_NUMERICS, .op_type = "Log",
                                 .op_name = "loss/Log", .message = "NaN in Log", .detail = &a});
    gb_summary_clear_step();
    ck_assert_int_eq(gb_summary_flush(NULL), GB_OK);
    gb_summary_set_default(NULL);
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_WARNING, .message = "not recorded"});
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_messages *m;
    ck_assert_int_eq(gb_store_messages(s, "run", NULL, &m), GB_STORE_OK);
    ck_assert_int_eq(m->count, 2);
    ck_assert_str_eq(m->rows[0].kind, "warning");
    ck_assert_str_eq(m->rows[0].message, "retracing train_step");
    ck_assert_int_eq(m->rows[0].step, 3);
    ck_assert_str_eq(m->rows[1].kind, "placement");
    ck_assert_str_eq(m->rows[1].device, "/device:CPU:0");
    gb_store_free(m);
    gb_op_timings *o;
    ck_assert_int_eq(gb_store_op_timings(s, "run", &o), GB_STORE_OK);
    ck_assert_int_eq(o->count, 1);
    ck_assert_str_eq(o->rows[0].op_name, "dense/MatMul");
    ck_assert(o->rows[0].calls == 3 && o->rows[0].total_us == 60 && o->rows[0].max_us == 30);
    gb_store_free(o);
    gb_traces *t;
    ck_assert_int_eq(gb_store_traces(s, "run", NULL, NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 1);
    ck_assert_str_eq(t->rows[0].function, "train_step");
    ck_assert_str_eq(t->rows[0].reason, "first call");
    ck_assert(isnan(t->rows[0].duration_us) && t->rows[0].nodes_before == -1);
    gb_store_free(t);
    gb_numerics *n;
    ck_assert_int_eq(gb_store_numerics(s, "run", NULL, &n), GB_STORE_OK);
    ck_assert_int_eq(n->count, 1);
    const gb_numerics_row *r = &n->rows[0];
    ck_assert_int_eq(r->step, 12);   /* the alert's own step */
    ck_assert_str_eq(r->op_type, "Log");
    ck_assert_str_eq(r->function, "train_step");
    ck_assert_str_eq(r->scope_path, "loss");
    ck_assert_str_eq(r->forward_op, "loss/Log");
    ck_assert(r->nan_count == 2 && r->posinf_count == 1 && r->neginf_count == 0);
    ck_assert_str_eq(r->message, "NaN in Log");
    ck_assert_msg(strstr(r->detail, "\"created\":true") && strstr(r->detail, "\"shape\":[4]") &&
                      strstr(r->detail, "\"min\":null"),
                  "%s", r->detail);
    gb_store_free(n);
    gb_store_close(s);
}
END_TEST

/* Engine scalars (GB_EVENT_SCALAR): without a run, into the writer's own;
 * naming one, into "<run>/<name>" beside it — each rank's step times in
 * data-parallel training — opened on first use, closed with the writer. */
START_TEST(test_engine_scalars_and_sibling_runs) {
    gb_summary_writer *w = open_writer("job");
    gb_summary_set_default(w);
    for (int step = 0; step < 3; step++)
        for (int r = 0; r < 2; r++) {
            char run[24];
            snprintf(run, sizeof run, "rank_%d", r);
            gb_scalar_event e = {.tag = "dist/step_time_ms", .value = 10 * r + step, .step = step,
                                 .run = run};
            gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .message = e.tag, .detail = &e});
        }
    gb_scalar_event own = {.tag = "engine/value", .value = 7, .step = 1};
    gb_observer_emit(&(gb_event){.kind = GB_EVENT_SCALAR, .message = own.tag, .detail = &own});
    ck_assert_int_eq(gb_summary_flush(NULL), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_scalar_series *ser;
    for (int r = 0; r < 2; r++) {
        char run[32];
        snprintf(run, sizeof run, "job/rank_%d", r);
        ck_assert_int_eq(gb_store_scalars(s, run, "dist/step_time_ms", NULL, &ser), GB_STORE_OK);
        ck_assert_int_eq(ser->count, 3);
        ck_assert(ser->rows[2].value == 10 * r + 2);
        ck_assert_int_eq(ser->rows[2].step, 2);
        gb_store_free(ser);
    }
    ck_assert_int_eq(gb_store_scalars(s, "job", "engine/value", NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 1);
    ck_assert(ser->rows[0].value == 7);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

START_TEST(test_engine_events_end_to_end) {
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    gb_summary_set_step(5);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 10);
    gb_set_op_timing(true);
    gb_tensor *x = gb_from_f32((const float[]){0, 1, 4}, GB_SHAPE(3));
    gb_tensor *y = gb_log(x);   /* log(0) = -Inf: one alert */
    gb_set_op_timing(false);
    gb_disable_check_numerics();
    gb_summary_clear_step();
    ck_assert_ptr_nonnull(y);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_numerics *n;
    ck_assert_int_eq(gb_store_numerics(s, "run", NULL, &n), GB_STORE_OK);
    ck_assert_int_eq(n->count, 1);
    ck_assert_str_eq(n->rows[0].op_type, "Log");
    ck_assert(n->rows[0].neginf_count == 1 && n->rows[0].nan_count == 0 && n->rows[0].step == 5);
    /* The detail the writer made, as the reader parses it back. */
    gb_numerics_detail d;
    ck_assert_msg(gb_numerics_detail_parse(n->rows[0].detail, &d), "%s", n->rows[0].detail);
    ck_assert_int_eq(d.created, GB_TRISTATE_YES);
    ck_assert_int_eq(d.backward, GB_TRISTATE_NO);
    ck_assert_int_eq(d.output_index, 0);
    ck_assert_str_eq(d.output.dtype, "float32");
    ck_assert_int_eq(d.output.rank, 1);
    ck_assert_int_eq(d.output.shape[0], 3);
    ck_assert_int_eq(d.first_index, 0);
    ck_assert_int_eq(d.ninputs, 1);
    ck_assert(d.inputs[0].min == 0 && d.inputs[0].max == 4 && d.inputs[0].nan_count == 0);
    gb_store_free(n);
    gb_op_timings *o;
    ck_assert_int_eq(gb_store_op_timings(s, "run", &o), GB_STORE_OK);
    bool saw_log = false;
    for (size_t i = 0; i < o->count; i++) saw_log |= !strcmp(o->rows[i].op_type, "Log");
    ck_assert(saw_log && o->rows[0].calls >= 1 && o->rows[0].total_us >= 0);
    gb_store_free(o);
    gb_store_close(s);
}
END_TEST

/* Past max_alerts, alerts are counted, not stored: the store keeps the
 * first max_alerts rows and, in the count series, how many there were
 * and the step of the last. */
START_TEST(test_numerics_alerts_past_the_limit_are_counted) {
    ck_assert_str_eq(GB_NUMERICS_SEEN_TAG, GB_STORE_NUMERICS_SEEN_TAG);   /* engine and store agree */
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 2);
    gb_tensor *x = gb_from_f32((const float[]){0, 1}, GB_SHAPE(2));
    for (int step = 3; step < 8; step++) {   /* one alert a step: 5 */
        gb_summary_set_step(step);
        ck_assert_ptr_nonnull(gb_log(x));
    }
    gb_disable_check_numerics();
    gb_summary_clear_step();
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_numerics *n;
    ck_assert_int_eq(gb_store_numerics(s, "run", NULL, &n), GB_STORE_OK);
    ck_assert_int_eq(n->count, 2);
    gb_store_free(n);
    gb_scalar_series *ser;
    ck_assert_int_eq(gb_store_scalars(s, "run", GB_STORE_NUMERICS_SEEN_TAG, NULL, &ser), GB_STORE_OK);
    ck_assert_int_eq(ser->count, 5);
    ck_assert(ser->rows[4].value == 5);
    ck_assert_int_eq(ser->rows[4].step, 7);
    gb_store_free(ser);
    gb_store_close(s);
}
END_TEST

static int negate_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_neg(in[0]);
    return 1;
}

/* A gb_function's traces reach the store with what the graph layer knows:
 * function, reason, signature, cost, node count, retrace or not. */
START_TEST(test_function_traces_end_to_end) {
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    gb_function *f = gb_function_new("negate", negate_fn, NULL);
    gb_tensor *y;
    gb_function_call(f, (gb_tensor *[]){gb_zeros(GB_F32, GB_SHAPE(2))}, 1, NULL, 0, &y);
    gb_function_call(f, (gb_tensor *[]){gb_zeros(GB_F32, GB_SHAPE(3))}, 1, NULL, 0, &y);
    ck_assert(gb_ok());
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_traces *t;
    ck_assert_int_eq(gb_store_traces(s, "run", NULL, NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 2);
    ck_assert_str_eq(t->rows[0].function, "negate");
    ck_assert(!t->rows[0].is_retrace && t->rows[1].is_retrace);
    ck_assert_str_eq(t->rows[0].signature, "negate(x0: float32[2]) -> (float32[2])");
    ck_assert_str_eq(t->rows[1].reason, gb_function_last_trace_reason(f));
    ck_assert(t->rows[1].duration_us >= 0 && t->rows[1].nodes_after == 2);
    ck_assert_int_eq(t->rows[1].nodes_before, 2);
    /* The detail: the passes' node counts, the planned bytes, and that the
     * graphs before and after the passes are stored — apart from it. */
    const char *d = t->rows[1].detail;
    ck_assert_msg(strstr(d, "\"passes\":[{\"pass\":\"pruning\",\"ran\":true,\"nodes\":2,") &&
                      strstr(d, "{\"pass\":\"fusion\"") && strstr(d, "\"arena_bytes\":") &&
                      strstr(d, "\"has_graph\":true,\"has_graph_traced\":true}") &&
                      !strstr(d, "\"nodes\":[{"),
                  "%s", d);
    gb_trace_graph *g;
    ck_assert_int_eq(gb_store_trace_graph(s, "run", t->rows[1].id, false, &g), GB_STORE_OK);
    /* attributes by name, as ops.def declares them */
    ck_assert_msg(!strncmp(g->json, "{\"nodes\":[{\"name\":\"x0\",\"op\":\"Placeholder\",\"device\":\"CPU:0\","
                                    "\"inputs\":[],\"control\":[],\"attrs\":{\"index\":0},\"outputs\":[", 115) &&
                      strstr(g->json, "{\"name\":\"Neg\",\"op\":\"Neg\",\"device\":\"CPU:0\",\"inputs\":[\"x0\"],\"control\":[],"
                                      "\"attrs\":{},\"outputs\":[{\"dtype\":\"float32\",\"shape\":[3]}]}") &&
                      strstr(g->json, "\"outputs\":[\"Neg\"]}"),
                  "%s", g->json);
    gb_store_free(g);
    ck_assert_int_eq(gb_store_trace_graph(s, "run", t->rows[1].id, true, &g), GB_STORE_OK);
    ck_assert_msg(!strncmp(g->json, "{\"nodes\":[", 10), "%s", g->json);
    gb_store_free(g);
    gb_store_free(t);
    gb_store_close(s);
    gb_function_free(f);
}
END_TEST

/* Op timings say which function's graph ran the op: an eager op named as
 * a graph's node ("Neg") is not counted as a run of that graph. */
START_TEST(test_op_timings_of_one_function) {
    gb_summary_writer *w = open_writer("run");
    gb_summary_set_default(w);
    gb_function *f = gb_function_new("negate", negate_fn, NULL);
    gb_tensor *x = gb_zeros(GB_F32, GB_SHAPE(2)), *y;
    gb_set_op_timing(true);
    for (int i = 0; i < 3; i++) gb_function_call(f, (gb_tensor *[]){x}, 1, NULL, 0, &y);
    for (int i = 0; i < 2; i++) gb_neg(x);
    gb_set_op_timing(false);
    ck_assert(gb_ok());
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_op_timings *o;
    ck_assert_int_eq(gb_store_function_op_timings(s, "run", "negate", &o), GB_STORE_OK);
    ck_assert_uint_eq(o->count, 1);
    ck_assert_str_eq(o->rows[0].op_name, "Neg");
    ck_assert_int_eq(o->rows[0].calls, 3);
    gb_store_free(o);
    ck_assert_int_eq(gb_store_op_timings(s, "run", &o), GB_STORE_OK);
    ck_assert_uint_eq(o->count, 1);
    ck_assert_int_eq(o->rows[0].calls, 5);
    gb_store_free(o);
    ck_assert_int_eq(gb_store_function_op_timings(s, "run", "other", &o), GB_STORE_OK);
    ck_assert_uint_eq(o->count, 0);
    gb_store_free(o);
    gb_store_close(s);
    gb_function_free(f);
}
END_TEST

static int twice_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_add(in[0], in[0]);
    return 1;
}

/* A function called 469 times (a fit's steps) and still alive when the
 * writer closes: the store's counters are the last ones, not those of the
 * 256th call; a flush sends the calls so far. */
static void assert_counts(const char *run, int64_t calls) {
    gb_store *s = open_store();
    gb_function_stats_list *l;
    ck_assert_int_eq(gb_store_function_stats(s, run, &l), GB_STORE_OK);
    ck_assert_int_eq(l->count, 1);
    ck_assert_str_eq(l->rows[0].function, "twice");
    ck_assert_int_eq(l->rows[0].calls, calls);
    ck_assert_int_eq(l->rows[0].cache_hits, calls - 1);
    ck_assert_int_eq(l->rows[0].traces, 1);
    gb_store_free(l);
    gb_store_close(s);
}

START_TEST(test_function_counters_exact_at_close) {
    gb_summary_writer *w = open_writer("steps");
    gb_summary_set_default(w);
    gb_function *f = gb_function_new("twice", twice_fn, NULL);
    gb_tensor *y, *x = gb_ones(GB_F32, GB_SHAPE(4));
    for (int i = 0; i < 300; i++) ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_int_eq(gb_summary_flush(w), GB_OK);
    assert_counts("steps", 300);
    for (int i = 300; i < 469; i++) ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    assert_counts("steps", 469);
    gb_function_free(f);
}
END_TEST

START_TEST(test_trace_and_numerics_records_paged) {
    gb_summary_writer *w = open_writer("run");
    for (int i = 0; i < 5; i++) {
        gb_trace_record r = {.function = i % 2 ? "f" : "g", .is_retrace = i > 1,
                             .reason = "shape changed", .signature = "(x: float32[?])",
                             .duration_us = 100 + i, .nodes_before = 10, .nodes_after = 7,
                             .detail_json = "{\"k\":1}"};
        ck_assert_int_eq(gb_summary_trace(w, &r, i), GB_OK);
    }
    gb_summary_clear_step();
    gb_numerics_record nr = {.op_type = "Sqrt", .neginf_count = 2};
    ck_assert_int_eq(gb_summary_numerics(w, &nr, GB_STEP_DEFAULT), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_traces *t;
    gb_event_query q = {0, 2};
    ck_assert_int_eq(gb_store_traces(s, "run", NULL, &q, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 2);
    int64_t last = t->rows[1].id;
    gb_store_free(t);
    q = (gb_event_query){last, 0};
    ck_assert_int_eq(gb_store_traces(s, "run", NULL, &q, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 3);
    ck_assert(t->rows[0].id > last && t->rows[0].is_retrace && t->rows[0].step == 2);
    ck_assert(t->rows[2].duration_us == 104 && t->rows[2].nodes_after == 7);
    ck_assert_str_eq(t->rows[2].detail, "{\"k\":1}");
    gb_store_free(t);
    ck_assert_int_eq(gb_store_traces(s, "run", "f", NULL, &t), GB_STORE_OK);
    ck_assert_int_eq(t->count, 2);
    ck_assert_str_eq(t->rows[1].signature, "(x: float32[?])");
    gb_store_free(t);
    gb_numerics *n;
    ck_assert_int_eq(gb_store_numerics(s, "run", NULL, &n), GB_STORE_OK);
    ck_assert(n->count == 1 && n->rows[0].step == GB_STEP_NONE && n->rows[0].neginf_count == 2);
    ck_assert_str_eq(n->rows[0].detail, "");
    gb_store_free(n);
    ck_assert_int_eq(gb_store_numerics(s, "nope", NULL, &n), GB_STORE_ERR_NO_RUN);
    gb_store_close(s);
}
END_TEST

/* ---- flushing and batching -------------------------------------------------------------------------- */

static int64_t committed_points(const char *tag) {
    gb_store *s = open_store();
    gb_scalar_series *ser;
    gb_store_status st = gb_store_scalars(s, "run", tag, NULL, &ser);
    int64_t n = st == GB_STORE_OK ? (int64_t)ser->count : -1;
    if (st != GB_STORE_OK && st != GB_STORE_ERR_NO_TAG)   /* only "not yet" is expected */
        ck_abort_msg("%s", gb_store_last_error());
    if (st == GB_STORE_OK) gb_store_free(ser);
    gb_store_close(s);
    return n;
}

START_TEST(test_flush_makes_events_visible) {
    gb_summary_options o = {.flush_every_events = 1000000, .flush_every_ms = 600000};
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    ck_assert_int_eq(gb_summary_scalar(w, "x", 1, 0), GB_OK);
    ck_assert_int_eq(gb_summary_flush(w), GB_OK);
    gb_store *s = open_store();
    uint64_t v1, v2, v3;
    ck_assert_int_eq(gb_store_data_version(s, &v1), GB_STORE_OK);
    ck_assert_int_eq(gb_store_data_version(s, &v2), GB_STORE_OK);
    ck_assert(v1 == v2);   /* nothing changed */
    ck_assert_int_eq(gb_summary_scalar(w, "x", 2, 1), GB_OK);
    summary_sleep_ms(100);
    ck_assert_int_eq(committed_points("x"), 1);   /* queued, not committed */
    ck_assert_int_eq(gb_store_data_version(s, &v3), GB_STORE_OK);
    ck_assert(v3 == v2);
    ck_assert_int_eq(gb_summary_flush(w), GB_OK);
    ck_assert_int_eq(committed_points("x"), 2);
    ck_assert_int_eq(gb_store_data_version(s, &v3), GB_STORE_OK);
    ck_assert(v3 != v2);
    gb_store_close(s);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}
END_TEST

START_TEST(test_timer_and_count_trigger_commits) {
    gb_summary_options o = {.flush_every_events = 1000000, .flush_every_ms = 50};
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    summary_sleep_ms(100);   /* the background thread is idle: the first event must arm the timer */
    ck_assert_int_eq(gb_summary_scalar(w, "timer", 1, 0), GB_OK);
    int64_t n = 0;
    for (int i = 0; i < 100 && n < 1; i++, summary_sleep_ms(20)) n = committed_points("timer");
    ck_assert_int_eq(n, 1);   /* committed by the timer, no flush */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    o = (gb_summary_options){.flush_every_events = 100, .flush_every_ms = 600000};
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    for (int i = 0; i < 100; i++) ck_assert_int_eq(gb_summary_scalar(w, "count", i, i), GB_OK);
    n = -1;
    for (int i = 0; i < 200 && n < 100; i++, summary_sleep_ms(20)) n = committed_points("count");
    ck_assert_int_eq(n, 100);   /* committed by the count, no flush */
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}
END_TEST

START_TEST(test_tiny_queue_blocks_never_drops) {
    gb_summary_options o = {.flush_every_events = 7, .max_queue_events = 5, .max_queue_bytes = 100};
    gb_summary_writer *w;
    ck_assert_int_eq(gb_summary_writer_open(db, "run", &o, &w), GB_OK);
    for (int i = 0; i < 3000; i++) ck_assert_int_eq(gb_summary_scalar(w, "x", i, i), GB_OK);
    for (int i = 0; i < 20; i++) ck_assert_int_eq(gb_summary_text(w, "t", "some text", i), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    ck_assert_int_eq(committed_points("x"), 3000);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_writer");
    TCase *tc = tcase_create("writer");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_scalars_round_trip_nan_and_inf);
    tcase_add_test(tc, test_text_tensor);
    tcase_add_test(tc, test_scalar_tensor);
    tcase_add_test(tc, test_histogram_statistics_and_buckets);
    tcase_add_test(tc, test_histogram_bucket_option_and_distribution);
    tcase_add_test(tc, test_image_uint8_png_round_trip);
    tcase_add_test(tc, test_image_float_scaling);
    tcase_add_test(tc, test_attention_images);
    tcase_add_test(tc, test_text_and_graph);
    tcase_add_test(tc, test_runs_metadata_and_hparams);
    tcase_add_test(tc, test_new_run_takes_a_free_name);
    tcase_add_test(tc, test_tags_by_run_and_kind);
    tcase_add_test(tc, test_bad_inputs_have_clear_errors);
    tcase_add_test(tc, test_open_errors_and_no_default);
    tcase_add_test(tc, test_default_writer_and_global_step);
    tcase_add_test(tc, test_observer_events_reach_the_default_writer);
    tcase_add_test(tc, test_engine_scalars_and_sibling_runs);
    tcase_add_test(tc, test_engine_events_end_to_end);
    tcase_add_test(tc, test_numerics_alerts_past_the_limit_are_counted);
    tcase_add_test(tc, test_function_traces_end_to_end);
    tcase_add_test(tc, test_op_timings_of_one_function);
    tcase_add_test(tc, test_function_counters_exact_at_close);
    tcase_add_test(tc, test_trace_and_numerics_records_paged);
    tcase_add_test(tc, test_flush_makes_events_visible);
    tcase_add_test(tc, test_timer_and_count_trigger_commits);
    tcase_add_test(tc, test_tiny_queue_blocks_never_drops);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
