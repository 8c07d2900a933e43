/* io/atomic_file.c — replacing a file so that a reader, or a crash at any
 * moment, sees the old file or the new one and never a torn one.
 *
 * The new bytes go to "<path>.tmp", which is flushed and fsync'd, renamed
 * over path, and the directory fsync'd so the rename itself survives a
 * power cut. Checkpoints, SavedModel files and model files all write this
 * way.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/internal.h"

bool gb__io_fail(const char *path, const char *what) {
    gb__error(GB_ERR_IO, NULL, "%s: %s: %s", path, what, strerror(errno));
    return false;
}

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

bool gb__atomic_open(gb__atomic_file *a, const char *path, const char *what) {
    *a = (gb__atomic_file){.path = path, .what = what};
    if (snprintf(a->tmp, sizeof a->tmp, "%s.tmp", path) >= (int)sizeof a->tmp) {
        gb__error(GB_ERR_IO, NULL, "%s: the path is too long", path);
        return false;
    }
    a->f = fopen(a->tmp, "wb");
    if (a->f) return true;
    char msg[96];
    snprintf(msg, sizeof msg, "cannot create the %s", what);
    return gb__io_fail(a->tmp, msg);
}

bool gb__atomic_commit(gb__atomic_file *a, bool ok) {
    char msg[96];
    ok = ok && fflush(a->f) == 0 && fsync(fileno(a->f)) == 0;
    ok = (fclose(a->f) == 0) && ok;
    a->f = NULL;
    if (!ok) {
        snprintf(msg, sizeof msg, "cannot write the %s", a->what);
        gb__io_fail(a->tmp, msg);
        unlink(a->tmp);
        return false;
    }
    if (rename(a->tmp, a->path) != 0) {
        snprintf(msg, sizeof msg, "cannot move the %s into place", a->what);
        gb__io_fail(a->path, msg);
        unlink(a->tmp);
        return false;
    }
    return sync_dir(a->path) || gb__io_fail(a->path, "cannot sync its directory");
}

bool gb__write_file_atomic(const char *path, const void *bytes, size_t n, const char *what) {
    gb__atomic_file a;
    if (!gb__atomic_open(&a, path, what)) return false;
    return gb__atomic_commit(&a, fwrite(bytes, 1, n, a.f) == n);
}
