/* store/reader_open.c — how a reader connects to a store file: read-only,
 * and readable wherever the file lies.
 *
 * A reader never writes, so the connection is SQLITE_OPEN_READONLY. In WAL
 * mode (the writer's journal mode) that is not enough: reading also needs
 * the -wal and -shm side files, and SQLite creates them when they are
 * absent. Where it cannot (a read-only directory) the plain open fails
 * with "attempt to write a readonly database"; where it can but the store
 * is not the reader's (someone else's runs in a shared directory) it
 * leaves side files owned by the reader beside the store, which can then
 * keep the store's owner from writing. So the connection is chosen thus:
 *
 *   - the reader may write the directory and the store (its own runs): a
 *     plain read-only open; SQLite creates the side files when needed and
 *     a live writer's commits are seen;
 *   - else, when a writer's -wal and -shm are there: a plain read-only
 *     open through them (SQLite's read-only WAL support, 3.22 and later),
 *     so a live writer is still seen;
 *   - else, when there is no log to read (no -wal, or an empty one),
 *     nobody is writing: the file is opened `immutable=1`, which takes no
 *     locks and creates nothing. The price is that a writer starting
 *     later is not seen by this handle: right for finished runs one may
 *     only read (a new handle sees the new state);
 *   - else (a -wal holding commits but no -shm, which cannot be made
 *     here) the log cannot be read: a clear error, because immutable
 *     would silently show the store without its last commits.
 *
 * A logdir reads the runs and tags of a thousand stores in one go, most
 * of them finished: a store without a log is then read immutable whatever
 * the permissions (a "snapshot" connection), which saves the locks and
 * the side files (a fifth of a store's reading), and the logdir checks
 * that the file did not change meanwhile.
 *
 * Files are opened as "file:" URIs, the path percent-encoded, so no path
 * is ever read as URI parameters, whatever SQLite's URI default.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"

typedef enum open_mode { OPEN_SHARED, OPEN_IMMUTABLE, OPEN_UNREADABLE_LOG } open_mode;

/* Whether this process (its effective ids) may write `path`. */
static bool writable(const char *path) { return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0; }

/* The size of path + suffix, or -1 when it does not exist. */
static long long side_file_size(const char *path, const char *suffix) {
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (!p) return -1;
    snprintf(p, n, "%s%s", path, suffix);
    struct stat sb;
    long long size = stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
    free(p);
    return size;
}

/* Whether the reader may create side files next to path: it may write
 * both the directory and the store itself. */
static bool may_write_beside(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    char *dir = malloc(n + 2);
    if (!dir) return false;
    if (!slash) strcpy(dir, ".");
    else if (n == 0) strcpy(dir, "/");
    else memcpy(dir, path, n), dir[n] = '\0';
    bool ok = writable(dir) && writable(path);
    free(dir);
    return ok;
}

static open_mode choose_mode(const char *path, bool snapshot) {
    /* No log: nobody is writing the store, so a quick read needs no locks. */
    if (snapshot && side_file_size(path, "-wal") <= 0) return OPEN_IMMUTABLE;
    if (may_write_beside(path)) return OPEN_SHARED;
    long long wal = side_file_size(path, "-wal"), shm = side_file_size(path, "-shm");
    if (wal >= 0 && shm >= 0) return OPEN_SHARED;
    return wal > 0 ? OPEN_UNREADABLE_LOG : OPEN_IMMUTABLE;
}

/* "file:<path, percent-encoded>[?immutable=1]"; NULL when out of memory. */
static char *file_uri(const char *path, bool immutable) {
    static const char hex[] = "0123456789ABCDEF";
    char *uri = malloc(3 * strlen(path) + 32);
    if (!uri) return NULL;
    /* An absolute path gets an empty authority ("file:///x"), so a path
     * starting with "//" is never read as a host name. */
    char *p = uri + sprintf(uri, "file:%s", path[0] == '/' ? "//" : "");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '/' || *c == '.' || *c == '-' ||
                     *c == '_' || *c == '~';
        if (plain) {
            *p++ = (char)*c;
        } else {
            *p++ = '%';
            *p++ = hex[*c >> 4];
            *p++ = hex[*c & 15];
        }
    }
    strcpy(p, immutable ? "?immutable=1" : "");
    return uri;
}

static gb_store_status check_file(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT) {
            gb__store_fail("store '%s' does not exist", path);
            return GB_STORE_ERR_NOT_FOUND;
        }
        gb__store_fail("store '%s': %s", path, strerror(errno));
        return GB_STORE_ERR_IO;
    }
    /* Checked before SQLite sees the path: opening a FIFO would block. */
    if (!S_ISREG(sb.st_mode)) {
        gb__store_fail("'%s' is not a glassbox store (%s)", path,
                       S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
        return GB_STORE_ERR_NOT_STORE;
    }
    return GB_STORE_OK;
}

/* Opens path in mode; the connection is read-only or *db is NULL. */
static gb_store_status open_in_mode(const char *path, open_mode mode, sqlite3 **db) {
    char *uri = file_uri(path, mode == OPEN_IMMUTABLE);
    if (!uri) {
        gb__store_fail("store '%s': out of memory", path);
        return GB_STORE_ERR_MEMORY;
    }
    int rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
                             NULL);
    free(uri);
    if (rc == SQLITE_OK && sqlite3_db_readonly(*db, "main") != 1) rc = SQLITE_PERM;
    if (rc != SQLITE_OK) {
        gb__store_fail("cannot open store '%s': %s", path,
                       rc == SQLITE_PERM ? "not read-only" : sqlite3_errmsg(*db));
        sqlite3_close(*db);
        *db = NULL;
        return GB_STORE_ERR_IO;
    }
    sqlite3_busy_timeout(*db, 5000);
    return GB_STORE_OK;
}

/* The first read: whether the side files could be used. */
static bool side_files_failed(sqlite3 *db) {
    int rc = sqlite3_exec(db, "PRAGMA schema_version", NULL, NULL, NULL) & 0xff;
    return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

gb_store_status gb__store_connect(const char *path, bool snapshot, sqlite3 **db) {
    *db = NULL;
    gb_store_status st = check_file(path);
    if (st != GB_STORE_OK) return st;
    /* A writer closing between the choice and the open removes the side
     * files the choice relied on: choose again (it then finds none). A
     * failure that persists is left to the caller's first read to report. */
    for (int attempt = 0;; attempt++) {
        open_mode mode = choose_mode(path, snapshot);
        if (mode == OPEN_UNREADABLE_LOG) {
            gb__store_fail("store '%s': its write-ahead log '%s-wal' needs the index file "
                           "'%s-shm', which is missing and cannot be created here (the "
                           "directory or the store is read-only); copy the store with its "
                           "-wal file to a writable directory",
                           path, path, path);
            return GB_STORE_ERR_IO;
        }
        st = open_in_mode(path, mode, db);
        if (st != GB_STORE_OK || mode == OPEN_IMMUTABLE || attempt == 2 || !side_files_failed(*db))
            return st;
        sqlite3_close(*db);
        *db = NULL;
    }
}
