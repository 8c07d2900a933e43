/* io/dirs.c — creating a directory and the parents it lacks (mkdir -p),
 * for everything that writes into a directory the caller names: the
 * CheckpointManager's, a SavedModel's, and the tools' --output-dir. A
 * directory that exists already is fine; anything else in the way (a
 * file, no permission) is a GB_ERR_IO error naming the path that failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/internal.h"

/* Whether path is a directory (following symbolic links). */
static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool gb_make_dirs(const char *dir) {
    if (!dir || !*dir) return gb__error(GB_ERR_VALUE, NULL, "gb_make_dirs: the path is NULL or empty"), false;
    char *p = strdup(dir);
    if (!p) return gb__error(GB_ERR_MEMORY, NULL, "gb_make_dirs: out of memory"), false;
    bool ok = true;
    /* Each prefix ending before a '/' (and the whole path), root excluded. */
    for (char *s = p + 1; ok; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && !(errno == EEXIST && is_dir(p))) {
            if (errno == EEXIST) errno = ENOTDIR;
            ok = gb__io_fail(p, "cannot create the directory");
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return ok;
}
