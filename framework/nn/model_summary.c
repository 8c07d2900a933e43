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
#include <stdlib.h>

#include "nn/functional_internal.h"

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

/* Row i of a plain module: the i-th submodule, or m itself when it has none. */
static void module_row(gb_module *m, int i, gb__summary_row *row) {
    gb_module *layer = gb_module_num_submodules(m) ? gb_module_submodule(m, i) : m;
    int64_t dims[GB_MAX_RANK];
    int rank = gb_module_output_shape(layer, dims);
    snprintf(row->name, sizeof row->name, "%s (%s)", gb_module_name(layer),
             gb_module_class_name(layer));
    if (rank >= 0)
        gb__nn_shape_text(rank, dims, row->shape, sizeof row->shape);
    else
        snprintf(row->shape, sizeof row->shape, "(unbuilt)");
    row->params = gb_module_count_params(layer);
    row->connected[0] = '\0';
}

static int num_rows(gb_module *m) {
    if (gb_is_functional(m)) return gb__functional_num_rows(m);
    int n = gb_module_num_submodules(m);
    return n ? n : 1;
}

static void row_at(gb_module *m, int i, gb__summary_row *row) {
    if (gb_is_functional(m))
        gb__functional_row(m, i, row);
    else
        module_row(m, i, row);
}

/* Keras' widths (27 and 25 of a 65-column table; functional models add
 * "Connected to"), widened so that long names and shapes keep the
 * columns aligned. */
typedef struct widths {
    int name, shape;
    bool connected;
} widths;

static void rule(FILE *out, char c, widths w) {
    int width = w.name + w.shape + 13 + (w.connected ? 25 : 0);
    for (int i = 0; i < width; i++) fputc(c, out);
    fputc('\n', out);
}

/* A row; each further connection of a shared layer on a line of its own
 * under the first, as Keras prints them. */
static void print_row(FILE *out, const gb__summary_row *row, widths w) {
    if (!w.connected) {
        fprintf(out, " %-*s %-*s %lld\n", w.name, row->name, w.shape, row->shape,
                (long long)row->params);
        return;
    }
    const char *c = row->connected;
    size_t len = strcspn(c, "\n");
    fprintf(out, " %-*s %-*s %-11lld %.*s\n", w.name, row->name, w.shape, row->shape,
            (long long)row->params, (int)len, c);
    for (c += len; *c == '\n'; c += len) {
        c++;
        len = strcspn(c, "\n");
        fprintf(out, " %-*s %-*s %-11s %.*s\n", w.name, "", w.shape, "", "", (int)len, c);
    }
}

static widths fit_widths(gb_module *m, const gb__summary_row *rows, int nrows) {
    widths w = {27, 25, gb_is_functional(m)};
    for (int i = 0; i < nrows; i++) {
        if ((int)strlen(rows[i].name) > w.name) w.name = (int)strlen(rows[i].name);
        if ((int)strlen(rows[i].shape) > w.shape) w.shape = (int)strlen(rows[i].shape);
    }
    return w;
}

static void print_table(gb_module *m, FILE *out, const gb__summary_row *rows, int nrows) {
    widths w = fit_widths(m, rows, nrows);
    int64_t total = gb_module_count_params(m), trainable = gb_module_count_trainable_params(m);
    char a[32], b[32], c[32];
    fprintf(out, "Model: \"%s\"\n", gb_module_name(m));
    rule(out, '_', w);
    if (w.connected)
        fprintf(out, " %-*s %-*s %-11s %s\n", w.name, "Layer (type)", w.shape, "Output Shape",
                "Param #", "Connected to");
    else
        fprintf(out, " %-*s %-*s %s\n", w.name, "Layer (type)", w.shape, "Output Shape",
                "Param #");
    rule(out, '=', w);
    for (int i = 0; i < nrows; i++) print_row(out, &rows[i], w);
    rule(out, '=', w);
    fprintf(out, "Total params: %s\nTrainable params: %s\nNon-trainable params: %s\n",
            with_commas(total, a, sizeof a), with_commas(trainable, b, sizeof b),
            with_commas(total - trainable, c, sizeof c));
    rule(out, '_', w);
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
    int nrows = num_rows(m);
    gb__summary_row *rows = malloc((size_t)nrows * sizeof *rows);
    if (!rows) {
        gb__nn_error(m, GB_ERR_MEMORY, "summary: out of memory");
        return false;
    }
    for (int i = 0; i < nrows; i++) row_at(m, i, &rows[i]);
    print_table(m, out, rows, nrows);
    free(rows);
    return true;
}
