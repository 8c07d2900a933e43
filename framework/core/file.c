/* core/file.c — reading a whole regular file into memory, for the loaders.
 *
 * Loaders parse bytes in memory, so they can be tested and fuzzed without
 * files; this is their one way in from the file system. Only regular
 * files are read: opening a FIFO for reading blocks until a writer comes
 * (perhaps never), and a device may never end. The file is opened with
 * O_NONBLOCK, so not even a FIFO swapped in after a check can block the
 * open, and its type is checked on the open descriptor, so what is
 * checked is what is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

/* What a non-regular file is, for the error message. */
static const char *file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "a special file";
}

/* Reads up to n bytes; the count read (short only at the end of the
 * file), or -1 after a read error (errno set). */
static ssize_t read_fully(int fd, void *dst, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)dst + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The st_size bytes of an open regular file. A file that grows while it
 * is read is refused rather than silently cut: the caller would parse a
 * prefix as if it were the whole. */
static void *read_regular(int fd, const char *path, size_t expected, size_t *size) {
    char *bytes = malloc(expected ? expected : 1);
    if (!bytes) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory reading %zu bytes", path, expected);
        return NULL;
    }
    char probe;
    ssize_t got = read_fully(fd, bytes, expected);
    ssize_t more = got < 0 ? -1 : read_fully(fd, &probe, 1);
    if (got < 0 || more < 0) {
        gb__error(GB_ERR_IO, NULL, "%s: read error: %s", path, strerror(errno));
    } else if (more > 0) {
        gb__error(GB_ERR_IO, NULL, "%s: the file grew while it was being read", path);
    } else {
        *size = (size_t)got;
        return bytes;
    }
    free(bytes);
    return NULL;
}

void *gb__file_read(const char *path, const char *what, size_t *size) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        gb__error(GB_ERR_IO, NULL, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    void *bytes = NULL;
    if (fstat(fd, &st) != 0)
        gb__error(GB_ERR_IO, NULL, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        gb__error(GB_ERR_IO, NULL, "%s: is %s, not %s", path, file_kind(st.st_mode), what);
    else
        bytes = read_regular(fd, path, (size_t)st.st_size, size);
    close(fd);
    return bytes;
}
