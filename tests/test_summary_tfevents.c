/* test_summary_tfevents.c — TensorBoard event files both ways: a run of a
 * store exported as an event file (gb_store_export_tfevents) and imported
 * back (gb_summary_import_tfevents) holds the same scalars bit for bit
 * (NaN, infinities and -0 included), the same histograms (statistics and
 * every edge and count) and the same PNG bytes and text, with their steps
 * and wall times; the record framing's masked CRC-32C against known
 * values; a file cut in the middle of a record (its writer killed) is
 * imported up to the tear and the report says where it stopped; a
 * damaged record stops its file the same way; event files in the older
 * forms (simple_value, a HistogramProto of TensorFlow 1 with its DBL_MAX
 * last limit) are read too.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_tfevents.h"
#include "run_suite.h"
#include "summary_writer_fixture.h"

SUMMARY_WRITER_FIXTURE("gb_tfevents")

static const double scalars[] = {1.0 / 3.0, -0.0, NAN, INFINITY, -INFINITY, 1e-300, 123456789.125};
enum { NSCALARS = sizeof scalars / sizeof scalars[0] };

static void write_source_run(void) {
    gb_summary_writer *w = open_writer("train");
    for (int i = 0; i < NSCALARS; i++)
        ck_assert_int_eq(gb_summary_scalar(w, "loss", scalars[i], 10 * i), GB_OK);
    double v[] = {0.5, 1.5, -2.25, 7.0, 7.0, 3.125};
    ck_assert_int_eq(gb_summary_histogram(w, "weights", gb_from_f64(v, GB_SHAPE(6)), 3), GB_OK);
    double one[] = {4.0};   /* one value: the bucket [3.5, 4.5], min 4 */
    ck_assert_int_eq(gb_summary_histogram(w, "weights", gb_from_f64(one, GB_SHAPE(1)), 4), GB_OK);
    unsigned char px[2 * 3 * 2 * 3];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 13);
    ck_assert_int_eq(gb_summary_image(w, "sample", gb_tensor_from(GB_U8, px, GB_SHAPE(2, 3, 2, 3)), 1, 7),
                     GB_OK);
    ck_assert_int_eq(gb_summary_text(w, "notes", "# hello\n*world* \xc3\xa9", 2), GB_OK);
    ck_assert_int_eq(gb_summary_writer_close(w), GB_OK);
}

/* dir/<sub>/events.out.tfevents.<...> holding run "train" of db. */
static void export_to(const char *sub, char *file, size_t size, size_t *written) {
    char d[400];
    snprintf(d, sizeof d, "%s/%s", dir, sub);
    ck_assert_int_eq(mkdir(d, 0700) == 0 || access(d, F_OK) == 0, 1);
    snprintf(file, size, "%s/events.out.tfevents.1700000000.host.test", d);
    gb_store *s = open_store();
    ck_assert_msg(gb_store_export_tfevents(s, "train", file, written) == GB_STORE_OK, "%s",
                  gb_store_last_error());
    gb_store_close(s);
}

static gb_store *open_path(const char *path) {
    gb_store *s = NULL;
    ck_assert_msg(gb_store_open(path, &s) == GB_STORE_OK, "%s", gb_store_last_error());
    return s;
}

typedef struct points {
    size_t n;
    int64_t step[16];
    double wall[16], value[16];
} points;

static bool collect(void *user, int64_t step, double wall, double value) {
    points *p = user;
    if (p->n < 16) p->step[p->n] = step, p->wall[p->n] = wall, p->value[p->n] = value;
    p->n++;
    return true;
}

static points read_points(gb_store *s, const char *run) {
    points p = {0};
    ck_assert_int_eq(gb_store_scalar_points(s, run, "loss", GB_STEP_MIN, GB_STEP_MAX, collect, &p),
                     GB_STORE_OK);
    return p;
}

static bool same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

START_TEST(test_masked_crc_known_values) {
    /* CRC-32C check value, and TensorFlow's mask of it. */
    ck_assert_uint_eq(gb_crc32c("123456789", 9), 0xE3069283u);
    uint32_t c = 0xE3069283u;
    ck_assert_uint_eq(gb_tf_masked_crc("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
    unsigned char rec[64];
    size_t len = gb_tf_record_put(rec, sizeof rec, 0, "abc", 3);
    ck_assert_uint_eq(len, 19);
    size_t at = 0, n;
    const unsigned char *data;
    char why[128];
    ck_assert_int_eq(gb_tf_record_next(rec, len, &at, &data, &n, why, sizeof why), GB_TF_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(!memcmp(data, "abc", 3));
    ck_assert_int_eq(gb_tf_record_next(rec, len, &at, &data, &n, why, sizeof why), GB_TF_END);
    ck_assert_uint_eq(gb_tf_record_put(rec, 18, 0, "abc", 3), 0);   /* does not fit */
}
END_TEST

START_TEST(test_round_trip_bit_for_bit) {
    write_source_run();
    char file[512], imported[400], tf[400];
    size_t written = 0;
    export_to("tf", file, sizeof file, &written);
    ck_assert_uint_eq(written, NSCALARS + 2 + 1 + 1);
    snprintf(tf, sizeof tf, "%s/tf", dir);
    snprintf(imported, sizeof imported, "%s/imported.db", dir);
    gb_tfevents_report r;
    ck_assert_msg(gb_summary_import_tfevents(tf, imported, &r) == GB_OK, "%s", gb_summary_last_error());
    ck_assert_uint_eq(r.files, 1);
    ck_assert_uint_eq(r.events, 1 + written);   /* the file-version event first */
    ck_assert_uint_eq(r.scalars, NSCALARS);
    ck_assert_uint_eq(r.histograms, 2);
    ck_assert_uint_eq(r.images, 1);
    ck_assert_uint_eq(r.texts, 1);
    ck_assert_uint_eq(r.skipped, 0);
    ck_assert_str_eq(r.notes, "");

    gb_store *a = open_store(), *b = open_path(imported);
    /* Files in the directory itself: the run is named after it. */
    gb_runs *runs;
    ck_assert_int_eq(gb_store_runs(b, &runs), GB_STORE_OK);
    ck_assert_uint_eq(runs->count, 1);
    ck_assert_str_eq(runs->rows[0].name, "tf");
    gb_store_free(runs);

    points pa = read_points(a, "train"), pb = read_points(b, "tf");
    ck_assert_uint_eq(pa.n, NSCALARS);
    ck_assert_uint_eq(pb.n, NSCALARS);
    for (size_t i = 0; i < pa.n; i++) {
        ck_assert_int_eq(pa.step[i], pb.step[i]);
        ck_assert_msg(same_bits(pa.value[i], pb.value[i]) && same_bits(pa.value[i], scalars[i]),
                      "point %zu: %a vs %a", i, pa.value[i], pb.value[i]);
        ck_assert(same_bits(pa.wall[i], pb.wall[i]));
    }

    gb_histograms *ha, *hb;
    ck_assert_int_eq(gb_store_histograms(a, "train", "weights", NULL, &ha), GB_STORE_OK);
    ck_assert_int_eq(gb_store_histograms(b, "tf", "weights", NULL, &hb), GB_STORE_OK);
    ck_assert_uint_eq(ha->count, 2);
    ck_assert_uint_eq(hb->count, 2);
    for (size_t i = 0; i < ha->count; i++) {
        const gb_histogram_row *x = &ha->rows[i], *y = &hb->rows[i];
        ck_assert_int_eq(x->step, y->step);
        ck_assert(same_bits(x->wall_time, y->wall_time));
        ck_assert(same_bits(x->min, y->min) && same_bits(x->max, y->max));
        ck_assert(same_bits(x->count, y->count) && same_bits(x->sum, y->sum) &&
                  same_bits(x->sum_squares, y->sum_squares));
        ck_assert_uint_eq(x->bucket_count, y->bucket_count);
        ck_assert(!memcmp(x->edges, y->edges, (x->bucket_count + 1) * sizeof(double)));
        ck_assert(!memcmp(x->counts, y->counts, x->bucket_count * sizeof(double)));
    }
    ck_assert(ha->rows[1].edges[0] == 3.5 && ha->rows[1].min == 4.0);
    gb_store_free(ha);
    gb_store_free(hb);

    gb_images *ia, *ib;
    ck_assert_int_eq(gb_store_images(a, "train", "sample", NULL, true, &ia), GB_STORE_OK);
    ck_assert_int_eq(gb_store_images(b, "tf", "sample", NULL, true, &ib), GB_STORE_OK);
    ck_assert_uint_eq(ia->count, 1);
    ck_assert_uint_eq(ib->count, 1);
    ck_assert_int_eq(ib->rows[0].step, 7);
    ck_assert_int_eq(ib->rows[0].width, 2);
    ck_assert_int_eq(ib->rows[0].height, 3);
    ck_assert_int_eq(ib->rows[0].channels, 3);
    ck_assert_uint_eq(ia->rows[0].png_size, ib->rows[0].png_size);
    ck_assert(!memcmp(ia->rows[0].png, ib->rows[0].png, ia->rows[0].png_size));
    gb_store_free(ia);
    gb_store_free(ib);

    gb_texts *ta;
    ck_assert_int_eq(gb_store_texts(b, "tf", "notes", NULL, &ta), GB_STORE_OK);
    ck_assert_uint_eq(ta->count, 1);
    ck_assert_str_eq(ta->rows[0].text, "# hello\n*world* \xc3\xa9");
    ck_assert_int_eq(ta->rows[0].step, 2);
    gb_store_free(ta);
    gb_store_close(a);
    gb_store_close(b);
}
END_TEST

static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    rewind(f);
    unsigned char *buf = malloc(*size);
    ck_assert_uint_eq(fread(buf, 1, *size, f), *size);
    fclose(f);
    return buf;
}

static void spit(const char *path, const unsigned char *buf, size_t size) {
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, size, f), size);
    fclose(f);
}

/* The offset of the last record of buf. */
static size_t last_record(const unsigned char *buf, size_t size) {
    size_t at = 0, prev = 0, n;
    const unsigned char *data;
    char why[128];
    while (gb_tf_record_next(buf, size, &at, &data, &n, why, sizeof why) == GB_TF_OK) prev = at - n - 16;
    return prev;
}

START_TEST(test_torn_file_imports_everything_before_the_tear) {
    write_source_run();
    char file[512], tf[400], imported[400];
    size_t written = 0;
    export_to("torn", file, sizeof file, &written);
    size_t size;
    unsigned char *buf = slurp(file, &size);
    /* The writer killed in the middle of the last record: 5 bytes of its data written. */
    size_t last = last_record(buf, size);
    spit(file, buf, last + 12 + 5);
    snprintf(tf, sizeof tf, "%s/torn", dir);
    snprintf(imported, sizeof imported, "%s/imported.db", dir);
    gb_tfevents_report r;
    ck_assert_int_eq(gb_summary_import_tfevents(tf, imported, &r), GB_OK);
    /* Tags export in name order: loss, notes, sample, weights; the last record is weights' 2nd. */
    ck_assert_uint_eq(r.scalars, NSCALARS);
    ck_assert_uint_eq(r.texts, 1);
    ck_assert_uint_eq(r.images, 1);
    ck_assert_uint_eq(r.histograms, 1);
    char want[800];
    snprintf(want, sizeof want, "%s: stopped at byte %zu: a record of %zu bytes is cut short (5 bytes follow its header)\n",
             file, last, size - last - 16);
    ck_assert_str_eq(r.notes, want);

    /* A damaged record (one bit of its data flipped) stops the file there too. */
    buf[last + 12 + 3] ^= 0x10;
    spit(file, buf, size);
    ck_assert_int_eq(unlink(imported), 0);
    ck_assert_int_eq(gb_summary_import_tfevents(tf, imported, &r), GB_OK);
    ck_assert_uint_eq(r.histograms, 1);
    snprintf(want, sizeof want, "%s: stopped at byte %zu: the CRC of a record's %zu data bytes does not match\n",
             file, last, size - last - 16);
    ck_assert_str_eq(r.notes, want);
    free(buf);
}
END_TEST

/* Hand-encoded protocol buffer fields, for the older forms. */
static size_t varint(unsigned char *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n] = (unsigned char)(v & 0x7F);
        v >>= 7;
        if (v) p[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

static size_t fixed(unsigned char *p, const void *v, size_t n) {
    memcpy(p, v, n);
    return n;
}

START_TEST(test_older_forms_are_read) {
    /* Event{wall_time 5.5, step 3, summary{value{tag "acc", simple_value 0.75f},
     * value{tag "h", histo{min 1, max 2, num 3, sum 4.5, sum_squares 7.25,
     * bucket_limit [1.5, DBL_MAX] unpacked, bucket [1, 2] packed}}}} */
    unsigned char h[256], v1[64], v2[300], sum[400], ev[512];
    size_t hn = 0, n1 = 0, n2 = 0, sn = 0, en = 0;
    double d[] = {1, 2, 3, 4.5, 7.25};
    for (int i = 0; i < 5; i++) h[hn++] = (unsigned char)((i + 1) << 3 | 1), hn += fixed(h + hn, &d[i], 8);
    double lim[] = {1.5, DBL_MAX}, cnt[] = {1, 2};
    for (int i = 0; i < 2; i++) h[hn++] = 6 << 3 | 1, hn += fixed(h + hn, &lim[i], 8);
    h[hn++] = 7 << 3 | 2, h[hn++] = 16, hn += fixed(h + hn, cnt, 16);
    float acc = 0.75f;
    v1[n1++] = 1 << 3 | 2, v1[n1++] = 3, memcpy(v1 + n1, "acc", 3), n1 += 3;
    v1[n1++] = 2 << 3 | 5, n1 += fixed(v1 + n1, &acc, 4);
    v2[n2++] = 1 << 3 | 2, v2[n2++] = 1, v2[n2++] = 'h';
    v2[n2++] = 5 << 3 | 2, n2 += varint(v2 + n2, hn), memcpy(v2 + n2, h, hn), n2 += hn;
    sum[sn++] = 1 << 3 | 2, sn += varint(sum + sn, n1), memcpy(sum + sn, v1, n1), sn += n1;
    sum[sn++] = 1 << 3 | 2, sn += varint(sum + sn, n2), memcpy(sum + sn, v2, n2), sn += n2;
    double wall = 5.5;
    ev[en++] = 1 << 3 | 1, en += fixed(ev + en, &wall, 8);
    ev[en++] = 2 << 3 | 0, en += varint(ev + en, 3);
    ev[en++] = 5 << 3 | 2, en += varint(ev + en, sn), memcpy(ev + en, sum, sn), en += sn;

    gb_tf_event *e = malloc(sizeof *e);
    char why[160];
    ck_assert_msg(gb_tf_event_decode(ev, en, e, why, sizeof why), "%s", why);
    ck_assert(e->wall_time == 5.5 && e->step == 3 && e->nvalues == 2);
    ck_assert_int_eq(e->values[0].kind, GB_TF_SCALAR);
    ck_assert(e->values[0].scalar == 0.75);
    ck_assert_int_eq(e->values[1].kind, GB_TF_HISTOGRAM);
    double edges[GB_TF_MAX_BUCKETS + 1], counts[GB_TF_MAX_BUCKETS + 1];
    size_t k;
    ck_assert_msg(gb_tf_histogram_buckets(&e->values[1], edges, counts, &k, why, sizeof why), "%s", why);
    ck_assert_uint_eq(k, 2);
    /* The first bucket starts at min; DBL_MAX is held to max. */
    ck_assert(edges[0] == 1 && edges[1] == 1.5 && edges[2] == 2 && counts[0] == 1 && counts[1] == 2);
    /* Cut anywhere inside, the message is refused, never read past its end. */
    for (size_t cut = 1; cut < en; cut++) {
        bool ok = gb_tf_event_decode(ev, cut, e, why, sizeof why);
        if (!ok) ck_assert_str_ne(why, "");
    }
    free(e);
}
END_TEST

START_TEST(test_bad_import_arguments_are_named) {
    gb_tfevents_report r;
    ck_assert_int_eq(gb_summary_import_tfevents("/no/such/dir", db, &r), GB_ERR_IO);
    ck_assert_str_eq(gb_summary_last_error(), "gb_summary_import_tfevents: '/no/such/dir' is not a directory");
    ck_assert_int_eq(gb_summary_import_tfevents("", db, &r), GB_ERR_VALUE);
    ck_assert_str_eq(gb_summary_last_error(), "gb_summary_import_tfevents: the directory is NULL or empty");
    ck_assert_int_eq(gb_summary_import_tfevents_run("/tmp", "", db, &r), GB_ERR_VALUE);
    ck_assert_str_eq(gb_summary_last_error(), "gb_summary_import_tfevents_run: the run is NULL or empty");
    ck_assert_int_eq(gb_summary_import_tfevents_run("/no/such/dir", "train", db, &r), GB_ERR_IO);
    ck_assert_str_eq(gb_summary_last_error(),
                     "gb_summary_import_tfevents_run: '/no/such/dir' is not a directory");
}
END_TEST

int main(void) {
    Suite *s = suite_create("summary_tfevents");
    TCase *tc = tcase_create("tfevents");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_masked_crc_known_values);
    tcase_add_test(tc, test_round_trip_bit_for_bit);
    tcase_add_test(tc, test_torn_file_imports_everything_before_the_tear);
    tcase_add_test(tc, test_older_forms_are_read);
    tcase_add_test(tc, test_bad_import_arguments_are_named);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
