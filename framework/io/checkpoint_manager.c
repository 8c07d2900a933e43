/* io/checkpoint_manager.c — tf.train.CheckpointManager: numbered
 * checkpoints of one gb_checkpoint in a directory, the last max_to_keep of
 * them kept (and one every keep_checkpoint_every_n_hours for good), the
 * newest restored at start-up or the objects left as they are.
 *
 * A save writes "<dir>/<prefix>-<step>" (atomically, as every checkpoint),
 * then the state file "<dir>/checkpoint" (atomically too; its format is in
 * checkpoint_state.c), and only then deletes the files the rotation let
 * go. Killed at any point, the directory holds a state file that lists
 * only whole checkpoints: at worst an old file nothing lists, or a
 * "<name>.tmp" left by a write cut short, which the next manager opened
 * on the directory removes.
 *
 * Rotation is TensorFlow's (CheckpointManager._sweep): while more than
 * max_to_keep checkpoints are active, the oldest leaves — preserved for
 * good when it is keep_checkpoint_every_n_hours newer than the last one
 * preserved, deleted otherwise. Preserved ones stay listed in the state
 * file (marked) so people and later managers see them, and are never
 * deleted by a manager. The clock is an option, so tests can move it.
 *
 * One manager per directory at a time: a second one would remove the
 * first one's temporary files and rewrite its state.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/internal.h"

enum { DIR_BYTES = 4096, PREFIX_BYTES = 200 };
static const char STATE_FILE[] = "checkpoint";

struct gb_checkpoint_manager {
    gb_checkpoint *ckpt;
    char dir[DIR_BYTES];
    char prefix[PREFIX_BYTES];
    int max_to_keep;                  /* 0: keep all */
    double every_n_hours;             /* 0: off */
    double (*now)(void *user);
    void *now_user;
    gb__ckpt_state state;
    gb__ckpt_state missing;           /* listed by the state file, not on disk */
};

/* ---- small helpers ------------------------------------------------------------------------- */

/* Seconds since the epoch from the manager's clock, checked. */
static bool clock_now(const gb_checkpoint_manager *m, double *t) {
    struct timespec ts;
    if (m->now) *t = m->now(m->now_user);
    else *t = clock_gettime(CLOCK_REALTIME, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec * 1e-9 : -1;
    if (*t >= 0 && *t <= GB__CKPT_MAX_TIME) return true;
    gb__error(GB_ERR_VALUE, NULL, "CheckpointManager %s: the clock gave %g, not seconds since the epoch",
              m->dir, *t);
    return false;
}

/* "<dir>/<name>" into out (which holds DIR_BYTES + GB__CKPT_NAME_BYTES). */
static void path_in(const gb_checkpoint_manager *m, const char *name, char *out) {
    snprintf(out, DIR_BYTES + GB__CKPT_NAME_BYTES, "%s/%s", m->dir, name);
}

static bool is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether name is "<prefix>-<digits>.tmp" or the state file's ".tmp":
 * what a save killed mid-write leaves. */
static bool is_leftover(const gb_checkpoint_manager *m, const char *name) {
    size_t len = strlen(name), plen = strlen(m->prefix), slen = strlen(GB__ATOMIC_SUFFIX);
    if (len <= slen || strcmp(name + len - slen, GB__ATOMIC_SUFFIX) != 0) return false;
    len -= slen;
    if (len == strlen(STATE_FILE) && strncmp(name, STATE_FILE, len) == 0) return true;
    if (len < plen + 2 || strncmp(name, m->prefix, plen) != 0 || name[plen] != '-') return false;
    for (size_t i = plen + 1; i < len; i++)
        if (name[i] < '0' || name[i] > '9') return false;
    return true;
}

/* Removes the temporary files of saves killed mid-write. */
static void remove_leftovers(const gb_checkpoint_manager *m) {
    DIR *d = opendir(m->dir);
    if (!d) return;
    char path[DIR_BYTES + GB__CKPT_NAME_BYTES];
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_leftover(m, e->d_name)) continue;
        path_in(m, e->d_name, path);
        unlink(path);
    }
    closedir(d);
}

/* ---- opening a directory ------------------------------------------------------------------- */

static bool options_ok(const gb_checkpoint *c, const char *dir, const gb_checkpoint_manager_options *o) {
    const char *p = o->prefix ? o->prefix : "ckpt";
    double hours = o->keep_checkpoint_every_n_hours;
    const char *why = !c ? "the checkpoint is NULL"
                      : !dir || !dir[0] ? "the directory is NULL or empty"
                      : strlen(dir) >= DIR_BYTES - 1 ? "the directory's path is too long"
                      : strlen(p) >= PREFIX_BYTES || !gb__ckpt_name_ok(p, strlen(p))
                          ? "the prefix must be a file name of 1 to 199 bytes without '/', '#', "
                            "blanks or a leading '.'"
                      : o->max_to_keep < 0 ? "max_to_keep must be >= 0 (0 keeps every checkpoint)"
                      : !(hours >= 0) || hours > 1e9 ? "keep_checkpoint_every_n_hours must be >= 0 (0: off)"
                          : NULL;
    if (why) gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_manager_new: %s", why);
    return !why;
}

/* The state file's checkpoints, those missing on disk moved to m->missing. */
static bool load_state(gb_checkpoint_manager *m) {
    char path[DIR_BYTES + GB__CKPT_NAME_BYTES];
    path_in(m, STATE_FILE, path);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) return clock_now(m, &m->state.last_preserved);
    if (!gb__ckpt_state_read(path, &m->state)) return false;   /* also names what stat found */
    if (m->state.last_preserved < 0 && !clock_now(m, &m->state.last_preserved)) return false;
    for (int i = 0; i < m->state.n;) {
        gb__ckpt_record *r = &m->state.v[i];
        path_in(m, r->name, r->path);
        if (is_regular_file(r->path)) {
            i++;
            continue;
        }
        if (!gb__ckpt_state_add(&m->missing, r)) return false;
        gb__ckpt_state_remove(&m->state, i);
    }
    return true;
}

gb_checkpoint_manager *gb_checkpoint_manager_new(gb_checkpoint *c, const char *directory,
                                                 const gb_checkpoint_manager_options *opts) {
    static const gb_checkpoint_manager_options defaults;
    if (!opts) opts = &defaults;
    if (!gb_ok() || !options_ok(c, directory, opts)) return NULL;
    struct stat st;
    if (stat(directory, &st) == 0 && !S_ISDIR(st.st_mode)) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: not a directory (a CheckpointManager keeps its checkpoints in one)", directory);
        return NULL;
    }
    gb_checkpoint_manager *m = calloc(1, sizeof *m);
    if (!m) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_checkpoint_manager_new: out of memory");
        return NULL;
    }
    *m = (gb_checkpoint_manager){.ckpt = c, .max_to_keep = opts->max_to_keep,
                                 .every_n_hours = opts->keep_checkpoint_every_n_hours,
                                 .now = opts->now, .now_user = opts->now_user};
    snprintf(m->dir, sizeof m->dir, "%s", directory);
    snprintf(m->prefix, sizeof m->prefix, "%s", opts->prefix ? opts->prefix : "ckpt");
    if (!load_state(m)) {
        gb_checkpoint_manager_free(m);
        return NULL;
    }
    remove_leftovers(m);
    return m;
}

void gb_checkpoint_manager_free(gb_checkpoint_manager *m) {
    if (!m) return;
    gb__ckpt_state_free(&m->state);
    gb__ckpt_state_free(&m->missing);
    free(m);
}

/* ---- saving -------------------------------------------------------------------------------- */

/* TensorFlow's rotation: while more than max_to_keep are active, the
 * oldest is preserved (every-N-hours rule) or moves to doomed. */
static bool sweep(const gb_checkpoint_manager *m, gb__ckpt_state *s, gb__ckpt_state *doomed) {
    while (m->max_to_keep > 0) {
        int active = 0, oldest = -1;
        for (int i = 0; i < s->n; i++) {
            if (s->v[i].preserved) continue;
            if (oldest < 0) oldest = i;
            active++;
        }
        if (active <= m->max_to_keep) return true;
        gb__ckpt_record *r = &s->v[oldest];
        if (m->every_n_hours > 0 && r->time - m->every_n_hours * 3600 >= s->last_preserved) {
            s->last_preserved = r->time;
            r->preserved = true;
            continue;
        }
        if (!gb__ckpt_state_add(doomed, r)) return false;
        gb__ckpt_state_remove(s, oldest);
    }
    return true;
}

static bool copy_state(const gb__ckpt_state *from, gb__ckpt_state *to) {
    *to = (gb__ckpt_state){.last_preserved = from->last_preserved};
    for (int i = 0; i < from->n; i++)
        if (!gb__ckpt_state_add(to, &from->v[i])) return false;
    return true;
}

/* Deletes the checkpoints the rotation let go (already gone is fine). */
static bool delete_doomed(const gb__ckpt_state *doomed) {
    for (int i = 0; i < doomed->n; i++)
        if (unlink(doomed->v[i].path) != 0 && errno != ENOENT) {
            gb__error(GB_ERR_IO, NULL, "%s: cannot delete this old checkpoint: %s", doomed->v[i].path,
                      strerror(errno));
            return false;
        }
    return true;
}

/* The state after a save of rec: rec last (replacing an older save of the
 * same name), rotated; the state file written; then m's. */
static bool commit_save(gb_checkpoint_manager *m, const gb__ckpt_record *rec) {
    gb__ckpt_state next, doomed = {0};
    char path[DIR_BYTES + GB__CKPT_NAME_BYTES];
    bool ok = copy_state(&m->state, &next);
    int same = gb__ckpt_state_find(&next, rec->name);
    if (ok && same >= 0) gb__ckpt_state_remove(&next, same);
    ok = ok && gb__ckpt_state_add(&next, rec) && sweep(m, &next, &doomed);
    path_in(m, STATE_FILE, path);
    ok = ok && gb__ckpt_state_write(path, &next);
    if (ok) {
        gb__ckpt_state_free(&m->state);
        m->state = next;
    } else {
        gb__ckpt_state_free(&next);
    }
    ok = ok && delete_doomed(&doomed);
    gb__ckpt_state_free(&doomed);
    return ok;
}

const char *gb_checkpoint_manager_save(gb_checkpoint_manager *m, int64_t step) {
    if (!gb_ok()) return NULL;
    if (!m || step < 0) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_manager_save: %s",
                  !m ? "NULL manager" : "the step must be >= 0 (it numbers the file)");
        return NULL;
    }
    gb__ckpt_record rec = {.step = step};
    snprintf(rec.name, sizeof rec.name, "%s-%lld", m->prefix, (long long)step);
    path_in(m, rec.name, rec.path);
    bool ok = gb_make_dirs(m->dir) && gb_checkpoint_write(m->ckpt, rec.path) && clock_now(m, &rec.time) &&
              commit_save(m, &rec);
    return ok ? gb_checkpoint_manager_latest(m) : NULL;
}

/* ---- what it keeps --------------------------------------------------------------------------- */

const char *gb_checkpoint_manager_latest(const gb_checkpoint_manager *m) {
    return m && m->state.n ? m->state.v[m->state.n - 1].path : NULL;
}

int gb_checkpoint_manager_checkpoints(const gb_checkpoint_manager *m, const char **paths, int cap) {
    for (int i = 0; m && paths && i < m->state.n && i < cap; i++) paths[i] = m->state.v[i].path;
    return m ? m->state.n : 0;
}

int gb_checkpoint_manager_missing(const gb_checkpoint_manager *m, const char **paths, int cap) {
    for (int i = 0; m && paths && i < m->missing.n && i < cap; i++) paths[i] = m->missing.v[i].path;
    return m ? m->missing.n : 0;
}

gb_restore_or_init gb_checkpoint_manager_restore_or_initialize(gb_checkpoint_manager *m,
                                                               gb_restore_status *st) {
    if (!gb_ok()) return GB_CKPT_FAILED;
    if (!m || !st) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_manager_restore_or_initialize: NULL %s",
                  m ? "status" : "manager");
        return GB_CKPT_FAILED;
    }
    const char *latest = gb_checkpoint_manager_latest(m);
    if (!latest) {
        *st = (gb_restore_status){0};
        return GB_CKPT_INITIALIZED;
    }
    return gb_checkpoint_restore(m->ckpt, latest, st) ? GB_CKPT_RESTORED : GB_CKPT_FAILED;
}
