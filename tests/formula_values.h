/* formula_values.h — weights and inputs filled by one formula, so that a
 * Python script computing the same layer in PyTorch (scripts/rnn_reference.py,
 * scripts/mha_reference.py) fills the very same numbers: element (i, j) of
 * the matrix of seed s is 0.5 sin(s + 0.37 i + 0.71 j). Header-only. */
#ifndef GB_TEST_FORMULA_VALUES_H
#define GB_TEST_FORMULA_VALUES_H

#include <math.h>
#include <stdlib.h>

#include "glassbox.h"

static inline double formula_value(int seed, int64_t i, int64_t j) {
    return 0.5 * sin(seed + 0.37 * (double)i + 0.71 * (double)j);
}

/* A float64 [rows, cols] of formula_value(seed, i, j). */
static inline gb_tensor *formula_matrix(int seed, int64_t rows, int64_t cols) {
    double *v = malloc((size_t)(rows * cols) * sizeof *v);
    if (!v) return NULL;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) v[i * cols + j] = formula_value(seed, i, j);
    gb_tensor *t = gb_from_f64(v, 2, (int64_t[]){rows, cols});
    free(v);
    return t;
}

#endif
