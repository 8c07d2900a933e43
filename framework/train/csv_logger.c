/* train/csv_logger.c — CSVLogger: each epoch's logs as a row of a CSV
 * file, as keras.callbacks.CSVLogger writes them, so the tools people
 * already point at Keras' training.log read ours.
 *
 * Keras' rules: the columns are "epoch" (0-based) and the keys of the
 * first epoch's logs, sorted, fixed for the run; a key missing in a later
 * epoch is written as NA. Without append the file is rewritten at the
 * start of training; with append rows are added, and the header only
 * when the file is absent or its first line empty, so a resumed run
 * continues one table. Numbers are written as Python writes floats (the
 * shortest text that reads back the same, "1.0" not "1"). Each row is
 * flushed, so a crashed run keeps every finished epoch. Lines end in
 * "\n" (Python's csv module writes "\r\n"; every CSV reader takes both). A file that
 * cannot be opened or written is a GB_ERR_IO error, which stops fit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/internal.h"

typedef struct csv_logger {
    char *path;
    char sep;
    bool append;
    FILE *f;
    bool header;      /* write the header before the first row */
    int nkeys;        /* -1: not chosen yet (before the first epoch's end) */
    char keys[GB_LOGS_MAX][GB_LOGS_KEY_BYTES];
} csv_logger;

static csv_logger *state(gb_callback *cb) { return gb_callback_state(cb); }

static void io_error(const csv_logger *l, const char *what) {
    gb__error(GB_ERR_IO, NULL, "CSVLogger: %s: cannot %s: %s", l->path, what, strerror(errno));
}

static void close_file(csv_logger *l) {
    if (l->f && fclose(l->f) != 0) io_error(l, "close");
    l->f = NULL;
}

/* Does the file exist with a non-empty first line (a header to keep)? */
static bool has_first_line(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    int c = fgetc(f);
    fclose(f);
    return c != EOF && c != '\n' && c != '\r';
}

static void cl_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)logs;
    csv_logger *l = state(cb);
    close_file(l);
    if (s->rank != 0) return;   /* a distributed fit: rank 0 writes the file */
    l->header = !(l->append && has_first_line(l->path));
    l->nkeys = -1;
    l->f = fopen(l->path, l->append ? "a" : "w");
    if (!l->f) io_error(l, "open for writing");
}

/* A field, quoted as Python's csv module quotes (minimal quoting). */
static void put_field(FILE *f, char sep, const char *text) {
    if (!strchr(text, sep) && !strpbrk(text, "\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *p = text; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

/* v as Python's repr(float): the shortest %g text that reads back as v,
 * with ".0" when it would look like an integer. */
static void format_number(double v, char *buf, size_t n) {
    if (isnan(v)) {
        snprintf(buf, n, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".e")) snprintf(buf + strlen(buf), n - strlen(buf), ".0");
}

static int by_key(const void *a, const void *b) { return strcmp(a, b); }

static void cl_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)s;
    csv_logger *l = state(cb);
    if (!l->f) return;
    if (l->nkeys < 0) {
        l->nkeys = logs ? logs->n : 0;
        for (int i = 0; i < l->nkeys; i++) memcpy(l->keys[i], logs->key[i], GB_LOGS_KEY_BYTES);
        qsort(l->keys, (size_t)l->nkeys, sizeof l->keys[0], by_key);
    }
    if (l->header) {
        put_field(l->f, l->sep, "epoch");
        for (int i = 0; i < l->nkeys; i++) {
            fputc(l->sep, l->f);
            put_field(l->f, l->sep, l->keys[i]);
        }
        fputc('\n', l->f);
        l->header = false;
    }
    fprintf(l->f, "%d", epoch);
    for (int i = 0; i < l->nkeys; i++) {
        char num[32];
        if (gb_logs_has(logs, l->keys[i])) format_number(gb_logs_get(logs, l->keys[i]), num, sizeof num);
        else snprintf(num, sizeof num, "NA");
        fputc(l->sep, l->f);
        fputs(num, l->f);
    }
    fputc('\n', l->f);
    if (fflush(l->f) != 0 || ferror(l->f)) io_error(l, "write");
}

static void cl_train_end(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)s, (void)logs;
    close_file(state(cb));
}

static void cl_free(gb_callback *cb) {
    csv_logger *l = state(cb);
    if (l->f) fclose(l->f);   /* fit ended by an error: no train_end */
    free(l->path);
}

static const gb_callback_type CSV_LOGGER = {
    .name = "CSVLogger",
    .state_size = sizeof(csv_logger),
    .on_train_begin = cl_train_begin,
    .on_epoch_end = cl_epoch_end,
    .on_train_end = cl_train_end,
    .free = cl_free,
};

gb_callback *gb_csv_logger(const char *filename, char separator, bool append) {
    const char *why = !filename || !filename[0] ? "the file name is empty"
                      : separator == '"' || separator == '\n' || separator == '\r'
                          ? "the separator cannot be a quote or a line break"
                          : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "gb_csv_logger: %s", why);
        return NULL;
    }
    gb_callback *cb = gb_callback_new(&CSV_LOGGER);
    if (!cb) return NULL;
    csv_logger *l = state(cb);
    l->path = strdup(filename);
    if (!l->path) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_csv_logger: out of memory");
        gb_callback_free(cb);
        return NULL;
    }
    l->sep = separator ? separator : ',';
    l->append = append;
    l->nkeys = -1;
    return cb;
}
