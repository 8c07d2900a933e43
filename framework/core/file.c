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

/* Everything up to the end of an open regular file. `hint` is the size
 * fstat gave; the buffer grows if the file is longer (it may be growing,
 * or be one of the files that report size 0, as in /proc). */
static void *read_to_end(int fd, const char *path, size_t hint, size_t *size) {
    size_t cap = hint + 1, n = 0;   /* + 1: seeing the end takes a read past it */
    char *bytes = NULL;
    for (;;) {
        char *more = realloc(bytes, cap);
        if (!more) {
            gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory reading %zu bytes", path, cap);
            break;
        }
        bytes = more;
        ssize_t got = read_fully(fd, bytes + n, cap - n);
        if (got < 0) {
            gb__error(GB_ERR_IO, NULL, "%s: read error: %s", path, strerror(errno));
            break;
        }
        n += (size_t)got;
        if (n < cap) {
            *size = n;
            return bytes;
        }
        cap *= 2;
    }
    free(bytes);
    return NULL;
}

/* The loader's check of the file's first head_bytes (true without one);
 * the file is then read from its start again. */
static bool head_agrees(int fd, const char *path, size_t head_bytes, gb_file_head_fn head_ok,
                        uint64_t file_size) {
    if (!head_ok) return true;
    unsigned char head[256];
    if (head_bytes > sizeof head) head_bytes = sizeof head;
    ssize_t got = read_fully(fd, head, head_bytes);
    if (got < 0) {
        gb__error(GB_ERR_IO, NULL, "%s: read error: %s", path, strerror(errno));
        return false;
    }
    if (!head_ok(path, head, (size_t)got, file_size)) return false;
    if (lseek(fd, 0, SEEK_SET) == 0) return true;
    gb__error(GB_ERR_IO, NULL, "%s: cannot seek: %s", path, strerror(errno));
    return false;
}

void *gb__file_read_checked(const char *path, const char *what, size_t head_bytes,
                            gb_file_head_fn head_ok, size_t *size) {
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
    else if (head_agrees(fd, path, head_bytes, head_ok, (uint64_t)st.st_size))
        bytes = read_to_end(fd, path, (size_t)st.st_size, size);
    close(fd);
    return bytes;
}

void *gb__file_read(const char *path, const char *what, size_t *size) {
    return gb__file_read_checked(path, what, 0, NULL, size);
}
