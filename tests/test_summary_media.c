/* test_summary_media.c — the projector's embeddings and the audio clips
 * through the writer and the reader: the stored vectors, metadata text,
 * sprite atlas and WAV bytes exactly as the calls define them, the
 * clipped samples counted, every bad input refused with its exact message
 * (nothing stored), and the bounds of each stored file held by the writer.
 * The WAV files against Python's wave module and sox:
 * tests/media/wav_check.py.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_summary.h"
#include "glassbox.h"
#include "summary_test_util.h"
#include "test_util.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_summary_media")

#define ASSERT_MESSAGE(call, status, message)                 \
    do {                                                      \
        ck_assert_int_eq((call), (status));                   \
        ck_assert_str_eq(gb_summary_last_error(), (message)); \
    } while (0)

static gb_tensor *strings2(const char *const *s, int64_t n, int64_t c) {
    return gb_strings(s, 2, (int64_t[]){n, c});
}

static uint32_t u32_at(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- embeddings -------------------------------------------------------------------------- */

START_TEST(test_embedding_round_trip) {
    gb_summary_writer *w = open_writer("run");
    const double v[6] = {0.1, -2, 3.5, 1e-3, 0, -0.25};   /* float64 in, float32 stored */
    gb_tensor *values = gb_tensor_from(GB_F64, v, 2, (int64_t[]){3, 2});
    const char *cells[] = {"Bag", "8", "Ankle\tboot", "9", "line\nbreak", "0"};
    const char *columns[] = {"class", "label"};
    uint8_t pixels[3 * 2 * 3];   /* three 2x3 gray images: value = point index * 10 */
    for (int i = 0; i < 18; i++) pixels[i] = (uint8_t)(i / 6 * 10);
    gb_tensor *sprite = gb_tensor_from(GB_U8, pixels, 4, (int64_t[]){3, 2, 3, 1});
    ck_assert_int_eq(gb_summary_embedding(w, "emb", values, strings2(cells, 3, 2), columns, sprite, 4),
                     GB_OK);
    ck_assert_int_eq(gb_summary_embedding(w, "emb", values, NULL, NULL, NULL, 9), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);

    gb_store *s = open_store();
    gb_embeddings *e;
    ck_assert_int_eq(gb_store_embeddings(s, "run", "emb", NULL, &e), GB_STORE_OK);
    ck_assert_uint_eq(e->count, 2);
    ck_assert(e->rows[0].step == 4 && e->rows[0].n == 3 && e->rows[0].dim == 2);
    ck_assert(e->rows[0].sprite_width == 3 && e->rows[0].sprite_height == 2 && e->rows[0].sprite_bytes > 0);
    ck_assert(e->rows[1].step == 9 && e->rows[1].metadata_bytes == 0 && e->rows[1].sprite_bytes == 0);
    gb_store_free(e);

    gb_blob *b;
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 4, GB_EMBEDDING_VECTORS, &b), GB_STORE_OK);
    ck_assert_uint_eq(b->size, 6 * sizeof(float));
    for (int i = 0; i < 6; i++) {
        float f;
        memcpy(&f, b->data + 4 * i, 4);
        ck_assert_msg(f == (float)v[i], "vector value %d: %g", i, f);
    }
    gb_store_free(b);
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 4, GB_EMBEDDING_METADATA, &b), GB_STORE_OK);
    const char want[] = "class\tlabel\nBag\t8\nAnkle boot\t9\nline break\t0\n";
    ck_assert_uint_eq(b->size, strlen(want));
    ck_assert(!memcmp(b->data, want, b->size));
    gb_store_free(b);
    /* the sprite: a 2x2 grid of 3x2 tiles, 6x4 pixels, PNG */
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 4, GB_EMBEDDING_SPRITE, &b), GB_STORE_OK);
    ck_assert(b->size > 24 && !memcmp(b->data + 1, "PNG", 3));
    ck_assert_uint_eq(u32_at((const unsigned char[]){b->data[19], b->data[18], b->data[17], b->data[16]}), 6);
    ck_assert_uint_eq(u32_at((const unsigned char[]){b->data[23], b->data[22], b->data[21], b->data[20]}), 4);
    gb_store_free(b);
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 9, GB_EMBEDDING_SPRITE, &b),
                     GB_STORE_ERR_NO_ROW);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' embedding tag 'emb' has no sprite at step 9"),
                  "%s", gb_store_last_error());
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 5, GB_EMBEDDING_VECTORS, &b),
                     GB_STORE_ERR_NO_ROW);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' embedding tag 'emb' has no embedding at step 5"),
                  "%s", gb_store_last_error());
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "emb", 4, (gb_embedding_part)7, &b),
                     GB_STORE_ERR_ARG);
    gb_store_close(s);
}
END_TEST

START_TEST(test_embedding_default_column_names) {
    gb_summary_writer *w = open_writer("run");
    const float v[2] = {1, 2};
    const char *one[] = {"a", "b"};
    ck_assert_int_eq(gb_summary_embedding(w, "one", gb_tensor_from(GB_F32, v, 2, (int64_t[]){2, 1}),
                                          gb_strings(one, 1, (int64_t[]){2}), NULL, NULL, 0), GB_OK);
    ck_assert_int_eq(gb_summary_embedding(w, "two", gb_tensor_from(GB_F32, v, 2, (int64_t[]){1, 2}),
                                          strings2(one, 1, 2), NULL, NULL, 0), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_blob *b;
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "one", 0, GB_EMBEDDING_METADATA, &b), GB_STORE_OK);
    ck_assert_uint_eq(b->size, strlen("label\na\nb\n"));
    ck_assert(!memcmp(b->data, "label\na\nb\n", b->size));
    gb_store_free(b);
    ck_assert_int_eq(gb_store_embedding_part(s, "run", "two", 0, GB_EMBEDDING_METADATA, &b), GB_STORE_OK);
    ck_assert(b->size == strlen("column 1\tcolumn 2\na\tb\n") && !memcmp(b->data, "column 1\tcolumn 2\na\tb\n", b->size));
    gb_store_free(b);
    gb_store_close(s);
}
END_TEST

START_TEST(test_embedding_bad_inputs) {
    gb_summary_writer *w = open_writer("run");
    const float v[4] = {1, 2, 3, 4};
    gb_tensor *ok = gb_tensor_from(GB_F32, v, 2, (int64_t[]){2, 2});
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", gb_tensor_from(GB_F32, v, 1, (int64_t[]){4}), NULL, NULL, NULL, 0),
                   GB_ERR_SHAPE, "gb_summary_embedding 'e': values must be [N, D] with N, D >= 1, got [4]");
    const int32_t ints[4] = {1, 2, 3, 4};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", gb_tensor_from(GB_I32, ints, 2, (int64_t[]){2, 2}), NULL, NULL,
                                        NULL, 0),
                   GB_ERR_DTYPE, "gb_summary_embedding 'e': values must be float32 or float64");
    const float inf[4] = {1, 2, INFINITY, 4};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", gb_tensor_from(GB_F32, inf, 2, (int64_t[]){2, 2}), NULL, NULL,
                                        NULL, 0),
                   GB_ERR_VALUE, "gb_summary_embedding 'e': value [1, 0] is inf: points must be finite float32");
    const double big[2] = {1e300, 0};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", gb_tensor_from(GB_F64, big, 2, (int64_t[]){1, 2}), NULL, NULL,
                                        NULL, 0),
                   GB_ERR_VALUE, "gb_summary_embedding 'e': value [0, 0] is 1e+300: points must be finite float32");
    const char *three[] = {"a", "b", "c"};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", ok, gb_strings(three, 1, (int64_t[]){3}), NULL, NULL, 0),
                   GB_ERR_SHAPE, "gb_summary_embedding 'e': metadata must be [N] or [N, C] with N = 2 points, got [3]");
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", ok, ok, NULL, NULL, 0), GB_ERR_DTYPE,
                   "gb_summary_embedding 'e': metadata must be a string tensor");
    uint8_t px[3 * 4] = {0};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", ok, NULL, NULL,
                                        gb_tensor_from(GB_U8, px, 4, (int64_t[]){3, 2, 2, 1}), 0),
                   GB_ERR_SHAPE, "gb_summary_embedding 'e': sprite must hold one image per point (2), got [3,2,2,1]");
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", ok, NULL, NULL, gb_tensor_from(GB_U8, px, 2, (int64_t[]){2, 6}), 0),
                   GB_ERR_SHAPE, "gb_summary_embedding 'e': expected a rank-4 tensor [N,H,W,C], got rank 2 [2,6]");
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", NULL, NULL, NULL, NULL, 0), GB_ERR_VALUE,
                   "gb_summary_embedding 'e': tensor is NULL (did an earlier op fail?)");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();   /* nothing was written */
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_EMBEDDING, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 0);
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

/* The writer bounds every stored part: vectors, metadata, the atlas. The
 * big tensors are views of one zeroed buffer, so the test stays small. */
START_TEST(test_embedding_bounds) {
    gb_summary_writer *w = open_writer("run");
    int64_t n = GB_SUMMARY_EMBEDDING_MAX_BYTES / 4 / 128 + 1;
    gb_tensor *big = gb_zeros(GB_F32, 2, (int64_t[]){n, 128});
    char msg[256];
    snprintf(msg, sizeof msg, "gb_summary_embedding 'e': values [%lld,128] hold %lld float32 bytes, more "
             "than the 67108864 allowed", (long long)n, (long long)(n * 128 * 4));
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", big, NULL, NULL, NULL, 0), GB_ERR_VALUE, msg);
    /* 8193 points of 91 x 91 tiles: a 91-column grid, 8281 pixels a side */
    gb_tensor *pts = gb_zeros(GB_F32, 2, (int64_t[]){8193, 1});
    gb_tensor *tiles = gb_zeros(GB_U8, 4, (int64_t[]){8193, 91, 91, 1});
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", pts, NULL, NULL, tiles, 0), GB_ERR_VALUE,
                   "gb_summary_embedding 'e': a sprite atlas of 91 x 91 images of 91x91 is 8281x8281 pixels, "
                   "more than 8192 a side");
    /* metadata past 16 MiB: 2 points of 8 MiB each */
    static char long_text[8 << 20];
    memset(long_text, 'x', sizeof long_text - 1);
    const char *cells[] = {long_text, long_text};
    ASSERT_MESSAGE(gb_summary_embedding(w, "e", gb_zeros(GB_F32, 2, (int64_t[]){2, 1}),
                                        gb_strings(cells, 1, (int64_t[]){2}), NULL, NULL, 0),
                   GB_ERR_VALUE, "gb_summary_embedding 'e': the metadata text is 16777222 bytes, more than the "
                                 "16777216 allowed");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}
END_TEST

/* ---- audio --------------------------------------------------------------------------------------- */

START_TEST(test_audio_wav_bytes_and_clipping) {
    gb_summary_writer *w = open_writer("run");
    /* [2 clips, 3 frames, 2 channels] */
    const float v[12] = {0, 1, -1, 0.5f, 1.5f, -2, 0.25f, 0, 0, 0, -0.5f, 1};
    gb_tensor *t = gb_tensor_from(GB_F32, v, 3, (int64_t[]){2, 3, 2});
    ck_assert_int_eq(gb_summary_audio(w, "a", t, 16000, 3, 7), GB_OK);
    ck_assert_int_eq(gb_summary_audio(w, "mono", gb_tensor_from(GB_F32, v, 2, (int64_t[]){1, 5}), 8000, 1, 1),
                     GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();
    gb_audio_clips *c;
    ck_assert_int_eq(gb_store_audio(s, "run", "a", NULL, &c), GB_STORE_OK);
    ck_assert_uint_eq(c->count, 2);
    ck_assert(c->rows[0].step == 7 && c->rows[0].index == 0 && c->rows[0].sample_rate == 16000);
    ck_assert(c->rows[0].channels == 2 && c->rows[0].frames == 3);
    ck_assert_int_eq(c->rows[0].clipped, 2);   /* 1.5 and -2 */
    ck_assert_int_eq(c->rows[1].clipped, 0);
    ck_assert_uint_eq(c->rows[0].wav_size, 44 + 12);
    gb_store_free(c);
    gb_blob *b;
    ck_assert_int_eq(gb_store_audio_wav(s, "run", "a", 7, 0, &b), GB_STORE_OK);
    ck_assert_uint_eq(b->size, 56);
    ck_assert(!memcmp(b->data, "RIFF", 4) && u32_at(b->data + 4) == 48 && !memcmp(b->data + 8, "WAVEfmt ", 8));
    ck_assert(u32_at(b->data + 16) == 16 && b->data[20] == 1 && b->data[22] == 2);
    ck_assert(u32_at(b->data + 24) == 16000 && u32_at(b->data + 28) == 64000 && b->data[32] == 4 && b->data[34] == 16);
    ck_assert(!memcmp(b->data + 36, "data", 4) && u32_at(b->data + 40) == 12);
    const int16_t want[6] = {0, 32767, -32767, 16384, 32767, -32767};
    for (int i = 0; i < 6; i++) {
        int16_t got = (int16_t)(b->data[44 + 2 * i] | b->data[45 + 2 * i] << 8);
        ck_assert_msg(got == want[i], "sample %d: %d, want %d", i, got, want[i]);
    }
    gb_store_free(b);
    ck_assert_int_eq(gb_store_audio_wav(s, "run", "a", 7, 2, &b), GB_STORE_ERR_NO_ROW);
    ck_assert_msg(strstr(gb_store_last_error(), "run 'run' audio tag 'a' has no clip 2 at step 7"), "%s",
                  gb_store_last_error());
    ck_assert_int_eq(gb_store_audio(s, "run", "mono", NULL, &c), GB_STORE_OK);
    ck_assert(c->count == 1 && c->rows[0].channels == 1 && c->rows[0].frames == 5 && c->rows[0].clipped == 1);
    gb_store_free(c);
    gb_store_close(s);
}
END_TEST

START_TEST(test_audio_bad_inputs) {
    gb_summary_writer *w = open_writer("run");
    const float v[4] = {0, 0.5f, NAN, 0};
    gb_tensor *ok = gb_tensor_from(GB_F32, v, 3, (int64_t[]){1, 2, 1});
    ASSERT_MESSAGE(gb_summary_audio(w, "a", ok, 0, 1, 0), GB_ERR_VALUE,
                   "gb_summary_audio 'a': sample_rate must be in 1..384000 Hz, got 0");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", ok, 8000, 0, 0), GB_ERR_VALUE,
                   "gb_summary_audio 'a': max_outputs must be >= 1, got 0");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", gb_tensor_from(GB_F32, v, 1, (int64_t[]){4}), 8000, 1, 0), GB_ERR_SHAPE,
                   "gb_summary_audio 'a': expected [k, frames, channels] or [k, frames] with frames, channels >= 1, "
                   "got [4]");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", gb_tensor_from(GB_F32, v, 3, (int64_t[]){2, 2, 1}), 8000, 2, 0),
                   GB_ERR_VALUE, "gb_summary_audio 'a': clip 1, frame 0, channel 0 is nan: audio must be finite");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", gb_zeros(GB_F32, 3, (int64_t[]){1, 1, 17}), 8000, 1, 0), GB_ERR_SHAPE,
                   "gb_summary_audio 'a': 17 channels: at most 16");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", gb_zeros(GB_I32, 2, (int64_t[]){1, 4}), 8000, 1, 0), GB_ERR_DTYPE,
                   "gb_summary_audio 'a': audio must be float32 or float64");
    ASSERT_MESSAGE(gb_summary_audio(w, "a", gb_zeros(GB_F32, 2, (int64_t[]){1, (16 << 20) + 1}), 8000, 1, 0),
                   GB_ERR_VALUE, "gb_summary_audio 'a': a clip of 16777217 frames x 1 channels is more than the "
                                 "33554432 bytes of 16-bit samples allowed");
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
    gb_store *s = open_store();   /* the NaN's batch wrote no clip, not even the good one */
    gb_tags *t;
    ck_assert_int_eq(gb_store_tags(s, NULL, GB_KIND_AUDIO, &t), GB_STORE_OK);
    ck_assert_uint_eq(t->count, 0);
    gb_store_free(t);
    gb_store_close(s);
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_media");
    TCase *tc = tcase_create("media");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_embedding_round_trip);
    tcase_add_test(tc, test_embedding_default_column_names);
    tcase_add_test(tc, test_embedding_bad_inputs);
    tcase_add_test(tc, test_embedding_bounds);
    tcase_add_test(tc, test_audio_wav_bytes_and_clipping);
    tcase_add_test(tc, test_audio_bad_inputs);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
