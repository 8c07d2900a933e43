/* store/logdir.c — many stores read as one handle (`glassbox serve --logdir`).
 *
 * A sweep writes a store per trial and an MPI job a store per rank (SQLite
 * must never be shared over a network file system), so a board has to read
 * a directory of stores. gb_store_open_logdir() returns an ordinary
 * gb_store whose every query works as on one store: a run is named by the
 * member store's path under its directory (without the file's extension),
 * a '/', and its name in that store ("lr_0.1/trial/train"); a query naming
 * a run goes to the member that holds it, and the listings (runs, tags,
 * a metric across runs, the experiment) merge the members'.
 *
 * Members are found by content, not by name: a regular file whose SQLite
 * header carries the store's application id (so "-wal" files, event files
 * and checkpoints beside the stores are passed over). They are opened
 * read-only when first needed and closed after GB__LOGDIR_IDLE_MS unused
 * (at most GB__LOGDIR_MAX_OPEN at once), so 1,000 stores cost the memory of
 * the few being looked at; each member's runs and tags are cached until its
 * files change, so listing 1,000 stores opens none of them again.
 *
 * Changes (a store appearing, growing, disappearing) are found by a scan
 * of the directories that runs when inotify reports an event in one of
 * them, and at least every GB__LOGDIR_POLL_MS anyway: inotify sees nothing
 * of what another machine writes into an NFS directory, and may be out of
 * watches. Scans are driven by the handle's callers (gb_store_data_version,
 * which a board's watcher polls, and the listings), so no thread runs here.
 * A member's signature (inode, size and mtime of the file and its WAL)
 * tells that it changed; the handle's data_version then moves.
 *
 * TensorBoard's event files are members too once the process has a
 * converter (gb_store_set_tfevents_converter): a directory holding
 * events.out.tfevents.* files is one member, one run named by its path,
 * read through a store the converter writes into a private directory
 * (removed with the handle). Its signature is its event files'; when
 * they change (a file growing, a new one) the next read converts the
 * directory again, off the table's lock, and swaps the new store in by a
 * rename, so a reader sees the old store or the new one, never half. The
 * new store starts as a copy of the old, which knows how far it read each
 * file, so only the records added since are converted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gb_tfevents.h"
#include "store/internal.h"

#define GB__LOGDIR_POLL_MS 1000    /* a full scan at least this often */
#define GB__LOGDIR_MIN_SCAN_MS 200 /* and at most this often, however busy inotify is */
#define GB__LOGDIR_IDLE_MS 5000    /* an unused member's connection is closed after this */
#define GB__LOGDIR_MAX_OPEN 64     /* members open at once, beyond those in use */
#define GB__LOGDIR_MAX_DEPTH 32    /* directory levels walked below a root */
#define GB__LOGDIR_FILL_THREADS 4  /* threads reading unread members for a listing */
#define GB__LOGDIR_FILL_MIN_EACH 16 /* members per thread at least (a thread costs ~50 us) */

typedef struct member {
    char *path;            /* the file */
    char *prefix;          /* its run names' prefix: path under its root, no extension;
                              an event directory's: its run's whole name */
    char *source;          /* an event directory: the directory (path: its store), else NULL */
    char *source_run;      /* the run its store holds */
    uint64_t converted;    /* the signature its store was converted at (0: none) */
    uint64_t signature;    /* of the file and its WAL at the last scan */
    gb_store *store;       /* open connection, or NULL */
    int users;             /* calls in flight on store */
    int64_t last_used_ms;
    bool stale;            /* changed while in use: reopen when released */
    bool gone;             /* removed from the table while in use: free when released */
    bool seen;             /* found by the scan running */
    gb_runs *runs;         /* cached for `signature` (NULL: not read yet) */
    gb_tags *tags;         /* every kind */
    gb_hparams_config *config; /* the experiment it declares (NULL: not read yet) */
    bool has[GB_EVENTS_TABLES];    /* gb_store_has_events, read with the rest */
} member;

struct gb__logdir {
    pthread_mutex_t mu;
    pthread_mutex_t fill_mu; /* one listing reads unread stores at a time (before mu) */
    char **patterns;
    size_t npatterns;
    bool bare;             /* one directory without glob characters: names are relative */
    member **members;      /* sorted by path */
    size_t count, cap;
    uint64_t version;      /* moves whenever a scan sees a change */
    int64_t last_scan_ms;
    int inotify_fd;        /* -1: polling only */
    int open_count;
    char *mirror;          /* the private directory of event directories' stores, or NULL */
    unsigned mirrors;      /* stores made there */
};

static gb_tfevents_converter converter;

void gb_store_set_tfevents_converter(gb_tfevents_converter fn) { converter = fn; }

#define GB__FNV_BASIS 0xcbf29ce484222325ull
static uint64_t hash_stat(uint64_t h, const char *path);

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- members -------------------------------------------------------------------------- */

static void member_close(gb__logdir *ld, member *m) {
    if (!m->store) return;
    gb_store_close(m->store);
    m->store = NULL;
    ld->open_count--;
}

static void member_forget_cache(member *m) {
    gb_store_free(m->runs);
    gb_store_free(m->tags);
    gb_store_free(m->config);
    m->runs = NULL;
    m->tags = NULL;
    m->config = NULL;
}

/* Removes a store we made, with its side files. */
static void remove_store(const char *path) {
    char side[4300];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

static void member_free(member *m) {
    member_forget_cache(m);
    if (m->source) remove_store(m->path);   /* its store is ours: gone with it */
    free(m->path);
    free(m->prefix);
    free(m->source);
    free(m->source_run);
    free(m);
}

/* Closes the least recently used idle members while more than the cap are open. */
static void close_surplus(gb__logdir *ld) {
    while (ld->open_count > GB__LOGDIR_MAX_OPEN) {
        member *lru = NULL;
        for (size_t i = 0; i < ld->count; i++) {
            member *m = ld->members[i];
            if (m->store && !m->users && (!lru || m->last_used_ms < lru->last_used_ms)) lru = m;
        }
        if (!lru) return;
        member_close(ld, lru);
    }
}

/* Opens m's connection if it has none (ld->mu held). */
static gb_store_status member_open(gb__logdir *ld, member *m) {
    m->last_used_ms = now_ms();
    if (m->store) return GB_STORE_OK;
    /* An event directory's store is never written, only replaced whole
     * (a rename): read as it is, with no side files beside it. */
    gb_store_status st = m->source ? gb__store_open_snapshot(m->path, &m->store)
                                   : gb_store_open(m->path, &m->store);
    if (st != GB_STORE_OK) return st;
    ld->open_count++;
    close_surplus(ld);
    return GB_STORE_OK;
}

static bool cached(const member *m) { return m->runs && m->tags && m->config; }

/* Copies the file at from to a new file at to; false when it cannot. */
static bool copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    static _Thread_local char buf[1 << 16];
    ssize_t n = 0;
    bool ok = out >= 0;
    while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = write(out, buf, (size_t)n) == n;
    ok = ok && n == 0;
    if (out >= 0) ok = close(out) == 0 && ok;
    if (in >= 0) close(in);
    return ok;
}

/* Converts event directory m's files (at signature sig) into its store,
 * unless done already, WITHOUT ld->mu (m pinned): into a file of its own
 * beside the store, then renamed over it. Two reads converting at once
 * each write their own file; the last rename wins, both whole.
 *
 * The file starts as a copy of the store the last conversion made, which
 * records how far it read each event file, so the converter reads only
 * the records the files gained since: following a live run costs what it
 * wrote, not all it ever wrote. When that cannot be (no store yet, or a
 * file that changed otherwise than by growing, which the converter
 * refuses), the directory is converted whole into an empty file. */
static gb_store_status member_convert(gb__logdir *ld, member *m, uint64_t sig) {
    pthread_mutex_lock(&ld->mu);
    bool done = m->converted == sig, before = m->converted != 0;
    pthread_mutex_unlock(&ld->mu);
    gb_tfevents_converter fn = converter;
    if (done) return GB_STORE_OK;
    char tmp[4200], why[512] = "no converter is set";
    static atomic_uint serial;
    snprintf(tmp, sizeof tmp, "%s.%u.new", m->path, atomic_fetch_add(&serial, 1));
    remove_store(tmp);
    bool ok = fn && before && copy_file(m->path, tmp) && fn(m->source, m->source_run, tmp, why, sizeof why);
    if (!ok && fn) {
        remove_store(tmp);
        ok = fn(m->source, m->source_run, tmp, why, sizeof why);
    }
    if (ok && rename(tmp, m->path)) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        ok = false;
    }
    if (!ok) {
        remove_store(tmp);
        gb__store_fail("event files in '%s' cannot be read: %s", m->source, why);
        return GB_STORE_ERR_IO;
    }
    pthread_mutex_lock(&ld->mu);
    m->converted = sig;
    pthread_mutex_unlock(&ld->mu);
    return GB_STORE_OK;
}

/* Reads m's runs, tags and declared experiment into its cache, on a
 * connection of its own opened and closed here, WITHOUT ld->mu (m pinned
 * by the caller, users > 0; sig: its signature when pinned): reading a
 * thousand stores never holds up the requests for stores already read.
 * A cache read while the files changed is dropped: the next read sees the
 * new signature. */
static gb_store_status member_fill(gb__logdir *ld, member *m, uint64_t sig) {
    gb_store *s = NULL;
    gb_runs *runs = NULL;
    gb_tags *tags = NULL;
    gb_hparams_config *config = NULL;
    gb_store_status st = m->source ? member_convert(ld, m, sig) : GB_STORE_OK;
    if (st != GB_STORE_OK) return st;
    uint64_t before = hash_stat(GB__FNV_BASIS, m->path);
    st = gb__store_open_snapshot(m->path, &s);
    if (st == GB_STORE_OK) st = gb_store_runs(s, &runs);
    if (st == GB_STORE_OK) st = gb_store_tags(s, NULL, GB_KIND_ANY, &tags);
    if (st == GB_STORE_OK) st = gb_store_hparams_config(s, &config);
    bool has[GB_EVENTS_TABLES] = {false};
    for (int t = 0; st == GB_STORE_OK && t < GB_EVENTS_TABLES; t++)
        st = gb_store_has_events(s, (gb_event_table)t, &has[t]);
    gb_store_close(s);
    /* The main file rewritten meanwhile (a writer's checkpoint): what an
     * immutable connection read may mix two states; the next scan sees
     * the change and reads it again. */
    bool steady = hash_stat(GB__FNV_BASIS, m->path) == before;
    pthread_mutex_lock(&ld->mu);
    if (st == GB_STORE_OK && steady && m->signature == sig && !cached(m)) {
        member_forget_cache(m);
        m->runs = runs, m->tags = tags, m->config = config;
        memcpy(m->has, has, sizeof has);
        runs = NULL, tags = NULL, config = NULL;
    }
    pthread_mutex_unlock(&ld->mu);
    gb_store_free(runs);
    gb_store_free(tags);
    gb_store_free(config);
    return st;
}

/* The end of a pin or of a call (ld->mu held): a member changed while in
 * use loses its connection, one removed meanwhile is freed. */
static void member_release(gb__logdir *ld, member *m) {
    m->users--;
    m->last_used_ms = now_ms();
    if (!m->users && (m->stale || m->gone)) {
        member_close(ld, m);
        m->stale = false;
    }
    if (!m->users && m->gone) member_free(m);
}

/* Fills m's cache when it is not there (ld->mu held on entry and on
 * return, released meanwhile). */
static gb_store_status member_cache(gb__logdir *ld, member *m) {
    if (cached(m)) return GB_STORE_OK;
    m->users++;
    uint64_t sig = m->signature;
    pthread_mutex_unlock(&ld->mu);
    gb_store_status st = member_fill(ld, m, sig);
    pthread_mutex_lock(&ld->mu);
    member_release(ld, m);
    return st;
}

static bool member_has_run(const member *m, const char *run) {
    for (size_t i = 0; m->runs && i < m->runs->count; i++)
        if (!strcmp(m->runs->rows[i].name, run)) return true;
    return false;
}

/* ---- finding the stores ------------------------------------------------------------------ */

/* FNV-1a over what tells that a file changed. An empty file counts as
 * none: a reader opening a finished store makes an empty WAL beside it,
 * which changes nothing in the store. */
static uint64_t hash_stat(uint64_t h, const char *path) {
    struct stat st;
    int64_t v[4] = {0, 0, 0, 0};
    if (!stat(path, &st) && st.st_size > 0)
        v[0] = (int64_t)st.st_ino, v[1] = st.st_size, v[2] = st.st_mtim.tv_sec,
        v[3] = st.st_mtim.tv_nsec;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t signature_of(const char *path) {
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    return hash_stat(hash_stat(GB__FNV_BASIS, path), wal);
}

/* An event directory's: of its event files, in any order. */
static bool is_event_file(const char *name) { return strstr(name, "tfevents") != NULL; }

static uint64_t events_signature(const char *dir) {
    uint64_t sig = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[4200];
        if (is_event_file(e->d_name) &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            sig ^= hash_stat(GB__FNV_BASIS, path);
    }
    if (d) closedir(d);
    return sig ? sig : 1;   /* 0 is "never converted" */
}

static uint64_t member_signature(const member *m) {
    return m->source ? events_signature(m->source) : signature_of(m->path);
}

/* Whether the file is a glassbox store: SQLite's header with the store's
 * application id (big-endian at byte 68). */
static bool is_store_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false;
    unsigned char h[72];
    bool ok = pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h &&
              !memcmp(h, "SQLite format 3", 16) &&
              ((uint32_t)h[68] << 24 | (uint32_t)h[69] << 16 | (uint32_t)h[70] << 8 | h[71]) ==
                  GB__APPLICATION_ID;
    close(fd);
    return ok;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int compare_paths(const void *a, const void *b) {
    return strcmp((*(member *const *)a)->path, (*(member *const *)b)->path);
}

static member *find_by_path(gb__logdir *ld, const char *path) {
    if (!ld->count) return NULL;   /* bsearch wants an array, even of none */
    member key = {.path = (char *)path}, *kp = &key;
    member **m = bsearch(&kp, ld->members, ld->count, sizeof *ld->members, compare_paths);
    return m ? *m : NULL;
}

/* The run-name prefix of the store at name (its path under the root, or
 * the root's path joined to it): the file's extension dropped. */
static char *prefix_of(const char *name) {
    char *p = strdup(name);
    if (!p) return NULL;
    char *base = strrchr(p, '/');
    char *dot = strrchr(base ? base + 1 : p, '.');
    if (dot && dot != (base ? base + 1 : p)) *dot = '\0';
    return p;
}

/* Adds m to the table, at its place by path (scans add few at a time). */
static bool add_member(gb__logdir *ld, member *m) {
    if (ld->count == ld->cap) {
        size_t cap = ld->cap ? 2 * ld->cap : 64;
        member **grown = realloc(ld->members, cap * sizeof *grown);
        if (!grown) return false;   /* found again by the next scan */
        ld->members = grown;
        ld->cap = cap;
    }
    m->seen = true;
    m->signature = member_signature(m);
    size_t at = ld->count;
    while (at > 0 && strcmp(ld->members[at - 1]->path, m->path) > 0) at--;
    memmove(ld->members + at + 1, ld->members + at, (ld->count - at) * sizeof *ld->members);
    ld->members[at] = m;
    ld->count++;
    ld->version++;
    return true;
}

/* The member of event directory dir, or NULL (few: a linear search). */
static member *find_by_source(gb__logdir *ld, const char *dir) {
    for (size_t i = 0; i < ld->count; i++)
        if (ld->members[i]->source && !strcmp(ld->members[i]->source, dir)) return ld->members[i];
    return NULL;
}

/* An event file met by the scan: its directory is a member (named by its
 * path under the root, `name` without the file's), added when new. */
static void consider_event_file(gb__logdir *ld, const char *path, const char *name) {
    const char *slash = strrchr(path, '/'), *name_slash = strrchr(name, '/');
    char *dir = strndup(path, slash ? (size_t)(slash - path) : 0);
    member *m = dir ? find_by_source(ld, dir) : NULL;
    if (m || !dir) {
        if (m) m->seen = true;
        free(dir);
        return;
    }
    if (!ld->mirror) {
        const char *tmp = getenv("TMPDIR");
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/glassbox-tfevents-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmpl) || !(ld->mirror = strdup(tmpl))) {
            free(dir);
            return;   /* tried again by the next scan */
        }
    }
    char store[4200];
    snprintf(store, sizeof store, "%s/%u.db", ld->mirror, ld->mirrors++);
    const char *base = strrchr(dir, '/');
    m = calloc(1, sizeof *m);
    bool ok = m && (m->path = strdup(store)) && (m->source = dir) &&
              (m->prefix = name_slash ? strndup(name, (size_t)(name_slash - name)) : strdup(".")) &&
              (m->source_run = strdup(base && base[1] ? base + 1 : "events")) && add_member(ld, m);
    if (!ok) {
        if (m && m->source == dir) m->source = NULL;   /* no store of its own made yet */
        free(dir);
        if (m) member_free(m);
    }
}

/* A file met by the scan: marked seen if it is a member, added if it is a
 * new store (or an event file: its directory). name is what its runs are
 * prefixed with (before prefix_of). */
static void consider_file(gb__logdir *ld, const char *path, const char *name) {
    if (ends_with(path, "-wal") || ends_with(path, "-shm") || ends_with(path, "-journal")) return;
    const char *base = strrchr(path, '/');
    if (converter && is_event_file(base ? base + 1 : path)) {
        consider_event_file(ld, path, name);
        return;
    }
    member *m = find_by_path(ld, path);
    if (m) {
        m->seen = true;
        return;
    }
    if (!is_store_file(path)) return;
    m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path)) || !(m->prefix = prefix_of(name)) || !add_member(ld, m)) {
        if (m) free(m->path), free(m->prefix);
        free(m);
    }
}

static void watch_dir(gb__logdir *ld, const char *dir) {
    if (ld->inotify_fd < 0) return;
    /* Adding a watch twice returns the same descriptor: no growth. */
    inotify_add_watch(ld->inotify_fd, dir,
                      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY |
                          IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR);
}

/* Walks dir (named `name` in run names) and everything below it. */
static void walk(gb__logdir *ld, const char *dir, const char *name, int depth) {
    if (depth > GB__LOGDIR_MAX_DEPTH) return;
    DIR *d = opendir(dir);
    if (!d) return;
    watch_dir(ld, dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[4096], sub[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
            (size_t)snprintf(sub, sizeof sub, "%s%s%s", name, *name ? "/" : "", e->d_name) >=
                sizeof sub)
            continue;
        unsigned char type = e->d_type;
        if (type == DT_UNKNOWN) {   /* some file systems do not say: ask (no symlinks) */
            struct stat st;
            type = lstat(path, &st) ? DT_UNKNOWN
                   : S_ISDIR(st.st_mode) ? DT_DIR
                   : S_ISREG(st.st_mode) ? DT_REG
                                         : DT_UNKNOWN;
        }
        if (type == DT_DIR) walk(ld, path, sub, depth + 1);
        else if (type == DT_REG) consider_file(ld, path, sub);
    }
    closedir(d);
}

/* Drops the members the scan did not see (freed now, or when released). */
static void drop_unseen(gb__logdir *ld) {
    size_t kept = 0;
    for (size_t i = 0; i < ld->count; i++) {
        member *m = ld->members[i];
        if (m->seen) {
            ld->members[kept++] = m;
            continue;
        }
        ld->version++;
        if (m->users) {
            m->gone = true;   /* the call in flight frees it */
        } else {
            member_close(ld, m);
            member_free(m);
        }
    }
    ld->count = kept;
}

/* Members whose files changed lose their cache, and their connection when
 * idle (a file replaced, or read as immutable, needs a new one); members
 * idle for long are closed. */
static void refresh_members(gb__logdir *ld, int64_t now) {
    for (size_t i = 0; i < ld->count; i++) {
        member *m = ld->members[i];
        uint64_t sig = member_signature(m);
        if (sig != m->signature) {
            m->signature = sig;
            member_forget_cache(m);
            if (m->users) m->stale = true;
            else member_close(ld, m);
            ld->version++;
        }
        if (m->store && !m->users && now - m->last_used_ms > GB__LOGDIR_IDLE_MS)
            member_close(ld, m);
    }
}

static void scan(gb__logdir *ld) {
    for (size_t i = 0; i < ld->count; i++) ld->members[i]->seen = false;
    for (size_t p = 0; p < ld->npatterns; p++) {
        glob_t g;
        if (glob(ld->patterns[p], GLOB_NOSORT, NULL, &g)) continue;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            const char *root = g.gl_pathv[i];
            struct stat st;
            if (stat(root, &st)) continue;
            if (S_ISDIR(st.st_mode)) walk(ld, root, ld->bare ? "" : root, 0);
            else if (S_ISREG(st.st_mode)) consider_file(ld, root, root);
        }
        globfree(&g);
    }
    drop_unseen(ld);
    ld->last_scan_ms = now_ms();
    refresh_members(ld, ld->last_scan_ms);
}

/* Scans when inotify saw something or the poll interval has passed. */
static void maybe_scan(gb__logdir *ld) {
    int64_t since = now_ms() - ld->last_scan_ms;
    if (since < GB__LOGDIR_MIN_SCAN_MS) return;
    bool events = false;
    if (ld->inotify_fd >= 0) {
        char buf[4096];
        while (read(ld->inotify_fd, buf, sizeof buf) > 0) events = true;
    }
    if (events || since >= GB__LOGDIR_POLL_MS) scan(ld);
}

/* ---- opening and closing -------------------------------------------------------------- */

static bool has_glob_chars(const char *s) { return strpbrk(s, "*?[") != NULL; }

gb_store_status gb__logdir_new(const char *const *patterns, size_t count, gb__logdir **out) {
    *out = NULL;
    if (!patterns || !count) {
        gb__store_fail("gb_store_open_logdir: no directory given");
        return GB_STORE_ERR_ARG;
    }
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (!patterns[i] || !*patterns[i]) {
            gb__store_fail("gb_store_open_logdir: directory %zu is NULL or empty", i + 1);
            return GB_STORE_ERR_ARG;
        }
        /* A plain path must be there; a pattern may match nothing yet. */
        if (!has_glob_chars(patterns[i]) && (stat(patterns[i], &st) || !S_ISDIR(st.st_mode))) {
            gb__store_fail("logdir '%s' %s", patterns[i],
                           stat(patterns[i], &st) ? "does not exist" : "is not a directory");
            return GB_STORE_ERR_NOT_FOUND;
        }
    }
    gb__logdir *ld = calloc(1, sizeof *ld);
    if (!ld || !(ld->patterns = calloc(count, sizeof *ld->patterns))) {
        free(ld);
        gb__store_fail("gb_store_open_logdir: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    pthread_mutex_init(&ld->mu, NULL);
    pthread_mutex_init(&ld->fill_mu, NULL);
    ld->npatterns = count;
    for (size_t i = 0; i < count; i++) {
        /* "dir/" and "dir" name the same runs */
        size_t n = strlen(patterns[i]);
        while (n > 1 && patterns[i][n - 1] == '/') n--;
        if (!(ld->patterns[i] = strndup(patterns[i], n))) {
            gb__logdir_free(ld);
            gb__store_fail("gb_store_open_logdir: out of memory");
            return GB_STORE_ERR_MEMORY;
        }
    }
    ld->bare = count == 1 && !has_glob_chars(ld->patterns[0]);
    ld->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    scan(ld);
    *out = ld;
    return GB_STORE_OK;
}

void gb__logdir_free(gb__logdir *ld) {
    if (!ld) return;
    for (size_t i = 0; i < ld->count; i++) {
        member_close(ld, ld->members[i]);
        member_free(ld->members[i]);
    }
    for (size_t i = 0; ld->patterns && i < ld->npatterns; i++) free(ld->patterns[i]);
    free(ld->patterns);
    free(ld->members);
    if (ld->mirror) rmdir(ld->mirror);   /* emptied by the members' frees */
    free(ld->mirror);
    if (ld->inotify_fd >= 0) close(ld->inotify_fd);
    pthread_mutex_destroy(&ld->mu);
    pthread_mutex_destroy(&ld->fill_mu);
    free(ld);
}

/* ---- a call naming a run -------------------------------------------------------------- */

gb_store_status gb__logdir_enter(gb__logdir *ld, const char *run, gb__member_ref *ref) {
    *ref = (gb__member_ref){0};
    if (!run) {
        gb__store_fail("logdir: the run name is NULL");
        return GB_STORE_ERR_ARG;
    }
    pthread_mutex_lock(&ld->mu);
    /* The longest prefix whose store has the rest as a run: "a/b/c" may be
     * run "b/c" of store "a" or run "c" of store "a/b". Filling a cache
     * lets the table go for a moment (it may change): then look again. */
    member *best = NULL;
    size_t best_len = 0;
    gb_store_status st = GB_STORE_OK;
    for (int pass = 0; pass < 4; pass++) {
        best = NULL, best_len = 0, st = GB_STORE_OK;
        member *unread = NULL;
        for (size_t i = 0; i < ld->count && !unread; i++) {
            member *m = ld->members[i];
            size_t n = strlen(m->prefix);
            if (n <= best_len && best) continue;
            /* An event directory's run is named by its prefix alone. */
            if (m->source ? strcmp(run, m->prefix) : strncmp(run, m->prefix, n) || run[n] != '/')
                continue;
            if (!cached(m)) unread = m;
            else if (member_has_run(m, m->source ? m->source_run : run + n + 1)) best = m, best_len = n;
        }
        if (!unread) break;
        st = member_cache(ld, unread);
        if (st != GB_STORE_OK) break;
    }
    if (best) st = member_open(ld, best);
    if (best && st == GB_STORE_OK) {
        best->users++;
        *ref = (gb__member_ref){best->store, best->source ? best->source_run : run + best_len + 1,
                                best};
    }
    pthread_mutex_unlock(&ld->mu);
    if (best && st == GB_STORE_OK) return GB_STORE_OK;
    if (st == GB_STORE_OK) {
        gb__store_fail("unknown run '%s'", run);
        st = GB_STORE_ERR_NO_RUN;
    }
    return st;
}

void gb__logdir_leave(gb__logdir *ld, gb__member_ref *ref) {
    member *m = ref->member;
    if (!m) return;
    pthread_mutex_lock(&ld->mu);
    member_release(ld, m);
    pthread_mutex_unlock(&ld->mu);
    *ref = (gb__member_ref){0};
}

/* ---- merged listings -------------------------------------------------------------------- */

static const char *joined(gb__arena *a, const char *prefix, const char *name) {
    size_t n = strlen(prefix), k = strlen(name);
    char *s = gb__arena_alloc(a, n + k + 2);
    if (!s) return NULL;
    memcpy(s, prefix, n);
    s[n] = '/';
    memcpy(s + n + 1, name, k + 1);
    return s;
}

/* The logdir's name of m's run `run`: m's prefix and the name, or an
 * event directory's path alone. */
static const char *run_name(gb__arena *a, const member *m, const char *run) {
    return m->source ? gb__arena_strdup(a, m->prefix) : joined(a, m->prefix, run);
}

static int compare_runs(const void *a, const void *b) {
    return strcmp(((const gb_run_row *)a)->name, ((const gb_run_row *)b)->name);
}

static bool copy_run(gb__arena *a, const member *m, const gb_run_row *from, gb_run_row *to) {
    *to = *from;
    to->name = run_name(a, m, from->name);
    to->host = gb__arena_strdup(a, from->host);
    to->command_line = gb__arena_strdup(a, from->command_line);
    to->status = gb__arena_strdup(a, from->status);
    gb_hparam *h = from->hparam_count
                       ? gb__arena_alloc(a, from->hparam_count * sizeof *h)
                       : NULL;
    if (from->hparam_count && !h) return false;
    for (size_t k = 0; k < from->hparam_count; k++) {
        h[k] = from->hparams[k];
        h[k].key = gb__arena_strdup(a, from->hparams[k].key);
        h[k].value = gb__arena_strdup(a, from->hparams[k].value);
        if (!h[k].key || !h[k].value) return false;
    }
    to->hparams = h;
    return to->name && to->host && to->command_line && to->status;
}

/* The members a listing reads, shared by the threads reading them: each
 * takes the next one until none is left. */
typedef struct fill_job {
    gb__logdir *ld;
    member **todo;
    uint64_t *sigs;
    size_t n;
    atomic_size_t next;
} fill_job;

static void *fill_worker(void *arg) {
    fill_job *j = arg;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        member_fill(j->ld, j->todo[i], j->sigs[i]);
    return NULL;
}

/* Reads the n members of job on this thread and up to
 * GB__LOGDIR_FILL_THREADS - 1 others: a store costs about half a
 * millisecond of CPU (a third of it SQLite parsing the schema of a new
 * connection), a thousand of them half a second on one core; each member
 * is read on a connection of its own, so they spread over the cores. A
 * thread that cannot be started leaves its share to the others. */
static void fill_parallel(fill_job *job) {
    pthread_t threads[GB__LOGDIR_FILL_THREADS - 1];
    size_t started = 0, want = job->n / GB__LOGDIR_FILL_MIN_EACH;
    if (want > GB__LOGDIR_FILL_THREADS - 1) want = GB__LOGDIR_FILL_THREADS - 1;
    while (started < want && !pthread_create(&threads[started], NULL, fill_worker, job)) started++;
    fill_worker(job);
    for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
}

/* Every member's runs and tags cached (ld->mu held on entry and on
 * return). The members not read yet are pinned and read without ld->mu,
 * one listing at a time (fill_mu: two listings would read the same
 * stores twice). A member that cannot be read (being replaced, damaged)
 * is left out of the listing rather than fail the whole board; its own
 * queries say why. */
static void cache_all(gb__logdir *ld) {
    maybe_scan(ld);
    size_t n = 0;
    for (size_t i = 0; i < ld->count; i++) n += !cached(ld->members[i]);
    if (!n) return;
    pthread_mutex_unlock(&ld->mu);
    pthread_mutex_lock(&ld->fill_mu);
    pthread_mutex_lock(&ld->mu);
    fill_job job = {.ld = ld, .todo = malloc(ld->count * sizeof *job.todo),
                    .sigs = malloc(ld->count * sizeof *job.sigs)};
    atomic_init(&job.next, 0);
    for (size_t i = 0; job.todo && job.sigs && i < ld->count; i++)
        if (!cached(ld->members[i])) {
            ld->members[i]->users++;
            job.sigs[job.n] = ld->members[i]->signature;
            job.todo[job.n++] = ld->members[i];
        }
    pthread_mutex_unlock(&ld->mu);
    fill_parallel(&job);
    pthread_mutex_lock(&ld->mu);
    for (size_t i = 0; i < job.n; i++) member_release(ld, job.todo[i]);
    pthread_mutex_unlock(&ld->fill_mu);
    free(job.todo);
    free(job.sigs);
}

static gb_store_status merged_runs(gb__logdir *ld, gb_runs **out) {
    gb__arena *a;
    gb_runs *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    cache_all(ld);
    size_t n = 0;
    for (size_t i = 0; i < ld->count; i++) n += ld->members[i]->runs ? ld->members[i]->runs->count : 0;
    gb_run_row *rows = n ? gb__arena_alloc(a, n * sizeof *rows) : NULL;
    bool ok = !n || rows;
    size_t r = 0;
    for (size_t i = 0; ok && i < ld->count; i++) {
        const member *m = ld->members[i];
        for (size_t k = 0; ok && m->runs && k < m->runs->count; k++)
            ok = copy_run(a, m, &m->runs->rows[k], &rows[r++]);
    }
    if (!ok) {
        gb_store_free(res);
        gb__store_fail("logdir: out of memory while listing runs");
        return GB_STORE_ERR_MEMORY;
    }
    if (n) qsort(rows, n, sizeof *rows, compare_runs);
    /* Ids are only unique within a store: number the merged runs afresh. */
    for (size_t k = 0; k < n; k++) rows[k].id = (int64_t)k + 1;
    res->count = n;
    res->rows = rows;
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb__logdir_runs(gb__logdir *ld, gb_runs **out) {
    pthread_mutex_lock(&ld->mu);
    gb_store_status st = merged_runs(ld, out);
    pthread_mutex_unlock(&ld->mu);
    return st;
}

static int compare_tags(const void *a, const void *b) {
    const gb_tag_row *x = a, *y = b;
    int c = strcmp(x->run, y->run);
    if (!c) c = strcmp(x->tag, y->tag);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* The cached tags of members (all of them, or `only` with local run name
 * `run`), of `kind`, their runs prefixed (ld->mu held). */
static gb_store_status merged_tags(gb__logdir *ld, const member *only, const char *run,
                                   gb_summary_kind kind, gb_tags **out) {
    gb__arena *a;
    gb_tags *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    gb__rows rows = {.elem = sizeof(gb_tag_row)};
    bool ok = true;
    for (size_t i = 0; ok && i < ld->count; i++) {
        const member *m = ld->members[i];
        if ((only && m != only) || !m->tags) continue;
        const char *last_run = NULL, *full = NULL;
        for (size_t k = 0; ok && k < m->tags->count; k++) {
            const gb_tag_row *t = &m->tags->rows[k];
            if ((kind != GB_KIND_ANY && t->kind != kind) || (run && strcmp(t->run, run))) continue;
            if (!last_run || strcmp(last_run, t->run)) full = run_name(a, m, last_run = t->run);
            gb_tag_row *row = gb__rows_push(&rows);
            ok = row && full;
            if (!ok) break;
            *row = *t;
            row->run = full;
            ok = (row->tag = gb__arena_strdup(a, t->tag)) != NULL;
        }
    }
    if (ok && rows.count) qsort(rows.data, rows.count, sizeof(gb_tag_row), compare_tags);
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    if (!ok) {
        gb_store_free(res);
        gb__store_fail("logdir: out of memory while listing tags");
        return GB_STORE_ERR_MEMORY;
    }
    *out = res;
    return GB_STORE_OK;
}

gb_store_status gb__logdir_tags(gb__logdir *ld, const char *run, gb_summary_kind kind,
                                gb_tags **out) {
    if (run) {
        gb__member_ref ref;
        gb_store_status st = gb__logdir_enter(ld, run, &ref);
        if (st != GB_STORE_OK) return st;
        pthread_mutex_lock(&ld->mu);
        /* Its cache is what enter found the run in; one listing, one snapshot. */
        st = merged_tags(ld, ref.member, ref.run, kind, out);
        pthread_mutex_unlock(&ld->mu);
        gb__logdir_leave(ld, &ref);
        return st;
    }
    pthread_mutex_lock(&ld->mu);
    cache_all(ld);
    gb_store_status st = merged_tags(ld, NULL, NULL, kind, out);
    pthread_mutex_unlock(&ld->mu);
    return st;
}

static bool member_has_scalar_tag(const member *m, const char *tag) {
    for (size_t k = 0; m->tags && k < m->tags->count; k++)
        if (m->tags->rows[k].kind == GB_KIND_SCALAR && !strcmp(m->tags->rows[k].tag, tag))
            return true;
    return false;
}

static int compare_summaries(const void *a, const void *b) {
    return strcmp(((const gb_scalar_summary_row *)a)->run, ((const gb_scalar_summary_row *)b)->run);
}

/* Reads `call` of every member holding a scalar tag `tag` (ld->mu held). */
gb_store_status gb__logdir_scalar_summaries(gb__logdir *ld, const char *tag,
                                            gb_scalar_summaries **out) {
    gb__arena *a;
    gb_scalar_summaries *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    gb__rows rows = {.elem = sizeof(gb_scalar_summary_row)};
    gb_store_status st = GB_STORE_OK;
    pthread_mutex_lock(&ld->mu);
    cache_all(ld);
    for (size_t i = 0; st == GB_STORE_OK && i < ld->count; i++) {
        member *m = ld->members[i];
        if (!member_has_scalar_tag(m, tag)) continue;   /* never opened for nothing */
        bool was_open = m->store != NULL;
        gb_scalar_summaries *sum = NULL;
        st = member_open(ld, m);
        if (st == GB_STORE_OK) st = gb_store_scalar_summaries(m->store, tag, &sum);
        for (size_t k = 0; st == GB_STORE_OK && k < sum->count; k++) {
            gb_scalar_summary_row *row = gb__rows_push(&rows);
            if (!row) st = GB_STORE_ERR_MEMORY;
            else if (*row = sum->rows[k], !(row->run = run_name(a, m, sum->rows[k].run)))
                st = GB_STORE_ERR_MEMORY;
        }
        gb_store_free(sum);
        if (!was_open && !m->users) member_close(ld, m);
    }
    pthread_mutex_unlock(&ld->mu);
    if (st == GB_STORE_OK && rows.count)
        qsort(rows.data, rows.count, sizeof(gb_scalar_summary_row), compare_summaries);
    res->count = rows.count;
    res->rows = gb__rows_into(a, &rows);
    if (st != GB_STORE_OK) {
        gb_store_free(res);
        return st;
    }
    *out = res;
    return GB_STORE_OK;
}

/* A copy of the config c into a new result. */
static gb_store_status copy_config(const gb_hparams_config *c, gb_hparams_config **out) {
    gb__arena *a;
    gb_hparams_config *res = gb__result_new(sizeof *res, &a);
    if (!res) return GB_STORE_ERR_MEMORY;
    gb_hparam_info *h = c->hparam_count ? gb__arena_alloc(a, c->hparam_count * sizeof *h) : NULL;
    gb_metric_info *m = c->metric_count ? gb__arena_alloc(a, c->metric_count * sizeof *m) : NULL;
    bool ok = (!c->hparam_count || h) && (!c->metric_count || m);
    for (size_t i = 0; ok && i < c->hparam_count; i++) {
        h[i] = c->hparams[i];
        h[i].name = gb__arena_strdup(a, c->hparams[i].name);
        h[i].display_name = gb__arena_strdup(a, c->hparams[i].display_name);
        h[i].description = gb__arena_strdup(a, c->hparams[i].description);
        h[i].values_json = gb__arena_strdup(a, c->hparams[i].values_json);
        ok = h[i].name && h[i].display_name && h[i].description && h[i].values_json;
    }
    for (size_t i = 0; ok && i < c->metric_count; i++) {
        m[i] = c->metrics[i];
        m[i].tag = gb__arena_strdup(a, c->metrics[i].tag);
        m[i].display_name = gb__arena_strdup(a, c->metrics[i].display_name);
        ok = m[i].tag && m[i].display_name;
    }
    if (!ok) {
        gb_store_free(res);
        return GB_STORE_ERR_MEMORY;
    }
    *res = (gb_hparams_config){c->hparam_count, h, c->metric_count, m};
    *out = res;
    return GB_STORE_OK;
}

/* The first member (by path) that declares an experiment declares it for
 * the logdir: a sweep's trials declare the same one. Read from the
 * members' caches. */
gb_store_status gb__logdir_hparams_config(gb__logdir *ld, gb_hparams_config **out) {
    static const gb_hparams_config none = {0, NULL, 0, NULL};
    pthread_mutex_lock(&ld->mu);
    cache_all(ld);
    const gb_hparams_config *c = &none;
    for (size_t i = 0; i < ld->count && c == &none; i++) {
        const gb_hparams_config *mc = ld->members[i]->config;
        if (mc && (mc->hparam_count || mc->metric_count)) c = mc;
    }
    gb_store_status st = copy_config(c, out);
    pthread_mutex_unlock(&ld->mu);
    return st;
}

gb_store_status gb__logdir_data_version(gb__logdir *ld, uint64_t *out) {
    pthread_mutex_lock(&ld->mu);
    maybe_scan(ld);
    *out = ld->version;
    pthread_mutex_unlock(&ld->mu);
    return GB_STORE_OK;
}

gb_store_status gb__logdir_has_events(gb__logdir *ld, gb_event_table table, bool *out) {
    pthread_mutex_lock(&ld->mu);
    cache_all(ld);
    *out = false;
    for (size_t i = 0; i < ld->count && !*out; i++)
        *out = cached(ld->members[i]) && ld->members[i]->has[table];
    pthread_mutex_unlock(&ld->mu);
    return GB_STORE_OK;
}

int64_t gb__logdir_pages_read(gb__logdir *ld) {
    int64_t pages = 0;
    pthread_mutex_lock(&ld->mu);
    for (size_t i = 0; i < ld->count; i++)
        if (ld->members[i]->store) pages += gb_store_pages_read(ld->members[i]->store);
    pthread_mutex_unlock(&ld->mu);
    return pages;
}

size_t gb__logdir_open_count(gb__logdir *ld) {
    pthread_mutex_lock(&ld->mu);
    size_t n = (size_t)ld->open_count;
    pthread_mutex_unlock(&ld->mu);
    return n;
}
