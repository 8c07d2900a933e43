/* writer/attention.c — gb_summary_attention: what an attention layer looks
 * at, as one grayscale image per head on the Images page.
 *
 * The scores of one sample (MultiHeadAttention's return_attention_scores,
 * [heads, Tq, Tv], or [batch, heads, Tq, Tv] of which the first sample is
 * taken) become `heads` images of Tq rows (queries) by Tv columns (keys).
 * Softmax weights over a long context are small (1/Tv on average, and
 * under a causal mask the first query's single weight is 1 while the
 * last one's are 1/Tq), so each query's row is scaled by its own largest
 * weight: white is where that query looks most, black where it does not
 * look. One scale per head would leave every row but the first few black.
 * Absolute values are the Histograms' business.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "writer/internal.h"

static gb_status bad(gb_status st, const char *tag, const char *msg) {
    return gb__writer_fail(st, "gb_summary_attention", tag, msg);
}

/* The scores as shapes and checks: heads, tq, tv; GB_OK or the error. */
static gb_status check_scores(const char *tag, const gb_tensor *t, int64_t *heads, int64_t *tq,
                              int64_t *tv) {
    char msg[192], b[96];
    int rank = gb_rank(t);
    gb_dtype dt = gb_tensor_dtype(t);
    if (dt != GB_F32 && dt != GB_F64) {
        snprintf(msg, sizeof msg, "expected float32 or float64 scores, got %s", gb_dtype_name(dt));
        return bad(GB_ERR_DTYPE, tag, msg);
    }
    const int64_t *d = gb_shape(t);
    if ((rank != 3 && rank != 4) || (rank == 4 && d[0] < 1) || gb_size(t) == 0) {
        snprintf(msg, sizeof msg, "expected scores [heads, Tq, Tv] or [batch, heads, Tq, Tv], got %s",
                 gb_shape_str(t, b, sizeof b));
        return bad(GB_ERR_SHAPE, tag, msg);
    }
    *heads = d[rank - 3], *tq = d[rank - 2], *tv = d[rank - 1];
    return GB_OK;
}

/* Head h of the first sample into pixels (tq rows of tv), each row scaled
 * by its maximum; false when a weight is negative or not finite (its
 * index in *bad_at). */
static bool head_to_u8(const gb_tensor *t, int64_t h, int64_t tq, int64_t tv, uint8_t *px, int64_t *bad_at) {
    for (int64_t q = 0; q < tq; q++) {
        const int64_t row = (h * tq + q) * tv;
        double top = 0;
        for (int64_t k = 0; k < tv; k++) {
            double v = gb_get(t, row + k);
            if (!(v >= 0) || !isfinite(v)) {
                *bad_at = row + k;
                return false;
            }
            if (v > top) top = v;
        }
        for (int64_t k = 0; k < tv; k++)
            px[q * tv + k] = top > 0 ? (uint8_t)lround(255.0 * gb_get(t, row + k) / top) : 0;
    }
    return true;
}

gb_status gb_summary_attention(gb_summary_writer *w, const char *tag, const gb_tensor *scores,
                               int64_t step) {
    static const char what[] = "gb_summary_attention";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, scores);
    int64_t heads = 0, tq = 0, tv = 0;
    if (st == GB_OK) st = check_scores(tag, scores, &heads, &tq, &tv);
    if (st != GB_OK) return st;
    int64_t n = tq * tv;
    uint8_t *px = malloc((size_t)(heads * n));
    if (!px) return bad(GB_ERR_MEMORY, tag, "out of memory");
    for (int64_t h = 0; h < heads; h++) {
        int64_t at = 0;
        if (!head_to_u8(scores, h, tq, tv, px + h * n, &at)) {
            char msg[160];
            snprintf(msg, sizeof msg, "attention weights are >= 0 and finite; element %lld is %g",
                     (long long)at, gb_get(scores, at));
            free(px);
            return bad(GB_ERR_VALUE, tag, msg);
        }
    }
    gb_scope_begin();
    gb_tensor *img = gb_tensor_from(GB_U8, px, 4, (int64_t[]){heads, tq, tv, 1});
    free(px);
    st = img ? gb_summary_image(w, tag, img, (int)heads, step) : bad(GB_ERR_MEMORY, tag, "out of memory");
    gb_scope_end();
    return st;
}
