/* io/atomic_file.c — writing a file so that readers see the old one or the
 * new one, never a torn one: checkpoints, the CheckpointManager's state and
 * the SavedModel's files.
 *
 * The bytes go to "<path>.tmp"; commit flushes and fsyncs it, renames it
 * over path (atomic on POSIX file systems) and fsyncs the directory, so the
 * rename itself survives a power cut. The temporary name is fixed rather
 * than unique: a process killed mid-write leaves "<path>.tmp" behind, and
 * the next write of the same path truncates and reuses it instead of
 * leaving one more stray file per crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/internal.h"

/* "<path>: <verb> the <kind><tail>: <strerror>", false. */
static bool io_fail(const char *path, const char *verb, const char *kind, const char *tail) {
    gb__error(GB_ERR_IO, NULL, "%s: %s the %s%s: %s", path, verb, kind, tail, strerror(errno));
    return false;
}

bool gb__atomic_open(gb__atomic_file *a, const char *path, const char *kind) {
    *a = (gb__atomic_file){.kind = kind};
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path ||
        snprintf(a->tmp, sizeof a->tmp, "%s%s", path, GB__ATOMIC_SUFFIX) >= (int)sizeof a->tmp) {
        gb__error(GB_ERR_IO, NULL, "%s: the path is too long", path);
        return false;
    }
    a->f = fopen(a->tmp, "wb");
    return a->f || io_fail(a->tmp, "cannot create", kind, "");
}

void gb__atomic_abort(gb__atomic_file *a) {
    if (a->f) fclose(a->f);
    a->f = NULL;
    unlink(a->tmp);
}

/* fsync of the directory holding path, so a rename in it is durable. */
static bool sync_dir(const char *path) {
    char *copy = strdup(path);
    if (!copy) return false;
    int fd = open(dirname(copy), O_RDONLY);
    free(copy);
    if (fd < 0) return false;
    bool ok = fsync(fd) == 0 || errno == EINVAL;   /* some file systems cannot */
    close(fd);
    return ok;
}

bool gb__atomic_commit(gb__atomic_file *a, bool written) {
    bool ok = written && fflush(a->f) == 0 && fsync(fileno(a->f)) == 0;
    ok = fclose(a->f) == 0 && ok;
    a->f = NULL;
    if (!ok) {
        io_fail(a->tmp, "cannot write", a->kind, "");
        unlink(a->tmp);
        return false;
    }
    if (rename(a->tmp, a->path) != 0) {
        io_fail(a->path, "cannot move", a->kind, " into place");
        unlink(a->tmp);
        return false;
    }
    return sync_dir(a->path) || io_fail(a->path, "cannot sync the directory of", a->kind, "");
}

bool gb__write_file_atomic(const char *path, const void *bytes, size_t n, const char *kind) {
    gb__atomic_file a;
    if (!gb__atomic_open(&a, path, kind)) return false;
    return gb__atomic_commit(&a, fwrite(bytes, 1, n, a.f) == n);
}

bool gb__io_fail(const char *path, const char *what) {
    gb__error(GB_ERR_IO, NULL, "%s: %s: %s", path, what, strerror(errno));
    return false;
}
