/* nn/model_summary.c — model.summary(): a Keras-like table of a module's layers.
 *
 *   Model: "sequential"
 *   _________________________________________________________________
 *    Layer (type)                Output Shape              Param #
 *   =================================================================
 *    dense (Dense)               (None, 128)               100480
 *    dense_1 (Dense)             (None, 10)                1290
 *   =================================================================
 *   Total params: 101,770
 *   Trainable params: 101,770
 *   Non-trainable params: 0
 *   _________________________________________________________________
 *
 * Output shapes are the ones recorded at build, with the batch as None;
 * columns widen for long names.
 */
#include <stdio.h>

#include "nn/internal.h"

const char *gb__nn_shape_text(int rank, const int64_t *dims, char *buf, size_t n) {
    size_t used = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < rank && used < n; i++) {
        char d[24];
        if (dims[i] < 0)
            snprintf(d, sizeof d, "None");
        else
            snprintf(d, sizeof d, "%lld", (long long)dims[i]);
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", d);
    }
    if (used < n) snprintf(buf + used, n - used, rank == 1 ? ",)" : ")");
    return buf;
}

/* 101770 -> "101,770". */
static const char *with_commas(int64_t v, char *buf, size_t n) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%lld", (long long)(v < 0 ? -v : v));
    size_t o = 0;
    if (v < 0 && o + 1 < n) buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0 && o + 1 < n) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* The two text cells of a row: "name (Class)" and the output shape. */
static void row_cells(gb_module *layer, char *name, size_t nn, char *shape, size_t ns) {
    int64_t dims[GB_MAX_RANK];
    int rank = gb_module_output_shape(layer, dims);
    snprintf(name, nn, "%s (%s)", gb_module_name(layer), gb_module_class_name(layer));
    if (rank >= 0)
        gb__nn_shape_text(rank, dims, shape, ns);
    else
        snprintf(shape, ns, "(unbuilt)");
}

/* Keras' widths (27 and 25 of a 65-column table), widened so that long
 * names and shapes keep the columns aligned. */
typedef struct widths {
    int name, shape;
} widths;

static void rule(FILE *out, char c, widths w) {
    for (int i = 0; i < w.name + w.shape + 13; i++) fputc(c, out);
    fputc('\n', out);
}

static void print_row(FILE *out, gb_module *layer, widths w) {
    char name[160], shape[160];
    row_cells(layer, name, sizeof name, shape, sizeof shape);
    fprintf(out, " %-*s %-*s %lld\n", w.name, name, w.shape, shape,
            (long long)gb_module_count_params(layer));
}

/* Row i: the i-th submodule, or m itself when it has none. */
static gb_module *row_at(gb_module *m, int i) {
    return gb_module_num_submodules(m) ? gb_module_submodule(m, i) : m;
}

static widths fit_widths(gb_module *m, int nrows) {
    widths w = {27, 25};
    for (int i = 0; i < nrows; i++) {
        char name[160], shape[160];
        row_cells(row_at(m, i), name, sizeof name, shape, sizeof shape);
        if ((int)strlen(name) > w.name) w.name = (int)strlen(name);
        if ((int)strlen(shape) > w.shape) w.shape = (int)strlen(shape);
    }
    return w;
}

bool gb_module_summary(gb_module *m, FILE *out) {
    if (!m || !out) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_summary: NULL %s", m ? "stream" : "module");
        return false;
    }
    int64_t dims[GB_MAX_RANK];
    if (gb_module_output_shape(m, dims) < 0) {
        gb__nn_error(m, GB_ERR_STATE,
                     "summary: the model has not been built yet; call it on a batch or use "
                     "gb_module_build() with an input shape first");
        return false;
    }
    int n = gb_module_num_submodules(m), nrows = n ? n : 1;
    widths w = fit_widths(m, nrows);
    int64_t total = gb_module_count_params(m), trainable = gb_module_count_trainable_params(m);
    char a[32], b[32], c[32];
    fprintf(out, "Model: \"%s\"\n", gb_module_name(m));
    rule(out, '_', w);
    fprintf(out, " %-*s %-*s %s\n", w.name, "Layer (type)", w.shape, "Output Shape", "Param #");
    rule(out, '=', w);
    for (int i = 0; i < nrows; i++) print_row(out, row_at(m, i), w);
    rule(out, '=', w);
    fprintf(out, "Total params: %s\nTrainable params: %s\nNon-trainable params: %s\n",
            with_commas(total, a, sizeof a), with_commas(trainable, b, sizeof b),
            with_commas(total - trainable, c, sizeof c));
    rule(out, '_', w);
    return true;
}
