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
 * most GB_TF_MAX_BUCKETS of them.
 */
#include <math.h>

#include "fuzz_target.h"
#include "gb_tfevents.h"

static bool inside(gb_tf_bytes b, const unsigned char *data, size_t size) {
    return !b.size || (b.data >= data && b.size <= size && b.data - data <= (ptrdiff_t)(size - b.size));
}

static double edges[GB_TF_MAX_BUCKETS + 1], counts[GB_TF_MAX_BUCKETS + 1];

static void check_event(const gb_tf_event *ev, const unsigned char *data, size_t size) {
    FUZZ_CHECK(ev->nvalues <= GB_TF_MAX_VALUES, "%zu values", ev->nvalues);
    FUZZ_CHECK(inside(ev->file_version, data, size), "file_version outside the record");
    for (size_t i = 0; i < ev->nvalues; i++) {
        const gb_tf_value *v = &ev->values[i];
        FUZZ_CHECK(v->kind >= GB_TF_SCALAR && v->kind <= GB_TF_OTHER, "kind %d", (int)v->kind);
        FUZZ_CHECK(inside(v->tag, data, size) && inside(v->plugin, data, size) &&
                       inside(v->image, data, size) && inside(v->text, data, size) &&
                       inside(v->hist, data, size),
                   "value %zu borrows bytes outside its record", i);
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
