/* train/backup_and_restore.c — BackupAndRestore (keras.callbacks.
 * BackupAndRestore): fault tolerance for fit. A run killed part way
 * (a preempted machine, SIGKILL) and started again with the same
 * callback continues where the last backup was taken and ends with the
 * weights an uninterrupted run has, bit for bit.
 *
 * The backup is one file, "<backup_dir>/backup.ckpt", written atomically
 * (io's temp file, fsync, rename), so a kill during a save leaves the
 * previous backup whole. It is a checkpoint of the model ("model/...")
 * and the optimizer ("optimizer/...": slots and iterations) with fit's
 * position beside them — one int64 scalar per field of gb__fit_position
 * ("fit/epoch": the epoch to continue, "fit/batch": its batches done,
 * "fit/pass", "fit/position", "fit/seed": the stream of batches and its
 * shuffle, "fit/samples", "fit/batch_size", "fit/steps": which run it
 * is) — "fit/metrics", the compiled metrics' states, so an epoch
 * resumed part way also logs what the uninterrupted one logs, and
 * "fit/learning_rate" (float64), the optimizer's rate then: a callback
 * may have changed it (ReduceLROnPlateau), and a constant rate is put
 * back as it was (a schedule follows the restored iterations anyway).
 *
 * Keras resumes at the start of the epoch of the last backup (training
 * that epoch's first batches twice); here the batch is kept too. Saves
 * come at each epoch's end (save_freq 0, "epoch") or after every
 * save_freq batches, counted across epochs as Keras counts them. At the
 * start of fit an existing backup is restored all or nothing (another
 * model's backup is an error and changes nothing); at the end the backup
 * is deleted, with its folder when that is left empty, unless
 * keep_checkpoint. A fit that fails keeps it, for the next attempt.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "train/internal.h"

enum { PATH_BYTES = 512 };

typedef struct backup {
    char dir[PATH_BYTES], path[PATH_BYTES];
    int64_t save_freq;        /* 0: at each epoch's end */
    bool keep;
    int64_t since_save;       /* batches trained since the last save */
} backup;

/* The entries of fit's position, one per field. */
static const struct {
    const char *path;
    size_t offset;
} FIELDS[] = {
    {"fit/epoch", offsetof(gb__fit_position, epoch)},
    {"fit/batch", offsetof(gb__fit_position, batch)},
    {"fit/pass", offsetof(gb__fit_position, pass)},
    {"fit/position", offsetof(gb__fit_position, pos)},
    {"fit/seed", offsetof(gb__fit_position, seed)},
    {"fit/samples", offsetof(gb__fit_position, samples)},
    {"fit/batch_size", offsetof(gb__fit_position, batch_size)},
    {"fit/steps", offsetof(gb__fit_position, steps)},
};
enum { NFIELDS = sizeof FIELDS / sizeof *FIELDS, NENTRIES = NFIELDS + 2 };
static const char *const METRICS = "fit/metrics", *const RATE = "fit/learning_rate";
_Static_assert(sizeof(gb__fit_position) == NFIELDS * sizeof(int64_t),
               "every field of gb__fit_position has an entry");

/* ---- saving ------------------------------------------------------------------------------- */

static bool save(backup *b, gb_train_state *s, gb__fit_position at) {
    gb__compiled *c = s->compiled;
    size_t n = gb__metrics_state_size(c);
    unsigned char *metrics = malloc(n ? n : 1);
    if (!metrics) {
        gb__error(GB_ERR_MEMORY, NULL, "BackupAndRestore: out of memory");
        return false;
    }
    gb__metrics_state_get(c, metrics);
    gb__ckpt_entry e[NENTRIES] = {0};
    for (int i = 0; i < NFIELDS; i++) {
        snprintf(e[i].path, sizeof e[i].path, "%s", FIELDS[i].path);
        e[i].dtype = GB_I64;
        e[i].data = (const char *)&at + FIELDS[i].offset;
        e[i].nbytes = sizeof(int64_t);
    }
    e[NFIELDS] = (gb__ckpt_entry){.dtype = GB_U8, .rank = 1, .dims = {(int64_t)n}, .data = metrics,
                                  .nbytes = n};
    snprintf(e[NFIELDS].path, sizeof e[NFIELDS].path, "%s", METRICS);
    double rate = gb_optimizer_learning_rate(s->optimizer);
    e[NFIELDS + 1] = (gb__ckpt_entry){.dtype = GB_F64, .data = &rate, .nbytes = sizeof rate};
    snprintf(e[NFIELDS + 1].path, sizeof e[NFIELDS + 1].path, "%s", RATE);
    bool ok = gb__state_write(s->model, s->optimizer, b->path, e, NENTRIES);
    free(metrics);
    b->since_save = 0;
    return ok;
}

static void bar_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)batch, (void)logs;
    backup *b = gb_callback_state(cb);
    gb__compiled *c = s->compiled;
    if (b->save_freq > 0 && ++b->since_save >= b->save_freq) save(b, s, c->at);
}

static void bar_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)epoch, (void)logs;
    backup *b = gb_callback_state(cb);
    gb__compiled *c = s->compiled;
    if (b->save_freq > 0) return;
    gb__fit_position next = c->at;   /* the epoch is done: continue with the next one */
    next.epoch++;
    next.batch = 0;
    save(b, s, next);
}

/* ---- restoring ------------------------------------------------------------------------------ */

/* mkdir -p dir. */
static bool make_dir(const char *dir) {
    char p[PATH_BYTES];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) break;
        *q = '/';
    }
    if (mkdir(p, 0777) == 0 || errno == EEXIST) return true;
    gb__error(GB_ERR_IO, NULL, "BackupAndRestore: cannot make the backup folder '%s': %s", dir,
              strerror(errno));
    return false;
}

/* A backup's own entries: fit's position, the metric states, the rate. */
typedef struct saved {
    gb__fit_position at;
    const void *metrics;
    size_t nmetrics;
    double rate;
} saved;

/* f's own entries into *sv, checked against this run (c) before anything
 * is restored; false with an error naming the file. */
static bool read_saved(const gb__ckpt_file *f, gb__compiled *c, saved *sv) {
    for (int i = 0; i < NFIELDS; i++) {
        const void *v = gb__state_entry(f, FIELDS[i].path, GB_I64, 0, NULL);
        if (!v) return false;
        memcpy((char *)&sv->at + FIELDS[i].offset, v, sizeof(int64_t));
    }
    const char *before = gb__error_context(f->path);
    bool fits = gb__fit_resumable(&c->at, &sv->at);
    gb__error_context(before);
    const void *rate = NULL;
    if (!fits || !(sv->metrics = gb__state_entry(f, METRICS, GB_U8, 1, &sv->nmetrics)) ||
        !(rate = gb__state_entry(f, RATE, GB_F64, 0, NULL)))
        return false;
    memcpy(&sv->rate, rate, sizeof sv->rate);
    if (!(sv->rate >= 0 && sv->rate < INFINITY)) {
        gb__error(GB_ERR_IO, NULL, "%s: '%s' is %g, not a learning rate", f->path, RATE, sv->rate);
        return false;
    }
    if (sv->nmetrics == gb__metrics_state_size(c)) return true;
    gb__error(GB_ERR_VALUE, NULL,
              "%s: the saved metric states take %zu bytes but this model's take %zu; was it "
              "compiled with other metrics?",
              f->path, sv->nmetrics, gb__metrics_state_size(c));
    return false;
}

/* The backup f into the model, the optimizer and fit's resume point,
 * all or nothing. */
static bool restore(gb_train_state *s, const gb__ckpt_file *f) {
    gb__compiled *c = s->compiled;
    saved sv = {0};
    if (!read_saved(f, c, &sv)) return false;
    unsigned char *metrics = malloc(sv.nmetrics ? sv.nmetrics : 1);
    const char *own[NENTRIES];
    for (int i = 0; i < NFIELDS; i++) own[i] = FIELDS[i].path;
    own[NFIELDS] = METRICS;
    own[NFIELDS + 1] = RATE;
    if (!metrics) gb__error(GB_ERR_MEMORY, NULL, "BackupAndRestore: out of memory");
    if (!metrics || !gb__state_restore(s->model, s->optimizer, f, own, NENTRIES)) {
        free(metrics);
        return false;
    }
    if (gb_optimizer_schedule(s->optimizer)->kind == GB_LR_CONSTANT)
        gb_optimizer_set_learning_rate(s->optimizer, sv.rate);
    if (sv.nmetrics) memcpy(metrics, sv.metrics, sv.nmetrics);
    free(c->resume.metrics);
    c->resume = (gb__resume){.pending = true, .at = sv.at, .metrics = metrics, .nmetrics = sv.nmetrics};
    return true;
}

static void bar_train_begin(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)logs;
    backup *b = gb_callback_state(cb);
    b->since_save = 0;
    if (!make_dir(b->dir) || access(b->path, F_OK) != 0) return;   /* nothing to restore */
    gb__ckpt_file f;
    if (!gb__ckpt_read(b->path, &f)) return;
    restore(s, &f);
    gb__ckpt_close(&f);
}

static void bar_train_end(gb_callback *cb, gb_train_state *s, gb_logs *logs) {
    (void)s, (void)logs;
    backup *b = gb_callback_state(cb);
    if (b->keep) return;
    if (unlink(b->path) != 0 && errno != ENOENT)
        gb__warn("BackupAndRestore: cannot delete the backup '%s': %s", b->path, strerror(errno));
    rmdir(b->dir);   /* only when empty: other files there are not ours */
}

static const gb_callback_type BACKUP_AND_RESTORE = {
    .name = "BackupAndRestore",
    .state_size = sizeof(backup),
    .on_train_begin = bar_train_begin,
    .on_train_end = bar_train_end,
    .on_epoch_end = bar_epoch_end,
    .on_batch_end = bar_batch_end,
};

gb_callback *gb_backup_and_restore(const gb_backup_and_restore_options *o) {
    static const char *const WHO = "gb_backup_and_restore";
    const char *why = !o || !o->backup_dir || !o->backup_dir[0] ? "a backup_dir is required"
                      : strlen(o->backup_dir) >= PATH_BYTES - 16 ? "the backup_dir is too long"
                      : o->save_freq < 0 ? "save_freq must be 0 (each epoch) or a number of batches"
                                         : NULL;
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s", WHO, why);
        return NULL;
    }
    gb_callback *cb = gb_callback_new(&BACKUP_AND_RESTORE);
    if (!cb) return NULL;
    backup *b = gb_callback_state(cb);
    snprintf(b->dir, sizeof b->dir, "%s", o->backup_dir);
    snprintf(b->path, sizeof b->path, "%s/backup.ckpt", o->backup_dir);
    b->save_freq = o->save_freq;
    b->keep = o->keep_checkpoint;
    return cb;
}

const char *gb_backup_and_restore_path(gb_callback *cb) {
    return cb && cb->type == &BACKUP_AND_RESTORE ? ((backup *)gb_callback_state(cb))->path : "";
}
