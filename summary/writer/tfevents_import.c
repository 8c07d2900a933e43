/* writer/tfevents_import.c — TensorBoard event files read into a store
 * (`glassbox import --tfevents DIR --db runs.db`), so runs written by
 * TensorFlow's tf.summary or PyTorch's SummaryWriter show on the board.
 *
 * Every events.out.tfevents.* file under DIR is read (records and
 * protocol buffers: store/gb_tfevents.h); its directory under DIR names
 * the run ("train", "lr_0.1/eval"; files in DIR itself: DIR's own name),
 * as TensorBoard names runs. Scalars, histograms, images, text, audio
 * (WAV) and PR curves keep their steps and wall times, and their values
 * as stored (a float32 simple_value as that float, a float64 tensor bit
 * for bit); the HParams plugin's experiment and sessions become the
 * store's own (tfevents_import_hparams.c). A file that ends in the middle
 * of a record (its writer killed, or still writing) or holds a damaged
 * record is read up to there, and the report says where it stopped and
 * why; what came before is imported.
 *
 * The store keeps how far each file was read (import_marks.c): importing
 * again reads each file on from there, so a growing file's new records
 * are added and none is stored twice; a file that no longer holds what
 * was read (cut shorter, or replaced) is named and left alone.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_tfevents.h"
#include "writer/internal.h"

#define MAX_DEPTH 32

typedef struct importer {
    const char *db;
    gb_tfevents_report *report;
    gb__import_marks marks;   /* how far earlier imports read each file */
    gb_tf_event *ev;
    double *edges, *counts;   /* a histogram's buckets */
    double *pr;               /* a PR curve's rows */
    gb_tf_hparams *hp;
    gb_status status;
} importer;

/* Appends a line to the report's notes (cut when they are full). */
__attribute__((format(printf, 2, 3))) static void note(gb_tfevents_report *r, const char *fmt, ...) {
    size_t n = strlen(r->notes);
    va_list ap;
    va_start(ap, fmt);
    if (n + 1 < sizeof r->notes) vsnprintf(r->notes + n, sizeof r->notes - n, fmt, ap);
    va_end(ap);
}

char *gb__tf_text(gb_tf_bytes b) {
    if (memchr(b.data, 0, b.size)) return NULL;
    char *s = malloc(b.size + 1);
    if (s) {
        memcpy(s, b.data, b.size);
        s[b.size] = '\0';
    }
    return s;
}

static gb_status import_value(importer *im, gb_summary_writer *w, const char *path,
                              const gb_tf_value *v, int64_t step, double wall) {
    gb_tfevents_report *r = im->report;
    char *tag = gb__tf_text(v->tag);
    if (!tag || !*tag) {
        free(tag);
        r->skipped++;
        return GB_OK;
    }
    gb_status st = GB_OK;
    char why[160];
    size_t buckets = 0;
    switch (v->kind) {
    case GB_TF_SCALAR:
        st = gb__writer_scalar_at(w, tag, v->scalar, step, wall);
        r->scalars += st == GB_OK;
        break;
    case GB_TF_HISTOGRAM:
        if (!gb_tf_histogram_buckets(v, im->edges, im->counts, &buckets, why, sizeof why)) {
            r->skipped++;
            break;
        }
        st = gb__writer_histogram_at(w, tag, step, wall, &(gb__histogram){
            .min = v->hist_v2 ? im->edges[0] : v->min, .max = v->hist_v2 ? im->edges[buckets] : v->max,
            .count = v->count, .sum = v->sum, .sum_squares = v->sum_squares,
            .bucket_count = (int)buckets, .edges = im->edges, .counts = im->counts});
        r->histograms += st == GB_OK;
        break;
    case GB_TF_IMAGE:
        st = gb__writer_png_at(w, tag, step, wall, v->image.data, v->image.size, (int)v->width,
                               (int)v->height, v->channels ? (int)v->channels : 3);
        r->images += st == GB_OK;
        break;
    case GB_TF_TEXT: {
        char *text = gb__tf_text(v->text);
        if (text) st = gb__writer_text_at(w, tag, text, step, wall);
        r->texts += text && st == GB_OK;
        r->skipped += !text;
        free(text);
        break;
    }
    case GB_TF_AUDIO:
        for (int64_t k = 0; st == GB_OK && k < v->clips; k++) {
            gb_tf_bytes clip;
            bool ok = gb_tf_audio_clip(v, k, &clip);
            st = ok ? gb__writer_wav_at(w, tag, step, wall, (int)k, clip.data, clip.size) : GB_OK;
            if (st == GB_ERR_VALUE || !ok) {   /* no WAV a browser plays: left out */
                r->skipped++;
                st = GB_OK;
            } else {
                r->audio += st == GB_OK;
            }
        }
        break;
    case GB_TF_PR_CURVE:
        if (!gb_tf_pr_counts(v, im->pr, why, sizeof why)) {
            r->skipped++;
            break;
        }
        st = gb__writer_pr_counts_at(w, tag, step, wall, (int)v->num_thresholds, im->pr);
        r->pr_curves += st == GB_OK;
        break;
    case GB_TF_HPARAMS:
        if (!gb_tf_hparams_decode(v->plugin_content, im->hp, why, sizeof why)) {
            r->skipped++;
            break;
        }
        st = gb__import_hparams(w, im->hp);
        if (st == GB_ERR_VALUE) {   /* a declaration glassbox refuses: said, and left out */
            note(r, "%s: the hparams record '%s' is left out: %s\n", path, tag, gb_summary_last_error());
            r->skipped++;
            st = GB_OK;
        } else {
            r->hparams += st == GB_OK;
        }
        break;
    default:
        r->skipped++;
    }
    free(tag);
    return st;
}

/* v2 histograms carry buckets only: the statistics come from them. */
static void histogram_stats(importer *im, gb_tf_value *v) {
    if (v->kind != GB_TF_HISTOGRAM || !v->hist_v2) return;
    size_t k;
    char why[160];
    if (!gb_tf_histogram_buckets(v, im->edges, im->counts, &k, why, sizeof why)) return;
    v->count = v->sum = v->sum_squares = 0;
    for (size_t b = 0; b < k; b++) {
        double mid = (im->edges[b] + im->edges[b + 1]) / 2;
        v->count += im->counts[b];
        v->sum += im->counts[b] * mid;
        v->sum_squares += im->counts[b] * mid * mid;
    }
}

/* The bytes of the file at path from offset `base` on (*size of them;
 * none when it is shorter) and its whole size; NULL when it cannot be read. */
static unsigned char *read_from(const char *path, int64_t base, size_t *size, int64_t *file_size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    unsigned char *buf = NULL;
    struct stat st;
    if (!fstat(fd, &st) && st.st_size >= 0) {
        *file_size = st.st_size;
        size_t want = st.st_size > base ? (size_t)(st.st_size - base) : 0;
        buf = malloc(want + 1);
        ssize_t got = 0;
        for (*size = 0; buf && *size < want; *size += (size_t)got)
            if ((got = pread(fd, buf + *size, want - *size, (off_t)(base + (int64_t)*size))) <= 0) break;
    }
    close(fd);
    return buf;
}

static uint32_t le32(const unsigned char *p) {
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether the file still holds what an earlier import read up to
 * mark->bytes_read: at least that long, with the same last four bytes
 * there (buf holds the file from bytes_read - 4). A mark short of one
 * record's framing was never written by an import: no file matches it. */
static bool same_file(const gb__import_row *mark, const unsigned char *buf, int64_t file_size) {
    return mark->bytes_read >= 16 && file_size >= mark->bytes_read && le32(buf) == mark->tail;
}

/* Opens run's writer. Opening says "running" and closing "done": a run
 * read on from an earlier import keeps the end its sessions gave it
 * (failed, killed) unless the new records say otherwise. */
static bool open_run(importer *im, const char *run, const gb__import_row *mark, gb_summary_writer **w) {
    if (gb_summary_writer_open(im->db, run, NULL, w) != GB_OK) {
        im->status = GB_ERR_IO;
        return false;
    }
    if (mark && (mark->failed || mark->killed))
        im->status = gb_summary_run_status(*w, mark->failed ? GB_RUN_FAILED : GB_RUN_KILLED);
    return im->status == GB_OK;
}

/* Imports the records of the file at path (named name in its directory)
 * that follow what an earlier import into this store read of it. Its run's
 * writer opens at the first new record, so a file with nothing new costs a
 * read and no write. */
static void import_file(importer *im, const char *path, const char *name, const char *run) {
    gb_tfevents_report *r = im->report;
    const gb__import_row *mark = gb__import_marks_find(&im->marks, run, name);
    int64_t from = mark ? mark->bytes_read : 0, base = from >= 4 ? from - 4 : 0, file_size = 0;
    size_t size = 0, at = (size_t)(from - base), n;
    unsigned char *buf = read_from(path, base, &size, &file_size);
    if (!buf) {
        note(r, "%s: cannot be read\n", path);
        return;
    }
    r->files++;
    if (mark && !same_file(mark, buf, file_size)) {
        note(r, "%s: not the file imported into run '%s' before (%s); not read again: import "
                "into a new store to read it whole\n", path, run,
             file_size < from ? "it is shorter than what was read" : "its bytes differ");
        r->changed++;
        free(buf);
        return;
    }
    r->resumed += from > 0;
    gb_summary_writer *w = NULL;
    const unsigned char *data;
    char why[256];
    gb_tf_status ts;
    while ((ts = gb_tf_record_next(buf, size, &at, &data, &n, why, sizeof why)) == GB_TF_OK) {
        if (!gb_tf_event_decode(data, n, im->ev, why, sizeof why)) {
            note(r, "%s: stopped at byte %lld: %s\n", path, (long long)(base + (int64_t)(at - n - 16)), why);
            break;
        }
        if (!w && !open_run(im, run, mark, &w)) break;
        r->events++;
        for (size_t i = 0; i < im->ev->nvalues && im->status == GB_OK; i++) {
            histogram_stats(im, &im->ev->values[i]);
            im->status = import_value(im, w, path, &im->ev->values[i], im->ev->step, im->ev->wall_time);
        }
        if (im->status == GB_OK)
            im->status = gb__writer_import_mark(w, name, base + (int64_t)at, le32(buf + at - 4));
        if (im->status != GB_OK) break;
    }
    if (ts == GB_TF_TORN || ts == GB_TF_CORRUPT)
        note(r, "%s: stopped at byte %lld: %s\n", path, (long long)(base + (int64_t)at), why);
    if (w && gb_summary_writer_close(w) != GB_OK && im->status == GB_OK) im->status = GB_ERR_IO;
    free(buf);
}

static bool is_event_file(const char *name) { return strstr(name, "tfevents") != NULL; }

/* Walks dir: its event files into run, its subdirectories (down to
 * `depth` MAX_DEPTH; none when flat) into runs named by their path. */
static void walk(importer *im, const char *dir, const char *run, int depth, bool flat) {
    DIR *d = opendir(dir);
    if (!d || depth > MAX_DEPTH) {
        if (d) closedir(d);
        return;
    }
    /* Sorted, so a run's files (restarts) are read in the order they were written. */
    struct dirent **names = NULL;
    closedir(d);
    int count = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        char path[4096], sub[4096];
        struct stat st;
        bool fits = name[0] != '.' &&
                    (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path &&
                    (size_t)snprintf(sub, sizeof sub, "%s/%s", run, name) < sizeof sub;
        if (fits && im->status == GB_OK && !lstat(path, &st)) {
            if (S_ISDIR(st.st_mode) && !flat) walk(im, path, depth ? sub : name, depth + 1, false);
            else if (S_ISREG(st.st_mode) && is_event_file(name)) import_file(im, path, name, run);
        }
        free(names[i]);
    }
    free(names);
}

/* Imports dir into db: as one run `run` of its own files, or (run NULL)
 * every run below it. */
static gb_status import_dir(const char *what, const char *dir, const char *run, const char *db,
                            gb_tfevents_report *report) {
    if (!dir || !*dir || !db || !*db || !report || (run && !*run)) {
        gb__summary_fail("%s: %s is NULL or empty", what,
                         !dir || !*dir ? "the directory" : !db || !*db ? "the store"
                                                       : !report     ? "report"
                                                                     : "the run");
        return GB_ERR_VALUE;
    }
    *report = (gb_tfevents_report){0};
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        gb__summary_fail("%s: '%s' is not a directory", what, dir);
        return GB_ERR_IO;
    }
    importer im = {db, report, {0}, malloc(sizeof(gb_tf_event)),
                   malloc((GB_TF_MAX_BUCKETS + 1) * sizeof(double)),
                   malloc((GB_TF_MAX_BUCKETS + 1) * sizeof(double)),
                   malloc(6 * GB_TF_MAX_THRESHOLDS * sizeof(double)), malloc(sizeof(gb_tf_hparams)),
                   GB_OK};
    if (!im.ev || !im.edges || !im.counts || !im.pr || !im.hp) {
        gb__summary_fail("%s: out of memory", what);
        im.status = GB_ERR_MEMORY;
    } else if (!gb__import_marks_load(what, db, &im.marks)) {
        im.status = GB_ERR_IO;
    } else {
        /* Files in dir itself form the run named after dir. */
        char root[4096];
        snprintf(root, sizeof root, "%s", dir);
        size_t n = strlen(root);
        while (n > 1 && root[n - 1] == '/') root[--n] = '\0';
        const char *base = strrchr(root, '/');
        walk(&im, root, run ? run : base && base[1] ? base + 1 : root, 0, run != NULL);
    }
    gb__import_marks_free(&im.marks);
    free(im.ev);
    free(im.edges);
    free(im.counts);
    free(im.pr);
    free(im.hp);
    return im.status;
}

gb_status gb_summary_import_tfevents(const char *dir, const char *db, gb_tfevents_report *report) {
    return import_dir("gb_summary_import_tfevents", dir, NULL, db, report);
}

gb_status gb_summary_import_tfevents_run(const char *dir, const char *run, const char *db,
                                         gb_tfevents_report *report) {
    return import_dir("gb_summary_import_tfevents_run", dir, run, db, report);
}
