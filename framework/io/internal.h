/* io/internal.h — what the io/ sources share: atomic file replacement
 * (atomic_file.c), the checkpoint file's entries and its reader and writer
 * (checkpoint_file.c), and the SavedModel's graphs (saved_model_graph.c).
 */
#ifndef GB_IO_INTERNAL_H
#define GB_IO_INTERNAL_H

#include <stdio.h>

#include "gb_io.h"
#include "ops/internal.h"

#define GB__CKPT_VERSION 1

/* ---- atomic_file.c ---- */

/* A file being replaced: written to tmp, renamed over path on commit. */
typedef struct gb__atomic_file {
    FILE *f;
    const char *path, *what;     /* what: "checkpoint", in error messages */
    char tmp[4096];
} gb__atomic_file;
/* Opens "<path>.tmp" for writing; false with a GB_ERR_IO error. */
bool gb__atomic_open(gb__atomic_file *a, const char *path, const char *what);
/* ok: everything was written. Flushes, fsyncs, renames over path and
 * fsyncs the directory; on any failure (or !ok) removes the temporary and
 * returns false with an error naming the file. */
bool gb__atomic_commit(gb__atomic_file *a, bool ok);
bool gb__write_file_atomic(const char *path, const void *bytes, size_t n, const char *what);
/* A GB_ERR_IO error "<path>: <what>: <strerror(errno)>"; false. */
bool gb__io_fail(const char *path, const char *what);

/* One tensor of a checkpoint file. Writing: path, dtype, rank, dims,
 * data and nbytes are the caller's; offset and crc are filled in. */
typedef struct gb__ckpt_entry {
    char path[256];
    gb_dtype dtype;
    int rank;
    int64_t dims[GB_MAX_RANK];
    uint64_t offset, nbytes;
    uint32_t crc;
    const void *data;
} gb__ckpt_entry;

/* Writes the entries to path atomically (temp file, fsync, rename, fsync
 * of the directory); false with a GB_ERR_IO error naming the file. */
bool gb__ckpt_write(const char *path, gb__ckpt_entry *e, int n);

/* A checkpoint read into memory, its index checked. */
typedef struct gb__ckpt_file {
    char path[512];
    unsigned char *bytes;
    size_t size;
    gb__ckpt_entry *entries;
    int count;
} gb__ckpt_file;

/* false with a GB_ERR_IO error naming the file and what is wrong
 * (truncated, bad magic, newer version, corrupt header or index). */
bool gb__ckpt_read(const char *path, gb__ckpt_file *out);
/* The same on bytes already read (malloc'd; *out takes them over, also
 * on failure); path names them in errors. */
bool gb__ckpt_parse(const char *path, unsigned char *bytes, size_t size, gb__ckpt_file *out);
/* An entry's bytes after checking its CRC; NULL with an error naming the
 * tensor when they do not match. */
const void *gb__ckpt_data(const gb__ckpt_file *f, const gb__ckpt_entry *e);
void gb__ckpt_close(gb__ckpt_file *f);

#endif
