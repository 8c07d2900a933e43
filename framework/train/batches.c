/* train/batches.c — cutting arrays into batches for fit, evaluate and
 * predict: rows by range or by a shuffled index (the order is the data
 * layer's shuffle), and each sample's weight from class_weight and
 * sample_weight.
 */
#include <math.h>
#include <stdlib.h>

#include "core/internal.h"
#include "train/internal.h"

int64_t gb__num_samples(gb_tensor *t) { return t && gb_rank(t) >= 1 ? gb_dim(t, 0) : -1; }

gb_tensor *gb__rows(gb_tensor *t, int64_t begin, int64_t n) {
    int64_t b[GB_MAX_RANK] = {begin}, size[GB_MAX_RANK];
    for (int i = 0; i < GB_MAX_RANK; i++) size[i] = i ? -1 : n;
    return gb_slice(t, b, gb_rank(t), size, gb_rank(t));
}

gb_tensor *gb__gather_rows(gb_tensor *t, const int64_t *idx, int64_t n) {
    return gb_gather(t, gb_tensor_from(GB_I64, idx, 1, &n), 0);
}

/* Sample i's class: its label, or the argmax of a one-hot row (Keras). */
static int64_t class_of(gb_tensor *y, const double *yv, int64_t i) {
    if (gb_rank(y) < 2 || gb_dim(y, 1) == 1) return (int64_t)yv[i];
    int64_t c = gb_dim(y, 1), best = 0;
    for (int64_t k = 1; k < c; k++)
        if (yv[i * c + k] > yv[i * c + best]) best = k;
    return best;
}

static bool apply_class_weight(float *w, gb_tensor *y, const double *cw, int nclass, int64_t n) {
    double *yv = malloc((size_t)(gb_size(y) ? gb_size(y) : 1) * sizeof *yv);
    if (!yv) {
        gb__error(GB_ERR_MEMORY, NULL, "fit: out of memory for class weights");
        return false;
    }
    gb_to_f64(y, yv);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t k = class_of(y, yv, i);
        if (k < 0 || k >= nclass || (gb_rank(y) < 2 && yv[i] != floor(yv[i]))) {
            gb__error(GB_ERR_VALUE, NULL,
                      "fit: class_weight has %d classes but sample %lld is labelled %g; give a "
                      "weight for every class",
                      nclass, (long long)i, gb_rank(y) < 2 ? yv[i] : (double)k);
            ok = false;
        } else {
            w[i] *= (float)cw[k];
        }
    }
    free(yv);
    return ok;
}

static bool apply_sample_weight(float *w, gb_tensor *sw, int64_t n) {
    bool column = gb_rank(sw) == 2 && gb_dim(sw, 1) == 1;
    if (!(gb_rank(sw) == 1 || column) || gb_dim(sw, 0) != n) {
        char b[64];
        gb__error(GB_ERR_SHAPE, NULL, "fit: sample_weight must be [%lld] (one per sample), got %s",
                  (long long)n, gb_shape_str(sw, b, sizeof b));
        return false;
    }
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v) {
        gb__error(GB_ERR_MEMORY, NULL, "fit: out of memory for sample weights");
        return false;
    }
    gb_to_f64(sw, v);
    for (int64_t i = 0; i < n; i++) w[i] *= (float)v[i];
    free(v);
    return true;
}

gb_tensor *gb__sample_weights(gb_tensor *y, const double *class_weight, int nclass,
                              gb_tensor *sample_weight, int64_t n) {
    if (!class_weight && !sample_weight) return NULL;
    float *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    if (!w) {
        gb__error(GB_ERR_MEMORY, NULL, "fit: out of memory for sample weights");
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) w[i] = 1.0f;
    bool ok = (!class_weight || apply_class_weight(w, y, class_weight, nclass, n)) &&
              (!sample_weight || apply_sample_weight(w, sample_weight, n));
    gb_tensor *t = ok ? gb_from_f32(w, 1, &n) : NULL;
    free(w);
    return t;
}
